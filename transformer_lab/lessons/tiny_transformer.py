"""从零训练一个小 Transformer：把一串符号倒过来（"ABCDEF" → "FEDCBA"）。

模型只有一层编码器（本书 ``core`` 里的 ``encoder_layer``），前后各加一块::

    x      = E[tokens] + PE                       (N, T, D)   词嵌入 + 正弦位置编码
    h, α   = encoder_layer(x, θ, H)               (N, T, D), (N, H, T, T)
    logits = h W_out + b_out                      (N, T, V)   每个位置对 V 个符号打分
    L      = 交叉熵(logits, 倒过来的 tokens)

梯度全部由本书手写的反向函数算出（``encoder_layer_vjp``，即 ``encoder_layer_backward`` 的省时版、``embedding_backward``、``cross_entropy_backward``），
优化器是几行 Adam。第 t 个位置要输出第 T-1-t 个位置的符号：只看自己和"一袋子词"做不到，必须靠注意力和位置。
所有随机数来自传入的 ``rng``；同样的种子给出一模一样的训练。本模块只依赖 NumPy 和 ``core``。
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .. import _validation as check
from ..core.embedding import embed, embedding_backward
from ..core.encoder import PARAM_KEYS, encoder_layer, encoder_layer_vjp, init_encoder_params
from ..core.loss import cross_entropy, cross_entropy_backward
from ..core.positional import sinusoidal_positional_encoding
from .optim import adam_step, train_loop

__all__ = ["reversal_task", "init_model", "forward", "loss_and_grads", "train", "accuracy", "SYMBOLS"]

SYMBOLS = "ABCDEFGH"


def reversal_task(num_sequences: int, rng: np.random.Generator, length: int = 6,
                  vocab_size: int = 8) -> dict[str, np.ndarray]:
    """``num_sequences`` 串随机符号和它们倒过来的样子（符号可以重复）。

    Returns
    -------
    dict
        ``tokens`` (N, T) 整数编号，``targets`` (N, T) = ``tokens[:, ::-1]``。

    Raises
    ------
    TypeError, ValueError
        参数不是正整数、``vocab_size`` 超过 8，``rng`` 不是 Generator，或数据要占的内存超过预算（2 GiB）。

    Examples
    --------
    >>> data = reversal_task(2, np.random.default_rng(0))
    >>> data["tokens"][0].tolist(), data["targets"][0].tolist()
    ([6, 5, 4, 2, 2, 0], [0, 2, 2, 4, 5, 6])
    """
    N, T = check.positive_int(num_sequences, "num_sequences"), check.positive_int(length, "length")
    V = check.at_most(check.positive_int(vocab_size, "vocab_size"), "vocab_size", len(SYMBOLS),
                      f"只有 {len(SYMBOLS)} 个符号 {SYMBOLS}")
    check.memory_budget(2 * N * T, 8, f"{N} 串 × {T} 个符号的倒序任务")
    tokens = check.generator(rng).integers(0, V, size=(N, T))  # (N, T)
    return {"tokens": tokens, "targets": tokens[:, ::-1].copy()}


def init_model(rng: np.random.Generator, vocab_size: int = 8, d_model: int = 32, d_ff: int = 64) -> dict:
    """随机初始参数：嵌入表 ``embed`` (V, D)、一层编码器的 16 个参数、输出层 ``w_out`` (D, V) 与 ``b_out`` (V,)。

    Examples
    --------
    >>> p = init_model(np.random.default_rng(0))
    >>> len(p), p["embed"].shape, p["w_out"].shape
    (19, (8, 32), (32, 8))
    """
    rng = check.generator(rng)
    V, D = check.positive_int(vocab_size, "vocab_size"), check.positive_int(d_model, "d_model")
    check.memory_budget(2 * V * D, 8, f"词嵌入和输出层（vocab_size={V}, d_model={D}）")
    params = {"embed": rng.normal(size=(V, D))}  # (V, D)
    params |= init_encoder_params(D, check.positive_int(d_ff, "d_ff"), rng)
    params["w_out"] = rng.normal(0.0, 1 / np.sqrt(D), size=(D, V))  # (D, V)
    params["b_out"] = np.zeros(V)  # (V,)
    return params


MODEL_KEYS = ("embed", *PARAM_KEYS, "w_out", "b_out")


def _check_model(params):
    if not isinstance(params, Mapping) or set(params) != set(MODEL_KEYS):  # 只读的存档 (Run 里的参数) 也行
        got = sorted(params) if isinstance(params, Mapping) else check.describe(params)
        raise ValueError(f"params 必须是恰好含这 {len(MODEL_KEYS)} 个键的字典：{', '.join(MODEL_KEYS)}；收到的是 {got}。"
                         "提示：用 init_model(rng) 生成一份。")
    return params


def _inputs(params, tokens, use_pe):
    use_pe = check.boolean(use_pe, "use_pe")  # 不收 'no'、0：非空字符串是真值，会做反了
    x = embed(tokens, params["embed"])  # (N, T, D)
    if use_pe:
        x = x + sinusoidal_positional_encoding(tokens.shape[-1], x.shape[-1])  # (N, T, D)
    return x


def forward(params: dict, tokens: np.ndarray, num_heads: int = 1, use_pe: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """模型的前向：返回 ``(logits (N, T, V), 注意力权重 (N, H, T, T))``。``use_pe=False`` 就是去掉位置编码。

    Raises
    ------
    TypeError, ValueError
        ``params`` 缺键或多键、``tokens`` 越界或不是整数数组、D 不能被 num_heads 整除、``use_pe`` 不是 bool。
    """
    params = _check_model(params)
    layer = {k: params[k] for k in PARAM_KEYS}
    h, weights = encoder_layer(_inputs(params, tokens, use_pe), layer, num_heads)  # (N, T, D), (N, H, T, T)
    return h @ params["w_out"] + params["b_out"], weights  # (N, T, V), (N, H, T, T)


def loss_and_grads(params: dict, tokens: np.ndarray, targets: np.ndarray, num_heads: int = 1,
                   use_pe: bool = True) -> tuple[float, dict]:
    """交叉熵损失和它对全部 19 个参数的梯度（前向一次、反向一次）。报错与 ``forward`` 相同，另加 targets 越界。"""
    params = _check_model(params)
    layer = {k: params[k] for k in PARAM_KEYS}
    x = _inputs(params, tokens, use_pe)  # (N, T, D)
    h, _, layer_backward = encoder_layer_vjp(x, layer, num_heads)  # (N, T, D)；前向只算一次
    logits = h @ params["w_out"] + params["b_out"]  # (N, T, V)
    g_logits = cross_entropy_backward(logits, targets)  # (N, T, V)
    grads = {"w_out": h.reshape(-1, h.shape[-1]).T @ g_logits.reshape(-1, g_logits.shape[-1]),  # (D, V)
             "b_out": g_logits.reshape(-1, g_logits.shape[-1]).sum(axis=0)}  # (V,)
    layer_grads = layer_backward(g_logits @ params["w_out"].T)  # x 与 16 个参数的梯度
    grads["embed"] = embedding_backward(tokens, layer_grads.pop("x"), params["embed"].shape[0])  # (V, D)
    return float(cross_entropy(logits, targets)), grads | layer_grads


def accuracy(params: dict, tokens: np.ndarray, targets: np.ndarray, num_heads: int = 1,
             use_pe: bool = True) -> tuple[float, float]:
    """``(逐个符号的正确率, 整串全对的比例)``。

    Raises
    ------
    TypeError, ValueError
        与 ``forward`` 相同；另外 ``targets`` 必须是与 ``tokens`` 同形状的整数编号数组，每个值在 [0, V) 之内。
    """
    logits = forward(params, tokens, num_heads, use_pe)[0]  # (N, T, V)
    targets = check.token_ids(targets, "targets", logits.shape[-1])
    check.check_shape(targets, "targets", tokens.shape, "（每个位置一个正确答案：与 tokens 同形状）")
    pred = logits.argmax(axis=-1)  # (N, T)
    right = pred == targets  # (N, T)
    return float(right.mean()), float(right.all(axis=-1).mean())


def train(rng: np.random.Generator, steps: int = 1500, batch_size: int = 64, lr: float = 3e-3,
          use_pe: bool = True, checkpoint_every: int = 50, length: int = 6, num_heads: int = 1) -> dict:
    """从随机初始参数开始训练倒序任务。每步从 ``rng`` 新抽一批训练串；另有 1000 串固定的考题，训练串里永远不会出现它们。

    Returns
    -------
    Run
        （只读）``losses`` (steps + 1,)；``checkpoint_steps`` (C,)；``checkpoints`` C 份参数；``accuracy`` (C, 2) 每个检查点
        在考题上的 (逐符号, 整串) 正确率；``weights`` (C, H, T, T) 第 1 道考题的注意力；``test`` 考题。

    Raises
    ------
    ValueError
        训练发散（损失变成 NaN/inf 或超过初始损失的 1000 倍）：停下并说明，不会存下 NaN 的检查点。
    TypeError
        ``use_pe`` 不是 bool、``rng`` 不是 Generator、步数等不是整数。

    Examples
    --------
    >>> run = train(np.random.default_rng(0), steps=20, checkpoint_every=10)
    >>> run["checkpoint_steps"].tolist(), run["weights"].shape
    ([0, 10, 20], (3, 1, 6, 6))
    """
    rng = check.generator(rng)
    steps, every = check.positive_int(steps, "steps"), check.positive_int(checkpoint_every, "checkpoint_every")
    lr, use_pe = check.positive_real(lr, "lr"), check.boolean(use_pe, "use_pe")
    batch_size = check.positive_int(batch_size, "batch_size")
    test = reversal_task(1000, rng, length)
    params = init_model(rng)

    def fresh_batch_loss(p):  # 每一步新抽一批训练串（从同一个 rng 里抽，结果确定）
        batch = _fresh_batch(batch_size, rng, length, test["tokens"])
        return loss_and_grads(p, batch["tokens"], batch["targets"], num_heads, use_pe)

    run = train_loop(params, fresh_batch_loss, adam_step(lr), steps, every)
    acc = [accuracy(p, test["tokens"], test["targets"], num_heads, use_pe) for p in run["checkpoints"]]
    maps = [forward(p, test["tokens"][:1], num_heads, use_pe)[1][0] for p in run["checkpoints"]]  # 每个 (H, T, T)
    return run.with_fields(accuracy=np.array(acc), weights=np.stack(maps), test=test)


def _codes(tokens):
    return tokens @ len(SYMBOLS) ** np.arange(tokens.shape[-1])  # (N,)  每一串对应一个整数（8 进制读法）


def _fresh_batch(batch_size, rng, length, exam):
    """抽一批训练串；和考题重复的串重新抽，保证考题是模型从没见过的。"""
    batch = reversal_task(batch_size, rng, length)["tokens"]  # (B, T)
    while np.any(seen := np.isin(_codes(batch), _codes(exam))):
        batch = np.where(seen[:, None], reversal_task(batch_size, rng, length)["tokens"], batch)  # (B, T)
    return {"tokens": batch, "targets": batch[:, ::-1]}
