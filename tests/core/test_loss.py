"""core/loss.py：交叉熵 cross_entropy 与它对 logits 的梯度 cross_entropy_backward——手算、log V、极大的打分、中心差分、报错。"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import transformer_lab as tl
from transformer_lab.core.loss import cross_entropy, cross_entropy_backward

from helpers.errors import call, error_table_test
from helpers.gradcheck import assert_gradients_close, numeric_gradient


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


def test_cross_entropy_of_logits_1e308_apart_is_exact():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cross_entropy(np.array([[1e308, -1e308]]), np.array([0])) == 0.0  # 正确答案独得全部概率


@given(st.lists(st.integers(1, 4), min_size=0, max_size=2), st.integers(1, 6), st.integers(0, 10**6),
       st.floats(0.1, 3))
def test_cross_entropy_backward_matches_finite_differences(lead, V, seed, scale):
    # 打分差距极大时梯度 ~e^{-差距}，小到与差分的舍入噪声同级；那种情形由 test_cross_entropy_is_stable... 检查
    rng = np.random.default_rng(seed)
    logits, targets = rng.normal(size=(*lead, V)) * scale, rng.integers(0, V, size=lead)
    grad = cross_entropy_backward(logits, targets)
    assert_gradients_close(grad, numeric_gradient(lambda a: cross_entropy(a, targets), logits, h=1e-4))
    np.testing.assert_allclose(grad.sum(axis=-1), 0, atol=1e-12)


def test_float32_is_preserved():
    x = np.random.default_rng(3).normal(size=(2, 4, 8)).astype(np.float32)
    results = [cross_entropy(x, np.zeros((2, 4), int)), cross_entropy_backward(x, np.zeros((2, 4), int))]
    assert [r.dtype for r in results] == [np.float32] * len(results)


VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("ce-target-out-of-range", call(cross_entropy, np.zeros((2, 3)), np.array([0, 3])), VE, r"targets 越界.*V=3"),
    ("ce-float-targets", call(cross_entropy_backward, np.zeros((2, 3)), np.array([0.0, 1.0])), TE,
     r"targets.*dtype 必须是整数"),
    ("ce-targets-shape", call(cross_entropy, np.zeros((2, 3)), np.array([0, 1, 2])), VE,
     r"targets 的形状.*期望 \(2,\).*\(3,\)"),
    ("ce-overflow", call(tl.cross_entropy, np.array([[1e308, -1e308]]), np.array([1])), VE, r"交叉熵损失 溢出.*低了超过"),
    ("ce-masked-targets", call(cross_entropy, np.zeros((2, 3)), np.ma.masked_array([0, 2], mask=[False, True])), TE,
     r"targets 是掩码数组.*filled"),
]
test_documented_errors = error_table_test(ERROR_CASES)
