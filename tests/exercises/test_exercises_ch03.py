"""第 3 章的练习：Q、K、V 三个投影和余弦相似度。每个常见错误一种（或几种）错误写法，都在这里独立写出，
必须被认成恰好那个错误；独立写的正确写法（逐个元素的循环、einsum、np.linalg.norm、先归一化再点积……）必须通过。"""

from __future__ import annotations

import math

import numpy as np
import pytest

import transformer_lab as tl

from helpers.exercises import assert_status

# ---------------------------------------------------------------- qkv_projections：错误写法表


def proj_v_is_k(x, w_q, w_k, w_v):
    k = np.matmul(x, w_k)
    return np.matmul(x, w_q), k, k


def proj_one_matrix(x, w_q, w_k, w_v):
    q = np.matmul(x, w_q)
    return q, q.copy(), q.copy()


def proj_columns(x, w_q, w_k, w_v):
    return tuple(np.matmul(w.T, x.T) for w in (w_q, w_k, w_v))


@pytest.mark.parametrize("fn, diagnosis", [
    (proj_v_is_k, "v_equals_k"), (proj_one_matrix, "one_matrix_for_all"), (proj_columns, "column_convention"),
], ids=lambda x: x if isinstance(x, str) else "")
def test_qkv_projections_mistakes(fn, diagnosis):
    assert_status("qkv_projections", fn, "failed", diagnosis)


def proj_einsum(x, w_q, w_k, w_v):
    return tuple(np.einsum("td,de->te", x, w) for w in (w_q, w_k, w_v))


def proj_stacked(x, w_q, w_k, w_v):
    both = x @ np.concatenate([w_q, w_k, w_v], axis=1)     # 三副眼镜拼成一张大表，一次乘完再切开
    d_k = w_q.shape[1]
    return [both[:, :d_k], both[:, d_k:2 * d_k], both[:, 2 * d_k:]]   # list 也可以


@pytest.mark.parametrize("fn", [proj_einsum, proj_stacked])
def test_qkv_projections_correct_variants_pass(fn):
    assert_status("qkv_projections", fn, "passed")


def test_qkv_projections_matches_the_package():
    ex = tl.exercises.exercise("qkv_projections")
    for case in ex.test_cases():
        for mine, package in zip(ex.solution(*case.args), tl.qkv_projections(*case.args)):
            np.testing.assert_allclose(mine, package, rtol=1e-6)


# ---------------------------------------------------------------- cosine_similarity：错误写法表


def cos_dot(a, b):
    return float(a @ b)


def cos_dot_as_array(a, b):
    return np.dot(a, b)                                    # 0 维数组：结构上也算“一个数”


def cos_squared(a, b):
    return float(a @ b / (np.sum(a ** 2) * np.sum(b ** 2)))


def cos_shadow(a, b):
    return float(a @ b / np.linalg.norm(a))


def cos_shadow_other_way(a, b):
    return float(a @ b / np.linalg.norm(b))


@pytest.mark.parametrize("fn, diagnosis", [
    (cos_dot, "dot_not_cosine"), (cos_dot_as_array, "dot_not_cosine"), (cos_squared, "squared_norms"),
    (cos_shadow, "divides_by_one_length"), (cos_shadow_other_way, "divides_by_one_length"),
], ids=["dot", "dot-array", "squared_norms", "one_length-a", "one_length-b"])
def test_cosine_similarity_mistakes(fn, diagnosis):
    assert_status("cosine_similarity", fn, "failed", diagnosis)


def cos_loops(a, b):
    dot = sum(float(x) * float(y) for x, y in zip(a, b))
    return dot / (math.sqrt(sum(float(x) ** 2 for x in a)) * math.sqrt(sum(float(y) ** 2 for y in b)))


def cos_normalise_first(a, b):
    a = a / np.linalg.norm(a)                              # 新数组，不改动输入
    b = b / np.linalg.norm(b)
    return np.dot(a, b)


@pytest.mark.parametrize("fn", [cos_loops, cos_normalise_first])
def test_cosine_similarity_correct_variants_pass(fn):
    assert_status("cosine_similarity", fn, "passed")


def test_cosine_similarity_hand_worked_numbers():
    fb = tl.exercises.check("cosine_similarity", cos_squared)
    assert "0.98387" in fb.message and "0.088" in fb.message   # 11/(5·√5) = 0.98387；11/(25·5) = 0.088
    ex = tl.exercises.exercise("cosine_similarity")
    for case in ex.test_cases():
        assert ex.solution(*case.args) == pytest.approx(tl.cosine_similarity(*case.args), rel=1e-5, abs=1e-7)
