"""逐位置前馈网络 (position-wise feed-forward network)：前向、反向与 VJP。

    FFN(x) = max(0, x W_1 + b_1) W_2 + b_2        (Vaswani et al., 2017, 式 2)
    反向：  z = x W_1 + b_1,  r = max(0, z),  dr = grad_out W_2ᵀ,  dz = dr ⊙ [z > 0],  dx = dz W_1ᵀ,
           dW_1 = Σ xᵀ dz,  db_1 = Σ dz,  dW_2 = Σ rᵀ grad_out,  db_2 = Σ grad_out

每个位置各算各的（位置之间不交流）。``check_ffn`` 和 ``feed_forward_vjp_unchecked`` 给一层编码器用。
本模块只依赖 NumPy。形状字母：D = d_model，d_ff 前馈隐藏层宽度。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from .layer_norm import rows, sum_leading
from .linear import linear

__all__ = ["feed_forward", "feed_forward_backward", "check_ffn", "feed_forward_vjp_unchecked"]


def feed_forward(x: np.ndarray, w_1: np.ndarray, b_1: np.ndarray, w_2: np.ndarray, b_2: np.ndarray) -> np.ndarray:
    """逐位置前馈网络 (position-wise feed-forward network)：FFN(x) = max(0, x W_1 + b_1) W_2 + b_2。

    每个位置各算各的（位置之间不交流），先升到 d_ff 维、过 ReLU，再降回 D 维。

    Parameters
    ----------
    x : ndarray of shape (..., D)
    w_1 : ndarray of shape (D, d_ff)
    b_1 : ndarray of shape (d_ff,)
    w_2 : ndarray of shape (d_ff, D)
    b_2 : ndarray of shape (D,)

    Returns
    -------
    ndarray of shape (..., D)

    Raises
    ------
    TypeError
        输入不是实数数组。
    ValueError
        形状对不上（报出期望与收到的形状）、数组为空或含 NaN/inf。

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1.0, -2.0]])                        # (T=1, D=2)
    >>> w_1, b_1 = np.eye(2), np.zeros(2)                  # x W_1 + b_1 = [1, -2]，ReLU 后 [1, 0]
    >>> w_2, b_2 = np.array([[2.0, 0.0], [3.0, 1.0]]), np.full(2, 0.5)
    >>> feed_forward(x, w_1, b_1, w_2, b_2)               # [1·2 + 0·3, 1·0 + 0·1] + 0.5
    array([[2.5, 0.5]])
    """
    x, w_1, b_1, w_2, b_2 = check_ffn(x, w_1, b_1, w_2, b_2)
    return feed_forward_vjp_unchecked(x, w_1, b_1, w_2, b_2)[0]


def check_ffn(x, w_1, b_1, w_2, b_2):
    """前馈网络的输入检查：返回检查过的 (x, w_1, b_1, w_2, b_2)。"""
    x = check.as_real_array(x, "x", min_ndim=1)
    D = x.shape[-1]
    w_1 = check.as_real_array(w_1, "w_1")
    check.check_shape(w_1, "w_1", (D, None), f"（第一维必须等于 x 的最后一维 D={D}）")
    d_ff = w_1.shape[1]
    hint = f"（D={D}，d_ff={d_ff} 由 w_1 的列数决定）"
    b_1 = check.as_real_array(b_1, "b_1")
    check.check_shape(b_1, "b_1", (d_ff,), hint)
    w_2 = check.as_real_array(w_2, "w_2")
    check.check_shape(w_2, "w_2", (d_ff, D), hint)
    b_2 = check.as_real_array(b_2, "b_2")
    check.check_shape(b_2, "b_2", (D,), hint)
    return x, w_1, b_1, w_2, b_2


def feed_forward_backward(
    x: np.ndarray, w_1: np.ndarray, b_1: np.ndarray, w_2: np.ndarray, b_2: np.ndarray, grad_out: np.ndarray
) -> dict[str, np.ndarray]:
    """``feed_forward`` 的反向传播（ReLU 在 z = 0 处取导数 0）。

    Parameters
    ----------
    x, w_1, b_1, w_2, b_2 :
        与 ``feed_forward`` 相同：(..., D), (D, d_ff), (d_ff,), (d_ff, D), (D,)。
    grad_out : ndarray of shape (..., D)
        损失对前馈网络输出的梯度。

    Returns
    -------
    dict[str, ndarray]
        键 ``x, w_1, b_1, w_2, b_2``，每个梯度与同名输入同形状（参数的梯度已在前导维度上求和）。

    Raises
    ------
    TypeError
        输入不是实数数组。
    ValueError
        形状对不上（含 ``grad_out`` 与 ``x`` 形状不同）、数组为空或含 NaN/inf。

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1.0, -2.0]])                    # z = x W_1 = [1, -2]，ReLU 只让第 0 个隐藏单元通过
    >>> w_2 = np.array([[2.0, 0.0], [3.0, 1.0]])
    >>> g = feed_forward_backward(x, np.eye(2), np.zeros(2), w_2, np.zeros(2), np.array([[1.0, 0.0]]))
    >>> g["x"]                                         # dr = [1, 0] W_2ᵀ = [2, 3]；ReLU 挡住第 1 个 → [2, 0]
    array([[2., 0.]])
    >>> g["w_2"]                                       # rᵀ grad_out，r = [1, 0]
    array([[1., 0.],
           [0., 0.]])
    """
    x, w_1, b_1, w_2, b_2 = check_ffn(x, w_1, b_1, w_2, b_2)
    grad_out = check.grad_like(grad_out, x.shape)
    return feed_forward_vjp_unchecked(x, w_1, b_1, w_2, b_2)[1](grad_out)


def feed_forward_vjp_unchecked(x, w_1, b_1, w_2, b_2):
    """前馈网络的前向（输入已检查过），同时交出反向函数：``out, backward = ...``，``backward(grad_out)`` 返回
    键为 ``x, w_1, b_1, w_2, b_2`` 的梯度字典。ReLU 之前的 z 只算一次，前向和反向共用；ReLU 在 z = 0 处取导数 0。"""
    z = linear(x, w_1, b_1, "前馈网络的隐藏层 x W_1 + b_1")  # (..., d_ff)
    r = np.maximum(z, 0)  # (..., d_ff)  ReLU

    def backward(grad_out):
        dz = np.where(z > 0, grad_out @ w_2.T, 0)  # (..., d_ff)
        return {
            "x": dz @ w_1.T,  # (..., D)
            "w_1": rows(x).T @ rows(dz),  # (D, d_ff)
            "b_1": sum_leading(dz),  # (d_ff,)
            "w_2": rows(r).T @ rows(grad_out),  # (d_ff, D)
            "b_2": sum_leading(grad_out),  # (D,)
        }

    return linear(r, w_2, b_2, "前馈网络的输出 max(0, x W_1 + b_1) W_2 + b_2"), backward  # (..., D)
