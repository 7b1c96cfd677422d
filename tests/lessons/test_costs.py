"""lessons/costs.py：乘加次数——手算、逐个数的参考循环、n·d² 与 n²·d 的性质。"""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.lessons import costs



def _count_rnn(T, d_in, d_h):
    return sum(d_in + d_h for _ in range(T) for _ in range(d_h))


def _count_attention(T, S, d_k, d_v):
    return sum(d_k + d_v for _ in range(T) for _ in range(S))


def test_multiply_adds_by_hand():
    assert costs.rnn_multiply_adds(3, 4, 4) == 96  # 3 × (16 + 16)
    assert costs.rnn_multiply_adds(3, 2, 4) == 72  # 3 × (8 + 16)
    assert costs.attention_multiply_adds(3, 4) == 72  # 9 × (4 + 4)
    assert costs.attention_multiply_adds(1, 4, S=100) == 800
    assert costs.attention_multiply_adds(2, 3, d_v=5, S=7) == 2 * 7 * 8


@given(st.integers(1, 12), st.integers(1, 12), st.integers(1, 12), st.integers(1, 12), st.integers(1, 12))
def test_multiply_adds_match_counting_loops(T, S, d_in, d_h, d_v):
    assert costs.rnn_multiply_adds(T, d_in, d_h) == _count_rnn(T, d_in, d_h)
    assert costs.attention_multiply_adds(T, d_h, d_v=d_v, S=S) == _count_attention(T, S, d_h, d_v)
    assert costs.attention_multiply_adds(T, d_h) == _count_attention(T, T, d_h, d_h)


@given(st.integers(1, 10_000), st.integers(1, 2048))
def test_costs_scale_as_n_d2_and_n2_d(T, d):
    r, a = costs.rnn_multiply_adds(T, d, d), costs.attention_multiply_adds(T, d)
    assert r == 2 * T * d * d and a == 2 * T * T * d
    assert costs.rnn_multiply_adds(2 * T, d, d) == 2 * r  # 句子翻倍：RNN 翻倍
    assert costs.attention_multiply_adds(2 * T, d) == 4 * a  # 注意力变 4 倍
    assert (a > r) == (T > d)  # T = d 时正好一样多


def test_counting_convention_matches_what_a_matrix_product_does():
    """包里的计数约定与矩阵乘法一致：元素全换成 1，q kᵀ 与 weights v 的结果之和就是乘加次数。"""
    T, d = 5, 3
    ones = np.ones((T, d))
    done = (ones @ ones.T).sum() + (np.ones((T, T)) @ ones).sum()  # 分数 T·T·d 次 + 加权和 T·T·d 次
    assert costs.attention_multiply_adds(T, d) == done
    h, x_t = np.ones(d), np.ones(d)
    assert costs.rnn_multiply_adds(1, d, d) == (x_t @ np.ones((d, d))).sum() + (h @ np.ones((d, d))).sum()
