"""一层编码器：layer_norm / feed_forward / embed / encoder_layer / init_encoder_params，以及它们的反向传播。

参考实现 (ref_*) 只用 Python 循环和 math，不调用包里的任何函数：LayerNorm 逐行算均值与方差，
前馈网络逐元素求和，多头注意力逐头取 W 的列、逐个 (i, j) 算分数。
反向传播一律与中心差分 (central finite differences) 比较：float64，相对误差 ≤ 1e-6。
"""

import math
import warnings

import numpy as np
import pytest
from conftest import check_error
from hypothesis import given
from hypothesis import strategies as st

import transformer_lab as tl
from transformer_lab.core.embedding import embed, embedding_backward
from transformer_lab.core.encoder import PARAM_KEYS, encoder_layer, init_encoder_params
from transformer_lab.core.feed_forward import feed_forward, feed_forward_backward
from transformer_lab.core.layer_norm import layer_norm, layer_norm_backward
from transformer_lab.core.loss import cross_entropy, cross_entropy_backward

EPS = 1e-5


# ---------------------------------------------------------------- 参考实现（纯循环）
def ref_layer_norm(x, gamma, beta, eps=EPS):
    """逐行：μ = Σx/D，σ² = Σ(x-μ)²/D，y_j = γ_j (x_j - μ)/√(σ²+ε) + β_j。"""
    x2 = x.reshape(-1, x.shape[-1])
    out = np.zeros(x2.shape)
    for r, row in enumerate(x2):
        D = len(row)
        mu = sum(float(v) for v in row) / D
        var = sum((float(v) - mu) ** 2 for v in row) / D
        for j in range(D):
            out[r, j] = gamma[j] * (row[j] - mu) / math.sqrt(var + eps) + beta[j]
    return out.reshape(x.shape)


def ref_feed_forward(x, w_1, b_1, w_2, b_2):
    """逐位置、逐元素：hidden_k = max(0, Σ_i x_i W1[i,k] + b1_k)，out_j = Σ_k hidden_k W2[k,j] + b2_j。"""
    x2 = x.reshape(-1, x.shape[-1])
    D, d_ff = w_1.shape
    out = np.zeros(x2.shape)
    for r, row in enumerate(x2):
        hidden = [max(0.0, sum(row[i] * w_1[i, k] for i in range(D)) + b_1[k]) for k in range(d_ff)]
        for j in range(D):
            out[r, j] = sum(hidden[k] * w_2[k, j] for k in range(d_ff)) + b_2[j]
    return out.reshape(x.shape)


def ref_mha(x, p, H, mask=None):
    """一个序列 x: (T, D) 的多头自注意力，逐头循环；mask 可广播到 (H, T, T)。"""
    T, D = x.shape
    d_k = D // H
    heads, weights = [], []
    for h in range(H):
        cols = slice(h * d_k, (h + 1) * d_k)
        Q, K, V = (x @ p[f"w_{n}"][:, cols] + p[f"b_{n}"][cols] for n in "qkv")  # (T, d_k) each
        m = None if mask is None else np.broadcast_to(mask, (H, T, T))[h]
        w = np.zeros((T, T))
        for i in range(T):
            allowed = [j for j in range(T) if m is None or m[i, j]]
            s = {j: float(Q[i] @ K[j]) / math.sqrt(d_k) for j in allowed}
            top = max(s.values())
            z = sum(math.exp(v - top) for v in s.values())
            for j, v in s.items():
                w[i, j] = math.exp(v - top) / z
        heads.append(w @ V)
        weights.append(w)
    return np.concatenate(heads, axis=1) @ p["w_o"] + p["b_o"], np.stack(weights)


def ref_encoder(x, p, H, mask=None, norm_first=False):
    """x: (T, D) 或 (B, T, D)；mask: (T, T)、(H, T, T) 或 (B, H, T, T)。"""
    if x.ndim == 3:
        res = [ref_encoder(x[b], p, H, mask[b] if mask is not None and mask.ndim == 4 else mask, norm_first)
               for b in range(x.shape[0])]
        return np.stack([r[0] for r in res]), np.stack([r[1] for r in res])
    ln1 = lambda a: ref_layer_norm(a, p["ln1_gamma"], p["ln1_beta"])  # noqa: E731
    ln2 = lambda a: ref_layer_norm(a, p["ln2_gamma"], p["ln2_beta"])  # noqa: E731
    ffn = lambda a: ref_feed_forward(a, p["w_1"], p["b_1"], p["w_2"], p["b_2"])  # noqa: E731
    if norm_first:
        a, w = ref_mha(ln1(x), p, H, mask)
        h = x + a
        return h + ffn(ln2(h)), w
    a, w = ref_mha(x, p, H, mask)
    h = ln1(x + a)
    return ln2(h + ffn(h)), w


def random_params(rng, D, d_ff):
    """每个参数都随机（包括偏置和 γ、β），这样哪一项被漏掉都能被测出来。"""
    p = {k: rng.normal(size=v.shape) / math.sqrt(v.shape[0]) for k, v in init_encoder_params(D, d_ff, rng).items()}
    p["ln1_gamma"], p["ln2_gamma"] = 1 + 0.3 * rng.normal(size=D), 1 + 0.3 * rng.normal(size=D)
    return p


# ---------------------------------------------------------------- 手算的例子
def test_layer_norm_by_hand():
    # [1, 2, 3]：μ = 2，σ² = ((-1)² + 0² + 1²)/3 = 2/3
    s = math.sqrt(2 / 3 + EPS)
    expected = np.array([-1 / s, 0.0, 1 / s])
    np.testing.assert_allclose(layer_norm(np.array([1.0, 2.0, 3.0]), np.ones(3), np.zeros(3)), expected, rtol=1e-12)
    np.testing.assert_allclose(layer_norm(np.array([1.0, 2.0, 3.0]), np.full(3, 2.0), np.ones(3)), 2 * expected + 1)
    assert round(1 / s, 4) == 1.2247


def test_feed_forward_by_hand():
    # x W_1 + b_1 = [1 + 0.5, -2 + 0.5] = [1.5, -1.5] → ReLU [1.5, 0] → 1.5 · [2, 0] + [0, 1] = [3, 1]
    out = feed_forward(np.array([[1.0, -2.0]]), np.eye(2), np.full(2, 0.5), np.array([[2.0, 0.0], [3.0, 1.0]]),
                       np.array([0.0, 1.0]))
    np.testing.assert_allclose(out, [[3.0, 1.0]])


def test_embed_by_hand():
    table = np.array([[0.0, 0.0], [1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(embed(np.array([[2, 0], [1, 1]]), table), [[[3, 4], [0, 0]], [[1, 2], [1, 2]]])


def test_embedding_backward_accumulates_repeated_ids():
    grad = embedding_backward(np.array([[1, 3, 1], [1, 0, 3]]), np.arange(12.0).reshape(2, 3, 2), vocab_size=5)
    # 词 1 在位置 (0,0)、(0,2)、(1,0)：[0,1] + [4,5] + [6,7]；词 3 在 (0,1)、(1,2)：[2,3] + [10,11]；词 0 在 (1,1)
    np.testing.assert_array_equal(grad, [[8, 9], [10, 13], [0, 0], [12, 14], [0, 0]])


def test_cross_entropy_by_hand():
    logits = np.array([[0.0, math.log(3)], [math.log(3), 0.0]])  # 两行的 softmax：[1/4, 3/4] 与 [3/4, 1/4]
    targets = np.array([1, 1])  # 正确答案的概率：3/4 与 1/4
    assert cross_entropy(logits, targets) == pytest.approx((-math.log(3 / 4) - math.log(1 / 4)) / 2)
    np.testing.assert_allclose(cross_entropy_backward(logits, targets), [[0.125, -0.125], [0.375, -0.375]])


@given(st.integers(1, 50), st.integers(1, 6), st.floats(-100, 100))
def test_cross_entropy_of_uniform_logits_is_log_V(V, N, c):
    targets = np.arange(N) % V
    assert cross_entropy(np.full((N, V), c), targets) == pytest.approx(math.log(V), rel=1e-12)


def test_cross_entropy_is_stable_for_huge_logits():
    logits = np.array([[1000.0, 0.0], [0.0, -1000.0]])  # naive exp 会溢出
    assert cross_entropy(logits, np.array([0, 0])) == pytest.approx(0.0, abs=1e-12)
    assert cross_entropy(logits, np.array([1, 1])) == pytest.approx(1000.0)
    assert np.all(np.isfinite(cross_entropy_backward(logits, np.array([1, 1]))))


# ---------------------------------------------------------------- 性质
shapes = st.tuples(st.lists(st.integers(1, 3), min_size=0, max_size=2), st.integers(2, 7))


@given(shapes, st.integers(0, 10**6), st.floats(0.1, 100), st.floats(-50, 50))
def test_layer_norm_rows_have_mean_0_variance_1_before_gamma_beta(shape, seed, scale, shift):
    lead, D = shape
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(*lead, D)) * scale + shift
    y = layer_norm(x, np.ones(D), np.zeros(D))
    var = x.var(axis=-1)
    np.testing.assert_allclose(y.mean(axis=-1), 0, atol=1e-9)
    np.testing.assert_allclose(y.var(axis=-1), var / (var + EPS), rtol=1e-9)  # σ²/(σ²+ε)：ε 只让它略小于 1
    y_exact = layer_norm(x, np.ones(D), np.zeros(D), eps=1e-12)
    np.testing.assert_allclose(y_exact.var(axis=-1)[var > 1e-4], 1, rtol=1e-7)  # ε → 0：方差就是 1
    gamma, beta = rng.normal(size=D), rng.normal(size=D)
    np.testing.assert_allclose(layer_norm(x, gamma, beta), gamma * y + beta, atol=1e-12)  # 然后才是 γ、β


@given(shapes, st.integers(0, 10**6))
def test_layer_norm_and_feed_forward_match_loops_and_act_per_position(shape, seed):
    lead, D = shape
    rng = np.random.default_rng(seed)
    x, gamma, beta = rng.normal(size=(*lead, D)), rng.normal(size=D), rng.normal(size=D)
    np.testing.assert_allclose(layer_norm(x, gamma, beta), ref_layer_norm(x, gamma, beta), rtol=1e-10, atol=1e-12)
    w_1, b_1, w_2, b_2 = rng.normal(size=(D, 3)), rng.normal(size=3), rng.normal(size=(3, D)), rng.normal(size=D)
    out = feed_forward(x, w_1, b_1, w_2, b_2)
    np.testing.assert_allclose(out, ref_feed_forward(x, w_1, b_1, w_2, b_2), rtol=1e-10, atol=1e-12)
    if lead:  # 逐位置：只喂第一个位置，结果相同
        first = (0,) * len(lead)
        np.testing.assert_allclose(feed_forward(x[first], w_1, b_1, w_2, b_2), out[first])


# ---------------------------------------------------------------- encoder_layer 与逐头参考实现
T, D, D_FF = 4, 8, 12


def _random_mask(rng, shape):
    m = rng.random(shape) < 0.5
    m[..., 0] = True  # 每行至少看一个位置
    return m


LAYER_CASES = [
    ("H=2", lambda r: dict(x=r.normal(size=(T, D)), num_heads=2)),
    ("H=1", lambda r: dict(x=r.normal(size=(T, D)), num_heads=1)),
    ("H=8-d_k=1", lambda r: dict(x=r.normal(size=(T, D)), num_heads=8)),
    ("batch-H=4", lambda r: dict(x=r.normal(size=(3, T, D)), num_heads=4)),
    ("causal", lambda r: dict(x=r.normal(size=(T, D)), num_heads=2, mask=tl.causal_mask(T))),
    ("batch-causal", lambda r: dict(x=r.normal(size=(2, T, D)), num_heads=2, mask=tl.causal_mask(T))),
    ("per-head-mask", lambda r: dict(x=r.normal(size=(T, D)), num_heads=2, mask=_random_mask(r, (2, T, T)))),
    ("batch-padding-mask", lambda r: dict(x=r.normal(size=(2, T, D)), num_heads=2,
                                          mask=_random_mask(r, (2, 1, T, T)))),
]


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
@pytest.mark.parametrize("case", [pytest.param(make, id=cid) for cid, make in LAYER_CASES])
def test_encoder_layer_matches_per_head_reference(case, norm_first):
    rng = np.random.default_rng(1)
    kw, p = case(rng), random_params(rng, D, D_FF)
    out, weights = encoder_layer(kw["x"], p, kw["num_heads"], mask=kw.get("mask"), norm_first=norm_first)
    ref_out, ref_w = ref_encoder(kw["x"], p, kw["num_heads"], kw.get("mask"), norm_first)
    np.testing.assert_allclose(weights, ref_w, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(out, ref_out, rtol=1e-10, atol=1e-12)


def test_post_and_pre_ln_differ():
    rng = np.random.default_rng(2)
    x, p = rng.normal(size=(T, D)), random_params(rng, D, D_FF)
    assert not np.allclose(encoder_layer(x, p, 2)[0], encoder_layer(x, p, 2, norm_first=True)[0])


@given(st.integers(0, 10**6), st.booleans(), st.integers(1, 4))
def test_causal_mask_passes_through(seed, norm_first, cut):
    rng = np.random.default_rng(seed)
    x, p = rng.normal(size=(5, D)), init_encoder_params(D, D_FF, rng)
    out, weights = encoder_layer(x, p, 4, mask=tl.causal_mask(5), norm_first=norm_first)
    assert np.all(np.triu(weights, k=1) == 0)  # 每个头：对角线上方全 0
    np.testing.assert_allclose(weights.sum(axis=-1), 1)
    changed = x.copy()
    changed[cut:] = rng.normal(size=changed[cut:].shape)  # 改掉后面的位置
    out2, _ = encoder_layer(changed, p, 4, mask=tl.causal_mask(5), norm_first=norm_first)
    np.testing.assert_allclose(out2[:cut], out[:cut], atol=1e-12)  # 前面的位置看不见它们


def test_float32_is_preserved():
    rng = np.random.default_rng(3)
    p32 = {k: v.astype(np.float32) for k, v in random_params(rng, D, D_FF).items()}
    x = rng.normal(size=(2, T, D)).astype(np.float32)
    ones, zeros = np.ones(D, np.float32), np.zeros(D, np.float32)
    ffn = (p32["w_1"], p32["b_1"], p32["w_2"], p32["b_2"])
    results = [*encoder_layer(x, p32, 2), *encoder_layer(x, p32, 2, norm_first=True), layer_norm(x, ones, zeros),
               feed_forward(x, *ffn), *layer_norm_backward(x, ones, x), *feed_forward_backward(x, *ffn, x).values(),
               embed(np.array([0, 2]), x[0]), embedding_backward(np.array([0, 2]), x[0, :2], 3),
               cross_entropy(x, np.zeros((2, T), int)), cross_entropy_backward(x, np.zeros((2, T), int))]
    assert [r.dtype for r in results] == [np.float32] * len(results)
    np.testing.assert_allclose(results[0], encoder_layer(x.astype(float), random_params(
        np.random.default_rng(3), D, D_FF), 2)[0], atol=1e-4)  # 同一组参数的 float64 结果


def test_inputs_are_not_modified():
    rng = np.random.default_rng(4)
    x, p = rng.normal(size=(T, D)), random_params(rng, D, D_FF)
    saved_x, saved_p = x.copy(), {k: v.copy() for k, v in p.items()}
    encoder_layer(x, p, 2)
    encoder_layer(x, p, 2, norm_first=True)
    layer_norm_backward(x, p["ln1_gamma"], x)
    feed_forward_backward(x, p["w_1"], p["b_1"], p["w_2"], p["b_2"], x)
    np.testing.assert_array_equal(x, saved_x)
    assert all(np.array_equal(p[k], saved_p[k]) for k in p)


def test_init_encoder_params():
    p = init_encoder_params(64, 256, np.random.default_rng(0))
    assert tuple(p) == PARAM_KEYS
    assert p["w_q"].shape == (64, 64) and p["w_1"].shape == (64, 256) and p["w_2"].shape == (256, 64)
    assert p["b_1"].shape == (256,) and p["ln2_beta"].shape == (64,)
    assert np.std(p["w_1"]) == pytest.approx(1 / 8, rel=0.05)  # 1/√64
    assert np.std(p["w_2"]) == pytest.approx(1 / 16, rel=0.05)  # 1/√256
    assert np.all(p["ln1_gamma"] == 1) and np.all(p["ln1_beta"] == 0) and np.all(p["b_o"] == 0)
    scaled = init_encoder_params(64, 256, np.random.default_rng(0), scale=0.5)
    assert np.std(scaled["w_v"]) == pytest.approx(0.5, rel=0.05) and np.std(scaled["w_2"]) == pytest.approx(0.5, rel=0.05)
    again = init_encoder_params(64, 256, np.random.default_rng(0))
    assert all(np.array_equal(p[k], again[k]) for k in p)  # 同一个种子 → 同一组参数


# ---------------------------------------------------------------- 反向传播 vs. 中心差分
def numeric_grad(f, a, h=1e-6):
    """∂f/∂a 的中心差分：(f(a + h e_i) - f(a - h e_i)) / 2h，逐个元素。"""
    grad = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        plus, minus = a.copy(), a.copy()
        plus[idx] += h
        minus[idx] -= h
        grad[idx] = (f(plus) - f(minus)) / (2 * h)
    return grad


def assert_close_grad(analytic, numeric):
    denom = np.linalg.norm(analytic) + np.linalg.norm(numeric)
    rel = 0.0 if denom == 0 else np.linalg.norm(analytic - numeric) / denom
    assert rel <= 1e-6, f"相对误差 {rel:.2e}"


def test_numeric_grad_check_can_fail():
    x = np.array([1.0, 2.0, 4.0])
    grad_x, _, _ = layer_norm_backward(x, np.ones(3), np.array([1.0, 0.0, 0.0]))
    numeric = numeric_grad(lambda a: layer_norm(a, np.ones(3), np.zeros(3))[0], x)
    assert_close_grad(grad_x, numeric)
    with pytest.raises(AssertionError, match="相对误差"):
        assert_close_grad(grad_x * (1 + 1e-5), numeric)  # 差十万分之一就被抓住


@given(shapes, st.integers(0, 10**6), st.sampled_from([1e-5, 1e-2, 1.0]))
def test_layer_norm_backward_matches_finite_differences(shape, seed, eps):
    lead, D = shape
    eps = 1.0 if D == 2 else eps  # D = 2 且 ε 很小时输出几乎恒为 ±1，∂/∂x ~ ε/σ³ 小到与差分的舍入噪声同级
    rng = np.random.default_rng(seed)
    x, gamma, beta, g = (rng.normal(size=s) for s in [(*lead, D), D, D, (*lead, D)])
    loss = lambda x_, gamma_, beta_: np.sum(layer_norm(x_, gamma_, beta_, eps) * g)  # noqa: E731
    grad_x, grad_gamma, grad_beta = layer_norm_backward(x, gamma, g, eps)
    assert_close_grad(grad_x, numeric_grad(lambda a: loss(a, gamma, beta), x))
    assert_close_grad(grad_gamma, numeric_grad(lambda a: loss(x, a, beta), gamma))
    assert_close_grad(grad_beta, numeric_grad(lambda a: loss(x, gamma, a), beta))
    np.testing.assert_allclose(grad_x.sum(axis=-1), 0, atol=1e-10)  # 整体平移 x 不改变输出


@given(shapes, st.integers(1, 6), st.integers(0, 10**6))
def test_feed_forward_backward_matches_finite_differences(shape, d_ff, seed):
    lead, D = shape
    rng = np.random.default_rng(seed)
    args = {"x": rng.normal(size=(*lead, D)), "w_1": rng.normal(size=(D, d_ff)), "b_1": rng.normal(size=d_ff),
            "w_2": rng.normal(size=(d_ff, D)), "b_2": rng.normal(size=D)}
    g = rng.normal(size=(*lead, D))
    grads = feed_forward_backward(**args, grad_out=g)
    assert set(grads) == set(args)
    for name, value in args.items():
        f = lambda a, name=name: np.sum(feed_forward(**(args | {name: a})) * g)  # noqa: E731
        assert grads[name].shape == value.shape
        assert_close_grad(grads[name], numeric_grad(f, value))


@given(st.lists(st.integers(1, 4), min_size=1, max_size=2), st.integers(1, 5), st.integers(1, 4), st.integers(0, 10**6))
def test_embedding_backward_matches_finite_differences(lead, V, D, seed):
    rng = np.random.default_rng(seed)
    ids, table = rng.integers(0, V, size=lead), rng.normal(size=(V, D))
    g = rng.normal(size=(*lead, D))
    numeric = numeric_grad(lambda t: np.sum(embed(ids, t) * g), table)
    assert_close_grad(embedding_backward(ids, g, V), numeric)


@given(st.lists(st.integers(1, 4), min_size=0, max_size=2), st.integers(1, 6), st.integers(0, 10**6),
       st.floats(0.1, 3))
def test_cross_entropy_backward_matches_finite_differences(lead, V, seed, scale):
    # 打分差距极大时梯度 ~e^{-差距}，小到与差分的舍入噪声同级；那种情形由 test_cross_entropy_is_stable... 检查
    rng = np.random.default_rng(seed)
    logits, targets = rng.normal(size=(*lead, V)) * scale, rng.integers(0, V, size=lead)
    grad = cross_entropy_backward(logits, targets)
    assert_close_grad(grad, numeric_grad(lambda a: cross_entropy(a, targets), logits, h=1e-4))
    np.testing.assert_allclose(grad.sum(axis=-1), 0, atol=1e-12)


# ---------------------------------------------------------------- 坏输入
X = np.ones((3, 4))
P = init_encoder_params(4, 8, np.random.default_rng(0))
TABLE = np.ones((3, 4))
VE, TE = ValueError, TypeError


def layer(**kw):
    args = dict(x=X, params=P, num_heads=2) | kw
    return lambda: encoder_layer(**args)


def params_with(**changes):
    return {k: v for k, v in (P | changes).items() if v is not None}


def call(fn, *a, **kw):
    return lambda: fn(*a, **kw)


ERROR_CASES = [
    # ---- params
    ("layer-params-missing-key", layer(params=params_with(w_1=None)), VE, r"params 的键不对：缺少 w_1。.*w_q, w_k"),
    ("layer-params-extra-key", layer(params=params_with(w_3=np.ones((4, 4)))), VE, r"params 的键不对：多出 w_3"),
    ("layer-params-not-dict", layer(params=list(P.values())), TE, r"params 必须是字典.*list.*init_encoder_params"),
    ("layer-w_1-shape", layer(params=params_with(w_1=np.ones((5, 8)))), VE,
     r"params\['w_1'\] 的形状应为 \(4, 任意\)，收到的是 \(5, 8\).*D=4"),
    ("layer-w_2-shape", layer(params=params_with(w_2=np.ones((4, 4)))), VE,
     r"params\['w_2'\] 的形状应为 \(8, 4\)，收到的是 \(4, 4\).*d_ff=8"),
    ("layer-ln1_gamma-length", layer(params=params_with(ln1_gamma=np.ones(3))), VE,
     r"params\['ln1_gamma'\] 的形状应为 \(4,\)，收到的是 \(3,\)"),
    ("layer-w_q-nan", layer(params=params_with(w_q=np.full((4, 4), np.nan))), VE, r"params\['w_q'\] 含有 NaN"),
    # ---- 其他参数
    ("layer-D-not-divisible", layer(num_heads=3), VE, r"d_model=4 必须能被 num_heads=3 整除"),
    ("layer-eps-zero", layer(eps=0.0), VE, r"eps 必须是有限的正实数 \(> 0\)，收到的是 0\.0"),
    ("layer-eps-string", layer(eps="1e-5"), TE, r"eps 必须是正实数.*字符串"),
    ("layer-norm_first-string", layer(norm_first="pre"), TE, r"norm_first 必须是 bool（True 或 False）.*字符串 'pre'"),
    ("layer-mask-shape", layer(mask=np.ones((3, 5), bool)), VE, r"mask 的形状 \(3, 5\) 无法广播.*\(2, 3, 3\)"),
    ("layer-x-1d", layer(x=np.ones(4)), VE, r"x 至少要有 2 维.*shape=\(4,\)"),
    ("layer_norm-gamma-length", call(layer_norm, X, np.ones(3), np.zeros(4)), VE,
     r"gamma 的形状应为 \(4,\)，收到的是 \(3,\).*D=4"),
    ("layer_norm-eps-negative", call(layer_norm, X, np.ones(4), np.zeros(4), eps=-1.0), VE, r"eps 必须是有限的正实数.*-1\.0"),
    ("ffn-w_1-rows", call(feed_forward, X, np.ones((3, 8)), np.zeros(8), np.ones((8, 4)), np.zeros(4)), VE,
     r"w_1 的形状应为 \(4, 任意\)，收到的是 \(3, 8\)"),
    ("ffn-b_1-length", call(feed_forward, X, np.ones((4, 8)), np.zeros(4), np.ones((8, 4)), np.zeros(4)), VE,
     r"b_1 的形状应为 \(8,\)，收到的是 \(4,\).*d_ff=8"),
    # ---- 词编号
    ("embed-id-out-of-range", call(embed, np.array([0, 5]), TABLE), VE, r"token_ids 越界.*V=3.*\[0, 2\].*\(1,\) 的值 5"),
    ("embed-id-negative", call(embed, np.array([[0, -1]]), TABLE), VE, r"token_ids 越界.*\(0, 1\) 的值 -1"),
    ("embed-float-ids", call(embed, np.array([0.0, 1.0]), TABLE), TE, r"token_ids.*dtype 必须是整数.*float64"),
    ("embed-list-ids", call(embed, [0, 1], TABLE), TE, r"token_ids 必须是整数 NumPy 数组.*list"),
    ("embed-table-1d", call(embed, np.array([0]), np.ones(3)), VE, r"table 的形状应为 \(任意, 任意\).*\(3,\)"),
    ("ce-target-out-of-range", call(cross_entropy, np.zeros((2, 3)), np.array([0, 3])), VE, r"targets 越界.*V=3"),
    ("ce-float-targets", call(cross_entropy_backward, np.zeros((2, 3)), np.array([0.0, 1.0])), TE,
     r"targets.*dtype 必须是整数"),
    ("ce-targets-shape", call(cross_entropy, np.zeros((2, 3)), np.array([0, 1, 2])), VE,
     r"targets 的形状.*期望 \(2,\).*\(3,\)"),
    # ---- grad_out 形状
    ("ln-backward-grad_out-shape", call(layer_norm_backward, X, np.ones(4), np.ones((3, 5))), VE,
     r"grad_out 的形状应为 \(3, 4\)，收到的是 \(3, 5\)"),
    ("ffn-backward-grad_out-shape", call(feed_forward_backward, X, P["w_1"], P["b_1"], P["w_2"], P["b_2"],
                                         np.ones((2, 4))), VE, r"grad_out 的形状应为 \(3, 4\)，收到的是 \(2, 4\)"),
    ("embedding-backward-grad_out-shape", call(embedding_backward, np.array([0, 1]), np.ones((3, 4)), 3), VE,
     r"grad_out 的形状应为 \(2, 4\)，收到的是 \(3, 4\)"),
    ("embedding-backward-vocab_size-0", call(embedding_backward, np.array([0]), np.ones((1, 4)), 0), VE,
     r"vocab_size 必须是正整数.*0"),
    # ---- init_encoder_params
    ("init-rng-int", call(init_encoder_params, 4, 8, 0), TE, r"rng 必须是 np\.random\.Generator.*int"),
    ("init-d_ff-zero", call(init_encoder_params, 4, 0, np.random.default_rng(0)), VE, r"d_ff 必须是正整数.*0"),
    ("init-scale-negative", call(init_encoder_params, 4, 8, np.random.default_rng(0), scale=-0.1), VE,
     r"scale 必须是有限的正实数.*-0\.1"),
]


@pytest.mark.parametrize("case_id, fn, exc, pattern", [pytest.param(*c, id=c[0]) for c in ERROR_CASES])
def test_bad_input_raises_clear_chinese_error(case_id, fn, exc, pattern):
    check_error(fn, exc, pattern)  # 恰好是这个异常类型、信息匹配正则、而且是中文


# ---------------------------------------------------------------- 极端的量级：有限输入给出有限、正确的结果（issue 8）


@given(st.floats(min_value=-140, max_value=300))
def test_layer_norm_is_scale_free_at_every_magnitude(power):
    """LayerNorm 只看形状不看大小：把一行乘上 10^power，结果不变，也不发警告。

    power >= -140 时方差 (≥ 1e-280) 比 ε = 1e-300 大 1e20 倍，ε 可以忽略；更小的输入里 ε 本来就该起作用。"""
    x = np.array([[3.0, -1.0, 0.5, 2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = layer_norm(x * 10.0**power, np.ones(4), np.zeros(4), eps=1e-300)
    np.testing.assert_allclose(big, layer_norm(x, np.ones(4), np.zeros(4), eps=1e-300), rtol=1e-12, atol=1e-12)


def test_cross_entropy_of_logits_1e308_apart_is_exact():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cross_entropy(np.array([[1e308, -1e308]]), np.array([0])) == 0.0  # 正确答案独得全部概率
