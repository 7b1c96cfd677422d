"""core/dpo.py：DPO 损失——手算、逐对的 float64 循环、中心差分、"分得越开推得越轻"、参照模型的作用、报错。"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.core.dpo import dpo_loss

from helpers.errors import call, error_table_test
from helpers.gradcheck import assert_gradients_close, numeric_gradient


def test_dpo_by_hand():
    # 一对：策略比参照把喜欢的回答提高了 1、不喜欢的降低了 1，β = 0.5：z = 0.5·(1 − (−1)) = 1
    loss, g_w, g_l = dpo_loss(np.array([-4.0]), np.array([-7.0]), np.array([-5.0]), np.array([-6.0]), 0.5)
    sigma = 1 / (1 + math.e)  # σ(−1)
    assert loss == pytest.approx(math.log(1 + math.exp(-1)))
    assert g_w[0] == pytest.approx(-0.5 * sigma) and g_l[0] == pytest.approx(0.5 * sigma)


def _loop(pw, pl, rw, rl, beta):
    return sum(math.log1p(math.exp(-beta * ((pw[i] - rw[i]) - (pl[i] - rl[i])))) for i in range(len(pw))) / len(pw)


@given(st.integers(1, 6), st.floats(0.05, 3.0), st.integers(0, 10**6))
def test_matches_loop_and_finite_differences(N, beta, seed):
    rng = np.random.default_rng(seed)
    pw, pl, rw, rl = (rng.normal(-10, 3, size=N) for _ in range(4))
    loss, g_w, g_l = dpo_loss(pw, pl, rw, rl, beta)
    assert loss == pytest.approx(_loop(pw, pl, rw, rl, beta), rel=1e-12)
    assert_gradients_close(g_w, numeric_gradient(lambda v: dpo_loss(v, pl, rw, rl, beta)[0], pw))
    assert_gradients_close(g_l, numeric_gradient(lambda v: dpo_loss(pw, v, rw, rl, beta)[0], pl))


def test_wide_margins_are_stable_and_barely_pushed():
    loss, g_w, _ = dpo_loss(np.array([0.0]), np.array([-1000.0]), np.array([0.0]), np.array([0.0]), 1.0)
    assert loss == pytest.approx(0.0, abs=1e-12) and abs(g_w[0]) < 1e-12
    loss, g_w, _ = dpo_loss(np.array([-1000.0]), np.array([0.0]), np.array([0.0]), np.array([0.0]), 1.0)
    assert loss == pytest.approx(1000.0) and g_w[0] == pytest.approx(-1.0)


def test_counter_test_reference_matters():
    """反证：同样的策略对数概率，参照模型不同，损失不同（被测函数真的减去了参照）。"""
    pw, pl = np.array([-3.0]), np.array([-3.0])
    a = dpo_loss(pw, pl, np.array([-3.0]), np.array([-3.0]), 1.0)[0]
    b = dpo_loss(pw, pl, np.array([-5.0]), np.array([-3.0]), 1.0)[0]
    assert a == pytest.approx(math.log(2)) and b < a - 0.5


VE, TE = ValueError, TypeError
_V = np.zeros(2)
ERROR_CASES = [
    ("dpo-beta", call(dpo_loss, _V, _V, _V, _V, 0.0), VE, r"beta"),
    ("dpo-beta-str", call(dpo_loss, _V, _V, _V, _V, "0.1"), TE, r"beta"),
    ("dpo-lengths", call(dpo_loss, _V, np.zeros(3), _V, _V, 0.1), VE, r"同样长的一维数组.*policy_rejected_logp.shape=\(3,\)"),
    ("dpo-2d", call(dpo_loss, np.zeros((2, 1)), np.zeros((2, 1)), np.zeros((2, 1)), np.zeros((2, 1)), 0.1), VE,
     r"一维数组"),
    ("dpo-list", call(dpo_loss, [0.0], _V, _V, _V, 0.1), TE, r"policy_chosen_logp 必须是 NumPy 数组"),
    ("dpo-nan", call(dpo_loss, _V, _V, np.array([0.0, np.nan]), _V, 0.1), VE, r"ref_chosen_logp 含有 NaN"),
]
test_documented_errors = error_table_test(ERROR_CASES)
