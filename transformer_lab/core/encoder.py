"""一层 Transformer 编码器 (encoder layer)：多头注意力 + 前馈网络，各自配残差连接和层归一化。

    后归一化 (post-LN，论文默认)：  h = LN₁(x + MHA(x)),       out = LN₂(h + FFN(h))
    前归一化 (pre-LN)：            h = x + MHA(LN₁(x)),       out = h + FFN(LN₂(h))

反向就是把每一步倒着走一遍；残差 ``y = x + F(x)`` 的反向是 ``dx = dy + F'(dy)``：梯度有一条不经过 F 的直路::

    post-LN 反向：dv = LN₂'(dout),  dh = dv + FFN'(dv),  du = LN₁'(dh),  dx = du + MHA'(du)
    pre-LN  反向：dh = dout + LN₂'(FFN'(dout)),         dx = dh + LN₁'(MHA'(dh))

**这一层只写一次**：``encoder_layer_unchecked`` 用三块零件的 VJP（``multi_head_attention_vjp_unchecked``、
``layer_norm_vjp_unchecked``、``feed_forward_vjp_unchecked``）接成一层，记下每一步的中间结果和反向函数。
``encoder_layer``（前向）、``encoder_layer_vjp``（训练用：前向只算一次）、``encoder_layer_backward``（反向）和
``encoder_layer_steps``（第 8 章逐步讲解用的中间结果）都从它得到；逐词生成的一步（``core/decoder.py``）也是它，
只把注意力换成"新词看 KV 缓存"（参数 ``attention``）。``residual=False`` 去掉两处 "x +"，
只为对照实验（第 8 章看没有残差时丢了什么）。

本模块只依赖 NumPy。行向量约定 ``x @ w``；形状字母：T 位置，H 头数，D = d_model，d_ff 前馈隐藏层宽度。
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from .. import _validation as check
from .feed_forward import ACTIVATIONS, feed_forward_vjp_unchecked
from .guard import guarded_backward
from .layer_norm import layer_norm_forward_unchecked, layer_norm_vjp_unchecked
from .multihead import check_mha, multi_head_attention_vjp_unchecked

__all__ = ["PARAM_KEYS", "init_encoder_params", "encoder_layer", "encoder_layer_vjp", "encoder_layer_backward",
           "encoder_layer_steps", "encoder_layer_unchecked", "check_layer_params"]

# 一层的 params 恰好要有这 16 个键（init_encoder_params 也按这个顺序生成）
PARAM_KEYS = ("w_q", "w_k", "w_v", "w_o", "b_q", "b_k", "b_v", "b_o",
              "w_1", "b_1", "w_2", "b_2", "ln1_gamma", "ln1_beta", "ln2_gamma", "ln2_beta")


def _shapes(D: int, d_ff: int) -> dict[str, tuple[int, ...]]:
    """16 个参数的形状：权重矩阵、偏置和 LayerNorm 的 γ、β。"""
    matrices = {k: (D, D) for k in ("w_q", "w_k", "w_v", "w_o")} | {"w_1": (D, d_ff), "w_2": (d_ff, D)}
    return {k: matrices.get(k, (d_ff,) if k == "b_1" else (D,)) for k in PARAM_KEYS}


def init_encoder_params(d_model: int, d_ff: int, rng: np.random.Generator, scale: float | None = None) -> dict:
    """随机初始化一层编码器的 16 个参数。

    权重矩阵的每个元素服从 N(0, s²)：默认 s = 1/√(输入维数)（W_Q、W_K、W_V、W_O、W_1 用 1/√D，W_2 用 1/√d_ff），
    让输入分量方差为 1 时输出分量方差也约为 1；传 ``scale`` 则所有权重矩阵都用 s = scale。
    偏置全 0，LayerNorm 的 γ 全 1、β 全 0（一开始 LayerNorm 只做"标准化"）。

    Parameters
    ----------
    d_model : int
        D。
    d_ff : int
        前馈网络的隐藏宽度（论文里 d_ff = 4 D = 2048）。
    rng : np.random.Generator
    scale : float, optional
        权重的标准差；默认按输入维数自动选。

    Returns
    -------
    dict[str, ndarray]
        键与形状见 ``encoder_layer``，全部 float64，按 ``PARAM_KEYS`` 的顺序。

    Raises
    ------
    TypeError
        维数不是整数、``rng`` 不是 Generator、``scale`` 不是实数。
    ValueError
        维数不是正数、``scale`` 不是正数或大到超出 float64；权重超过 2 GiB 内存。

    Examples
    --------
    >>> import numpy as np
    >>> p = init_encoder_params(4, 16, np.random.default_rng(0))
    >>> p["w_1"].shape, p["w_2"].shape, p["ln1_gamma"]
    ((4, 16), (16, 4), array([1., 1., 1., 1.]))
    """
    D = check.positive_int(d_model, "d_model")
    d_ff = check.positive_int(d_ff, "d_ff")
    check.memory_budget(4 * D * D + 2 * D * d_ff, 8, f"一层编码器的权重（d_model={D}, d_ff={d_ff}）")
    rng = check.generator(rng)
    scale = None if scale is None else check.positive_real(scale, "scale")
    params = {}
    for key, shape in _shapes(D, d_ff).items():
        if len(shape) == 2:  # 权重矩阵 (D, D) / (D, d_ff) / (d_ff, D)：方差按输入维数 shape[0] 定
            with np.errstate(over="ignore", invalid="ignore"):
                w = rng.normal(0.0, scale if scale is not None else 1.0 / np.sqrt(shape[0]), size=shape)
            params[key] = check.finite_result(w, f"随机权重 {key}（scale={scale}）", check.SCALE_HINT)
        else:  # 偏置 0；LayerNorm 的 γ 是 1、β 是 0
            params[key] = np.ones(shape) if key.endswith("gamma") else np.zeros(shape)  # (d_ff,) 或 (D,)
    return params


def check_layer_params(params: object, D: int) -> dict[str, np.ndarray]:
    """检查一层的 16 个参数（键恰好是 ``PARAM_KEYS``，形状与 D = ``D`` 相符），返回转成浮点数组的字典。"""
    if not isinstance(params, Mapping):
        raise TypeError(f"params 必须是字典 (dict)，收到的是 {check.describe(params)}。"
                        "提示：用 init_encoder_params(d_model, d_ff, rng) 生成一份。")
    missing = [k for k in PARAM_KEYS if k not in params]
    extra = sorted(str(k) for k in params if k not in PARAM_KEYS)
    if missing or extra:
        found = ([f"缺少 {', '.join(missing)}"] if missing else []) + ([f"多出 {', '.join(extra)}"] if extra else [])
        raise ValueError(f"params 的键不对：{'；'.join(found)}。应恰好是这 16 个键：{', '.join(PARAM_KEYS)}。")
    w_1 = check.as_real_array(params["w_1"], "params['w_1']")
    check.check_shape(w_1, "params['w_1']", (D, None), f"（D={D} 由 x 的最后一维决定）")
    d_ff = w_1.shape[1]
    checked = {}
    for key, shape in _shapes(D, d_ff).items():
        value = check.as_real_array(params[key], f"params['{key}']")
        check.check_shape(value, f"params['{key}']", shape, f"（D={D}，d_ff={d_ff}）")
        checked[key] = value
    return checked


def _check_layer(x, params, num_heads, mask, norm_first, eps, residual, activation):
    """一层编码器的全部检查，四个公开函数共用（mask 的规则与多头注意力相同）。"""
    x = check.as_real_array(x, "x", min_ndim=2)
    num_heads = check.positive_int(num_heads, "num_heads")
    check.heads_divide(x.shape[-1], num_heads)
    p = check_layer_params(params, x.shape[-1])
    mask = check_mha(x, None, {}, {}, num_heads, mask)[-1]
    flags = check.boolean(norm_first, "norm_first"), check.positive_real(eps, "eps"), check.boolean(residual, "residual")
    return (x, p, num_heads, mask, *flags, check.one_of(activation, "activation", ACTIVATIONS))


# ---------------------------------------------------------------- 这一层，只写一次


def _residual(keep, x, fx, what):
    """残差连接 x + F(x)（keep = 1 有直路；keep = 0 去掉直路，只剩 F(x)）：两个有限数相加也可能溢出，那时报错而不是交出 inf。"""
    with np.errstate(over="ignore", invalid="ignore"):
        out = x + fx if keep else 0.0 * x + fx  # (..., T, D)  keep = 1 时 1·x 就是 x，省一次乘法
    return out if np.isfinite(out).all() else check.finite_result(out, what, check.OVERFLOW_HINT)


def encoder_layer_unchecked(x, p, H, mask, norm_first, eps, residual, activation="relu",
                            attention=multi_head_attention_vjp_unchecked, with_backward=True):
    """一层的前向（输入已检查过）：返回 (中间结果字典, 反向函数)。反向函数返回 x 和 16 个参数的梯度。

    ``attention(x, kv, ws, bs, H, mask) -> (out, weights, backward)`` 是这一层里的多头注意力，默认就是
    ``multi_head_attention_vjp_unchecked``；``core/decoder.py`` 换成看 KV 缓存的版本，得到逐词生成的一步。
    ``activation`` 是前馈网络的激活函数（``"relu"`` 或 BERT 的 ``"gelu"``）。
    ``with_backward=False`` 只做前向（逐词生成用）：同样的每一步，只是不接出这一层的反向函数，返回 (中间结果, None)；
    LayerNorm 用只做前向的 ``layer_norm_forward_unchecked``（普通大小的输入少算一半步骤，舍入可能差 1e-15 量级）。
    """
    ws, bs = (p["w_q"], p["w_k"], p["w_v"], p["w_o"]), (p["b_q"], p["b_k"], p["b_v"], p["b_o"])
    ffn = (p["w_1"], p["b_1"], p["w_2"], p["b_2"])
    keep = 1.0 if residual else 0.0  # 残差那条直路：1 = 有，0 = 去掉（对照实验）
    norm = layer_norm_vjp_unchecked if with_backward else layer_norm_forward_unchecked  # 只做前向时不留反向要用的东西
    if norm_first:  # pre-LN：h = x + MHA(LN₁(x))，out = h + FFN(LN₂(h))
        n1, ln1_back = norm(x, p["ln1_gamma"], p["ln1_beta"], eps)  # (..., T, D)
        a, weights, mha_back = attention(n1, n1, ws, bs, H, mask)  # (..., T, D)
        h = _residual(keep, x, a, "第一个残差 x + MHA(LN₁(x))")  # (..., T, D)
        n2, ln2_back = norm(h, p["ln2_gamma"], p["ln2_beta"], eps)  # (..., T, D)
        f, ffn_back = feed_forward_vjp_unchecked(n2, *ffn, activation)  # (..., T, D)
        out = _residual(keep, h, f, "第二个残差 h + FFN(LN₂(h))")  # (..., T, D)
        steps = {"x": x, "n1": n1, "a": a, "h": h, "n2": n2, "f": f, "out": out, "weights": weights}
        if not with_backward:
            return steps, None

        def backward(grad_out):
            grads = ffn_back(grad_out)
            dh_ln, grads["ln2_gamma"], grads["ln2_beta"] = ln2_back(grads.pop("x"))
            dh = keep * grad_out + dh_ln  # (..., T, D)  残差：直路 + 经过 LN₂、FFN 的路
            mha = mha_back(dh)
            dx_ln, grads["ln1_gamma"], grads["ln1_beta"] = ln1_back(mha.pop("x") + mha.pop("kv"))
            return grads | mha | {"x": keep * dh + dx_ln}

        return steps, backward
    # post-LN（论文）：h = LN₁(x + MHA(x))，out = LN₂(h + FFN(h))
    a, weights, mha_back = attention(x, x, ws, bs, H, mask)  # (..., T, D)
    u = _residual(keep, x, a, "第一个残差 x + MHA(x)")  # (..., T, D)
    h, ln1_back = norm(u, p["ln1_gamma"], p["ln1_beta"], eps)  # (..., T, D)
    f, ffn_back = feed_forward_vjp_unchecked(h, *ffn, activation)  # (..., T, D)
    v = _residual(keep, h, f, "第二个残差 h + FFN(h)")  # (..., T, D)
    out, ln2_back = norm(v, p["ln2_gamma"], p["ln2_beta"], eps)  # (..., T, D)
    steps = {"x": x, "a": a, "u": u, "h": h, "f": f, "v": v, "out": out, "weights": weights}
    if not with_backward:
        return steps, None

    def backward(grad_out):
        grads = {}
        dv, grads["ln2_gamma"], grads["ln2_beta"] = ln2_back(grad_out)
        grads |= ffn_back(dv)
        du, grads["ln1_gamma"], grads["ln1_beta"] = ln1_back(keep * dv + grads.pop("x"))  # 直路 + 经过 FFN 的路
        mha = mha_back(du)
        return grads | mha | {"x": keep * du + mha.pop("x") + mha.pop("kv")}  # 直路 + 经过注意力的路（查询、键、值）

    return steps, backward


# ---------------------------------------------------------------- 由它得到的四个公开函数


def encoder_layer(
    x: np.ndarray,
    params: Mapping[str, np.ndarray],
    num_heads: int,
    mask: np.ndarray | None = None,
    norm_first: bool = False,
    eps: float = 1e-5,
    residual: bool = True,
    activation: str = "relu",
) -> tuple[np.ndarray, np.ndarray]:
    """一整层编码器：多头自注意力 → 残差 + LayerNorm → 前馈网络 → 残差 + LayerNorm。

    ``norm_first=False``（论文的后归一化 post-LN）：h = LN₁(x + MHA(x))，out = LN₂(h + FFN(h))。
    ``norm_first=True``（前归一化 pre-LN，GPT-2 以后常用）：h = x + MHA(LN₁(x))，out = h + FFN(LN₂(h))。
    传 ``mask=causal_mask(T)`` 就是解码器 (decoder) 式的用法：每个位置只看自己和前面。

    Parameters
    ----------
    x : ndarray of shape (..., T, D)
    params : mapping
        恰好 16 个键：``w_q, w_k, w_v, w_o`` (D, D)，``b_q, b_k, b_v, b_o`` (D,)，``w_1`` (D, d_ff)，
        ``b_1`` (d_ff,)，``w_2`` (d_ff, D)，``b_2`` (D,)，``ln1_gamma, ln1_beta, ln2_gamma, ln2_beta`` (D,)。
        ``init_encoder_params`` 能生成一份。
    num_heads : int
        头数 H，必须整除 D。
    mask : ndarray of bool, broadcastable to (..., H, T, T), optional
        True = 允许关注。
    norm_first : bool, default False
    eps : float, default 1e-5
    residual : bool, default True
        False 时去掉两处残差的 "x +"（只为对照实验；真实模型总有残差）。
    activation : {"relu", "gelu"}, default "relu"
        前馈网络的激活函数：论文的 ReLU，或 BERT 一族用的 GELU（见 ``feed_forward``）。

    Returns
    -------
    out : ndarray of shape (..., T, D)
    weights : ndarray of shape (..., H, T, T)
        每个头的注意力权重。

    Raises
    ------
    TypeError
        ``params`` 不是字典、数组不是实数、``num_heads`` 不是整数、``norm_first`` 或 ``residual`` 不是 bool。
    ValueError
        ``params`` 缺键或多键（列出名字）、某个参数形状不对（写出期望与收到）、D 不能被 num_heads 整除、
        ``eps`` 不是正数、mask 不合法、``activation`` 不是 "relu"/"gelu"；输入有限但残差的和、投影或
        LayerNorm 的 γ ⊙ x̂ + β 超出浮点数范围（溢出）。

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> params = init_encoder_params(d_model=8, d_ff=32, rng=rng)
    >>> x = rng.normal(size=(5, 8))                                 # (T=5, D=8)
    >>> out, weights = encoder_layer(x, params, num_heads=2)
    >>> out.shape, weights.shape
    ((5, 8), (2, 5, 5))
    >>> np.allclose(out.mean(axis=-1), 0)                           # post-LN：最后一步是 LayerNorm (γ=1, β=0)
    True
    """
    steps, _ = encoder_layer_unchecked(*_check_layer(x, params, num_heads, mask, norm_first, eps, residual, activation))
    return steps["out"], steps["weights"]  # (..., T, D), (..., H, T, T)


def encoder_layer_vjp(
    x: np.ndarray,
    params: Mapping[str, np.ndarray],
    num_heads: int,
    mask: np.ndarray | None = None,
    norm_first: bool = False,
    eps: float = 1e-5,
    residual: bool = True,
    activation: str = "relu",
) -> tuple[np.ndarray, np.ndarray, Callable[[np.ndarray], dict[str, np.ndarray]]]:
    """前向算一次，同时交出"反向函数"：``out, weights, backward = encoder_layer_vjp(...)``，
    之后 ``backward(grad_out)`` 返回与 ``encoder_layer_backward`` 相同的梯度字典（前向不再重算）。

    ``out``、``weights`` 与 ``encoder_layer`` 的返回值相同。参数与报错也与 ``encoder_layer`` 相同；
    ``backward`` 会检查 ``grad_out`` 的形状。

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> params, x = init_encoder_params(8, 16, rng), rng.normal(size=(5, 8))
    >>> out, weights, backward = encoder_layer_vjp(x, params, num_heads=2, norm_first=True)
    >>> bool(np.allclose(out, encoder_layer(x, params, 2, norm_first=True)[0])), backward(np.ones((5, 8)))["b_2"]
    (True, array([5., 5., 5., 5., 5., 5., 5., 5.]))
    """
    steps, backward = encoder_layer_unchecked(*_check_layer(x, params, num_heads, mask, norm_first, eps, residual, activation))
    out = steps["out"]

    def checked_backward(grad_out: np.ndarray) -> dict[str, np.ndarray]:
        grads = guarded_backward(backward, check.grad_like(grad_out, out.shape), "encoder_layer 的反向 (backward)")
        return {k: grads[k] for k in ("x", *PARAM_KEYS)}

    return out, steps["weights"], checked_backward


def encoder_layer_backward(
    x: np.ndarray,
    params: Mapping[str, np.ndarray],
    grad_out: np.ndarray,
    num_heads: int,
    mask: np.ndarray | None = None,
    norm_first: bool = False,
    eps: float = 1e-5,
    residual: bool = True,
    activation: str = "relu",
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
    num_heads, mask, norm_first, eps, residual, activation
        必须与前向用的相同。

    Returns
    -------
    dict[str, ndarray]
        键 ``"x"`` 加上 ``params`` 的 16 个键，每个梯度与同名输入同形状（参数的梯度已在所有位置上求和）。

    Raises
    ------
    TypeError, ValueError
        与 ``encoder_layer`` 相同；另外 ``grad_out`` 的形状必须与 ``x`` 相同；
        输入有限、但真正的梯度超出浮点数的范围（溢出）时，报出写明函数名与梯度名的错误（见 ``core/guard.py``）。

    Examples
    --------
    最后一步是 LN₂ (post-LN)：所有输出一起加 1（G 全是 1），LayerNorm 先减均值，这种整体平移对它没影响，
    所以 x 的梯度是 0；β₂ 加在每个位置上，它的梯度是 T = 5。

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> params = init_encoder_params(d_model=8, d_ff=16, rng=rng)
    >>> x = rng.normal(size=(5, 8))                                  # (T=5, D=8)
    >>> grads = encoder_layer_backward(x, params, np.ones((5, 8)), num_heads=2)
    >>> len(grads), grads["x"].shape, grads["w_1"].shape
    (17, (5, 8), (8, 16))
    >>> bool(np.allclose(grads["x"], 0)), grads["ln2_beta"]
    (True, array([5., 5., 5., 5., 5., 5., 5., 5.]))
    """
    out, _, backward = encoder_layer_vjp(x, params, num_heads, mask=mask, norm_first=norm_first, eps=eps,
                                         residual=residual, activation=activation)
    return backward(grad_out)


def encoder_layer_steps(
    x: np.ndarray,
    params: Mapping[str, np.ndarray],
    num_heads: int,
    mask: np.ndarray | None = None,
    norm_first: bool = False,
    eps: float = 1e-5,
    residual: bool = True,
    activation: str = "relu",
) -> dict[str, np.ndarray]:
    """一层里每一步的中间结果（和 ``encoder_layer`` 同一次计算，第 8 章逐步讲解用）。

    参数与 ``encoder_layer`` 相同。

    Returns
    -------
    dict[str, ndarray]
        post-LN：``x``、``a`` = MHA(x)、``u`` = x + a、``h`` = LN₁(u)、``f`` = FFN(h)、``v`` = h + f、
        ``out`` = LN₂(v)，以及 ``weights`` (..., H, T, T)；``residual=False`` 时 u = a、v = f。
        pre-LN：``x``、``n1`` = LN₁(x)、``a`` = MHA(n1)、``h`` = x + a、``n2`` = LN₂(h)、``f`` = FFN(n2)、
        ``out`` = h + f、``weights``。

    Raises
    ------
    TypeError, ValueError
        与 ``encoder_layer`` 相同。

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> params, x = init_encoder_params(8, 16, rng), rng.normal(size=(5, 8))
    >>> st = encoder_layer_steps(x, params, num_heads=2)
    >>> [k for k in st], bool(np.allclose(st["u"], x + st["a"]))
    (['x', 'a', 'u', 'h', 'f', 'v', 'out', 'weights'], True)
    >>> bool(np.allclose(st["out"], encoder_layer(x, params, 2)[0]))
    True
    """
    return encoder_layer_unchecked(*_check_layer(x, params, num_heads, mask, norm_first, eps, residual, activation))[0]
