"""从零训练一个小 GPT：只有解码器 (decoder-only) 的 Transformer，一个字一个字地猜下一个字。

模型（形状：N 串，T 个位置，D = d_model，V 字表大小，L 层）::

    x₀     = E[tokens] + P[0:T]                   (N, T, D)   字嵌入 + 学出来的位置嵌入
    x_l    = Layer_l(x_{l-1}, mask=causal_mask(T)) (N, T, D)   第 8 章那一层，前归一化 (pre-LN)，l = 1 … L
    logits = LN_f(x_L) W_out + b_out               (N, T, V)   最后一层归一化，再给字表里每个字打分
    L      = 交叉熵(logits[:, t], tokens[:, t + 1])              每个位置猜它后面的那个字

每一层就是 ``core.encoder`` 的那一层（``encoder_layer_vjp``，传因果掩码、``norm_first=True``），这里不再写一遍；
梯度全部来自本书手写的反向函数，优化器是 Adam（``optim.adam``，学习率逐步减小），训练循环是全书唯一的 ``optim.train_loop``。
语料是本书自己的正文（``corpus.load_corpus``），每章每 10 段留 1 段作考题（``corpus.held_out_split``），
算"考试损失"和困惑度 (perplexity)。

模型本身（``GPTConfig`` 尺寸 + 参数 = ``TinyGPT``、``init_gpt``、嵌入、输出端）在 ``gpt_model.py``，这里也能取到
（``tl.tiny_gpt.GPTConfig``、``tl.tiny_gpt.init_gpt`` ……）。头数跟着模型走，这里的函数都不再带 ``num_heads``。
所有随机数来自传入的 ``rng``。本模块只依赖 NumPy 和 ``core``。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from ..core.attention import causal_mask
from ..core.embedding import embedding_backward
from ..core.encoder import encoder_layer_vjp
from ..core.loss import cross_entropy, cross_entropy_backward
from .corpus import encode, held_out_split, load_corpus, trained_neighbours, vocabulary
from .gpt_model import (
    EPS,
    GPTConfig,
    TinyGPT,
    check_model,
    check_tokens,
    embed_positions,
    embed_unchecked,
    init_gpt,
    layer_params,
    output_logits,
    output_vjp_unchecked,
    sizes,
)
from .optim import Run, adam, train_loop

__all__ = ["GPTConfig", "TinyGPT", "init_gpt", "layer_params", "sizes", "check_model", "check_tokens",
           "embed_unchecked", "embed_positions", "output_vjp_unchecked", "output_logits", "hidden_states", "forward",
           "logits_vjp", "loss_and_grads", "mean_loss", "windows", "decaying_adam", "train"]

HELD_OUT_EVERY = 10  # 每章每 10 段留 1 段作考题（corpus.held_out_split）
_REMOVED = {"NUM_HEADS": "model.config.num_heads（头数现在是 GPTConfig 的一项，跟着模型走，各函数不再带 num_heads）",
            "check_gpt": "check_model(model)（模型 = GPTConfig + 参数，创建时就检查过）"}


def __getattr__(name: str):
    if name in _REMOVED:
        raise AttributeError(f"tiny_gpt.{name} 已经不用了，请改用 {_REMOVED[name]}。")
    raise AttributeError(f"模块 {__name__} 没有属性 {name!r}")


def hidden_states(model: TinyGPT, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """整段过 L 层（因果：每个位置只看自己和前面）：返回 ``(最后一层的输出 (..., T, D), 注意力权重 (L, ..., H, T, T))``。

    Raises
    ------
    TypeError, ValueError
        ``model`` 不是 TinyGPT、``tokens`` 越界或比上下文长。
    """
    tokens, config = check_tokens(model, tokens)
    x = embed_unchecked(model.params, tokens)  # (..., T, D)
    mask = causal_mask(x.shape[-2])  # (T, T)
    weights = []
    for layer in range(config.num_layers):
        x, w, _ = encoder_layer_vjp(x, layer_params(model, layer), config.num_heads, mask=mask, norm_first=True,
                                    eps=EPS)
        weights.append(w)  # (..., H, T, T)
    return x, np.stack(weights)  # (..., T, D), (L, ..., H, T, T)


def forward(model: TinyGPT, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """整段的前向：返回 ``(logits (..., T, V), 注意力权重 (L, ..., H, T, T))``。第 t 个位置的 logits 是对第 t + 1 个字的打分。

    Raises
    ------
    TypeError, ValueError
        ``model`` 不是 TinyGPT（旧写法传参数字典会得到新写法的提示）、``tokens`` 越界或比上下文长。

    Examples
    --------
    >>> model = init_gpt(GPTConfig(10, d_model=8, num_layers=2, num_heads=2, d_ff=16, context=5), np.random.default_rng(0))
    >>> logits, weights = forward(model, np.array([[1, 2, 3]]))
    >>> logits.shape, weights.shape, bool(np.all(weights[..., 0, 1:] == 0))      # 第 0 个位置只看自己
    ((1, 3, 10), (2, 1, 2, 3, 3), True)
    """
    h, weights = hidden_states(model, tokens)
    return output_vjp_unchecked(model.params, h)[0], weights  # (..., T, V), (L, ..., H, T, T)


def logits_vjp(model: TinyGPT, tokens: np.ndarray):
    """整段的前向，同时交出反向函数：``logits, backward = logits_vjp(model, tokens)``。

    ``backward(grad_logits)`` 把损失对 logits (..., T, V) 的梯度一路传回去，返回对全部参数的梯度字典
    （与 ``model.params`` 同键同形状，交给 Adam）。损失是什么由调用的人决定：第 9 章是普通的交叉熵
    （``loss_and_grads``），第 13 章是只算答案的交叉熵、DPO……反向都走这同一条路（本书手写的反向函数）。

    Raises
    ------
    TypeError, ValueError
        ``model`` 不是 TinyGPT、``tokens`` 越界或比上下文长。
    """
    tokens, config = check_tokens(model, tokens)
    params = model.params
    x = embed_unchecked(params, tokens)  # (N, T, D)
    mask, backs = causal_mask(x.shape[-2]), []
    for layer in range(config.num_layers):
        x, _, back = encoder_layer_vjp(x, layer_params(model, layer), config.num_heads, mask=mask, norm_first=True, eps=EPS)
        backs.append(back)
    logits, out_back = output_vjp_unchecked(params, x)  # (N, T, V)

    def backward(g_logits: np.ndarray) -> dict[str, np.ndarray]:
        g_x, grads = out_back(g_logits)  # (N, T, D)
        for layer in reversed(range(config.num_layers)):  # 倒着走回每一层
            layer_grads = backs[layer](g_x)
            g_x = layer_grads.pop("x")  # (N, T, D)
            grads |= {f"layer{layer}.{k}": g for k, g in layer_grads.items()}
        grads["tok_embed"] = embedding_backward(tokens, g_x, config.vocab_size)  # (V, D)
        T, D = g_x.shape[-2:]
        g_pos = g_x.reshape(-1, T, D).sum(axis=0)  # (T, D) 同一个位置在每一串里都用了一次：加起来
        grads["pos_embed"] = np.concatenate([g_pos, np.zeros((config.context - T, D))])  # (context, D) 没用到的位置是 0
        return grads

    return logits, backward  # (..., T, V)


def loss_and_grads(model: TinyGPT, tokens: np.ndarray, targets: np.ndarray) -> tuple[float, dict[str, np.ndarray]]:
    """交叉熵损失和它对全部参数的梯度（前向一次、反向一次，全是本书手写的反向函数：``logits_vjp``）。

    ``targets`` 与 ``tokens`` 同形状：``targets[..., t]`` 是 ``tokens[..., t]`` 后面的那个字。
    返回的梯度字典与 ``model.params`` 同键同形状（交给 Adam）。
    """
    logits, backward = logits_vjp(model, tokens)  # (N, T, V)
    grads = backward(cross_entropy_backward(logits, targets))
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


def mean_loss(model: TinyGPT, ids: np.ndarray, length: int | None = None) -> float:
    """一整段文字上的平均交叉熵：切成首尾相接的几段（每段 ``length`` 个字，默认是模型的上下文长度），
    每个字都被猜一次（第一个字除外）。困惑度 (perplexity) 就是 e 的这个数次方："平均在几个字里犹豫"。

    Examples
    --------
    >>> model = init_gpt(GPTConfig(5, d_model=8, num_layers=1, num_heads=2, d_ff=8, context=4), np.random.default_rng(0))
    >>> flat = TinyGPT(model.config, model.params | {"w_out": np.zeros((8, 5))})   # 所有字打分相同：每个字的概率都是 1/5
    >>> round(mean_loss(flat, np.array([0, 1, 2, 3, 4, 0, 1])), 4), round(float(np.log(5)), 4)
    (1.6094, 1.6094)
    """
    config = check_model(model).config
    T = config.context if length is None else check.positive_int(length, "length")
    ids = check.token_ids(ids, "ids", config.vocab_size)
    if ids.ndim != 1 or ids.size < 2:
        raise ValueError(f"ids 必须是至少 2 个编号的一维数组（猜第 2 个起的每个字），收到的 shape={ids.shape}。")
    full = (ids.size - 1) // T * T  # 整段的部分：一次前向算完
    parts = [(ids[:full].reshape(-1, T), ids[1:full + 1].reshape(-1, T))] if full else []
    if full < ids.size - 1:
        parts.append((ids[full:-1][None], ids[full + 1:][None]))  # 最后不满 T 个字的一段
    total = sum(float(cross_entropy(forward(model, x)[0], y)) * y.size for x, y in parts)
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
          d_ff: int = 256, num_heads: int = 4) -> Run:
    """在一段中文上从零训练小 GPT。每一步从训练文字里随机截 ``batch_size`` 段、每段 ``context`` 个字，
    用 Adam 走一步，学习率从 ``lr`` 直线降到 ``lr / 10``（``decaying_adam``）。默认的设置就是第 9 章用的
    （``runs.GPT``）：2 层、D = 64、4 个头、上下文 256 个字，每批 4 段，300 步，每 20 步存档；单核约 45 秒（CPU 时间）。
    模型的尺寸 ``GPTConfig(字表大小, d_model, num_layers, num_heads, d_ff, context)``：字表大小由语料决定。

    Parameters
    ----------
    rng : np.random.Generator
        初始参数和每一批训练文字都从它抽：同样的种子，一模一样的训练。
    text : str, optional
        语料，一段一行、各章之间空一行；默认是随包发布的本书正文 ``corpus.load_corpus()``。
        每章每 10 段留 1 段作考题（``corpus.held_out_split``），训练时从来不读。

    Returns
    -------
    Run
        （只读）``losses`` (steps + 1,) 每一批的训练损失；``checkpoint_steps`` (C,)；``checkpoints`` C 个模型
        （``TinyGPT``：同一个 ``config``，各自的参数）；``config``；``test_loss`` (C,) 每个检查点在考题（没训练过的文字）上的
        平均损失，``train_loss`` (C,) 在训练过的文字上的（每道考题前面紧挨着的那一段，``corpus.trained_neighbours``）；``chars`` 字表（第 i 个字的编号是 i）。

    Raises
    ------
    ValueError
        训练发散（``train_loop`` 停下并说明）、语料太短（没有考题，或训练文字不够一段 ``context``）、
        尺寸不合法（见 ``GPTConfig``）。
    """
    rng = check.generator(rng)
    text = load_corpus() if text is None else text
    chars = vocabulary(text)
    train_text, test_text = held_out_split(text, HELD_OUT_EVERY)
    if not test_text:
        raise ValueError(f"text 太短：每章每 {HELD_OUT_EVERY} 段留 1 段作考题（一段一行），可一道考题也没有。"
                         f"提示：至少要有一章有 {HELD_OUT_EVERY} 段、且第 {HELD_OUT_EVERY} 段在全书只出现一次。")
    train_ids, test_ids = encode(train_text, chars), encode(test_text, chars)
    config = GPTConfig(len(chars), d_model, num_layers, num_heads, d_ff, context)
    model = init_gpt(config, rng)

    def batch_loss(params):  # train_loop 和 Adam 只管扁平的参数字典；尺寸由 config 补上
        return loss_and_grads(TinyGPT(config, params), *windows(train_ids, context, batch_size, rng))

    run = train_loop(model.params, batch_loss, decaying_adam(lr, steps), steps, checkpoint_every)
    models = [TinyGPT(config, params) for params in run["checkpoints"]]
    seen_ids = encode(trained_neighbours(text, HELD_OUT_EVERY), chars)  # 每道考题前面那一段：训练过的
    test_loss = [mean_loss(m, test_ids) for m in models]
    train_loss = [mean_loss(m, seen_ids) for m in models]
    return run.with_fields(checkpoints=models, config=config, test_loss=np.array(test_loss),
                           train_loss=np.array(train_loss), chars=chars)
