"""第 4 章的练习：softmax 和注意力。每个常见错误一种（或几种）错误写法，都在这里独立写出，
必须被认成恰好那个错误；独立写的正确写法（循环、einsum、先除后乘……）必须通过。"""

from __future__ import annotations

import numpy as np
import pytest

from helpers.exercises import assert_status

# ---------------------------------------------------------------- softmax：错误写法表

def softmax_columns(z):
    e = np.exp(z - np.max(z, axis=0))
    return e / np.sum(e, axis=0)


def softmax_overflows(z):
    return np.exp(z) / np.sum(np.exp(z), axis=-1, keepdims=True)


def softmax_no_exp(z):
    return z / np.sum(z, axis=-1, keepdims=True)


def softmax_unnormalised(z):
    return np.exp(z - np.max(z, axis=-1, keepdims=True))


@pytest.mark.parametrize("fn, diagnosis", [
    (softmax_columns, "wrong_axis"),
    (softmax_overflows, "no_max_shift"),
    (softmax_no_exp, "no_exp"),
    (softmax_unnormalised, "not_normalised"),
    (lambda z: np.exp(z), "not_normalised"),
], ids=["wrong_axis", "no_max_shift", "no_exp", "not_normalised", "not_normalised-no-shift"])
def test_softmax_mistakes(fn, diagnosis):
    assert_status("softmax", fn, "failed", diagnosis)


def softmax_loops(z):
    z = np.asarray(z, dtype=np.result_type(z, np.float32))
    flat = z.reshape(-1, z.shape[-1])
    out = np.empty_like(flat)
    for r, row in enumerate(flat):
        m = max(row)
        total = sum(np.exp(x - m) for x in row)
        for c, x in enumerate(row):
            out[r, c] = np.exp(x - m) / total
    return out.reshape(z.shape)


def softmax_logsumexp(z):
    m = z.max(axis=-1, keepdims=True)
    return np.exp(z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True)))


@pytest.mark.parametrize("fn", [softmax_loops, softmax_logsumexp])
def test_softmax_correct_variants_pass(fn):
    assert_status("softmax", fn, "passed")


def test_softmax_in_place_is_mutation():
    def in_place(z):
        z -= z.max(axis=-1, keepdims=True)
        np.exp(z, out=z)
        return z / z.sum(axis=-1, keepdims=True)
    assert_status("softmax", in_place, "failed", "mutates_input")


def test_softmax_hand_worked_numbers_in_message():
    import transformer_lab as tl
    fb = tl.exercises.check("softmax", softmax_overflows)
    assert "[0.2689 0.7311]" in fb.message and "nan" in fb.message  # e^1000 溢出；正确答案 1/(1+e) = 0.2689


# ---------------------------------------------------------------- attention：错误写法表

def _rows(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _cols(s):
    e = np.exp(s - s.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)


def att_no_scale(q, k, v, mask=None):
    s = q @ k.T
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    w = _rows(s)
    return w @ v, w


def att_scale_dk(q, k, v, mask=None):
    s = q @ k.T / q.shape[1]
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    w = _rows(s)
    return w @ v, w


def att_columns(q, k, v, mask=None):
    s = q @ k.T / np.sqrt(q.shape[1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    w = _cols(s)
    return w @ v, w


def att_mask_ignored(q, k, v, mask=None):
    w = _rows(q @ k.T / np.sqrt(q.shape[1]))
    return w @ v, w


def att_mask_after(q, k, v, mask=None):
    w = _rows(q @ k.T / np.sqrt(q.shape[1]))
    if mask is not None:
        w = w * mask
    return w @ v, w


def att_mask_inverted(q, k, v, mask=None):
    s = q @ k.T / np.sqrt(q.shape[1])
    if mask is not None:
        s = np.where(~mask, s, -np.inf)
    w = _rows(s)
    return w @ v, w


@pytest.mark.parametrize("fn, diagnosis", [
    (att_no_scale, "no_scale"), (att_scale_dk, "scale_by_d_k"), (att_columns, "softmax_wrong_axis"),
    (att_mask_ignored, "mask_ignored"), (att_mask_after, "mask_after_softmax"), (att_mask_inverted, "mask_inverted"),
], ids=lambda x: x if isinstance(x, str) else "")
def test_attention_mistakes(fn, diagnosis):
    assert_status("attention", fn, "failed", diagnosis)


def att_einsum(q, k, v, mask=None):
    scores = np.einsum("td,sd->ts", q, k) / np.sqrt(k.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -1e30)   # 很大的负数代替 -inf：结果一样
    w = _rows(scores)
    return np.einsum("ts,sv->tv", w, v), w


def att_loops(q, k, v, mask=None):
    t, s = q.shape[0], k.shape[0]
    w = np.zeros((t, s), dtype=np.result_type(q, k))
    for i in range(t):
        scores = [q[i] @ k[j] / np.sqrt(q.shape[1]) for j in range(s)]
        allowed = [j for j in range(s) if mask is None or mask[i, j]]
        m = max(scores[j] for j in allowed)
        total = sum(np.exp(scores[j] - m) for j in allowed)
        for j in allowed:
            w[i, j] = np.exp(scores[j] - m) / total
    return w @ v, w


@pytest.mark.parametrize("fn", [att_einsum, att_loops])
def test_attention_correct_variants_pass(fn):
    assert_status("attention", fn, "passed")


def test_attention_returning_only_output_is_explained():
    import transformer_lab as tl
    fb = tl.exercises.check("attention", lambda q, k, v, mask=None: att_einsum(q, k, v, mask)[0])
    assert fb.status == "failed" and "应该返回 2 个值（output、weights）" in fb.message
