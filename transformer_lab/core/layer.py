"""一层 Transformer 编码器 (encoder layer)：多头注意力 + 前馈网络，各自配残差连接和层归一化。

    后归一化 (post-LN，论文默认)：  h = LN₁(x + MHA(x)),       out = LN₂(h + FFN(h))
    前归一化 (pre-LN)：            h = x + MHA(LN₁(x)),       out = h + FFN(LN₂(h))
    LN(x)  = γ ⊙ (x - μ) / √(σ² + ε) + β         （μ、σ² 沿最后一维，σ² 是有偏方差）
    FFN(x) = max(0, x W_1 + b_1) W_2 + b_2        (Vaswani et al., 2017, 式 2)

本模块只依赖 NumPy。行向量约定 ``x @ w``；形状字母：T 位置，H 头数，D = d_model，d_ff 前馈隐藏层宽度，V 词表大小。
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .. import _validation as check
from .multihead import multi_head_attention

__all__ = ["layer_norm", "feed_forward", "embed", "encoder_layer", "init_encoder_params", "PARAM_KEYS"]

# encoder_layer 的 params 恰好要有这 16 个键（init_encoder_params 也按这个顺序生成）
PARAM_KEYS = ("w_q", "w_k", "w_v", "w_o", "b_q", "b_k", "b_v", "b_o",
              "w_1", "b_1", "w_2", "b_2", "ln1_gamma", "ln1_beta", "ln2_gamma", "ln2_beta")


def _normalize(x, eps):
    """(x - μ) / √(σ² + ε) 以及 1 / √(σ² + ε)（不做检查；反向传播也用它）。

    先把每一行除以它的最大绝对值 s（结果不变：分子分母同除以 s），平方与求和就不会溢出，
    例如 [1e300, -1e300, 0, 1] 也能算出有限的正确结果。
    """
    s = np.max(np.abs(x), axis=-1, keepdims=True)  # (..., 1)
    s = np.where(s > 0, s, 1)  # 全是 0 的行：s = 1，结果是 0
    y = x / s  # (..., D)，每个数都在 [-1, 1] 里
    centered = y - y.mean(axis=-1, keepdims=True)  # (..., D)
    var = (centered**2).mean(axis=-1, keepdims=True)  # (..., 1)，单位是 s²
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        d = np.sqrt(var + (eps / s) / s)  # (..., 1) = √(σ² + ε) / s；s 极小时溢出成 inf，极大时 ε/s² 下溢成 0
        x_hat = np.where(d > 0, centered / d, 0)  # d = 0：整行都一样 (σ = 0) 且 ε 可忽略，标准化后是 0
        ok = np.isfinite(d) & (d > 0)
        inv_std = np.where(ok, 1 / (s * d), np.asarray(eps, x.dtype) ** -0.5)  # 1 / √(σ² + ε)；d 不可用时 σ² 相对 ε 可忽略
    return x_hat, inv_std  # (..., D), (..., 1)


def _ln(x, gamma, beta, eps):
    return _normalize(x, eps)[0] * gamma + beta  # (..., D)


def _check_vector(v, name, D):
    v = check.as_real_array(v, name)
    check.check_shape(v, name, (D,), f"（长度必须等于 x 的最后一维 D={D}）")
    return v


def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """层归一化 (layer normalization)：把每个位置的向量拉成均值 0、方差 1，再乘 γ、加 β。

    LN(x) = γ ⊙ (x - μ) / √(σ² + ε) + β，μ 和 σ² 是同一行 D 个数的均值和（有偏）方差。

    Parameters
    ----------
    x : ndarray of shape (..., D)
    gamma, beta : ndarray of shape (D,)
        可学习的缩放 γ 与平移 β。
    eps : float, default 1e-5
        加在方差上的小正数，防止除以 0。

    Returns
    -------
    ndarray of shape (..., D)

    Raises
    ------
    TypeError
        输入不是实数数组，或 ``eps`` 不是实数。
    ValueError
        ``gamma``/``beta`` 的长度不是 D、数组为空或含 NaN/inf、``eps`` 不是正数。

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([1.0, 2.0, 3.0])          # μ = 2，σ² = 2/3，√(2/3) ≈ 0.8165
    >>> layer_norm(x, np.ones(3), np.zeros(3)).round(4)
    array([-1.2247,  0.    ,  1.2247])
    >>> layer_norm(x, np.full(3, 2.0), np.ones(3)).round(4)   # 再乘 γ = 2、加 β = 1
    array([-1.4495,  1.    ,  3.4495])
    """
    x = check.as_real_array(x, "x", min_ndim=1)
    gamma = _check_vector(gamma, "gamma", x.shape[-1])
    beta = _check_vector(beta, "beta", x.shape[-1])
    eps = check.positive_real(eps, "eps")
    return _ln(x, gamma, beta, eps)  # (..., D)


def _feed_forward(x, w_1, b_1, w_2, b_2):
    with np.errstate(over="ignore", invalid="ignore"):
        hidden = np.maximum(x @ w_1 + b_1, 0)  # (..., d_ff)  ReLU
        out = hidden @ w_2 + b_2  # (..., D)
    return check.finite_result(out, "前馈网络的输出 max(0, x W_1 + b_1) W_2 + b_2", check.OVERFLOW_HINT)


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
    x, w_1, b_1, w_2, b_2 = _check_ffn(x, w_1, b_1, w_2, b_2)
    return _feed_forward(x, w_1, b_1, w_2, b_2)


def _check_ffn(x, w_1, b_1, w_2, b_2):
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


def _as_token_ids(ids: object, name: str, vocab_size: int) -> np.ndarray:
    """词编号 (token ids)：整数 NumPy 数组，每个值在 [0, vocab_size) 之内。"""
    if not isinstance(ids, np.ndarray):
        raise TypeError(f"{name} 必须是整数 NumPy 数组，收到的是 {check.describe(ids)}。"
                        f"提示：np.asarray({name}, dtype=int)。")
    if ids.dtype.kind not in "iu":
        raise TypeError(f"{name} 是词的编号，dtype 必须是整数，收到的是 dtype={ids.dtype}。"
                        f"提示：{name}.astype(int)（先确认里面都是整数）。")
    if ids.size == 0:
        raise ValueError(f"{name} 不能是空数组，收到的 shape={ids.shape}。")
    bad = (ids < 0) | (ids >= vocab_size)
    if np.any(bad):
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} 越界：词表只有 V={vocab_size} 个词，编号应在 [0, {vocab_size - 1}] 之内，"
                         f"收到位置 {where} 的值 {int(ids[where])}。")
    return ids


def embed(token_ids: np.ndarray, table: np.ndarray) -> np.ndarray:
    """词嵌入 (embedding)：按编号到表里取行，``table[token_ids]``。

    Parameters
    ----------
    token_ids : ndarray of int, shape (...)
        每个值在 [0, V) 之内。
    table : ndarray of shape (V, D)
        嵌入表，第 i 行是第 i 个词的向量。

    Returns
    -------
    ndarray of shape (..., D)

    Raises
    ------
    TypeError
        ``token_ids`` 不是整数数组，或 ``table`` 不是实数数组。
    ValueError
        ``table`` 不是 2 维、编号越界、数组为空或含 NaN/inf。

    Examples
    --------
    >>> import numpy as np
    >>> table = np.array([[0.0, 0.0], [1.0, 2.0], [3.0, 4.0]])   # (V=3, D=2)
    >>> embed(np.array([2, 1, 2]), table)                         # 同一个编号取到同一行
    array([[3., 4.],
           [1., 2.],
           [3., 4.]])
    """
    table = check.as_real_array(table, "table")
    check.check_shape(table, "table", (None, None), "（嵌入表是 (V, D) 的矩阵：每个词一行）")
    token_ids = _as_token_ids(token_ids, "token_ids", table.shape[0])
    return table[token_ids]  # (..., D)


def _check_params(params: object, D: int) -> dict[str, np.ndarray]:
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
    shapes = {k: (D, D) for k in ("w_q", "w_k", "w_v", "w_o")} | {"w_1": (D, d_ff), "b_1": (d_ff,), "w_2": (d_ff, D)}
    checked = {}
    for key in PARAM_KEYS:
        value = check.as_real_array(params[key], f"params['{key}']")
        check.check_shape(value, f"params['{key}']", shapes.get(key, (D,)), f"（D={D}，d_ff={d_ff}）")
        checked[key] = value
    return checked


def _check_layer(x, params, num_heads, norm_first, eps):
    """encoder_layer 与 encoder_layer_backward 共用的检查（mask 由多头注意力检查）。"""
    x = check.as_real_array(x, "x", min_ndim=2)
    num_heads = check.positive_int(num_heads, "num_heads")
    if x.shape[-1] % num_heads:
        raise ValueError(f"x 的最后一维 d_model={x.shape[-1]} 必须能被 num_heads={num_heads} 整除（例如 512 = 8 × 64）。")
    p = _check_params(params, x.shape[-1])
    return x, p, num_heads, check.boolean(norm_first, "norm_first"), check.positive_real(eps, "eps")


def encoder_layer(
    x: np.ndarray,
    params: Mapping[str, np.ndarray],
    num_heads: int,
    mask: np.ndarray | None = None,
    norm_first: bool = False,
    eps: float = 1e-5,
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

    Returns
    -------
    out : ndarray of shape (..., T, D)
    weights : ndarray of shape (..., H, T, T)
        每个头的注意力权重。

    Raises
    ------
    TypeError
        ``params`` 不是字典、数组不是实数、``num_heads`` 不是整数、``norm_first`` 不是 bool。
    ValueError
        ``params`` 缺键或多键（列出名字）、某个参数形状不对（写出期望与收到）、D 不能被 num_heads 整除、
        ``eps`` 不是正数、mask 不合法。

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
    x, p, num_heads, norm_first, eps = _check_layer(x, params, num_heads, norm_first, eps)
    g1, b1, g2, b2 = p["ln1_gamma"], p["ln1_beta"], p["ln2_gamma"], p["ln2_beta"]
    attn_in = _ln(x, g1, b1, eps) if norm_first else x  # (..., T, D)
    a, weights = multi_head_attention(attn_in, p["w_q"], p["w_k"], p["w_v"], p["w_o"], num_heads, mask=mask,
                                      b_q=p["b_q"], b_k=p["b_k"], b_v=p["b_v"], b_o=p["b_o"])  # (..., T, D)
    ffn = (p["w_1"], p["b_1"], p["w_2"], p["b_2"])
    if norm_first:
        h = x + a  # (..., T, D)
        return h + _feed_forward(_ln(h, g2, b2, eps), *ffn), weights  # (..., T, D), (..., H, T, T)
    h = _ln(x + a, g1, b1, eps)  # (..., T, D)
    return _ln(h + _feed_forward(h, *ffn), g2, b2, eps), weights  # (..., T, D), (..., H, T, T)


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
        维数不是正数、``scale`` 不是正数。

    Examples
    --------
    >>> import numpy as np
    >>> p = init_encoder_params(4, 16, np.random.default_rng(0))
    >>> p["w_1"].shape, p["w_2"].shape, p["ln1_gamma"]
    ((4, 16), (16, 4), array([1., 1., 1., 1.]))
    """
    D = check.positive_int(d_model, "d_model")
    d_ff = check.positive_int(d_ff, "d_ff")
    rng = check.generator(rng)
    scale = None if scale is None else check.positive_real(scale, "scale")
    shapes = {k: (D, D) for k in ("w_q", "w_k", "w_v", "w_o")} | {"w_1": (D, d_ff), "w_2": (d_ff, D)}
    params = {}
    for key in PARAM_KEYS:
        if key in shapes:
            std = scale if scale is not None else 1.0 / np.sqrt(shapes[key][0])
            params[key] = rng.normal(0.0, std, size=shapes[key])  # (D, D) / (D, d_ff) / (d_ff, D)
        else:
            size = d_ff if key == "b_1" else D
            params[key] = np.ones(size) if key.endswith("gamma") else np.zeros(size)  # (d_ff,) 或 (D,)
    return params
