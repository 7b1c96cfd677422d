"""lessons/saturation.py：点积的方差随 d_k 增长、softmax 的雅可比矩阵、第 4 章的饱和演示。"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import transformer_lab as tl
from transformer_lab.lessons import saturation as scaling

from helpers.errors import call, error_table_test
from helpers.gradcheck import numeric_gradient


def test_softmax_jacobian_half_half():
    np.testing.assert_allclose(scaling.softmax_jacobian(np.array([0.5, 0.5])), [[0.25, -0.25], [-0.25, 0.25]])


def test_softmax_jacobian_matches_finite_differences():
    x = np.array([0.3, -1.2, 2.0, 0.5])
    ref = lambda z: np.array([math.exp(zi) for zi in z]) / sum(math.exp(zi) for zi in z)  # noqa: E731
    numeric = numeric_gradient(ref, x)  # 雅可比矩阵 J[i, j] = ∂p_i/∂x_j
    np.testing.assert_allclose(scaling.softmax_jacobian(ref(x)), numeric, atol=1e-8)


def test_dot_product_variance_grows_like_d_k():
    raw, scaled = scaling.dot_product_variance(64, 20000, np.random.default_rng(0))
    assert raw == pytest.approx(64, rel=0.1) and scaled == pytest.approx(1, rel=0.1)
    assert scaled == pytest.approx(raw / 64, rel=1e-12)  # 除以 √d_k，方差除以 d_k
    assert scaling.dot_product_variance(256, 5000, np.random.default_rng(1))[0] > 8 * scaling.dot_product_variance(
        16, 5000, np.random.default_rng(1))[0]


@pytest.mark.parametrize("d_k", [1, 64, 512])
def test_saturation_demo_is_consistent(d_k):
    demo = scaling.saturation_demo(d_k, 8, np.random.default_rng(0))
    ref = lambda z: np.exp(z - z.max()) / np.exp(z - z.max()).sum()  # noqa: E731
    np.testing.assert_allclose(demo["raw"], ref(demo["scores"]), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(demo["scaled"], ref(demo["scores"] / math.sqrt(d_k)), rtol=1e-12, atol=1e-300)
    grad = max(abs((i == j) * p[i] - p[i] * p[j]) for p in [demo["raw"]] for i in range(8) for j in range(8))
    assert demo["grad_raw"] == pytest.approx(grad, rel=1e-12)
    again = scaling.saturation_demo(d_k, 8, np.random.default_rng(0))
    np.testing.assert_array_equal(again["scores"], demo["scores"])  # 同一个种子，同一组向量
    if d_k == 1:
        np.testing.assert_array_equal(demo["raw"], demo["scaled"])
    if d_k == 512:
        assert demo["raw"].max() > demo["scaled"].max() and demo["grad_raw"] < demo["grad_scaled"]


@given(hnp.arrays(np.float64, st.integers(1, 6), elements=st.floats(-20, 20)))
def test_jacobian_is_symmetric_rows_sum_to_zero_and_input_untouched(x):
    p = tl.softmax(x)
    before = p.copy()
    jac = scaling.softmax_jacobian(p)
    np.testing.assert_allclose(jac, jac.T, atol=1e-15)
    np.testing.assert_allclose(jac.sum(axis=1), 0.0, atol=1e-12)  # 概率之和恒为 1：所有方向的变化相互抵消
    np.testing.assert_array_equal(p, before)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_jacobian_keeps_float_dtype(dtype):
    assert scaling.softmax_jacobian(np.array([0.25, 0.75], dtype=dtype)).dtype == dtype


def test_top_level_alias():
    assert tl.saturation is scaling


# ---------------------------------------------------------------- 坏输入

RNG = np.random.default_rng(0)
VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("jacobian-negative", call(scaling.softmax_jacobian, np.array([1.5, -0.5])), VE, r"p 必须是一组概率"),
    ("jacobian-shows-received-sum", call(scaling.softmax_jacobian, np.array([0.5, 0.2])), VE, r"p 必须是一组概率.*0\.7"),
    ("variance-rng-int", call(scaling.dot_product_variance, 4, 10, 0), TE, r"rng 必须是 np\.random\.Generator.*int"),
    ("variance-num_samples-1", call(scaling.dot_product_variance, 4, 1, np.random.default_rng(0)), VE,
     r"num_samples 至少为 2.*1"),
    ("variance-d_k-0", call(scaling.dot_product_variance, 0, 10, RNG), VE, r"d_k 必须是正整数.*0"),
    ("variance-too-many-samples", call(scaling.dot_product_variance, 10**6, 10**6, RNG), VE,
     r"num_samples × d_k=1000000000000 太大"),
    ("saturation-d_k-0", call(scaling.saturation_demo, 0, 8, np.random.default_rng(0)), VE, r"d_k 必须是正整数.*0"),
    ("saturation-num_keys-0", call(scaling.saturation_demo, 4, 0, RNG), VE, r"num_keys 必须是正整数.*0"),
    ("saturation-rng", call(scaling.saturation_demo, 4, 8, 0), TE, r"rng 必须是 np\.random\.Generator.*int"),
    ("saturation-demo-too-big", call(scaling.saturation_demo, 10**12, 8, RNG), VE, r"num_keys × d_k=8000000000000 太大"),
]
test_documented_errors = error_table_test(ERROR_CASES)
