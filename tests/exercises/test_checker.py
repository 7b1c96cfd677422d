"""练习检查器本身：对每一道练习都成立的性质，以及 ``tl.exercises`` 的报错。

每章的测试（tests/exercises/test_chNN.py）各自写一张“错误写法”的表；这里对全部练习统一检查：
参考答案（显示给读者的那段源码）通过；起始代码是 not_attempted；乱写的函数都得到中文说明而不是异常；
每个常见错误的每一种写法都被认成它自己；错误写法在某个测试输入上真的和参考答案不同（否则认不出来）。
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import transformer_lab as tl
from transformer_lab.exercises.checker import parameters
from transformer_lab.exercises.compare import compare, same

from helpers.errors import call, check_error, error_table_test
from helpers.exercises import assert_status, garbage, shown_solution

NAMES = tl.exercises.names()
VE, TE = ValueError, TypeError


@pytest.mark.parametrize("name", NAMES)
def test_shown_solution_passes(name):
    assert_status(name, shown_solution(name), "passed")


@pytest.mark.parametrize("name, label, fn, status, diagnosis",
                         [(n, *row) for n in NAMES for row in garbage(n)],
                         ids=[f"{n}-{row[0]}" for n in NAMES for row in garbage(n)])
def test_garbage_gets_an_explanation(name, label, fn, status, diagnosis):
    assert_status(name, fn, status, diagnosis)


MISTAKES = [(n, m.id, i) for n in NAMES for m in tl.exercises.exercise(n).mistakes for i in range(len(m.variants))]


@pytest.mark.parametrize("name, mistake, i", MISTAKES, ids=[f"{n}-{m}-{i}" for n, m, i in MISTAKES])
def test_every_variant_is_diagnosed_as_itself(name, mistake, i):
    ex = tl.exercises.exercise(name)
    variant = next(m for m in ex.mistakes if m.id == mistake).variants[i]
    assert_status(name, variant, "failed", mistake)


@pytest.mark.parametrize("name", NAMES)
def test_every_exercise_is_complete(name):
    ex = tl.exercises.exercise(name)
    ids = [m.id for m in ex.mistakes]
    assert len(ids) == len(set(ids)), f"{name} 的常见错误编号重复"
    assert len(ex.hints) >= 2, f"{name} 至少要有两条由浅到深的提示"
    assert len(ex.test_cases()) >= 3
    assert parameters(ex.signature), ex.signature
    assert ex.starter.startswith(f"def {ex.signature}:")


def test_names_in_chapter_order():
    chapters = [tl.exercises.exercise(n).chapter for n in NAMES]
    assert chapters == sorted(chapters)
    assert sum(len(tl.exercises.for_chapter(c)) for c in set(chapters)) == len(NAMES)


def test_check_is_reproducible():
    a = tl.exercises.check("softmax", lambda z: np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True))
    b = tl.exercises.check("softmax", lambda z: np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True))
    assert str(a) == str(b) and repr(a) == str(a)


def test_feedback_displays_as_html_and_text():
    fb = tl.exercises.check("softmax", lambda z: np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True))
    html = fb._repr_html_()
    assert 'class="tl-feedback tl-feedback-failed"' in html and "no_max_shift" in html
    assert str(fb).startswith("✗ 练习 softmax：还不对")
    assert "&lt;" in tl.exercises.check("softmax", lambda z: "<b>")._repr_html_()  # 读者的值当文字显示


def test_unknown_name_is_an_error_feedback_not_an_exception():
    fb = tl.exercises.check("softmx", np.exp)
    assert fb.status == "error" and "'softmax'" in fb.message
    assert tl.exercises.check(3, np.exp).status == "error"


def test_hints_are_graduated():
    one, two = str(tl.exercises.hint("softmax")), str(tl.exercises.hint("softmax", 2))
    assert two.startswith(one.splitlines()[0]) and "提示 2/" in two and "提示 2/" not in one
    assert "solution" in str(tl.exercises.hint("softmax", 99))


@given(st.one_of(st.none(), st.integers(), st.floats(allow_nan=True), st.text(max_size=5),
                 st.lists(st.floats(), max_size=4), st.dictionaries(st.text(max_size=2), st.integers(), max_size=2)))
@settings(max_examples=60, deadline=None)
def test_check_never_raises_whatever_fn_returns(value):
    for name in ("softmax", "attention"):
        fb = tl.exercises.check(name, lambda *a, **k: value)
        assert fb.status == "failed" and fb.diagnosis is None


def test_compare_hand_worked():
    assert compare(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-12]), 1e-9, 1e-12).ok
    verdict = compare(np.array([1.0, 2.0]), np.array([1.0, 2.2]), 1e-9, 1e-12)
    assert not verdict.ok and abs(verdict.error - 0.2 / 2.2) < 1e-12 and "(1,)" in verdict.problem
    assert "形状不对" in compare(np.zeros((2, 3)), np.zeros((3, 2)), 1e-9, 1e-12).problem
    assert "布尔" in compare(np.ones(2, bool), np.ones(2), 1e-9, 1e-12).problem
    assert "nan" in compare(np.ones(2), np.array([1.0, np.nan]), 1e-9, 1e-12).problem
    assert compare(2.0, np.float32(2.0), 1e-6, 1e-9).ok and compare(2.0, np.array(2.0), 1e-6, 1e-9).ok
    assert not compare(2.0, True, 1e-6, 1e-9).ok
    assert "output" in compare((np.ones(2), np.ones(2)), (np.zeros(2), np.ones(2)), 1e-9, 1e-9, ("output", "w")).problem
    assert same(np.array([np.inf, np.nan]), np.array([np.inf, np.nan]), 1e-9, 1e-12)
    assert not same(np.array([np.inf]), np.array([-np.inf]), 1e-9, 1e-12)
    assert not same(np.ones(2), [1.0, 1.0], 1e-9, 1e-12)


ERROR_CASES = [
    ("exercise-unknown", call(tl.exercises.exercise, "softmx"), VE, r"没有叫 'softmx' 的练习.*'softmax'"),
    ("exercise-type", call(tl.exercises.exercise, 4), VE, r"name 应该是字符串"),
    ("hint-n-zero", call(tl.exercises.hint, "softmax", 0), VE, r"n 至少是 1，收到的是 0"),
    ("hint-n-float", call(tl.exercises.hint, "softmax", 1.5), TE, r"n 应该是正整数.*float"),
    ("hint-unknown", call(tl.exercises.hint, "nope"), VE, r"没有叫 'nope' 的练习"),
    ("solution-unknown", call(tl.exercises.solution, "nope"), VE, r"没有叫 'nope' 的练习"),
    ("for-chapter-99", call(tl.exercises.for_chapter, 99), VE, r"99"),
    ("for-chapter-str", call(tl.exercises.for_chapter, "4"), TE, r"'4'|4"),
]
test_documented_errors = error_table_test(ERROR_CASES)


def test_check_error_rows_are_chinese():
    check_error(lambda: tl.exercises.hint("softmax", -1), VE, r"至少是 1")
