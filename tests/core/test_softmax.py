"""core/softmax.py：softmax 与它的反向 softmax_backward。

手算的小例子（书里的 [5, 2, 0]）、显式的雅可比矩阵、中心差分、Hypothesis 性质（每行和为 1、加常数不变）、
dtype 与"不改输入"，以及文档里写明的每一种报错。
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import transformer_lab as tl
from transformer_lab.core.softmax import softmax_backward, softmax_unchecked

from helpers.errors import call, error_table_test
from helpers.gradcheck import assert_gradients_close, numeric_gradient

FINITE = st.floats(-50, 50, allow_nan=False, allow_infinity=False)
MATRICES = hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, max_side=6), elements=FINITE)


# ---------------------------------------------------------------- 前向：手算的例子

def test_softmax_book_example():
    z = math.exp(5) + math.exp(2) + math.exp(0)
    expected = [math.exp(5) / z, math.exp(2) / z, 1 / z]
    got = tl.softmax(np.array([5.0, 2.0, 0.0]))
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    np.testing.assert_allclose(got, [0.9465, 0.0471, 0.0064], atol=5e-5)  # 书里印的 4 位小数


def test_softmax_neg_inf_is_a_blocked_position():
    np.testing.assert_array_equal(tl.softmax(np.array([1.0, 1.0, -np.inf])), [0.5, 0.5, 0.0])


def test_softmax_is_stable_for_huge_scores():
    # 不减最大值的话 e^1000 会溢出成 inf，得到 inf/inf = NaN
    np.testing.assert_array_equal(tl.softmax(np.array([1000.0, 1000.0])), [0.5, 0.5])
    np.testing.assert_allclose(tl.softmax(np.array([-1000.0, 0.0])), [0.0, 1.0], atol=1e-300)


def test_softmax_axis_0_normalises_columns():
    x = np.array([[0.0, 1.0], [math.log(3), 1.0]])
    np.testing.assert_allclose(tl.softmax(x, axis=0), [[0.25, 0.5], [0.75, 0.5]], rtol=1e-12)


def test_unchecked_kernel_is_the_checked_function_without_checks():
    x = np.random.default_rng(5).normal(size=(3, 4))
    np.testing.assert_array_equal(softmax_unchecked(x, axis=0), tl.softmax(x, axis=0))


# ---------------------------------------------------------------- 前向：性质

@given(MATRICES, st.data())
def test_softmax_rows_are_distributions_and_shift_invariant(x, data):
    p = tl.softmax(x)
    assert np.all((p >= 0) & (p <= 1))
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=1e-12)
    c = data.draw(hnp.arrays(np.float64, (x.shape[0], 1), elements=FINITE))  # 每行加一个常数
    np.testing.assert_allclose(tl.softmax(x + c), p, atol=1e-12)


@given(MATRICES)
def test_softmax_never_modifies_its_input(x):
    before = x.copy()
    tl.softmax(x)
    np.testing.assert_array_equal(x, before)
    blocked = np.array([1.0, -np.inf, 2.0])
    tl.softmax(blocked)
    np.testing.assert_array_equal(blocked, [1.0, -np.inf, 2.0])


def _arr(shape, dtype, seed=0):
    a = np.random.default_rng(seed).uniform(-3, 3, size=shape)
    return a.astype(dtype) if np.dtype(dtype).kind == "f" else np.round(a).astype(dtype)


@pytest.mark.parametrize("dtype, expected", [
    pytest.param(dt, expected, id=f"softmax-{np.dtype(dt).name}")  # 整数一律变 float64（softmax 有自己的转换）
    for dt, expected in [(np.float32, np.float32), (np.float64, np.float64), (np.int64, np.float64),
                         (np.int32, np.float64), (np.int16, np.float64), (np.int8, np.float64), (np.uint8, np.float64)]
])
def test_output_dtype(dtype, expected):
    assert tl.softmax(_arr((3, 4), dtype)).dtype == expected


# ---------------------------------------------------------------- 反向

@given(st.integers(1, 5), st.lists(st.integers(1, 3), max_size=2), st.integers(0, 2**32 - 1), st.booleans())
def test_softmax_backward_matches_finite_differences_and_rows_sum_to_zero(n, lead, seed, masked):
    rng = np.random.default_rng(seed)
    x, g = 2 * rng.normal(size=(*lead, n)), rng.normal(size=(*lead, n))
    blocked = (rng.random(x.shape) < 0.4) & (np.arange(n) > 0) if masked else np.zeros(x.shape, bool)
    x = np.where(blocked, -np.inf, x)  # 被掩掉的位置；第 0 列永远保留

    def loss(x):
        return float(np.sum(np.where(blocked, 0.0, tl.softmax(x) * g)))

    grad = softmax_backward(tl.softmax(x), g)
    numeric = numeric_gradient(loss, np.where(blocked, -np.inf, x), h=1e-5)
    assert_gradients_close(np.where(blocked, 0.0, grad), np.where(blocked, 0.0, numeric), floor=1e-2)
    assert np.all(grad[blocked] == 0.0)  # 被掩掉的位置梯度恰为 0
    np.testing.assert_allclose(grad.sum(axis=-1), 0.0, atol=1e-12 * (1 + np.abs(g).max()))  # 每行和为 0


def test_softmax_backward_equals_explicit_jacobian():
    p = tl.softmax(np.array([5.0, 2.0, 0.0]))  # 书里的例子
    g = np.array([1.0, -2.0, 0.5])
    jacobian = np.diag(p) - np.outer(p, p)  # ∂p_i/∂x_j = p_i(δ_ij − p_j)，对称
    np.testing.assert_allclose(softmax_backward(p, g), jacobian @ g, rtol=1e-14, atol=1e-15)
    cols = softmax_backward(tl.softmax(np.array([[5.0], [2.0], [0.0]]), axis=0), g[:, None], axis=0)
    np.testing.assert_allclose(cols[:, 0], jacobian @ g, rtol=1e-14, atol=1e-15)  # axis=0 沿列


def test_softmax_backward_keeps_float32_and_integers_become_float64():
    rng = np.random.default_rng(4)
    x, G = rng.normal(size=(3, 4)).astype(np.float32), rng.normal(size=(3, 4)).astype(np.float32)
    assert softmax_backward(tl.softmax(x), G).dtype == np.float32
    assert softmax_backward(np.array([0.5, 0.5]), np.array([1, 0])).dtype == np.float64  # 整数按 float64


# ---------------------------------------------------------------- 坏输入

VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("softmax-list", call(tl.softmax, [1.0, 2.0]), TE, r"x 必须是 NumPy 数组.*list"),
    ("softmax-axis-out-of-range", call(tl.softmax, np.ones((2, 3)), axis=2), VE, r"axis=2 越界.*2 维.*\[-2, 1\]"),
    ("softmax-axis-float", call(tl.softmax, np.ones(3), axis=0.0), TE, r"axis 必须是整数.*float 0\.0"),
    ("softmax-row-all-neginf", call(tl.softmax, np.array([[0.0, 1.0], [-np.inf, -np.inf]])), VE,
     r"x 沿 axis=-1 有一整行都是 -inf"),
    ("softmax-pos-inf", call(tl.softmax, np.array([0.0, np.inf])), VE, r"x 含有 inf"),
    ("softmax-nan", call(tl.softmax, np.array([0.0, np.nan])), VE, r"x 含有 NaN"),
    ("softmax-bool", call(tl.softmax, np.array([True, False])), TE, r"x 的 dtype.*bool"),
    ("softmax-empty", call(tl.softmax, np.ones((2, 0))), VE, r"x 不能是空数组.*\(2, 0\)"),
    ("softmax-masked-array", call(tl.softmax, np.ma.array([1.0, 2.0])), TE, r"x 是掩码数组.*x\.filled"),
    ("softmax_bw-shape", call(softmax_backward, np.array([0.5, 0.5]), np.ones(3)), VE,
     r"grad_p 的形状应为 \(2,\).*\(3,\)"),
    ("softmax_bw-scores-not-p", call(softmax_backward, np.array([2.0, -1.0]), np.ones(2)), VE,
     r"p 必须是 softmax 的输出.*不是 softmax 的输入 x"),
    ("softmax_bw-axis", call(softmax_backward, np.full((2, 2), 0.5), np.ones((2, 2)), axis=2), VE, r"axis=2 越界"),
    ("softmax_bw-grad_p-list", call(softmax_backward, np.array([0.5, 0.5]), [1.0, 0.0]), TE,
     r"grad_p 必须是 NumPy 数组.*list"),
]
test_documented_errors = error_table_test(ERROR_CASES)
