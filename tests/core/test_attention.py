"""core/attention.py：因果掩码、缩放点积注意力与它的反向。

四类测试：手算的小例子 (书里的数字)、独立的参考实现 (纯 Python 循环；反向对中心差分)、Hypothesis 性质测试、
dtype 与"不改输入"，以及文档里写明的每一种报错。softmax 本身的测试在 test_softmax.py。
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import transformer_lab as tl
from transformer_lab.core.attention import attend, scaled_dot_product_attention_backward

from helpers.errors import call, error_table_test
from helpers.gradcheck import assert_gradients_close, numeric_gradient


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


# ---------------------------------------------------------------- 3. 性质测试

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
    for a, b in zip((q, k, v), before):
        np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------- 4. dtype：float32 留 float32，float64 留 float64，整数变 float64

def _arr(shape, dtype, seed=0):
    a = np.random.default_rng(seed).uniform(-3, 3, size=shape)
    return a.astype(dtype) if np.dtype(dtype).kind == "f" else np.round(a).astype(dtype)


DTYPE_CASES = [
    ("sdpa-scale=1", lambda dt: tl.scaled_dot_product_attention(*(_arr((3, 4), dt, s) for s in range(3)), scale=1.0)),
    ("sdpa-default-scale", lambda dt: tl.scaled_dot_product_attention(*(_arr((3, 4), dt, s) for s in range(3)))),
]
DTYPE_PARAMS = [
    pytest.param(fn, dt, expected, id=f"{name}-{np.dtype(dt).name}")
    for name, fn in DTYPE_CASES
    for dt, expected in [(np.float32, np.float32), (np.float64, np.float64), (np.int64, np.float64)]
] + [
    pytest.param(fn, dt, np.float64, id=f"{name}-{np.dtype(dt).name}")
    for name, fn in DTYPE_CASES[:1]  # sdpa 走 as_real_array（softmax 自己的转换在 test_softmax.py 里查）
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


# ---------------------------------------------------------------- 5. 反向：中心差分、手算、性质
# 损失取 L = Σ out ⊙ R（R 随机），所以 ∂L/∂out = R。中心差分只调用前向函数。误差取整体的相对误差，分母至少 1e-2：
# 梯度恰好为 0 时（例如只有一个键可看时的 q、k）不拿差分的舍入噪声（约 1e-9）去除以 0，相当于要求绝对误差 ≤ 1e-8。
# 差分步长 1e-5：截断误差 ~ε² ≈ 1e-10，舍入误差 ~|L|·1e-16/ε ≈ 1e-11·|L|。

@st.composite
def attention_cases(draw):
    T, S, d_k, d_v = (draw(st.integers(1, 4)) for _ in range(4))
    batch = tuple(draw(st.lists(st.integers(2, 3), max_size=2)))

    def own_batch():  # 每个输入自己的批维度：batch 的一个后缀，每一维可以是 1（被广播）
        n = draw(st.integers(0, len(batch)))
        return tuple(draw(st.sampled_from([b, 1])) for b in batch[len(batch) - n:])

    qb, kb, vb = own_batch(), own_batch(), own_batch()
    full = np.broadcast_shapes(qb, kb, vb)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["none", "causal", "random"]))
    mask = None
    if kind == "causal":
        mask = np.tril(np.ones((T, S), bool))  # (T, S) 第 i 行至少能看键 0
    elif kind == "random":
        keep = rng.integers(0, S, size=full + (T, 1))  # 每行保证一个 True
        mask = (rng.random(full + (T, S)) < 0.5) | (np.arange(S) == keep)  # (..., T, S)
    scale = draw(st.one_of(st.none(), st.floats(0.1, 3.0)))
    arrays = dict(q=1.5 * rng.normal(size=qb + (T, d_k)), k=1.5 * rng.normal(size=kb + (S, d_k)),
                  v=rng.normal(size=vb + (S, d_v)))
    return arrays, mask, scale, rng.normal(size=full + (T, d_v))


@given(attention_cases())
def test_attention_backward_matches_finite_differences(case):
    arrays, mask, scale, R = case

    def loss(**kw):
        return float(np.sum(tl.scaled_dot_product_attention(**kw, mask=mask, scale=scale)[0] * R))

    grads = scaled_dot_product_attention_backward(**arrays, grad_out=R, mask=mask, scale=scale)
    for name, g in zip("qkv", grads):
        assert g.shape == arrays[name].shape  # 广播过的维度已经加回去
        numeric = numeric_gradient(lambda a, name=name: loss(**(arrays | {name: a})), arrays[name], h=1e-5)
        assert_gradients_close(g, numeric, floor=1e-2, name=name)


def test_one_key_means_weight_one_so_only_v_gets_gradient():
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=(2, 2, 1, 3))  # 每个 (B=2, T=S=1, d_k=3)
    v, G = rng.normal(size=(2, 2, 1, 4))  # 每个 (B=2, S=1, d_v=4)
    g_q, g_k, g_v = scaled_dot_product_attention_backward(q, k, v, G)
    np.testing.assert_array_equal(g_v, G)  # T = S = 1：权重恒为 1，out = v，所以 ∂L/∂v = G
    np.testing.assert_array_equal(g_q, 0.0)  # 权重不随 q、k 变化
    np.testing.assert_array_equal(g_k, 0.0)


def test_two_equal_scores_worked_by_hand():
    # q = 0：P = [0.5, 0.5]；∂L/∂P = G vᵀ = [10, 20]，Σ P⊙(∂L/∂P) = 15，∂L/∂S = [−2.5, 2.5]
    q, k, v = np.zeros((1, 2)), np.eye(2), np.array([[10.0], [20.0]])
    g_q, g_k, g_v = scaled_dot_product_attention_backward(q, k, v, np.array([[1.0]]))
    np.testing.assert_allclose(g_v, [[0.5], [0.5]])
    np.testing.assert_allclose(g_q, [[-2.5 / np.sqrt(2), 2.5 / np.sqrt(2)]])  # 默认 scale = 1/√d_k, d_k = 2
    np.testing.assert_allclose(g_k, 0.0)  # (∂L/∂S)ᵀ · q，q = 0


@given(attention_cases())
def test_masked_out_key_gets_exactly_zero_gradient(case):
    arrays, _, scale, R = case
    q, k, v = arrays["q"], arrays["k"], arrays["v"]
    T, S = q.shape[-2], k.shape[-2]
    if S < 2:
        S = 2
        k, v = np.concatenate([k, k], axis=-2), np.concatenate([v, v], axis=-2)
    mask = np.ones((T, S), bool)
    mask[:, -1] = False  # 最后一个键谁也不许看
    g_q, g_k, g_v = scaled_dot_product_attention_backward(q, k, v, R, mask=mask, scale=scale)
    assert np.all(g_v[..., -1, :] == 0.0)  # 它的值从没被用过
    assert np.all(g_k[..., -1, :] == 0.0)  # 它的分数被 −inf 替换，梯度流不过去


@given(attention_cases())
def test_float32_in_float32_out_and_close_to_float64(case):
    arrays, mask, scale, R = case
    ref = scaled_dot_product_attention_backward(**arrays, grad_out=R, mask=mask, scale=scale)
    small = {n: a.astype(np.float32) for n, a in arrays.items()}
    got = scaled_dot_product_attention_backward(**small, grad_out=R.astype(np.float32), mask=mask, scale=scale)
    for g, r in zip(got, ref):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, r, rtol=1e-3, atol=1e-3 * (1 + np.abs(r).max()))


# ---------------------------------------------------------------- 6. 坏输入

Q, K, V = np.ones((3, 4)), np.ones((5, 4)), np.ones((5, 2))  # (T, d_k), (S, d_k), (S, d_v)
G = np.ones((3, 2))  # (T, d_v)
NAN, INF = np.array([[1.0, np.nan, 0, 0]] * 3), np.array([[1.0, np.inf, 0, 0]] * 5)
ROW1_FALSE = np.array([[True] * 5, [False] * 5, [True] * 5])
VE, TE = ValueError, TypeError


def sdpa(**kw):
    args = dict(q=Q, k=K, v=V) | kw
    return lambda: tl.scaled_dot_product_attention(**args)


def sdpa_bw(**kw):
    args = dict(q=Q, k=K, v=V, grad_out=G) | kw
    return lambda: scaled_dot_product_attention_backward(**args)


ERROR_CASES = [
    # ---- scaled_dot_product_attention：形状
    ("sdpa-d_k-mismatch", sdpa(k=np.ones((5, 3))), VE, r"d_k.*q\.shape=\(3, 4\).*k\.shape=\(5, 3\)"),
    ("sdpa-S-mismatch", sdpa(v=np.ones((6, 2))), VE, r"k 与 v.*\(S.*k\.shape=\(5, 4\).*v\.shape=\(6, 2\)"),
    ("sdpa-q-1d", sdpa(q=np.ones(4)), VE, r"q 至少要有 2 维.*1 维.*shape=\(4,\)"),
    ("sdpa-q-empty", sdpa(q=np.ones((0, 4))), VE, r"q 不能是空数组.*shape=\(0, 4\)"),
    ("sdpa-batch-not-broadcastable", sdpa(q=np.ones((2, 3, 4)), k=np.ones((3, 5, 4))), VE,
     r"批维度.*q 的批维度 \(2,\).*k 的批维度 \(3,\)"),
    # ---- 类型与取值
    ("sdpa-q-list", sdpa(q=[[1.0] * 4] * 3), TE, r"q 必须是 NumPy 数组.*list.*np\.asarray"),
    ("sdpa-q-python-scalar", sdpa(q=1.0), TE, r"q 必须是 NumPy 数组.*float 1\.0"),
    ("sdpa-k-complex", sdpa(k=np.ones((5, 4), complex)), TE, r"k 的 dtype.*complex128.*复数"),
    ("sdpa-v-object", sdpa(v=np.ones((5, 2), object)), TE, r"v 的 dtype.*object"),
    ("sdpa-q-string", sdpa(q=np.full((3, 4), "a")), TE, r"q 的 dtype.*<U1.*字符串"),
    ("sdpa-q-bool", sdpa(q=np.ones((3, 4), bool)), TE, r"q 的 dtype.*bool.*布尔"),
    ("sdpa-q-nan", sdpa(q=NAN), VE, r"q 含有 NaN"),
    ("sdpa-k-inf", sdpa(k=INF), VE, r"k 含有 inf"),
    ("sdpa-masked-array", sdpa(q=np.ma.array(np.ones((2, 4)))), TE, r"q 是掩码数组.*q\.filled"),
    # ---- mask
    ("sdpa-mask-int", sdpa(mask=np.ones((3, 5), int)), TE, r"mask 的 dtype 必须是 bool.*dtype=int64.*astype\(bool\)"),
    ("sdpa-mask-list", sdpa(mask=[[True] * 5] * 3), TE, r"mask 必须是 bool.*list"),
    ("sdpa-mask-shape", sdpa(mask=np.ones((2, 2), bool)), VE, r"mask 的形状 \(2, 2\) 无法广播.*\(3, 5\)"),
    ("sdpa-mask-row-all-false", sdpa(mask=ROW1_FALSE), VE, r"mask 在位置 \(1,\) 的一整行都是 False"),
    ("mask-masked-array", sdpa(mask=np.ma.array(np.ones((3, 5), bool))), TE, r"mask 是掩码数组.*mask\.filled"),
    # ---- scale
    ("sdpa-scale-negative", sdpa(scale=-1.0), VE, r"scale 必须是有限的正实数.*-1\.0"),
    ("sdpa-scale-zero", sdpa(scale=0), VE, r"scale 必须是有限的正实数.*收到的是 0"),
    ("sdpa-scale-nan", sdpa(scale=float("nan")), VE, r"scale 必须是有限的正实数.*nan"),
    ("sdpa-scale-string", sdpa(scale="0.5"), TE, r"scale 必须是正实数.*'0\.5'"),
    ("sdpa-scale-bool", sdpa(scale=True), TE, r"scale 必须是正实数.*bool True"),
    # ---- 有限输入的溢出（issue 8）
    ("sdpa-overflow-1e200", sdpa(q=np.full((1, 2), 1e200), k=np.full((1, 2), 1e200), v=np.ones((1, 1))), VE,
     r"注意力分数 q·kᵀ × scale 溢出.*inf"),
    ("sdpa-overflow-float32", sdpa(q=np.full((1, 2), 1e20, np.float32), k=np.full((1, 2), 1e20, np.float32),
                                   v=np.ones((1, 1), np.float32)), VE, r"q·kᵀ × scale 溢出.*float32"),
    # ---- causal_mask
    ("causal_mask-0", call(tl.causal_mask, 0), VE, r"T 必须是正整数.*>= 1.*收到的是 0"),
    ("causal_mask-float", call(tl.causal_mask, 2.5), TE, r"T 必须是正整数.*float 2\.5"),
    ("causal_mask-bool", call(tl.causal_mask, True), TE, r"T 必须是正整数.*bool True"),
    ("causal_mask-string", call(tl.causal_mask, "3"), TE, r"T 必须是正整数.*'3'"),
    ("causal-mask-too-big", call(tl.causal_mask, 10**6), VE, r"T × T=1000000000000 太大.*T² 个元素"),
    # ---- scaled_dot_product_attention_backward
    ("sdpa_bw-grad_out-shape", sdpa_bw(grad_out=np.ones((3, 3))), VE,
     r"grad_out 的形状应为 \(3, 2\).*收到的是 \(3, 3\).*out"),
    ("sdpa_bw-grad_out-missing-batch", sdpa_bw(q=np.ones((2, 3, 4))), VE, r"grad_out 的形状应为 \(2, 3, 2\).*\(3, 2\)"),
    ("sdpa_bw-grad_out-list", sdpa_bw(grad_out=[[1.0, 1.0]] * 3), TE, r"grad_out 必须是 NumPy 数组.*list"),
    ("sdpa_bw-grad_out-nan", sdpa_bw(grad_out=np.array([[np.nan, 0.0]] * 3)), VE, r"grad_out 含有 NaN"),
    ("sdpa_bw-grad_out-bool", sdpa_bw(grad_out=np.ones((3, 2), bool)), TE, r"grad_out 的 dtype.*bool"),
    ("sdpa_bw-d_k-mismatch", sdpa_bw(k=np.ones((5, 3))), VE, r"d_k.*q\.shape=\(3, 4\).*k\.shape=\(5, 3\)"),
    ("sdpa_bw-q-nan", sdpa_bw(q=NAN), VE, r"q 含有 NaN"),
    ("sdpa_bw-mask-row-false", sdpa_bw(mask=ROW1_FALSE), VE, r"mask 在位置 \(1,\) 的一整行都是 False"),
    ("sdpa_bw-scale-zero", sdpa_bw(scale=0.0), VE, r"scale 必须是有限的正实数"),
    ("attention_bw-grad-overflow", call(scaled_dot_product_attention_backward, np.eye(2), np.eye(2), np.diag([1e308, 1.0]),
                                        np.array([[1e308, 0.0], [1e308, 0.0]])), VE, r"scaled_dot_product_attention_backward 的梯度 grad_q 溢出"),
    ("attention-scale-huge-int", call(tl.scaled_dot_product_attention, np.eye(2), np.eye(2), np.eye(2), scale=10**400), VE,
     r"scale 太大了，超出 float64 的范围.*401 位的整数"),
]
test_documented_errors = error_table_test(ERROR_CASES)
