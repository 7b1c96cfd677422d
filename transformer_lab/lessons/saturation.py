"""为什么要除以 √d_k：用实验说话。

三件事：点积 q·k 的方差随 d_k 线性增长；不缩放时 softmax 变得接近 one-hot；
one-hot 附近 softmax 的梯度（雅可比矩阵）几乎为 0。本模块只依赖 NumPy。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from ..core.softmax import softmax_unchecked

__all__ = ["dot_product_variance", "softmax_jacobian", "saturation_demo"]


MAX_ELEMENTS = check.MAX_ELEMENTS  # 一次抽的随机数个数上限（内存）


def dot_product_variance(d_k: int, num_samples: int, rng: np.random.Generator) -> tuple[float, float]:
    """抽样估计 q·k 与 q·k/√d_k 的方差；q、k 的每个分量独立服从标准正态分布。

    理论值：Var(q·k) = d_k，Var(q·k/√d_k) = 1。

    Parameters
    ----------
    d_k : int
        向量长度。
    num_samples : int
        抽样对数（>= 2）。
    rng : np.random.Generator

    Returns
    -------
    (float, float)
        (未缩放点积的样本方差, 缩放后点积的样本方差)

    Raises
    ------
    TypeError
        参数类型不对。
    ValueError
        ``d_k`` 不是正整数，``num_samples`` < 2，或 num_samples × d_k 超过 1e8（内存）。

    Examples
    --------
    >>> import numpy as np
    >>> raw, scaled = dot_product_variance(64, 20000, np.random.default_rng(0))
    >>> 60 < raw < 68, 0.94 < scaled < 1.06
    (True, True)
    """
    d_k = check.positive_int(d_k, "d_k")
    num_samples = check.positive_int(num_samples, "num_samples")
    if num_samples < 2:
        raise ValueError(f"num_samples 至少为 2 才能估计方差，收到的是 {num_samples}。")
    check.at_most(num_samples * d_k, "num_samples × d_k", MAX_ELEMENTS, "q 和 k 各有这么多个随机数")
    rng = check.generator(rng)
    q = rng.standard_normal((num_samples, d_k))  # (N, d_k)
    k = rng.standard_normal((num_samples, d_k))  # (N, d_k)
    scores = np.sum(q * k, axis=-1)  # (N,)
    return float(np.var(scores, ddof=1)), float(np.var(scores / np.sqrt(d_k), ddof=1))


def softmax_jacobian(p: np.ndarray) -> np.ndarray:
    """softmax 输出 p 对输入分数的雅可比矩阵 (Jacobian)：J = diag(p) − p pᵀ。

    J[i, j] = ∂p_i / ∂x_j。p 越接近 one-hot，J 越接近全 0——梯度消失。

    Parameters
    ----------
    p : ndarray of shape (..., S)
        一组 softmax 输出（非负，和为 1）。

    Returns
    -------
    ndarray of shape (..., S, S)

    Raises
    ------
    TypeError
        ``p`` 不是实数 NumPy 数组。
    ValueError
        ``p`` 有负数或和不为 1。

    Examples
    --------
    >>> import numpy as np
    >>> softmax_jacobian(np.array([0.5, 0.5]))
    array([[ 0.25, -0.25],
           [-0.25,  0.25]])
    """
    p = check.as_real_array(p, "p", min_ndim=1)
    sums = p.sum(axis=-1)
    if np.any(p < 0) or not np.allclose(sums, 1.0, atol=1e-6):
        raise ValueError(
            "p 必须是一组概率：每个元素 >= 0 且最后一维的和为 1（例如 softmax 的输出）；"
            f"收到的最小元素为 {p.min():.4g}，各行之和为 {np.round(sums, 4).tolist()}。"
        )
    eye = np.eye(p.shape[-1], dtype=p.dtype)  # (S, S)
    return p[..., :, None] * eye - p[..., :, None] * p[..., None, :]  # (..., S, S)


def saturation_demo(d_k: int, num_keys: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """一个查询对 ``num_keys`` 个键打分，比较缩放前后的 softmax 权重和梯度大小。

    q 和 k 的分量独立服从标准正态分布（和训练初期随机初始化的情形相当）。

    Parameters
    ----------
    d_k : int
        向量长度。
    num_keys : int
        键的个数 S。
    rng : np.random.Generator

    Returns
    -------
    dict
        ``scores`` (S,) 原始点积；``raw`` (S,) 不缩放的权重；``scaled`` (S,) 除以 √d_k 后的权重；
        ``grad_raw`` / ``grad_scaled`` 两种情况下雅可比矩阵的最大绝对值（梯度有多大）。

    Raises
    ------
    TypeError
        参数类型不对。
    ValueError
        ``d_k`` 或 ``num_keys`` 不是正整数，或 num_keys × d_k 超过 1e8（内存）。

    Examples
    --------
    >>> import numpy as np
    >>> demo = saturation_demo(512, 8, np.random.default_rng(0))
    >>> bool(demo["raw"].max() > demo["scaled"].max())
    True
    """
    d_k = check.positive_int(d_k, "d_k")
    num_keys = check.positive_int(num_keys, "num_keys")
    check.at_most(num_keys * d_k, "num_keys × d_k", MAX_ELEMENTS, "k 有这么多个随机数")
    rng = check.generator(rng)
    q = rng.standard_normal(d_k)  # (d_k,)
    k = rng.standard_normal((num_keys, d_k))  # (S, d_k)
    scores = k @ q  # (S,)
    raw = softmax_unchecked(scores)
    scaled = softmax_unchecked(scores / np.sqrt(d_k))
    return {
        "scores": scores,
        "raw": raw,
        "scaled": scaled,
        "grad_raw": float(np.abs(softmax_jacobian(raw)).max()),
        "grad_scaled": float(np.abs(softmax_jacobian(scaled)).max()),
    }
