"""第 7 章的练习：因果掩码和 KV 缓存的字节数。每个常见错误一种（或几种）错误写法，都在这里独立写出，
必须被认成恰好那个错误；独立写的正确写法（循环、np.tril、工具包……）必须通过。"""

from __future__ import annotations

import numpy as np
import pytest

import transformer_lab as tl

from helpers.exercises import assert_status

# ---------------------------------------------------------------- causal_mask：错误写法表


def rows_cols(T):
    return np.arange(T)[:, None], np.arange(T)[None, :]


def mask_future(T):
    i, j = rows_cols(T)
    return j > i


def mask_not_tril(T):
    return ~np.tril(np.ones((T, T), dtype=bool))


def mask_strictly_past(T):
    i, j = rows_cols(T)
    return j < i


def mask_transposed(T):
    return np.tril(np.ones((T, T), dtype=bool)).T


def mask_additive(T):
    i, j = rows_cols(T)
    return np.where(j > i, -np.inf, 0.0)


def mask_additive_big_negative(T):
    return np.triu(np.ones((T, T)), 1) * -1e9


@pytest.mark.parametrize("fn, diagnosis", [
    (mask_future, "inverted"), (mask_not_tril, "inverted"),
    (mask_strictly_past, "diagonal_excluded"),
    (mask_transposed, "upper_triangle"),
    (mask_additive, "additive_mask"), (mask_additive_big_negative, "additive_mask"),
], ids=["future", "not-tril", "strict", "transposed", "additive-inf", "additive-1e9"])
def test_causal_mask_mistakes(fn, diagnosis):
    assert_status("causal_mask", fn, "failed", diagnosis)


def mask_loops(T):
    m = np.zeros((T, T), dtype=bool)
    for i in range(T):
        for j in range(i + 1):
            m[i, j] = True
    return m


def mask_fromfunction(T):
    return np.fromfunction(lambda i, j: j <= i, (T, T), dtype=int)


@pytest.mark.parametrize("fn", [mask_loops, mask_fromfunction, tl.causal_mask])
def test_causal_mask_correct_variants_pass(fn):
    assert_status("causal_mask", fn, "passed")


def test_causal_mask_int_array_is_explained_not_diagnosed():
    fb = tl.exercises.check("causal_mask", lambda T: np.tril(np.ones((T, T), dtype=int)))
    assert (fb.status, fb.diagnosis) == ("failed", None) and "布尔" in fb.message


# ---------------------------------------------------------------- kv_cache_bytes：错误写法表


@pytest.mark.parametrize("fn, diagnosis", [
    (lambda n, d, num_layers, dtype: num_layers * n * d * np.dtype(dtype).itemsize, "only_k"),
    (lambda n, d, num_layers, dtype: 2 * n * d * np.dtype(dtype).itemsize, "no_layers"),
    (lambda n, d, num_layers, dtype: 2 * num_layers * n * d * np.finfo(dtype).bits, "bits_not_bytes"),
], ids=["only-k", "no-layers", "bits"])
def test_kv_cache_bytes_mistakes(fn, diagnosis):
    assert_status("kv_cache_bytes", fn, "failed", diagnosis)


def kv_float(n, d, num_layers, dtype):
    return 2.0 * num_layers * n * d * (np.finfo(dtype).bits // 8)   # 浮点数的结果也算对


def kv_by_shape(n, d, num_layers, dtype):
    return int(np.prod((num_layers, 2, n, d), dtype=np.int64)) * np.dtype(dtype).itemsize   # 缓存数组的形状


@pytest.mark.parametrize("fn", [kv_float, kv_by_shape, tl.costs.kv_cache_bytes])
def test_kv_cache_bytes_correct_variants_pass(fn):
    assert_status("kv_cache_bytes", fn, "passed")


def test_kv_cache_bytes_hard_coded_float16_is_explained_not_diagnosed():
    fb = tl.exercises.check("kv_cache_bytes", lambda n, d, num_layers, dtype: 2 * n * d * 2 * num_layers)
    assert (fb.status, fb.diagnosis) == ("failed", None) and "768" in fb.message   # 手算：2 × 6 × 8 × 8 字节
    assert tl.exercises.exercise("kv_cache_bytes").solution(8192, 4096, 32, np.dtype("float16")) == 4 * 2**30
