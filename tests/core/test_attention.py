"""core/attention.py：softmax、因果掩码、缩放点积注意力。

四类测试：手算的小例子 (书里的数字)、独立的参考实现 (纯 Python 循环)、Hypothesis 性质测试、dtype 与"不改输入"。
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import transformer_lab as tl
from transformer_lab.core.attention import attend
from transformer_lab.core.softmax import softmax_unchecked

FINITE = st.floats(-50, 50, allow_nan=False, allow_infinity=False)
MATRICES = hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, max_side=6), elements=FINITE)


@st.composite
def qkv(draw, dtype=np.float64, self_attention=False):
    """形状互相匹配的 q (T, d_k)、k (S, d_k)、v (S, d_v)；self_attention=True 时 S = T。"""
    T, S, d_k, d_v = (draw(st.integers(1, 5)) for _ in range(4))
    S = T if self_attention else S
    el = st.floats(-50, 50, width=np.dtype(dtype).itemsize * 8)
    arr = lambda shape: draw(hnp.arrays(dtype, shape, elements=el))  # noqa: E731
    return arr((T, d_k)), arr((S, d_k)), arr((S, d_v))


def ref_attention(q, k, v, mask=None, scale=None):
    """参考实现：对每个 (i, j) 用 Python 循环算分数，再逐行 softmax。只支持 2 维输入。"""
    (T, d_k), S = q.shape, k.shape[0]
    scale = 1 / math.sqrt(d_k) if scale is None else scale
    w = np.zeros((T, S))
    for i in range(T):
        scores = [sum(float(q[i, c]) * float(k[j, c]) for c in range(d_k)) * scale for j in range(S)]
        allowed = [mask is None or bool(mask[i, j]) for j in range(S)]
        m = max(s for s, ok in zip(scores, allowed) if ok)
        e = [math.exp(s - m) if ok else 0.0 for s, ok in zip(scores, allowed)]
        w[i] = [ej / sum(e) for ej in e]
    return w @ v, w


# ---------------------------------------------------------------- 1. 手算的例子

def test_softmax_book_example():
    z = math.exp(5) + math.exp(2) + math.exp(0)
    expected = [math.exp(5) / z, math.exp(2) / z, 1 / z]
    got = tl.softmax(np.array([5.0, 2.0, 0.0]))
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    np.testing.assert_allclose(got, [0.9465, 0.0471, 0.0064], atol=5e-5)  # 书里印的 4 位小数


def test_softmax_neg_inf_is_a_blocked_position():
    np.testing.assert_array_equal(tl.softmax(np.array([1.0, 1.0, -np.inf])), [0.5, 0.5, 0.0])


def test_softmax_is_stable_for_huge_scores():
    # 不减最大值的话 e^1000 会溢出成 inf，得到 inf/inf = NaN
    np.testing.assert_array_equal(tl.softmax(np.array([1000.0, 1000.0])), [0.5, 0.5])
    np.testing.assert_allclose(tl.softmax(np.array([-1000.0, 0.0])), [0.0, 1.0], atol=1e-300)


def test_softmax_axis_0_normalises_columns():
    x = np.array([[0.0, 1.0], [math.log(3), 1.0]])
    np.testing.assert_allclose(tl.softmax(x, axis=0), [[0.25, 0.5], [0.75, 0.5]], rtol=1e-12)


def test_causal_mask_literal():
    expected = np.array([[True, False, False], [True, True, False], [True, True, True]])
    got = tl.causal_mask(3)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, expected)


def test_two_token_attention_by_hand():
    # 两个词、d_k = 2：q = k = 单位矩阵，所以分数 = I / √2
    q = k = np.eye(2)
    v = np.array([[1.0, 2.0], [3.0, 4.0]])
    big, small = math.exp(1 / math.sqrt(2)), math.exp(0.0)
    w_self = big / (big + small)  # 每个词最看重自己：≈ 0.6698
    out, w = tl.scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(w, [[w_self, 1 - w_self], [1 - w_self, w_self]], rtol=1e-12)
    np.testing.assert_allclose(out[0], [w_self * 1 + (1 - w_self) * 3, w_self * 2 + (1 - w_self) * 4], rtol=1e-12)
    assert round(w_self, 2) == 0.67
    # 加上因果掩码：第 0 个词只能看自己，输出就是 v[0]
    out, w = tl.scaled_dot_product_attention(q, k, v, mask=tl.causal_mask(2))
    np.testing.assert_array_equal(w[0], [1.0, 0.0])
    np.testing.assert_allclose(out[0], v[0])


def test_mask_blocks_even_a_huge_score():
    # 被掩掉的分数是 +1e10，允许的分数是 -1e10：掩码必须是真正的 -inf，而不是"很小的数"如 -1e9
    q, k, v = np.array([[1e5]]), np.array([[-1e5], [1e5]]), np.array([[1.0], [2.0]])
    out, w = tl.scaled_dot_product_attention(q, k, v, mask=np.array([[True, False]]))
    np.testing.assert_array_equal(w, [[1.0, 0.0]])
    np.testing.assert_array_equal(out, [[1.0]])

# ---------------------------------------------------------------- 2. 独立的参考实现

@pytest.mark.parametrize("use_mask, scale", [(False, None), (True, None), (False, 1.0), (True, 0.3)],
                         ids=["plain", "causal", "scale=1", "causal-scale=0.3"])
def test_attention_matches_loop_reference(use_mask, scale):
    rng = np.random.default_rng(1)
    q, k, v = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    mask = tl.causal_mask(4) if use_mask else None
    out, w = tl.scaled_dot_product_attention(q, k, v, mask=mask, scale=scale)
    ref_out, ref_w = ref_attention(q, k, v, mask, scale)
    np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-15)


def test_attention_batch_dims_and_cross_attention():
    rng = np.random.default_rng(2)
    q, k = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4))  # (B, T, d_k), (B, S, d_k)
    v = rng.normal(size=(5, 2))  # (S, d_v)，在批维度上广播
    mask = rng.random((3, 5)) < 0.6
    mask[:, 0] = True  # 每行至少能看一个位置
    out, w = tl.scaled_dot_product_attention(q, k, v, mask=mask)
    assert out.shape == (2, 3, 2) and w.shape == (2, 3, 5)
    for b in range(2):
        ref_out, ref_w = ref_attention(q[b], k[b], v, mask)
        np.testing.assert_allclose(w[b], ref_w, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(out[b], ref_out, rtol=1e-12, atol=1e-15)


def test_attend_is_the_checked_function_without_checks():
    """``attend``（给包内调用、不查输入）与公开的 scaled_dot_product_attention 算的是同一个东西。"""
    rng = np.random.default_rng(5)
    q, k, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 3))
    mask = np.ones((3, 5), bool)
    mask[:, 3:] = False
    for a, b in zip(attend(q, k, v, mask=mask, scale=0.7), tl.scaled_dot_product_attention(q, k, v, mask=mask, scale=0.7)):
        np.testing.assert_array_equal(a, b)
    x = rng.normal(size=(3, 4))
    np.testing.assert_array_equal(softmax_unchecked(x, axis=0), tl.softmax(x, axis=0))


# ---------------------------------------------------------------- 3. 性质测试

@given(MATRICES, st.data())
def test_softmax_rows_are_distributions_and_shift_invariant(x, data):
    p = tl.softmax(x)
    assert np.all((p >= 0) & (p <= 1))
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=1e-12)
    c = data.draw(hnp.arrays(np.float64, (x.shape[0], 1), elements=FINITE))  # 每行加一个常数
    np.testing.assert_allclose(tl.softmax(x + c), p, atol=1e-12)


@given(qkv())
def test_attention_weights_are_distributions_and_output_is_convex(args):
    q, k, v = args
    out, w = tl.scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=1e-12)
    assert np.all(w >= 0)
    tol = 1e-9 * (1 + np.abs(v).max())
    assert np.all(out >= v.min(axis=0) - tol) and np.all(out <= v.max(axis=0) + tol)  # 加权平均落在 v 的范围内


@given(qkv(self_attention=True))  # 因果掩码只对自注意力 (T == S) 有意义
def test_causal_weights_are_exactly_zero_above_diagonal(args):
    q, k, v = args
    _, w = tl.scaled_dot_product_attention(q, k, v, mask=tl.causal_mask(q.shape[0]))
    assert np.all(np.triu(w, k=1) == 0.0)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=1e-12)


@given(qkv())
def test_default_scale_is_one_over_sqrt_d_k(args):
    q, k, v = args
    default = tl.scaled_dot_product_attention(q, k, v)
    explicit = tl.scaled_dot_product_attention(q, k, v, scale=1 / math.sqrt(q.shape[-1]))
    for a, b in zip(default, explicit):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@given(qkv(), st.booleans())
def test_inputs_are_never_modified(args, use_mask):
    q, k, v = args
    mask = np.ones((q.shape[0], k.shape[0]), dtype=bool) if use_mask else None
    before = [a.copy() for a in (q, k, v)]
    tl.scaled_dot_product_attention(q, k, v, mask=mask)
    tl.softmax(q)
    for a, b in zip((q, k, v), before):
        np.testing.assert_array_equal(a, b)
    x = np.array([1.0, -np.inf, 2.0])
    tl.softmax(x)
    np.testing.assert_array_equal(x, [1.0, -np.inf, 2.0])


# ---------------------------------------------------------------- 4. dtype：float32 留 float32，float64 留 float64，整数变 float64

def _arr(shape, dtype, seed=0):
    a = np.random.default_rng(seed).uniform(-3, 3, size=shape)
    return a.astype(dtype) if np.dtype(dtype).kind == "f" else np.round(a).astype(dtype)


DTYPE_CASES = [
    ("softmax", lambda dt: [tl.softmax(_arr((3, 4), dt))]),
    ("sdpa-scale=1", lambda dt: tl.scaled_dot_product_attention(*(_arr((3, 4), dt, s) for s in range(3)), scale=1.0)),
    ("sdpa-default-scale", lambda dt: tl.scaled_dot_product_attention(*(_arr((3, 4), dt, s) for s in range(3)))),
]
DTYPE_PARAMS = [
    pytest.param(fn, dt, expected, id=f"{name}-{np.dtype(dt).name}")
    for name, fn in DTYPE_CASES
    for dt, expected in [(np.float32, np.float32), (np.float64, np.float64), (np.int64, np.float64)]
] + [
    pytest.param(fn, dt, np.float64, id=f"{name}-{np.dtype(dt).name}")
    for name, fn in DTYPE_CASES[:2]  # softmax 有自己的转换，sdpa 走 as_real_array：两条路都查
    for dt in (np.int32, np.int16, np.int8, np.uint8)
]


@pytest.mark.parametrize("fn, dtype, expected", DTYPE_PARAMS)
def test_output_dtype(fn, dtype, expected):
    for out in fn(dtype):
        assert out.dtype == expected


def test_mixed_float32_float64_gives_float64():
    out, w = tl.scaled_dot_product_attention(_arr((3, 4), np.float32), _arr((3, 4), np.float64), _arr((3, 4), np.float32),
                                             scale=1.0)
    assert out.dtype == w.dtype == np.float64
