"""注意力的核心：因果掩码与缩放点积注意力，前向和反向放在一起。

公式 (Vaswani et al., 2017, 式 1)::

    Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V

    前向：S = scale · Q Kᵀ,  P = softmax(S),  out = P V
    反向：∂L/∂V = Pᵀ G,  ∂L/∂P = G Vᵀ,  ∂L/∂S = P ⊙ (∂L/∂P − rowsum(P ⊙ ∂L/∂P)),
          ∂L/∂Q = scale · ∂L/∂S · K,  ∂L/∂K = scale · (∂L/∂S)ᵀ · Q

反向时重新算一遍前向的注意力权重 P（不在任何对象里偷偷存中间结果）。``check_qkv``、``attend`` 和
``attention_grads*`` 是给本包其他模块（多头注意力、分块注意力、KV 缓存）用的：前者检查输入，后几个是
不做检查的计算核。本模块只依赖 NumPy。约定行向量：每个词是一行，``x @ w``。
形状字母：T 查询位置数，S 键位置数，d_k 每个查询/键向量的长度，d_v 值向量的长度。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from .guard import guarded_backward
from .softmax import softmax_backward_unchecked, softmax_unchecked

__all__ = ["causal_mask", "scaled_dot_product_attention", "scaled_dot_product_attention_backward", "check_qkv",
           "attend", "attention_grads", "attention_grads_from_weights"]


def causal_mask(T: int) -> np.ndarray:
    """因果掩码 (causal mask)：第 t 个位置只能看见自己和它之前的位置。

    Parameters
    ----------
    T : int
        序列长度，正整数。

    Returns
    -------
    ndarray of bool, shape (T, T)
        对角线及其下方为 True（允许关注），上方为 False。

    Raises
    ------
    TypeError
        ``T`` 不是整数。
    ValueError
        ``T`` 不是正数，或 T² 超过 1e8（内存）。

    Examples
    --------
    >>> causal_mask(3).astype(int)
    array([[1, 0, 0],
           [1, 1, 0],
           [1, 1, 1]])
    """
    T = check.positive_int(T, "T")
    check.at_most(T * T, "T × T", check.MAX_ELEMENTS, "掩码有 T² 个元素")
    return np.tril(np.ones((T, T), dtype=bool))  # (T, T)


def check_qkv(q, k, v, mask, scale):
    """检查 q、k、v、mask、scale 并返回转换后的版本。"""
    q = check.as_real_array(q, "q", min_ndim=2)
    k = check.as_real_array(k, "k", min_ndim=2)
    v = check.as_real_array(v, "v", min_ndim=2)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q 与 k 的最后一维 (d_k) 必须相等，才能做点积：q.shape={q.shape}, k.shape={k.shape}。"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k 与 v 的倒数第二维 (S，键/值的个数) 必须相等：k.shape={k.shape}, v.shape={v.shape}。"
            "每个键都要有一个对应的值。"
        )
    batch = check.broadcast_batch({"q": q.shape[:-2], "k": k.shape[:-2], "v": v.shape[:-2]})
    if mask is not None:
        mask = check.as_mask(mask, "mask", batch + (q.shape[-2], k.shape[-2]))
    if scale is not None:
        scale = check.positive_real(scale, "scale")
    return q, k, v, mask, scale


def attend(q, k, v, mask=None, scale=None, names=("q", "k", "v")):
    """注意力的四步计算（输入已检查过）：点积 → 缩放 → softmax → 加权求和。

    ``scaled_dot_product_attention`` 检查完输入后就调用它；包里其他已检查过输入的地方（例如多头注意力）直接复用。
    输入有限、但分数 q·kᵀ·scale 或输出超出浮点数范围时，抛出写明 ``names``（用户传的参数名）的 ValueError，
    而不是悄悄返回 NaN。
    """
    scale = q.shape[-1] ** -0.5 if scale is None else scale  # Python float：不会把 float32 提升成 float64
    with np.errstate(over="ignore", invalid="ignore"):
        scores = (q @ k.swapaxes(-1, -2)) * scale  # (..., T, S)
        if not np.isfinite(scores).all():  # 普通情况只查这一下；溢出时由 finite_result 写明是哪一步
            check.finite_result(scores, f"注意力分数 {names[0]}·{names[1]}ᵀ × scale", check.OVERFLOW_HINT)
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)  # (..., T, S)
        weights = softmax_unchecked(scores, axis=-1)  # (..., T, S)
        out = weights @ v  # (..., T, d_v)
    if not np.isfinite(out).all():
        check.finite_result(out, f"加权求和 weights @ {names[2]}", check.OVERFLOW_HINT)
    return out, weights  # (..., T, d_v), (..., T, S)


def scaled_dot_product_attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    mask: np.ndarray | None = None,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """缩放点积注意力 (scaled dot-product attention)：softmax(q kᵀ / √d_k) v。

    四步：点积 → 缩放 → softmax → 加权求和。

    Parameters
    ----------
    q : ndarray of shape (..., T, d_k)
        查询 (query)，每行一个位置。
    k : ndarray of shape (..., S, d_k)
        键 (key)。
    v : ndarray of shape (..., S, d_v)
        值 (value)。
    mask : ndarray of bool, broadcastable to (..., T, S), optional
        True = 允许关注。每一行至少要有一个 True。
    scale : float, optional
        分数乘的系数，默认 ``1 / √d_k``。传 ``1.0`` 就是"不缩放"。

    Returns
    -------
    out : ndarray of shape (..., T, d_v)
        每个查询得到的加权平均值向量。
    weights : ndarray of shape (..., T, S)
        注意力权重 (attention weights)，每行和为 1。

    Raises
    ------
    TypeError
        输入不是实数 NumPy 数组，或 mask 不是 bool 数组。
    ValueError
        形状不匹配、数组为空、含 NaN/inf、mask 某行全为 False，或 scale 不是正数；
        输入有限但分数 q·kᵀ·scale 或输出超出浮点数范围（溢出）。掩码数组 (np.ma) 是 TypeError，
        提示先 ``filled``；np.matrix 等其他子类先转成普通数组。

    Examples
    --------
    >>> import numpy as np
    >>> q = np.array([[1.0, 0.0]])                 # (T=1, d_k=2)
    >>> k = np.array([[1.0, 0.0], [0.0, 1.0]])     # (S=2, d_k=2)
    >>> v = np.array([[10.0], [20.0]])             # (S=2, d_v=1)
    >>> out, w = scaled_dot_product_attention(q, k, v)
    >>> w.round(3)
    array([[0.67, 0.33]])
    >>> out.round(2)
    array([[13.3]])
    """
    q, k, v, mask, scale = check_qkv(q, k, v, mask, scale)
    return attend(q, k, v, mask, scale)  # 四步计算见上面的 attend


# ---------------------------------------------------------------- 反向

def _unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """把广播 (broadcast) 出来的维度上的梯度加回去，得到形状为 ``shape`` 的梯度。

    前向里一个输入被广播到多份（例如同一个 k 给整批查询用），每一份都贡献梯度，所以要求和。
    """
    extra = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(extra))) if extra > 0 else grad  # 去掉多出来的前导维
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=stretched, keepdims=True) if stretched else grad  # (*shape)


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
        与前向相同的形状/取值错误，或 ``grad_out`` 的形状不是前向输出的形状；
        输入有限、但真正的梯度超出浮点数的范围（溢出）时，报出写明函数名与梯度名的错误（见 ``core/guard.py``）。

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
    q, k, v, mask, scale = check_qkv(q, k, v, mask, scale)
    grad_out = check.as_real_array(grad_out, "grad_out")
    out_shape = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2]) + (q.shape[-2], v.shape[-1])
    check.check_shape(grad_out, "grad_out", out_shape, "grad_out 必须与前向输出 out 同形状 (..., T, d_v)。")
    return guarded_backward(lambda g: attention_grads(q, k, v, g, mask, scale), grad_out,
                            "scaled_dot_product_attention_backward", ("grad_q", "grad_k", "grad_v"))


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
