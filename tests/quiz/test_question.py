"""一道题的格式 ``transformer_lab/quiz/question.py``：每条检查都有一个会失败的例子；章号按章节表检查（表里加一章，
新章的题就合法）；数值题的判分恰好是误差带；``as_dicts`` 和 ``notebook_href`` 给出小部件要的数据。"""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab import chapters
from transformer_lab.chapters import CHAPTERS, Chapter
from transformer_lab.quiz.question import Question, as_dicts, notebook_href

from helpers.errors import check_error, error_table_test

VE, TE = ValueError, TypeError
LAST = CHAPTERS[-1].number
CHOICE = dict(choices=("x", "y"), why=("对。", "不对。"), correct=0)
NUMBER = Question("n", 3, None, "计算题", "number", "3 × 1 + 4 × 2 = ?", answer=11.0, tolerance=0.5, explain="e")


def make(qid="a", chapter=1, group="地基题", kind="choice", **kw):
    return lambda: Question(qid, chapter, None, group, kind, "p", **kw)


def test_well_formed_questions_are_accepted():
    for c in CHAPTERS:
        assert make(chapter=c.number, **CHOICE)().chapter == c.number
    assert make(kind="predict", reveal=("1 + 1 = 2",), **CHOICE)().reveal == ("1 + 1 = 2",)
    assert NUMBER.accepts(11) and NUMBER.accepts(10.5) and not NUMBER.accepts(10.4)


def test_the_chapter_check_follows_the_table(monkeypatch):
    """题的章号按 ``chapters.CHAPTERS`` 检查，不是写死的 8：表里加上第 9 章，第 9 章的题就合法了。"""
    check_error(make(chapter=LAST + 1, **CHOICE), VE, r"chapter 必须是本书的章号")
    nine = Chapter(LAST + 1, f"{LAST + 1:02d}_next", "下一章", "下一章")
    monkeypatch.setattr(chapters, "CHAPTERS", (*CHAPTERS, nine))
    assert make(chapter=LAST + 1, **CHOICE)().chapter == LAST + 1
    assert notebook_href(LAST + 1, "小测验") == f"{nine.stem}.ipynb#小测验"


@given(st.floats(-1e6, 1e6, allow_nan=False))
def test_accepts_is_exactly_the_tolerance_band(x):
    assert NUMBER.accepts(x) == (abs(x - 11.0) <= 0.5)


def test_notebook_href_uses_the_chapter_table():
    for c in CHAPTERS:
        assert notebook_href(c.number, None) == f"{c.stem}.ipynb"
    assert notebook_href(4, "动手算：softmax 分蛋糕") == "04_four_steps.ipynb#动手算：softmax-分蛋糕"


def test_as_dicts_numbers_questions_in_order_and_names_the_chapter():
    bank = (NUMBER, Question("b", 8, "小结", "机制题", "choice", "p", **CHOICE), make(chapter=1, **CHOICE)())
    data = as_dicts(bank, lambda c, s: f"{c}|{s}")
    assert [d["number"] for d in data] == [1, 2, 3]
    assert [d["href"] for d in data] == ["3|None", "8|小结", "1|None"]
    assert [d["where"] for d in data] == ["第 3 章 Q、K、V 三兄弟", "第 8 章 串起来：一层 Transformer：小结",
                                          "第 1 章 RNN 与 Transformer"]
    assert data[0] | {"href": None} == {
        "qid": "n", "number": 1, "group": "计算题", "kind": "number", "prompt": "3 × 1 + 4 × 2 = ?", "choices": [],
        "why": [], "correct": None, "answer": 11.0, "tolerance": 0.5, "unit": "", "explain": "e", "reveal": [],
        "chapter": 3, "where": "第 3 章 Q、K、V 三兄弟", "href": None}
    json.dumps(data, ensure_ascii=False)  # 纯数据，能写成 JSON


ERROR_CASES = [
    ("kind", make(kind="essay"), VE, r"kind='essay' 不存在"),
    ("kind-type", make(kind=1), TE, r"kind 必须是字符串"),
    ("group", make(group="附加题"), VE, r"group='附加题' 不存在"),
    ("chapter-past-the-end", make(chapter=LAST + 1), VE,
     rf"题 a 的 chapter 必须是本书的章号 1 到 {LAST} 之一，收到 {LAST + 1}"),
    ("chapter-str", make(chapter="4"), TE, r"题 a 的 chapter 必须是正整数.*'4'"),
    ("qid", make(qid="题一"), VE, r"qid 只能用英文字母"),
    ("qid-space", make(qid="a b"), VE, r"'a b'.*qid 只能用英文字母"),
    ("number-no-answer", make(group="计算题", kind="number", explain="e"), VE, r"数值题要有 answer"),
    ("number-no-explain", make(group="计算题", kind="number", answer=1.0), VE, r"数值题要有 answer.*explain"),
    ("number-negative-tolerance", make(group="计算题", kind="number", answer=1.0, tolerance=-1.0, explain="e"), VE,
     r"不小于 0 的 tolerance"),
    ("number-with-choices", make(group="计算题", kind="number", answer=1.0, explain="e", choices=("x", "y")), VE,
     r"不能有选项"),
    ("choice-one-option", make(choices=("x",), why=("w",), correct=0), VE, r"至少要 2 个选项.*1 个选项、1 条反馈"),
    ("choice-why", make(choices=("x", "y"), why=("w",), correct=0), VE, r"2 个选项、1 条反馈"),
    ("choice-correct", make(choices=("x", "y"), why=("w", "v"), correct=2), VE, r"correct 必须是选项的下标 0\.\.1，收到 2"),
    ("choice-no-correct", make(choices=("x", "y"), why=("w", "v")), VE, r"correct 必须是选项的下标 0\.\.1，收到 None"),
    ("choice-answer", make(answer=1.0, **CHOICE), VE, r"选择题不用 answer"),
    ("predict-reveal", make(kind="predict", **CHOICE), VE, r"先猜后看的题要有 reveal"),
    ("accepts-choice", lambda: make(**CHOICE)().accepts(1.0), VE, r"题 a 不是数值题（kind='choice'）"),
    ("accepts-nan", lambda: NUMBER.accepts(np.nan), VE, r"value"),
    ("notebook_href-chapter", lambda: notebook_href(LAST + 1, None), VE, rf"chapter 必须是本书的章号.*收到 {LAST + 1}"),
]
test_documented_errors = error_table_test(ERROR_CASES)
