"""第 5 章的练习：切头和拼接。每个常见错误一种（或几种）错误写法，都在这里独立写出，
必须被认成恰好那个错误；独立写的正确写法（循环、np.split、转置再 reshape……）必须通过。"""

from __future__ import annotations

import numpy as np
import pytest

import transformer_lab as tl

from helpers.exercises import assert_status, shown_solution

# ---------------------------------------------------------------- split_heads：错误写法表


def split_one_reshape(x, num_heads):
    return np.reshape(x, (num_heads, len(x), -1))


def split_no_transpose(x, num_heads):
    return x.reshape(len(x), num_heads, -1)


def split_strided(x, num_heads):
    return np.stack([x[:, h::num_heads] for h in range(num_heads)])   # 头 h 拿第 h, h+H, h+2H... 维


def split_heads_last_axis(x, num_heads):
    return x.reshape(len(x), -1, num_heads)


@pytest.mark.parametrize("fn, diagnosis", [
    (split_one_reshape, "reshape_without_transpose"),
    (split_no_transpose, "reshape_without_transpose"),
    (split_strided, "heads_last"),
    (split_heads_last_axis, "heads_last"),
], ids=["reshape-H-T-dk", "reshape-T-H-dk", "strided", "T-dk-H"])
def test_split_heads_mistakes(fn, diagnosis):
    assert_status("split_heads", fn, "failed", diagnosis)


def split_loops(x, num_heads):
    T, D = x.shape
    d_k = D // num_heads
    return np.array([[x[t, h * d_k:(h + 1) * d_k] for t in range(T)] for h in range(num_heads)])


def split_by_np_split(x, num_heads):
    return np.stack(np.split(x, num_heads, axis=1))


def split_through_transpose(x, num_heads):
    T, D = x.shape
    return x.T.reshape(num_heads, D // num_heads, T).transpose(0, 2, 1)   # 先按列分组，再转回来


@pytest.mark.parametrize("fn", [split_loops, split_by_np_split, split_through_transpose, tl.split_heads])
def test_split_heads_correct_variants_pass(fn):
    assert_status("split_heads", fn, "passed")


def test_split_heads_message_shows_the_labelled_example():
    fb = tl.exercises.check("split_heads", split_one_reshape)
    # 头 0 的第 1 行应该是词 1 的前 4 维 [10 11 12 13]；只 reshape 的得到词 0 的后 4 维 [4 5 6 7]
    assert "[10. 11. 12. 13.]" in fb.message and "[ 4.  5.  6.  7.]" in fb.message


# ---------------------------------------------------------------- merge_heads：错误写法表


def merge_one_reshape(x):
    return np.reshape(x, (x.shape[1], -1))


def merge_heads_moved_last(x):
    return np.moveaxis(x, 0, -1).reshape(x.shape[1], -1)   # (T, d_k, H) 再拼


def merge_sum(x):
    return sum(x[h] for h in range(len(x)))


def merge_mean(x):
    return np.mean(x, axis=0)


@pytest.mark.parametrize("fn, diagnosis", [
    (merge_one_reshape, "reshape_without_transpose"),
    (merge_heads_moved_last, "heads_last"),
    (merge_sum, "summed_not_concatenated"),
    (merge_mean, "summed_not_concatenated"),
], ids=["reshape", "heads-last", "sum", "mean"])
def test_merge_heads_mistakes(fn, diagnosis):
    assert_status("merge_heads", fn, "failed", diagnosis)


def merge_concatenate(x):
    return np.concatenate(list(x), axis=-1)


def merge_loops(x):
    H, T, d_k = x.shape
    out = np.zeros((T, H * d_k), dtype=x.dtype)
    for h in range(H):
        for t in range(T):
            out[t, h * d_k:(h + 1) * d_k] = x[h, t]
    return out


@pytest.mark.parametrize("fn", [merge_concatenate, merge_loops, tl.merge_heads])
def test_merge_heads_correct_variants_pass(fn):
    assert_status("merge_heads", fn, "passed")


def test_shown_split_then_merge_is_the_identity():
    x = np.random.default_rng(5).normal(size=(7, 12))
    for num_heads in (1, 2, 3, 4, 6, 12):
        np.testing.assert_array_equal(shown_solution("merge_heads")(shown_solution("split_heads")(x, num_heads)), x)
