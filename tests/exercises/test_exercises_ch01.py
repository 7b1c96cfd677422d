"""第 1 章的练习：RNN 的一步和整句的循环。每个常见错误一种（或几种）错误写法，都在这里独立写出，
必须被认成恰好那个错误；独立写的正确写法（逐个元素的循环、einsum、先把输入一次投影好……）必须通过。"""

from __future__ import annotations

import numpy as np
import pytest

import transformer_lab as tl

from helpers.exercises import assert_status

# ---------------------------------------------------------------- rnn_step：错误写法表


def step_linear(x_t, h_prev, w_xh, w_hh):
    return np.dot(x_t, w_xh) + np.dot(h_prev, w_hh)


def step_forgets(x_t, h_prev, w_xh, w_hh):
    return np.tanh(np.dot(x_t, w_xh))


def step_column_vectors(x_t, h_prev, w_xh, w_hh):
    return np.tanh(np.dot(w_xh.T, x_t) + np.dot(w_hh, h_prev))


def step_column_recurrence_only(x_t, h_prev, w_xh, w_hh):
    return np.tanh(x_t @ w_xh + w_hh @ h_prev)


@pytest.mark.parametrize("fn, diagnosis", [
    (step_linear, "no_tanh"),
    (step_forgets, "ignores_h_prev"),
    (step_column_vectors, "w_hh_transposed"),
    (step_column_recurrence_only, "w_hh_transposed"),
], ids=["no_tanh", "ignores_h_prev", "w_hh_transposed-both", "w_hh_transposed-recurrence"])
def test_rnn_step_mistakes(fn, diagnosis):
    assert_status("rnn_step", fn, "failed", diagnosis)


def step_loops(x_t, h_prev, w_xh, w_hh):
    out = []
    for j in range(w_hh.shape[1]):
        total = sum(x_t[i] * w_xh[i, j] for i in range(len(x_t)))
        total += sum(h_prev[i] * w_hh[i, j] for i in range(len(h_prev)))
        out.append(np.tanh(total))
    return np.array(out)


def step_einsum(x_t, h_prev, w_xh, w_hh):
    z = np.einsum("i,ij->j", x_t, w_xh) + np.einsum("i,ij->j", h_prev, w_hh)
    return (np.exp(2 * z) - 1) / (np.exp(2 * z) + 1) if np.abs(z).max() < 300 else np.tanh(z)


@pytest.mark.parametrize("fn", [step_loops, step_einsum])
def test_rnn_step_correct_variants_pass(fn):
    assert_status("rnn_step", fn, "passed")


def test_rnn_step_hand_worked_number_in_message():
    fb = tl.exercises.check("rnn_step", step_linear)
    assert "0.7616" in fb.message and "1." in fb.message  # tanh(1) = 0.7616；忘了 tanh 得到 1


# ---------------------------------------------------------------- rnn_forward：错误写法表


def forward_all_at_once(x, w_xh, w_hh):
    return np.tanh(x @ w_xh)


def forward_blank_each_step(x, w_xh, w_hh):
    rows = []
    for t in range(len(x)):
        h = np.zeros(len(w_hh))
        rows.append(np.tanh(x[t] @ w_xh + h @ w_hh))
    return np.stack(rows)


def forward_append_first(x, w_xh, w_hh):
    states = np.zeros((len(x), len(w_hh)))
    h = np.zeros(len(w_hh))
    for t in range(len(x)):
        states[t] = h
        h = np.tanh(x[t] @ w_xh + h @ w_hh)
    return states


def forward_last(x, w_xh, w_hh):
    h = np.zeros(w_hh.shape[1])
    for row in x:
        h = np.tanh(row @ w_xh + h @ w_hh)
    return h


@pytest.mark.parametrize("fn, diagnosis", [
    (forward_all_at_once, "no_recurrence"),
    (forward_blank_each_step, "no_recurrence"),
    (forward_append_first, "states_shifted"),
    (forward_last, "only_last_state"),
], ids=["no_recurrence-batched", "no_recurrence-loop", "states_shifted", "only_last_state"])
def test_rnn_forward_mistakes(fn, diagnosis):
    assert_status("rnn_forward", fn, "failed", diagnosis)


def forward_preallocated(x, w_xh, w_hh):
    inputs = x @ w_xh                                # 先把所有词一次投影好，循环里只剩 h @ w_hh
    states = np.empty((x.shape[0], w_hh.shape[1]), dtype=np.result_type(x, w_hh))
    h = np.zeros(w_hh.shape[1], dtype=states.dtype)
    for t in range(x.shape[0]):
        h = np.tanh(inputs[t] + h @ w_hh)
        states[t] = h
    return states


def forward_via_step(x, w_xh, w_hh):
    h, out = np.zeros(len(w_hh)), []
    for x_t in x:
        h = step_loops(x_t, h, w_xh, w_hh)
        out.append(h.copy())
    return np.vstack(out)


@pytest.mark.parametrize("fn", [forward_preallocated, forward_via_step])
def test_rnn_forward_correct_variants_pass(fn):
    assert_status("rnn_forward", fn, "passed")


def test_rnn_forward_matches_the_package():
    """参考答案和工具包的 tl.rnn_forward 在每个测试输入上一致（两份独立的实现）。"""
    ex = tl.exercises.exercise("rnn_forward")
    for case in ex.test_cases():
        np.testing.assert_allclose(ex.solution(*case.args), tl.rnn_forward(*case.args), rtol=1e-5, atol=1e-6)
