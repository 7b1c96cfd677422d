"""反向传播：softmax_backward / linear_backward / scaled_dot_product_attention_backward /
multi_head_attention_backward。

独立的参考：中心差分 (central finite differences)。损失取 L = Σ out ⊙ R（R 随机），所以 ∂L/∂out = R；
把每个输入的每个元素前后各挪 ε，用前向函数算 (L(+ε) − L(−ε)) / 2ε。它只调用前向函数，不调用任何反向代码。
误差用整体的相对误差 ‖解析 − 数值‖ / max(‖解析‖, ‖数值‖, 1e-2)：梯度恰好为 0 时（例如 b_k 的梯度永远是 0，
或只有一个键可看时的 q、k）分母取 1e-2，避免拿差分的舍入噪声（约 1e-9）去除以 0；这相当于要求绝对误差 ≤ 1e-8。
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import transformer_lab as tl
from conftest import check_error
from transformer_lab.core.attention import scaled_dot_product_attention_backward
from transformer_lab.core.linear import linear_backward
from transformer_lab.core.softmax import softmax_backward
from transformer_lab.core.multihead import multi_head_attention_backward

EPS, TOL = 1e-5, 1e-6  # 差分步长：截断误差 ~ε² ≈ 1e-10，舍入误差 ~|L|·1e-16/ε ≈ 1e-11·|L|


def numerical_grad(loss, arrays, name):
    """L 对 arrays[name] 的中心差分梯度；arrays 是传给 loss 的关键字参数（float64）。"""
    base = arrays[name]
    grad = np.zeros_like(base)
    for i in np.ndindex(base.shape):
        step = np.zeros_like(base)
        step[i] = EPS
        plus = loss(**{**arrays, name: base + step})
        minus = loss(**{**arrays, name: base - step})
        grad[i] = (plus - minus) / (2 * EPS)
    return grad


def rel_error(analytic, numeric):
    assert analytic.shape == numeric.shape
    scale = max(np.linalg.norm(analytic), np.linalg.norm(numeric), 1e-2)
    return np.linalg.norm(analytic - numeric) / scale


# ---------------------------------------------------------------- 策略：形状、广播、掩码

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

    def loss(q, k, v):
        return float(np.sum(tl.scaled_dot_product_attention(q, k, v, mask=mask, scale=scale)[0] * R))

    grads = scaled_dot_product_attention_backward(**arrays, grad_out=R, mask=mask, scale=scale)
    for name, g in zip("qkv", grads):
        assert g.shape == arrays[name].shape  # 广播过的维度已经加回去
        assert rel_error(g, numerical_grad(loss, arrays, name)) <= TOL, name


@st.composite
def mha_cases(draw):
    H, d_k = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    D, T = H * d_k, draw(st.integers(1, 4))
    cross = draw(st.booleans())
    S = draw(st.integers(1, 4)) if cross else T
    xb = draw(st.sampled_from([(), (2,), (1,)] if cross else [(), (2,)]))
    kvb = draw(st.sampled_from([(), (2,), (1,)]))
    full = np.broadcast_shapes(xb, kvb) if cross else xb
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    arrays = {name: rng.normal(size=(D, D)) / np.sqrt(D) for name in ("w_q", "w_k", "w_v", "w_o")}  # 输出量级 ~1
    arrays["x"] = rng.normal(size=xb + (T, D))
    if cross:
        arrays["kv"] = rng.normal(size=kvb + (S, D))
    for name, used in zip(("b_q", "b_k", "b_v", "b_o"), draw(st.lists(st.booleans(), min_size=4, max_size=4))):
        if used:
            arrays[name] = rng.normal(size=D)
    kind = draw(st.sampled_from(["none", "causal", "per-head", "batch-padding"]))
    mask = {"none": None, "causal": np.tril(np.ones((T, S), bool))}.get(kind)
    if kind in ("per-head", "batch-padding"):
        shape = (H, T, S) if kind == "per-head" else full + (1, 1, S)
        keep = rng.integers(0, S, size=shape[:-1] + (1,))
        mask = (rng.random(shape) < 0.5) | (np.arange(S) == keep)
    return arrays, H, mask, rng.normal(size=full + (T, D))


@given(mha_cases())
def test_multi_head_backward_matches_finite_differences(case):
    arrays, H, mask, R = case

    def loss(**kw):
        return float(np.sum(tl.multi_head_attention(num_heads=H, mask=mask, **kw)[0] * R))

    grads = multi_head_attention_backward(grad_out=R, num_heads=H, mask=mask, **arrays)
    assert set(grads) == set(arrays)  # 传了哪些数组，就返回哪些梯度
    for name, g in grads.items():
        assert g.shape == arrays[name].shape
        assert rel_error(g, numerical_grad(loss, arrays, name)) <= TOL, name


@given(st.integers(1, 4), st.integers(1, 4), st.lists(st.integers(1, 3), max_size=2), st.integers(0, 2**32 - 1))
def test_linear_backward_matches_finite_differences(d_in, d_out, lead, seed):
    rng = np.random.default_rng(seed)
    arrays = dict(x=rng.normal(size=(*lead, d_in)), w=rng.normal(size=(d_in, d_out)), b=rng.normal(size=d_out))
    R = rng.normal(size=(*lead, d_out))

    def loss(x, w, b):
        return float(np.sum((x @ w + b) * R))

    grads = linear_backward(arrays["x"], arrays["w"], R)
    for name, g in zip(("x", "w", "b"), grads):
        assert rel_error(g, numerical_grad(loss, arrays, name)) <= TOL, name


@given(st.integers(1, 5), st.lists(st.integers(1, 3), max_size=2), st.integers(0, 2**32 - 1), st.booleans())
def test_softmax_backward_matches_finite_differences_and_rows_sum_to_zero(n, lead, seed, masked):
    rng = np.random.default_rng(seed)
    x, g = 2 * rng.normal(size=(*lead, n)), rng.normal(size=(*lead, n))
    blocked = (rng.random(x.shape) < 0.4) & (np.arange(n) > 0) if masked else np.zeros(x.shape, bool)
    x = np.where(blocked, -np.inf, x)  # 被掩掉的位置；第 0 列永远保留

    def loss(x):
        return float(np.sum(np.where(blocked, 0.0, tl.softmax(x) * g)))

    grad = softmax_backward(tl.softmax(x), g)
    numeric = numerical_grad(loss, {"x": np.where(blocked, -np.inf, x)}, "x")
    assert rel_error(np.where(blocked, 0.0, grad), np.where(blocked, 0.0, numeric)) <= TOL
    assert np.all(grad[blocked] == 0.0)  # 被掩掉的位置梯度恰为 0
    np.testing.assert_allclose(grad.sum(axis=-1), 0.0, atol=1e-12 * (1 + np.abs(g).max()))  # 每行和为 0


def test_softmax_backward_equals_explicit_jacobian():
    p = tl.softmax(np.array([5.0, 2.0, 0.0]))  # 书里的例子
    g = np.array([1.0, -2.0, 0.5])
    jacobian = np.diag(p) - np.outer(p, p)  # ∂p_i/∂x_j = p_i(δ_ij − p_j)，对称
    np.testing.assert_allclose(softmax_backward(p, g), jacobian @ g, rtol=1e-14, atol=1e-15)
    cols = softmax_backward(tl.softmax(np.array([[5.0], [2.0], [0.0]]), axis=0), g[:, None], axis=0)
    np.testing.assert_allclose(cols[:, 0], jacobian @ g, rtol=1e-14, atol=1e-15)  # axis=0 沿列


# ---------------------------------------------------------------- 手算的小例子

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


def test_bias_gradient_is_sum_over_positions_and_batch():
    rng = np.random.default_rng(2)
    x, w = rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 4))
    grads = multi_head_attention_backward(x, w, w, w, w, np.ones((2, 3, 4)), num_heads=2, b_o=np.zeros(4))
    np.testing.assert_array_equal(grads["b_o"], np.full(4, 6.0))  # 2 个样本 × 3 个位置，每处 G = 1


@given(mha_cases())
def test_key_bias_never_gets_gradient(case):
    # q·(k + b_K) = q·k + q·b_K：同一行的每个分数都加了同一个数，softmax 不变 → b_K 对输出毫无影响
    arrays, H, mask, R = case
    arrays = arrays | {"b_k": np.ones(arrays["w_k"].shape[0])}
    grads = multi_head_attention_backward(grad_out=R, num_heads=H, mask=mask, **arrays)
    np.testing.assert_allclose(grads["b_k"], 0.0, atol=1e-12 * (1 + max(np.abs(g).max() for g in grads.values())))


def test_merge_is_the_backward_of_split():
    rng = np.random.default_rng(3)
    x, g = rng.normal(size=(2, 5, 6)), rng.normal(size=(2, 3, 5, 2))  # (B, T, D), (B, H, T, d_k)
    # 伴随 (adjoint)：⟨split(x), g⟩ = ⟨x, merge(g)⟩，所以 split 的梯度 = merge(梯度)，反之亦然
    np.testing.assert_allclose(np.sum(tl.split_heads(x, 3) * g), np.sum(x * tl.merge_heads(g)), rtol=1e-13)


# ---------------------------------------------------------------- 性质

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


def test_float32_preserved_everywhere():
    rng = np.random.default_rng(4)
    f = lambda *s: rng.normal(size=s).astype(np.float32)  # noqa: E731
    x, w, G = f(3, 4), f(4, 4), f(3, 4)
    assert softmax_backward(tl.softmax(x), G).dtype == np.float32
    assert all(g.dtype == np.float32 for g in linear_backward(x, w, G))
    grads = multi_head_attention_backward(x, w, w, w, w, G, num_heads=2, kv=f(5, 4), b_q=f(4), b_o=f(4))
    assert {g.dtype for g in grads.values()} == {np.dtype(np.float32)}
    assert softmax_backward(np.array([0.5, 0.5]), np.array([1, 0])).dtype == np.float64  # 整数按 float64


@given(mha_cases())
def test_backward_never_modifies_inputs(case):
    arrays, H, mask, R = case
    before = {n: a.copy() for n, a in arrays.items()}
    multi_head_attention_backward(grad_out=R, num_heads=H, mask=mask, **arrays)
    for n, a in arrays.items():
        np.testing.assert_array_equal(a, before[n])


# ---------------------------------------------------------------- 坏输入

Q, K = np.ones((3, 4)), np.ones((5, 4))  # (T, d_k), (S, d_k)
V, G = np.ones((5, 2)), np.ones((3, 2))  # (S, d_v), (T, d_v)
X, W = np.ones((3, 4)), np.eye(4)  # (T, D), (D, D)
NAN = np.array([[1.0, np.nan, 0, 0]] * 3)
VE, TE = ValueError, TypeError


def sdpa_bw(**kw):
    args = dict(q=Q, k=K, v=V, grad_out=G) | kw
    return lambda: scaled_dot_product_attention_backward(**args)


def mha_bw(**kw):
    args = dict(x=X, w_q=W, w_k=W, w_v=W, w_o=W, grad_out=X, num_heads=2) | kw
    return lambda: multi_head_attention_backward(**args)


def call(fn, *a, **kw):
    return lambda: fn(*a, **kw)


ERROR_CASES = [
    ("sdpa_bw-grad_out-shape", sdpa_bw(grad_out=np.ones((3, 3))), VE,
     r"grad_out 的形状应为 \(3, 2\).*收到的是 \(3, 3\).*out"),
    ("sdpa_bw-grad_out-missing-batch", sdpa_bw(q=np.ones((2, 3, 4))), VE, r"grad_out 的形状应为 \(2, 3, 2\).*\(3, 2\)"),
    ("sdpa_bw-grad_out-list", sdpa_bw(grad_out=[[1.0, 1.0]] * 3), TE, r"grad_out 必须是 NumPy 数组.*list"),
    ("sdpa_bw-grad_out-nan", sdpa_bw(grad_out=np.array([[np.nan, 0.0]] * 3)), VE, r"grad_out 含有 NaN"),
    ("sdpa_bw-grad_out-bool", sdpa_bw(grad_out=np.ones((3, 2), bool)), TE, r"grad_out 的 dtype.*bool"),
    ("sdpa_bw-d_k-mismatch", sdpa_bw(k=np.ones((5, 3))), VE, r"d_k.*q\.shape=\(3, 4\).*k\.shape=\(5, 3\)"),
    ("sdpa_bw-q-nan", sdpa_bw(q=NAN), VE, r"q 含有 NaN"),
    ("sdpa_bw-mask-row-false", sdpa_bw(mask=np.array([[True] * 5, [False] * 5, [True] * 5])), VE,
     r"mask 在位置 \(1,\) 的一整行都是 False"),
    ("sdpa_bw-scale-zero", sdpa_bw(scale=0.0), VE, r"scale 必须是有限的正实数"),
    ("mha_bw-num_heads-not-divisor", mha_bw(num_heads=3), VE, r"d_model=4 必须能被 num_heads=3 整除"),
    ("mha_bw-num_heads-float", mha_bw(num_heads=2.0), TE, r"num_heads 必须是正整数.*float 2\.0"),
    ("mha_bw-grad_out-shape", mha_bw(grad_out=np.ones((4, 4))), VE, r"grad_out 的形状应为 \(3, 4\).*\(4, 4\)"),
    ("mha_bw-grad_out-cross-batch", mha_bw(kv=np.ones((2, 5, 4))), VE, r"grad_out 的形状应为 \(2, 3, 4\).*\(3, 4\)"),
    ("mha_bw-x-nan", mha_bw(x=NAN, grad_out=NAN * 0), VE, r"x 含有 NaN"),
    ("mha_bw-w_o-shape", mha_bw(w_o=np.ones((4, 3))), VE, r"w_o 的形状应为 \(4, 4\).*\(4, 3\)"),
    ("mha_bw-b_k-length", mha_bw(b_k=np.ones(3)), VE, r"b_k 的形状应为 \(4,\).*\(3,\)"),
    ("softmax_bw-shape", call(softmax_backward, np.array([0.5, 0.5]), np.ones(3)), VE,
     r"grad_p 的形状应为 \(2,\).*\(3,\)"),
    ("softmax_bw-scores-not-p", call(softmax_backward, np.array([2.0, -1.0]), np.ones(2)), VE,
     r"p 必须是 softmax 的输出.*不是 softmax 的输入 x"),
    ("softmax_bw-axis", call(softmax_backward, np.full((2, 2), 0.5), np.ones((2, 2)), axis=2), VE, r"axis=2 越界"),
    ("softmax_bw-grad_p-list", call(softmax_backward, np.array([0.5, 0.5]), [1.0, 0.0]), TE,
     r"grad_p 必须是 NumPy 数组.*list"),
    ("linear_bw-w-rows", call(linear_backward, X, np.ones((3, 2)), np.ones((3, 2))), VE,
     r"w 的形状应为 \(4, 任意\).*\(3, 2\)"),
    ("linear_bw-grad_y-shape", call(linear_backward, X, np.ones((4, 2)), np.ones((3, 4))), VE,
     r"grad_y 的形状应为 \(3, 2\).*\(3, 4\)"),
    ("linear_bw-x-nan", call(linear_backward, NAN, W, X), VE, r"x 含有 NaN"),
]


@pytest.mark.parametrize("case_id, fn, exc, pattern", [pytest.param(*c, id=c[0]) for c in ERROR_CASES])
def test_bad_input_raises_clear_chinese_error(case_id, fn, exc, pattern):
    check_error(fn, exc, pattern)  # 恰好是这个异常类型、信息匹配正则、而且是中文
