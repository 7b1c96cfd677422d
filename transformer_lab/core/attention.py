"""注意力的核心：softmax、因果掩码与缩放点积注意力。

公式 (Vaswani et al., 2017, 式 1)::

    Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V

本模块只依赖 NumPy。约定行向量：每个词是一行，``x @ w``。
形状字母：T 查询位置数，S 键位置数，d_k 每个查询/键向量的长度，d_v 值向量的长度。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check

__all__ = ["softmax", "causal_mask", "scaled_dot_product_attention"]


def softmax_unchecked(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """不做检查的 softmax，供本包内部使用（允许 -inf，表示被掩掉的位置）。"""
    with np.errstate(over="ignore"):  # 相差超过 ~1.8e308 的两个分数：差值溢出成 -inf，e^-inf = 0 正是对的
        shifted = x - np.max(x, axis=axis, keepdims=True)  # 减去最大值：e^x 不会溢出
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """数值稳定的 softmax (softmax)：把一串任意实数变成加起来等于 1 的正数。

    softmax(x)_i = e^{x_i} / Σ_j e^{x_j}。实现时先减去最大值，结果不变但不会溢出。

    Parameters
    ----------
    x : ndarray of shape (...)
        任意形状的实数数组。允许 ``-inf``（表示"不许看"的位置），但沿 ``axis`` 的每一行
        至少要有一个有限值。
    axis : int, default -1
        沿哪一维归一化。

    Returns
    -------
    ndarray of shape (...)
        与 ``x`` 同形状；沿 ``axis`` 每一行都是正数（``-inf`` 处为 0）且和为 1。

    Raises
    ------
    TypeError
        ``x`` 不是实数 NumPy 数组，或 ``axis`` 不是整数。
    ValueError
        ``x`` 为空、含 NaN 或 +inf、``axis`` 越界，或某一行全是 ``-inf``。

    Examples
    --------
    >>> import numpy as np
    >>> softmax(np.array([5.0, 2.0, 0.0])).round(4)
    array([0.9465, 0.0471, 0.0064])
    >>> softmax(np.array([1.0, 1.0, -np.inf]))
    array([0.5, 0.5, 0. ])
    """
    x = check.as_scores(x, "x", axis)
    return softmax_unchecked(x, axis=axis)


def causal_mask(T: int) -> np.ndarray:
    """因果掩码 (causal mask)：第 t 个位置只能看见自己和它之前的位置。

    Parameters
    ----------
    T : int
        序列长度，正整数。

    Returns
    -------
    ndarray of bool, shape (T, T)
        对角线及其下方为 True（允许关注），上方为 False。

    Raises
    ------
    TypeError
        ``T`` 不是整数。
    ValueError
        ``T`` 不是正数，或 T² 超过 1e8（内存）。

    Examples
    --------
    >>> causal_mask(3).astype(int)
    array([[1, 0, 0],
           [1, 1, 0],
           [1, 1, 1]])
    """
    T = check.positive_int(T, "T")
    check.at_most(T * T, "T × T", check.MAX_ELEMENTS, "掩码有 T² 个元素")
    return np.tril(np.ones((T, T), dtype=bool))  # (T, T)


def _check_qkv(q, k, v, mask, scale):
    """检查 q、k、v、mask、scale 并返回转换后的版本。"""
    q = check.as_real_array(q, "q", min_ndim=2)
    k = check.as_real_array(k, "k", min_ndim=2)
    v = check.as_real_array(v, "v", min_ndim=2)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q 与 k 的最后一维 (d_k) 必须相等，才能做点积：q.shape={q.shape}, k.shape={k.shape}。"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k 与 v 的倒数第二维 (S，键/值的个数) 必须相等：k.shape={k.shape}, v.shape={v.shape}。"
            "每个键都要有一个对应的值。"
        )
    batch = check.broadcast_batch({"q": q.shape[:-2], "k": k.shape[:-2], "v": v.shape[:-2]})
    if mask is not None:
        mask = check.as_mask(mask, "mask", batch + (q.shape[-2], k.shape[-2]))
    if scale is not None:
        scale = check.positive_real(scale, "scale")
    return q, k, v, mask, scale


def attend(q, k, v, mask=None, scale=None, names=("q", "k", "v")):
    """注意力的四步计算（输入已检查过）：点积 → 缩放 → softmax → 加权求和。

    ``scaled_dot_product_attention`` 检查完输入后就调用它；包里其他已检查过输入的地方（例如多头注意力）直接复用。
    输入有限、但分数 q·kᵀ·scale 或输出超出浮点数范围时，抛出写明 ``names``（用户传的参数名）的 ValueError，
    而不是悄悄返回 NaN。
    """
    scale = q.shape[-1] ** -0.5 if scale is None else scale  # Python float：不会把 float32 提升成 float64
    with np.errstate(over="ignore", invalid="ignore"):
        scores = (q @ np.swapaxes(k, -1, -2)) * scale  # (..., T, S)
    check.finite_result(scores, f"注意力分数 {names[0]}·{names[1]}ᵀ × scale", check.OVERFLOW_HINT)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)  # (..., T, S)
    weights = softmax_unchecked(scores, axis=-1)  # (..., T, S)
    with np.errstate(over="ignore", invalid="ignore"):
        out = weights @ v  # (..., T, d_v)
    check.finite_result(out, f"加权求和 weights @ {names[2]}", check.OVERFLOW_HINT)
    return out, weights  # (..., T, d_v), (..., T, S)


def scaled_dot_product_attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    mask: np.ndarray | None = None,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """缩放点积注意力 (scaled dot-product attention)：softmax(q kᵀ / √d_k) v。

    四步：点积 → 缩放 → softmax → 加权求和。

    Parameters
    ----------
    q : ndarray of shape (..., T, d_k)
        查询 (query)，每行一个位置。
    k : ndarray of shape (..., S, d_k)
        键 (key)。
    v : ndarray of shape (..., S, d_v)
        值 (value)。
    mask : ndarray of bool, broadcastable to (..., T, S), optional
        True = 允许关注。每一行至少要有一个 True。
    scale : float, optional
        分数乘的系数，默认 ``1 / √d_k``。传 ``1.0`` 就是"不缩放"。

    Returns
    -------
    out : ndarray of shape (..., T, d_v)
        每个查询得到的加权平均值向量。
    weights : ndarray of shape (..., T, S)
        注意力权重 (attention weights)，每行和为 1。

    Raises
    ------
    TypeError
        输入不是实数 NumPy 数组，或 mask 不是 bool 数组。
    ValueError
        形状不匹配、数组为空、含 NaN/inf、mask 某行全为 False，或 scale 不是正数；
        输入有限但分数 q·kᵀ·scale 或输出超出浮点数范围（溢出）。掩码数组 (np.ma) 是 TypeError，
        提示先 ``filled``；np.matrix 等其他子类先转成普通数组。

    Examples
    --------
    >>> import numpy as np
    >>> q = np.array([[1.0, 0.0]])                 # (T=1, d_k=2)
    >>> k = np.array([[1.0, 0.0], [0.0, 1.0]])     # (S=2, d_k=2)
    >>> v = np.array([[10.0], [20.0]])             # (S=2, d_v=1)
    >>> out, w = scaled_dot_product_attention(q, k, v)
    >>> w.round(3)
    array([[0.67, 0.33]])
    >>> out.round(2)
    array([[13.3]])
    """
    q, k, v, mask, scale = _check_qkv(q, k, v, mask, scale)
    return attend(q, k, v, mask, scale)  # 四步计算见上面的 attend
