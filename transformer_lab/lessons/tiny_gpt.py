"""从零训练一个小 GPT：只有解码器 (decoder-only) 的 Transformer，一个字一个字地猜下一个字。

模型（形状：N 串，T 个位置，D = d_model，V 字表大小，L 层）::

    x₀     = E[tokens] + P[0:T]                   (N, T, D)   字嵌入 + 学出来的位置嵌入
    x_l    = Layer_l(x_{l-1}, mask=causal_mask(T)) (N, T, D)   第 8 章那一层，前归一化 (pre-LN)，l = 1 … L
    logits = LN_f(x_L) W_out + b_out               (N, T, V)   最后一层归一化，再给字表里每个字打分
    L      = 交叉熵(logits[:, t], tokens[:, t + 1])              每个位置猜它后面的那个字

每一层就是 ``core.encoder`` 的那一层（``encoder_layer_vjp``，传因果掩码、``norm_first=True``），这里不再写一遍；
梯度全部来自本书手写的反向函数，优化器是 Adam（``optim.adam``，学习率逐步减小），训练循环是全书唯一的 ``optim.train_loop``。
语料是本书自己的正文（``corpus.load_corpus``），每章最后 10% 留作考题，算"考试损失"和困惑度 (perplexity)。

参数是一个扁平的字典：``tok_embed`` (V, D)、``pos_embed`` (context, D)、每层 16 个 ``layer{l}.w_q`` ……、
``lnf_gamma``、``lnf_beta`` (D,)、``w_out`` (D, V)、``b_out`` (V,)。所有随机数来自传入的 ``rng``。
本模块只依赖 NumPy 和 ``core``。
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np

from .. import _validation as check
from ..core.attention import causal_mask
from ..core.embedding import embedding_backward
from ..core.encoder import PARAM_KEYS, encoder_layer_vjp, init_encoder_params
from ..core.layer_norm import layer_norm_vjp_unchecked
from ..core.linear import linear_grads
from ..core.loss import cross_entropy, cross_entropy_backward
from .corpus import encode, held_out_split, load_corpus, vocabulary
from .optim import Run, adam, train_loop

__all__ = ["NUM_HEADS", "init_gpt", "layer_params", "sizes", "check_gpt", "check_tokens", "embed_unchecked",
           "embed_positions", "output_vjp_unchecked", "output_logits", "hidden_states", "forward",
           "loss_and_grads", "mean_loss", "windows", "decaying_adam", "train"]

NUM_HEADS = 4  # 头数不在参数里（它只决定怎样切 D 维），所以各函数都带着它，默认 4
EPS = 1e-5  # 两处 LayerNorm 的 ε（与 core 的默认值相同）
HELD_OUT = 0.1  # 每章最后 10% 留作考题


def layer_params(params: Mapping[str, np.ndarray], layer: int) -> dict[str, np.ndarray]:
    """第 ``layer`` 层（从 0 数）的 16 个参数，键去掉前缀 ``layer{l}.``，正好交给 ``core.encoder`` 的函数。

    Raises
    ------
    TypeError, ValueError
        ``params`` 不是字典、``layer`` 不是整数，或模型没有第 ``layer`` 层。
    """
    if not isinstance(params, Mapping):
        raise TypeError(f"params 必须是参数字典，收到的是 {check.describe(params)}。提示：用 init_gpt 生成一份。")
    if isinstance(layer, (bool, np.bool_)) or not isinstance(layer, numbers.Integral):
        raise TypeError(f"layer 必须是整数（第几层，从 0 数），收到的是 {check.describe(layer)}。")
    missing = [k for k in PARAM_KEYS if f"layer{layer}.{k}" not in params]
    if layer < 0 or missing:
        count = sum(1 for k in params if isinstance(k, str) and k.endswith(".w_q"))
        raise ValueError(f"layer={layer} 越界：模型有 {count} 层，layer 应在 [0, {count - 1}] 之内（从 0 数）。")
    return {k: params[f"layer{layer}.{k}"] for k in PARAM_KEYS}


def init_gpt(vocab_size: int, rng: np.random.Generator, d_model: int = 64, num_layers: int = 2, d_ff: int = 256,
             context: int = 256) -> dict[str, np.ndarray]:
    """随机初始参数。字嵌入 N(0, 1)，位置嵌入 N(0, 0.1²)（一开始位置只是轻轻的提示），各层同 ``init_encoder_params``，
    输出层 ``w_out`` N(0, 0.02²)、``b_out`` 0：一开始每个字的打分几乎相同，损失约为 log V（均匀瞎猜）。

    Raises
    ------
    TypeError, ValueError
        尺寸不是正整数、``rng`` 不是 Generator，或参数要占的内存超过预算（2 GiB）。

    Examples
    --------
    >>> p = init_gpt(10, np.random.default_rng(0), d_model=8, num_layers=2, d_ff=16, context=5)
    >>> len(p), p["tok_embed"].shape, p["pos_embed"].shape, p["layer1.w_1"].shape, p["w_out"].shape
    (38, (10, 8), (5, 8), (8, 16), (8, 10))
    """
    V, D = check.positive_int(vocab_size, "vocab_size"), check.positive_int(d_model, "d_model")
    L, d_ff = check.positive_int(num_layers, "num_layers"), check.positive_int(d_ff, "d_ff")
    context, rng = check.positive_int(context, "context"), check.generator(rng)
    count = 2 * V * D + V + context * D + L * (4 * D * D + 2 * D * d_ff + 9 * D + d_ff) + 2 * D  # 参数总数
    check.memory_budget(count, 8, f"小 GPT 的参数（V={V}, D={D}, {L} 层, d_ff={d_ff}, context={context}）")
    params = {"tok_embed": rng.normal(size=(V, D)), "pos_embed": rng.normal(0.0, 0.1, size=(context, D))}
    for layer in range(L):
        params |= {f"layer{layer}.{k}": w for k, w in init_encoder_params(D, d_ff, rng).items()}
    params |= {"lnf_gamma": np.ones(D), "lnf_beta": np.zeros(D),
               "w_out": rng.normal(0.0, 0.02, size=(D, V)), "b_out": np.zeros(V)}
    return params


def sizes(params: Mapping[str, np.ndarray]) -> dict[str, int]:
    """模型的大小：``vocab_size``、``d_model``、``num_layers``、``d_ff``、``context``（最多看多少个字）、``parameters``（参数总数）。

    Raises
    ------
    TypeError, ValueError
        ``params`` 不是这个模型的参数（缺键、多键、形状对不上）。

    Examples
    --------
    V = 10、D = 8、一层、d_ff = 16、context = 5：嵌入 10·8 + 5·8 = 120；一层 4·8² + 4·8 + 2·8·16 + 16 + 8 + 4·8 = 600；
    LN_f 16；输出层 8·10 + 10 = 90。合计 826。

    >>> sizes(init_gpt(10, np.random.default_rng(0), d_model=8, num_layers=1, d_ff=16, context=5))["parameters"]
    826
    """
    if not isinstance(params, Mapping) or not all(isinstance(k, str) for k in params):
        raise TypeError(f"params 必须是参数字典（键是字符串），收到的是 {check.describe(params)}。提示：用 init_gpt 生成一份。")
    missing = [k for k in ("tok_embed", "pos_embed", "lnf_gamma", "lnf_beta", "w_out", "b_out") if k not in params]
    if missing:
        raise ValueError(f"params 缺少 {', '.join(missing)}：这不是小 GPT 的参数。提示：用 init_gpt 生成一份。")
    L = sum(1 for k in params if k.startswith("layer") and k.endswith(".w_q"))
    expected = {"tok_embed", "pos_embed", "lnf_gamma", "lnf_beta", "w_out", "b_out"} | {
        f"layer{layer}.{k}" for layer in range(L) for k in PARAM_KEYS}
    if L == 0 or set(params) != expected:
        extra = sorted(set(params) - expected)
        raise ValueError(f"params 的键不对：应有 tok_embed、pos_embed、每层 16 个 layer{{l}}.<名字>、lnf_gamma、lnf_beta、"
                         f"w_out、b_out（共 {len(expected)} 个，这里 L={L} 层），多出 {extra or '无'}、"
                         f"缺少 {sorted(expected - set(params)) or '无'}。")
    V, D = np.shape(params["tok_embed"])
    out = {"vocab_size": V, "d_model": D, "num_layers": L, "d_ff": np.shape(params["layer0.w_1"])[1],
           "context": np.shape(params["pos_embed"])[0]}
    if np.shape(params["pos_embed"])[1] != D or np.shape(params["w_out"]) != (D, V):
        raise ValueError(f"params 的形状对不上：tok_embed {np.shape(params['tok_embed'])}、pos_embed "
                         f"{np.shape(params['pos_embed'])}、w_out {np.shape(params['w_out'])}"
                         "（应为 (V, D)、(context, D)、(D, V)）。")
    return out | {"parameters": int(sum(np.size(w) for w in params.values()))}


def check_gpt(params: object) -> dict[str, int]:
    """检查 ``params`` 是小 GPT 的参数（键、形状，以及层外那几个数组都是有限实数），返回 ``sizes(params)``。
    各层的 16 个参数由 ``core.encoder`` 在用到时检查。"""
    info = sizes(params)
    for key in ("tok_embed", "pos_embed", "lnf_gamma", "lnf_beta", "w_out", "b_out"):
        check.as_real_array(params[key], f"params['{key}']")
    if np.shape(params["lnf_gamma"]) != (info["d_model"],) or np.shape(params["b_out"]) != (info["vocab_size"],):
        raise ValueError(f"params['lnf_gamma'] 应为 (D,) = ({info['d_model']},)，params['b_out'] 应为 (V,) = "
                         f"({info['vocab_size']},)，收到 {np.shape(params['lnf_gamma'])} 和 {np.shape(params['b_out'])}。")
    return info


def check_tokens(params: Mapping[str, np.ndarray], tokens: object, name: str = "tokens",
                 start: int = 0) -> tuple[np.ndarray, dict[str, int]]:
    """检查参数和字编号：编号在字表之内，``start`` 起的 T 个位置不超过上下文长度。返回 ``(tokens, sizes)``。"""
    info = check_gpt(params)
    tokens = check.token_ids(tokens, name, info["vocab_size"])
    start = check.nonnegative_int(start, "start")
    if tokens.ndim == 0 or start + tokens.shape[-1] > info["context"]:
        raise ValueError(f"{name} 的最后一维是位置，不能超过模型的上下文长度 context={info['context']}"
                         f"（从第 {start} 个位置起），收到 shape={tokens.shape}。提示：只取最后 {info['context']} 个字。")
    return tokens, info


def embed_unchecked(params: Mapping[str, np.ndarray], tokens: np.ndarray, start: int = 0) -> np.ndarray:
    """x₀ = E[tokens] + P[start : start + T]（不做检查）：(..., T) 个字编号 → (..., T, D)。"""
    return params["tok_embed"][tokens] + params["pos_embed"][start:start + tokens.shape[-1]]  # (..., T, D)


def embed_positions(params: Mapping[str, np.ndarray], tokens: np.ndarray, start: int = 0) -> np.ndarray:
    """x₀ = E[tokens] + P[start : start + T]：(..., T) 个字编号 → (..., T, D)。逐词生成时 ``start`` 是新词的位置。

    Examples
    --------
    >>> p = init_gpt(10, np.random.default_rng(0), d_model=8, num_layers=1, d_ff=8, context=5)
    >>> x = embed_positions(p, np.array([7, 7]))                       # 同一个字，不同的位置
    >>> bool(np.allclose(x[1] - x[0], p["pos_embed"][1] - p["pos_embed"][0]))
    True
    """
    tokens, _ = check_tokens(params, tokens, start=start)
    return embed_unchecked(params, tokens, start)  # (..., T, D)


def output_vjp_unchecked(params: Mapping[str, np.ndarray], h: np.ndarray):
    """输出端 logits = LN_f(h) W_out + b_out（不做检查），同时交出反向函数：``logits, backward = ...``，
    ``backward(grad_logits)`` 返回 ``(grad_h, {lnf_gamma, lnf_beta, w_out, b_out 的梯度})``。"""
    n, ln_back = layer_norm_vjp_unchecked(h, params["lnf_gamma"], params["lnf_beta"], EPS)  # (..., D)

    def backward(g_logits):
        grads = {}
        g_n, grads["w_out"], grads["b_out"] = linear_grads(n, params["w_out"], g_logits)  # (..., D), (D, V), (V,)
        g_h, grads["lnf_gamma"], grads["lnf_beta"] = ln_back(g_n)  # (..., D)
        return g_h, grads

    return n @ params["w_out"] + params["b_out"], backward  # (..., V)


def output_logits(params: Mapping[str, np.ndarray], h: np.ndarray) -> np.ndarray:
    """最后一层的输出 (..., D) → 字表里每个字的打分 (..., V)：LN_f(h) W_out + b_out。"""
    info = check_gpt(params)
    h = check.as_real_array(h, "h", min_ndim=1)
    check.check_shape(h, "h", h.shape[:-1] + (info["d_model"],), f"（最后一维是 D={info['d_model']}）")
    return output_vjp_unchecked(params, h)[0]  # (..., V)


def hidden_states(params: Mapping[str, np.ndarray], tokens: np.ndarray,
                  num_heads: int = NUM_HEADS) -> tuple[np.ndarray, np.ndarray]:
    """整段过 L 层（因果：每个位置只看自己和前面）：返回 ``(最后一层的输出 (..., T, D), 注意力权重 (L, ..., H, T, T))``。"""
    tokens, info = check_tokens(params, tokens)
    x = embed_unchecked(params, tokens)  # (..., T, D)
    mask = causal_mask(x.shape[-2])  # (T, T)
    weights = []
    for layer in range(info["num_layers"]):
        x, w, _ = encoder_layer_vjp(x, layer_params(params, layer), num_heads, mask=mask, norm_first=True, eps=EPS)
        weights.append(w)  # (..., H, T, T)
    return x, np.stack(weights)  # (..., T, D), (L, ..., H, T, T)


def forward(params: Mapping[str, np.ndarray], tokens: np.ndarray,
            num_heads: int = NUM_HEADS) -> tuple[np.ndarray, np.ndarray]:
    """整段的前向：返回 ``(logits (..., T, V), 注意力权重 (L, ..., H, T, T))``。第 t 个位置的 logits 是对第 t + 1 个字的打分。

    Raises
    ------
    TypeError, ValueError
        ``params`` 不是小 GPT 的参数、``tokens`` 越界或比上下文长、D 不能被 num_heads 整除。

    Examples
    --------
    >>> p = init_gpt(10, np.random.default_rng(0), d_model=8, num_layers=2, d_ff=16, context=5)
    >>> logits, weights = forward(p, np.array([[1, 2, 3]]), num_heads=2)
    >>> logits.shape, weights.shape, bool(np.all(weights[..., 0, 1:] == 0))      # 第 0 个位置只看自己
    ((1, 3, 10), (2, 1, 2, 3, 3), True)
    """
    h, weights = hidden_states(params, tokens, num_heads)
    return output_vjp_unchecked(params, h)[0], weights  # (..., T, V), (L, ..., H, T, T)


def loss_and_grads(params: Mapping[str, np.ndarray], tokens: np.ndarray, targets: np.ndarray,
                   num_heads: int = NUM_HEADS) -> tuple[float, dict[str, np.ndarray]]:
    """交叉熵损失和它对全部参数的梯度（前向一次、反向一次，全是本书手写的反向函数）。

    ``targets`` 与 ``tokens`` 同形状：``targets[..., t]`` 是 ``tokens[..., t]`` 后面的那个字。
    """
    tokens, info = check_tokens(params, tokens)
    x = embed_unchecked(params, tokens)  # (N, T, D)
    mask, backs = causal_mask(x.shape[-2]), []
    for layer in range(info["num_layers"]):
        x, _, back = encoder_layer_vjp(x, layer_params(params, layer), num_heads, mask=mask, norm_first=True, eps=EPS)
        backs.append(back)
    logits, out_back = output_vjp_unchecked(params, x)  # (N, T, V)
    g_x, grads = out_back(cross_entropy_backward(logits, targets))  # (N, T, D)
    for layer in reversed(range(info["num_layers"])):  # 倒着走回每一层
        layer_grads = backs[layer](g_x)
        g_x = layer_grads.pop("x")  # (N, T, D)
        grads |= {f"layer{layer}.{k}": g for k, g in layer_grads.items()}
    grads["tok_embed"] = embedding_backward(tokens, g_x, info["vocab_size"])  # (V, D)
    T, D = g_x.shape[-2:]
    g_pos = g_x.reshape(-1, T, D).sum(axis=0)  # (T, D) 同一个位置在每一串里都用了一次：加起来
    grads["pos_embed"] = np.concatenate([g_pos, np.zeros((info["context"] - T, D))])  # (context, D) 没用到的位置是 0
    return float(cross_entropy(logits, targets)), grads


# ---------------------------------------------------------------- 在本书的正文上训练


def windows(ids: np.ndarray, length: int, batch_size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """从一长串字编号里随机截 ``batch_size`` 段：``tokens`` (N, T) 和往后错一位的 ``targets`` (N, T)。

    Examples
    --------
    >>> tokens, targets = windows(np.arange(10), 4, 2, np.random.default_rng(0))
    >>> tokens.tolist(), targets.tolist()
    ([[5, 6, 7, 8], [3, 4, 5, 6]], [[6, 7, 8, 9], [4, 5, 6, 7]])
    """
    T, N, rng = check.positive_int(length, "length"), check.positive_int(batch_size, "batch_size"), check.generator(rng)
    if not isinstance(ids, np.ndarray) or ids.ndim != 1 or ids.size < T + 1:
        raise ValueError(f"ids 必须是至少 length + 1 = {T + 1} 个编号的一维数组，收到的是 {check.describe(ids)}。")
    check.memory_budget(3 * N * T, 8, f"{N} 段 × {T} 个字的训练窗口（batch_size × length）")
    starts = rng.integers(0, ids.size - T, size=N)  # (N,) 每段的起点
    cols = starts[:, None] + np.arange(T)  # (N, T)
    return ids[cols], ids[cols + 1]  # (N, T), (N, T)


def mean_loss(params: Mapping[str, np.ndarray], ids: np.ndarray, num_heads: int = NUM_HEADS,
              length: int | None = None) -> float:
    """一整段文字上的平均交叉熵：切成首尾相接的几段（每段 ``length`` 个字，默认是模型的上下文长度），
    每个字都被猜一次（第一个字除外）。困惑度 (perplexity) 就是 e 的这个数次方："平均在几个字里犹豫"。

    Examples
    --------
    >>> p = init_gpt(5, np.random.default_rng(0), d_model=8, num_layers=1, d_ff=8, context=4)
    >>> p = p | {"w_out": np.zeros((8, 5))}                    # 所有字打分相同：每个字的概率都是 1/5
    >>> round(mean_loss(p, np.array([0, 1, 2, 3, 4, 0, 1]), num_heads=2), 4), round(float(np.log(5)), 4)
    (1.6094, 1.6094)
    """
    info = check_gpt(params)
    T = info["context"] if length is None else check.positive_int(length, "length")
    ids = check.token_ids(ids, "ids", info["vocab_size"])
    if ids.ndim != 1 or ids.size < 2:
        raise ValueError(f"ids 必须是至少 2 个编号的一维数组（猜第 2 个起的每个字），收到的 shape={ids.shape}。")
    full = (ids.size - 1) // T * T  # 整段的部分：一次前向算完
    parts = [(ids[:full].reshape(-1, T), ids[1:full + 1].reshape(-1, T))] if full else []
    if full < ids.size - 1:
        parts.append((ids[full:-1][None], ids[full + 1:][None]))  # 最后不满 T 个字的一段
    total = sum(float(cross_entropy(forward(params, x, num_heads)[0], y)) * y.size for x, y in parts)
    return total / (ids.size - 1)


def decaying_adam(lr: float, steps: int, final: float = 0.1):
    """Adam（``optim.adam``）写成 ``train_loop`` 的走法，学习率从 ``lr`` 直线降到 ``final × lr``（第 ``steps`` 步）。

    每批只有几段文字，梯度很"吵"；开头步子大、走得快，最后步子小、停得稳（大模型训练也是这样先大后小）。

    Examples
    --------
    >>> step = decaying_adam(0.1, steps=10)
    >>> [round(step.lr_at(t), 3) for t in (0, 5, 10)]
    [0.1, 0.055, 0.01]
    """
    lr, steps = check.positive_real(lr, "lr"), check.positive_int(steps, "steps")
    final = check.positive_real(final, "final")

    def lr_at(t: int) -> float:
        return lr * (1 - (1 - final) * min(t, steps) / steps)

    def step(params, grads, state):
        return adam(params, grads, state, lr_at(state.get("t", 0)))

    step.lr, step.lr_at = lr, lr_at
    return step


def train(rng: np.random.Generator, text: str | None = None, steps: int = 300, batch_size: int = 4,
          context: int = 256, lr: float = 5e-3, checkpoint_every: int = 20, d_model: int = 64, num_layers: int = 2,
          d_ff: int = 256, num_heads: int = NUM_HEADS) -> Run:
    """在一段中文上从零训练小 GPT。每一步从训练文字里随机截 ``batch_size`` 段、每段 ``context`` 个字，
    用 Adam 走一步，学习率从 ``lr`` 直线降到 ``lr / 10``（``decaying_adam``）。默认的设置就是第 9 章用的
    （``runs.GPT``）：2 层、D = 64、4 个头、上下文 256 个字，每批 4 段，300 步，每 20 步存档；单核约 45 秒（CPU 时间）。

    Parameters
    ----------
    rng : np.random.Generator
        初始参数和每一批训练文字都从它抽：同样的种子，一模一样的训练。
    text : str, optional
        语料，各章之间空一行；默认是随包发布的本书正文 ``corpus.load_corpus()``。每章最后 10% 留作考题。

    Returns
    -------
    Run
        （只读）``losses`` (steps + 1,) 每一批的训练损失；``checkpoint_steps`` (C,)；``checkpoints`` C 份参数；
        ``test_loss`` (C,) 每个检查点在考题（没训练过的文字）上的平均损失，``train_loss`` (C,) 在同样多的训练文字上的；
        ``chars`` 字表（第 i 个字的编号是 i）；``num_heads``。

    Raises
    ------
    ValueError
        训练发散（``train_loop`` 停下并说明）、语料太短。
    """
    rng = check.generator(rng)
    text = load_corpus() if text is None else text
    chars = vocabulary(text)
    train_text, test_text = held_out_split(text, HELD_OUT)
    train_ids, test_ids = encode(train_text, chars), encode(test_text, chars)
    params = init_gpt(len(chars), rng, d_model, num_layers, d_ff, context)

    def batch_loss(p):
        return loss_and_grads(p, *windows(train_ids, context, batch_size, rng), num_heads)

    run = train_loop(params, batch_loss, decaying_adam(lr, steps), steps, checkpoint_every)
    _, seen = held_out_split(train_text, HELD_OUT / (1 - HELD_OUT))  # 每章考题前面那一段（训练过的），和考题一样长
    seen_ids = encode(seen, chars)
    test_loss = [mean_loss(p, test_ids, num_heads) for p in run["checkpoints"]]
    train_loss = [mean_loss(p, seen_ids, num_heads) for p in run["checkpoints"]]
    return run.with_fields(test_loss=np.array(test_loss), train_loss=np.array(train_loss), chars=chars,
                           num_heads=num_heads)
