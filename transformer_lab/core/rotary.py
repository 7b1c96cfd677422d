"""RoPE 在真模型里的两种写法：相邻的一对 (2i, 2i+1)，或前后两半的一对 (i, i + d/2)；以及从任意位置开始转。

第 6 章的 ``positional.rope`` 把第 (2i, 2i+1) 两维当作平面上的一点，在位置 m 转 m · ω_i，ω_i = base^(−2i/d)。
训练 Llama、SmolLM2 的代码（Hugging Face 的 ``rotate_half``）配对的却是第 i 维和第 i + d/2 维::

    相邻配对（第 6 章，llama.cpp）：  (x_2i, x_2i+1)        转 m · ω_i
    前后两半（Hugging Face）：        (x_i,  x_{i + d/2})    转 m · ω_i

这只是把每个头的 d 维换了个次序：llama.cpp 的转换脚本把 W_q、W_k 每个头的行重排（``permute_pairs``：
新的第 2i 行 = 旧的第 i 行，第 2i+1 行 = 旧的第 i + d/2 行），于是 GGUF 里的权重用相邻配对转，和原模型用前后两半
转，算出的注意力分数一模一样（测试核对）。所以 SmolLM2 直接用第 6 章的配对，只是 base = 100000、要从缓存里的
位置接着转：``rotary(x, start)`` 的第 t 行在位置 start + t。``rotary(x, 0, base)`` 就是 ``positional.rope(x, base)``。

本模块只依赖 NumPy。形状字母：T 位置数，d 每个头的维数（偶数），H 头数。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from .positional import MAX_POSITIONS, positional_frequencies

__all__ = ["rotary", "rotary_unchecked", "rotary_halves", "permute_pairs", "unpermute_pairs"]


def _angles(T: int, start: int, d: int, base: float, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """位置 start, ..., start + T − 1 上每一对的 cos、sin：角度在 float64 里算，再转成 ``dtype``。"""
    m = np.arange(start, start + T, dtype=np.float64)[:, None]  # (T, 1)
    angles = m * positional_frequencies(d, base)  # (T, d/2)
    return np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)  # (T, d/2) 各一份


def rotary_unchecked(x: np.ndarray, start: int, base: float) -> np.ndarray:
    """``rotary`` 的计算本身（输入已检查过）：相邻的一对 (2i, 2i+1) 在位置 start + t 转 (start + t) · ω_i。"""
    cos, sin = _angles(x.shape[-2], start, x.shape[-1], base, x.dtype)  # (T, d/2)
    even, odd = x[..., 0::2], x[..., 1::2]  # (..., T, d/2)
    out = np.empty_like(x)  # (..., T, d)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out  # (..., T, d)


def _checked(x: object, start: object, base: object) -> tuple[np.ndarray, int, float]:
    x = check.as_real_array(x, "x", min_ndim=2)
    if x.shape[-1] % 2:
        raise ValueError(f"x 的最后一维 d 必须是偶数（两维一对地转），收到的 shape={x.shape}。")
    start = check.nonnegative_int(start, "start")
    if start + x.shape[-2] > MAX_POSITIONS:
        raise ValueError(f"start + T 不能超过 {MAX_POSITIONS}，收到 start={start}、T={x.shape[-2]}。")
    positional_frequencies(x.shape[-1], base)  # 检查 base（> 1 的有限实数）
    limit = np.finfo(x.dtype).max / 2
    if np.max(np.abs(x)) > limit:
        raise ValueError(f"x 的元素太大：绝对值须不超过 {limit:.3g}（{x.dtype} 最大值的一半），否则旋转后会溢出成 inf。")
    return x, start, float(base)


def rotary(x: np.ndarray, start: int = 0, base: float = 10000.0) -> np.ndarray:
    """相邻配对的 RoPE，从位置 ``start`` 开始：第 t 行的每一对 (x_2i, x_2i+1) 逆时针转 (start + t) · ω_i。

        x'_2i   = x_2i · cos θ − x_2i+1 · sin θ,    x'_2i+1 = x_2i · sin θ + x_2i+1 · cos θ,    θ = (start + t) ω_i

    逐词生成时，新词的位置接在缓存里已有的 ``start`` 个词之后。``rotary(x, 0, base)`` 与第 6 章的
    ``rope(x, base)`` 相同（测试核对）。

    Parameters
    ----------
    x : ndarray of shape (..., T, d)
        查询或键（每个头一份），d 为偶数。
    start : int, default 0
        第 0 行的位置。
    base : float, default 10000.0
        角速度的底数；SmolLM2 是 100000（``llama.rope.freq_base``）。

    Returns
    -------
    ndarray of shape (..., T, d)
        新数组，dtype 与 ``x`` 相同。

    Raises
    ------
    TypeError
        ``x`` 不是实数数组，``start`` 不是整数，或 ``base`` 不是实数。
    ValueError
        ``x`` 少于 2 维、含 NaN/inf、d 为奇数、元素大到转完会溢出、位置超过上限，``start`` 为负，或 ``base`` 不大于 1。

    Examples
    --------
    >>> x = np.array([[1.0, 0.0]])                 # 一个位置，向量 (1, 0)
    >>> rotary(x, start=1).round(4)                # 位置 1：转 1 弧度 → (cos 1, sin 1)
    array([[0.5403, 0.8415]])
    >>> rotary(x, start=2).round(4)                # 位置 2：转 2 弧度
    array([[-0.4161,  0.9093]])
    """
    return rotary_unchecked(*_checked(x, start, base))


def rotary_halves(x: np.ndarray, start: int = 0, base: float = 10000.0) -> np.ndarray:
    """前后两半配对的 RoPE（Hugging Face 的 ``rotate_half``）：(x_i, x_{i+d/2}) 转 (start + t) · ω_i。

        x' = x · cos + rotate_half(x) · sin,   rotate_half([a, b]) = [−b, a],   cos、sin 各重复两遍 (d 维)

    等于“先 ``permute_pairs`` 重排 d 维，用相邻配对转，再重排回来”（测试核对）。参数、返回值和报错同 ``rotary``。

    Raises
    ------
    TypeError, ValueError
        同 ``rotary``。

    Examples
    --------
    >>> rotary_halves(np.array([[1.0, 0.0]]), start=1).round(4)      # d = 2 时两种配对是同一对
    array([[0.5403, 0.8415]])
    """
    x, start, base = _checked(x, start, base)
    cos, sin = _angles(x.shape[-2], start, x.shape[-1], base, x.dtype)  # (T, d/2)
    half = x.shape[-1] // 2
    first, second = x[..., :half], x[..., half:]  # (..., T, d/2) 各一半
    return np.concatenate([first * cos - second * sin, second * cos + first * sin], axis=-1)  # (..., T, d)


def _head_rows(w: object, num_heads: object) -> tuple[np.ndarray, int, int]:
    w = check.as_real_array(w, "w", min_ndim=1)
    H = check.positive_int(num_heads, "num_heads")
    rows = w.shape[0]
    if rows % H or (rows // H) % 2:
        raise ValueError(f"w 的行数 {rows} 必须能分成 num_heads={H} 个头，每个头的行数 d 是偶数（例如 576 = 9 × 64），"
                         f"收到的 shape={w.shape}。")
    return w, H, rows // H


def permute_pairs(w: np.ndarray, num_heads: int) -> np.ndarray:
    """llama.cpp 转换脚本对 W_q、W_k 做的行重排：每个头里，新的第 2i 行 = 旧的第 i 行，第 2i+1 行 = 旧的第 i + d/2 行。

    ``w`` 是 (out, in) 摆法（PyTorch、GGUF 的顺序：每一行是一个输出维），前 d 行属于第 0 个头，依此类推。
    用前后两半配对训练的权重这样重排后，就可以用相邻配对转。``unpermute_pairs`` 是它的逆。

    Parameters
    ----------
    w : ndarray of shape (H · d, ...)
    num_heads : int

    Returns
    -------
    ndarray of shape (H · d, ...)
        新数组。

    Raises
    ------
    TypeError
        ``w`` 不是实数数组，或 ``num_heads`` 不是整数。
    ValueError
        行数不能分成 ``num_heads`` 个头、每头偶数行。

    Examples
    --------
    一个头、d = 4：行 [0, 1, 2, 3] 的两半是 [0, 1] 和 [2, 3]，配成 (0, 2)、(1, 3)：

    >>> permute_pairs(np.array([0.0, 1.0, 2.0, 3.0]), 1)
    array([0., 2., 1., 3.])
    """
    w, H, d = _head_rows(w, num_heads)
    halves = w.reshape(H, 2, d // 2, *w.shape[1:])  # (H, 2, d/2, ...) 每个头的前一半、后一半
    return halves.swapaxes(1, 2).reshape(w.shape)  # (H · d, ...) 第 i 对 = (前一半的第 i 行, 后一半的第 i 行)


def unpermute_pairs(w: np.ndarray, num_heads: int) -> np.ndarray:
    """``permute_pairs`` 的逆：把相邻配对摆法的行还原成前后两半的摆法（第 i 行 = 第 2i 行，第 i + d/2 行 = 第 2i+1 行）。

    Raises
    ------
    TypeError, ValueError
        同 ``permute_pairs``。

    Examples
    --------
    >>> unpermute_pairs(np.array([0.0, 2.0, 1.0, 3.0]), 1)
    array([0., 1., 2., 3.])
    """
    w, H, d = _head_rows(w, num_heads)
    pairs = w.reshape(H, d // 2, 2, *w.shape[1:])  # (H, d/2, 2, ...) 每一对
    return pairs.swapaxes(1, 2).reshape(w.shape)  # (H · d, ...) 先是每对的第一个，再是第二个
