"""lessons/memory.py：字节数——一张分数表、KV 缓存各占多少内存，每个数几个字节。手算的例子、与真数组的 nbytes 对照、
以及文档里写明的报错。"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.lessons.memory import FLOATS, MAX_N, itemsize, kv_cache_bytes, score_matrix_bytes

from helpers.errors import call, error_table_test


def test_itemsize_accepts_names_and_numpy_types():
    assert [itemsize(name) for name in FLOATS] == [8, 4, 2]
    assert [itemsize(t) for t in (np.float64, np.float32, np.float16)] == [8, 4, 2]
    assert itemsize(np.dtype("float32")) == 4


def test_score_matrix_bytes_by_hand():
    assert score_matrix_bytes(1024, "float32") == 4 * 2**20  # 1024² × 4 字节 = 4 MiB
    assert score_matrix_bytes(131072, "float16") == 32 * 2**30  # 128k 上下文一个头：32 GiB
    assert score_matrix_bytes(3, "float64", heads=2) == 9 * 8 * 2
    assert score_matrix_bytes(MAX_N, np.float16) == 2 * 2**40  # 计算器的上限：一百万个词，2 TiB


def test_kv_cache_bytes_by_hand():
    assert kv_cache_bytes(1024, 256, num_layers=2, dtype=np.float32) == 2 * 2 * 1024 * 256 * 4
    assert kv_cache_bytes(10, 8, dtype=np.float64) == 2 * 10 * 8 * 8
    # 2 (k, v) × 32 层 × 8192 词 × 4096 × 2 字节 = 4 GiB（第 7 章的例子）
    assert kv_cache_bytes(8192, 4096, num_layers=32, dtype=np.float16) == 4 * 2**30
    assert 2 * kv_cache_bytes(10, 8, dtype=np.float16) == kv_cache_bytes(10, 8, dtype=np.float32)


@given(st.integers(1, 40), st.integers(1, 3), st.sampled_from(FLOATS))
def test_counts_match_the_nbytes_of_real_arrays(n, heads, dtype):
    """独立的参照：真的建出这些数组，NumPy 数的 nbytes 与公式一样。"""
    assert score_matrix_bytes(n, dtype, heads) == np.zeros((heads, n, n), dtype=dtype).nbytes
    layers, d_model = heads, n + 1
    cache = [np.zeros((2, n, d_model), dtype=dtype) for _ in range(layers)]  # 每层的 k、v
    assert kv_cache_bytes(n, d_model, num_layers=layers, dtype=dtype) == sum(a.nbytes for a in cache)


@pytest.mark.parametrize("dtype", ["float32", np.float32])
def test_dtype_name_and_type_give_the_same_count(dtype):
    assert kv_cache_bytes(7, 3, dtype=dtype) == 2 * 7 * 3 * 4


VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("itemsize-int8", call(itemsize, "int8"), VE, r"^dtype 必须是 float64、float32、float16 之一.*'int8'"),
    ("itemsize-number", call(itemsize, 4), VE, r"^dtype 必须是.*收到的是 4"),
    ("itemsize-bool", call(itemsize, True), VE, r"^dtype 必须是.*True"),
    ("scores-dtype", call(score_matrix_bytes, 4, "int8"), VE, r"dtype 必须是 float64、float32、float16 之一.*'int8'"),
    ("scores-dtype-junk", call(score_matrix_bytes, 4, "浮点"), VE, r"dtype 必须是.*'浮点'"),
    ("scores-heads-zero", call(score_matrix_bytes, 4, heads=0), VE, r"heads 必须是正整数"),
    ("scores-n-too-big", call(score_matrix_bytes, MAX_N + 1), VE, r"n 必须在 \[1, 1048576\] 之内.*1048577"),
    ("scores-n-float", call(score_matrix_bytes, 4.0), TE, r"n 必须是正整数.*float"),
    ("bytes-layers-zero", call(kv_cache_bytes, 4, 4, num_layers=0), VE, r"num_layers 必须是正整数.*收到的是 0"),
    ("bytes-dtype-int", call(kv_cache_bytes, 4, 4, dtype=np.int8), VE, r"dtype 必须是 float64、float32、float16 之一.*int8"),
    ("bytes-n-float", call(kv_cache_bytes, 2.5, 4), TE, r"n 必须是正整数.*2\.5"),
]
test_documented_errors = error_table_test(ERROR_CASES)
