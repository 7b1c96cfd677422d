"""第 10 章的练习：按掩码平均（句向量的第一步）和“最像的另一句”。每个常见错误一种（或几种）错误写法，
都在这里独立写出，必须被认成恰好那个错误；独立写的正确写法（循环、einsum、先缩放再比较……）必须通过。
按掩码平均再缩成长度 1，就是第 10 章真模型的句向量：和 ``tl.pretrained.bert.mean_pool`` 核对。"""

from __future__ import annotations

import numpy as np
import pytest

import transformer_lab as tl
from transformer_lab.pretrained.bert import mean_pool

from helpers.exercises import assert_status

# ---------------------------------------------------------------- masked_mean：错误写法表


def mm_all_tokens(hidden, mask):
    return np.mean(hidden, axis=1)


def mm_divide_by_t(hidden, mask):
    return np.einsum("btd,bt->bd", hidden, mask.astype(float)) / mask.shape[1]


def mm_cls(hidden, mask):
    return hidden[:, 0, :].copy()


@pytest.mark.parametrize("fn, diagnosis", [
    (mm_all_tokens, "averages_padding"), (mm_divide_by_t, "divides_by_T"), (mm_cls, "first_token_only"),
], ids=["averages_padding", "divides_by_T", "first_token_only"])
def test_masked_mean_mistakes(fn, diagnosis):
    assert_status("masked_mean", fn, "failed", diagnosis)


def mm_loops(hidden, mask):
    out = np.zeros((hidden.shape[0], hidden.shape[2]), dtype=hidden.dtype)
    for b in range(hidden.shape[0]):
        real = [hidden[b, t] for t in range(hidden.shape[1]) if mask[b, t]]
        out[b] = sum(real) / len(real)
    return out


def mm_where(hidden, mask):
    kept = np.where(mask[:, :, None], hidden, 0)
    return kept.sum(axis=1) / np.count_nonzero(mask, axis=1)[:, None]


@pytest.mark.parametrize("fn", [mm_loops, mm_where], ids=["loops", "where"])
def test_masked_mean_correct_variants_pass(fn):
    assert_status("masked_mean", fn, "passed")


def test_masked_mean_then_unit_length_is_the_chapter_10_sentence_vector():
    ex = tl.exercises.exercise("masked_mean")
    for case in ex.test_cases():
        hidden, mask = case.args
        v = ex.solution(hidden, mask)
        np.testing.assert_allclose(v / np.linalg.norm(v, axis=-1, keepdims=True), mean_pool(hidden, mask),
                                   rtol=1e-5, atol=1e-6, err_msg=case.label)


def test_masked_mean_hand_worked_numbers_in_message():
    fb = tl.exercises.check("masked_mean", mm_all_tokens)
    assert "应该得到：[[2. 2.]" in fb.message and "[9, 9]" in fb.message   # 第 1 句：([3, 4] + [1, 0]) / 2 = [2, 2]


# ---------------------------------------------------------------- most_similar：错误写法表


def ms_with_self(vectors):
    unit = vectors / np.sqrt((vectors ** 2).sum(axis=1))[:, None]
    return np.argmax(unit @ unit.T, axis=1)


def ms_dot(vectors):
    sim = vectors @ vectors.T
    sim[np.diag_indices(len(sim))] = -np.inf
    return sim.argmax(axis=1)


def ms_columns(vectors):
    unit = vectors / np.sqrt((vectors ** 2).sum(axis=0))
    sim = unit @ unit.T
    np.fill_diagonal(sim, -np.inf)
    return sim.argmax(axis=1)


def ms_least(vectors):
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    sim = unit @ unit.T
    np.fill_diagonal(sim, np.inf)
    return sim.argmin(axis=1)


@pytest.mark.parametrize("fn, diagnosis", [
    (ms_with_self, "includes_self"), (ms_dot, "dot_not_cosine"), (ms_columns, "normalised_columns"),
    (ms_least, "least_similar"),
], ids=["includes_self", "dot_not_cosine", "normalised_columns", "least_similar"])
def test_most_similar_mistakes(fn, diagnosis):
    assert_status("most_similar", fn, "failed", diagnosis)


def ms_loops(vectors):
    n = len(vectors)
    best = []
    for i in range(n):
        scores = {j: vectors[i] @ vectors[j] / (np.linalg.norm(vectors[i]) * np.linalg.norm(vectors[j]))
                  for j in range(n) if j != i}
        best.append(max(scores, key=scores.get))
    return np.array(best)


def ms_argsort(vectors):
    """第 10 章 notebook 的写法：每一行排好序，倒数第二个（最大的是它自己）。"""
    unit = vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)
    return np.argsort(unit @ unit.T, axis=1)[:, -2]


@pytest.mark.parametrize("fn", [ms_loops, ms_argsort], ids=["loops", "argsort"])
def test_most_similar_correct_variants_pass(fn):
    assert_status("most_similar", fn, "passed")


def test_most_similar_wants_an_array_and_says_so():
    fb = tl.exercises.check("most_similar", lambda vectors: list(ms_loops(vectors)))
    assert fb.status == "failed" and "应该返回 NumPy 数组" in fb.message
