"""lessons/long_context.py：滑动窗口掩码、线性注意力的两种写法。参照：逐元素的循环、两种写法互相核对、手算。"""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.core.attention import causal_mask
from transformer_lab.lessons import long_context as lc

from conftest import error_table_test


def test_sliding_window_by_hand():
    expected = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1]], dtype=bool)
    np.testing.assert_array_equal(lc.sliding_window_mask(3, 2), expected)


@given(st.integers(1, 20), st.integers(1, 25))
def test_sliding_window_matches_loop_and_limits(T, window):
    mask = lc.sliding_window_mask(T, window)
    loop = np.array([[i - window < j <= i for j in range(T)] for i in range(T)])
    np.testing.assert_array_equal(mask, loop)
    assert np.all(mask.sum(axis=1) == np.minimum(np.arange(T) + 1, window))  # 每行最多 window 个
    assert np.all(mask <= causal_mask(T))  # 是因果掩码的一部分
    if window >= T:
        np.testing.assert_array_equal(mask, causal_mask(T))


def test_feature_map_by_hand_and_positive():
    np.testing.assert_allclose(lc.feature_map(np.array([-1.0, 0.0, 2.0])), [np.exp(-1), 1.0, 3.0])
    assert np.all(lc.feature_map(np.array([-700.0, 700.0])) > 0)


def test_linear_attention_by_hand():
    # 两个词，d = 1：φ(0) = 1，所以第 2 个词对两个键权重相同，输出是两个值的平均。
    q, k, v = np.zeros((2, 1)), np.zeros((2, 1)), np.array([[1.0], [3.0]])
    np.testing.assert_allclose(lc.linear_attention(q, k, v), [[1.0], [2.0]])


@given(st.integers(1, 8), st.integers(1, 4), st.integers(1, 3), st.integers(0, 2**32 - 1))
def test_linear_attention_recurrent_equals_batched_and_loop(T, d_k, d_v, seed):
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(T, d_k)), rng.normal(size=(T, d_k)), rng.normal(size=(T, d_v))
    fq, fk = lc.feature_map(q), lc.feature_map(k)
    loop = np.array([sum((fq[i] @ fk[j]) * v[j] for j in range(i + 1)) / sum(fq[i] @ fk[j] for j in range(i + 1))
                     for i in range(T)])
    np.testing.assert_allclose(lc.linear_attention(q, k, v), loop, rtol=1e-10)
    np.testing.assert_allclose(lc.linear_attention_recurrent(q, k, v), loop, rtol=1e-10)


VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("window-zero", lambda: lc.sliding_window_mask(4, 0), VE, r"window 必须是正整数.*收到的是 0"),
    ("window-float", lambda: lc.sliding_window_mask(4, 2.0), TE, r"window 必须是正整数.*float 2\.0"),
    ("window-T-bool", lambda: lc.sliding_window_mask(True, 2), TE, r"T 必须是正整数.*bool"),
    ("linear-shape", lambda: lc.linear_attention(np.ones((3, 2)), np.ones((3, 4)), np.ones((3, 2))), VE,
     r"q 与 k 形状相同.*k\.shape=\(3, 4\)"),
    ("linear-v-count", lambda: lc.linear_attention_recurrent(np.ones((3, 2)), np.ones((3, 2)), np.ones((2, 2))), VE,
     r"v 的词数 T 也相同.*v\.shape=\(2, 2\)"),
    ("linear-nan", lambda: lc.linear_attention(np.full((2, 2), np.nan), np.ones((2, 2)), np.ones((2, 2))), VE,
     r"q 含有 NaN"),
    ("feature-list", lambda: lc.feature_map([1.0]), TE, r"x 必须是 NumPy 数组"),
]

test_documented_errors = error_table_test(ERROR_CASES)
