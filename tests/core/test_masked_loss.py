"""core/masked_loss.py：带损失掩码的交叉熵——手算、全 True 时等于普通交叉熵、float64 逐位置的参照、中心差分、报错。"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.core.loss import cross_entropy
from transformer_lab.core.masked_loss import masked_cross_entropy, masked_cross_entropy_backward

from helpers.errors import call, error_table_test
from helpers.gradcheck import assert_gradients_close, numeric_gradient


def test_masked_cross_entropy_by_hand():
    # 第 0 个位置被掩掉：它的打分再离谱也不算；另两个位置 p = 1/2 与 3/4，梯度 ([1/2, 1/2] − [1, 0]) / 2 与 ([1/4, 3/4] − [0, 1]) / 2
    logits = np.array([[-50.0, 50.0], [0.0, 0.0], [0.0, math.log(3)]])
    targets, mask = np.array([0, 0, 1]), np.array([False, True, True])
    assert masked_cross_entropy(logits, targets, mask) == pytest.approx((math.log(2) - math.log(3 / 4)) / 2)
    np.testing.assert_allclose(masked_cross_entropy_backward(logits, targets, mask),
                               [[0, 0], [-0.25, 0.25], [0.125, -0.125]])


def _loop_reference(logits, targets, mask):
    """float64 的逐位置循环：和被测的写法（log-softmax + take_along_axis + where）不同。"""
    total, count = 0.0, 0
    for idx in np.ndindex(targets.shape):
        if mask[idx]:
            row = logits[idx].astype(np.float64)
            total += math.log(sum(math.exp(v - row.max()) for v in row)) + row.max() - row[targets[idx]]
            count += 1
    return total / count


@given(st.integers(1, 3), st.integers(1, 6), st.integers(2, 7), st.integers(0, 10**6))
def test_matches_loop_and_finite_differences(B, T, V, seed):
    rng = np.random.default_rng(seed)
    logits, targets = rng.normal(size=(B, T, V)) * 2, rng.integers(0, V, size=(B, T))
    mask = rng.random((B, T)) < 0.6
    mask = np.where(mask.any(), mask, np.eye(1, B * T, dtype=bool).reshape(B, T))  # 至少一个 True
    assert masked_cross_entropy(logits, targets, mask) == pytest.approx(_loop_reference(logits, targets, mask))
    grad = masked_cross_entropy_backward(logits, targets, mask)
    assert_gradients_close(grad, numeric_gradient(lambda a: masked_cross_entropy(a, targets, mask), logits, h=1e-5),
                           rtol=1e-6)
    assert np.all(grad[~mask] == 0)  # 掩掉的位置一点梯度也没有


def test_all_true_is_plain_cross_entropy():
    rng = np.random.default_rng(1)
    logits, targets = rng.normal(size=(2, 5, 4)), rng.integers(0, 4, size=(2, 5))
    ones = np.ones((2, 5), bool)
    assert masked_cross_entropy(logits, targets, ones) == pytest.approx(float(cross_entropy(logits, targets)))


def test_counter_test_mask_matters():
    """反证：掩码改了，损失就变（被测函数没有忽略掩码）。"""
    logits, targets = np.array([[0.0, 3.0], [3.0, 0.0]]), np.array([1, 1])
    a = masked_cross_entropy(logits, targets, np.array([True, False]))
    b = masked_cross_entropy(logits, targets, np.array([False, True]))
    assert b - a > 2.9


def test_inputs_are_not_modified():
    logits, targets, mask = np.zeros((3, 2)), np.array([0, 1, 0]), np.array([True, False, True])
    before = logits.copy()
    masked_cross_entropy_backward(logits, targets, mask)
    np.testing.assert_array_equal(logits, before)


VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("masked-all-false", call(masked_cross_entropy, np.zeros((2, 3)), np.array([0, 1]), np.array([False, False])), VE,
     r"loss_mask 全是 False.*0/0"),
    ("masked-mask-int", call(masked_cross_entropy_backward, np.zeros((2, 3)), np.array([0, 1]), np.array([0, 1])), TE,
     r"loss_mask 的 dtype 必须是 bool"),
    ("masked-mask-list", call(masked_cross_entropy, np.zeros((2, 3)), np.array([0, 1]), [True, True]), TE,
     r"loss_mask 必须是 bool 类型的 NumPy 数组"),
    ("masked-mask-shape", call(masked_cross_entropy, np.zeros((2, 3)), np.array([0, 1]), np.array([True])), VE,
     r"loss_mask 的形状.*期望 \(2,\)"),
    ("masked-targets-shape", call(masked_cross_entropy, np.zeros((2, 3)), np.array([0]), np.array([True])), VE,
     r"targets 的形状.*期望 \(2,\)"),
    ("masked-targets-range", call(masked_cross_entropy, np.zeros((2, 3)), np.array([0, 3]), np.array([True, True])),
     VE, r"targets 越界"),
    ("masked-logits-1d", call(masked_cross_entropy, np.zeros(3), np.array(0), np.array(True)), VE,
     r"logits 至少要有 2 维"),
    ("masked-logits-bool", call(masked_cross_entropy, np.zeros((2, 3), bool), np.array([0, 1]),
                                np.array([True, True])), TE, r"logits 的 dtype 必须是实数"),
]
test_documented_errors = error_table_test(ERROR_CASES)
