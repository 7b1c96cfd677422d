"""core/multihead.py：split_heads / merge_heads / multi_head_attention 与它的反向 multi_head_attention_backward。

参考实现 ref_mha（tests/helpers/reference.py）按论文逐头计算：取 W_Q 的第 h*d_k:(h+1)*d_k 列得到第 h 个头的投影，
每个头单独算注意力 (分数用 Python 循环)，拼接后乘 W_O。它不调用包里的任何函数。反向对中心差分检查。
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import transformer_lab as tl
from transformer_lab.core.multihead import multi_head_attention_backward

from helpers.errors import call, error_table_test
from helpers.gradcheck import assert_gradients_close, numeric_gradient
from helpers.reference import ref_mha

D, T, S = 8, 4, 5


def _params(rng, biases=False):
    w = {name: rng.normal(size=(D, D)) / math.sqrt(D) for name in ("w_q", "w_k", "w_v", "w_o")}
    if biases:
        w.update({name: rng.normal(size=D) for name in ("b_q", "b_k", "b_v", "b_o")})
    return w


def _random_mask(rng, shape):
    mask = rng.random(shape) < 0.5
    mask[..., 0] = True  # 每行至少允许看一个位置
    return mask


# 每一行：(id, 造输入的函数)；函数返回 multi_head_attention 的关键字参数
CASES = [
    ("self-H=2", lambda r: dict(x=r.normal(size=(T, D)), num_heads=2, **_params(r))),
    ("self-H=1", lambda r: dict(x=r.normal(size=(T, D)), num_heads=1, **_params(r))),
    ("self-H=8-d_k=1", lambda r: dict(x=r.normal(size=(T, D)), num_heads=8, **_params(r))),
    ("self-H=4-biases", lambda r: dict(x=r.normal(size=(T, D)), num_heads=4, **_params(r, biases=True))),
    ("causal-mask", lambda r: dict(x=r.normal(size=(T, D)), num_heads=2, mask=tl.causal_mask(T), **_params(r))),
    ("per-head-mask", lambda r: dict(x=r.normal(size=(T, D)), num_heads=2, mask=_random_mask(r, (2, T, T)),
                                     **_params(r))),
    ("cross-S=5-biases", lambda r: dict(x=r.normal(size=(T, D)), kv=r.normal(size=(S, D)), num_heads=2,
                                        **_params(r, biases=True))),
    ("cross-mask", lambda r: dict(x=r.normal(size=(T, D)), kv=r.normal(size=(S, D)), num_heads=4,
                                  mask=_random_mask(r, (T, S)), **_params(r))),
    ("batch-causal", lambda r: dict(x=r.normal(size=(2, T, D)), num_heads=2, mask=tl.causal_mask(T),
                                    **_params(r, biases=True))),
    ("batch-cross-padding-mask", lambda r: dict(x=r.normal(size=(3, T, D)), kv=r.normal(size=(3, S, D)), num_heads=4,
                                                mask=_random_mask(r, (3, 1, 1, S)), **_params(r))),
]


@pytest.mark.parametrize("make", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_multi_head_attention_matches_per_head_loop(make):
    kwargs = make(np.random.default_rng(0))
    out, w = tl.multi_head_attention(**kwargs)
    ref_out, ref_w = ref_mha(**kwargs)
    np.testing.assert_allclose(w, ref_w, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(out, ref_out, rtol=1e-10, atol=1e-12)
    if "mask" in kwargs:
        assert np.all(np.where(np.broadcast_to(kwargs["mask"], w.shape), 0.0, w) == 0.0)  # 被掩掉的位置权重恰为 0


def test_split_heads_book_example():
    x = np.arange(8.0).reshape(2, 4)  # (T=2, D=4)
    heads = tl.split_heads(x, 2)  # (H=2, T=2, d_k=2)
    np.testing.assert_array_equal(heads[0], [[0.0, 1.0], [4.0, 5.0]])
    np.testing.assert_array_equal(heads[1], [[2.0, 3.0], [6.0, 7.0]])
    np.testing.assert_array_equal(tl.merge_heads(heads), x)


def test_kv_none_is_self_attention_and_one_head_is_plain_attention():
    rng = np.random.default_rng(3)
    x, p = rng.normal(size=(T, D)), _params(rng)
    out, w = tl.multi_head_attention(x, num_heads=1, **p)
    np.testing.assert_array_equal(out, tl.multi_head_attention(x, num_heads=1, kv=x, **p)[0])
    plain_out, plain_w = tl.scaled_dot_product_attention(x @ p["w_q"], x @ p["w_k"], x @ p["w_v"])
    np.testing.assert_allclose(w[0], plain_w, rtol=1e-12)
    np.testing.assert_allclose(out, plain_out @ p["w_o"], rtol=1e-12)


# ---------------------------------------------------------------- 性质测试

@st.composite
def head_shapes(draw):
    lead = draw(st.lists(st.integers(1, 3), max_size=2))
    return tuple(lead), draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 4))  # lead, T, H, d


@given(head_shapes(), st.data())
def test_split_then_merge_is_identity(shape, data):
    lead, T_, H, d = shape
    x = data.draw(hnp.arrays(np.float64, lead + (T_, H * d), elements=st.floats(-50, 50)))
    heads = tl.split_heads(x, H)
    assert heads.shape == lead + (H, T_, d)
    for h in range(H):  # 头 h 拿到最后一维的第 h 段
        np.testing.assert_array_equal(heads[..., h, :, :], x[..., h * d:(h + 1) * d])
    np.testing.assert_array_equal(tl.merge_heads(heads), x)
    np.testing.assert_array_equal(tl.split_heads(tl.merge_heads(heads), H), heads)


@st.composite
def mha_inputs(draw, min_T=2):
    T_, H, d_k = draw(st.integers(min_T, 5)), draw(st.sampled_from([1, 2])), draw(st.sampled_from([1, 2, 3]))
    x = draw(hnp.arrays(np.float64, (T_, H * d_k), elements=st.floats(-10, 10)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    w = [rng.normal(size=(H * d_k, H * d_k)) / math.sqrt(H * d_k) for _ in range(4)]
    return x, w, H, draw(st.permutations(range(T_)))


def _close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9 * (1 + np.abs(b).max()))


@given(mha_inputs())
def test_self_attention_without_positions_is_permutation_equivariant(args):
    x, w, H, perm = args
    out, weights = tl.multi_head_attention(x, *w, num_heads=H)
    out_p, weights_p = tl.multi_head_attention(x[perm], *w, num_heads=H)
    _close(out_p, out[perm])  # 打乱词序 → 输出按同样方式打乱
    _close(weights_p, weights[:, perm][:, :, perm])


@given(mha_inputs())
def test_cross_attention_ignores_order_of_keys(args):
    x, w, H, perm = args
    kv = x[::-1] * 0.5 + 1.0  # 另一组键/值，长度与 x 相同
    out, weights = tl.multi_head_attention(x, *w, num_heads=H, kv=kv)
    out_p, weights_p = tl.multi_head_attention(x, *w, num_heads=H, kv=kv[perm])
    _close(out_p, out)  # 键/值换顺序，输出不变
    _close(weights_p, weights[:, :, perm])


@given(mha_inputs(min_T=1), st.booleans())
def test_multi_head_inputs_are_never_modified(args, use_bias):
    x, w, H, _ = args
    D_ = x.shape[-1]
    biases = dict(b_q=np.ones(D_), b_o=np.full(D_, -2.0)) if use_bias else {}
    mask = tl.causal_mask(x.shape[0])
    inputs = [x, mask, *w, *biases.values()]
    before = [a.copy() for a in inputs]
    tl.multi_head_attention(x, *w, num_heads=H, mask=mask, kv=x, **biases)
    tl.merge_heads(tl.split_heads(x, H))
    for a, b in zip(inputs, before):
        np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------- dtype

def _mha(dtype):
    rng = np.random.default_rng(0)
    x = np.round(rng.normal(size=(T, D)) * 3).astype(dtype)
    ws = [np.round(rng.normal(size=(D, D)) * 3).astype(dtype) for _ in range(4)]
    return tl.multi_head_attention(x, *ws, num_heads=2)


def _split_merge(dtype):
    x = np.arange(24).reshape(2, 3, 4).astype(dtype)
    return tl.split_heads(x, 2), tl.merge_heads(x[None])


@pytest.mark.parametrize("fn, dtype, expected", [
    pytest.param(_split_merge, np.float32, np.float32, id="split-merge-float32"),
    pytest.param(_split_merge, np.float64, np.float64, id="split-merge-float64"),
    pytest.param(_split_merge, np.int64, np.float64, id="split-merge-int64"),
    pytest.param(_mha, np.float32, np.float32, id="mha-float32"),
    pytest.param(_mha, np.float64, np.float64, id="mha-float64"),
    pytest.param(_mha, np.int64, np.float64, id="mha-int64"),
])
def test_output_dtype(fn, dtype, expected):
    for out in fn(dtype):
        assert out.dtype == expected


# ---------------------------------------------------------------- 反向：中心差分、手算、性质
# 损失 L = Σ out ⊙ R，差分步长 1e-5，整体相对误差 ≤ 1e-6、分母至少 1e-2（见 test_attention.py 的说明）。

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
        numeric = numeric_gradient(lambda a, name=name: loss(**(arrays | {name: a})), arrays[name], h=1e-5)
        assert_gradients_close(g, numeric, floor=1e-2, name=name)


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


def test_backward_keeps_float32():
    rng = np.random.default_rng(4)
    f = lambda *s: rng.normal(size=s).astype(np.float32)  # noqa: E731
    x, w, G = f(3, 4), f(4, 4), f(3, 4)
    grads = multi_head_attention_backward(x, w, w, w, w, G, num_heads=2, kv=f(5, 4), b_q=f(4), b_o=f(4))
    assert {g.dtype for g in grads.values()} == {np.dtype(np.float32)}


@given(mha_cases())
def test_backward_never_modifies_inputs(case):
    arrays, H, mask, R = case
    before = {n: a.copy() for n, a in arrays.items()}
    multi_head_attention_backward(grad_out=R, num_heads=H, mask=mask, **arrays)
    for n, a in arrays.items():
        np.testing.assert_array_equal(a, before[n])


# ---------------------------------------------------------------- 坏输入

X, W = np.ones((3, 4)), np.eye(4)  # (T, D), (D, D)
NAN = np.array([[1.0, np.nan, 0, 0]] * 3)
VE, TE = ValueError, TypeError


def mha(**kw):
    args = dict(x=X, w_q=W, w_k=W, w_v=W, w_o=W, num_heads=2) | kw
    return lambda: tl.multi_head_attention(**args)


def mha_bw(**kw):
    args = dict(x=X, w_q=W, w_k=W, w_v=W, w_o=W, grad_out=X, num_heads=2) | kw
    return lambda: multi_head_attention_backward(**args)


ERROR_CASES = [
    # ---- split_heads / merge_heads
    ("split-not-divisible", call(tl.split_heads, np.ones((3, 5)), 2), VE, r"d_model=5.*num_heads=2.*整除"),
    ("split-num_heads-0", call(tl.split_heads, X, 0), VE, r"num_heads 必须是正整数.*收到的是 0"),
    ("split-num_heads-float", call(tl.split_heads, X, 2.0), TE, r"num_heads 必须是正整数.*float 2\.0"),
    ("split-x-1d", call(tl.split_heads, np.ones(4), 2), VE, r"x 至少要有 2 维.*shape=\(4,\)"),
    ("merge-2d", call(tl.merge_heads, X), VE, r"x 至少要有 3 维.*2 维.*shape=\(3, 4\)"),
    # ---- multi_head_attention
    ("mha-w_q-shape", mha(w_q=np.ones((4, 3))), VE, r"w_q 的形状应为 \(4, 4\).*\(4, 3\).*d_model=4"),
    ("mha-w_o-shape", mha(w_o=np.ones((3, 4))), VE, r"w_o 的形状应为 \(4, 4\).*\(3, 4\)"),
    ("mha-b_k-shape", mha(b_k=np.ones(3)), VE, r"b_k 的形状应为 \(4,?\).*\(3,\)"),
    ("mha-b_o-2d", mha(b_o=np.ones((1, 4))), VE, r"b_o 的形状应为 \(4,?\).*\(1, 4\)"),
    ("mha-kv-wrong-D", mha(kv=np.ones((5, 6))), VE, r"kv .*d_model=4.*x\.shape=\(3, 4\).*kv\.shape=\(5, 6\)"),
    ("mha-not-divisible", mha(num_heads=3), VE, r"d_model=4.*num_heads=3"),
    ("mha-num_heads-0", mha(num_heads=0), VE, r"num_heads 必须是正整数.*0"),
    ("mha-mask-shape", mha(mask=np.ones((3, 4), bool)), VE, r"mask 的形状 \(3, 4\).*\(2, 3, 3\)"),
    ("mha-mask-int", mha(mask=tl.causal_mask(3).astype(int)), TE, r"mask 的 dtype 必须是 bool"),
    ("mha-x-list", mha(x=X.tolist()), TE, r"x 必须是 NumPy 数组.*list"),
    ("mha-w_v-nan", mha(w_v=np.where(W == 1, np.nan, 0)), VE, r"w_v 含有 NaN"),
    ("mha-overflow-1e160", mha(x=np.full((2, 4), 1e160)), VE, r"\(x @ w_q\)·\(x @ w_k\)ᵀ × scale 溢出"),
    ("mha-projection-overflow", mha(x=np.full((2, 4), 1e300), w_q=np.full((4, 4), 1e10)), VE, r"查询投影 x @ w_q 溢出"),
    # ---- multi_head_attention_backward
    ("mha_bw-num_heads-not-divisor", mha_bw(num_heads=3), VE, r"d_model=4 必须能被 num_heads=3 整除"),
    ("mha_bw-num_heads-float", mha_bw(num_heads=2.0), TE, r"num_heads 必须是正整数.*float 2\.0"),
    ("mha_bw-grad_out-shape", mha_bw(grad_out=np.ones((4, 4))), VE, r"grad_out 的形状应为 \(3, 4\).*\(4, 4\)"),
    ("mha_bw-grad_out-cross-batch", mha_bw(kv=np.ones((2, 5, 4))), VE, r"grad_out 的形状应为 \(2, 3, 4\).*\(3, 4\)"),
    ("mha_bw-x-nan", mha_bw(x=NAN, grad_out=NAN * 0), VE, r"x 含有 NaN"),
    ("mha_bw-w_o-shape", mha_bw(w_o=np.ones((4, 3))), VE, r"w_o 的形状应为 \(4, 4\).*\(4, 3\)"),
    ("mha_bw-b_k-length", mha_bw(b_k=np.ones(3)), VE, r"b_k 的形状应为 \(4,\).*\(3,\)"),
    ("mha_bw-grad-overflow", call(multi_head_attention_backward, X, W, W, W, W * 1e10, np.full((3, 4), 1e300), 2),
     VE, r"multi_head_attention_backward 的梯度 .* 溢出"),
]
test_documented_errors = error_table_test(ERROR_CASES)
