"""一整层编码器的反向传播 encoder_layer_backward：与中心差分比较（float64，相对误差 ≤ 1e-6），post-LN 与 pre-LN，
带或不带因果掩码、带或不带批次维；以及坏输入。参考的差分只调用前向 encoder_layer（它本身由 test_layer.py 的逐元素参考验证）。"""

import numpy as np
import pytest
from conftest import check_error
from hypothesis import given, settings
from hypothesis import strategies as st
from test_layer import assert_close_grad, numeric_grad, random_params

import transformer_lab as tl
from transformer_lab.core.encoder import PARAM_KEYS, encoder_layer, encoder_layer_backward, init_encoder_params


def _check_all_grads(x, p, H, mask, norm_first, g):
    grads = encoder_layer_backward(x, p, g, H, mask=mask, norm_first=norm_first)
    assert list(grads) == ["x", *PARAM_KEYS]
    loss = lambda x_, p_: np.sum(encoder_layer(x_, p_, H, mask=mask, norm_first=norm_first)[0] * g)  # noqa: E731
    assert_close_grad(grads["x"], numeric_grad(lambda a: loss(a, p), x))
    np.testing.assert_allclose(grads["b_k"], 0, atol=1e-12)  # 键的偏置给一行分数加同一个数，softmax 不变：梯度恰为 0
    for key in PARAM_KEYS:
        assert grads[key].shape == p[key].shape
        if key != "b_k":
            assert_close_grad(grads[key], numeric_grad(lambda a, key=key: loss(x, p | {key: a}), p[key]))


@settings(max_examples=8)
@given(st.integers(0, 10**6), st.booleans(), st.booleans(), st.sampled_from([(), (2,)]), st.sampled_from([1, 2]))
def test_encoder_layer_backward_matches_finite_differences(seed, norm_first, causal, lead, H):
    rng = np.random.default_rng(seed)
    T, D, d_ff = 3, 4, 6
    p = random_params(rng, D, d_ff)
    x, g = rng.normal(size=(*lead, T, D)), rng.normal(size=(*lead, T, D))
    _check_all_grads(x, p, H, tl.causal_mask(T) if causal else None, norm_first, g)


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


def test_inputs_are_not_modified():
    rng = np.random.default_rng(6)
    p = random_params(rng, 4, 8)
    x, g = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    copies = {k: v.copy() for k, v in p.items()}, x.copy(), g.copy()
    encoder_layer_backward(x, p, g, 2)
    assert all(np.array_equal(p[k], copies[0][k]) for k in p)
    np.testing.assert_array_equal(x, copies[1])
    np.testing.assert_array_equal(g, copies[2])


X = np.ones((3, 4))
P = init_encoder_params(4, 8, np.random.default_rng(0))
VE, TE = ValueError, TypeError


def backward(**kw):
    args = dict(x=X, params=P, grad_out=np.ones((3, 4)), num_heads=2) | kw
    return lambda: encoder_layer_backward(**args)


@pytest.mark.parametrize("fn, exc, pattern", [
    (backward(grad_out=np.ones((3, 5))), VE, r"grad_out 的形状应为 \(3, 4\)，收到的是 \(3, 5\)"),
    (backward(params={k: v for k, v in P.items() if k != "b_2"}), VE, r"params 的键不对：缺少 b_2"),
    (backward(params=P | {"ln2_gamma": np.ones(5)}), VE, r"params\['ln2_gamma'\] 的形状应为 \(4,\)，收到的是 \(5,\)"),
    (backward(num_heads=3), VE, r"d_model=4 必须能被 num_heads=3 整除"),
    (backward(eps=-1.0), VE, r"eps 必须是有限的正实数"),
    (backward(norm_first=1), TE, r"norm_first 必须是 bool"),
    (backward(mask=np.ones((2, 2), bool)), VE, r"mask 的形状 \(2, 2\) 无法广播"),
], ids=["grad_out-shape", "missing-key", "gamma-length", "heads", "eps", "norm_first", "mask"])
def test_bad_input_raises_clear_chinese_error(fn, exc, pattern):
    check_error(fn, exc, pattern)


@pytest.mark.parametrize("norm_first", [False, True])
def test_float32_is_preserved_and_vjp_matches_backward(norm_first):
    from transformer_lab.core.encoder import encoder_layer_vjp

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
