"""core/similarity.py：点积与余弦相似度（第 3 章"射箭打靶"的两把尺子），以及文档里写明的报错。"""

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from transformer_lab.core import similarity

from helpers.errors import call, error_table_test

FINITE = st.floats(-50, 50, allow_nan=False, allow_infinity=False)


def test_dot_and_cosine_book_example():
    a, b = np.array([3.0, 4.0]), np.array([1.0, 2.0])
    assert similarity.dot(a, b) == 3 * 1 + 4 * 2 == 11
    cos = similarity.cosine_similarity(a, b)
    assert cos == pytest.approx(11 / (5 * math.sqrt(5)), rel=1e-12)
    assert round(cos, 4) == 0.9839


@pytest.mark.parametrize("b, expected", [([6.0, 8.0], 1.0), ([-3.0, -4.0], -1.0), ([-4.0, 3.0], 0.0)],
                         ids=["same-direction", "opposite", "orthogonal"])
def test_cosine_special_angles(b, expected):
    assert similarity.cosine_similarity(np.array([3.0, 4.0]), np.array(b)) == pytest.approx(expected, abs=1e-12)


def test_dot_and_cosine_broadcast_over_rows():
    a, b = np.array([[3.0, 4.0], [1.0, 0.0], [0.0, -2.0]]), np.array([1.0, 2.0])  # (3, 2), (2,)
    np.testing.assert_allclose(similarity.dot(a, b), [11.0, 1.0, -4.0])
    norms = [5.0, 1.0, 2.0]
    np.testing.assert_allclose(similarity.cosine_similarity(a, b),
                               [d / (n * math.sqrt(5)) for d, n in zip([11.0, 1.0, -4.0], norms)], rtol=1e-12)


def test_dot_and_cosine_of_3_4_and_1_2_as_printed():
    a, b = np.array([3.0, 4.0]), np.array([1.0, 2.0])
    assert round(float(similarity.cosine_similarity(a, b)), 3) == 0.984  # 第 3 章印的数


@given(hnp.arrays(np.float64, st.integers(1, 6), elements=FINITE), hnp.arrays(np.float64, 6, elements=FINITE),
       st.floats(0.01, 100))
def test_cosine_range_symmetry_and_scale_invariance(a, b6, c):
    b = b6[: a.size]
    assume(np.linalg.norm(a) > 1e-3 and np.linalg.norm(b) > 1e-3)
    cos = similarity.cosine_similarity(a, b)
    assert -1 - 1e-12 <= cos <= 1 + 1e-12
    assert cos == pytest.approx(similarity.cosine_similarity(b, a), abs=1e-12)
    assert cos == pytest.approx(similarity.cosine_similarity(c * a, b), abs=1e-9)
    assert similarity.cosine_similarity(a, a) == pytest.approx(1.0, rel=1e-12)


def test_inputs_are_never_modified():
    a, b = np.array([[3.0, 4.0], [1.0, 0.0]]), np.array([1.0, 2.0])
    before = a.copy(), b.copy()
    similarity.dot(a, b), similarity.cosine_similarity(a, b)
    np.testing.assert_array_equal(a, before[0])
    np.testing.assert_array_equal(b, before[1])


def _arr(shape, dtype, seed=0):
    a = np.random.default_rng(seed).uniform(-3, 3, size=shape)
    return a.astype(dtype) if np.dtype(dtype).kind == "f" else np.round(a).astype(dtype)


@pytest.mark.parametrize("dtype, expected", [(np.float32, np.float32), (np.float64, np.float64), (np.int64, np.float64)],
                         ids=["float32", "float64", "int64"])
def test_output_dtype(dtype, expected):
    assert similarity.dot(_arr((3, 4), dtype), _arr((3, 4), dtype, 1)).dtype == expected
    assert similarity.cosine_similarity(_arr((3, 4), dtype) + 10, _arr((3, 4), dtype, 1) + 10).dtype == expected


VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("dot-length-mismatch", call(similarity.dot, np.ones(2), np.ones(3)), VE, r"a\.shape=\(2,\).*b\.shape=\(3,\)"),
    ("dot-list", call(similarity.dot, [3, 4], np.ones(2)), TE, r"a 必须是 NumPy 数组.*list"),
    ("dot-overflow", call(similarity.dot, np.full(3, 1e200), np.full(3, 1e200)), VE, r"点积 a·b 溢出"),
    ("cosine-zero-vector", call(similarity.cosine_similarity, np.ones(2), np.zeros(2)), VE,
     r"b 在位置 .* 是长度为 0 的向量.*零向量"),
]
test_documented_errors = error_table_test(ERROR_CASES)
