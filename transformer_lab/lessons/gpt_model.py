"""小 GPT 这个模型本身：尺寸 (``GPTConfig``) + 参数 = ``TinyGPT``，以及它的嵌入和输出端。

像 nanoGPT 的 ``GPTConfig`` 和第 10 章的 ``BertConfig``/``BertWeights``，一个模型由两样东西组成：

* ``config``（``GPTConfig``）：字表大小 V、宽度 D、层数 L、头数 H、前馈宽度 d_ff、上下文长度。头数只决定怎样把 D 维
  切成几个头，参数的形状里看不出来，所以它和别的尺寸一起放在 config 里、跟着模型走：传错头数这件事不会再发生。
* ``params``：一个扁平的字典，``tok_embed`` (V, D)、``pos_embed`` (context, D)、每层 16 个 ``layer{l}.w_q`` ……、
  ``lnf_gamma``、``lnf_beta`` (D,)、``w_out`` (D, V)、``b_out`` (V,)。Adam 和训练循环只管这个字典。

逐词生成（``generation.py``）只用模型的两个方法：``new_caches(capacity)`` 给每层一个第 7 章的 KV 缓存，
``feed_unchecked(tokens, caches)`` 把新来的字读进去、返回最后一个位置的打分。别的模型（例如第 12 章那种带 RMSNorm、
RoPE、分组查询注意力、SwiGLU 的 Llama 式 GPT）只要提供同样的 ``config.vocab_size``、``config.context`` 和这两个方法，
就能走同一个生成循环。训练和整段的前向在 ``tiny_gpt.py``。本模块只依赖 NumPy 和 ``core``。
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from .. import _validation as check
from ..core.decoder import decoder_layer_step_unchecked, layer_cache
from ..core.encoder import PARAM_KEYS, init_encoder_params
from ..core.kv_cache import KVCache
from ..core.layer_norm import layer_norm_forward_unchecked, layer_norm_vjp_unchecked
from ..core.linear import linear_grads

__all__ = ["GPTConfig", "TinyGPT", "EPS", "init_gpt", "layer_params", "sizes", "check_model", "check_tokens",
           "embed_unchecked", "embed_positions", "output_vjp_unchecked", "output_logits"]

EPS = 1e-5  # 两处 LayerNorm 的 ε（与 core 的默认值相同）


@dataclass(frozen=True)
class GPTConfig:
    """小 GPT 的尺寸 (config)：字表大小 V、宽度 D、层数 L、头数 H、前馈宽度 d_ff、上下文长度（最多看几个字）。

    默认值就是第 9 章的模型（``runs.GPT``），只有字表大小要自己给（它由语料决定）。

    Raises
    ------
    TypeError, ValueError
        某一项不是正整数，或 D 不能被头数整除。

    Examples
    --------
    >>> GPTConfig(vocab_size=10, d_model=8, num_heads=2)
    GPTConfig(vocab_size=10, d_model=8, num_layers=2, num_heads=2, d_ff=256, context=256)
    >>> GPTConfig(10).d_model // GPTConfig(10).num_heads          # 每个头分到 d_k = D / H 维
    16
    """

    vocab_size: int
    d_model: int = 64
    num_layers: int = 2
    num_heads: int = 4
    d_ff: int = 256
    context: int = 256

    def __post_init__(self) -> None:
        for name in ("vocab_size", "d_model", "num_layers", "num_heads", "d_ff", "context"):
            object.__setattr__(self, name, check.positive_int(getattr(self, name), name))  # np.int64 → int
        check.heads_divide(self.d_model, self.num_heads, source="")

    def sizes(self) -> dict[str, int]:
        """六项尺寸组成的字典（``GPTConfig(**config.sizes())`` 得到同样的 config）。"""
        return {"vocab_size": self.vocab_size, "d_model": self.d_model, "num_layers": self.num_layers,
                "num_heads": self.num_heads, "d_ff": self.d_ff, "context": self.context}

    def shapes(self) -> dict[str, tuple[int, ...]]:
        """每个参数的名字和形状（与 ``init_gpt`` 生成的顺序相同）。"""
        V, D, d_ff = self.vocab_size, self.d_model, self.d_ff
        layer = {k: (D, D) for k in ("w_q", "w_k", "w_v", "w_o")} | {"w_1": (D, d_ff), "w_2": (d_ff, D), "b_1": (d_ff,)}
        out = {"tok_embed": (V, D), "pos_embed": (self.context, D)}
        for n in range(self.num_layers):
            out |= {f"layer{n}.{k}": layer.get(k, (D,)) for k in PARAM_KEYS}
        return out | {"lnf_gamma": (D,), "lnf_beta": (D,), "w_out": (D, V), "b_out": (V,)}


@dataclass(frozen=True, eq=False)
class TinyGPT:
    """一个小 GPT：尺寸 ``config``（``GPTConfig``）加上参数 ``params``（扁平的字典，键和形状由 config 决定）。

    创建时检查一次（键恰好对上、形状与 config 相符、都是有限实数），之后用它的函数不再重复检查参数。
    ``params`` 存成只读的映射：要改参数就造一个新模型，``TinyGPT(model.config, model.params | {...})``。

    逐词生成（``generation.generate``）只用到 ``config.vocab_size``、``config.context`` 和下面两个方法；
    别的模型（例如带 RoPE、分组查询注意力的 Llama 式 GPT）只要提供同样的两个方法，就能走同一个生成循环。

    Raises
    ------
    TypeError
        ``config`` 不是 GPTConfig、``params`` 不是字典、某个参数不是实数数组。
    ValueError
        ``params`` 缺键或多键（列出名字）、某个参数形状与 config 不符、含 NaN/inf。

    Examples
    --------
    >>> model = init_gpt(GPTConfig(10, d_model=8, num_layers=1, num_heads=2, d_ff=16, context=5), np.random.default_rng(0))
    >>> model.config.num_heads, model.params["w_out"].shape, len(model.params)
    (2, (8, 10), 22)
    """

    config: GPTConfig
    params: Mapping[str, np.ndarray]
    layers: tuple[Mapping[str, np.ndarray], ...] = field(init=False, repr=False)  # 每层 16 个参数（不带前缀），由 params 得到

    def __post_init__(self) -> None:
        if not isinstance(self.config, GPTConfig):
            raise TypeError(f"config 必须是 GPTConfig，收到的是 {check.describe(self.config)}。"
                            "提示：GPTConfig(vocab_size=V, d_model=64, num_layers=2, num_heads=4, d_ff=256, context=256)。")
        if not isinstance(self.params, Mapping):
            raise TypeError(f"params 必须是参数字典，收到的是 {check.describe(self.params)}。提示：用 init_gpt 生成一个模型。")
        shapes = self.config.shapes()
        missing = [k for k in shapes if k not in self.params]
        extra = sorted(str(k) for k in self.params if k not in shapes)
        if missing or extra:
            raise ValueError(f"params 的键与 config 对不上（L={self.config.num_layers} 层，应有 {len(shapes)} 个）："
                             f"多出 {extra or '无'}、缺少 {missing or '无'}。")
        checked = {}
        for key, shape in shapes.items():
            value = check.as_real_array(self.params[key], f"params['{key}']")
            check.check_shape(value, f"params['{key}']", shape, f"（{self.config}）")
            checked[key] = value
        object.__setattr__(self, "params", MappingProxyType(checked))
        layers = [MappingProxyType({k: checked[f"layer{n}.{k}"] for k in PARAM_KEYS}) for n in range(self.config.num_layers)]
        object.__setattr__(self, "layers", tuple(layers))

    def new_caches(self, capacity: int) -> tuple[KVCache, ...]:
        """逐词生成用的 KV 缓存：每层一个（第 7 章的 ``KVCache``），每个最多存 ``capacity`` 个字。

        Raises
        ------
        TypeError, ValueError
            ``capacity`` 不是正整数，或超过上下文长度 ``config.context``。
        """
        capacity = check.at_most(check.positive_int(capacity, "capacity"), "capacity", self.config.context,
                                 "模型最多看 context 个字")
        return tuple(layer_cache(capacity, self.config.d_model, self.config.num_heads) for _ in range(self.config.num_layers))

    def feed_unchecked(self, tokens: np.ndarray, caches: tuple[KVCache, ...]) -> tuple[np.ndarray, list[np.ndarray]]:
        """把 n 个新字（接在缓存里已有的字之后）读进模型，返回 ``(最后一个位置的打分 (V,), 每层的注意力 [(H, n, S)] × L)``。

        每一层都是 ``core.decoder.decoder_layer_step_unchecked``（第 8 章那一层，注意力看这一层的 KV 缓存），
        输出端是 ``output_vjp_unchecked``。**会改变** ``caches``（追加新字的 k、v）。不做检查：
        ``generation.generate`` 在循环外检查过一次提示词、长度和缓存。
        """
        x = embed_unchecked(self.params, tokens, start=caches[0].length)  # (n, D) 新字的位置接在缓存之后
        weights = []
        for layer, cache in enumerate(caches):
            x, w = decoder_layer_step_unchecked(x, self.layers[layer], self.config.num_heads, cache, True, EPS)
            weights.append(w)  # (H, n, S)
        return output_vjp_unchecked(self.params, x[-1], with_backward=False)[0], weights  # (V,), [(H, n, S)] × L


def check_model(model: object) -> TinyGPT:
    """``model`` 必须是 ``TinyGPT``（创建时已检查过参数）。旧写法传参数字典时，报错指明新写法。"""
    if not isinstance(model, TinyGPT):
        hint = ("提示：头数等尺寸现在跟着模型走——训练结果的 run['checkpoints'][-1] 就是模型，"
                "或 init_gpt(GPTConfig(...), rng)；不再单独传 num_heads。" if isinstance(model, Mapping)
                else "提示：用 init_gpt(GPTConfig(...), rng) 生成一个，或取训练结果的 run['checkpoints'][-1]。")
        raise TypeError(f"model 必须是小 GPT 的模型 TinyGPT（尺寸 config + 参数 params），收到的是 {check.describe(model)}。{hint}")
    return model


def layer_params(model: TinyGPT, layer: int) -> dict[str, np.ndarray]:
    """第 ``layer`` 层（从 0 数）的 16 个参数，键去掉前缀 ``layer{l}.``，正好交给 ``core.encoder`` 的函数。

    Raises
    ------
    TypeError, ValueError
        ``model`` 不是 TinyGPT、``layer`` 不是整数，或模型没有第 ``layer`` 层。
    """
    model = check_model(model)
    if isinstance(layer, (bool, np.bool_)) or not isinstance(layer, numbers.Integral):
        raise TypeError(f"layer 必须是整数（第几层，从 0 数），收到的是 {check.describe(layer)}。")
    L = model.config.num_layers
    if not 0 <= layer < L:
        raise ValueError(f"layer={layer} 越界：模型有 {L} 层，layer 应在 [0, {L - 1}] 之内（从 0 数）。")
    return dict(model.layers[layer])


def init_gpt(config: GPTConfig, rng: np.random.Generator) -> TinyGPT:
    """随机初始参数。字嵌入 N(0, 1)，位置嵌入 N(0, 0.1²)（一开始位置只是轻轻的提示），各层同 ``init_encoder_params``，
    输出层 ``w_out`` N(0, 0.02²)、``b_out`` 0：一开始每个字的打分几乎相同，损失约为 log V（均匀瞎猜）。

    Raises
    ------
    TypeError, ValueError
        ``config`` 不是 GPTConfig（旧写法 ``init_gpt(V, rng, d_model=...)`` 会得到新写法的提示）、``rng`` 不是 Generator，
        或参数要占的内存超过预算（2 GiB）。

    Examples
    --------
    >>> model = init_gpt(GPTConfig(10, d_model=8, num_layers=2, num_heads=2, d_ff=16, context=5), np.random.default_rng(0))
    >>> p = model.params
    >>> len(p), p["tok_embed"].shape, p["pos_embed"].shape, p["layer1.w_1"].shape, p["w_out"].shape
    (38, (10, 8), (5, 8), (8, 16), (8, 10))
    """
    if not isinstance(config, GPTConfig):
        raise TypeError(f"config 必须是 GPTConfig，收到的是 {check.describe(config)}。提示：旧写法 init_gpt(V, rng, d_model=…) "
                        "现在写成 init_gpt(GPTConfig(vocab_size=V, d_model=…, num_heads=…), rng)，头数跟着模型走。")
    rng = check.generator(rng)
    V, D, L, d_ff, context = config.vocab_size, config.d_model, config.num_layers, config.d_ff, config.context
    count = 2 * V * D + V + context * D + L * (4 * D * D + 2 * D * d_ff + 9 * D + d_ff) + 2 * D  # 参数总数
    check.memory_budget(count, 8, f"小 GPT 的参数（V={V}, D={D}, {L} 层, d_ff={d_ff}, context={context}）")
    params = {"tok_embed": rng.normal(size=(V, D)), "pos_embed": rng.normal(0.0, 0.1, size=(context, D))}
    for layer in range(L):
        params |= {f"layer{layer}.{k}": w for k, w in init_encoder_params(D, d_ff, rng).items()}
    params |= {"lnf_gamma": np.ones(D), "lnf_beta": np.zeros(D),
               "w_out": rng.normal(0.0, 0.02, size=(D, V)), "b_out": np.zeros(V)}
    return TinyGPT(config, params)


def sizes(model: TinyGPT) -> dict[str, int]:
    """模型的大小：``config`` 的六项尺寸，另加 ``parameters``（参数总数）。

    Raises
    ------
    TypeError
        ``model`` 不是 TinyGPT。

    Examples
    --------
    V = 10、D = 8、一层、d_ff = 16、context = 5：嵌入 10·8 + 5·8 = 120；一层 4·8² + 4·8 + 2·8·16 + 16 + 8 + 4·8 = 600；
    LN_f 16；输出层 8·10 + 10 = 90。合计 826。

    >>> config = GPTConfig(10, d_model=8, num_layers=1, num_heads=2, d_ff=16, context=5)
    >>> sizes(init_gpt(config, np.random.default_rng(0)))["parameters"]
    826
    """
    model = check_model(model)
    return model.config.sizes() | {"parameters": int(sum(w.size for w in model.params.values()))}


def check_tokens(model: TinyGPT, tokens: object, name: str = "tokens", start: int = 0) -> tuple[np.ndarray, GPTConfig]:
    """检查模型和字编号：编号在字表之内，``start`` 起的 T 个位置不超过上下文长度。返回 ``(tokens, config)``。"""
    config = check_model(model).config
    tokens = check.token_ids(tokens, name, config.vocab_size)
    start = check.nonnegative_int(start, "start")
    if tokens.ndim == 0 or start + tokens.shape[-1] > config.context:
        raise ValueError(f"{name} 的最后一维是位置，不能超过模型的上下文长度 context={config.context}"
                         f"（从第 {start} 个位置起），收到 shape={tokens.shape}。提示：只取最后 {config.context} 个字。")
    return tokens, config


def embed_unchecked(params: Mapping[str, np.ndarray], tokens: np.ndarray, start: int = 0) -> np.ndarray:
    """x₀ = E[tokens] + P[start : start + T]（不做检查）：(..., T) 个字编号 → (..., T, D)。"""
    return params["tok_embed"][tokens] + params["pos_embed"][start:start + tokens.shape[-1]]  # (..., T, D)


def embed_positions(model: TinyGPT, tokens: np.ndarray, start: int = 0) -> np.ndarray:
    """x₀ = E[tokens] + P[start : start + T]：(..., T) 个字编号 → (..., T, D)。逐词生成时 ``start`` 是新词的位置。

    Examples
    --------
    >>> model = init_gpt(GPTConfig(10, d_model=8, num_layers=1, num_heads=2, d_ff=8, context=5), np.random.default_rng(0))
    >>> x = embed_positions(model, np.array([7, 7]))                    # 同一个字，不同的位置
    >>> P = model.params["pos_embed"]
    >>> bool(np.allclose(x[1] - x[0], P[1] - P[0]))
    True
    """
    tokens, _ = check_tokens(model, tokens, start=start)
    return embed_unchecked(model.params, tokens, start)  # (..., T, D)


def output_vjp_unchecked(params: Mapping[str, np.ndarray], h: np.ndarray, with_backward: bool = True):
    """输出端 logits = LN_f(h) W_out + b_out（不做检查），同时交出反向函数：``logits, backward = ...``，
    ``backward(grad_logits)`` 返回 ``(grad_h, {lnf_gamma, lnf_beta, w_out, b_out 的梯度})``。
    训练、整段前向和逐词生成都用它：输出端只写在这一处。``with_backward=False``（逐词生成）只做前向，
    和 ``encoder_layer_unchecked`` 一样用只做前向的 LayerNorm，返回 ``(logits, None)``。"""
    norm = layer_norm_vjp_unchecked if with_backward else layer_norm_forward_unchecked
    n, ln_back = norm(h, params["lnf_gamma"], params["lnf_beta"], EPS)  # (..., D)
    logits = n @ params["w_out"] + params["b_out"]  # (..., V)
    if not with_backward:
        return logits, None

    def backward(g_logits):
        grads = {}
        g_n, grads["w_out"], grads["b_out"] = linear_grads(n, params["w_out"], g_logits)  # (..., D), (D, V), (V,)
        g_h, grads["lnf_gamma"], grads["lnf_beta"] = ln_back(g_n)  # (..., D)
        return g_h, grads

    return logits, backward  # (..., V)


def output_logits(model: TinyGPT, h: np.ndarray) -> np.ndarray:
    """最后一层的输出 (..., D) → 字表里每个字的打分 (..., V)：LN_f(h) W_out + b_out。"""
    D = check_model(model).config.d_model
    h = check.as_real_array(h, "h", min_ndim=1)
    check.check_shape(h, "h", h.shape[:-1] + (D,), f"（最后一维是 D={D}）")
    return output_vjp_unchecked(model.params, h)[0]  # (..., V)
