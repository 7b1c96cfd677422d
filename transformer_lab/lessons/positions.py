"""第 6 章的道具：位置编码的各种"座位号"——排列实验、时钟指针与二进制计数器、两种排列方式、
平移即旋转的矩阵 R_k、为什么不用 1, 2, 3、可学习的位置表、RoPE 的相对分数。

本模块只依赖 NumPy（以及 ``core``）。公式里的 i 是**第几对维度**（i = 0, ..., d_model/2 - 1），
p、m、n 才是**第几个词**（位置）。
"""

from __future__ import annotations

import math

import numpy as np

from .. import _validation as check
from ..core.attention import scaled_dot_product_attention
from ..core.positional import MAX_ELEMENTS, MAX_POSITIONS, positional_frequencies, rope, sinusoidal_positional_encoding

__all__ = [
    "self_attention", "pe_by_formula", "concatenated_encoding", "layout_permutation", "hand_turns",
    "binary_bits", "bits_from_sines", "shift_rotation", "offset_dot", "neighbour_similarity",
    "naive_positions", "normalised_positions", "learned_table", "lookup_positions", "rope_score_matrix",
]

MAX_BITS = 30
MAX_LOOP = 1_000_000  # pe_by_formula 是 Python 两层循环：最多算这么多个数
MAX_ROTATION_D = 4096  # R_k 是 (D, D) 的矩阵


def self_attention(x: np.ndarray) -> np.ndarray:
    """最朴素的自注意力：Q = K = V = x（不加任何位置信息、不乘权重矩阵），返回输出 (T, D)。"""
    x = check.as_real_array(x, "x", min_ndim=2)
    out, _ = scaled_dot_product_attention(x, x, x)  # (..., T, D)
    return out


def pe_by_formula(num_positions: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """论文公式逐个元素地写：两层循环，PE[p, 2i] = sin(p / base^(2i/d))，PE[p, 2i+1] = cos(同一个角度)。"""
    positional_frequencies(d_model, base)  # 只为检查 d_model 与 base
    num_positions = check.positive_int(num_positions, "num_positions")
    if num_positions * d_model > MAX_LOOP:
        raise ValueError(f"逐元素的循环版最多算 {MAX_LOOP} 个数，收到 {num_positions} × {d_model}。"
                         "请改用 tl.sinusoidal_positional_encoding。")
    pe = np.zeros((num_positions, d_model))
    for p in range(num_positions):
        for i in range(d_model // 2):
            angle = p / base ** (2 * i / d_model)
            pe[p, 2 * i] = math.sin(angle)
            pe[p, 2 * i + 1] = math.cos(angle)
    return pe


def concatenated_encoding(num_positions: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """许多代码库的写法：前一半维度放全部 sin，后一半放全部 cos（"拼接"排列），形状 (P, D)。"""
    pe = sinusoidal_positional_encoding(num_positions, d_model, base)  # (P, D)
    return np.concatenate([pe[:, 0::2], pe[:, 1::2]], axis=1)  # (P, D)


def layout_permutation(d_model: int) -> np.ndarray:
    """下标数组 ``perm``，使 ``拼接排列 = 交错排列[:, perm]``：先取所有偶数列（sin），再取所有奇数列（cos）。"""
    positional_frequencies(d_model)  # 检查 d_model 是正偶数
    return np.concatenate([np.arange(0, d_model, 2), np.arange(1, d_model, 2)])  # (D,)


def hand_turns(position: float, d_model: int, base: float = 10000.0) -> np.ndarray:
    """位置 ``position`` 处每根"指针"（每一对 sin/cos）已经转了多少圈：p · ω_i / 2π，形状 (D/2,)。"""
    position = check.finite_real(position, "position")
    if position < 0:
        raise ValueError(f"position 必须 >= 0，收到的是 {position}。")
    return position * positional_frequencies(d_model, base) / (2 * np.pi)  # (D/2,)


def binary_bits(num_positions: int, num_bits: int) -> np.ndarray:
    """二进制计数器：第 p 行是 p 的二进制各位，**低位在前**（第 j 列 = 第 j 位），形状 (P, num_bits)。"""
    num_positions, num_bits = _counter_sizes(num_positions, num_bits)
    p = np.arange(num_positions)[:, None]  # (P, 1)
    return (p >> np.arange(num_bits)[None, :]) & 1  # (P, bits)


def bits_from_sines(num_positions: int, num_bits: int) -> np.ndarray:
    """同一个计数器，用正弦波的正负号算：第 j 位 = [sin(π(p + ½) / 2^j) < 0]，周期 2^(j+1) 个位置。

    低位 = 转得快的指针（周期 2），高位 = 转得慢的指针（周期 2^bits）——和位置编码的频率排列一样。
    """
    num_positions, num_bits = _counter_sizes(num_positions, num_bits)
    p = np.arange(num_positions)[:, None] + 0.5  # (P, 1)
    return (np.sin(np.pi * p / 2.0 ** np.arange(num_bits)[None, :]) < 0).astype(int)  # (P, bits)


def _counter_sizes(num_positions: object, num_bits: object) -> tuple[int, int]:
    num_positions = check.positive_int(num_positions, "num_positions")
    num_bits = check.positive_int(num_bits, "num_bits")
    if num_positions > MAX_POSITIONS:
        raise ValueError(f"num_positions 不能超过 {MAX_POSITIONS}，收到的是 {num_positions}。")
    if num_bits > MAX_BITS or num_positions > 2**num_bits:
        raise ValueError(
            f"num_bits 须不超过 {MAX_BITS}，且 num_bits 位的计数器最多数到 2^num_bits - 1："
            f"收到 num_positions={num_positions}, num_bits={num_bits}。"
        )
    return num_positions, num_bits


def shift_rotation(k: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """平移 k 个位置 = 一个固定的分块对角旋转矩阵 R_k：对每个位置 p，``R_k @ PE[p] == PE[p + k]``。

    每一对 (sin, cos) 用一个 2×2 块 [[cos kω_i, sin kω_i], [-sin kω_i, cos kω_i]]，与 p 无关。
    本书用行向量时写成 ``PE @ R_k.T``。形状 (D, D)。
    """
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k 必须是整数（平移几个位置），收到的是 {check.describe(k)}。")
    if abs(k) > 1_000_000:
        raise ValueError(f"k 的绝对值不能超过 1000000，收到的是 k={k}。")
    if check.positive_int(d_model, "d_model") > MAX_ROTATION_D:
        raise ValueError(f"d_model 不能超过 {MAX_ROTATION_D}（R_k 是 d_model × d_model 的矩阵），收到的是 {d_model}。")
    angle = k * positional_frequencies(d_model, base)  # (D/2,)
    c, s = np.cos(angle), np.sin(angle)  # (D/2,)
    r = np.zeros((d_model, d_model))  # (D, D)
    idx = np.arange(0, d_model, 2)
    r[idx, idx], r[idx, idx + 1] = c, s  # sin(a + b) = sin a cos b + cos a sin b
    r[idx + 1, idx], r[idx + 1, idx + 1] = -s, c  # cos(a + b) = cos a cos b - sin a sin b
    return r  # (D, D)


def offset_dot(k: np.ndarray, d_model: int, base: float = 10000.0) -> np.ndarray:
    """PE(p)·PE(p + k) 的闭式：Σ_i cos(k ω_i)，与 p 无关。``k`` 可以是整数数组，返回同形状。"""
    k = check.as_real_array(k if isinstance(k, np.ndarray) else np.asarray(k), "k")
    if np.max(np.abs(k)) > 1e6:
        raise ValueError(f"k 的绝对值不能超过 1e6，收到的最大值是 {np.max(np.abs(k)):g}。")
    return np.cos(k[..., None] * positional_frequencies(d_model, base)).sum(axis=-1)  # k 的形状


def neighbour_similarity(d_model: int, base: float = 10000.0) -> float:
    """相邻两个位置的编码有多像：余弦相似度 = PE(p)·PE(p+1) / (D/2)（每个 PE 向量的长度都是 √(D/2)）。"""
    return float(offset_dot(np.array(1.0), d_model, base) / (d_model // 2))


def naive_positions(num_positions: int) -> np.ndarray:
    """最直接的座位号 0, 1, 2, ...：越往后数值越大，没有上限。形状 (P,)。"""
    num_positions = check.positive_int(num_positions, "num_positions")
    if num_positions > MAX_POSITIONS:
        raise ValueError(f"num_positions 不能超过 {MAX_POSITIONS}，收到的是 {num_positions}。")
    return np.arange(num_positions, dtype=float)


def normalised_positions(num_positions: int) -> np.ndarray:
    """归一化到 0–1 的座位号 p / (P - 1)：同一个位置，句子长度不同，号码就不同。形状 (P,)。"""
    num_positions = check.positive_int(num_positions, "num_positions")
    if num_positions > MAX_POSITIONS:
        raise ValueError(f"num_positions 不能超过 {MAX_POSITIONS}，收到的是 {num_positions}。")
    return np.arange(num_positions) / max(num_positions - 1, 1)


def learned_table(max_len: int, d_model: int, rng: np.random.Generator) -> np.ndarray:
    """可学习的位置表（这里用随机数代替训练结果）：max_len 行，每个位置一行，形状 (max_len, D)。"""
    max_len = check.positive_int(max_len, "max_len")
    d_model = check.positive_int(d_model, "d_model")
    if max_len * d_model > MAX_ELEMENTS:
        raise ValueError(f"max_len × d_model 不能超过 {MAX_ELEMENTS}，收到 {max_len} × {d_model}。")
    return check.generator(rng).normal(scale=0.02, size=(max_len, d_model))  # (max_len, D)


def lookup_positions(table: np.ndarray, num_positions: int) -> np.ndarray:
    """从位置表里取前 ``num_positions`` 行；超过表的长度就报错——表里根本没有那些行。"""
    table = check.as_real_array(table, "table", min_ndim=2)
    num_positions = check.positive_int(num_positions, "num_positions")
    if num_positions > table.shape[0]:
        raise ValueError(
            f"num_positions={num_positions} 超出了位置表的长度 {table.shape[0]}："
            f"可学习的位置表只为训练时见过的 {table.shape[0]} 个位置各存了一行，第 {table.shape[0]} 个位置以后没有可查的行。"
        )
    return table[:num_positions].copy()  # (P, D)


def rope_score_matrix(q: np.ndarray, k: np.ndarray, num_positions: int, base: float = 10000.0) -> np.ndarray:
    """同一个查询向量 q 放在每个位置 m、同一个键向量 k 放在每个位置 n，RoPE 之后的分数 S[m, n] = rope(q)_m · rope(k)_n。

    结果只取决于 m - n：每条对角线上的数都相同。形状 (T, T)。
    """
    q = check.as_real_array(q, "q", min_ndim=1)
    k = check.as_real_array(k, "k", min_ndim=1)
    check.check_shape(q, "q", (None,))
    check.check_shape(k, "k", q.shape, "q 和 k 的长度 d 必须相同。")
    num_positions = check.positive_int(num_positions, "num_positions")
    if num_positions > 4096:
        raise ValueError(f"num_positions 不能超过 4096（分数表有 T×T 个数），收到的是 {num_positions}。")
    rq = rope(np.tile(q, (num_positions, 1)), base)  # (T, d)
    rk = rope(np.tile(k, (num_positions, 1)), base)  # (T, d)
    return rq @ rk.T  # (T, T)
