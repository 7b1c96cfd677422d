"""规则的性质测试（issue 8 第 7 条）：有限的合法输入，无论量级（1e±300、float32 的极值），
要么得到有限且正确的结果，要么得到写明"溢出"的中文 ValueError；从不发 RuntimeWarning，从不悄悄给 NaN。

每个核心函数一个测试。输入的生成方式：一个共同的量级 10^e（e 覆盖整个浮点范围）乘以 [-10, 10] 里的数，
或者直接取整个浮点范围里的任意有限数（Hypothesis 偏爱极值：最大的有限数、最小的次正规数、±0）。
正确性用与量级无关的关系检查：softmax 每行和为 1、权重非负；余弦相似度在 [-1, 1] 内、与先缩放再算的参考值一致；
点积与 math.fsum 的参考值一致；注意力输出落在 v 的取值范围内（加权平均）。
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import transformer_lab as tl
from transformer_lab.core import attention, multihead, qkv, rnn, similarity

CHINESE = re.compile(r"[\u4e00-\u9fff]")
FLOAT_RANGE = {np.float64: (-300, 300), np.float32: (-44, 37)}  # 10^e 的 e；float32 的 10^37 × 10 仍在范围内


def any_magnitude(shape, dtype=np.float64):
    """形状为 ``shape`` 的有限数组：共同量级 10^e × [-10, 10]，或整个浮点范围里的任意有限数。"""
    lo, hi = FLOAT_RANGE[dtype]
    width = 32 if dtype == np.float32 else 64
    base = hnp.arrays(np.float64, shape, elements=st.floats(-9.99, 9.99, allow_nan=False))
    scaled = st.builds(lambda b, e: (b * 10.0**e).astype(dtype), base, st.integers(lo, hi))
    wild = hnp.arrays(dtype, shape, elements=st.floats(allow_nan=False, allow_infinity=False, width=width))
    return st.one_of(scaled, wild)


DTYPES = st.sampled_from([np.float64, np.float32])


def finite_or_overflow_error(fn, *args, **kwargs):
    """调用 ``fn``：把警告当错误；要么返回（全部有限的）结果，要么抛出写明"溢出"的中文 ValueError（返回 None）。"""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            out = fn(*args, **kwargs)
        except ValueError as exc:
            assert type(exc) is ValueError and CHINESE.search(str(exc)) and "溢出" in str(exc), str(exc)
            return None
    for part in out if isinstance(out, tuple) else (out,):
        assert np.all(np.isfinite(part)), f"有限输入得到了非有限结果：{part}"
    return out


@given(DTYPES.flatmap(lambda dt: any_magnitude((3, 4), dt)))
def test_softmax_any_magnitude(x):
    out = finite_or_overflow_error(tl.softmax, x)
    assert out is not None, "softmax 不该溢出：减去最大值后 e^x ≤ 1"
    assert out.dtype == x.dtype
    assert np.all(out >= 0)
    np.testing.assert_allclose(out.sum(axis=-1), 1.0, rtol=1e-5)
    bigger = x[:, :, None] > x[:, None, :]  # 分数大的，权重不会更小（单调）
    assert np.all(~bigger | (out[:, :, None] >= out[:, None, :]))


@given(DTYPES.flatmap(lambda dt: st.tuples(any_magnitude((2, 3), dt), any_magnitude((4, 3), dt),
                                           any_magnitude((4, 2), dt))))
def test_attention_any_magnitude(qkv_):
    q, k, v = qkv_
    res = finite_or_overflow_error(tl.scaled_dot_product_attention, q, k, v)
    if res is None:  # 只有分数真的超出范围才可以报错
        with np.errstate(over="ignore", invalid="ignore"):
            exact = q.astype(np.float64) @ k.T.astype(np.float64) / np.sqrt(3)
        assert not np.all(np.abs(exact) < float(np.finfo(q.dtype).max) / 4), "分数远在范围内却报了溢出"
        return
    out, w = res
    assert out.dtype == w.dtype == q.dtype
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=1e-5)
    # 加权平均落在 v 每一列的 [最小, 最大] 之内（留一点舍入余量）。次正规数（如 5e-324）的精度是绝对的：
    # 0.25 × 5e-324 舍入成 0，S 项相加最多差 S 个最小次正规数，所以余量另加这么多。
    lo, hi = v.min(axis=0), v.max(axis=0)
    slack = 1e-5 * np.maximum(np.abs(lo), np.abs(hi)) + v.shape[0] * np.finfo(v.dtype).smallest_subnormal
    with np.errstate(over="ignore"):  # lo − slack 可能越过最大有限数：那就是 -inf，比较照样成立
        assert np.all(out >= lo - slack) and np.all(out <= hi + slack)


@given(DTYPES.flatmap(lambda dt: any_magnitude((3, 4), dt)), st.sampled_from([1, 2, 4]))
def test_split_merge_heads_any_magnitude(x, H):
    split = finite_or_overflow_error(tl.split_heads, x, H)
    back = finite_or_overflow_error(tl.merge_heads, split)
    np.testing.assert_array_equal(back, x)  # 只搬数，不算数：任何量级都原样还原
    assert not np.shares_memory(back, split) and not np.shares_memory(split, x)


@given(DTYPES.flatmap(lambda dt: st.tuples(any_magnitude((3, 4), dt), any_magnitude((4, 4), dt))))
def test_multi_head_attention_any_magnitude(xw):
    x, w = xw
    res = finite_or_overflow_error(tl.multi_head_attention, x, w, w, w, w, num_heads=2)
    if res is not None:
        np.testing.assert_allclose(res[1].sum(axis=-1), 1.0, rtol=1e-5)


@given(DTYPES.flatmap(lambda dt: st.tuples(any_magnitude((2, 3), dt), any_magnitude((3, 2), dt))))
def test_qkv_projections_any_magnitude(xw):
    x, w = xw
    res = finite_or_overflow_error(qkv.qkv_projections, x, w, w, w)
    if res is not None:
        x64, w64 = x.astype(np.float64), w.astype(np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            ref, size = x64 @ w64, np.abs(x64) @ np.abs(w64)  # 误差界：相消时按 Σ|x||w| 算
        eps = float(np.finfo(x.dtype).eps)
        assert np.all(np.abs(res[0] - ref) <= 4 * eps * size + 100 * float(np.finfo(x.dtype).tiny))


def exact_sum(terms: list[float]) -> float:
    """各项的精确和；各项都有限、和却超出 float64 时（fsum 抛 OverflowError）算作 inf。"""
    if not all(map(math.isfinite, terms)):
        return math.inf
    try:
        return math.fsum(terms)
    except OverflowError:
        return math.inf


@given(DTYPES.flatmap(lambda dt: st.tuples(any_magnitude((3,), dt), any_magnitude((3,), dt))))
@example((np.full(3, 7.74100152e153), np.full(3, 7.74100152e153)))  # 每项 6e307 有限，和 1.8e308 溢出（Hypothesis 找到的）
def test_dot_any_magnitude(ab):
    a, b = ab
    out = finite_or_overflow_error(similarity.dot, a, b)
    with np.errstate(over="ignore", under="ignore"):
        terms = (a.astype(np.float64) * b.astype(np.float64)).tolist()
    exact = exact_sum(terms)
    if out is None:
        assert not abs(exact) < float(np.finfo(a.dtype).max) / 4, "点积远在范围内却报了溢出"
    else:  # 误差界：相对 Σ|a_i b_i|，另加次正规数的绝对精度
        assert abs(float(out) - exact) <= 1e-3 * exact_sum([abs(t) for t in terms]) + 10 * float(np.finfo(a.dtype).tiny)


@given(DTYPES.flatmap(lambda dt: st.tuples(any_magnitude((2, 3), dt), any_magnitude((2, 3), dt))))
def test_cosine_similarity_any_magnitude(ab):
    a, b = ab
    assume(np.all(np.any(a != 0, axis=-1)) and np.all(np.any(b != 0, axis=-1)))  # 零向量有自己的报错（test_similarity.py 的报错表）
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = similarity.cosine_similarity(a, b)  # 非零的有限向量：从不溢出，也从不报错
    assert np.all(np.isfinite(out)) and np.all(np.abs(out) <= 1.0)
    assert np.all(np.isfinite(np.arccos(out)))
    # 参考值：每个向量先除以自己的最大分量（Python float，逐个算），再算余弦
    for i in range(2):
        ua = [float(t) / float(np.max(np.abs(a[i]))) for t in a[i]]
        ub = [float(t) / float(np.max(np.abs(b[i]))) for t in b[i]]
        norms = math.sqrt(math.fsum(p * p for p in ua) * math.fsum(q * q for q in ub))
        ref = math.fsum(p * q for p, q in zip(ua, ub)) / norms
        assert abs(out[i] - ref) <= (1e-5 if a.dtype == np.float32 else 1e-12)


@given(st.sampled_from([np.float64, np.float32]).flatmap(lambda dt: st.tuples(
    any_magnitude((4, 2), dt), any_magnitude((2, 3), dt), any_magnitude((3, 3), dt))))
def test_rnn_forward_any_magnitude(xww):
    x, w_xh, w_hh = xww
    out = finite_or_overflow_error(tl.rnn_forward, x, w_xh, w_hh)
    if out is not None:
        assert np.all(np.abs(out) <= 1.0)  # tanh 的值域


@given(any_magnitude((3, 1)), any_magnitude((1, 2)), any_magnitude((2, 2)), st.booleans())
def test_input_jacobians_any_magnitude(x, w_xh, w_hh, linear):
    res = finite_or_overflow_error(rnn.input_jacobians, x, w_xh, w_hh, linear=linear)
    if res is not None:
        np.testing.assert_array_equal(res[1][0, 1:], 0.0)  # 后面的词影响不了前面


@given(st.floats(min_value=1e-300, max_value=1e300))
def test_orthogonal_recurrent_weights_any_gain(gain):
    w = finite_or_overflow_error(rnn.orthogonal_recurrent_weights, 3, gain, np.random.default_rng(0))
    np.testing.assert_allclose(np.linalg.svd(w / gain, compute_uv=False), 1.0, rtol=1e-9)


@given(st.integers(1, 5), st.integers(1, 5), st.integers(1, 5))
def test_integer_arguments_give_finite_arrays(T, d_in, d_h):
    rng = np.random.default_rng(0)
    finite_or_overflow_error(attention.causal_mask, T)
    finite_or_overflow_error(rnn.random_rnn, T, d_in, d_h, rng)
    finite_or_overflow_error(qkv.init_qkv_weights, d_in, d_h, rng)


@pytest.mark.parametrize("fn, args", [
    (tl.softmax, (np.array([1e308, -1e308]),)),  # 差值 2e308 溢出成 -inf：e^-inf = 0 是对的，不该有警告
    (similarity.cosine_similarity, (np.full(3, 1e-200), np.full(3, 2e-200))),  # 平方会下溢成 0
    (similarity.cosine_similarity, (np.full(3, 1e20, np.float32), np.full(3, 2e20, np.float32))),  # 平方会溢出
    (similarity.cosine_similarity, (np.array([0.1, 0.2, 0.7]), np.array([0.1, 0.2, 0.7]))),  # 舍入可能 > 1
    (multihead.merge_heads, (np.ones((1, 2, 3)),)),
])
def test_edge_cases_are_finite_and_exact_where_known(fn, args):
    out = finite_or_overflow_error(fn, *args)
    if fn is similarity.cosine_similarity:
        assert -1.0 <= out <= 1.0 and abs(out - 1.0) < 1e-6  # 三组都是同方向的向量
    elif fn is tl.softmax:
        np.testing.assert_array_equal(out, [1.0, 0.0])
    else:  # merge_heads 只搬数：一个头 (H=1, T=2, d_k=3) 拼回 (T=2, D=3)，数一个不差
        np.testing.assert_array_equal(out, np.ones((2, 3)))


@pytest.mark.parametrize("make", [
    lambda: np.matrix([[1.0, 2.0], [3.0, 4.0]]),
    lambda: np.array([[1.0, 2.0], [3.0, 4.0]]).view(np.recarray),
], ids=["matrix", "recarray"])
def test_ndarray_subclasses_are_converted(make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)  # np.matrix 自己的弃用提示
        x = make()
    plain = np.array([[1.0, 2.0], [3.0, 4.0]])
    sdpa = tl.scaled_dot_product_attention
    for got, want in [(tl.softmax(x), tl.softmax(plain)), (sdpa(x, x, x)[0], sdpa(plain, plain, plain)[0])]:
        assert type(got) is np.ndarray
        np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- 第 5、7、8 章的 core 函数：同一条规则


@given(DTYPES.flatmap(lambda dt: st.tuples(any_magnitude((5, 4), dt), any_magnitude((7, 4), dt),
                                           any_magnitude((7, 3), dt))), st.sampled_from([1, 3, 128]),
       st.booleans())
def test_tiled_attention_any_magnitude(qkv_, block_size, causal):
    q, k, v = qkv_
    out = finite_or_overflow_error(tl.tiled_attention, q, k, v, block_size=block_size, causal=causal)
    if out is not None:  # 加权平均：落在 v 每一列的取值范围里（留出舍入误差；边界本身可能接近浮点上限）
        lo, hi = v.min(axis=0), v.max(axis=0)
        with np.errstate(over="ignore"):
            assert np.all((out >= lo) | np.isclose(out, lo, rtol=1e-5, atol=1e-300))
            assert np.all((out <= hi) | np.isclose(out, hi, rtol=1e-5, atol=1e-300))


@given(DTYPES.flatmap(lambda dt: st.tuples(any_magnitude((3, 4), dt), any_magnitude((4, 2), dt),
                                           any_magnitude((3, 2), dt))))
def test_linear_backward_any_magnitude(args):
    finite_or_overflow_error(tl.linear_backward, *args)


@given(DTYPES.flatmap(lambda dt: st.tuples(any_magnitude((3, 4), dt), any_magnitude((4, 6), dt),
                                           any_magnitude((6, 4), dt))))
def test_feed_forward_any_magnitude(args):
    x, w_1, w_2 = args
    finite_or_overflow_error(tl.feed_forward, x, w_1, np.zeros(6, x.dtype), w_2, np.zeros(4, x.dtype))


@given(DTYPES.flatmap(lambda dt: any_magnitude((3, 5), dt)))
def test_layer_norm_any_magnitude(x):
    out = finite_or_overflow_error(tl.layer_norm, x, np.ones(5, x.dtype), np.zeros(5, x.dtype))
    assert out is not None, "LayerNorm 先按每行的最大绝对值缩放，不该溢出"
    assert np.all(np.abs(out) <= np.sqrt(5) + 1e-3)  # 标准化后每个数的绝对值不超过 √(D-1) < √D


_MAX = np.finfo(np.float64).max
# hypothesis 找到过的反例：三个位置的 -log 概率都是 1.8e308，各除以 3 再相加，舍入后超出上限（以前报 RuntimeWarning）
_ALL_AT_THE_LIMIT = np.where(np.eye(3, 6, k=0, dtype=bool)[[1, 0, 1]], 0.0, -_MAX)


@given(DTYPES.flatmap(lambda dt: any_magnitude((3, 6), dt)), st.lists(st.integers(0, 5), min_size=3, max_size=3))
@example(_ALL_AT_THE_LIMIT, [0, 1, 0])
def test_cross_entropy_any_magnitude(logits, targets):
    targets = np.array(targets)
    loss = finite_or_overflow_error(tl.cross_entropy, logits, targets)
    if loss is not None:
        assert loss >= 0
    grad = finite_or_overflow_error(tl.cross_entropy_backward, logits, targets)
    assert grad is not None  # softmax − onehot 永远在 [-1, 1] 里
