"""全书自测：题目（数值答案由本包当场算出，不手抄）、题的格式和检查，以及不需要内核的自测小部件。

* ``question.py``：一道题的格式 ``Question`` 和它的检查、``as_dicts``、``notebook_href``；
* ``bank_ch01_04.py``、``bank_ch05_08.py``、``bank_ch09.py``、``bank_ch10.py``：题目本身，每个题库只导入 ``question``（以及算答案用的 core、lessons）；
* ``html.py`` + ``quiz.js`` + ``quiz.css``：把题写成一段自给自足的 HTML。

网页上的自测页（``book/_ext/self_test_page.py``）和 notebook 里的 ``tl.self_test()`` 用的是同一份题库、
同一个小部件。加一个题库：写 ``bank_chNN.py`` 或 ``bank_chNN_MM.py``（提供 ``questions()``），再把它加进下面的 ``BANKS``。
"""

from __future__ import annotations

from .. import chapters
from . import bank_ch01_04, bank_ch05_08, bank_ch09, bank_ch10
from .html import SelfTest, render_html
from .question import GROUPS, KINDS, Question, as_dicts, notebook_href

__all__ = ["Question", "GROUPS", "KINDS", "BANKS", "questions", "as_dicts", "notebook_href", "render_html",
           "SelfTest", "self_test"]

BANKS = (bank_ch01_04, bank_ch05_08, bank_ch09, bank_ch10)  # 每个题库模块提供 questions()；按这个顺序汇总


def questions() -> tuple[Question, ...]:
    """全书自测的全部题目：先是素材里的八道（地基、机制、易错），再按章节排其余的题。

    Raises
    ------
    ValueError
        两道题用了同一个 ``qid``。

    Examples
    --------
    >>> qs = questions()
    >>> len(qs) >= 24, sorted({q.chapter for q in qs}) == list(chapters.numbers())
    (True, True)
    >>> sum(q.from_seed for q in qs)
    8
    """
    bank = tuple(q for module in BANKS for q in module.questions())
    ids = [q.qid for q in bank]
    if len(set(ids)) != len(ids):
        raise ValueError(f"题库里有重复的 qid：{sorted({i for i in ids if ids.count(i) > 1})}")
    seeds = [q for q in bank if q.from_seed]
    others = sorted((q for q in bank if not q.from_seed), key=lambda q: q.chapter)
    return (*sorted(seeds, key=lambda q: GROUPS.index(q.group)), *others)


def self_test(chapter: int | None = None) -> SelfTest:
    """在 notebook 里做全书自测：和网站上“自测”页同一份题库、同一个小部件，不需要网络。

    ``chapter`` 为某一章的章号（``transformer_lab.chapters``）时只出这一章的题。每道题提交后立刻给出反馈、讲解和
    链接回相关的小节，并更新得分。

    Raises
    ------
    TypeError
        ``chapter`` 不是正整数（例如字符串 ``"4"``）。
    ValueError
        ``chapter`` 不是本书的章号。

    Examples
    --------
    >>> quiz = self_test(4)
    >>> quiz.count == sum(q.chapter == 4 for q in questions())
    True
    """
    bank = questions()
    if chapter is not None:
        number = chapters.chapter(chapter).number
        bank = tuple(q for q in bank if q.chapter == number)
    return SelfTest(as_dicts(bank, notebook_href))
