"""第 13 章的练习：只在回答上算的交叉熵、LoRA 的前向。每个常见错误一种（或几种）错误写法，都在这里独立写出，
必须被认成恰好那个错误；独立写的正确写法（逐个位置的循环、先把 LoRA 合并进 W ……）必须通过；参考答案和
``core.loss.cross_entropy``（掩码全是 True 时）以及手算的数一致。

检查走 ``tl.exercises.check``（``helpers.exercises.assert_status``），和读者在 notebook 里用的是同一个入口；
参考答案通过、起始代码是 not_attempted、每个错误写法认得出、乱写的函数有中文说明，由 ``tests/exercises/test_checker.py``
对每一章的练习统一检查。
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from transformer_lab.core.loss import cross_entropy as core_cross_entropy
from transformer_lab.exercises import ch13

from helpers.exercises import assert_status

EXERCISES = {ex.name: ex for ex in ch13.EXERCISES}


def test_chapter_13_exercises_are_loaded():
    import transformer_lab as tl
    assert list(tl.exercises.for_chapter(13)) == ["masked_cross_entropy", "lora_forward"]


def test_ids_are_distinct_and_each_exercise_has_hints():
    for ex in ch13.EXERCISES:
        ids = [m.id for m in ex.mistakes]
        assert len(ids) >= 4 and len(set(ids)) == len(ids)
        assert ex.chapter == 13 and len(ex.hints) == 3


# ---------------------------------------------------------------- masked_cross_entropy


def test_masked_cross_entropy_hand_worked():
    # 打分全是 0：每个位置的损失都是 log 4，只算哪几个位置都一样
    assert ch13.masked_cross_entropy(np.zeros((3, 4)), np.array([0, 1, 2]), np.array([False, True, True])) == \
        pytest.approx(math.log(4))
    # 两个位置：[0, 0] 猜 0 → log 2；[ln 3, 0] 猜 0 → −log(3/4) = log(4/3)。只算第二个位置
    logits = np.array([[0.0, 0.0], [math.log(3.0), 0.0]])
    assert ch13.masked_cross_entropy(logits, np.array([0, 0]), np.array([False, True])) == pytest.approx(math.log(4 / 3))
    assert ch13.masked_cross_entropy(logits, np.array([0, 0]), np.array([True, True])) == \
        pytest.approx((math.log(2) + math.log(4 / 3)) / 2)


def test_masked_cross_entropy_all_true_is_plain_cross_entropy():
    rng = np.random.default_rng(0)
    logits, targets = rng.normal(size=(6, 9)), rng.integers(0, 9, size=6)
    assert ch13.masked_cross_entropy(logits, targets, np.ones(6, bool)) == \
        pytest.approx(float(core_cross_entropy(logits, targets)), rel=1e-12)


def test_masked_cross_entropy_ignores_what_the_mask_hides():
    """被掩掉的位置上打分和答案怎么变，损失都不变（性质：掩码之外的位置不影响结果）。"""
    rng = np.random.default_rng(1)
    logits, targets = rng.normal(size=(5, 4)), rng.integers(0, 4, size=5)
    mask = np.array([False, False, True, True, True])
    changed = logits.copy()
    changed[:2] = rng.normal(scale=50.0, size=(2, 4))
    other = targets.copy()
    other[:2] = (targets[:2] + 1) % 4
    assert ch13.masked_cross_entropy(changed, other, mask) == pytest.approx(ch13.masked_cross_entropy(logits, targets, mask))


def mce_loops(logits, targets, loss_mask):
    total, count = 0.0, 0
    for t in range(len(targets)):
        if loss_mask[t]:
            row = np.asarray(logits[t], dtype=np.float64)
            m = max(row)
            total += -(row[targets[t]] - m - math.log(sum(math.exp(v - m) for v in row)))
            count += 1
    return total / count


def mce_weighted(logits, targets, loss_mask):
    z = logits - logits.max(axis=1, keepdims=True)
    nll = np.log(np.exp(z).sum(axis=1)) - z[np.arange(len(targets)), targets]
    w = loss_mask.astype(float)
    return float((nll * w).sum() / w.sum())


@pytest.mark.parametrize("fn", [mce_loops, mce_weighted])
def test_masked_cross_entropy_correct_variants_pass(fn):
    assert_status("masked_cross_entropy", fn, "passed")


def mce_over_T(logits, targets, loss_mask):
    z = logits - logits.max(axis=1, keepdims=True)
    nll = np.log(np.exp(z).sum(axis=1)) - z[np.arange(len(targets)), targets]
    return float((nll * loss_mask).mean())


def mce_no_mask(logits, targets, loss_mask):
    return float(core_cross_entropy(logits, targets))


def mce_inverted(logits, targets, loss_mask):
    return mce_weighted(logits, targets, loss_mask == False)  # noqa: E712  读者常这样写


def mce_naive(logits, targets, loss_mask):
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return float(np.mean(-np.log(p[np.arange(len(targets)), targets])[loss_mask]))


def mce_positive_log(logits, targets, loss_mask):
    return -mce_weighted(logits, targets, loss_mask)


@pytest.mark.parametrize("fn, diagnosis", [
    (mce_over_T, "averages_over_all_positions"), (mce_no_mask, "mask_ignored"), (mce_inverted, "mask_inverted"),
    (mce_naive, "overflow"), (mce_positive_log, "no_minus"),
], ids=lambda x: x if isinstance(x, str) else "")
def test_masked_cross_entropy_mistakes(fn, diagnosis):
    assert_status("masked_cross_entropy", fn, "failed", diagnosis)


def test_masked_cross_entropy_naive_softmax_really_overflows():
    """反证：大打分的那个测试输入上，朴素的 softmax 真的得到 NaN/inf（否则这个错误认不出来）。"""
    case = next(c for c in EXERCISES["masked_cross_entropy"].test_cases() if "1000" in c.label)
    with np.errstate(all="ignore"):
        assert not np.isfinite(mce_naive(*case.args))
    assert np.isfinite(ch13.masked_cross_entropy(*case.args))


def test_masked_cross_entropy_in_place_is_mutation():
    def in_place(logits, targets, loss_mask):
        logits -= logits.max(axis=1, keepdims=True)
        return mce_weighted(logits, targets, loss_mask)
    assert_status("masked_cross_entropy", in_place, "failed", "mutates_input")


# ---------------------------------------------------------------- lora_forward


def test_lora_forward_hand_worked():
    # x W = [1, 2]；x A = [1]，再 @ B = [1, 1]；α/r = 2 → [1, 2] + 2·[1, 1] = [3, 4]
    out = ch13.lora_forward(np.array([[1.0, 2.0]]), np.eye(2), np.array([[1.0], [0.0]]), np.array([[1.0, 1.0]]), 2.0)
    np.testing.assert_array_equal(out, [[3.0, 4.0]])


def test_lora_forward_equals_the_merged_weight():
    """LoRA 合并回 W：x (W + (α/r) A B) 与分两路算的结果相同（第 13 章"合并以后输出不变"）。"""
    rng = np.random.default_rng(2)
    x, W, A, B = rng.normal(size=(4, 6)), rng.normal(size=(6, 5)), rng.normal(size=(6, 3)), rng.normal(size=(3, 5))
    np.testing.assert_allclose(ch13.lora_forward(x, W, A, B, 12.0), x @ (W + 4.0 * A @ B), rtol=1e-12, atol=1e-12)


def lora_merged(x, W, A, B, alpha):
    return x @ (W + alpha / A.shape[1] * (A @ B))


def lora_loops(x, W, A, B, alpha):
    T, d_out, r = x.shape[0], W.shape[1], B.shape[0]
    out = np.zeros((T, d_out))
    for t in range(T):
        low = [sum(x[t, i] * A[i, k] for i in range(x.shape[1])) for k in range(r)]
        for j in range(d_out):
            out[t, j] = sum(x[t, i] * W[i, j] for i in range(x.shape[1])) + alpha / r * sum(low[k] * B[k, j] for k in range(r))
    return out


@pytest.mark.parametrize("fn", [lora_merged, lora_loops])
def test_lora_forward_correct_variants_pass(fn):
    assert_status("lora_forward", fn, "passed")


def lora_no_scale(x, W, A, B, alpha):
    return x @ W + x @ A @ B


def lora_alpha_only(x, W, A, B, alpha):
    return x @ W + alpha * (x @ A @ B)


def lora_rank_d_in(x, W, A, B, alpha):
    return x @ W + alpha / len(A) * (x @ A @ B)


def lora_rank_d_out(x, W, A, B, alpha):
    return x @ W + alpha / B.shape[-1] * (x @ (A @ B))


def lora_update_only(x, W, A, B, alpha):
    return alpha / B.shape[0] * (x @ A) @ B


@pytest.mark.parametrize("fn, diagnosis", [
    (lora_no_scale, "forgot_scale"), (lora_alpha_only, "scale_alpha_not_over_r"),
    (lora_rank_d_in, "rank_from_wrong_axis"), (lora_rank_d_out, "rank_from_wrong_axis"),
    (lora_update_only, "forgot_frozen_weight"),
], ids=lambda x: x if isinstance(x, str) else "")
def test_lora_forward_mistakes(fn, diagnosis):
    assert_status("lora_forward", fn, "failed", diagnosis)


def test_lora_forward_updating_W_in_place_is_mutation():
    def in_place(x, W, A, B, alpha):
        W += alpha / A.shape[1] * (A @ B)
        return x @ W
    assert_status("lora_forward", in_place, "failed", "mutates_input")


@pytest.mark.parametrize("name", list(EXERCISES))
@pytest.mark.parametrize("fn, status", [
    (lambda *a, **k: None, "failed"), (lambda *a, **k: "答案", "failed"), (42, "error"),
], ids=["returns-none", "string", "not-a-function"])
def test_garbage_gets_an_explanation(name, fn, status):
    assert_status(name, fn, status)
