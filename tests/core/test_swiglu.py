"""core/swiglu.py：SiLU 与 SwiGLU——手算的例子、逐元素的参照、“门”关上时输出是 0、极端输入不溢出、报错。"""

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.core.swiglu import silu, swiglu

from helpers.errors import call, error_table_test


def test_silu_by_hand():
    z = np.array([-2.0, 0.0, 1.0, 30.0, -800.0])
    expected = [-2 / (1 + math.e**2), 0.0, 1 / (1 + math.e**-1), 30.0, -0.0]
    np.testing.assert_allclose(silu(z), expected, rtol=1e-12, atol=1e-300)
    assert silu(np.array([1.0], dtype=np.float32)).dtype == np.float32


@given(st.integers(0, 10**6), st.integers(1, 3), st.integers(1, 5), st.integers(1, 6))
def test_matches_the_element_by_element_reference(seed, T, D, d_ff):
    rng = np.random.default_rng(seed)
    x, wg, wu, wd = rng.normal(size=(T, D)), rng.normal(size=(D, d_ff)), rng.normal(size=(D, d_ff)), rng.normal(size=(d_ff, D))
    ref = np.zeros((T, D))
    for t in range(T):
        for j in range(d_ff):
            g = sum(x[t, i] * wg[i, j] for i in range(D))
            u = sum(x[t, i] * wu[i, j] for i in range(D))
            ref[t] += g / (1 + math.exp(-g)) * u * wd[j]
    np.testing.assert_allclose(swiglu(x, wg, wu, wd), ref, rtol=1e-9, atol=1e-12)


def test_a_closed_gate_gives_zero():
    """门投影是 0 → SiLU(0) = 0：不论上投影多大，输出都是 0（ReLU 的前馈网络没有这样的开关）。"""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3))
    out = swiglu(x, np.zeros((3, 4)), rng.normal(size=(3, 4)) * 100, rng.normal(size=(4, 3)))
    assert np.array_equal(out, np.zeros((2, 3)))


V, T = ValueError, TypeError
ERROR_CASES = [
    ("x-list", call(swiglu, [[1.0]], np.ones((1, 2)), np.ones((1, 2)), np.ones((2, 1))), T, r"x 必须是 NumPy 数组"),
    ("gate-rows", call(swiglu, np.ones((1, 3)), np.ones((2, 4)), np.ones((3, 4)), np.ones((4, 3))), V,
     r"w_gate 的形状应为 \(3, 任意\)"),
    ("up-shape", call(swiglu, np.ones((1, 3)), np.ones((3, 4)), np.ones((3, 5)), np.ones((4, 3))), V,
     r"w_up 的形状应为 \(3, 4\)"),
    ("down-shape", call(swiglu, np.ones((1, 3)), np.ones((3, 4)), np.ones((3, 4)), np.ones((3, 4))), V,
     r"w_down 的形状应为 \(4, 3\)"),
    ("overflow", call(swiglu, np.full((1, 2), 1e200), np.full((2, 2), 1e200), np.ones((2, 2)), np.ones((2, 2))), V,
     r"门投影 x @ w_gate 溢出"),
]
test_documented_errors = error_table_test(ERROR_CASES)
