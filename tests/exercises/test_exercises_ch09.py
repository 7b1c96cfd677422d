"""第 9 章的练习：下一个词的概率和交叉熵。每个常见错误一种（或几种）错误写法，都在这里独立写出，
必须被认成恰好那个错误；独立写的正确写法（循环、第 9 章的 searchsorted 写法、工具包的 tl.next_token_probs /
tl.cross_entropy……）必须通过。参考答案的规则和 ``tl.next_token_probs`` 相同：在检查用的每个输入上、
以及 Hypothesis 生成的输入上逐个核对。"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import transformer_lab as tl

from helpers.exercises import assert_status

# ---------------------------------------------------------------- next_token_probs：错误写法表


def _softmax(z):
    e = np.exp(z - np.max(z))
    return e / np.sum(e)


def _greedy(logits):
    out = np.zeros(len(logits))
    out[np.argmax(logits)] = 1.0
    return out


def _ranked(logits):
    return sorted(range(len(logits)), key=lambda i: (-logits[i], i))   # 名次：高分在前，并列时编号小的在前


def ntp_times_temperature(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature == 0:
        return _greedy(logits)
    return _filter(logits, _softmax(np.asarray(logits, dtype=float) * temperature), top_k, top_p)


def ntp_times_temperature_no_greedy(logits, temperature=1.0, top_k=None, top_p=None):
    return _filter(logits, _softmax(np.asarray(logits, dtype=float) * temperature), top_k, top_p)


def _filter(logits, probs, top_k, top_p, renormalise=True, crossing=True):
    order = _ranked(logits)
    if top_k is not None:
        probs = np.array([p if i in order[:top_k] else 0.0 for i, p in enumerate(probs)])
        if renormalise:
            probs = probs / probs.sum()
    if top_p is not None:
        keep, total = set(), 0.0
        for i in order:
            if crossing and total >= top_p:
                break
            total += probs[i]
            if not crossing and total >= top_p:
                break
            keep.add(i)
        probs = np.array([p if i in keep else 0.0 for i, p in enumerate(probs)])
        if renormalise:
            probs = probs / probs.sum()
    return probs


def ntp_unnormalised(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature == 0:
        return _greedy(logits)
    return _filter(logits, _softmax(np.asarray(logits, dtype=float) / temperature), top_k, top_p, renormalise=False)


def ntp_strictly_below_p(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature == 0:
        return _greedy(logits)
    return _filter(logits, _softmax(np.asarray(logits, dtype=float) / temperature), top_k, top_p, crossing=False)


@pytest.mark.parametrize("fn, diagnosis", [
    (ntp_times_temperature, "temperature_multiplies"), (ntp_times_temperature_no_greedy, "temperature_multiplies"),
    (ntp_unnormalised, "not_renormalised"), (ntp_strictly_below_p, "top_p_excludes_crossing"),
], ids=["temperature_multiplies", "temperature_multiplies-no-greedy", "not_renormalised", "top_p_excludes_crossing"])
def test_next_token_probs_mistakes(fn, diagnosis):
    assert_status("next_token_probs", fn, "failed", diagnosis)


def ntp_loops(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature == 0:
        return _greedy(logits)
    return _filter(logits, _softmax(np.asarray(logits, dtype=float) / temperature), top_k, top_p)


def ntp_searchsorted(logits, temperature=1.0, top_k=None, top_p=None):
    """第 9 章“动手算”的写法：argsort 排名次，top-p 用 searchsorted 数“累计刚好 ≥ p 要几个字”。"""
    logits = np.asarray(logits, dtype=np.float64)
    if temperature == 0:
        return (np.arange(len(logits)) == np.argmax(logits)) * 1.0
    probs = np.exp((logits - logits.max()) / temperature)
    probs /= probs.sum()
    order = np.argsort(-logits, kind="stable")
    if top_k is not None:
        probs = np.where(np.isin(np.arange(len(probs)), order[:top_k]), probs, 0.0)
        probs /= probs.sum()
    if top_p is not None:
        n_keep = int(np.searchsorted(np.cumsum(probs[order]), top_p) + 1)
        probs = np.where(np.isin(np.arange(len(probs)), order[:n_keep]), probs, 0.0)
        probs /= probs.sum()
    return probs


def ntp_package(logits, temperature=1.0, top_k=None, top_p=None):
    return tl.next_token_probs(logits, temperature=temperature, top_k=top_k, top_p=top_p)


@pytest.mark.parametrize("fn", [ntp_loops, ntp_searchsorted, ntp_package], ids=["loops", "searchsorted", "tl"])
def test_next_token_probs_correct_variants_pass(fn):
    assert_status("next_token_probs", fn, "passed")


def test_next_token_probs_reference_follows_the_package_rules_on_every_case():
    ex = tl.exercises.exercise("next_token_probs")
    for case in ex.test_cases():
        np.testing.assert_allclose(ex.solution(*case.args, **case.kwargs), tl.next_token_probs(*case.args, **case.kwargs),
                                   rtol=max(case.rtol, 1e-12), atol=1e-15, err_msg=case.label)


@given(logits=hnp.arrays(np.float64, st.integers(1, 12), elements=st.integers(-6, 6).map(float)),
       temperature=st.sampled_from([0.0, 0.3, 1.0, 2.5]), data=st.data())
@settings(max_examples=80, deadline=None)
def test_next_token_probs_reference_matches_the_package(logits, temperature, data):
    """整数打分（并列很多）、任意的 top-k 和 top-p：参考答案和 tl.next_token_probs 处处相同。"""
    top_k = data.draw(st.one_of(st.none(), st.integers(1, len(logits))))
    top_p = data.draw(st.one_of(st.none(), st.floats(0.05, 1.0)))
    ex = tl.exercises.exercise("next_token_probs")
    np.testing.assert_allclose(ex.solution(logits, temperature, top_k, top_p),
                               tl.next_token_probs(logits, temperature, top_k, top_p), rtol=1e-12, atol=1e-15)


def test_next_token_probs_hand_worked_numbers_in_message():
    fb = tl.exercises.check("next_token_probs", ntp_strictly_below_p)
    # top-p = 0.85：0.5923 + 0.2179 = 0.81 < 0.85，要留第 3 名（tl.next_token_probs 的文档：[0.6652, 0.2447, 0.09, 0, 0]）
    assert "[0.6652 0.2447 0.09   0.     0.    ]" in fb.message and "top_p_excludes_crossing" in fb.message


# ---------------------------------------------------------------- cross_entropy：错误写法表


def ce_log_logits(logits, targets):
    return -np.mean([np.log(logits[t, y]) for t, y in enumerate(targets)])


def ce_positive(logits, targets):
    log_p = logits - logits.max(axis=1, keepdims=True)
    log_p = log_p - np.log(np.sum(np.exp(log_p), axis=1, keepdims=True))
    return float(np.mean(log_p[np.arange(len(targets)), targets]))


def ce_sum(logits, targets):
    total = 0.0
    for row, y in zip(logits, targets):
        p = np.exp(row - row.max())
        total -= np.log(p[y] / p.sum())
    return float(total)


def ce_naive_softmax(logits, targets):
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return float(-np.log(p[np.arange(len(targets)), targets]).mean())


def ce_naive_logsumexp(logits, targets):
    lse = np.log(np.sum(np.exp(logits), axis=1))
    return float(np.mean(lse - logits[np.arange(len(targets)), targets]))


@pytest.mark.parametrize("fn, diagnosis", [
    (ce_log_logits, "log_of_logits"), (ce_positive, "no_minus"), (ce_sum, "sum_not_mean"),
    (ce_naive_softmax, "overflow"), (ce_naive_logsumexp, "overflow"),
], ids=["log_of_logits", "no_minus", "sum_not_mean", "overflow-softmax", "overflow-logsumexp"])
def test_cross_entropy_mistakes(fn, diagnosis):
    assert_status("cross_entropy", fn, "failed", diagnosis)


def ce_loops(logits, targets):
    losses = []
    for row, y in zip(logits, targets):
        m = max(row)
        log_total = m + np.log(sum(np.exp(v - m) for v in row))
        losses.append(log_total - row[y])
    return sum(losses) / len(losses)


def ce_onehot(logits, targets):
    onehot = np.eye(logits.shape[1])[targets]                       # (T, V)
    m = logits.max(axis=1, keepdims=True)
    log_p = logits - m - np.log(np.exp(logits - m).sum(axis=1, keepdims=True))
    return -np.einsum("tv,tv->", onehot, log_p) / len(targets)


@pytest.mark.parametrize("fn", [ce_loops, ce_onehot, tl.cross_entropy], ids=["loops", "onehot-einsum", "tl"])
def test_cross_entropy_correct_variants_pass(fn):
    assert_status("cross_entropy", fn, "passed")


def test_cross_entropy_reference_agrees_with_the_package():
    ex = tl.exercises.exercise("cross_entropy")
    for case in ex.test_cases():
        assert np.isclose(ex.solution(*case.args), float(tl.cross_entropy(*case.args)), rtol=max(case.rtol, 1e-12))


def test_cross_entropy_overflow_message_shows_the_large_case():
    fb = tl.exercises.check("cross_entropy", ce_naive_softmax)
    assert "很大的打分" in fb.message and "nan" in fb.message and "log-sum-exp" in fb.message
    assert "应该得到：1.38629" in str(tl.exercises.check("cross_entropy", ce_sum).message)   # 均匀打分：log 4 ≈ 1.3863
