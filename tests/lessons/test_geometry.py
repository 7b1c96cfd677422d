"""lessons/geometry.py：二维箭头（第 3 章"射箭打靶"）与只改一个键的长度。"""

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import transformer_lab as tl
from transformer_lab.lessons import geometry as P

from helpers.errors import call, error_table_test

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False, width=64)


def matrices(shape):
    return hnp.arrays(np.float64, shape, elements=finite)


def test_vector_2d_by_hand():
    np.testing.assert_allclose(P.vector_2d(2.0, 0), [2.0, 0.0])
    np.testing.assert_allclose(P.vector_2d(2.0, 90), [0.0, 2.0], atol=1e-15)
    np.testing.assert_allclose(P.vector_2d(1.0, 180), [-1.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(P.vector_2d(0.0, 45), [0.0, 0.0])


def test_with_key_length_by_hand_and_no_mutation():
    k = np.array([[3.0, 4.0], [1.0, 0.0]])
    before = k.copy()
    out = P.with_key_length(k, 0, 10.0)
    np.testing.assert_allclose(out, [[6.0, 8.0], [1.0, 0.0]])
    np.testing.assert_array_equal(k, before)
    assert out is not k


@given(length_a=st.floats(0.1, 5), length_b=st.floats(0.1, 5), angle=st.floats(0, 360), base=st.floats(-180, 180))
def test_dot_equals_lengths_times_cosine(length_a, length_b, angle, base):
    a, b = P.vector_2d(length_a, base), P.vector_2d(length_b, base + angle)
    np.testing.assert_allclose(np.linalg.norm(b), length_b)
    cos = np.cos(np.radians(angle))
    np.testing.assert_allclose(tl.dot(a, b), length_a * length_b * cos, atol=1e-9)
    np.testing.assert_allclose(tl.cosine_similarity(a, b), cos, atol=1e-9)


@given(k=matrices((4, 3)), index=st.integers(0, 3), length=st.floats(0.01, 100))
def test_with_key_length_keeps_direction_and_other_keys(k, index, length):
    assume(np.linalg.norm(k[index]) > 1e-3)
    out = P.with_key_length(k, index, length)
    np.testing.assert_allclose(np.linalg.norm(out[index]), length, rtol=1e-9)
    np.testing.assert_allclose(tl.cosine_similarity(out[index], k[index]), 1.0, rtol=1e-9)
    np.testing.assert_array_equal(np.delete(out, index, axis=0), np.delete(k, index, axis=0))


# ---------------------------------------------------------------- 坏输入

VE = ValueError
ERROR_CASES = [
    ("vec-length-negative", lambda: P.vector_2d(-1.0, 0), ValueError, r"length 不能是负数.*-1\.0"),
    ("vec-length-bool", lambda: P.vector_2d(True, 0), TypeError, r"length 必须是实数.*bool"),
    ("vec-angle-str", lambda: P.vector_2d(1.0, "30"), TypeError, r"angle_deg 必须是实数.*字符串 '30'"),
    ("vec-angle-inf", lambda: P.vector_2d(1.0, float("inf")), ValueError, r"angle_deg 必须是有限实数.*inf"),
    ("key-k-1d", lambda: P.with_key_length(np.ones(3), 0, 1.0), ValueError, r"k 至少要有 2 维"),
    ("key-k-3d", lambda: P.with_key_length(np.ones((2, 2, 2)), 0, 1.0), ValueError,
     r"k 的形状应为 \(任意, 任意\).*\(2, 2, 2\)"),
    ("key-index-float", lambda: P.with_key_length(np.ones((2, 2)), 1.0, 1.0), TypeError, r"index 必须是整数.*float"),
    ("key-index-range", lambda: P.with_key_length(np.ones((2, 2)), 2, 1.0), ValueError, r"index=2 越界.*S=2.*\[0, 1\]"),
    ("key-index-negative", lambda: P.with_key_length(np.ones((2, 2)), -1, 1.0), ValueError, r"index=-1 越界"),
    ("key-zero-row", lambda: P.with_key_length(np.array([[0.0, 0.0], [1.0, 0.0]]), 0, 1.0), ValueError,
     r"第 0 个键是零向量"),
    ("key-length-zero", lambda: P.with_key_length(np.ones((2, 2)), 0, 0.0), ValueError, r"length 必须是有限的正实数.*0\.0"),
    ("key-length-str", lambda: P.with_key_length(np.ones((2, 2)), 0, "2"), TypeError, r"length 必须是正实数.*字符串"),
    ("key-length-f32-overflow", call(P.with_key_length, np.ones((2, 2), np.float32), 0, 1e39), VE,
     r"新的键 k\[0\] = 方向 × length 溢出"),
]
test_documented_errors = error_table_test(ERROR_CASES)
