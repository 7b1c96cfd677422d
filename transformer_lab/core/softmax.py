"""softmax：把一串任意实数变成加起来等于 1 的正数；以及它的反向。

    前向：softmax(x)_i = e^{x_i} / Σ_j e^{x_j}
    反向：已知 p = softmax(x) 和 g = ∂L/∂p，∂L/∂x = p ⊙ (g − Σ_j p_j g_j)

注意力的第 3 步、输出端把打分变成概率、交叉熵里的 log-softmax 用的都是它。``softmax_unchecked`` 和
``softmax_backward_unchecked`` 是不做检查的计算核，给本包里已经检查过输入的函数用。
本模块只依赖 NumPy。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from .guard import guarded_backward

__all__ = ["softmax", "softmax_backward", "softmax_unchecked", "softmax_backward_unchecked"]


def softmax_unchecked(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """不做检查的 softmax，供本包内部使用（允许 -inf，表示被掩掉的位置）。"""
    with np.errstate(over="ignore"):  # 相差超过 ~1.8e308 的两个分数：差值溢出成 -inf，e^-inf = 0 正是对的
        shifted = x - x.max(axis=axis, keepdims=True)  # 减去最大值：e^x 不会溢出
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


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


def softmax_backward_unchecked(p: np.ndarray, grad_p: np.ndarray, axis: int = -1) -> np.ndarray:
    """不做检查的 softmax 反向，供本包内部使用。"""
    inner = np.sum(p * grad_p, axis=axis, keepdims=True)  # (..., 1) 每行一个数 Σ p⊙g
    return p * (grad_p - inner)  # (...) 与 p 同形状；p = 0 (被掩掉) 处梯度恰为 0


def softmax_backward(p: np.ndarray, grad_p: np.ndarray, axis: int = -1) -> np.ndarray:
    """softmax 的反向：已知 p = softmax(x) 和 ∂L/∂p，求 ∂L/∂x。

    softmax 的雅可比矩阵 (Jacobian) 是 ∂p_i/∂x_j = p_i (δ_ij − p_j)，乘上 g = ∂L/∂p 后化简为::

        ∂L/∂x = p ⊙ (g − Σ_j p_j g_j)

    不必真的造出 n × n 的雅可比矩阵。被掩掉的位置 (x = −inf，所以 p = 0) 梯度恰为 0。
    每一行的梯度加起来是 0：给 x 整行加同一个常数，softmax 不变，损失也不变。

    Parameters
    ----------
    p : ndarray of shape (...)
        softmax 的输出：每个元素 ≥ 0，沿 ``axis`` 每行和为 1。
    grad_p : ndarray of shape (...)
        损失对 p 的梯度，与 ``p`` 同形状。
    axis : int, default -1
        前向 softmax 归一化的那一维。

    Returns
    -------
    ndarray of shape (...)
        损失对 softmax 输入 x 的梯度，与 ``p`` 同形状。

    Raises
    ------
    TypeError
        ``p`` 或 ``grad_p`` 不是实数 NumPy 数组，或 ``axis`` 不是整数。
    ValueError
        数组为空、含 NaN/inf、形状不同、``axis`` 越界，或 ``p`` 不是概率（有负数或行和不为 1）。

    Examples
    --------
    两个位置各占一半，只有第一个位置对损失有贡献 (g = [1, 0])：Σ p⊙g = 0.5，
    所以 ∂L/∂x = [0.5 × (1 − 0.5), 0.5 × (0 − 0.5)] = [0.25, −0.25]。

    >>> import numpy as np
    >>> softmax_backward(np.array([0.5, 0.5]), np.array([1.0, 0.0]))
    array([ 0.25, -0.25])
    >>> softmax_backward(np.array([1.0, 0.0]), np.array([3.0, 7.0]))  # 权重全在一个位置：梯度为 0
    array([0., 0.])
    """
    p = check.as_scores(p, "p", axis)
    grad_p = check.as_real_array(grad_p, "grad_p")
    check.check_shape(grad_p, "grad_p", p.shape, "grad_p 必须与 p 同形状（每个概率对应一个梯度）。")
    tol = 1e-3 if p.dtype == np.float32 else 1e-6
    if np.any(p < 0) or not np.allclose(p.sum(axis=axis), 1.0, rtol=0, atol=tol):
        raise ValueError(
            f"p 必须是 softmax 的输出：每个元素 ≥ 0，沿 axis={axis} 每行和为 1；收到的行和在 "
            f"[{p.sum(axis=axis).min():.4g}, {p.sum(axis=axis).max():.4g}]，最小元素 {p.min():.4g}。"
            "提示：传入的是 softmax 的结果 p，不是 softmax 的输入 x。"
        )
    return guarded_backward(lambda g: softmax_backward_unchecked(p, g, axis=axis), grad_p, "softmax_backward")
