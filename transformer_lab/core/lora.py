"""LoRA（低秩适配，low-rank adaptation，Hu et al. 2021）：冻住预训练的矩阵 W，只学一个低秩的改动。

    前向：y = x (W + s·A B) = x W + s·(x A) B,       s = α / r
    反向：∂L/∂A = s · xᵀ G Bᵀ,   ∂L/∂B = s · (x A)ᵀ G,   ∂L/∂x = G (W + s·A B)ᵀ      （G = ∂L/∂y，W 不求梯度）
    合并：W' = W + s·A B    （训练完把改动折回 W，推理时和原来一样快、一样大）

W 是 (D_in, D_out)，A 是 (D_in, r)，B 是 (r, D_out)，秩 r 远小于 D：要学的只有 r·(D_in + D_out) 个数，
而不是 D_in·D_out 个。B 从 0 开始，所以刚开始 LoRA 层和原来的层一模一样。
``lora_grads`` 把"对合并后的 W' 的梯度"换成对 A、B 的梯度（链式法则）：整个模型的反向照旧走一遍，
最后一步才分给 A 和 B。本模块只依赖 NumPy。形状字母：D_in、D_out 输入输出宽度，r 秩。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from .linear import linear

__all__ = ["lora_linear", "lora_linear_backward", "lora_grads", "lora_merge", "lora_parameters"]


def _check_lora(w, a, b, alpha):
    w = check.as_real_array(w, "w", min_ndim=2)
    a = check.as_real_array(a, "a", min_ndim=2)
    b = check.as_real_array(b, "b", min_ndim=2)
    for name, m in (("w", w), ("a", a), ("b", b)):
        if m.ndim != 2:
            raise ValueError(f"{name} 必须是二维矩阵，收到的 shape={m.shape}。")
    r = a.shape[1]
    if a.shape[0] != w.shape[0] or b.shape != (r, w.shape[1]):
        raise ValueError(f"LoRA 的形状对不上：w 是 (D_in, D_out) = {w.shape}，a 应为 (D_in, r) = ({w.shape[0]}, r)、"
                         f"b 应为 (r, D_out) = ({r}, {w.shape[1]})，收到 a.shape={a.shape}、b.shape={b.shape}。"
                         "提示：a 的列数 r 就是秩，b 的行数必须也是 r。")
    return w, a, b, check.positive_real(alpha, "alpha") / r


def _check_x(x, w):
    x = check.as_real_array(x, "x", min_ndim=1)
    if x.shape[-1] != w.shape[0]:
        raise ValueError(f"x 的最后一维必须等于 w 的行数 D_in={w.shape[0]}，收到 x.shape={x.shape}。")
    return x


def lora_linear(x: np.ndarray, w: np.ndarray, a: np.ndarray, b: np.ndarray, alpha: float) -> np.ndarray:
    """LoRA 线性层的前向：``x W + (α/r)·(x A) B``（不先合并，和训练时一样分两路算）。

    Parameters
    ----------
    x : ndarray of shape (..., D_in)
    w : ndarray of shape (D_in, D_out)
        冻住的预训练矩阵。
    a : ndarray of shape (D_in, r)
    b : ndarray of shape (r, D_out)
    alpha : float
        缩放 α：改动乘上 α / r，换秩时不必重调学习率。

    Returns
    -------
    ndarray of shape (..., D_out)

    Raises
    ------
    TypeError
        某个输入不是实数数组，或 ``alpha`` 不是实数。
    ValueError
        形状对不上（w、a、b 必须是 (D_in, D_out)、(D_in, r)、(r, D_out)，x 的最后一维是 D_in）、``alpha`` 不是正数、
        含 NaN/inf。

    Examples
    --------
    >>> import numpy as np
    >>> x, w = np.array([[1.0, 2.0]]), np.eye(2)
    >>> a, b = np.array([[1.0], [0.0]]), np.array([[0.0, 3.0]])     # 秩 1：A B = [[0, 3], [0, 0]]
    >>> lora_linear(x, w, a, b, alpha=1.0)                           # [1, 2] + 1·[0, 3]
    array([[1., 5.]])
    """
    w, a, b, s = _check_lora(w, a, b, alpha)
    x = _check_x(x, w)
    return linear(x, w, what="LoRA 的 x W") + s * (linear(x, a, what="LoRA 的 x A") @ b)  # (..., D_out)


def lora_linear_backward(x: np.ndarray, w: np.ndarray, a: np.ndarray, b: np.ndarray, alpha: float,
                         grad_y: np.ndarray) -> dict[str, np.ndarray]:
    """LoRA 线性层的反向：对 x、A、B 的梯度（W 冻住，不求梯度）。

    Returns
    -------
    dict
        ``x`` (..., D_in)、``a`` (D_in, r)、``b`` (r, D_out)；批和位置上的贡献都加起来。

    Raises
    ------
    TypeError, ValueError
        与 ``lora_linear`` 相同；``grad_y`` 的形状不是 (..., D_out)（与 y 相同）。

    Examples
    --------
    >>> import numpy as np
    >>> x, w, a, b = np.array([[1.0, 2.0]]), np.eye(2), np.array([[1.0], [0.0]]), np.zeros((1, 2))
    >>> g = lora_linear_backward(x, w, a, b, 1.0, np.array([[1.0, 1.0]]))
    >>> g["a"].tolist(), g["b"].tolist()        # B = 0：A 还没有梯度；B 的梯度 = (x A)ᵀ G = 1·[1, 1]
    ([[0.0], [0.0]], [[1.0, 1.0]])
    """
    w, a, b, s = _check_lora(w, a, b, alpha)
    x = _check_x(x, w)
    grad_y = check.grad_like(grad_y, x.shape[:-1] + (w.shape[1],), "grad_y")
    xa = x @ a  # (..., r)
    x2, g2 = x.reshape(-1, x.shape[-1]), grad_y.reshape(-1, grad_y.shape[-1])  # (N, D_in), (N, D_out)
    grad_a = s * (x2.T @ g2 @ b.T)  # (D_in, r)
    grad_b = s * (xa.reshape(-1, a.shape[1]).T @ g2)  # (r, D_out)
    grad_x = grad_y @ w.T + s * ((grad_y @ b.T) @ a.T)  # (..., D_in)
    return {"x": grad_x, "a": grad_a, "b": grad_b}


def lora_grads(grad_w: np.ndarray, a: np.ndarray, b: np.ndarray, alpha: float) -> dict[str, np.ndarray]:
    """链式法则：已知损失对合并后的矩阵 W' = W + s·A B 的梯度 G_W，得到对 A、B 的梯度。

        ∂L/∂A = s · G_W Bᵀ,   ∂L/∂B = s · Aᵀ G_W

    整个模型的反向（本书手写的那一套）照旧算出每个 W' 的梯度，只在最后一步分给 A 和 B。

    Raises
    ------
    TypeError, ValueError
        与 ``lora_linear`` 相同（``grad_w`` 代替 w 检查形状）。

    Examples
    --------
    >>> import numpy as np
    >>> g = lora_grads(np.array([[1.0, 1.0], [0.0, 0.0]]), np.array([[1.0], [0.0]]), np.zeros((1, 2)), alpha=1.0)
    >>> g["a"].tolist(), g["b"].tolist()
    ([[0.0], [0.0]], [[1.0, 1.0]])
    """
    grad_w, a, b, s = _check_lora(grad_w, a, b, alpha)
    return {"a": s * (grad_w @ b.T), "b": s * (a.T @ grad_w)}  # (D_in, r), (r, D_out)


def lora_merge(w: np.ndarray, a: np.ndarray, b: np.ndarray, alpha: float) -> np.ndarray:
    """把 LoRA 的改动折回矩阵：``W + (α/r)·A B``，形状和 W 一样。合并后的普通线性层与 LoRA 层输出相同。

    Raises
    ------
    TypeError, ValueError
        与 ``lora_linear`` 相同。

    Examples
    --------
    >>> import numpy as np
    >>> lora_merge(np.eye(2), np.array([[1.0], [0.0]]), np.array([[0.0, 3.0]]), alpha=2.0)   # 2/1 · A B
    array([[1., 6.],
           [0., 1.]])
    """
    w, a, b, s = _check_lora(w, a, b, alpha)
    return w + s * (a @ b)  # (D_in, D_out)


def lora_parameters(d_in: int, d_out: int, rank: int) -> int:
    """秩 ``rank`` 的 LoRA 要学的数：r·(D_in + D_out)（A 和 B），对比整个矩阵的 D_in·D_out。

    Raises
    ------
    TypeError, ValueError
        某一项不是正整数。

    Examples
    --------
    >>> lora_parameters(64, 64, 4), 64 * 64
    (512, 4096)
    """
    d_in, d_out = check.positive_int(d_in, "d_in"), check.positive_int(d_out, "d_out")
    return check.positive_int(rank, "rank") * (d_in + d_out)
