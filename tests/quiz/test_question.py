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


def test_numpy_numbers_are_stored_as_python_numbers():
    """答案常由 NumPy 算出：np.float32 的 answer、np.int64 的 correct 存成 Python 的 float、int，as_dicts 的结果能写成 JSON。"""
    number = Question("n", 3, None, "计算题", "number", "p", answer=np.float32(2.5), tolerance=np.float64(0.5), explain="e")
    choice = make(choices=("x", "y"), why=("w", "v"), correct=np.int64(1))()
    assert (type(number.answer), type(number.tolerance), type(choice.correct)) == (float, float, int)
    assert json.loads(json.dumps(as_dicts((number, choice), notebook_href)))[1]["correct"] == 1


def test_every_bank_question_passes_the_stricter_checks():
    """题库里现有的每道题都满足新的检查（检查只拦写错的题）：照原样重建一遍，结果相同。"""
    from dataclasses import asdict

    from transformer_lab.quiz import questions
    for q in questions():
        assert Question(**asdict(q)) == q


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
    ("number-no-explain", make(group="计算题", kind="number", answer=1.0), VE, r"题 a 的 explain 不能是空的（讲解），收到 ''"),
    ("number-blank-explain", make(group="计算题", kind="number", answer=1.0, explain=" \n"), VE,
     r"题 a 的 explain 不能是空的"),
    ("number-negative-tolerance", make(group="计算题", kind="number", answer=1.0, tolerance=-1.0, explain="e"), VE,
     r"tolerance 必须是不小于 0 的数.*收到 -1\.0"),
    ("number-with-choices", make(group="计算题", kind="number", answer=1.0, explain="e", choices=("x", "y")), VE,
     r"不能有选项"),
    ("choice-one-option", make(choices=("x",), why=("w",), correct=0), VE, r"至少要 2 个选项.*1 个选项、1 条反馈"),
    ("choice-why", make(choices=("x", "y"), why=("w",), correct=0), VE, r"2 个选项、1 条反馈"),
    ("choice-correct", make(choices=("x", "y"), why=("w", "v"), correct=2), VE, r"correct 必须是选项的下标 0\.\.1，收到 2"),
    ("choice-no-correct", make(choices=("x", "y"), why=("w", "v")), VE, r"correct 必须是选项的下标 0\.\.1，收到 None"),
    ("choice-answer", make(answer=1.0, **CHOICE), VE, r"选择题不用 answer"),
    ("predict-reveal", make(kind="predict", **CHOICE), VE, r"先猜后看的题要有 reveal"),
    # 每个参数类型不对、空的、重复的：中文 TypeError/ValueError，写明题号、参数、规则和收到的值（修复前多是 AttributeError、
    # TypeError: '<=' not supported、或者干脆收下，画出一道读者答不了的题）
    ("qid-int", make(qid=1, **CHOICE), TE, r"qid 必须是字符串.*收到的是 int 1"),
    ("qid-none", make(qid=None, **CHOICE), TE, r"qid 必须是字符串.*NoneType"),
    ("section-int", lambda: Question("a", 1, 3, "地基题", "choice", "p", **CHOICE), TE,
     r"题 a 的 section 必须是字符串（小节标题，或 None），收到的是 int 3"),
    ("section-blank", lambda: Question("a", 1, " ", "地基题", "choice", "p", **CHOICE), VE, r"题 a 的 section 不能是空的"),
    ("prompt-none", lambda: Question("a", 1, None, "地基题", "choice", None, **CHOICE), TE,
     r"题 a 的 prompt 必须是字符串（题面）"),
    ("prompt-empty", lambda: Question("a", 1, None, "地基题", "choice", "", **CHOICE), VE, r"题 a 的 prompt 不能是空的"),
    ("choices-str", make(choices="xy", why=("w", "v"), correct=0), TE,
     r"题 a 的 choices 必须是字符串的元组（选项）.*收到的是 字符串 'xy'"),
    ("choices-none", make(choices=None, why=("w", "v"), correct=0), TE, r"题 a 的 choices 必须是字符串的元组.*NoneType"),
    ("choices-item", make(choices=("x", 2), why=("w", "v"), correct=0), TE, r"题 a 的 choices\[1\] 必须是字符串.*int 2"),
    ("choices-empty-item", make(choices=("x", ""), why=("w", "v"), correct=0), VE, r"题 a 的 choices\[1\] 不能是空的"),
    ("choices-duplicate", make(choices=("x", "x"), why=("w", "v"), correct=0), VE,
     r"choices 里的选项必须各不相同.*重复的是 \['x'\]"),
    ("why-none", make(choices=("x", "y"), why=None, correct=0), TE, r"题 a 的 why 必须是字符串的元组"),
    ("why-empty-item", make(choices=("x", "y"), why=("w", ""), correct=0), VE, r"题 a 的 why\[1\] 不能是空的"),
    ("correct-str", make(choices=("x", "y"), why=("w", "v"), correct="0"), TE,
     r"题 a 的 correct 必须是整数（正确选项的下标 0\.\.1），收到的是 字符串 '0'"),
    ("correct-float", make(choices=("x", "y"), why=("w", "v"), correct=1.0), TE, r"correct 必须是整数.*float 1\.0"),
    ("correct-bool", make(choices=("x", "y"), why=("w", "v"), correct=True), TE, r"correct 必须是整数.*bool True"),
    ("correct-negative", make(choices=("x", "y"), why=("w", "v"), correct=-1), VE, r"correct 必须是选项的下标 0\.\.1，收到 -1"),
    ("answer-str", make(group="计算题", kind="number", answer="1", explain="e"), TE, r"题 a 的 answer 必须是实数.*'1'"),
    ("answer-nan", make(group="计算题", kind="number", answer=float("nan"), explain="e"), VE,
     r"题 a 的 answer 必须是有限实数，收到的是 nan"),
    ("answer-bool", make(group="计算题", kind="number", answer=True, explain="e"), TE, r"题 a 的 answer 必须是实数.*bool"),
    ("tolerance-none", make(group="计算题", kind="number", answer=1.0, tolerance=None, explain="e"), TE,
     r"题 a 的 tolerance 必须是实数.*NoneType"),
    ("tolerance-inf", make(group="计算题", kind="number", answer=1.0, tolerance=float("inf"), explain="e"), VE,
     r"题 a 的 tolerance 必须是有限实数"),
    ("explain-int", make(explain=3, **CHOICE), TE, r"题 a 的 explain 必须是字符串（讲解），收到的是 int 3"),
    ("unit-none", make(group="计算题", kind="number", answer=1.0, explain="e", unit=None), TE, r"题 a 的 unit 必须是字符串"),
    ("reveal-str", make(kind="predict", reveal="1 + 1 = 2", **CHOICE), TE, r"题 a 的 reveal 必须是字符串的元组.*'1 \+ 1 = 2'"),
    ("reveal-on-choice", make(reveal=("1 + 1 = 2",), **CHOICE), VE, r"单选题不显示 reveal.*收到 1 行"),
    ("from_seed-str", make(from_seed="yes", **CHOICE), TE, r"题 a 的 from_seed 必须是 bool.*'yes'"),
    ("number-with-why", make(group="计算题", kind="number", answer=1.0, explain="e", why=("w",)), VE,
     r"数值题不能有选项，却给了 why"),
    ("number-with-correct", make(group="计算题", kind="number", answer=1.0, explain="e", correct=0), VE,
     r"数值题不能有选项，却给了 correct"),
    ("choice-tolerance-unit", make(tolerance=0.5, unit="米", **CHOICE), VE,
     r"选择题不用 tolerance、unit.*tolerance=0\.5、unit='米'"),
    ("notebook_href-section-int", lambda: notebook_href(1, 3), TE, r"section 必须是小节标题（字符串）或 None，收到的是 int 3"),
    ("notebook_href-section-empty", lambda: notebook_href(1, ""), VE, r"section 不能是空的：链接回整章请传 None"),
    ("as_dicts-bank-str", lambda: as_dicts("ab", notebook_href), TE, r"bank 必须是 Question 的元组或列表.*字符串 'ab'"),
    ("as_dicts-bank-item", lambda: as_dicts((NUMBER, {}), notebook_href), TE, r"bank\[1\] 必须是 Question.*dict"),
    ("as_dicts-link", lambda: as_dicts((NUMBER,), None), TE, r"link 必须是函数.*NoneType"),
    ("as_dicts-link-result", lambda: as_dicts((NUMBER,), lambda c, s: 3), TE, r"link\(3, None\) 必须给出字符串地址.*int 3.*题 n"),
    ("accepts-choice", lambda: make(**CHOICE)().accepts(1.0), VE, r"题 a 不是数值题（kind='choice'）"),
    ("accepts-nan", lambda: NUMBER.accepts(np.nan), VE, r"value"),
    ("notebook_href-chapter", lambda: notebook_href(LAST + 1, None), VE, rf"chapter 必须是本书的章号.*收到 {LAST + 1}"),
]
test_documented_errors = error_table_test(ERROR_CASES)
