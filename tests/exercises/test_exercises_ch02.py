"""第 2 章的练习：自注意力的权重表和加权平均。每个常见错误一种（或几种）错误写法，都在这里独立写出，
必须被认成恰好那个错误；独立写的正确写法（逐行循环、einsum、logsumexp……）必须通过。"""

from __future__ import annotations

import numpy as np
import pytest

import transformer_lab as tl

from helpers.exercises import assert_status


def _softmax_rows(s):
    s = s - np.max(s, axis=1, keepdims=True)
    return np.exp(s) / np.sum(np.exp(s), axis=1, keepdims=True)


# ---------------------------------------------------------------- self_attention_weights：错误写法表


def w_unscaled(x, w_q, w_k):
    return _softmax_rows((x @ w_q) @ (x @ w_k).T)


def w_scaled_by_width_of_x(x, w_q, w_k):
    return _softmax_rows((x @ w_q) @ (x @ w_k).T / np.sqrt(x.shape[-1]))


def w_keys_first(x, w_q, w_k):
    q, k = x @ w_q, x @ w_k
    return _softmax_rows(k @ q.T / np.sqrt(q.shape[1]))


def w_columns(x, w_q, w_k):
    s = (x @ w_q) @ (x @ w_k).T / np.sqrt(w_k.shape[1])
    e = np.exp(s - s.max(axis=0))
    return e / e.sum(axis=0)


@pytest.mark.parametrize("fn, diagnosis", [
    (w_unscaled, "no_scale"),
    (w_scaled_by_width_of_x, "scale_by_d_model"),
    (w_keys_first, "scores_transposed"),
    (w_columns, "softmax_wrong_axis"),
], ids=lambda x: x if isinstance(x, str) else "")
def test_self_attention_weights_mistakes(fn, diagnosis):
    assert_status("self_attention_weights", fn, "failed", diagnosis)


def w_loops(x, w_q, w_k):
    q, k = x @ w_q, x @ w_k
    t, d_k = q.shape
    out = np.zeros((t, t))
    for i in range(t):
        scores = [float(q[i] @ k[j]) / d_k ** 0.5 for j in range(t)]
        m = max(scores)
        total = sum(np.exp(s - m) for s in scores)
        out[i] = [np.exp(s - m) / total for s in scores]
    return out


def w_einsum_logsumexp(x, w_q, w_k):
    s = np.einsum("td,de,se->ts", x, w_q, x @ w_k) / np.sqrt(w_q.shape[-1])
    m = s.max(axis=-1, keepdims=True)
    return np.exp(s - m - np.log(np.exp(s - m).sum(axis=-1, keepdims=True)))


@pytest.mark.parametrize("fn", [w_loops, w_einsum_logsumexp])
def test_self_attention_weights_correct_variants_pass(fn):
    assert_status("self_attention_weights", fn, "passed")


def test_self_attention_weights_matches_the_package():
    ex = tl.exercises.exercise("self_attention_weights")
    for case in ex.test_cases():
        x, w_q, w_k = case.args
        _, expected = tl.scaled_dot_product_attention(x @ w_q, x @ w_k, x)
        np.testing.assert_allclose(ex.solution(*case.args), expected, rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------- weighted_average：错误写法表


def avg_ignores_weights(alpha, v):
    return np.mean(v, axis=0)


def avg_ignores_weights_per_row(alpha, v):
    return np.tile(np.mean(v, axis=0), alpha.shape[:-1] + (1,))


def avg_scaled_only(alpha, v):
    return np.expand_dims(alpha, -1) * v


def avg_sum_features(alpha, v):
    return np.sum(np.expand_dims(alpha, -1) * v, axis=-1)


@pytest.mark.parametrize("fn, diagnosis", [
    (avg_ignores_weights, "plain_mean"),
    (avg_ignores_weights_per_row, "plain_mean"),
    (avg_scaled_only, "forgot_to_sum"),
    (avg_sum_features, "summed_wrong_axis"),
], ids=["plain_mean", "plain_mean-rows", "forgot_to_sum", "summed_wrong_axis"])
def test_weighted_average_mistakes(fn, diagnosis):
    assert_status("weighted_average", fn, "failed", diagnosis)


def avg_loops(alpha, v):
    a = np.atleast_2d(alpha)
    out = np.zeros((a.shape[0], v.shape[1]))
    for i in range(a.shape[0]):
        for j in range(v.shape[0]):
            out[i] += a[i, j] * v[j]
    return out[0] if alpha.ndim == 1 else out


def avg_einsum(alpha, v):
    return np.einsum("...s,sd->...d", alpha, v)


@pytest.mark.parametrize("fn", [avg_loops, avg_einsum])
def test_weighted_average_correct_variants_pass(fn):
    assert_status("weighted_average", fn, "passed")


def test_weighted_average_hand_worked_number_in_message():
    fb = tl.exercises.check("weighted_average", avg_ignores_weights_per_row)
    assert "77." in fb.message and "80." in fb.message  # 总评 0.2×90 + 0.3×80 + 0.5×70 = 77；不加权的平均 80
