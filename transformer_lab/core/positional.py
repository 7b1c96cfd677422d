"""位置编码 (positional encoding)：给每个位置发一个"座位号"向量；以及旋转位置编码 (RoPE)。

    ω_i         = 1 / base^(2i / d_model)           第 i 对的角速度，i = 0, 1, ..., d_model/2 - 1
    PE[p, 2i]   = sin(p · ω_i)
    PE[p, 2i+1] = cos(p · ω_i)                      (Vaswani et al., 2017, 3.5 节)

    RoPE：把向量第 (2i, 2i+1) 两个数看成平面上的一点，在位置 m 处逆时针转 m · ω_i（Su et al., 2021）。

本模块只依赖 NumPy。
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import _validation as check

__all__ = ["sinusoidal_positional_encoding", "positional_frequencies", "rope", "MAX_POSITIONS", "MAX_ELEMENTS"]

MAX_POSITIONS = 1_000_000  # 位置个数的上限：再长的序列，角度 p·ω 仍远在 float64 能精确表示的范围内
MAX_ELEMENTS = 2**25  # 一张编码表最多 33554432 个数（float64 约 256 MB），免得一个笔误吃光内存


def _check_base(base: object) -> float:
    """``base`` 必须是有限实数且 > 1（= 1 时所有维度转得一样快，< 1 时维度越靠后转得越快，都失去了意义）。"""
    if isinstance(base, numbers.Integral) and not isinstance(base, (bool, np.bool_)) and abs(base) > 1e300:
        raise ValueError(f"base 必须是有限的正实数，且不超过 1e300，收到的整数有 {len(str(abs(base)))} 位。")
    base = check.positive_real(base, "base")
    if base <= 1:
        raise ValueError(
            f"base 必须大于 1，收到的是 base={base}。base = 1 时每一对维度转得一样快（所有维度都相同），"
            "base < 1 时越靠后的维度转得越快、波长短到相邻位置都分不清。论文用的是 10000。"
        )
    return base


def _check_even_dim(d: int, name: str) -> None:
    if d % 2:
        raise ValueError(f"{name} 必须是偶数（sin 和 cos 各占一半的维度），收到的是 {name}={d}。")


def positional_frequencies(d_model: int, base: float = 10000.0) -> np.ndarray:
    """每一对维度 (2i, 2i+1) 的角速度 ω_i = 1 / base^(2i / d_model)：位置每往后一格，这对的"指针"转 ω_i 弧度。

    Parameters
    ----------
    d_model : int
        编码向量的长度，必须是正偶数。
    base : float, default 10000.0
        波长的底数，必须是有限实数且大于 1。

    Returns
    -------
    ndarray of shape (d_model // 2,), float64
        从 1 递减到 base^(-(d_model-2)/d_model)；波长 2π/ω_i 从 2π 增长到接近 base·2π。

    Raises
    ------
    TypeError
        ``d_model`` 不是整数，或 ``base`` 不是实数。
    ValueError
        ``d_model`` 不是正偶数或超过 ``MAX_ELEMENTS``，或 ``base`` 不是大于 1 的有限实数。

    Examples
    --------
    >>> positional_frequencies(4)                # 1/10000^(0/4), 1/10000^(2/4)
    array([1.  , 0.01])
    """
    d_model = check.positive_int(d_model, "d_model")
    _check_even_dim(d_model, "d_model")
    if d_model > MAX_ELEMENTS:
        raise ValueError(f"d_model 不能超过 {MAX_ELEMENTS}，收到的是 d_model={d_model}。")
    base = _check_base(base)
    two_i = np.arange(0, d_model, 2)  # (D/2,)
    return 1.0 / base ** (two_i / d_model)  # (D/2,)


def sinusoidal_positional_encoding(num_positions: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """《Attention Is All You Need》里的正弦/余弦位置编码。

    偶数维用 sin，奇数维用 cos；维度越靠后，波长越长（从 2π 到 base·2π）。

    Parameters
    ----------
    num_positions : int
        位置个数（位置 p = 0, 1, ..., num_positions-1），不超过 ``MAX_POSITIONS``。
    d_model : int
        编码向量的长度，必须是正偶数（sin 和 cos 成对出现）。
        ``num_positions * d_model`` 不超过 ``MAX_ELEMENTS``。
    base : float, default 10000.0
        波长的底数，必须是有限实数且大于 1。

    Returns
    -------
    ndarray of shape (num_positions, d_model), float64

    Raises
    ------
    TypeError
        ``num_positions`` 或 ``d_model`` 不是整数，``base`` 不是实数。
    ValueError
        尺寸不是正数或超过上限、``d_model`` 为奇数，或 ``base`` 不是大于 1 的有限实数。

    Examples
    --------
    >>> pe = sinusoidal_positional_encoding(3, 4)
    >>> pe[0]                                  # 位置 0：sin 0 = 0，cos 0 = 1
    array([0., 1., 0., 1.])
    >>> pe[1].round(5)                         # 位置 1：sin 1, cos 1, sin 0.01, cos 0.01
    array([0.84147, 0.5403 , 0.01   , 0.99995])
    """
    num_positions = check.positive_int(num_positions, "num_positions")
    if num_positions > MAX_POSITIONS:
        raise ValueError(f"num_positions 不能超过 {MAX_POSITIONS}，收到的是 num_positions={num_positions}。")
    omega = positional_frequencies(d_model, base)  # (D/2,)  也检查 d_model 和 base
    if num_positions * d_model > MAX_ELEMENTS:
        raise ValueError(
            f"num_positions × d_model 不能超过 {MAX_ELEMENTS}（约 256 MB），"
            f"收到的是 {num_positions} × {d_model} = {num_positions * d_model}。"
        )
    p = np.arange(num_positions, dtype=np.float64)[:, None]  # (P, 1)
    angles = p * omega  # (P, D/2)   第 p 行第 i 列 = p / base^(2i/d_model)
    pairs = np.empty((num_positions, d_model // 2, 2))  # (P, D/2, 2)   第 i 对 = 第 2i 和 2i+1 维
    np.sin(angles, out=pairs[..., 0])  # 2i 维放 sin；直接写进新数组，省一次复制
    np.cos(angles, out=pairs[..., 1])  # 2i+1 维放 cos
    return pairs.reshape(num_positions, d_model)  # (P, D)   交错排列：sin, cos, sin, cos, ...


def rope(x: np.ndarray, base: float = 10000.0) -> np.ndarray:
    """旋转位置编码 (rotary position embedding, RoPE)：第 m 行的每一对 (x_2i, x_2i+1) 逆时针转 m · ω_i。

        x'_2i   = x_2i · cos(m ω_i) - x_2i+1 · sin(m ω_i)
        x'_2i+1 = x_2i · sin(m ω_i) + x_2i+1 · cos(m ω_i)

    配对 (2i, 2i+1) 和角速度 ω_i 与 ``sinusoidal_positional_encoding`` 相同。位置 m 就是倒数第二维的下标
    m = 0, 1, ..., T-1。把它用在查询和键上，分数 rope(q)[m] · rope(k)[n] 只取决于 m - n。

    Parameters
    ----------
    x : ndarray of shape (..., T, d)
        实数数组，d 必须是偶数；T 不超过 ``MAX_POSITIONS``。float32 输入得到 float32 输出。
    base : float, default 10000.0
        必须是有限实数且大于 1。

    Returns
    -------
    ndarray of shape (..., T, d)
        新数组（不改动 ``x``）；每一对的长度保持不变。

    Raises
    ------
    TypeError
        ``x`` 不是实数数组，或 ``base`` 不是实数。
    ValueError
        ``x`` 少于 2 维、含 NaN/inf、d 为奇数、T 超过上限、元素大到转完会溢出，或 ``base`` 不大于 1。

    Examples
    --------
    >>> x = np.array([[1.0, 0.0], [1.0, 0.0]])    # 两个位置，同一个向量 (1, 0)
    >>> rope(x, base=10000.0).round(4)            # 位置 0 不转；位置 1 转 1 弧度：(cos 1, sin 1)
    array([[1.    , 0.    ],
           [0.5403, 0.8415]])
    """
    x = check.as_real_array(x, "x", min_ndim=2)
    T, d = x.shape[-2:]
    _check_even_dim(d, "x 的最后一维 d")
    if T > MAX_POSITIONS:
        raise ValueError(f"x 的倒数第二维（位置个数 T）不能超过 {MAX_POSITIONS}，收到的 shape={x.shape}。")
    limit = np.finfo(x.dtype).max / 2
    if np.max(np.abs(x)) > limit:
        raise ValueError(f"x 的元素太大：绝对值须不超过 {limit:.3g}（{x.dtype} 最大值的一半），否则旋转后会溢出成 inf。")
    angles = np.arange(T, dtype=np.float64)[:, None] * positional_frequencies(d, base)  # (T, d/2)
    cos, sin = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)  # (T, d/2)
    even, odd = x[..., 0::2], x[..., 1::2]  # (..., T, d/2)
    out = np.empty_like(x)  # (..., T, d)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out  # (..., T, d)
