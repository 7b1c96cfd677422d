"""lessons/long_context.py：滑动窗口掩码、线性注意力的两种写法。参照：逐元素的循环、两种写法互相核对、手算。"""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from transformer_lab.core.attention import causal_mask
from transformer_lab.lessons import long_context as lc

from helpers.errors import error_table_test


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
    # 输出是 v 的加权平均（大小和 v 一样，约为 1）：三种算法的求和次序不同，正负相消后接近 0 的分量只能比绝对误差
    # （Hypothesis 找到过 -4.9e-7 处相对误差 1.5e-10、绝对误差 7e-17 的例子）
    np.testing.assert_allclose(lc.linear_attention(q, k, v), loop, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(lc.linear_attention_recurrent(q, k, v), loop, rtol=1e-10, atol=1e-12)


def _log_space_reference(q, k, v):
    """独立的参照：逐个元素在对数空间里算 log(φ(q_id) φ(k_jd))，用分数 (Fraction) 精确相加、减去每行的最大值，
    之后才取指数（1e300 加 690 也不会被舍入吃掉），再做加权平均。"""
    def log_phi(x):
        return Fraction(math.log1p(x) if x > 0 else x)

    out = []
    for i in range(len(q)):
        terms = [[log_phi(a) + log_phi(b) for a, b in zip(q[i], k[j])] for j in range(i + 1)]  # (i + 1, d_k)
        top = max(max(row) for row in terms)
        w = [sum(math.exp(float(max(t - top, -800))) for t in row) for row in terms]  # (i + 1,)；e^-800 已是 0
        p = [wj / sum(w) for wj in w]  # 先归一化：1e308 量级的 v 乘 2 也不会上溢
        out.append([sum(pj * v[j][c] for j, pj in enumerate(p)) for c in range(len(v[0]))])
    return np.array(out)


# 0/0 的两种来路：很负的输入让 φ = e^x 下溢成 0；很大的输入让 φ(q)·φ(k) 上溢成 inf。
FRAGILE = [("negative", -1000.0, 0.0), ("very-negative", -1e300, 0.0), ("huge", 0.0, 1e300), ("mixed", -800.0, 1e200)]


@pytest.mark.parametrize("fn", [lc.linear_attention, lc.linear_attention_recurrent])
@pytest.mark.parametrize("label, shift, spread", FRAGILE, ids=[f[0] for f in FRAGILE])
def test_linear_attention_fragile_inputs_match_log_space_reference(fn, label, shift, spread):
    rng = np.random.default_rng(3)
    q, k = (shift + spread * rng.normal(size=(5, 3)) + rng.normal(size=(5, 3)) for _ in range(2))
    v = rng.normal(size=(5, 2))
    copies = [a.copy() for a in (q, k, v)]
    out = fn(q, k, v)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, _log_space_reference(q.tolist(), k.tolist(), v.tolist()), rtol=1e-9, atol=1e-12)
    for a, b in zip((q, k, v), copies):
        np.testing.assert_array_equal(a, b)  # 输入没有被改


def test_linear_attention_underflow_by_hand():
    # φ(-1000) = e^-1000 在 float64 里是 0：直接算是 0/0。两个键一样像，第 2 行应是两个值的平均。
    q = k = np.full((2, 1), -1000.0)
    v = np.array([[1.0], [3.0]])
    assert np.all(lc.feature_map(q) == 0)  # 直接算的前提确实坏了
    for fn in (lc.linear_attention, lc.linear_attention_recurrent):
        np.testing.assert_allclose(fn(q, k, v), [[1.0], [2.0]])


def test_linear_attention_huge_values_by_hand():
    # 输出是 v 的加权平均：v 接近 float64 上限时也不能在求和时上溢
    q = k = np.zeros((2, 1))
    v = np.array([[1.7e308], [1.7e308]])
    for fn in (lc.linear_attention, lc.linear_attention_recurrent):
        np.testing.assert_allclose(fn(q, k, v), v)


def test_linear_attention_keeps_small_log_differences_next_to_huge_ones():
    # log φ(q) = -1e250 在每一维；键 0 在第 1 维 log φ = 0，键 4 在第 2 维 log φ = log(1 + 1e250) ≈ 575.6：
    # 第 4 行的权重之比是 e^575.6，输出应几乎全是 v_4 = 1。朴素地把 -1e250 与 575.6 相加，575.6 会被舍入吃掉（得到 0.5）。
    q = np.full((5, 4), -1e250)
    k = np.full((5, 4), -1e250)
    k[0, :2], k[4, 2] = (-1.9e112, 0.0), 1e250
    v = np.array([[0.0], [1.0], [1.0], [1.0], [1.0]])
    for fn in (lc.linear_attention, lc.linear_attention_recurrent):
        np.testing.assert_allclose(fn(q, k, v)[4], [1.0], rtol=1e-12)


def test_log_space_reference_can_fail():
    # 反例：参照确实在检查——把一个值改掉，输出就对不上
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(3, 2)), rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    ref = _log_space_reference(q.tolist(), k.tolist(), (v + np.eye(3, 2)).tolist())
    assert not np.allclose(lc.linear_attention(q, k, v), ref, rtol=1e-9)


finite = st.floats(-1.0, 1.0, allow_nan=False)
scales = st.sampled_from([1.0, 1e3, 1e100, 1e250, 1e300, 1.7e308])


@given(st.integers(1, 6), st.integers(1, 4), st.integers(1, 3), st.data(), scales, scales)
def test_linear_attention_recurrent_equals_batched_and_finite_on_scaled_inputs(T, d_k, d_v, data, scale_qk, scale_v):
    q = data.draw(arrays(np.float64, (T, d_k), elements=finite)) * scale_qk
    k = data.draw(arrays(np.float64, (T, d_k), elements=finite)) * scale_qk
    v = data.draw(arrays(np.float64, (T, d_v), elements=finite)) * scale_v
    batched, recurrent = lc.linear_attention(q, k, v), lc.linear_attention_recurrent(q, k, v)
    assert np.all(np.isfinite(batched)) and np.all(np.isfinite(recurrent))
    # 加权平均：每一列都落在 v 的范围里，只差舍入——正常的数按相对误差；一列全是次正规数（小于 2.2e-308，
    # Hypothesis 找到过 2.2e-310）时舍入按绝对误差算，按整个 v 的大小和最小的次正规数放宽
    vmax = float(np.max(np.abs(v)))
    bound = np.max(np.abs(v), axis=0) * (1 + 1e-12) + 1e-12 * vmax + 16 * np.finfo(np.float64).smallest_subnormal
    assert np.all(np.abs(batched) <= bound) and np.all(np.abs(recurrent) <= bound)
    atol = 1e-12 * vmax
    np.testing.assert_allclose(recurrent, batched, rtol=1e-9, atol=atol)
    np.testing.assert_allclose(batched, _log_space_reference(q.tolist(), k.tolist(), v.tolist()), rtol=1e-9, atol=atol)


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
    ("log-feature-list", lambda: lc.log_feature_map([1.0]), TE, r"x 必须是 NumPy 数组"),
    ("linear-memory", lambda: lc.linear_attention(np.ones((10**5, 1)), np.ones((10**5, 1)), np.ones((10**5, 1))), VE,
     r"T × T × d_k 中间表（T=100000, d_k=1） 要占 74\.5 GiB"),
    ("window-memory", lambda: lc.sliding_window_mask(10**6, 3), VE, r"T × T 的掩码（T=1000000） 要占 7\.45e\+03 GiB"),
    ("recurrent-too-long", lambda: lc.linear_attention_recurrent(np.ones((10**5 + 1, 1)), np.ones((10**5 + 1, 1)),
                                                                 np.ones((10**5 + 1, 1))), VE, r"T=100001 太大：RNN 写法.*上限是 100000"),
]

test_documented_errors = error_table_test(ERROR_CASES)
