"""多头注意力的反向 (backward pass)：把前向的五步倒着走一遍。

    前向：Q = x W_Q + b_Q,  K = kv W_K + b_K,  V = kv W_V + b_V   (投影)
          q, k, v = split(Q), split(K), split(V)                    (切头)
          heads = Attention(q, k, v)                                 (每个头的注意力)
          out = merge(heads) W_O + b_O                               (拼接 + 输出投影)
    反向：linear_backward → split(梯度) → 注意力反向 → merge(梯度) → linear_backward

切头和拼接为什么不需要专门的反向函数：``split_heads`` 只是把数字换个位置摆放 (reshape + transpose)，
每个数字原样出现一次。所以梯度也只要"原路搬回去"：split 的反向就是对梯度做 merge，
merge 的反向就是对梯度做 split。测试里用 ⟨split(x), g⟩ = ⟨x, merge(g)⟩ 检查了这一点。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from .attention import attend
from .backward import _linear_grads, attention_grads_from_weights
from .multihead import _check_mha, _merge, _project, _split

__all__ = ["multi_head_attention_backward"]


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
        与前向相同的错误（D 不能被 num_heads 整除等），或 ``grad_out`` 的形状不是 out 的形状。

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
    x, kv, ws, bs, H, mask = _check_mha(x, kv, weights, biases, num_heads, mask)  # 与前向相同的检查
    grad_out = check.as_real_array(grad_out, "grad_out")
    out_shape = np.broadcast_shapes(x.shape[:-2], kv.shape[:-2]) + x.shape[-2:]
    check.check_shape(grad_out, "grad_out", out_shape, "grad_out 必须与前向输出 out 同形状 (..., T, D)。")
    grads = _mha_grads(x, kv, ws, bs, H, mask, grad_out)
    if self_attention:
        grads["x"] = grads["x"] + grads.pop("kv")  # (..., T, D) x 也是键和值的来源
    return {name: g for name, g in grads.items() if not (name in biases and biases[name] is None)}


def _mha_grads(x, kv, ws, bs, H, mask, grad_out):
    """多头反向的计算本身（不做检查）。返回全部梯度，包括没传的偏置。"""
    return _mha_vjp(x, kv, ws, bs, H, mask)[2](grad_out)


def _mha_vjp(x, kv, ws, bs, H, mask):
    """前向算到拼接为止（不做检查），交出 ``concat``、注意力权重和反向函数 ``backward(grad_out)``；
    ``grad_out`` 是损失对 ``concat @ w_o + b_o`` 的梯度。一层编码器的训练也用它，前向只算一次。"""
    (w_q, w_k, w_v, w_o), (b_q, b_k, b_v, _) = ws, bs
    q = _split(_project(x, w_q, b_q), H)  # (..., H, T, d_k)
    k = _split(_project(kv, w_k, b_k), H)  # (..., H, S, d_k)
    v = _split(_project(kv, w_v, b_v), H)  # (..., H, S, d_k)
    heads, p = attend(q, k, v, mask)  # (..., H, T, d_k), (..., H, T, S) 与前向相同的四步
    concat = _merge(heads)  # (..., T, D)

    def backward(grad_out):
        g = {}
        grad_concat, g["w_o"], g["b_o"] = _linear_grads(concat, w_o, grad_out)  # (..., T, D), (D, D), (D,)
        grad_heads = _split(grad_concat, H)  # (..., H, T, d_k) 拼接的反向 = 切头
        grad_q, grad_k, grad_v = attention_grads_from_weights(q, k, v, p, grad_heads)  # 各与 q, k, v 同形状
        grad_x, g["w_q"], g["b_q"] = _linear_grads(x, w_q, _merge(grad_q))  # (..., T, D)
        grad_kv_k, g["w_k"], g["b_k"] = _linear_grads(kv, w_k, _merge(grad_k))  # (..., S, D)
        grad_kv_v, g["w_v"], g["b_v"] = _linear_grads(kv, w_v, _merge(grad_v))  # (..., S, D)
        g["x"], g["kv"] = grad_x, grad_kv_k + grad_kv_v
        return g

    return concat, p, backward

