"""全书自测：题目（数值答案由本包当场算出，不手抄）、题的格式和检查，以及不需要内核的自测小部件。

* ``question.py``：一道题的格式 ``Question`` 和它的检查、``as_dicts``、``notebook_href``；
* ``bank_ch01.py`` … ``bank_ch10.py``：题目本身，每章一个题库，只有这一章的题；每个题库只导入 ``question``
  （以及算答案用的 core、lessons；第 8 章借用第 5 章题库数参数的 ``parameter_count``）；
* ``html.py`` + ``quiz.js`` + ``quiz.css``：把题写成一段自给自足的 HTML。

网页上的自测页（``book/_ext/self_test_page.py``）和 notebook 里的 ``tl.self_test()`` 用的是同一份题库、
同一个小部件。加一章的题：写 ``bank_chNN.py``（NN 是两位章号，提供 ``questions()``）。``questions`` 按章节表
``transformer_lab.chapters.CHAPTERS`` 里每一章的 ``bank_module`` 按名字导入它，和 ``figures_module`` 一样，
不用在别处登记；``tests/test_chapters.py`` 检查每一章都有题库、题库里有这一章的题。
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .. import chapters
from .html import SelfTest, render_html
from .question import GROUPS, KINDS, Question, as_dicts, notebook_href

__all__ = ["Question", "GROUPS", "KINDS", "questions", "as_dicts", "notebook_href", "render_html",
           "SelfTest", "self_test"]


def _bank(chapter: chapters.Chapter) -> ModuleType:
    """第 ``chapter`` 章的题库模块 ``quiz/bank_chNN.py``（按章节表里的名字导入）。"""
    name = f"{__name__}.{chapter.bank_module}"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name != name:  # 题库自己导入的东西找不到：原样报出
            raise
        raise ValueError(f"第 {chapter.number} 章没有题库：找不到 transformer_lab/quiz/{chapter.bank_module}.py"
                         "（每章一个题库，提供 questions()）。") from None


def questions() -> tuple[Question, ...]:
    """全书自测的全部题目：先是素材里的八道（地基、机制、易错），再按章节排其余的题。

    题目按章节表的顺序从每一章的题库（``Chapter.bank_module``）里取；同一组、同一章里保持题库里的顺序。

    Raises
    ------
    ValueError
        章节表里的某一章没有题库模块；两道题用了同一个 ``qid``。

    Examples
    --------
    >>> qs = questions()
    >>> len(qs) >= 24, sorted({q.chapter for q in qs}) == list(chapters.numbers())
    (True, True)
    >>> sum(q.from_seed for q in qs)
    8
    """
    bank = tuple(q for c in chapters.CHAPTERS for q in _bank(c).questions())
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
