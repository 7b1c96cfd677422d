"""lessons/positions.py：排列实验、两种排列、平移即旋转、二进制计数器、为什么不用 1, 2, 3、可学习的位置表、RoPE 分数表。"""

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import transformer_lab as tl

from helpers.errors import check_error, error_table_test

P = tl.positions


# ---------- 没有位置编码：自注意力对排列是"等变"的 ----------

@given(st.integers(2, 8), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_self_attention_without_positions_is_permutation_equivariant(T, D, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(T, D))
    order = rng.permutation(T)
    np.testing.assert_allclose(P.self_attention(x[order]), P.self_attention(x)[order], atol=1e-12)


def test_adding_positions_breaks_the_symmetry():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 8))  # 猫、追、狗
    pe = tl.sinusoidal_positional_encoding(3, 8)
    swapped = x[[2, 1, 0]]  # 狗、追、猫
    out, out_sw = P.self_attention(x + pe), P.self_attention(swapped + pe)
    assert not np.allclose(out_sw, out[[2, 1, 0]], atol=1e-3)


# ---------- 公式 ↔ 向量化 ↔ 两种排列 ----------

@given(st.integers(1, 30), st.integers(1, 10), st.floats(1.5, 1e5))
def test_formula_loop_equals_vectorised(T, half, base):
    np.testing.assert_allclose(P.pe_by_formula(T, 2 * half, base),
                               tl.sinusoidal_positional_encoding(T, 2 * half, base), atol=1e-12)


@given(st.integers(1, 30), st.integers(1, 16))
def test_interleaved_and_concatenated_differ_by_a_fixed_permutation(T, half):
    d = 2 * half
    inter = tl.sinusoidal_positional_encoding(T, d)
    concat = P.concatenated_encoding(T, d)
    perm = P.layout_permutation(d)
    assert sorted(perm.tolist()) == list(range(d))  # 真的是一个排列
    np.testing.assert_array_equal(concat, inter[:, perm])
    np.testing.assert_array_equal(concat[:, np.argsort(perm)], inter)  # 反过来也能排回去
    # 同样的信息：位置两两之间的点积（距离）完全一样
    np.testing.assert_allclose(concat @ concat.T, inter @ inter.T, atol=1e-12)


def test_layout_permutation_by_hand():
    assert P.layout_permutation(6).tolist() == [0, 2, 4, 1, 3, 5]


# ---------- 平移 = 旋转 ----------

@given(st.integers(0, 200), st.integers(-50, 50), st.integers(1, 32), st.floats(1.5, 1e5))
def test_shift_is_the_rotation_R_k_for_every_p(p, k, half, base):
    d = 2 * half
    pe = tl.sinusoidal_positional_encoding(p + 51, d, base)  # 位置 p 与 p + k 都在表里（k >= -50）
    p0 = p + 50 if k < 0 else p
    r = P.shift_rotation(k, d, base)
    np.testing.assert_allclose(r @ pe[p0], pe[p0 + k], atol=1e-9)
    np.testing.assert_allclose(r @ r.T, np.eye(d), atol=1e-12)  # 正交：只转不拉伸


def test_R_k_by_hand_d2():
    r = P.shift_rotation(1, 2)
    np.testing.assert_allclose(r, [[math.cos(1), math.sin(1)], [-math.sin(1), math.cos(1)]])


@given(st.integers(0, 100), st.integers(0, 60), st.integers(1, 32))
def test_pe_dot_depends_only_on_offset(p, k, half):
    d = 2 * half
    pe = tl.sinusoidal_positional_encoding(p + k + 1, d)
    assert math.isclose(pe[p] @ pe[p + k], float(P.offset_dot(np.array(k), d)), abs_tol=1e-9)
    assert math.isclose(pe[p] @ pe[p + k], pe[0] @ pe[k], abs_tol=1e-9)


def test_offset_dot_at_zero_is_half_d_and_decays():
    assert P.offset_dot(np.array(0), 64) == 32  # 每对 sin² + cos² = 1，共 32 对
    far = P.offset_dot(np.arange(1, 40), 64)
    assert far.max() < 32 and far[-1] < far[0]


# ---------- 时钟与二进制计数器 ----------

@given(st.integers(1, 12))
def test_counter_from_sines_is_the_binary_counter(bits):
    n = 2**bits
    np.testing.assert_array_equal(P.bits_from_sines(n, bits), P.binary_bits(n, bits))


def test_binary_bits_by_hand():
    assert P.binary_bits(14, 4)[13].tolist() == [1, 0, 1, 1]  # 13 = 1101，低位在前


def test_hand_turns_by_hand():
    turns = P.hand_turns(2 * math.pi, 4)  # 位置 2π：ω = 1, 0.01 → 1 圈、0.01 圈
    np.testing.assert_allclose(turns, [1.0, 0.01])


# ---------- 为什么不用 1, 2, 3；可学习的表 ----------

def test_naive_and_normalised_positions():
    assert P.naive_positions(1000)[-1] == 999
    # 同一个位置 3：5 个词的句子里是 0.75，11 个词的句子里是 0.3
    assert P.normalised_positions(5)[3] == 0.75 and math.isclose(P.normalised_positions(11)[3], 0.3)
    assert P.normalised_positions(1).tolist() == [0.0]


def test_learned_table_cannot_go_beyond_its_length():
    table = P.learned_table(8, 4, np.random.default_rng(0))
    got = P.lookup_positions(table, 5)
    np.testing.assert_array_equal(got, table[:5])
    got[0, 0] = 99.0
    assert table[0, 0] != 99.0  # 返回的是副本
    check_error(lambda: P.lookup_positions(table, 9), ValueError, r"num_positions=9 超出了位置表的长度 8")


def test_neighbour_similarity_is_not_sharper_in_higher_dimensions():
    sims = [P.neighbour_similarity(d) for d in (16, 64, 512)]
    assert sims[0] <= sims[1] <= sims[2] < 1  # 维度越高，相邻位置反而越像


# ---------- RoPE 分数表 ----------

@given(st.integers(2, 12), st.integers(1, 8), st.integers(0, 2**32 - 1))
def test_rope_score_matrix_is_toeplitz_and_matches_a_rotation(T, half, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(2, 2 * half))
    s = P.rope_score_matrix(q, k, T)
    for m in range(T):
        for n in range(T):
            # 独立推导：rope(q)_m · rope(k)_n = q · R(n - m) k，其中 R 是逐对逆时针转 (n - m)ω_i
            a = (n - m) * tl.positional_frequencies(2 * half)
            rk = np.empty_like(k)
            rk[0::2] = k[0::2] * np.cos(a) - k[1::2] * np.sin(a)
            rk[1::2] = k[0::2] * np.sin(a) + k[1::2] * np.cos(a)
            assert math.isclose(s[m, n], q @ rk, abs_tol=1e-9)


V, T = ValueError, TypeError
ERROR_CASES = [
    ("pos-lookup-too-long", lambda: P.lookup_positions(np.ones((3, 2)), 4), V, r"超出了位置表的长度 3"),
    ("pos-counter-too-small", lambda: P.binary_bits(9, 3), V, r"num_bits 位的计数器最多数到"),
    ("pos-shift-float", lambda: P.shift_rotation(1.5, 4), T, r"k 必须是整数"),
    ("pos-shift-odd", lambda: P.shift_rotation(1, 5), V, r"d_model 必须是偶数"),
    ("pos-shift-huge", lambda: P.shift_rotation(10**9, 4), V, r"k 的绝对值不能超过"),
    ("pos-offset-str", lambda: P.offset_dot("3", 4), T, r"k 的 dtype 必须是实数"),
    ("pos-hand-negative", lambda: P.hand_turns(-1, 4), V, r"position 必须 >= 0"),
    ("pos-rope-scores-shape", lambda: P.rope_score_matrix(np.ones(4), np.ones(6), 3), V, r"k 的形状应为"),
    ("pos-rope-scores-big", lambda: P.rope_score_matrix(np.ones(4), np.ones(4), 5000), V, r"num_positions 不能超过 4096"),
    ("pos-learned-rng", lambda: P.learned_table(4, 2, 0), T, r"rng 必须是 np.random.Generator"),
    ("pos-formula-too-big", lambda: P.pe_by_formula(10**6, 4), V, r"循环版最多算"),
    ("pos-counter-huge", lambda: P.binary_bits(2**25, 30), V, r"num_positions 不能超过"),
    ("pos-shift-huge-d", lambda: P.shift_rotation(1, 10**6), V, r"d_model 不能超过 4096"),
    ("pos-naive-huge", lambda: P.naive_positions(10**12), V, r"num_positions 不能超过"),
    ("pos-learned-huge", lambda: P.learned_table(10**6, 10**3, np.random.default_rng(0)), V, r"max_len × d_model 不能超过"),
    ("pos-formula-base", lambda: P.pe_by_formula(3, 4, base=1), V, r"base 必须大于 1"),
]

test_documented_errors = error_table_test(ERROR_CASES)
