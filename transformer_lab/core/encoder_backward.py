"""一整层编码器的反向传播 (backward pass)：把 ``encoder_layer`` 的每一步倒着走一遍。

后归一化 (post-LN，论文默认)::

    前向：a = MHA(x),  u = x + a,  h = LN₁(u),  f = FFN(h),  v = h + f,  out = LN₂(v)
    反向：dv = LN₂'(dout)                      dh = dv + FFN'(dv)        （残差：梯度兵分两路再相加）
          du = LN₁'(dh)                        dx = du + MHA'(du)

前归一化 (pre-LN)::

    前向：n₁ = LN₁(x),  a = MHA(n₁),  h = x + a,  n₂ = LN₂(h),  out = h + FFN(n₂)
    反向：dh = dout + LN₂'(FFN'(dout))         dx = dh + LN₁'(MHA'(dh))

残差连接 ``y = x + F(x)`` 的反向是 ``dx = dy + F'(dy)``：梯度有一条不经过 F 的直路，这正是深层网络能训练的原因。
每一块的反向就是本书已有的 ``layer_norm_backward``、``feed_forward_backward``、``multi_head_attention_backward``
里不做检查的那几个核心函数（公式只写一遍）；这里前向只算一次，把中间结果交给它们，训练时一步的代价才不会翻倍。
本模块只依赖 NumPy。形状字母：T 位置，S 键的位置，H 头数，D = d_model，d_k = D/H，d_ff 前馈隐藏宽度。
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from .layer import PARAM_KEYS, _check_layer, _normalize
from .layer_backward import _check_grad_out, _feed_forward_grads, _layer_norm_grads
from .multihead import _check_mha, _project
from .multihead_backward import _mha_vjp

__all__ = ["encoder_layer_backward", "encoder_layer_vjp"]


def encoder_layer_backward(
    x: np.ndarray,
    params: Mapping[str, np.ndarray],
    grad_out: np.ndarray,
    num_heads: int,
    mask: np.ndarray | None = None,
    norm_first: bool = False,
    eps: float = 1e-5,
) -> dict[str, np.ndarray]:
    """``encoder_layer`` 的反向：已知 G = ∂L/∂out，求 L 对 x 和全部 16 个参数的梯度。

    参数与 ``encoder_layer`` 相同，只在 ``params`` 之后多了 ``grad_out``。前向的中间结果在这里重新算一遍
    （没有隐藏状态）；训练时想省掉这次重算，用 ``encoder_layer_vjp``。

    Parameters
    ----------
    x : ndarray of shape (..., T, D)
    params : mapping
        与 ``encoder_layer`` 相同的 16 个键。
    grad_out : ndarray of shape (..., T, D)
        损失对 ``encoder_layer(x, params, ...)[0]`` 的梯度。
    num_heads, mask, norm_first, eps
        必须与前向用的相同。

    Returns
    -------
    dict[str, ndarray]
        键 ``"x"`` 加上 ``params`` 的 16 个键，每个梯度与同名输入同形状（参数的梯度已在所有位置上求和）。

    Raises
    ------
    TypeError, ValueError
        与 ``encoder_layer`` 相同；另外 ``grad_out`` 的形状必须与 ``x`` 相同。

    Examples
    --------
    最后一步是 LN₂ (post-LN)：所有输出一起加 1（G 全是 1），LayerNorm 先减均值，这种整体平移对它没影响，
    所以 x 的梯度是 0；β₂ 加在每个位置上，它的梯度是 T = 5。

    >>> import numpy as np
    >>> from transformer_lab.core.layer import init_encoder_params
    >>> rng = np.random.default_rng(0)
    >>> params = init_encoder_params(d_model=8, d_ff=16, rng=rng)
    >>> x = rng.normal(size=(5, 8))                                  # (T=5, D=8)
    >>> grads = encoder_layer_backward(x, params, np.ones((5, 8)), num_heads=2)
    >>> len(grads), grads["x"].shape, grads["w_1"].shape
    (17, (5, 8), (8, 16))
    >>> bool(np.allclose(grads["x"], 0)), grads["ln2_beta"]
    (True, array([5., 5., 5., 5., 5., 5., 5., 5.]))
    """
    out, _, backward = encoder_layer_vjp(x, params, num_heads, mask=mask, norm_first=norm_first, eps=eps)
    return backward(_check_grad_out(grad_out, out.shape))


def encoder_layer_vjp(
    x: np.ndarray,
    params: Mapping[str, np.ndarray],
    num_heads: int,
    mask: np.ndarray | None = None,
    norm_first: bool = False,
    eps: float = 1e-5,
) -> tuple[np.ndarray, np.ndarray, Callable[[np.ndarray], dict[str, np.ndarray]]]:
    """前向算一次，同时交出"反向函数"：``out, weights, backward = encoder_layer_vjp(...)``，
    之后 ``backward(grad_out)`` 返回与 ``encoder_layer_backward`` 相同的梯度字典（前向不再重算）。

    ``out``、``weights`` 与 ``encoder_layer`` 的返回值相同。参数与报错也与 ``encoder_layer`` 相同；
    ``backward`` 会检查 ``grad_out`` 的形状。

    Examples
    --------
    >>> import numpy as np
    >>> from transformer_lab.core.layer import encoder_layer, init_encoder_params
    >>> rng = np.random.default_rng(0)
    >>> params, x = init_encoder_params(8, 16, rng), rng.normal(size=(5, 8))
    >>> out, weights, backward = encoder_layer_vjp(x, params, num_heads=2, norm_first=True)
    >>> bool(np.allclose(out, encoder_layer(x, params, 2, norm_first=True)[0])), backward(np.ones((5, 8)))["b_2"]
    (True, array([5., 5., 5., 5., 5., 5., 5., 5.]))
    """
    x, p, H, norm_first, eps = _check_layer(x, params, num_heads, norm_first, eps)
    mask = _check_mha(x, None, {}, {}, H, mask)[-1]  # 与多头注意力相同的 mask 检查
    forward = _pre_ln if norm_first else _post_ln
    out, weights, backward = forward(x, p, H, mask, eps)

    def checked_backward(grad_out: np.ndarray) -> dict[str, np.ndarray]:
        grads = backward(_check_grad_out(grad_out, out.shape))
        return {k: grads[k] for k in ("x", *PARAM_KEYS)}

    return out, weights, checked_backward


# ---------------------------------------------------------------- 三块零件：前向 + 反向（不做检查）
# 反向的公式不在这里重写：用的就是 layer_norm_backward、feed_forward_backward、multi_head_attention_backward
# 里面那几个不做检查的核心函数，这里只把前向的中间结果留给它们。


def _layer_norm(x, gamma, beta, eps):
    x_hat, inv_std = _normalize(x, eps)  # (..., D), (..., 1)
    return x_hat * gamma + beta, lambda g: _layer_norm_grads(x_hat, inv_std, gamma, g)  # (..., D)


def _ffn(x, p):
    z = x @ p["w_1"] + p["b_1"]  # (..., d_ff)

    def backward(g):
        grads = _feed_forward_grads(x, z, p["w_1"], p["w_2"], g)
        return grads.pop("x"), grads

    return _project(np.maximum(z, 0), p["w_2"], p["b_2"], "前馈网络的输出"), backward  # (..., D)


def _mha(x, p, H, mask):
    ws = tuple(p[f"w_{n}"] for n in "qkvo")
    concat, weights, mha_back = _mha_vjp(x, x, ws, tuple(p[f"b_{n}"] for n in "qkvo"), H, mask)  # (..., T, D)

    def backward(g):
        grads = mha_back(g)
        return grads.pop("x") + grads.pop("kv"), grads  # x 同时是查询、键、值的来源

    return _project(concat, p["w_o"], p["b_o"], "输出投影 @ w_o"), weights, backward  # (..., T, D)


# ---------------------------------------------------------------- 两种接法


def _post_ln(x, p, H, mask, eps):
    a, weights, mha_back = _mha(x, p, H, mask)  # (..., T, D)
    h, ln1_back = _layer_norm(x + a, p["ln1_gamma"], p["ln1_beta"], eps)  # (..., T, D)  第一个残差
    f, ffn_back = _ffn(h, p)  # (..., T, D)
    out, ln2_back = _layer_norm(h + f, p["ln2_gamma"], p["ln2_beta"], eps)  # (..., T, D)  第二个残差

    def backward(grad_out):
        grads = {}
        dv, grads["ln2_gamma"], grads["ln2_beta"] = ln2_back(grad_out)
        dh_ffn, ffn_grads = ffn_back(dv)
        du, grads["ln1_gamma"], grads["ln1_beta"] = ln1_back(dv + dh_ffn)  # 残差：直路 + 经过 FFN 的路
        dx_mha, mha_grads = mha_back(du)
        return grads | ffn_grads | mha_grads | {"x": du + dx_mha}  # 残差：直路 + 经过注意力的路

    return out, weights, backward


def _pre_ln(x, p, H, mask, eps):
    n1, ln1_back = _layer_norm(x, p["ln1_gamma"], p["ln1_beta"], eps)  # (..., T, D)
    a, weights, mha_back = _mha(n1, p, H, mask)  # (..., T, D)
    h = x + a  # (..., T, D)
    n2, ln2_back = _layer_norm(h, p["ln2_gamma"], p["ln2_beta"], eps)  # (..., T, D)
    f, ffn_back = _ffn(n2, p)  # (..., T, D)

    def backward(grad_out):
        grads = {}
        dn2, ffn_grads = ffn_back(grad_out)
        dh_ln, grads["ln2_gamma"], grads["ln2_beta"] = ln2_back(dn2)
        dh = grad_out + dh_ln  # (..., T, D)  残差：直路 + 经过 LN₂、FFN 的路
        dn1, mha_grads = mha_back(dh)
        dx_ln, grads["ln1_gamma"], grads["ln1_beta"] = ln1_back(dn1)
        return grads | ffn_grads | mha_grads | {"x": dh + dx_ln}

    return h + f, weights, backward
