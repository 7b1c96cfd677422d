"""lessons/costs.py：全书的数数——乘加次数、参数个数（含多头注意力、逐词生成）；字节数在 test_memory.py。

手算、逐个数的参考循环、n·d² 与 n²·d 的性质，``layer_costs`` 里的字节数与 memory.py 一致，以及文档里写明的报错。
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.lessons import costs
from transformer_lab.lessons.costs import decode_multiply_adds, multi_head_multiply_adds, multi_head_parameters

from helpers.errors import call, error_table_test


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


# ---- 第 7 章的计算器

def test_chapter7_costs_by_hand():
    assert costs.feedforward_multiply_adds(4, 2) == 4 * (2 * 8 + 8 * 2)  # d_ff = 4d
    assert costs.feedforward_multiply_adds(3, 2, d_ff=5) == 3 * (2 * 5 + 5 * 2)
    c = costs.layer_costs(4, 2)
    assert c == {"attention": 64, "projections": 4 * 4 * 2 * 2, "feedforward": 128, "rnn": 32,  # 4nd²
                 "scores_float32": 64, "scores_float16": 32}


def _count_feedforward(T, d_model, d_ff):
    """逐个数：每个词先 d_model → d_ff（d_ff 个输出，各 d_model 次），再 d_ff → d_model。"""
    return sum(d_model for _ in range(T) for _ in range(d_ff)) + sum(d_ff for _ in range(T) for _ in range(d_model))


@given(st.integers(1, 10), st.integers(1, 10), st.integers(1, 12))
def test_feedforward_matches_counting_loop(T, d, d_ff):
    assert costs.feedforward_multiply_adds(T, d, d_ff) == _count_feedforward(T, d, d_ff)


@given(st.integers(1, costs.MAX_N // 2), st.integers(1, costs.MAX_D))
def test_layer_costs_crossover_and_doubling(n, d):
    c, c2 = costs.layer_costs(n, d), costs.layer_costs(2 * n, d)
    assert (c["attention"] > c["rnn"]) == (n > d) and (c["attention"] == c["rnn"]) == (n == d)
    assert c2["attention"] == 4 * c["attention"]  # 上下文翻倍：注意力正好 ×4
    for key in ("projections", "feedforward", "rnn"):
        assert c2[key] == 2 * c[key]  # 其余只 ×2
    assert c2["scores_float16"] == 4 * c["scores_float16"] and c["scores_float32"] == 2 * c["scores_float16"]
    layer = lambda x: x["attention"] + x["projections"] + x["feedforward"]  # noqa: E731
    assert 2 < layer(c2) / layer(c) < 4
    share = c["attention"] / layer(c)
    assert share == pytest.approx(n / (n + 6 * d), rel=1e-12)  # 注意力的份额 n / (n + 6d)


# ---- 第 7 章：逐词生成

def test_decode_multiply_adds_by_hand_and_by_loop():
    # T = 2, d = 1：不用缓存 (3·1 + 2·1) + (3·2 + 2·4) = 19；用缓存 (3 + 2) + (3 + 4) = 12。
    assert decode_multiply_adds(2, 1, cached=False) == 19
    assert decode_multiply_adds(2, 1, cached=True) == 12
    assert decode_multiply_adds(1, 5, cached=False) == decode_multiply_adds(1, 5, cached=True) == 3 * 25 + 2 * 5
    for T, d in [(3, 2), (10, 4), (256, 64), (1000, 7)]:
        uncached = sum(3 * t * d * d + 2 * t * t * d for t in range(1, T + 1))  # 逐步相加，与公式独立
        cached = sum(3 * d * d + 2 * t * d for t in range(1, T + 1))
        assert decode_multiply_adds(T, d, cached=False) == uncached
        assert decode_multiply_adds(T, d, cached=True) == cached


# ---- 第 5 章：多头注意力的计算量和参数个数与头数无关

@pytest.mark.parametrize("T,D", [(4, 8), (256, 512)])
def test_cost_independent_of_heads(T, D):
    counts = {H: multi_head_multiply_adds(T, D, H) for H in (1, 2, 4, 8)}
    assert len({c["total"] for c in counts.values()}) == 1
    assert counts[1]["attention"] == 2 * T * T * D  # 一个 D 维的头：打分 T·T·D + 加权求和 T·T·D
    assert counts[1]["projections"] == 4 * T * D * D
    assert {multi_head_parameters(D, H) for H in (1, 2, 4, 8)} == {4 * D * D}
    assert multi_head_parameters(D, 8, bias=True) == 4 * D * D + 4 * D


# ---- 字节数搬到了 memory.py：老的写法照样能用

def test_byte_counts_are_still_reachable_from_costs():
    """notebook（第 7 章）和第 7 章的图写的是 ``tl.costs.kv_cache_bytes``、``tl.costs.score_matrix_bytes``。"""
    import transformer_lab as tl
    from transformer_lab.lessons import memory

    for name in ("score_matrix_bytes", "kv_cache_bytes", "MAX_N"):
        assert getattr(tl.costs, name) is getattr(memory, name) and name in costs.__all__
    c = costs.layer_costs(300, 8)
    assert (c["scores_float32"], c["scores_float16"]) == (memory.score_matrix_bytes(300), 300 * 300 * 2)


# ---- 坏输入

VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("layer-n-zero", lambda: costs.layer_costs(0, 4), VE, r"n 必须是正整数.*收到的是 0"),
    ("layer-n-too-big", lambda: costs.layer_costs(costs.MAX_N + 1, 4), VE, r"n 必须在 \[1, 1048576\] 之内.*1048577"),
    ("layer-d-too-big", lambda: costs.layer_costs(4, costs.MAX_D + 1), VE, r"d 必须在 \[1, 65536\] 之内.*65537"),
    ("layer-d-float", lambda: costs.layer_costs(4, 2.0), TE, r"d 必须是正整数.*float 2\.0"),
    ("ffn-d_ff-negative", lambda: costs.feedforward_multiply_adds(4, 2, d_ff=-1), VE, r"d_ff 必须是正整数"),
    ("macs-rnn-0", lambda: costs.rnn_multiply_adds(0, 2, 2), VE, r"T 必须是正整数.*0"),
    ("macs-rnn-d_h-float", lambda: costs.rnn_multiply_adds(2, 2, 2.5), TE, r"d_h 必须是正整数.*2\.5"),
    ("macs-att-S-0", lambda: costs.attention_multiply_adds(2, 4, S=0), VE, r"S 必须是正整数.*0"),
    ("macs-att-d_v-bool", lambda: costs.attention_multiply_adds(2, 4, d_v=True), TE, r"d_v 必须是正整数.*bool"),
    ("mults-T-zero", call(decode_multiply_adds, 0, 4, cached=True), VE, r"T 必须是正整数.*收到的是 0"),
    ("mults-cached-int", call(decode_multiply_adds, 4, 4, cached=1), TE, r"cached 必须是 bool.*int 1"),
    ("cost-divisible", lambda: multi_head_multiply_adds(4, 10, 3), VE, "整除"),
    ("params-divisible", lambda: multi_head_parameters(10, 4), VE, "整除"),
    ("params-type", lambda: multi_head_parameters(8.0, 2), TE, "D"),
]
test_documented_errors = error_table_test(ERROR_CASES)
