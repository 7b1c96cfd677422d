"""两个向量有多"投缘"：点积 (dot product) 与余弦相似度 (cosine similarity)。

点积既看方向也看长度；余弦相似度只看方向（把两个向量都缩成长度 1 再点积）。
本模块只依赖 NumPy。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check

__all__ = ["dot", "cosine_similarity"]


def _pair(a, b):
    a = check.as_real_array(a, "a", min_ndim=1)
    b = check.as_real_array(b, "b", min_ndim=1)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"a 与 b 的最后一维长度必须相等：a.shape={a.shape}, b.shape={b.shape}。")
    check.broadcast_batch({"a": a.shape[:-1], "b": b.shape[:-1]})
    return a, b


def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """点积：对应位置相乘再相加，Σ_i a_i b_i。

    Parameters
    ----------
    a : ndarray of shape (..., n)
    b : ndarray of shape (..., n)

    Returns
    -------
    float or ndarray of shape (...)
        两个一维向量时返回 Python float，否则返回数组。

    Raises
    ------
    TypeError
        输入不是实数 NumPy 数组。
    ValueError
        最后一维长度不同、数组为空或含 NaN/inf；输入有限但点积超出浮点数范围（溢出）。

    Examples
    --------
    >>> import numpy as np
    >>> dot(np.array([3.0, 4.0]), np.array([1.0, 2.0]))   # 3×1 + 4×2
    11.0
    """
    a, b = _pair(a, b)
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.sum(a * b, axis=-1)  # (...)
    check.finite_result(out, "点积 a·b", check.OVERFLOW_HINT + "只关心方向时可改用 cosine_similarity（它不会溢出）。")
    return out.item() if out.ndim == 0 else out


def cosine_similarity(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """余弦相似度：a·b / (|a| |b|)，只看夹角，范围 [-1, 1]。

    Parameters
    ----------
    a : ndarray of shape (..., n)
    b : ndarray of shape (..., n)

    Returns
    -------
    float or ndarray of shape (...)
        两个一维向量时返回 Python float，否则返回数组；总在 [-1, 1] 之内（舍入误差已截掉）。
        任何有限的非零向量都行，1e200 或 1e-200 量级也不会溢出。

    Raises
    ------
    TypeError
        输入不是实数 NumPy 数组。
    ValueError
        最后一维长度不同、数组为空、含 NaN/inf，或某个向量长度为 0（零向量没有方向）。

    Examples
    --------
    >>> import numpy as np
    >>> round(cosine_similarity(np.array([3.0, 4.0]), np.array([1.0, 2.0])), 4)   # 11 / (5 × √5)
    0.9839
    """
    a, b = _pair(a, b)
    a, b = _unit(a, "a"), _unit(b, "b")  # 先缩成长度 1：1e200 或 1e-200 量级的向量也不会溢出或下溢
    out = np.clip(np.sum(a * b, axis=-1), -1.0, 1.0)  # (...)，舍入可能让 |cos| 略超 1，arccos 会变 NaN
    return out.item() if out.ndim == 0 else out


def _unit(a: np.ndarray, name: str) -> np.ndarray:
    """每个向量除以自己的长度；先除以最大分量的绝对值，平方和既不会溢出也不会下溢成 0。"""
    big = np.max(np.abs(a), axis=-1, keepdims=True)  # (..., 1)
    if np.any(big == 0):
        zero = big[..., 0] == 0
        where = tuple(int(i) for i in np.argwhere(zero)[0]) if zero.ndim else "（整个向量）"
        raise ValueError(f"{name} 在位置 {where} 是长度为 0 的向量：零向量没有方向，余弦相似度无定义。")
    a = a / big  # (..., n)，最大分量是 ±1
    return a / np.sqrt(np.sum(a * a, axis=-1, keepdims=True))  # (..., n)
