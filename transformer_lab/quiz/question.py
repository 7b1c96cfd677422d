"""一道自测题的格式和检查，以及把题变成小部件要的纯数据。

三种题（``kind``）：

* ``"choice"``：单选；每个选项都有自己的反馈（为什么对、为什么错）。
* ``"number"``：填一个数；答案在 ``answer ± tolerance`` 以内算对。
* ``"predict"``：先猜后看；读者先选一个预测，提交后显示 ``reveal`` 里的一小段计算（由代码算出的几行）。

题目本身写在各章的题库 ``bank_chNN.py`` 里（每个题库只导入本模块，以及算答案要用的 core、lessons），
由 ``transformer_lab.quiz.questions`` 汇总。章号按 ``transformer_lab.chapters`` 的章节表检查。
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

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
        ``kind``、``group`` 不是字符串，或 ``chapter`` 不是正整数。
    ValueError
        ``kind``、``group`` 不是可选值之一；``chapter`` 不是本书的章号；``qid`` 含英文字母、数字、连字符以外的字符；
        数值题缺 ``answer``、``explain`` 或给了选项；选择题的选项、反馈、``correct`` 对不上或给了 ``answer``；
        先猜后看的题没有 ``reveal``。
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
        check.one_of(self.kind, "kind", KINDS)
        check.one_of(self.group, "group", GROUPS)
        lookup_chapter(self.chapter, f"题 {self.qid} 的 chapter")
        if not self.qid.isascii() or not self.qid.replace("-", "").isalnum():
            raise ValueError(f"题 {self.qid!r}：qid 只能用英文字母、数字和连字符（网页 id 要用它）。")
        if self.kind == "number":
            if self.answer is None or self.tolerance < 0 or not self.explain or self.choices:
                raise ValueError(f"题 {self.qid}：数值题要有 answer、不小于 0 的 tolerance 和 explain，不能有选项。")
        else:
            if len(self.choices) < 2 or len(self.why) != len(self.choices):
                raise ValueError(f"题 {self.qid}：选择题至少要 2 个选项，且每个选项一条反馈"
                                 f"（收到 {len(self.choices)} 个选项、{len(self.why)} 条反馈）。")
            if self.correct is None or not 0 <= self.correct < len(self.choices):
                raise ValueError(f"题 {self.qid}：correct 必须是选项的下标 0..{len(self.choices) - 1}，收到 {self.correct!r}。")
            if self.answer is not None:
                raise ValueError(f"题 {self.qid}：选择题不用 answer。")
        if self.kind == "predict" and not self.reveal:
            raise ValueError(f"题 {self.qid}：先猜后看的题要有 reveal（提交后显示的计算）。")

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


def notebook_href(chapter: int, section: str | None) -> str:
    """notebook 里（和各章在同一个文件夹）链接回第 ``chapter`` 章某一节的地址。

    >>> notebook_href(4, None)
    '04_four_steps.ipynb'
    >>> notebook_href(2, "小测验")
    '02_self_attention.ipynb#小测验'
    """
    name = lookup_chapter(chapter).stem + ".ipynb"
    return name if section is None else f"{name}#{section.replace(' ', '-')}"


def as_dicts(bank: tuple[Question, ...], link: Callable[[int, str | None], str]) -> list[dict]:
    """把题库变成小部件要的纯数据（``transformer_lab.quiz.html.render_html`` 的输入）。

    ``link(chapter, section)`` 给出链接回那一节的地址：网站上由 Sphinx 算出，notebook 里用 ``notebook_href``。
    """
    out = []
    for number, q in enumerate(bank, start=1):
        where = f"第 {q.chapter} 章 {lookup_chapter(q.chapter).short}" + (f"：{q.section}" if q.section else "")
        out.append({
            "qid": q.qid, "number": number, "group": q.group, "kind": q.kind, "prompt": q.prompt,
            "choices": list(q.choices), "why": list(q.why), "correct": q.correct,
            "answer": q.answer, "tolerance": q.tolerance, "unit": q.unit, "explain": q.explain,
            "reveal": list(q.reveal), "chapter": q.chapter, "where": where, "href": link(q.chapter, q.section),
        })
    return out
