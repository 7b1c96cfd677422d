"""core/encoder.py：一层编码器——init_encoder_params、encoder_layer、encoder_layer_steps、encoder_layer_vjp、
encoder_layer_backward（post-LN 与 pre-LN，有残差与去掉残差的对照）。

独立的参照：
- 前向与每一步的中间结果对 tests/helpers/reference.py 的 ref_encoder_steps（逐头、逐元素的纯循环）；
- 去掉残差的一层对公开的零件（multi_head_attention、layer_norm、feed_forward）一块块手工接出来的结果；
- 反向对中心差分（float64，相对误差 ≤ 1e-6）。差分只调用前向 encoder_layer，而前向本身由上面的逐元素参照验证。
"""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import transformer_lab as tl
from transformer_lab.core.encoder import (
    PARAM_KEYS,
    encoder_layer,
    encoder_layer_backward,
    encoder_layer_steps,
    encoder_layer_unchecked,
    encoder_layer_vjp,
    init_encoder_params,
)

from helpers.errors import call, error_table_test
from helpers.gradcheck import assert_gradients_close, numeric_gradient
from helpers.reference import ref_encoder, ref_encoder_steps

T, D, D_FF = 4, 8, 12


def random_params(rng, D, d_ff):
    """每个参数都随机（包括偏置和 γ、β），这样哪一项被漏掉都能被测出来。"""
    p = {k: rng.normal(size=v.shape) / math.sqrt(v.shape[0]) for k, v in init_encoder_params(D, d_ff, rng).items()}
    p["ln1_gamma"], p["ln2_gamma"] = 1 + 0.3 * rng.normal(size=D), 1 + 0.3 * rng.normal(size=D)
    return p


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
NORMS = pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
CASES = pytest.mark.parametrize("case", [pytest.param(make, id=cid) for cid, make in LAYER_CASES])


# ---------------------------------------------------------------- 前向：对逐头、逐元素的参照

@NORMS
@CASES
def test_encoder_layer_matches_per_head_reference(case, norm_first):
    rng = np.random.default_rng(1)
    kw, p = case(rng), random_params(rng, D, D_FF)
    out, weights = encoder_layer(kw["x"], p, kw["num_heads"], mask=kw.get("mask"), norm_first=norm_first)
    ref_out, ref_w = ref_encoder(kw["x"], p, kw["num_heads"], kw.get("mask"), norm_first)
    np.testing.assert_allclose(weights, ref_w, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(out, ref_out, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("residual", [True, False], ids=["residual", "no-residual"])
@NORMS
@CASES
def test_encoder_layer_steps_match_a_step_by_step_reference(case, norm_first, residual):
    """每一步都有名字（post-LN：a、u、h、f、v、out；pre-LN：n1、a、h、n2、f、out），逐个对照；out 就是 encoder_layer 的输出。"""
    rng = np.random.default_rng(2)
    kw, p = case(rng), random_params(rng, D, D_FF)
    args = (kw["x"], p, kw["num_heads"], kw.get("mask"), norm_first)
    steps = encoder_layer_steps(*args, residual=residual)
    ref = ref_encoder_steps(*args, residual=residual)
    assert list(steps) == list(ref)  # 同样的名字、同样的先后
    for name in ref:
        np.testing.assert_allclose(steps[name], ref[name], rtol=1e-10, atol=1e-12, err_msg=name)
    out, weights = encoder_layer(*args, residual=residual)
    np.testing.assert_array_equal(steps["out"], out)
    np.testing.assert_array_equal(steps["weights"], weights)


@NORMS
@pytest.mark.parametrize("masked", [False, True], ids=["no-mask", "causal"])
def test_without_residual_the_layer_is_the_parts_composed_by_hand(norm_first, masked):
    """residual=False：post-LN 是 LN₂(FFN(LN₁(MHA(x))))，pre-LN 是 FFN(LN₂(MHA(LN₁(x))))，用公开的零件接出来对照。"""
    rng = np.random.default_rng(3)
    p, x = random_params(rng, D, D_FF), rng.normal(size=(2, T, D))
    mask = tl.causal_mask(T) if masked else None

    def mha(a):
        return tl.multi_head_attention(a, p["w_q"], p["w_k"], p["w_v"], p["w_o"], 2, mask=mask,
                                       b_q=p["b_q"], b_k=p["b_k"], b_v=p["b_v"], b_o=p["b_o"])

    ln1 = lambda a: tl.layer_norm(a, p["ln1_gamma"], p["ln1_beta"])  # noqa: E731
    ln2 = lambda a: tl.layer_norm(a, p["ln2_gamma"], p["ln2_beta"])  # noqa: E731
    ffn = lambda a: tl.feed_forward(a, p["w_1"], p["b_1"], p["w_2"], p["b_2"])  # noqa: E731
    if norm_first:
        a, weights = mha(ln1(x))
        expected = ffn(ln2(a))
    else:
        a, weights = mha(x)
        expected = ln2(ffn(ln1(a)))
    out, got_weights = encoder_layer(x, p, 2, mask=mask, norm_first=norm_first, residual=False)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_weights, weights, rtol=1e-12, atol=1e-12)
    assert not np.allclose(out, encoder_layer(x, p, 2, mask=mask, norm_first=norm_first)[0])  # 残差真的被去掉了


@NORMS
def test_gelu_layer_is_the_parts_composed_by_hand(norm_first):
    """activation="gelu"（BERT 一族）：与用 feed_forward(activation="gelu") 手接的一层相同，且与 ReLU 的不同。"""
    rng = np.random.default_rng(4)
    p, x = random_params(rng, D, D_FF), rng.normal(size=(T, D))
    a, weights = tl.multi_head_attention(x if not norm_first else tl.layer_norm(x, p["ln1_gamma"], p["ln1_beta"]),
                                         p["w_q"], p["w_k"], p["w_v"], p["w_o"], 2,
                                         b_q=p["b_q"], b_k=p["b_k"], b_v=p["b_v"], b_o=p["b_o"])
    ffn = lambda a_: tl.feed_forward(a_, p["w_1"], p["b_1"], p["w_2"], p["b_2"], activation="gelu")  # noqa: E731
    if norm_first:
        h = x + a
        expected = h + ffn(tl.layer_norm(h, p["ln2_gamma"], p["ln2_beta"]))
    else:
        h = tl.layer_norm(x + a, p["ln1_gamma"], p["ln1_beta"])
        expected = tl.layer_norm(h + ffn(h), p["ln2_gamma"], p["ln2_beta"])
    out, _ = encoder_layer(x, p, 2, norm_first=norm_first, activation="gelu")
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)
    assert not np.allclose(out, encoder_layer(x, p, 2, norm_first=norm_first)[0])  # 激活函数真的换了


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
    results = [*encoder_layer(x, p32, 2), *encoder_layer(x, p32, 2, norm_first=True)]
    assert [r.dtype for r in results] == [np.float32] * len(results)
    np.testing.assert_allclose(results[0], encoder_layer(x.astype(float), random_params(
        np.random.default_rng(3), D, D_FF), 2)[0], atol=1e-4)  # 同一组参数的 float64 结果


def test_inputs_are_not_modified():
    rng = np.random.default_rng(4)
    x, p = rng.normal(size=(T, D)), random_params(rng, D, D_FF)
    saved_x, saved_p = x.copy(), {k: v.copy() for k, v in p.items()}
    encoder_layer(x, p, 2)
    encoder_layer(x, p, 2, norm_first=True)
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


# ---------------------------------------------------------------- 反向：对中心差分

def _check_all_grads(x, p, H, mask, norm_first, g, residual=True, activation="relu"):
    options = dict(mask=mask, norm_first=norm_first, residual=residual, activation=activation)
    grads = encoder_layer_backward(x, p, g, H, **options)
    assert list(grads) == ["x", *PARAM_KEYS]

    def loss(x_, p_):
        return np.sum(encoder_layer(x_, p_, H, **options)[0] * g)

    # floor：梯度很小（随机参数下 post-LN 无残差时 ‖∂L/∂w_q‖ 可以只有 3e-4）时，中心差分的舍入噪声（约 1e-10 一个元素）
    # 就会占到 1e-6 以上的相对误差；这时只要求绝对误差 ≤ 1e-8，真的算错了的梯度照样差得远（见 helpers/test_gradcheck.py）。
    assert_gradients_close(grads["x"], numeric_gradient(lambda a: loss(a, p), x), floor=1e-2, name="x")
    np.testing.assert_allclose(grads["b_k"], 0, atol=1e-12)  # 键的偏置给一行分数加同一个数，softmax 不变：梯度恰为 0
    for key in PARAM_KEYS:
        assert grads[key].shape == p[key].shape
        if key != "b_k":
            numeric = numeric_gradient(lambda a, key=key: loss(x, p | {key: a}), p[key])
            assert_gradients_close(grads[key], numeric, floor=1e-2, name=key)


@settings(max_examples=8)
@given(st.integers(0, 10**6), st.booleans(), st.booleans(), st.sampled_from([(), (2,)]), st.sampled_from([1, 2]))
def test_encoder_layer_backward_matches_finite_differences(seed, norm_first, causal, lead, H):
    rng = np.random.default_rng(seed)
    T_, D_, d_ff = 3, 4, 6
    p = random_params(rng, D_, d_ff)
    x, g = rng.normal(size=(*lead, T_, D_)), rng.normal(size=(*lead, T_, D_))
    _check_all_grads(x, p, H, tl.causal_mask(T_) if causal else None, norm_first, g)


@NORMS
@settings(max_examples=6)
@given(st.integers(0, 10**6), st.booleans(), st.sampled_from([(), (2,)]), st.sampled_from([1, 2]))
@example(seed=2277, causal=False, lead=(), H=1)  # post-LN 时 w_q 的梯度只有 3e-4，纯相对误差 2.65e-6 曾误报
def test_encoder_layer_backward_without_residual_matches_finite_differences(norm_first, seed, causal, lead, H):
    """residual=False（第 8 章的对照实验）：梯度没有了那条直路，照样要与中心差分一致。"""
    rng = np.random.default_rng(seed)
    T_, D_, d_ff = 3, 4, 6
    p = random_params(rng, D_, d_ff)
    x, g = rng.normal(size=(*lead, T_, D_)), rng.normal(size=(*lead, T_, D_))
    _check_all_grads(x, p, H, tl.causal_mask(T_) if causal else None, norm_first, g, residual=False)


@NORMS
@settings(max_examples=4)
@given(st.integers(0, 10**6))
def test_encoder_layer_backward_with_gelu_matches_finite_differences(norm_first, seed):
    rng = np.random.default_rng(seed)
    p = random_params(rng, 4, 6)
    x, g = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    _check_all_grads(x, p, 2, None, norm_first, g, activation="gelu")


def test_post_ln_gradient_of_a_uniform_shift_is_zero_and_beta2_counts_positions():
    rng = np.random.default_rng(3)
    p = init_encoder_params(8, 16, rng)
    x = rng.normal(size=(2, 5, 8))  # (B=2, T=5, D=8)
    grads = encoder_layer_backward(x, p, np.ones((2, 5, 8)), num_heads=2)
    np.testing.assert_allclose(grads["x"], 0, atol=1e-12)  # 最后一步是 LN₂：整体平移被减掉
    np.testing.assert_array_equal(grads["ln2_beta"], np.full(8, 10.0))  # B·T = 10 个位置


def test_pre_ln_keeps_a_direct_path_for_the_gradient():
    """pre-LN：out = x + (…)，把两块的权重都设成 0，out = x 恰好成立，梯度原样穿过。"""
    rng = np.random.default_rng(4)
    p = {k: np.zeros_like(v) for k, v in init_encoder_params(4, 8, rng).items()}
    p["ln1_gamma"], p["ln2_gamma"] = np.ones(4), np.ones(4)
    x, g = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    np.testing.assert_array_equal(encoder_layer_backward(x, p, g, 2, norm_first=True)["x"], g)


def test_causal_mask_stops_gradient_flowing_to_earlier_positions_from_later_outputs():
    rng = np.random.default_rng(5)
    p = random_params(rng, 4, 8)
    x, g = rng.normal(size=(4, 4)), np.zeros((4, 4))
    g[1] = rng.normal(size=4)  # 只有位置 1 的输出有梯度
    grads = encoder_layer_backward(x, p, g, 2, mask=tl.causal_mask(4), norm_first=True)
    np.testing.assert_array_equal(grads["x"][2:], 0)  # 位置 1 看不见位置 2、3
    assert np.all(np.abs(grads["x"][:2]).sum(axis=-1) > 0)


def test_backward_never_modifies_inputs():
    rng = np.random.default_rng(6)
    p = random_params(rng, 4, 8)
    x, g = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    copies = {k: v.copy() for k, v in p.items()}, x.copy(), g.copy()
    encoder_layer_backward(x, p, g, 2)
    assert all(np.array_equal(p[k], copies[0][k]) for k in p)
    np.testing.assert_array_equal(x, copies[1])
    np.testing.assert_array_equal(g, copies[2])


@pytest.mark.parametrize("norm_first", [False, True])
def test_float32_is_preserved_and_vjp_matches_backward(norm_first):
    rng = np.random.default_rng(8)
    p = random_params(rng, 8, 16)
    x, g = rng.normal(size=(2, 5, 8)), rng.normal(size=(2, 5, 8))
    p32 = {k: v.astype(np.float32) for k, v in p.items()}
    grads32 = encoder_layer_backward(x.astype(np.float32), p32, g.astype(np.float32), 2, norm_first=norm_first)
    assert all(v.dtype == np.float32 for v in grads32.values())
    out, weights, backward = encoder_layer_vjp(x, p, 2, norm_first=norm_first)
    ref_out, ref_weights = encoder_layer(x, p, 2, norm_first=norm_first)
    np.testing.assert_allclose(out, ref_out, atol=1e-12)
    np.testing.assert_allclose(weights, ref_weights, atol=1e-12)
    grads = backward(g)
    for k, v in encoder_layer_backward(x, p, g, 2, norm_first=norm_first).items():
        np.testing.assert_array_equal(grads[k], v)
        np.testing.assert_allclose(grads32[k], v, rtol=2e-3, atol=2e-3)


# ---------------------------------------------------------------- 坏输入

X = np.ones((3, 4))
P = init_encoder_params(4, 8, np.random.default_rng(0))
RNG = np.random.default_rng(0)
VE, TE = ValueError, TypeError


def layer(**kw):
    args = dict(x=X, params=P, num_heads=2) | kw
    return lambda: encoder_layer(**args)


def backward(**kw):
    args = dict(x=X, params=P, grad_out=np.ones((3, 4)), num_heads=2) | kw
    return lambda: encoder_layer_backward(**args)


def steps(**kw):
    args = dict(x=X, params=P, num_heads=2) | kw
    return lambda: encoder_layer_steps(**args)


def params_with(**changes):
    return {k: v for k, v in (P | changes).items() if v is not None}


ERROR_CASES = [
    ("layer-activation-unknown", layer(activation="tanh"), VE, r"activation.*'tanh'.*relu.*gelu"),
    ("backward-activation-type", backward(activation=None), TE, r"activation"),
    # ---- encoder_layer：params
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
    # ---- encoder_layer：其他参数
    ("layer-D-not-divisible", layer(num_heads=3), VE, r"d_model=4 必须能被 num_heads=3 整除"),
    ("layer-eps-zero", layer(eps=0.0), VE, r"eps 必须是有限的正实数 \(> 0\)，收到的是 0\.0"),
    ("layer-eps-string", layer(eps="1e-5"), TE, r"eps 必须是正实数.*字符串"),
    ("layer-norm_first-string", layer(norm_first="pre"), TE, r"norm_first 必须是 bool（True 或 False）.*字符串 'pre'"),
    ("layer-residual-int", layer(residual=0), TE, r"residual 必须是 bool（True 或 False）.*int 0"),
    ("layer-mask-shape", layer(mask=np.ones((3, 5), bool)), VE, r"mask 的形状 \(3, 5\) 无法广播.*\(2, 3, 3\)"),
    ("layer-x-1d", layer(x=np.ones(4)), VE, r"x 至少要有 2 维.*shape=\(4,\)"),
    # ---- encoder_layer_steps、encoder_layer_vjp：与 encoder_layer 同一套检查
    ("steps-residual-string", steps(residual="no"), TE, r"residual 必须是 bool.*'no'"),
    ("steps-params-missing-key", steps(params=params_with(ln2_beta=None)), VE, r"params 的键不对：缺少 ln2_beta"),
    ("vjp-backward-grad_out-shape", lambda: encoder_layer_vjp(X, P, 2)[2](np.ones((3, 5))), VE,
     r"grad_out 的形状应为 \(3, 4\)，收到的是 \(3, 5\)"),
    # ---- encoder_layer_backward
    ("backward-grad_out-shape", backward(grad_out=np.ones((3, 5))), VE, r"grad_out 的形状应为 \(3, 4\)，收到的是 \(3, 5\)"),
    ("backward-missing-key", backward(params={k: v for k, v in P.items() if k != "b_2"}), VE,
     r"params 的键不对：缺少 b_2"),
    ("backward-gamma-length", backward(params=P | {"ln2_gamma": np.ones(5)}), VE,
     r"params\['ln2_gamma'\] 的形状应为 \(4,\)，收到的是 \(5,\)"),
    ("backward-heads", backward(num_heads=3), VE, r"d_model=4 必须能被 num_heads=3 整除"),
    ("backward-eps", backward(eps=-1.0), VE, r"eps 必须是有限的正实数"),
    ("backward-norm_first", backward(norm_first=1), TE, r"norm_first 必须是 bool"),
    ("backward-mask", backward(mask=np.ones((2, 2), bool)), VE, r"mask 的形状 \(2, 2\) 无法广播"),
    ("encoder_backward-grad_out-shape", call(tl.encoder_layer_backward, X, tl.init_encoder_params(4, 8, RNG),
                                              np.ones((3, 5)), 2), VE, r"grad_out 的形状应为 \(3, 4\)，收到的是 \(3, 5\)"),
    ("encoder_backward-missing-key", call(tl.encoder_layer_backward, X, {"w_q": np.eye(4)}, X, 2), VE,
     r"params 的键不对：缺少 w_k"),
    # ---- init_encoder_params
    ("init-rng-int", call(init_encoder_params, 4, 8, 0), TE, r"rng 必须是 np\.random\.Generator.*int"),
    ("init-d_ff-zero", call(init_encoder_params, 4, 0, np.random.default_rng(0)), VE, r"d_ff 必须是正整数.*0"),
    ("init-scale-negative", call(init_encoder_params, 4, 8, np.random.default_rng(0), scale=-0.1), VE,
     r"scale 必须是有限的正实数.*-0\.1"),
    # ---- 溢出：残差的和、反向的梯度
    ("layer-residual-overflow", layer(x=np.full((3, 4), 1.5e308), params=P | {"w_q": np.zeros((4, 4)), "w_k": np.zeros((4, 4)),
                                      "w_v": np.eye(4), "w_o": np.eye(4), "b_v": np.zeros(4), "b_o": np.zeros(4)}), VE,
     r"第一个残差 x \+ MHA\(x\) 溢出"),
    ("backward-grad-overflow", backward(params=P | {"ln2_gamma": np.full(4, 1e300)}, grad_out=np.full((3, 4), 1e300)), VE,
     r"encoder_layer 的反向 \(backward\) 的梯度 .* 溢出"),
    ("init-scale-overflow", call(init_encoder_params, 4, 8, np.random.default_rng(0), scale=1e308), VE,
     r"随机权重 w_q（scale=1e\+308） 溢出.*scale 多在 0\.01 到 1 之间"),
    ("init-scale-huge-int", call(init_encoder_params, 4, 8, np.random.default_rng(0), scale=10**400), VE,
     r"scale 太大了，超出 float64 的范围"),
    ("init-over-budget", call(init_encoder_params, 100_000, 100_000, np.random.default_rng(0)), VE,
     r"一层编码器的权重（d_model=100000, d_ff=100000） 要占 447 GiB"),
]
test_documented_errors = error_table_test(ERROR_CASES)


@pytest.mark.parametrize("norm_first", [True, False])
def test_forward_only_mode_is_the_same_forward_without_a_backward(norm_first):
    """``with_backward=False``（逐词生成用）：每一步的中间结果相同（LayerNorm 只做前向，舍入可能差 1e-15 量级），
    只是不交出反向函数。"""
    rng = np.random.default_rng(11)
    params, x = init_encoder_params(8, 16, rng), rng.normal(size=(2, 5, 8))
    mask = tl.causal_mask(5)
    full, backward = encoder_layer_unchecked(x, params, 2, mask, norm_first, 1e-5, True)
    forward_only, none = encoder_layer_unchecked(x, params, 2, mask, norm_first, 1e-5, True, with_backward=False)
    assert callable(backward) and none is None and list(full) == list(forward_only)
    for key in full:
        np.testing.assert_allclose(full[key], forward_only[key], rtol=0, atol=1e-12)
