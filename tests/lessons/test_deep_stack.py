"""叠很多层：梯度长度与位置相似度。三种叠法都是 core 的同一层（无残差的反向在 tests/core 里对中心差分检查过）。"""

import numpy as np
import pytest

import transformer_lab as tl
from transformer_lab.core.encoder import init_encoder_params
from transformer_lab.lessons import deep_stack as ds

from helpers.errors import call, error_table_test


def test_plain_layer_is_the_parts_without_the_two_residuals():
    """没有残差的一层 = LN₂(FFN(LN₁(MHA(x))))，用公开的零件一块块接出来对照。"""
    rng = np.random.default_rng(0)
    p, x = init_encoder_params(4, 8, rng), rng.normal(size=(3, 4))
    a, _ = tl.multi_head_attention(x, p["w_q"], p["w_k"], p["w_v"], p["w_o"], 2,
                                   b_q=p["b_q"], b_k=p["b_k"], b_v=p["b_v"], b_o=p["b_o"])
    h = tl.layer_norm(a, p["ln1_gamma"], p["ln1_beta"])
    out = tl.layer_norm(tl.feed_forward(h, p["w_1"], p["b_1"], p["w_2"], p["b_2"]), p["ln2_gamma"], p["ln2_beta"])
    np.testing.assert_allclose(ds.plain_layer(x, p, 2), out, atol=1e-12)


@pytest.mark.parametrize("mode", ds.MODES)
def test_profile_shapes_and_top_gradient(mode):
    prof = ds.stack_profile(3, mode, np.random.default_rng(0))
    assert prof["grad"].shape == prof["similarity"].shape == (4,)
    assert prof["grad"][-1] == 1.0 and np.all(prof["grad"] > 0)


def test_without_residual_all_positions_end_up_with_the_same_note():
    sims = {m: np.mean([ds.stack_profile(4, m, np.random.default_rng(s))["similarity"][-1] for s in range(6)])
            for m in ds.MODES}
    assert sims["无残差"] > 0.99 and sims["pre-LN"] < 0.8


def test_position_similarity_by_hand():
    assert ds.position_similarity(np.array([[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [-1.0, 0.0, 1.0]])) == pytest.approx(-1 / 3, abs=1e-4)


def test_bad_mode():
    with pytest.raises(ValueError, match="mode"):
        ds.stack_profile(2, "residual", np.random.default_rng(0))


@pytest.mark.parametrize("exponent", [-200, 0, 200])
def test_position_similarity_any_magnitude(exponent):
    """两行方向相同（减去均值后）：1e±200 量级也得到 1，方向相反得到 -1（以前 1e200 的行范数溢出、1e-200 的下溢）。"""
    c = 10.0**exponent
    assert ds.position_similarity(np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]]) * c) == 1.0
    assert ds.position_similarity(np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]) * c) == -1.0


RNG = np.random.default_rng(0)
VE = ValueError
ERROR_CASES = [
    ("deep_stack-mode", call(ds.stack_profile, 2, "residual", RNG), VE, r"mode='residual' 不存在.*pre-LN"),
    ("deep_stack-heads", call(ds.stack_profile, 2, "pre-LN", RNG, d_model=15), VE, r"d_model=15 必须能被 num_heads=2 整除"),
    ("similarity-one-row", call(ds.position_similarity, np.ones((1, 3))), VE, r"x 至少要有 2 行.*\(1, 3\)"),
    ("deep_stack-memory-layers", call(ds.stack_profile, 10**6, "pre-LN", RNG), VE, r"1000000 层的权重和反向要留的中间结果.*GiB"),
    ("deep_stack-memory-length", call(ds.stack_profile, 1, "pre-LN", RNG, seq_len=10**6), VE,
     r"1 层的权重和反向要留的中间结果（T=1000000, D=16, H=2） 要占"),
]
test_documented_errors = error_table_test(ERROR_CASES)
