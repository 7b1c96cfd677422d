"""层归一化 (layer normalization)：前向、反向与 VJP。

    LN(x)  = γ ⊙ x̂ + β,   x̂ = (x - μ) / √(σ² + ε)      （μ、σ² 沿最后一维，σ² 是有偏方差）
    反向：  dx = (1/σ) [ĝ - mean(ĝ) - x̂ ⊙ mean(ĝ ⊙ x̂)],  ĝ = grad_out ⊙ γ,
           dγ = Σ grad_out ⊙ x̂,  dβ = Σ grad_out          （γ、β 被所有位置共用：梯度在前导维度上求和）

``normalize`` 和 ``layer_norm_vjp_unchecked`` 是给一层编码器用的计算核（不做检查）；``rows``、``sum_leading``
是反向里常用的两个小工具，前馈网络的反向也用。本模块只依赖 NumPy。形状字母：D = d_model。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from .guard import guarded_backward

__all__ = ["layer_norm", "layer_norm_backward", "normalize", "layer_norm_vjp_unchecked", "layer_norm_forward_unchecked",
           "rows", "sum_leading", "scale_shift"]


def rows(a: np.ndarray) -> np.ndarray:
    """把所有前导维度排成 N 行：(..., n) → (N, n)。"""
    return a.reshape(-1, a.shape[-1])


def sum_leading(a: np.ndarray) -> np.ndarray:
    """在所有前导维度上求和：(..., n) → (n,)。参数被所有位置共用，它的梯度就是这样加起来的。"""
    return rows(a).sum(axis=0)


def normalize(x: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """标准化的计算核（不做检查）：(x - μ) / √(σ² + ε) 以及 1 / √(σ² + ε)。

    先把每一行除以它的最大绝对值 s（结果不变：分子分母同除以 s），平方与求和就不会溢出，
    例如 [1e300, -1e300, 0, 1] 也能算出有限的正确结果。普通的行（s > 0，√(σ² + ε) / s 有限且大于 0）
    走几步直接的算术、最后查一次；有全是 0 的行、s 极大或极小的行时，再用 ``np.where`` 逐行处理。两条路的算术完全相同。
    """
    D = x.shape[-1]
    s = np.abs(x).max(axis=-1, keepdims=True)  # (..., 1)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        y = x / s  # (..., D)，每个数都在 [-1, 1] 里（全是 0 的行这里是 NaN，下面改走逐行的路）
        centered = y - y.sum(axis=-1, keepdims=True) / D  # (..., D)  与 y.mean 同一种算法，只是少了几层调用
        var = (centered * centered).sum(axis=-1, keepdims=True) / D  # (..., 1)，单位是 s²
        d = np.sqrt(var + (eps / s) / s)  # (..., 1) = √(σ² + ε) / s；s 极小时溢出成 inf，极大时 ε/s² 下溢成 0
        inv_std = 1 / (s * d)  # (..., 1) = 1 / √(σ² + ε)
        if np.isfinite(d + inv_std).all():  # 每行 0 < d < ∞ 且 s·d 不为 0：普通的行，一次查完
            return centered / d, inv_std  # (..., D), (..., 1)
        s = np.where(s > 0, s, 1)  # 全是 0 的行：s = 1，结果是 0
        y = x / s
        centered = y - y.sum(axis=-1, keepdims=True) / D
        d = np.sqrt((centered * centered).sum(axis=-1, keepdims=True) / D + (eps / s) / s)
        x_hat = np.where(d > 0, centered / d, 0)  # d = 0：整行都一样 (σ = 0) 且 ε 可忽略，标准化后是 0
        ok = np.isfinite(d) & (d > 0)
        inv_std = np.where(ok, 1 / (s * d), np.asarray(eps, x.dtype) ** -0.5)  # 1 / √(σ² + ε)；d 不可用时 σ² 相对 ε 可忽略
    return x_hat, inv_std  # (..., D), (..., 1)


def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """层归一化 (layer normalization)：把每个位置的向量拉成均值 0、方差 1，再乘 γ、加 β。

    LN(x) = γ ⊙ (x - μ) / √(σ² + ε) + β，μ 和 σ² 是同一行 D 个数的均值和（有偏）方差。

    Parameters
    ----------
    x : ndarray of shape (..., D)
    gamma, beta : ndarray of shape (D,)
        可学习的缩放 γ 与平移 β。
    eps : float, default 1e-5
        加在方差上的小正数，防止除以 0。

    Returns
    -------
    ndarray of shape (..., D)

    Raises
    ------
    TypeError
        输入不是实数数组，或 ``eps`` 不是实数。
    ValueError
        ``gamma``/``beta`` 的长度不是 D、数组为空或含 NaN/inf、``eps`` 不是正数；γ ⊙ x̂ + β 超出浮点数范围（溢出）。

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([1.0, 2.0, 3.0])          # μ = 2，σ² = 2/3，√(2/3) ≈ 0.8165
    >>> layer_norm(x, np.ones(3), np.zeros(3)).round(4)
    array([-1.2247,  0.    ,  1.2247])
    >>> layer_norm(x, np.full(3, 2.0), np.ones(3)).round(4)   # 再乘 γ = 2、加 β = 1
    array([-1.4495,  1.    ,  3.4495])
    """
    x = check.as_real_array(x, "x", min_ndim=1)
    gamma = check.vector(gamma, "gamma", x.shape[-1])
    beta = check.vector(beta, "beta", x.shape[-1])
    eps = check.positive_real(eps, "eps")
    return scale_shift(normalize(x, eps)[0], gamma, beta)  # (..., D)


def layer_norm_backward(
    x: np.ndarray, gamma: np.ndarray, grad_out: np.ndarray, eps: float = 1e-5
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``layer_norm`` 的反向传播。

    Parameters
    ----------
    x : ndarray of shape (..., D)
        前向的输入。
    gamma : ndarray of shape (D,)
    grad_out : ndarray of shape (..., D)
        损失对 ``layer_norm(x, gamma, beta, eps)`` 的梯度（β 不影响任何梯度，所以不用传）。
    eps : float, default 1e-5
        必须与前向用的相同。

    Returns
    -------
    grad_x : ndarray of shape (..., D)
    grad_gamma, grad_beta : ndarray of shape (D,)
        在所有前导维度上求和。

    Raises
    ------
    TypeError
        输入不是实数数组，或 ``eps`` 不是实数。
    ValueError
        ``gamma`` 长度不是 D、``grad_out`` 形状与 ``x`` 不同、数组为空或含 NaN/inf、``eps`` 不是正数；
        输入有限、但真正的梯度超出浮点数的范围（溢出）时，报出写明函数名与梯度名的错误（见 ``core/guard.py``）。

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([1.0, 2.0, 3.0])
    >>> grad_x, grad_gamma, grad_beta = layer_norm_backward(x, np.ones(3), np.ones(3))
    >>> np.allclose(grad_x, 0)        # 所有输出一起加 1：LayerNorm 先减均值，整体平移对它没影响
    True
    >>> grad_gamma.round(4), grad_beta    # grad_γ = grad_out ⊙ x̂，grad_β = grad_out
    (array([-1.2247,  0.    ,  1.2247]), array([1., 1., 1.]))
    """
    x = check.as_real_array(x, "x", min_ndim=1)
    gamma = check.vector(gamma, "gamma", x.shape[-1])
    grad_out = check.grad_like(grad_out, x.shape)
    eps = check.positive_real(eps, "eps")
    x_hat, inv_std = normalize(x, eps)  # 只要标准化的结果：不算前向输出（γ 很大时它可能溢出，梯度却有限）
    return guarded_backward(lambda g: _grads(x_hat, inv_std, gamma, g), grad_out, "layer_norm_backward",
                            ("grad_x", "grad_gamma", "grad_beta"))


def layer_norm_vjp_unchecked(x, gamma, beta, eps):
    """LayerNorm 的前向（输入已检查过），同时交出反向函数：``out, backward = ...``，
    ``backward(grad_out)`` 返回 ``(grad_x, grad_gamma, grad_beta)``。标准化只算一次，前向和反向共用。"""
    x_hat, inv_std = normalize(x, eps)  # (..., D), (..., 1)
    return scale_shift(x_hat, gamma, beta), lambda grad_out: _grads(x_hat, inv_std, gamma, grad_out)  # (..., D)


_TINY_EPS = 1e-280  # ε 不小于它时，平方下溢（小于约 1e-308）造成的误差相对 σ² + ε 可以忽略（< 1e-25）


def layer_norm_forward_unchecked(x, gamma, beta, eps):
    """只做前向的 LayerNorm（输入已检查过；逐词生成的那一层用它）：返回 ``(out, None)``，不交出反向函数。

    普通大小的行直接按公式算 (x − μ) / √(σ² + ε)，步骤只有 ``normalize`` 的一半；平方会溢出（|x − μ| 超过约 1e154，
    σ² 变成 inf）或 ε 小到平方的下溢不能忽略时，改用防溢出的 ``normalize``——所以极大、极小的输入照样算对。
    两种算法只是舍入不同（相差 1e-15 量级）；训练和整段计算用 ``layer_norm_vjp_unchecked``，结果一位不变。
    """
    D = x.shape[-1]
    with np.errstate(over="ignore", invalid="ignore"):
        centered = x - x.sum(axis=-1, keepdims=True) / D  # (..., D)
        var = (centered * centered).sum(axis=-1, keepdims=True) / D  # (..., 1) 有偏方差 σ²；溢出时是 inf 或 NaN
    if eps >= _TINY_EPS and np.isfinite(var).all():
        return scale_shift(centered / np.sqrt(var + eps), gamma, beta), None  # (..., D)
    return scale_shift(normalize(x, eps)[0], gamma, beta), None  # (..., D) 防溢出的那条路


def scale_shift(x_hat, gamma, beta):
    """γ ⊙ x̂ + β（计算核）：x̂ 有限，但 γ、β 很大时结果可能溢出——那时报错，而不是交出 inf。"""
    with np.errstate(over="ignore", invalid="ignore"):
        out = x_hat * gamma + beta  # (..., D)
    if np.isfinite(out).all():  # 普通情况只查这一下
        return out
    return check.finite_result(out, "LayerNorm 的缩放与平移 γ ⊙ x̂ + β", "提示：gamma、beta 的量级太大了。")


def _grads(x_hat, inv_std, gamma, grad_out):
    g_hat = grad_out * gamma  # (..., D)  损失对 x̂ 的梯度
    mean_g = g_hat.mean(axis=-1, keepdims=True)  # (..., 1)
    mean_gx = (g_hat * x_hat).mean(axis=-1, keepdims=True)  # (..., 1)
    grad_x = inv_std * (g_hat - mean_g - x_hat * mean_gx)  # (..., D)
    return grad_x, sum_leading(grad_out * x_hat), sum_leading(grad_out)  # (..., D), (D,), (D,)
