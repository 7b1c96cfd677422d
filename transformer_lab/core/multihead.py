"""多头注意力 (multi-head attention)：把 d_model 维拆成 H 个头，各算各的注意力，再拼回去。

    MultiHead(X) = Concat(head_1, ..., head_H) W_O,  head_h = Attention(X W_Q^h, X W_K^h, X W_V^h)

本模块只依赖 NumPy。形状字母：B 批，T 查询位置，S 键位置，H 头数，D = d_model，d_k = D // H。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from .attention import attend

__all__ = ["split_heads", "merge_heads", "multi_head_attention"]


def _heads_divisible(D: int, num_heads: int, name: str) -> None:
    if D % num_heads != 0:
        raise ValueError(
            f"{name} 的最后一维 d_model={D} 必须能被 num_heads={num_heads} 整除（例如 512 = 8 × 64）。"
        )


def split_heads(x: np.ndarray, num_heads: int) -> np.ndarray:
    """把最后一维切成 ``num_heads`` 段，每段给一个头 (head)。

    前 d_k 维给头 0，接下来 d_k 维给头 1，依此类推（d_k = D // H）。

    Parameters
    ----------
    x : ndarray of shape (..., T, D)
    num_heads : int
        头数 H，必须整除 D。

    Returns
    -------
    ndarray of shape (..., H, T, D // H)

    Raises
    ------
    TypeError
        ``x`` 不是实数数组，或 ``num_heads`` 不是整数。
    ValueError
        ``x`` 少于 2 维、为空、含 NaN/inf，或 D 不能被 ``num_heads`` 整除。

    Examples
    --------
    >>> import numpy as np
    >>> x = np.arange(8.0).reshape(2, 4)   # (T=2, D=4)
    >>> split_heads(x, 2)[1]               # 第 2 个头拿到每行的后两维
    array([[2., 3.],
           [6., 7.]])
    """
    x = check.as_real_array(x, "x", min_ndim=2)
    num_heads = check.positive_int(num_heads, "num_heads")
    _heads_divisible(x.shape[-1], num_heads, "x")
    return _split(x, num_heads).copy()  # 返回新数组：改结果不会改到调用者的 x


def _split(x, num_heads):
    *lead, T, D = x.shape
    x = x.reshape(*lead, T, num_heads, D // num_heads)  # (..., T, H, d_k)
    return np.swapaxes(x, -2, -3)  # (..., H, T, d_k)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """``split_heads`` 的逆运算：把各头的输出首尾相接 (concat)。

    Parameters
    ----------
    x : ndarray of shape (..., H, T, d_k)

    Returns
    -------
    ndarray of shape (..., T, H * d_k)

    Raises
    ------
    TypeError
        ``x`` 不是实数数组。
    ValueError
        ``x`` 少于 3 维、为空或含 NaN/inf。

    Examples
    --------
    >>> import numpy as np
    >>> x = np.arange(8.0).reshape(2, 4)
    >>> np.array_equal(merge_heads(split_heads(x, 2)), x)
    True
    """
    return _merge(check.as_real_array(x, "x", min_ndim=3)).copy()  # 新数组：H = 1 时 reshape 会是 x 的视图


def _merge(x):
    *lead, H, T, d_k = x.shape
    x = np.swapaxes(x, -2, -3)  # (..., T, H, d_k)
    return x.reshape(*lead, T, H * d_k)  # (..., T, D)


def _check_mha(x, kv, weights, biases, num_heads, mask):
    x = check.as_real_array(x, "x", min_ndim=2)
    kv = x if kv is None else check.as_real_array(kv, "kv", min_ndim=2)
    num_heads = check.positive_int(num_heads, "num_heads")
    D = x.shape[-1]
    _heads_divisible(D, num_heads, "x")
    if kv.shape[-1] != D:
        raise ValueError(f"kv 的最后一维必须等于 x 的 d_model={D}：x.shape={x.shape}, kv.shape={kv.shape}。")
    checked_w = []
    for name, w in weights.items():
        w = check.as_real_array(w, name)
        check.check_shape(w, name, (D, D), f"（d_model={D}，权重矩阵应是 D × D 的方阵）")
        checked_w.append(w)
    checked_b = []
    for name, b in biases.items():
        if b is not None:
            b = check.as_real_array(b, name)
            check.check_shape(b, name, (D,), f"（偏置是长度为 d_model={D} 的向量）")
        checked_b.append(b)
    batch = check.broadcast_batch({"x": x.shape[:-2], "kv": kv.shape[:-2]})
    if mask is not None:
        mask = check.as_mask(mask, "mask", batch + (num_heads, x.shape[-2], kv.shape[-2]))
    return x, kv, checked_w, checked_b, num_heads, mask


def _project(x, w, b, what="投影"):
    """x @ w (+ b)；输入有限但结果溢出时报错，``what`` 写明是哪个投影（用户的参数名）。"""
    with np.errstate(over="ignore", invalid="ignore"):
        out = x @ w if b is None else x @ w + b  # (..., T, D)
    return check.finite_result(out, what, check.OVERFLOW_HINT)


def multi_head_attention(
    x: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    w_o: np.ndarray,
    num_heads: int,
    mask: np.ndarray | None = None,
    kv: np.ndarray | None = None,
    b_q: np.ndarray | None = None,
    b_k: np.ndarray | None = None,
    b_v: np.ndarray | None = None,
    b_o: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """多头注意力：投影 → 切头 → 各头缩放点积注意力 → 拼接 → 输出投影 W_O。

    Parameters
    ----------
    x : ndarray of shape (..., T, D)
        查询一侧的输入（自注意力时也是键和值的来源）。
    w_q, w_k, w_v, w_o : ndarray of shape (D, D)
        查询、键、值和输出的投影矩阵（行向量约定：``x @ w_q``）。
    num_heads : int
        头数 H，必须整除 D。
    mask : ndarray of bool, broadcastable to (..., H, T, S), optional
        True = 允许关注；例如 ``causal_mask(T)`` 对所有头生效。批量的填充掩码请写成 (B, 1, T, S)，
        多出的那一维 1 对应"所有头"。
    kv : ndarray of shape (..., S, D), optional
        键和值的来源。``None`` 表示自注意力 (self-attention)；否则是交叉注意力 (cross-attention)。
    b_q, b_k, b_v, b_o : ndarray of shape (D,), optional
        对应投影的偏置。

    Returns
    -------
    out : ndarray of shape (..., T, D)
    weights : ndarray of shape (..., H, T, S)
        每个头的注意力权重。

    Raises
    ------
    TypeError
        输入不是实数数组、num_heads 不是整数、mask 不是 bool 数组。
    ValueError
        D 不能被 num_heads 整除、权重形状不是 (D, D)、kv 的 D 不一致、mask 形状不对或某行全 False 等；
        输入有限但投影、分数或输出超出浮点数范围（溢出）。

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(5, 8))                        # (T=5, D=8)
    >>> w_q, w_k, w_v, w_o = rng.normal(size=(4, 8, 8))
    >>> out, weights = multi_head_attention(x, w_q, w_k, w_v, w_o, num_heads=2)
    >>> out.shape, weights.shape
    ((5, 8), (2, 5, 5))
    >>> np.allclose(weights.sum(axis=-1), 1.0)
    True
    """
    x, kv, (w_q, w_k, w_v, w_o), (b_q, b_k, b_v, b_o), H, mask = _check_mha(
        x, kv, {"w_q": w_q, "w_k": w_k, "w_v": w_v, "w_o": w_o},
        {"b_q": b_q, "b_k": b_k, "b_v": b_v, "b_o": b_o}, num_heads, mask,
    )
    src = "x" if kv is x else "kv"
    q = _split(_project(x, w_q, b_q, "查询投影 x @ w_q"), H)  # (..., H, T, d_k)
    k = _split(_project(kv, w_k, b_k, f"键投影 {src} @ w_k"), H)  # (..., H, S, d_k)
    v = _split(_project(kv, w_v, b_v, f"值投影 {src} @ w_v"), H)  # (..., H, S, d_k)
    heads, weights = attend(q, k, v, mask, names=("(x @ w_q)", f"({src} @ w_k)", f"({src} @ w_v)"))
    return _project(_merge(heads), w_o, b_o, "输出投影 @ w_o"), weights  # (..., T, D)
