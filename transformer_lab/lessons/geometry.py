"""第 3 章和第 6 章的平面几何小工具：画在纸上的二维向量、只改一个键的长度。

本模块只依赖 NumPy。约定行向量。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check

__all__ = ["vector_2d", "with_key_length"]


def vector_2d(length: float, angle_deg: float) -> np.ndarray:
    """平面上长度为 ``length``、与 x 轴正方向夹角为 ``angle_deg`` 度的向量。

    Parameters
    ----------
    length : float
        长度，>= 0。
    angle_deg : float
        角度（度），逆时针为正。

    Returns
    -------
    ndarray of shape (2,)

    Raises
    ------
    TypeError
        参数不是实数。
    ValueError
        参数不是有限数，或 ``length`` 为负。

    Examples
    --------
    >>> vector_2d(2.0, 90).round(6)
    array([0., 2.])
    """
    length = check.finite_real(length, "length")
    if length < 0:
        raise ValueError(f"length 不能是负数（长度 >= 0），收到的是 {length}。")
    theta = np.deg2rad(check.finite_real(angle_deg, "angle_deg"))
    return length * np.array([np.cos(theta), np.sin(theta)])  # (2,)


def with_key_length(k: np.ndarray, index: int, length: float) -> np.ndarray:
    """返回一组新的键：第 ``index`` 个键方向不变、长度改成 ``length``，其余不动（不修改输入）。

    Parameters
    ----------
    k : ndarray of shape (S, d_k)
    index : int
        要改的那个键的下标，0 <= index < S。
    length : float
        新长度，> 0。

    Returns
    -------
    ndarray of shape (S, d_k)

    Raises
    ------
    TypeError
        ``k`` 不是实数数组、``index`` 不是整数、``length`` 不是实数。
    ValueError
        ``k`` 不是二维、``index`` 越界、那个键是零向量（没有方向），或 ``length`` 不是正数；
        新的键超出 ``k`` 的浮点范围（例如 float32 的键配 length=1e39）。

    Examples
    --------
    >>> import numpy as np
    >>> with_key_length(np.array([[3.0, 4.0], [1.0, 0.0]]), 0, 10.0)
    array([[6., 8.],
           [1., 0.]])
    """
    k = check.as_real_array(k, "k", min_ndim=2)
    check.check_shape(k, "k", (None, None), "（每行一个键：S 行、d_k 列）")
    index = check.index(index, "index", k.shape[0], f"k 只有 S={k.shape[0]} 个键")
    length = check.positive_real(length, "length")
    big = np.max(np.abs(k[index]))
    if big == 0:
        raise ValueError(f"k 的第 {index} 个键是零向量：没有方向，无法只改长度。")
    unit = k[index] / big  # (d_k,)：先除以最大分量，求长度时平方既不溢出也不下溢（1e±200 的键也行）
    unit = unit / np.sqrt(np.sum(unit * unit))  # (d_k,)
    with np.errstate(over="ignore"):
        row = check.finite_result(unit * length, f"新的键 k[{index}] = 方向 × length", check.OVERFLOW_HINT)  # (d_k,)
    out = k.copy()  # (S, d_k)：不改调用者的 k
    out[index] = row
    return out
