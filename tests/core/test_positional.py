"""core/positional.py：正弦位置编码与 RoPE——论文公式逐元素的参考实现、手算例子、"平移是旋转"的性质、文档里写明的报错。"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import transformer_lab as tl

from helpers.errors import call, error_table_test


def ref_pe(num_positions, d_model, base=10000.0):
    """论文 3.5 节的公式，逐个元素写：PE[p, 2i] = sin(p / base^(2i/d))，PE[p, 2i+1] = cos(同一个角度)。"""
    pe = np.zeros((num_positions, d_model))
    for p in range(num_positions):
        for i in range(d_model // 2):
            angle = p / base ** (2 * i / d_model)
            pe[p, 2 * i] = math.sin(angle)
            pe[p, 2 * i + 1] = math.cos(angle)
    return pe


def test_pe_position_zero_is_0_1_0_1():
    np.testing.assert_array_equal(tl.sinusoidal_positional_encoding(1, 8)[0], [0, 1] * 4)


def test_pe_position_one_by_hand():
    # d_model = 4：第 0 对的频率是 1，第 1 对是 1 / 10000^(2/4) = 0.01
    expected = [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)]
    np.testing.assert_allclose(tl.sinusoidal_positional_encoding(3, 4)[1], expected, rtol=1e-15)


@pytest.mark.parametrize("num_positions, d_model, base", [
    (1, 2, 10000.0), (7, 6, 10000.0), (50, 16, 10000.0), (128, 64, 10000.0), (10, 4, 100.0), (5, 8, 2.5), (4, 2, 1.5),
], ids=lambda v: str(v))
def test_pe_matches_elementwise_formula(num_positions, d_model, base):
    got = tl.sinusoidal_positional_encoding(num_positions, d_model, base=base)
    assert got.shape == (num_positions, d_model) and got.dtype == np.float64
    np.testing.assert_allclose(got, ref_pe(num_positions, d_model, base), rtol=1e-12, atol=1e-12)


@given(st.integers(1, 60), st.integers(1, 16), st.integers(0, 20))
def test_pe_pairs_lie_on_unit_circle_and_shift_is_a_rotation(num_positions, half, k):
    d_model = 2 * half
    pe = tl.sinusoidal_positional_encoding(num_positions + k, d_model)
    sin, cos = pe[:, 0::2], pe[:, 1::2]  # (P, D/2)
    np.testing.assert_allclose(sin**2 + cos**2, 1.0, rtol=1e-12)
    # 位置 p+k 的每一对 (sin, cos) = 位置 p 的那一对旋转 k·ω_i：相对位置是一个线性变换
    omega = np.array([1 / 10000 ** (2 * i / d_model) for i in range(half)])
    s, c = np.sin(k * omega), np.cos(k * omega)
    p = np.arange(num_positions)
    np.testing.assert_allclose(sin[p + k], sin[p] * c + cos[p] * s, atol=1e-9)
    np.testing.assert_allclose(cos[p + k], cos[p] * c - sin[p] * s, atol=1e-9)


def test_pe_rows_are_distinct():
    pe = tl.sinusoidal_positional_encoding(200, 16)
    assert len({tuple(np.round(row, 9)) for row in pe}) == 200  # 每个位置的"座位号"都不同


# ---------- 角速度 ω_i ----------

def test_frequencies_by_hand():
    # d_model = 8, base = 10000：ω_i = 10000^(-2i/8) = 1, 0.1, 0.01, 0.001
    np.testing.assert_allclose(tl.positional_frequencies(8), [1, 0.1, 0.01, 0.001], rtol=1e-12)


@given(st.integers(1, 40), st.floats(1.01, 1e6))
def test_frequencies_start_at_one_and_decrease(half, base):
    omega = tl.positional_frequencies(2 * half, base)
    assert omega[0] == 1.0 and np.all(np.diff(omega) < 0) and omega[-1] >= 1 / base


def test_huge_table_is_exactly_the_formula_at_the_far_end():
    """benchmark 用的大小 (8192, 1024)：最后一行与逐元素公式一致。"""
    pe = tl.sinusoidal_positional_encoding(8192, 1024)
    p, i = 8191, np.arange(512)
    np.testing.assert_allclose(pe[p, 0::2], np.sin(p / 10000.0 ** (2 * i / 1024)), atol=1e-9)
    np.testing.assert_allclose(pe[p, 1::2], np.cos(p / 10000.0 ** (2 * i / 1024)), atol=1e-9)


# ---------- RoPE ----------

def ref_rope(x, base=10000.0):
    """逐个位置、逐对维度：乘 2×2 旋转矩阵 [[cos, -sin], [sin, cos]]（列向量写法）。"""
    out = np.zeros_like(x, dtype=float)
    T, d = x.shape
    for m in range(T):
        for i in range(d // 2):
            a = m / base ** (2 * i / d)
            rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
            out[m, 2 * i:2 * i + 2] = rot @ x[m, 2 * i:2 * i + 2]
    return out


def test_rope_by_hand_quarter_turn():
    # d = 2 时只有第 0 对，角速度 ω_0 = 1：位置 2 把 (0, 1) 逆时针转 2 弧度 → (-sin 2, cos 2)
    x = np.array([[0.0, 1.0], [0.0, 1.0], [0.0, 1.0]])
    got = tl.rope(x)
    np.testing.assert_allclose(got[2], [-math.sin(2), math.cos(2)], rtol=1e-15)


@given(st.integers(1, 12), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_rope_matches_the_loop(T, half, seed):
    x = np.random.default_rng(seed).normal(size=(T, 2 * half))
    np.testing.assert_allclose(tl.rope(x), ref_rope(x), atol=1e-12)


@given(st.integers(2, 16), st.integers(1, 8), st.integers(0, 2**32 - 1), st.floats(1.5, 1e5))
def test_rope_score_depends_only_on_the_offset(T, half, seed, base):
    """rope(q)[m] · rope(k)[n] 只取决于 m - n：把同一对 q, k 放到所有位置上，分数表沿对角线不变。"""
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(2, 2 * half))
    rq = tl.rope(np.tile(q, (T, 1)), base)  # (T, d)
    rk = tl.rope(np.tile(k, (T, 1)), base)
    scores = rq @ rk.T  # (T, T)
    for offset in range(-T + 1, T):
        diag = np.diagonal(scores, offset)
        np.testing.assert_allclose(diag, diag[0], atol=1e-9 * (1 + np.abs(q).sum() * np.abs(k).sum()))


@given(st.integers(0, 2**32 - 1))
def test_rope_keeps_pair_lengths_batches_and_float32(seed):
    x = np.random.default_rng(seed).normal(size=(2, 3, 5, 6)).astype(np.float32)
    before = x.copy()
    out = tl.rope(x)
    assert out.dtype == np.float32 and out.shape == x.shape
    np.testing.assert_array_equal(x, before)  # 不改输入
    norms = lambda a: np.hypot(a[..., 0::2], a[..., 1::2])  # noqa: E731
    np.testing.assert_allclose(norms(out), norms(x), rtol=1e-5)
    np.testing.assert_allclose(out[1, 2], tl.rope(x[1, 2]), rtol=1e-6)  # 批维度各自独立


@given(arrays(np.float64, (3, 4), elements=st.floats(-8e307, 8e307)))
def test_rope_never_overflows_on_finite_input(x):
    assert np.all(np.isfinite(tl.rope(x)))


@given(st.floats(1e-300, 1e300), st.integers(1, 8))
def test_any_finite_base_gives_finite_table_or_clear_error(base, half):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 不许有 RuntimeWarning（溢出、除零……）
        try:
            pe = tl.sinusoidal_positional_encoding(20, 2 * half, base=base)
        except ValueError as err:
            assert base <= 1 and "base 必须大于 1" in str(err)
        else:
            assert base > 1 and np.all(np.isfinite(pe))


@given(arrays(np.float32, (2, 3, 4), elements=st.floats(width=32, allow_nan=False, allow_infinity=False)))
def test_rope_float32_any_magnitude_finite_or_clear_error(x):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            out = tl.rope(x)
        except ValueError as err:
            assert "x 的元素太大" in str(err)
        else:
            assert out.dtype == np.float32 and np.all(np.isfinite(out))


# ---------- 出错 ----------

V, T = ValueError, TypeError
ERROR_CASES = [
    ("rope-odd-d", lambda: tl.rope(np.ones((3, 5))), V, r"x 的最后一维 d 必须是偶数.*5"),
    ("rope-1d", lambda: tl.rope(np.ones(4)), V, r"x 至少要有 2 维"),
    ("rope-list", lambda: tl.rope([[1.0, 2.0]]), T, r"x 必须是 NumPy 数组"),
    ("rope-nan", lambda: tl.rope(np.array([[np.nan, 1.0]])), V, r"x 含有 NaN"),
    ("rope-complex", lambda: tl.rope(np.ones((2, 2), complex)), T, r"x 的 dtype 必须是实数"),
    ("rope-too-big", lambda: tl.rope(np.full((2, 2), 1e308)), V, r"x 的元素太大"),
    ("rope-base-1", lambda: tl.rope(np.ones((2, 2)), base=1.0), V, r"base 必须大于 1"),
    ("rope-base-0", lambda: tl.rope(np.ones((2, 2)), base=0), V, r"base 必须是有限的正实数"),
    ("rope-base-nan", lambda: tl.rope(np.ones((2, 2)), base=float("nan")), V, r"base 必须是有限的正实数"),
    ("rope-base-str", lambda: tl.rope(np.ones((2, 2)), base="1e4"), T, r"base 必须是正实数"),
    ("pe-base-below-1", lambda: tl.sinusoidal_positional_encoding(4, 4, base=0.5), V, r"base 必须大于 1.*0\.5"),
    ("pe-base-huge-int", lambda: tl.sinusoidal_positional_encoding(4, 4, base=10**400), V, r"base .*不超过 1e300"),
    ("pe-too-many-positions", lambda: tl.sinusoidal_positional_encoding(10**7, 2), V, r"num_positions 不能超过"),
    ("pe-too-many-elements", lambda: tl.sinusoidal_positional_encoding(10**6, 1024), V,
     r"num_positions × d_model 不能超过"),
    ("freq-odd", lambda: tl.positional_frequencies(3), V, r"d_model 必须是偶数.*3"),
    ("freq-huge-d", lambda: tl.positional_frequencies(2**40), V, r"d_model 不能超过"),
    ("freq-bool", lambda: tl.positional_frequencies(True), T, r"d_model 必须是正整数"),
    ("pe-odd-d_model", call(tl.sinusoidal_positional_encoding, 4, 5), V, r"d_model 必须是偶数.*d_model=5"),
    ("pe-num_positions-0", call(tl.sinusoidal_positional_encoding, 0, 4), V, r"num_positions 必须是正整数.*0"),
    ("pe-base-negative", call(tl.sinusoidal_positional_encoding, 4, 4, base=-1), V, r"base 必须是有限的正实数.*-1"),
    ("pe-base-inf", call(tl.sinusoidal_positional_encoding, 4, 4, base=np.inf), V, r"base .*inf"),
    ("pe-base-string", call(tl.sinusoidal_positional_encoding, 4, 4, base="1e4"), T, r"base 必须是正实数.*'1e4'"),
    ("pe-d_model-float", call(tl.sinusoidal_positional_encoding, 4, 4.0), T, r"d_model 必须是正整数.*float 4\.0"),
]
test_documented_errors = error_table_test(ERROR_CASES)
