"""多头注意力的"管道"：每一步数组的形状、reshape 的陷阱、三种算法结果相同、代价与头数无关。

本模块只依赖 NumPy 和 ``core``。形状字母：T 词数，D = d_model，H 头数，d_k = D / H。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from ..core.multihead import merge, multi_head_attention, split

__all__ = ["shape_trace", "naive_split", "heads_by_loop", "heads_by_block_product"]


def _checked(x, num_heads):
    x = check.as_real_array(x, "x", min_ndim=2)
    H = check.positive_int(num_heads, "num_heads")
    check.heads_divide(x.shape[-1], H, name="D")
    return x, H


def shape_trace(x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray,
                num_heads: int) -> dict[str, np.ndarray]:
    """把一句话 x 走一遍多头自注意力，返回路上的每一个数组（按出现的先后）。

    Parameters
    ----------
    x : ndarray of shape (T, D)
    w_q, w_k, w_v, w_o : ndarray of shape (D, D)
    num_heads : int

    Returns
    -------
    dict of str -> ndarray
        ``X`` (T, D)，``Q``/``K``/``V`` (T, D)，``q``/``k``/``v`` (H, T, d_k)，``weights`` (H, T, T)，
        ``heads`` (H, T, d_k)，``concat`` (T, D)，``out`` (T, D)，以及 ``W_O`` (D, D)。

    Raises
    ------
    TypeError, ValueError
        与 ``multi_head_attention`` 相同（D 不能被 num_heads 整除、权重不是 D × D 等）。

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> trace = shape_trace(rng.normal(size=(4, 8)), *rng.normal(size=(4, 8, 8)), num_heads=2)
    >>> {name: a.shape for name, a in trace.items() if name in ("X", "q", "weights", "concat", "out")}
    {'X': (4, 8), 'q': (2, 4, 4), 'weights': (2, 4, 4), 'concat': (4, 8), 'out': (4, 8)}
    """
    out, weights = multi_head_attention(x, w_q, w_k, w_v, w_o, num_heads)  # 也负责全部检查
    H = int(num_heads)
    # 用检查过的浮点版本往下算：int8 的 x 直接 x @ w_q 会在 int8 里回绕 (wrap)
    x, w_q, w_k, w_v, w_o = (check.as_real_array(a, n) for a, n in
                             ((x, "x"), (w_q, "w_q"), (w_k, "w_k"), (w_v, "w_v"), (w_o, "w_o")))
    Q, K, V = x @ w_q, x @ w_k, x @ w_v  # (T, D)
    q, k, v = split(Q, H), split(K, H), split(V, H)  # (H, T, d_k)
    heads = weights @ v  # (H, T, d_k)
    concat = merge(heads)  # (T, D)
    return {"X": x, "Q": Q, "K": K, "V": V, "q": q, "k": k, "v": v, "weights": weights,
            "heads": heads, "concat": concat, "W_O": w_o, "out": out}


def naive_split(x: np.ndarray, num_heads: int) -> np.ndarray:
    """错误的切头：只 ``reshape(H, T, d_k)``，不先 reshape 成 (T, H, d_k) 再转置。

    数字在内存里是一行一行（一个词一个词）排的，直接按 (H, T, d_k) 重新分组，"头 0"会拿到
    前几个词的全部维度，而不是每个词的前 d_k 维——不同词的数字被混进了同一个"词"里。形状对，内容错。

    Parameters
    ----------
    x : ndarray of shape (T, D)
    num_heads : int

    Returns
    -------
    ndarray of shape (H, T, d_k)

    Raises
    ------
    TypeError, ValueError
        x 不是 2 维实数数组，或 D 不能被 num_heads 整除。

    Examples
    --------
    两个词、每词 4 维，数字 = 10 × 词号 + 维号：

    >>> x = np.array([[0, 1, 2, 3], [10, 11, 12, 13]], dtype=float)
    >>> naive_split(x, 2)[0]          # 错：头 0 的"两个词"其实都是词 0
    array([[0., 1.],
           [2., 3.]])
    >>> from transformer_lab.core.multihead import split_heads
    >>> split_heads(x, 2)[0]          # 对：头 0 拿到每个词的前 2 维
    array([[ 0.,  1.],
           [10., 11.]])
    """
    x, H = _checked(x, num_heads)
    if x.ndim != 2:
        raise ValueError(f"x 必须是 2 维 (T, D)，收到的 shape={x.shape}。")
    T, D = x.shape
    return x.reshape(H, T, D // H).copy()  # (H, T, d_k) 形状对，内容错


def _checked_heads(q, k, v) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """q、k、v 必须是同形状的 3 维实数数组 (H, T, d_k)，且没有 NaN/inf。"""
    q, k, v = (check.as_real_array(a, n, min_ndim=3) for a, n in ((q, "q"), (k, "k"), (v, "v")))
    if q.ndim != 3:
        raise ValueError(f"q 必须是 3 维 (H, T, d_k)，收到的 shape={q.shape}。")
    for a, n in ((k, "k"), (v, "v")):
        check.check_shape(a, n, q.shape, "（这里 q、k、v 必须同形状 (H, T, d_k)）")
    return q, k, v


def heads_by_loop(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """一个头一个头地算注意力（最直白的写法，作参考）。q, k, v 形状 (H, T, d_k)，返回 (H, T, d_k)。

    Raises
    ------
    TypeError, ValueError
        输入不是 3 维实数数组或形状不一致。
    """
    q, k, v = _checked_heads(q, k, v)
    out = np.zeros_like(q)
    for h in range(q.shape[0]):
        scores = q[h] @ k[h].T / np.sqrt(q.shape[-1])  # (T, T)
        w = np.exp(scores - scores.max(axis=-1, keepdims=True))
        out[h] = (w / w.sum(axis=-1, keepdims=True)) @ v[h]  # (T, d_k)
    return out


def heads_by_block_product(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """把 H 个头摆成一个大的分块矩阵，只做**一次**矩阵乘法。

    把各头的 q 斜着摆成 (H·T, H·d_k) 的分块对角矩阵、k 也一样，一次乘出 (H·T, H·T) 的打分表：
    对角线上的块正是每个头自己的 qₕ kₕᵀ，块外全是 0（不同头的维度互不相乘）。再把块外掩掉做 softmax，
    结果与逐头计算完全相同。

    Returns
    -------
    out : ndarray of shape (H, T, d_k)
    scores : ndarray of shape (H·T, H·T)
        那一次乘法得到的大打分表（已除以 √d_k）。

    Raises
    ------
    TypeError, ValueError
        与 ``heads_by_loop`` 相同：不是 3 维实数数组、形状不一致或含 NaN/inf；打分溢出；大打分表超过内存预算（2 GiB）。
    """
    q, k, v = _checked_heads(q, k, v)
    H, T, d_k = q.shape
    check.memory_budget(3 * (H * T) ** 2, 8, f"(H·T) × (H·T) 的大打分表（H={H}, T={T}）")
    blocks = lambda a: np.block([[a[h] if g == h else np.zeros_like(a[h]) for g in range(H)]  # noqa: E731
                                 for h in range(H)])  # (H·T, H·d_k)
    with np.errstate(over="ignore", invalid="ignore"):
        scores = blocks(q) @ blocks(k).T / np.sqrt(d_k)  # (H·T, H·T) 一次乘法
    check.finite_result(scores, "打分 q·k / √d_k", check.OVERFLOW_HINT)
    same_head = np.kron(np.eye(H, dtype=bool), np.ones((T, T), dtype=bool))  # (H·T, H·T)
    w = np.where(same_head, scores, -np.inf)
    w = np.exp(w - w.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)  # (H·T, H·T)
    out = (w @ blocks(v)).reshape(H, T, H, d_k)  # (H, T, H, d_k) 第 h 块行只有第 h 块列非 0
    return out[np.arange(H), :, np.arange(H)], scores  # (H, T, d_k)
