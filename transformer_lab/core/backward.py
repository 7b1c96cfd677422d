"""反向传播 (backward pass)：本书自己手写的梯度，不用任何自动求导库。

链式法则 (chain rule) 一步一步往回走：知道损失 L 对输出的梯度 ∂L/∂out（下文写作 G），
求 L 对每个输入的梯度。每个函数对应一步前向计算（softmax、线性层 ``x @ w + b``、缩放点积注意力），
梯度与对应输入同形状：``grad_x`` 永远和 ``x`` 一样形状。

    前向：S = scale · Q Kᵀ,  P = softmax(S),  out = P V
    反向：∂L/∂V = Pᵀ G,  ∂L/∂P = G Vᵀ,  ∂L/∂S = P ⊙ (∂L/∂P − rowsum(P ⊙ ∂L/∂P)),
          ∂L/∂Q = scale · ∂L/∂S · K,  ∂L/∂K = scale · (∂L/∂S)ᵀ · Q

反向时重新算一遍前向的注意力权重 P（不在任何对象里偷偷存中间结果）。
约定行向量：``y = x @ w``。float32 输入得到 float32 梯度，整数输入按 float64 计算。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from .attention import _check_qkv, attend

__all__ = ["softmax_backward", "linear_backward", "scaled_dot_product_attention_backward"]


def _unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """把广播 (broadcast) 出来的维度上的梯度加回去，得到形状为 ``shape`` 的梯度。

    前向里一个输入被广播到多份（例如同一个 k 给整批查询用），每一份都贡献梯度，所以要求和。
    """
    extra = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(extra))) if extra > 0 else grad  # 去掉多出来的前导维
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=stretched, keepdims=True) if stretched else grad  # (*shape)


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
    return softmax_backward_unchecked(p, grad_p, axis=axis)


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
        数组为空、含 NaN/inf，``w`` 不是二维、行数不等于 x 的最后一维，或 ``grad_y`` 形状不对。

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
    with np.errstate(over="ignore", invalid="ignore"):
        grads = _linear_grads(x, w, grad_y)
    return tuple(check.finite_result(g, f"梯度 {n}", check.OVERFLOW_HINT)
                 for g, n in zip(grads, ("grad_x", "grad_w", "grad_b")))


def _linear_grads(x, w, grad_y):
    grad_x = grad_y @ w.T  # (..., D_in)
    x2, g2 = x.reshape(-1, x.shape[-1]), grad_y.reshape(-1, grad_y.shape[-1])  # (N, D_in), (N, D_out)
    return grad_x, x2.T @ g2, g2.sum(axis=0)  # (..., D_in), (D_in, D_out), (D_out,)


def scaled_dot_product_attention_backward(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    grad_out: np.ndarray,
    mask: np.ndarray | None = None,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """缩放点积注意力的反向：已知 G = ∂L/∂out，求 ∂L/∂q、∂L/∂k、∂L/∂v。

    先重新算出前向的权重 P = softmax(scale · q kᵀ)，再倒着走四步::

        ∂L/∂v = Pᵀ · G                    (..., S, d_v)
        ∂L/∂P = G · vᵀ                    (..., T, S)
        ∂L/∂S = softmax_backward(P, ∂L/∂P) (..., T, S)
        ∂L/∂q = scale · ∂L/∂S · k          (..., T, d_k)
        ∂L/∂k = scale · (∂L/∂S)ᵀ · q       (..., S, d_k)

    被掩掉的位置 P = 0，梯度不会流过去。前向里被广播的批维度（例如一个 k 给整批共用），
    梯度在这些维度上求和，所以每个梯度都和对应输入同形状。

    Parameters
    ----------
    q : ndarray of shape (..., T, d_k)
    k : ndarray of shape (..., S, d_k)
    v : ndarray of shape (..., S, d_v)
    grad_out : ndarray of shape (..., T, d_v)
        损失对前向输出 out 的梯度；形状必须与 ``scaled_dot_product_attention`` 的 out 完全相同。
    mask : ndarray of bool, broadcastable to (..., T, S), optional
        与前向相同：True = 允许关注，每行至少一个 True。
    scale : float, optional
        与前向相同，默认 ``1 / √d_k``。

    Returns
    -------
    grad_q : ndarray of shape (..., T, d_k)
        与 ``q`` 同形状。
    grad_k : ndarray of shape (..., S, d_k)
        与 ``k`` 同形状。
    grad_v : ndarray of shape (..., S, d_v)
        与 ``v`` 同形状。

    Raises
    ------
    TypeError
        输入不是实数 NumPy 数组，或 mask 不是 bool 数组。
    ValueError
        与前向相同的形状/取值错误，或 ``grad_out`` 的形状不是前向输出的形状。

    Examples
    --------
    q = 0，所以两个键的分数相同，权重各 0.5；值是 10 和 20，G = 1：
    ∂L/∂v = Pᵀ G = [0.5, 0.5]；∂L/∂P = G vᵀ = [10, 20]，Σ P⊙(∂L/∂P) = 15，
    ∂L/∂S = [0.5 × (10 − 15), 0.5 × (20 − 15)] = [−2.5, 2.5]；scale = 1 时 ∂L/∂q = ∂L/∂S · k = [−2.5, 2.5]；
    ∂L/∂k = (∂L/∂S)ᵀ · q = 0，因为 q = 0。

    >>> import numpy as np
    >>> q = np.array([[0.0, 0.0]])                 # (T=1, d_k=2)
    >>> k = np.array([[1.0, 0.0], [0.0, 1.0]])     # (S=2, d_k=2)
    >>> v = np.array([[10.0], [20.0]])             # (S=2, d_v=1)
    >>> g_q, g_k, g_v = scaled_dot_product_attention_backward(q, k, v, np.array([[1.0]]), scale=1.0)
    >>> g_v
    array([[0.5],
           [0.5]])
    >>> g_q
    array([[-2.5,  2.5]])
    >>> g_k
    array([[0., 0.],
           [0., 0.]])
    """
    q, k, v, mask, scale = _check_qkv(q, k, v, mask, scale)
    grad_out = check.as_real_array(grad_out, "grad_out")
    out_shape = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2]) + (q.shape[-2], v.shape[-1])
    check.check_shape(grad_out, "grad_out", out_shape, "grad_out 必须与前向输出 out 同形状 (..., T, d_v)。")
    return attention_grads(q, k, v, grad_out, mask, scale)


def attention_grads(q, k, v, grad_out, mask=None, scale=None):
    """注意力反向的计算本身（不做检查）：先重算权重 P，再交给 ``attention_grads_from_weights``。"""
    scale = q.shape[-1] ** -0.5 if scale is None else scale  # Python float：不提升 float32
    _, p = attend(q, k, v[..., :0], mask, scale)  # (..., T, S) 只要权重：值取 0 列，省掉一次 P·v
    return attention_grads_from_weights(q, k, v, p, grad_out, scale)


def attention_grads_from_weights(q, k, v, p, grad_out, scale=None):
    """已知前向权重 p 时的注意力反向（不做检查）。多头反向已经算过 p，直接用它，不再重算。"""
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    grad_v = np.swapaxes(p, -1, -2) @ grad_out  # (..., S, d_v)
    grad_p = grad_out @ np.swapaxes(v, -1, -2)  # (..., T, S)
    grad_s = softmax_backward_unchecked(p, grad_p) * scale  # (..., T, S) 把 scale 提前乘上
    grad_q = grad_s @ k  # (..., T, d_k)
    grad_k = np.swapaxes(grad_s, -1, -2) @ q  # (..., S, d_k)
    return _unbroadcast(grad_q, q.shape), _unbroadcast(grad_k, k.shape), _unbroadcast(grad_v, v.shape)
