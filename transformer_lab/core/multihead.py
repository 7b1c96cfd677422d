"""多头注意力 (multi-head attention)：把 d_model 维拆成 H 个头，各算各的注意力，再拼回去；前向、反向与 VJP 放在一起。

    MultiHead(X) = Concat(head_1, ..., head_H) W_O,  head_h = Attention(X W_Q^h, X W_K^h, X W_V^h)

    前向：Q = x W_Q + b_Q,  K = kv W_K + b_K,  V = kv W_V + b_V   (投影)
          q, k, v = split(Q), split(K), split(V)                    (切头)
          heads = Attention(q, k, v)                                 (每个头的注意力)
          out = merge(heads) W_O + b_O                               (拼接 + 输出投影)
    反向：linear_backward → split(梯度) → 注意力反向 → merge(梯度) → linear_backward

切头和拼接为什么不需要专门的反向函数：``split_heads`` 只是把数字换个位置摆放 (reshape + transpose)，
每个数字原样出现一次。所以梯度也只要"原路搬回去"：split 的反向就是对梯度做 merge，
merge 的反向就是对梯度做 split。测试里用 ⟨split(x), g⟩ = ⟨x, merge(g)⟩ 检查了这一点。

``split``、``merge``、``check_mha`` 和 ``multi_head_attention_vjp_unchecked`` 给本包其他模块用（一层编码器、
第 5 章的形状追踪）：前者不复制、不检查，后者前向只算一次，交出反向函数。
本模块只依赖 NumPy。形状字母：B 批，T 查询位置，S 键位置，H 头数，D = d_model，d_k = D // H。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from .attention import attend, attention_grads_from_weights
from .guard import guarded_backward
from .linear import linear, linear_grads

__all__ = ["split_heads", "merge_heads", "multi_head_attention", "multi_head_attention_backward", "split", "merge",
           "check_mha", "multi_head_attention_vjp_unchecked"]


def split_heads(x: np.ndarray, num_heads: int) -> np.ndarray:
    """把最后一维切成 ``num_heads`` 段，每段给一个头 (head)。

    前 d_k 维给头 0，接下来 d_k 维给头 1，依此类推（d_k = D // H）。

    Parameters
    ----------
    x : ndarray of shape (..., T, D)
    num_heads : int
        头数 H，必须整除 D。

    Returns
    -------
    ndarray of shape (..., H, T, D // H)

    Raises
    ------
    TypeError
        ``x`` 不是实数数组，或 ``num_heads`` 不是整数。
    ValueError
        ``x`` 少于 2 维、为空、含 NaN/inf，或 D 不能被 ``num_heads`` 整除。

    Examples
    --------
    >>> import numpy as np
    >>> x = np.arange(8.0).reshape(2, 4)   # (T=2, D=4)
    >>> split_heads(x, 2)[1]               # 第 2 个头拿到每行的后两维
    array([[2., 3.],
           [6., 7.]])
    """
    x = check.as_real_array(x, "x", min_ndim=2)
    num_heads = check.positive_int(num_heads, "num_heads")
    check.heads_divide(x.shape[-1], num_heads)
    return split(x, num_heads).copy()  # 返回新数组：改结果不会改到调用者的 x


def split(x: np.ndarray, num_heads: int) -> np.ndarray:
    """切头的计算核（不检查、不复制，返回视图）：(..., T, D) → (..., H, T, D // H)。"""
    *lead, T, D = x.shape
    x = x.reshape(*lead, T, num_heads, D // num_heads)  # (..., T, H, d_k)
    return np.swapaxes(x, -2, -3)  # (..., H, T, d_k)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """``split_heads`` 的逆运算：把各头的输出首尾相接 (concat)。

    Parameters
    ----------
    x : ndarray of shape (..., H, T, d_k)

    Returns
    -------
    ndarray of shape (..., T, H * d_k)

    Raises
    ------
    TypeError
        ``x`` 不是实数数组。
    ValueError
        ``x`` 少于 3 维、为空或含 NaN/inf。

    Examples
    --------
    >>> import numpy as np
    >>> x = np.arange(8.0).reshape(2, 4)
    >>> np.array_equal(merge_heads(split_heads(x, 2)), x)
    True
    """
    return merge(check.as_real_array(x, "x", min_ndim=3)).copy()  # 新数组：H = 1 时 reshape 会是 x 的视图


def merge(x: np.ndarray) -> np.ndarray:
    """拼接的计算核（不检查）：(..., H, T, d_k) → (..., T, H * d_k)。"""
    *lead, H, T, d_k = x.shape
    x = np.swapaxes(x, -2, -3)  # (..., T, H, d_k)
    return x.reshape(*lead, T, H * d_k)  # (..., T, D)


def check_mha(x, kv, weights, biases, num_heads, mask):
    """多头注意力的输入检查：返回 (x, kv, 权重列表, 偏置列表, num_heads, mask)；``kv=None`` 时 kv 就是 x。"""
    x = check.as_real_array(x, "x", min_ndim=2)
    kv = x if kv is None else check.as_real_array(kv, "kv", min_ndim=2)
    num_heads = check.positive_int(num_heads, "num_heads")
    D = x.shape[-1]
    check.heads_divide(D, num_heads)
    if kv.shape[-1] != D:
        raise ValueError(f"kv 的最后一维必须等于 x 的 d_model={D}：x.shape={x.shape}, kv.shape={kv.shape}。")
    checked_w = []
    for name, w in weights.items():
        w = check.as_real_array(w, name)
        check.check_shape(w, name, (D, D), f"（d_model={D}，权重矩阵应是 D × D 的方阵）")
        checked_w.append(w)
    checked_b = []
    for name, b in biases.items():
        if b is not None:
            b = check.as_real_array(b, name)
            check.check_shape(b, name, (D,), f"（偏置是长度为 d_model={D} 的向量）")
        checked_b.append(b)
    batch = check.broadcast_batch({"x": x.shape[:-2], "kv": kv.shape[:-2]})
    if mask is not None:
        mask = check.as_mask(mask, "mask", batch + (num_heads, x.shape[-2], kv.shape[-2]))
    return x, kv, checked_w, checked_b, num_heads, mask


def multi_head_attention(
    x: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    w_o: np.ndarray,
    num_heads: int,
    mask: np.ndarray | None = None,
    kv: np.ndarray | None = None,
    b_q: np.ndarray | None = None,
    b_k: np.ndarray | None = None,
    b_v: np.ndarray | None = None,
    b_o: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """多头注意力：投影 → 切头 → 各头缩放点积注意力 → 拼接 → 输出投影 W_O。

    Parameters
    ----------
    x : ndarray of shape (..., T, D)
        查询一侧的输入（自注意力时也是键和值的来源）。
    w_q, w_k, w_v, w_o : ndarray of shape (D, D)
        查询、键、值和输出的投影矩阵（行向量约定：``x @ w_q``）。
    num_heads : int
        头数 H，必须整除 D。
    mask : ndarray of bool, broadcastable to (..., H, T, S), optional
        True = 允许关注；例如 ``causal_mask(T)`` 对所有头生效。批量的填充掩码请写成 (B, 1, T, S)，
        多出的那一维 1 对应"所有头"。
    kv : ndarray of shape (..., S, D), optional
        键和值的来源。``None`` 表示自注意力 (self-attention)；否则是交叉注意力 (cross-attention)。
    b_q, b_k, b_v, b_o : ndarray of shape (D,), optional
        对应投影的偏置。

    Returns
    -------
    out : ndarray of shape (..., T, D)
    weights : ndarray of shape (..., H, T, S)
        每个头的注意力权重。

    Raises
    ------
    TypeError
        输入不是实数数组、num_heads 不是整数、mask 不是 bool 数组。
    ValueError
        D 不能被 num_heads 整除、权重形状不是 (D, D)、kv 的 D 不一致、mask 形状不对或某行全 False 等；
        输入有限但投影、分数或输出超出浮点数范围（溢出）。

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(5, 8))                        # (T=5, D=8)
    >>> w_q, w_k, w_v, w_o = rng.normal(size=(4, 8, 8))
    >>> out, weights = multi_head_attention(x, w_q, w_k, w_v, w_o, num_heads=2)
    >>> out.shape, weights.shape
    ((5, 8), (2, 5, 5))
    >>> np.allclose(weights.sum(axis=-1), 1.0)
    True
    """
    x, kv, (w_q, w_k, w_v, w_o), (b_q, b_k, b_v, b_o), H, mask = check_mha(
        x, kv, {"w_q": w_q, "w_k": w_k, "w_v": w_v, "w_o": w_o},
        {"b_q": b_q, "b_k": b_k, "b_v": b_v, "b_o": b_o}, num_heads, mask,
    )
    src = "x" if kv is x else "kv"
    q = split(linear(x, w_q, b_q, "查询投影 x @ w_q"), H)  # (..., H, T, d_k)
    k = split(linear(kv, w_k, b_k, f"键投影 {src} @ w_k"), H)  # (..., H, S, d_k)
    v = split(linear(kv, w_v, b_v, f"值投影 {src} @ w_v"), H)  # (..., H, S, d_k)
    heads, weights = attend(q, k, v, mask, names=("(x @ w_q)", f"({src} @ w_k)", f"({src} @ w_v)"))
    return linear(merge(heads), w_o, b_o, "输出投影 @ w_o"), weights  # (..., T, D)


# ---------------------------------------------------------------- 反向

def multi_head_attention_backward(
    x: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    w_o: np.ndarray,
    grad_out: np.ndarray,
    num_heads: int,
    mask: np.ndarray | None = None,
    kv: np.ndarray | None = None,
    b_q: np.ndarray | None = None,
    b_k: np.ndarray | None = None,
    b_v: np.ndarray | None = None,
    b_o: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """多头注意力的反向：已知 G = ∂L/∂out，求 L 对每个输入和参数的梯度。

    参数与 ``multi_head_attention`` 完全相同，只在 ``w_o`` 之后多了 ``grad_out``。
    前向的中间结果在这里重新算一遍（没有隐藏状态）。各步::

        ∂L/∂concat = G · W_Oᵀ,   ∂L/∂W_O = concatᵀ · G,   ∂L/∂b_O = Σ G
        ∂L/∂heads  = split(∂L/∂concat)                  (拼接的反向 = 切头)
        ∂L/∂q, ∂L/∂k, ∂L/∂v = 注意力反向 (见 scaled_dot_product_attention_backward)
        ∂L/∂Q = merge(∂L/∂q) ...                        (切头的反向 = 拼接)
        ∂L/∂W_Q = xᵀ · ∂L/∂Q,  ∂L/∂x = ∂L/∂Q · W_Qᵀ (+ 自注意力时 K、V 两条路的贡献)

    自注意力 (kv=None) 时 x 同时走 Q、K、V 三条路，三份梯度相加。

    Parameters
    ----------
    x, w_q, w_k, w_v, w_o, num_heads, mask, kv, b_q, b_k, b_v, b_o
        与 ``multi_head_attention`` 相同：x (..., T, D)，权重 (D, D)，kv (..., S, D)，
        mask 可广播到 (..., H, T, S)，偏置 (D,)。
    grad_out : ndarray of shape (..., T, D)
        损失对前向输出 out 的梯度，形状必须与 out 相同。

    Returns
    -------
    dict of str -> ndarray
        键与参数名相同，每个梯度与对应参数同形状：``"x"``、``"w_q"``、``"w_k"``、``"w_v"``、``"w_o"``；
        传了 ``kv`` 时还有 ``"kv"``；传了哪个偏置就有哪个 ``"b_q"``/``"b_k"``/``"b_v"``/``"b_o"``。
        所以训练时可以直接 ``for name, g in grads.items(): params[name] -= lr * g``。

    Raises
    ------
    TypeError
        输入不是实数数组、num_heads 不是整数、mask 不是 bool 数组。
    ValueError
        与前向相同的错误（D 不能被 num_heads 整除等），或 ``grad_out`` 的形状不是 out 的形状；
        输入有限、但真正的梯度超出浮点数的范围（溢出）时，报出写明函数名与梯度名的错误（见 ``core/guard.py``）。

    Examples
    --------
    b_O 加在每个位置上，所以它的梯度是 G 沿位置求和：5 个位置的 G 全是 1，梯度就是 5。

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(5, 8))                        # (T=5, D=8)
    >>> w_q, w_k, w_v, w_o = rng.normal(size=(4, 8, 8))    # 每个 (D, D)
    >>> grads = multi_head_attention_backward(x, w_q, w_k, w_v, w_o, np.ones((5, 8)), num_heads=2, b_o=np.zeros(8))
    >>> sorted(grads)
    ['b_o', 'w_k', 'w_o', 'w_q', 'w_v', 'x']
    >>> grads["b_o"]
    array([5., 5., 5., 5., 5., 5., 5., 5.])
    >>> grads["x"].shape, grads["w_q"].shape
    ((5, 8), (8, 8))
    """
    biases = {"b_q": b_q, "b_k": b_k, "b_v": b_v, "b_o": b_o}
    self_attention = kv is None
    weights = {"w_q": w_q, "w_k": w_k, "w_v": w_v, "w_o": w_o}
    x, kv, ws, bs, H, mask = check_mha(x, kv, weights, biases, num_heads, mask)  # 与前向相同的检查
    grad_out = check.as_real_array(grad_out, "grad_out")
    out_shape = np.broadcast_shapes(x.shape[:-2], kv.shape[:-2]) + x.shape[-2:]
    check.check_shape(grad_out, "grad_out", out_shape, "grad_out 必须与前向输出 out 同形状 (..., T, D)。")
    backward = multi_head_attention_vjp_unchecked(x, kv, ws, bs, H, mask)[2]

    def grads_of(g_out):
        grads = backward(g_out)
        if self_attention:
            grads["x"] = grads["x"] + grads.pop("kv")  # (..., T, D) x 也是键和值的来源
        return {name: g for name, g in grads.items() if not (name in biases and biases[name] is None)}

    return guarded_backward(grads_of, grad_out, "multi_head_attention_backward")


def multi_head_attention_vjp_unchecked(x, kv, ws, bs, H, mask):
    """多头注意力的前向（输入已检查过，``ws``/``bs`` 是 q、k、v、o 四个权重和四个偏置），同时交出反向函数。

    返回 ``(out, weights, backward)``：``out`` 与 ``multi_head_attention`` 相同；``backward(grad_out)`` 返回
    全部梯度的字典，键 ``x, kv, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o``（自注意力时 x 的梯度要加上 kv 的）。
    前向只算一次：一层编码器的训练就用它。
    """
    (w_q, w_k, w_v, w_o), (b_q, b_k, b_v, b_o) = ws, bs
    q = split(linear(x, w_q, b_q, "查询投影 x @ w_q"), H)  # (..., H, T, d_k)
    k = split(linear(kv, w_k, b_k, "键投影 @ w_k"), H)  # (..., H, S, d_k)
    v = split(linear(kv, w_v, b_v, "值投影 @ w_v"), H)  # (..., H, S, d_k)
    heads, p = attend(q, k, v, mask)  # (..., H, T, d_k), (..., H, T, S) 与前向相同的四步
    concat = merge(heads)  # (..., T, D)

    def backward(grad_out):
        g = {}
        grad_concat, g["w_o"], g["b_o"] = linear_grads(concat, w_o, grad_out)  # (..., T, D), (D, D), (D,)
        grad_heads = split(grad_concat, H)  # (..., H, T, d_k) 拼接的反向 = 切头
        grad_q, grad_k, grad_v = attention_grads_from_weights(q, k, v, p, grad_heads)  # 各与 q, k, v 同形状
        grad_x, g["w_q"], g["b_q"] = linear_grads(x, w_q, merge(grad_q))  # (..., T, D)
        grad_kv_k, g["w_k"], g["b_k"] = linear_grads(kv, w_k, merge(grad_k))  # (..., S, D)
        grad_kv_v, g["w_v"], g["b_v"] = linear_grads(kv, w_v, merge(grad_v))  # (..., S, D)
        g["x"], g["kv"] = grad_x, grad_kv_k + grad_kv_v
        return g

    return linear(concat, w_o, b_o, "输出投影 @ w_o"), p, backward  # (..., T, D), (..., H, T, S)
