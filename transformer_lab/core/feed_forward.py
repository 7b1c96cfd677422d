"""逐位置前馈网络 (position-wise feed-forward network)：前向、反向与 VJP。

    FFN(x) = f(x W_1 + b_1) W_2 + b_2,   f = ReLU: max(0, z)      (Vaswani et al., 2017, 式 2)
                                          f = GELU: z · Φ(z)       (Hendrycks & Gimpel, 2016；BERT 用它)
    反向：  z = x W_1 + b_1,  r = f(z),  dr = grad_out W_2ᵀ,  dz = dr ⊙ f'(z),  dx = dz W_1ᵀ,
           dW_1 = Σ xᵀ dz,  db_1 = Σ dz,  dW_2 = Σ rᵀ grad_out,  db_2 = Σ grad_out

激活函数 (activation) 两种：``"relu"``（默认，论文原版）和 ``"gelu"``（精确的 erf 形式，不是 tanh 近似）::

    GELU(z) = z · Φ(z) = ½ z (1 + erf(z / √2)),      GELU'(z) = Φ(z) + z · φ(z),  φ(z) = e^{−z²/2} / √(2π)

Φ 是标准正态分布的累积分布函数：GELU 像一个“软的”ReLU，z 越大越接近 z，越小越接近 0，中间平滑过渡。
NumPy 没有 erf，这里借 Python 标准库的 ``math.erf`` 逐个元素算（``np.frompyfunc``），所以是精确值。

每个位置各算各的（位置之间不交流）。``check_ffn`` 和 ``feed_forward_vjp_unchecked`` 给一层编码器用。
本模块只依赖 NumPy。形状字母：D = d_model，d_ff 前馈隐藏层宽度。
"""

from __future__ import annotations

import math

import numpy as np

from .. import _validation as check
from .guard import guarded_backward
from .layer_norm import rows, sum_leading
from .linear import linear

__all__ = ["feed_forward", "feed_forward_backward", "check_ffn", "feed_forward_vjp_unchecked", "ACTIVATIONS", "gelu",
           "gelu_derivative"]

ACTIVATIONS = ("relu", "gelu")  # 前馈网络能用的激活函数
_erf = np.frompyfunc(math.erf, 1, 1)  # 逐元素的 math.erf（返回 object 数组，用时转回浮点）


def gelu(z: np.ndarray) -> np.ndarray:
    """GELU(z) = ½ z (1 + erf(z / √2))，精确的 erf 形式；dtype 与 ``z`` 相同（计算核，不做检查）。

    Examples
    --------
    >>> import numpy as np
    >>> gelu(np.array([-1.0, 0.0, 1.0])).round(6)      # ±1 · Φ(±1)，Φ(1) ≈ 0.841345
    array([-0.158655,  0.      ,  0.841345])
    """
    phi = 0.5 * (1.0 + _erf(z / math.sqrt(2.0)).astype(z.dtype))  # (...) Φ(z)
    return z * phi


def gelu_derivative(z: np.ndarray) -> np.ndarray:
    """GELU'(z) = Φ(z) + z · φ(z)，φ 是标准正态分布的密度（计算核，不做检查）。

    Examples
    --------
    >>> import numpy as np
    >>> gelu_derivative(np.array([0.0, 1.0])).round(6)   # Φ(0) = 0.5；Φ(1) + 1·φ(1) = 0.8413447 + 0.2419707
    array([0.5     , 1.083315])
    """
    big_phi = 0.5 * (1.0 + _erf(z / math.sqrt(2.0)).astype(z.dtype))  # (...) Φ(z)
    small_phi = np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)  # (...) φ(z)
    return big_phi + z * small_phi


def _activate(z: np.ndarray, activation: str) -> np.ndarray:
    """f(z)：ReLU 或 GELU。"""
    return gelu(z) if activation == "gelu" else np.maximum(z, 0)


def _activate_backward(z: np.ndarray, grad_r: np.ndarray, activation: str) -> np.ndarray:
    """∂L/∂z = ∂L/∂r ⊙ f'(z)：ReLU 在 z = 0 处取导数 0。导数只在反向时才算（只做推理时不必付它的代价）。"""
    return grad_r * gelu_derivative(z) if activation == "gelu" else np.where(z > 0, grad_r, 0)


def feed_forward(x: np.ndarray, w_1: np.ndarray, b_1: np.ndarray, w_2: np.ndarray, b_2: np.ndarray,
                 activation: str = "relu") -> np.ndarray:
    """逐位置前馈网络 (position-wise feed-forward network)：FFN(x) = max(0, x W_1 + b_1) W_2 + b_2。

    每个位置各算各的（位置之间不交流），先升到 d_ff 维、过 ReLU（或 GELU），再降回 D 维。

    Parameters
    ----------
    x : ndarray of shape (..., D)
    w_1 : ndarray of shape (D, d_ff)
    b_1 : ndarray of shape (d_ff,)
    w_2 : ndarray of shape (d_ff, D)
    b_2 : ndarray of shape (D,)
    activation : {"relu", "gelu"}, default "relu"
        隐藏层的激活函数：``"relu"`` 是论文原版 max(0, z)；``"gelu"`` 是 BERT 等模型用的精确 GELU z · Φ(z)。

    Returns
    -------
    ndarray of shape (..., D)

    Raises
    ------
    TypeError
        输入不是实数数组，或 ``activation`` 不是字符串。
    ValueError
        形状对不上（报出期望与收到的形状）、数组为空或含 NaN/inf，或 ``activation`` 不是 "relu"/"gelu"。

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1.0, -2.0]])                        # (T=1, D=2)
    >>> w_1, b_1 = np.eye(2), np.zeros(2)                  # x W_1 + b_1 = [1, -2]，ReLU 后 [1, 0]
    >>> w_2, b_2 = np.array([[2.0, 0.0], [3.0, 1.0]]), np.full(2, 0.5)
    >>> feed_forward(x, w_1, b_1, w_2, b_2)               # [1·2 + 0·3, 1·0 + 0·1] + 0.5
    array([[2.5, 0.5]])
    >>> feed_forward(x, w_1, b_1, w_2, b_2, activation="gelu").round(4)   # GELU: [1, -2] → [0.8413, -0.0455]
    array([[2.0462, 0.4545]])
    """
    x, w_1, b_1, w_2, b_2 = check_ffn(x, w_1, b_1, w_2, b_2)
    activation = check.one_of(activation, "activation", ACTIVATIONS)
    return feed_forward_vjp_unchecked(x, w_1, b_1, w_2, b_2, activation)[0]


def check_ffn(x, w_1, b_1, w_2, b_2):
    """前馈网络的输入检查：返回检查过的 (x, w_1, b_1, w_2, b_2)（``activation`` 另用 ``check.one_of`` 检查）。"""
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
    x: np.ndarray, w_1: np.ndarray, b_1: np.ndarray, w_2: np.ndarray, b_2: np.ndarray, grad_out: np.ndarray,
    activation: str = "relu",
) -> dict[str, np.ndarray]:
    """``feed_forward`` 的反向传播（ReLU 在 z = 0 处取导数 0；GELU 的导数是 Φ(z) + z · φ(z)）。

    Parameters
    ----------
    x, w_1, b_1, w_2, b_2 :
        与 ``feed_forward`` 相同：(..., D), (D, d_ff), (d_ff,), (d_ff, D), (D,)。
    grad_out : ndarray of shape (..., D)
        损失对前馈网络输出的梯度。
    activation : {"relu", "gelu"}, default "relu"
        必须与前向用的相同。

    Returns
    -------
    dict[str, ndarray]
        键 ``x, w_1, b_1, w_2, b_2``，每个梯度与同名输入同形状（参数的梯度已在前导维度上求和）。

    Raises
    ------
    TypeError
        输入不是实数数组，或 ``activation`` 不是字符串。
    ValueError
        形状对不上（含 ``grad_out`` 与 ``x`` 形状不同）、数组为空或含 NaN/inf，或 ``activation`` 不是 "relu"/"gelu"；
        输入有限、但真正的梯度超出浮点数的范围（溢出）时，报出写明函数名与梯度名的错误（见 ``core/guard.py``）。

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
    activation = check.one_of(activation, "activation", ACTIVATIONS)
    grad_out = check.grad_like(grad_out, x.shape)
    backward = feed_forward_vjp_unchecked(x, w_1, b_1, w_2, b_2, activation)[1]
    return guarded_backward(backward, grad_out, "feed_forward_backward")


def feed_forward_vjp_unchecked(x, w_1, b_1, w_2, b_2, activation="relu"):
    """前馈网络的前向（输入已检查过），同时交出反向函数：``out, backward = ...``，``backward(grad_out)`` 返回
    键为 ``x, w_1, b_1, w_2, b_2`` 的梯度字典。激活之前的 z 只算一次，前向和反向共用；ReLU 在 z = 0 处取导数 0。"""
    z = linear(x, w_1, b_1, "前馈网络的隐藏层 x W_1 + b_1")  # (..., d_ff)
    r = _activate(z, activation)  # (..., d_ff)  ReLU 或 GELU

    def backward(grad_out):
        dz = _activate_backward(z, grad_out @ w_2.T, activation)  # (..., d_ff)
        return {
            "x": dz @ w_1.T,  # (..., D)
            "w_1": rows(x).T @ rows(dz),  # (D, d_ff)
            "b_1": sum_leading(dz),  # (d_ff,)
            "w_2": rows(r).T @ rows(grad_out),  # (d_ff, D)
            "b_2": sum_leading(grad_out),  # (D,)
        }

    formula = "GELU(x W_1 + b_1)" if activation == "gelu" else "max(0, x W_1 + b_1)"
    return linear(r, w_2, b_2, f"前馈网络的输出 {formula} W_2 + b_2"), backward  # (..., D)
