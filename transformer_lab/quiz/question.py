"""一道自测题的格式和检查，以及把题变成小部件要的纯数据。

三种题（``kind``）：

* ``"choice"``：单选；每个选项都有自己的反馈（为什么对、为什么错）。
* ``"number"``：填一个数；答案在 ``answer ± tolerance`` 以内算对。
* ``"predict"``：先猜后看；读者先选一个预测，提交后显示 ``reveal`` 里的一小段计算（由代码算出的几行）。

题目本身写在各章的题库 ``bank_chNN.py`` 里（每个题库只导入本模块，以及算答案要用的 core、lessons），
由 ``transformer_lab.quiz.questions`` 汇总。章号按 ``transformer_lab.chapters`` 的章节表检查。
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import _validation as check
from ..chapters import chapter as lookup_chapter

__all__ = ["Question", "GROUPS", "KINDS", "as_dicts", "notebook_href"]

GROUPS = ("地基题", "机制题", "易错题", "计算题")
KINDS = ("choice", "number", "predict")


@dataclass(frozen=True)
class Question:
    """一道自测题。

    Parameters
    ----------
    qid : str
        题目编号（ASCII，网页上的 id 用它）。
    chapter : int
        考的是第几章（``transformer_lab.chapters`` 里的章号），反馈里链接回这一章。
    section : str or None
        链接回的小节标题（必须和那一章的标题一字不差）；None 时只链接到章。
    group : str
        ``GROUPS`` 之一。
    kind : str
        ``KINDS`` 之一。
    prompt : str
        题面。
    choices, why : tuple of str
        选项和每个选项的反馈（choice / predict）；两者一样长。
    correct : int or None
        正确选项的下标（choice / predict）。
    answer, tolerance : float or None
        数值题的答案和允许的误差（number）。
    unit : str
        数值题答案的单位（可以为空）。
    explain : str
        讲解（number 题必填）：答对、或者第二次提交之后才显示（第一次答错只显示错在哪和回看链接）；
        predict 题提交后就显示。
    reveal : tuple of str
        predict 题提交后显示的计算，每项一行。
    from_seed : bool
        是不是来自素材里的八道自测题。

    Raises
    ------
    TypeError
        某个参数的类型不对：``qid``、``group``、``kind``、``prompt``、``unit``、``explain`` 不是字符串，``section``
        不是字符串或 None，``choices``、``why``、``reveal`` 不是字符串的元组，``chapter``、``correct`` 不是整数，
        ``answer``、``tolerance`` 不是实数，``from_seed`` 不是 bool。
    ValueError
        ``kind``、``group`` 不是可选值之一；``chapter`` 不是本书的章号；``qid`` 含英文字母、数字、连字符以外的字符；
        题面、小节、选项、反馈、计算有空字符串，或两个选项一样；数值题缺 ``answer``、``explain``，``answer`` 不是有限数、
        ``tolerance`` 是负数或不是有限数，或给了选项、反馈、``correct``、``reveal``；选择题的选项、反馈、``correct``
        对不上，或给了 ``answer``、``tolerance``、``unit``；先猜后看的题没有 ``reveal``，单选题给了 ``reveal``。
    """

    qid: str
    chapter: int
    section: str | None
    group: str
    kind: str
    prompt: str
    choices: tuple[str, ...] = ()
    why: tuple[str, ...] = ()
    correct: int | None = None
    answer: float | None = None
    tolerance: float = 0.0
    unit: str = ""
    explain: str = ""
    reveal: tuple[str, ...] = ()
    from_seed: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.qid, str):
            raise TypeError(f"qid 必须是字符串（英文字母、数字和连字符，网页 id 要用它），收到的是 {check.describe(self.qid)}。")
        if not self.qid.isascii() or not self.qid.replace("-", "").isalnum():
            raise ValueError(f"题 {self.qid!r}：qid 只能用英文字母、数字和连字符（网页 id 要用它）。")
        check.one_of(self.kind, "kind", KINDS)
        check.one_of(self.group, "group", GROUPS)
        lookup_chapter(self.chapter, f"题 {self.qid} 的 chapter")
        check.boolean(self.from_seed, f"题 {self.qid} 的 from_seed")
        if self.section is not None:
            _text(self.section, self.qid, "section", "小节标题，或 None")
        _text(self.prompt, self.qid, "prompt", "题面")
        _text(self.unit, self.qid, "unit", "单位", empty_ok=True)
        _text(self.explain, self.qid, "explain", "讲解", empty_ok=self.kind != "number")
        _texts(self.choices, self.qid, "choices", "选项")
        _texts(self.why, self.qid, "why", "每个选项的反馈")
        _texts(self.reveal, self.qid, "reveal", "提交后显示的计算，每项一行")
        if self.kind == "number":
            self._check_number()
        else:
            self._check_choices()

    def _check_number(self) -> None:
        """数值题：有限的 answer、非负有限的 tolerance；选项、反馈、correct、reveal 都不能有。"""
        if self.answer is None:
            raise ValueError(f"题 {self.qid}：数值题要有 answer（一个有限的实数），收到 None。")
        answer = check.finite_real(self.answer, f"题 {self.qid} 的 answer")
        tolerance = check.finite_real(self.tolerance, f"题 {self.qid} 的 tolerance")
        if tolerance < 0:
            raise ValueError(f"题 {self.qid}：数值题的 tolerance 必须是不小于 0 的数（允许的误差），收到 {tolerance}。")
        extra = [name for name in ("choices", "why", "reveal") if getattr(self, name)]
        extra += ["correct"] if self.correct is not None else []
        if extra:
            raise ValueError(f"题 {self.qid}：数值题不能有选项，却给了 {'、'.join(extra)}（只有单选、先猜后看的题用它们）。")
        object.__setattr__(self, "answer", answer)  # NumPy 的数换成 Python float：as_dicts 的结果要能写成 JSON
        object.__setattr__(self, "tolerance", tolerance)

    def _check_choices(self) -> None:
        """单选、先猜后看：至少 2 个不同的选项，每个一条反馈，correct 是选项的下标；数值题的字段都不能有。"""
        choices = self.choices
        if len(choices) < 2 or len(self.why) != len(choices):
            raise ValueError(f"题 {self.qid}：选择题至少要 2 个选项，且每个选项一条反馈"
                             f"（收到 {len(choices)} 个选项、{len(self.why)} 条反馈）。")
        repeated = sorted({c for c in choices if choices.count(c) > 1})
        if repeated:
            raise ValueError(f"题 {self.qid}：choices 里的选项必须各不相同（读者分不出来），重复的是 {repeated}。")
        correct = self.correct
        if correct is not None and (isinstance(correct, (bool, np.bool_)) or not isinstance(correct, numbers.Integral)):
            raise TypeError(f"题 {self.qid} 的 correct 必须是整数（正确选项的下标 0..{len(choices) - 1}），"
                            f"收到的是 {check.describe(correct)}。")
        if correct is None or not 0 <= correct < len(choices):
            raise ValueError(f"题 {self.qid}：correct 必须是选项的下标 0..{len(choices) - 1}，收到 {correct!r}。")
        extra = [name for name, unset in (("answer", self.answer is None), ("tolerance", self.tolerance == 0),
                                          ("unit", self.unit == "")) if not unset]
        if extra:
            raise ValueError(f"题 {self.qid}：选择题不用 {'、'.join(extra)}（只有数值题用），收到 "
                             + "、".join(f"{name}={getattr(self, name)!r}" for name in extra) + "。")
        if self.kind == "predict" and not self.reveal:
            raise ValueError(f"题 {self.qid}：先猜后看的题要有 reveal（提交后显示的计算）。")
        if self.kind == "choice" and self.reveal:
            raise ValueError(f"题 {self.qid}：单选题不显示 reveal（只有先猜后看的题提交后显示计算），收到 {len(self.reveal)} 行。")
        object.__setattr__(self, "correct", int(correct))  # np.int64 换成 int：as_dicts 的结果要能写成 JSON

    def accepts(self, value: float) -> bool:
        """数值题：``value`` 在答案的误差范围内吗？

        Raises
        ------
        ValueError
            这道题不是数值题，或 ``value`` 不是有限的实数。
        """
        if self.kind != "number":
            raise ValueError(f"题 {self.qid} 不是数值题（kind={self.kind!r}），没有数值答案。")
        return abs(check.finite_real(value, "value") - self.answer) <= self.tolerance


def _text(value: object, qid: str, name: str, what: str, *, empty_ok: bool = False) -> str:
    """题里的一段文字：字符串；除非 ``empty_ok``，不能是空的或全是空白。"""
    if not isinstance(value, str):
        raise TypeError(f"题 {qid} 的 {name} 必须是字符串（{what}），收到的是 {check.describe(value)}。")
    if not empty_ok and not value.strip():
        raise ValueError(f"题 {qid} 的 {name} 不能是空的（{what}），收到 {value!r}。")
    return value


def _texts(values: object, qid: str, name: str, what: str) -> tuple[str, ...]:
    """一组文字（选项、反馈、计算）：字符串的元组，每一项都不空。一个裸字符串不算（它会被拆成一个个字）。"""
    if not isinstance(values, tuple):
        raise TypeError(f"题 {qid} 的 {name} 必须是字符串的元组（{what}），例如 (\"甲\", \"乙\")，"
                        f"收到的是 {check.describe(values)}。")
    for i, value in enumerate(values):
        _text(value, qid, f"{name}[{i}]", what)
    return values


def notebook_href(chapter: int, section: str | None) -> str:
    """notebook 里（和各章在同一个文件夹）链接回第 ``chapter`` 章某一节的地址。

    Raises
    ------
    TypeError
        ``chapter`` 不是正整数，或 ``section`` 不是字符串或 None。
    ValueError
        ``chapter`` 不是本书的章号，或 ``section`` 是空字符串。

    Examples
    --------
    >>> notebook_href(4, None)
    '04_four_steps.ipynb'
    >>> notebook_href(2, "小测验")
    '02_self_attention.ipynb#小测验'
    """
    name = lookup_chapter(chapter).stem + ".ipynb"
    if section is None:
        return name
    if not isinstance(section, str):
        raise TypeError(f"section 必须是小节标题（字符串）或 None，收到的是 {check.describe(section)}。")
    if not section.strip():
        raise ValueError(f"section 不能是空的：链接回整章请传 None，收到 {section!r}。")
    return f"{name}#{section.replace(' ', '-')}"


def as_dicts(bank: tuple[Question, ...], link: Callable[[int, str | None], str]) -> list[dict]:
    """把题库变成小部件要的纯数据（``transformer_lab.quiz.html.render_html`` 的输入）。

    ``link(chapter, section)`` 给出链接回那一节的地址：网站上由 Sphinx 算出，notebook 里用 ``notebook_href``。

    Raises
    ------
    TypeError
        ``bank`` 不是 ``Question`` 的元组或列表，或 ``link`` 不能调用，或它给出的地址不是字符串。
    """
    if not isinstance(bank, (tuple, list)):
        raise TypeError(f"bank 必须是 Question 的元组或列表（例如 quiz.questions()），收到的是 {check.describe(bank)}。")
    for i, q in enumerate(bank):
        if not isinstance(q, Question):
            raise TypeError(f"bank[{i}] 必须是 Question（一道题），收到的是 {check.describe(q)}。")
    if not callable(link):
        raise TypeError(f"link 必须是函数 link(chapter, section) -> 地址（例如 notebook_href），收到的是 {check.describe(link)}。")
    out = []
    for number, q in enumerate(bank, start=1):
        href = link(q.chapter, q.section)
        if not isinstance(href, str):
            raise TypeError(f"link({q.chapter}, {q.section!r}) 必须给出字符串地址，收到的是 {check.describe(href)}（题 {q.qid}）。")
        where = f"第 {q.chapter} 章 {lookup_chapter(q.chapter).short}" + (f"：{q.section}" if q.section else "")
        out.append({
            "qid": q.qid, "number": number, "group": q.group, "kind": q.kind, "prompt": q.prompt,
            "choices": list(q.choices), "why": list(q.why), "correct": q.correct,
            "answer": q.answer, "tolerance": q.tolerance, "unit": q.unit, "explain": q.explain,
            "reveal": list(q.reveal), "chapter": q.chapter, "where": where, "href": href,
        })
    return out
