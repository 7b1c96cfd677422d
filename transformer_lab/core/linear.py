"""线性层 y = x @ w + b：前向和反向。

    前向：y = x W + b                      （行向量约定：每个位置是一行）
    反向：∂L/∂x = G Wᵀ,  ∂L/∂W = Σ_批 xᵀ G,  ∂L/∂b = Σ_批,位置 G

Q、K、V 和输出 W_O 的投影、前馈网络的两层、模型最后的输出层都是它。``linear`` 是给本包里已经检查过形状的
函数用的计算核：它只做一件检查——输入有限、乘出来却溢出时，报出写明是哪个投影的中文错误，而不是悄悄返回 inf。
本模块只依赖 NumPy。形状字母：D_in 输入宽度，D_out 输出宽度。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from .guard import guarded_backward

__all__ = ["linear", "linear_backward", "linear_grads"]


def linear(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None, what: str = "投影") -> np.ndarray:
    """x @ w (+ b)，形状已检查过；输入有限但结果溢出时报错，``what`` 写明是哪个投影（用户的参数名）。

    Examples
    --------
    >>> import numpy as np
    >>> linear(np.array([[1.0, 2.0]]), np.array([[1.0], [1.0]]), np.array([0.5]))
    array([[3.5]])
    """
    with np.errstate(over="ignore", invalid="ignore"):
        out = x @ w if b is None else x @ w + b  # (..., D_out)
    return out if np.isfinite(out).all() else check.finite_result(out, what, check.OVERFLOW_HINT)  # 普通情况只查一下


def linear_backward(
    x: np.ndarray, w: np.ndarray, grad_y: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """线性层 y = x @ w + b 的反向。

        ∂L/∂x = G · wᵀ,   ∂L/∂w = Σ_批 xᵀ · G,   ∂L/∂b = Σ_批,位置 G

    w 和 b 被批里每一行共用，所以它们的梯度是所有行的贡献之和。不论前向有没有用偏置，
    都返回 ``grad_b``（它就是偏置若存在时会得到的梯度）；b 本身不影响任何梯度，所以不用传。

    Parameters
    ----------
    x : ndarray of shape (..., D_in)
        前向的输入（每行一个位置）。
    w : ndarray of shape (D_in, D_out)
        权重矩阵（行向量约定：``x @ w``）。
    grad_y : ndarray of shape (..., D_out)
        损失对输出 y 的梯度，前导维与 ``x`` 相同。

    Returns
    -------
    grad_x : ndarray of shape (..., D_in)
    grad_w : ndarray of shape (D_in, D_out)
    grad_b : ndarray of shape (D_out,)

    Raises
    ------
    TypeError
        输入不是实数 NumPy 数组。
    ValueError
        数组为空、含 NaN/inf，``w`` 不是二维、行数不等于 x 的最后一维，或 ``grad_y`` 形状不对；
        输入有限、但真正的梯度超出浮点数的范围（溢出）时，报出写明函数名与梯度名的错误（见 ``core/guard.py``）。

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1.0, 2.0]])               # (T=1, D_in=2)
    >>> w = np.array([[1.0, 2.0], [3.0, 4.0]])   # (D_in=2, D_out=2)
    >>> grad_x, grad_w, grad_b = linear_backward(x, w, np.array([[1.0, 1.0]]))
    >>> grad_x                                   # [1, 1] · wᵀ = [1+2, 3+4]
    array([[3., 7.]])
    >>> grad_w                                   # xᵀ · [1, 1]
    array([[1., 1.],
           [2., 2.]])
    >>> grad_b
    array([1., 1.])
    """
    x = check.as_real_array(x, "x", min_ndim=1)
    w = check.as_real_array(w, "w")
    check.check_shape(w, "w", (x.shape[-1], None), f"（w 的行数必须等于 x 的最后一维 {x.shape[-1]}）")
    grad_y = check.as_real_array(grad_y, "grad_y")
    check.check_shape(grad_y, "grad_y", x.shape[:-1] + (w.shape[1],), "（grad_y 必须与前向输出 y = x @ w 同形状）")
    return guarded_backward(lambda g: linear_grads(x, w, g), grad_y, "linear_backward", ("grad_x", "grad_w", "grad_b"))


def linear_grads(x, w, grad_y):
    """线性层反向的计算核（不做检查）：返回 (grad_x, grad_w, grad_b)。"""
    grad_x = grad_y @ w.T  # (..., D_in)
    x2, g2 = x.reshape(-1, x.shape[-1]), grad_y.reshape(-1, grad_y.shape[-1])  # (N, D_in), (N, D_out)
    return grad_x, x2.T @ g2, g2.sum(axis=0)  # (..., D_in), (D_in, D_out), (D_out,)
