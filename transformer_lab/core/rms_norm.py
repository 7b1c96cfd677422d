"""RMSNorm (root-mean-square normalization)：只按“均方根”缩放，不减均值、不加偏置。

    RMSNorm(x) = w ⊙ x / √(mean(x²) + ε)          （mean 沿最后一维，Zhang & Sennrich, 2019）
    LayerNorm(x) = γ ⊙ (x − μ) / √(σ² + ε) + β     （第 8 章）

两者的差别只有两处：RMSNorm 不减均值 μ（所以 mean(x²) 就是它的“方差”），也没有 β。均值为 0 的行上两者相同
（测试核对）。Llama、SmolLM2 这类现代解码器每个子层前都用它：少算一个均值，效果几乎一样。

和第 8 章的 ``layer_norm`` 一样先把每一行除以它的最大绝对值 s（结果不变），所以 1e200 这样的大数、
1e-200 这样的小数也不会在平方时溢出或下溢；全是 0 的行结果是 0。本模块只依赖 NumPy。形状字母：D = d_model。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check

__all__ = ["rms_norm", "rms_norm_unchecked"]


def rms_norm_unchecked(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """``rms_norm`` 的计算本身（输入已检查过）。"""
    s = np.abs(x).max(axis=-1, keepdims=True)  # (..., 1) 每行的最大绝对值
    s = np.where(s > 0, s, 1).astype(x.dtype, copy=False)  # (..., 1) 全是 0 的行：除以 1，结果还是 0
    y = x / s  # (..., D) 每个数都在 [-1, 1] 里
    with np.errstate(over="ignore", under="ignore"):
        ms = (y * y).sum(axis=-1, keepdims=True) / y.shape[-1]  # (..., 1) mean(y²)，单位是 s²
        d2 = ms + (eps / s) / s  # (..., 1) = (mean(x²) + ε) / s²
    if np.isfinite(d2).all():  # 普通的行只查这一下
        return y / np.sqrt(d2) * weight  # (..., D)
    # s 极小（≲ 1e-150）：ε / s² 溢出，说明 mean(x²) 相对 ε 可以忽略，结果就是 x / √ε
    tiny = x / np.sqrt(np.asarray(eps, x.dtype))  # (..., D)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(np.isfinite(d2), y / np.sqrt(d2), tiny) * weight  # (..., D)


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """RMSNorm：每一行除以它的均方根 √(mean(x²) + ε)，再逐维乘上权重 w。

    Parameters
    ----------
    x : ndarray of shape (..., D)
    weight : ndarray of shape (D,)
        可学习的缩放 w（SmolLM2 的 ``blk.N.attn_norm.weight`` 等）。
    eps : float, default 1e-5
        加在均方上的小正数，防止除以 0。

    Returns
    -------
    ndarray of shape (..., D)
        新数组；float32 的输入得到 float32。

    Raises
    ------
    TypeError
        ``x``、``weight`` 不是实数数组，或 ``eps`` 不是实数。
    ValueError
        形状不对、含 NaN/inf，或 ``eps`` 不是正数。

    Examples
    --------
    [3, 4]：mean(x²) = (9 + 16) / 2 = 12.5，√12.5 ≈ 3.5355；ε = 0 时结果是 [3, 4] / 3.5355。

    >>> rms_norm(np.array([3.0, 4.0]), np.ones(2), eps=1e-12).round(4)
    array([0.8485, 1.1314])
    >>> rms_norm(np.array([3.0, 4.0]), np.array([2.0, 0.5]), eps=1e-12).round(4)   # 再逐维乘 w
    array([1.6971, 0.5657])
    """
    x = check.as_real_array(x, "x", min_ndim=1)
    weight = check.vector(weight, "weight", x.shape[-1], "提示：weight 的长度是 x 的最后一维 D。")
    eps = check.positive_real(eps, "eps")
    return rms_norm_unchecked(x, weight.astype(x.dtype, copy=False), eps)  # (..., D)
