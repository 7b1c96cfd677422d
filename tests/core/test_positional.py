"""core/positional.py：正弦位置编码——论文公式逐元素的参考实现、手算例子、"平移是旋转"的性质。"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import transformer_lab as tl



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
    (1, 2, 10000.0), (7, 6, 10000.0), (50, 16, 10000.0), (128, 64, 10000.0), (10, 4, 100.0), (5, 8, 2.5), (4, 2, 1),
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


