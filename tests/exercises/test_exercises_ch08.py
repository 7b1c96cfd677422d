"""第 8 章的练习：层归一化和前馈网络。每个常见错误一种（或几种）错误写法，都在这里独立写出，
必须被认成恰好那个错误；独立写的正确写法（循环、einsum、工具包的 tl.layer_norm / tl.feed_forward……）必须通过。"""

from __future__ import annotations

import numpy as np
import pytest

import transformer_lab as tl

from helpers.exercises import assert_status

# ---------------------------------------------------------------- layer_norm：错误写法表


def ln_columns(x, gamma, beta, eps=1e-5):
    mu, sd = np.mean(x, axis=0), np.sqrt(np.var(x, axis=0) + eps)
    return gamma * (x - mu) / sd + beta


def ln_whole_array(x, gamma, beta, eps=1e-5):
    return gamma * (x - x.mean()) / np.sqrt(x.var() + eps) + beta


def ln_by_variance(x, gamma, beta, eps=1e-5):
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return gamma * (x - mu) / (var + eps) + beta


def ln_by_variance_no_eps(x, gamma, beta, eps=1e-5):
    mu = np.mean(x, axis=-1, keepdims=True)
    return gamma * (x - mu) / np.var(x, axis=-1, keepdims=True) + beta


def ln_no_eps(x, gamma, beta, eps=1e-5):
    mu = np.mean(x, axis=-1, keepdims=True)
    return gamma * (x - mu) / np.std(x, axis=-1, keepdims=True) + beta


def ln_swapped(x, gamma, beta, eps=1e-5):
    mu = np.mean(x, axis=-1, keepdims=True)
    return beta * (x - mu) / np.sqrt(np.var(x, axis=-1, keepdims=True) + eps) + gamma


def ln_ddof1(x, gamma, beta, eps=1e-5):
    mu = np.mean(x, axis=-1, keepdims=True)
    d = x.shape[-1]
    var = ((x - mu) ** 2).sum(axis=-1, keepdims=True) / (d - 1)
    return gamma * (x - mu) / np.sqrt(var + eps) + beta


@pytest.mark.parametrize("fn, diagnosis", [
    (ln_columns, "wrong_axis"), (ln_whole_array, "wrong_axis"),
    (ln_by_variance, "divides_by_variance"), (ln_by_variance_no_eps, "divides_by_variance"),
    (ln_no_eps, "no_eps"), (ln_swapped, "gamma_beta_swapped"), (ln_ddof1, "unbiased_variance"),
], ids=["wrong_axis-columns", "wrong_axis-whole", "divides_by_variance", "divides_by_variance-no-eps", "no_eps",
        "gamma_beta_swapped", "unbiased_variance"])
def test_layer_norm_mistakes(fn, diagnosis):
    assert_status("layer_norm", fn, "failed", diagnosis)


def ln_loops(x, gamma, beta, eps=1e-5):
    x = np.asarray(x)
    flat = x.reshape(-1, x.shape[-1])
    out = np.empty_like(flat)
    for r, row in enumerate(flat):
        mu = sum(row) / len(row)
        var = sum((v - mu) ** 2 for v in row) / len(row)
        for c, v in enumerate(row):
            out[r, c] = gamma[c] * (v - mu) / (var + eps) ** 0.5 + beta[c]
    return out.reshape(x.shape)


def ln_einsum(x, gamma, beta, eps=1e-5):
    d = x.shape[-1]
    centered = x - np.einsum("...d->...", x)[..., None] / d
    var = np.einsum("...d,...d->...", centered, centered)[..., None] / d
    return np.einsum("d,...d->...d", gamma, centered / np.sqrt(var + eps)) + beta


@pytest.mark.parametrize("fn", [ln_loops, ln_einsum, tl.layer_norm], ids=["loops", "einsum", "tl.layer_norm"])
def test_layer_norm_correct_variants_pass(fn):
    assert_status("layer_norm", fn, "passed")


def test_layer_norm_reference_agrees_with_the_package():
    ex = tl.exercises.exercise("layer_norm")
    for case in ex.test_cases():
        np.testing.assert_allclose(ex.solution(*case.args, **case.kwargs), tl.layer_norm(*case.args, **case.kwargs),
                                   rtol=max(case.rtol, 1e-12), atol=case.atol)


def test_layer_norm_message_shows_the_chapter_numbers():
    fb = tl.exercises.check("layer_norm", ln_swapped)
    assert "[-1.3416 -0.4472  0.4472  1.3416]" in fb.message   # 第 8 章手算的 [2, 4, 6, 8]（σ² = 5）
    assert "γ 和 β 用反了" in fb.message


def test_layer_norm_in_place_is_mutation():
    def in_place(x, gamma, beta, eps=1e-5):
        x -= x.mean(axis=-1, keepdims=True)
        x /= np.sqrt((x ** 2).mean(axis=-1, keepdims=True) + eps)
        return gamma * x + beta
    assert_status("layer_norm", in_place, "failed", "mutates_input")


# ---------------------------------------------------------------- feed_forward：错误写法表


def ffn_linear(x, w_1, b_1, w_2, b_2):
    return (x @ w_1 + b_1) @ w_2 + b_2


def ffn_relu_out(x, w_1, b_1, w_2, b_2):
    return np.maximum((x @ w_1 + b_1) @ w_2 + b_2, 0)


def ffn_relu_twice(x, w_1, b_1, w_2, b_2):
    h = np.maximum(x @ w_1 + b_1, 0)
    return np.maximum(h @ w_2 + b_2, 0)


def ffn_relu_then_bias(x, w_1, b_1, w_2, b_2):
    return (np.maximum(x @ w_1, 0) + b_1) @ w_2 + b_2


def ffn_residual(x, w_1, b_1, w_2, b_2):
    return x + np.maximum(x @ w_1 + b_1, 0) @ w_2 + b_2


@pytest.mark.parametrize("fn, diagnosis", [
    (ffn_linear, "no_relu"), (ffn_relu_out, "relu_on_output"), (ffn_relu_twice, "relu_on_output"),
    (ffn_relu_then_bias, "relu_before_bias"), (ffn_residual, "adds_residual"),
], ids=["no_relu", "relu_on_output", "relu_on_output-twice", "relu_before_bias", "adds_residual"])
def test_feed_forward_mistakes(fn, diagnosis):
    assert_status("feed_forward", fn, "failed", diagnosis)


def ffn_loops(x, w_1, b_1, w_2, b_2):
    out = np.zeros((x.shape[0], w_2.shape[1]), dtype=np.result_type(x, w_1))
    for t in range(x.shape[0]):                       # 每个词各算各的
        hidden = [max(0.0, x[t] @ w_1[:, j] + b_1[j]) for j in range(w_1.shape[1])]
        out[t] = np.array(hidden, dtype=out.dtype) @ w_2 + b_2
    return out


def ffn_einsum(x, w_1, b_1, w_2, b_2):
    z = np.einsum("td,df->tf", x, w_1) + b_1
    return np.einsum("tf,fd->td", z * (z > 0), w_2) + b_2


@pytest.mark.parametrize("fn", [ffn_loops, ffn_einsum, tl.feed_forward], ids=["loops", "einsum", "tl.feed_forward"])
def test_feed_forward_correct_variants_pass(fn):
    assert_status("feed_forward", fn, "passed")


def test_feed_forward_hand_worked_numbers_in_message():
    fb = tl.exercises.check("feed_forward", ffn_linear)
    assert "[[2.5 0.5]]" in fb.message   # 工具包文档里的例子：[1, -2] → ReLU → [1, 0] → [2.5, 0.5]
