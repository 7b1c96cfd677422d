"""多头注意力：split_heads / merge_heads / multi_head_attention。

参考实现 ref_mha 按论文逐头计算：取 W_Q 的第 h*d_k:(h+1)*d_k 列得到第 h 个头的投影，
每个头单独算注意力 (分数用 Python 循环)，拼接后乘 W_O。它不调用包里的任何函数。
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import transformer_lab as tl

D, T, S = 8, 4, 5


def _ref_weights(Q, K, d_k, mask):
    """一个头的注意力权重 (T, S)：对每个 (i, j) 算 Q_i·K_j / √d_k，再做带掩码的 softmax。"""
    w = np.zeros((Q.shape[0], K.shape[0]))
    for i in range(Q.shape[0]):
        allowed = [j for j in range(K.shape[0]) if mask is None or mask[i, j]]
        scores = {j: float(Q[i] @ K[j]) / math.sqrt(d_k) for j in allowed}
        m = max(scores.values())
        z = sum(math.exp(s - m) for s in scores.values())
        for j, s in scores.items():
            w[i, j] = math.exp(s - m) / z
    return w


def ref_mha(x, w_q, w_k, w_v, w_o, num_heads, mask=None, kv=None, b_q=None, b_k=None, b_v=None, b_o=None):
    """逐头循环的多头注意力。x: (T, D) 或 (B, T, D)；mask 可广播到 (B, H, T, S)。"""
    H = num_heads
    if x.ndim == 3:  # 批：逐个样本算
        results = []
        for b in range(x.shape[0]):
            m = None if mask is None else (mask[b] if mask.ndim == 4 else mask)
            results.append(ref_mha(x[b], w_q, w_k, w_v, w_o, H, m, None if kv is None else kv[b], b_q, b_k, b_v, b_o))
        return np.stack([r[0] for r in results]), np.stack([r[1] for r in results])
    kv = x if kv is None else kv
    zero = np.zeros(x.shape[1])
    b_q, b_k, b_v, b_o = (zero if b is None else b for b in (b_q, b_k, b_v, b_o))
    d_k = x.shape[1] // H
    heads, weights = [], []
    for h in range(H):
        cols = slice(h * d_k, (h + 1) * d_k)
        Q = x @ w_q[:, cols] + b_q[cols]  # (T, d_k)
        K = kv @ w_k[:, cols] + b_k[cols]  # (S, d_k)
        V = kv @ w_v[:, cols] + b_v[cols]  # (S, d_k)
        m = None if mask is None else np.broadcast_to(mask, (H, x.shape[0], kv.shape[0]))[h]
        w = _ref_weights(Q, K, d_k, m)
        heads.append(w @ V)
        weights.append(w)
    return np.concatenate(heads, axis=1) @ w_o + b_o, np.stack(weights)  # (T, D), (H, T, S)


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
