"""动手写：每章的练习，自己检查，认得出读者常犯的错误。离线，只用 NumPy。

用法（notebook 里）::

    def softmax(z):
        ...                                   # 读者自己写
    tl.exercises.check("softmax", softmax)    # → Feedback：通过了吗？错在哪？
    tl.exercises.hint("softmax")              # 第 1 条提示；hint("softmax", 2) 给前两条
    tl.exercises.solution("softmax")          # 参考答案的源码

每章的练习在 ``exercises/chNN.py``（章号取自章节表 ``transformer_lab.chapters``），每个模块提供 ``EXERCISES``。
检查器在 ``checker.py``，比较和“差多少”的说法在 ``compare.py``，结果 ``Feedback`` 在 ``feedback.py``。
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import textwrap
from typing import Callable

from .. import chapters
from .checker import Case, Exercise, Mistake, run
from .feedback import Feedback, Text

__all__ = ["names", "check", "hint", "solution", "exercise", "for_chapter", "Feedback", "Exercise", "Case", "Mistake"]


def _load() -> dict[str, Exercise]:
    """按章节表的顺序导入每章的练习模块 ``exercises/chNN.py``（还没有练习的章跳过）。"""
    table: dict[str, Exercise] = {}
    for chapter in chapters.CHAPTERS:
        module_name = f"{__name__}.ch{chapter.number:02d}"
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as err:
            if err.name != module_name:
                raise
            continue
        for ex in module.EXERCISES:
            if ex.name in table:
                raise RuntimeError(f"练习名字重复：{ex.name!r}（第 {chapter.number} 章）")
            table[ex.name] = ex
    return table


_TABLE = _load()


def names() -> list[str]:
    """全部练习的名字，按章的顺序。

    >>> "softmax" in names()
    True
    """
    return list(_TABLE)


def for_chapter(chapter: int) -> list[str]:
    """某一章的练习名字。

    Raises
    ------
    TypeError
        ``chapter`` 不是整数。
    ValueError
        ``chapter`` 不是本书的章号。
    """
    number = chapters.chapter(chapter).number
    return [name for name, ex in _TABLE.items() if ex.chapter == number]


def _unknown(name: object) -> str:
    if not isinstance(name, str):
        return f"练习的名字 name 应该是字符串（比如 'softmax'），收到的是 {type(name).__name__} {name!r}。"
    close = difflib.get_close_matches(name, list(_TABLE), n=3)
    guess = f"你是不是想写 {'、'.join(repr(c) for c in close)}？" if close else ""
    return f"没有叫 {name!r} 的练习。{guess}全部练习：tl.exercises.names()。"


def exercise(name: str) -> Exercise:
    """按名字取一道练习（题目、起始代码、参考答案、常见错误都在里面）。

    Raises
    ------
    ValueError
        没有这个名字的练习（信息里给出最接近的名字）。
    """
    if not isinstance(name, str) or name not in _TABLE:
        raise ValueError(_unknown(name))
    return _TABLE[name]


def check(name: str, fn: Callable) -> Feedback:
    """检查读者写的函数 ``fn``：在手算的例子、随机输入和极端输入上和参考答案比，认出常见错误。

    从不抛异常：名字不对、``fn`` 不是函数、``fn`` 出错、返回 None 或错的形状、改动了输入……都只得到一个
    ``Feedback``（``.passed``、``.status``、``.diagnosis``、``.message``），在 notebook 里显示成一个彩色小框。

    Examples
    --------
    >>> import numpy as np
    >>> def softmax(z):
    ...     e = np.exp(z - z.max(axis=-1, keepdims=True))
    ...     return e / e.sum(axis=-1, keepdims=True)
    >>> check("softmax", softmax).status
    'passed'
    >>> def softmax(z):
    ...     return np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)
    >>> check("softmax", softmax).diagnosis
    'no_max_shift'
    """
    if not isinstance(name, str) or name not in _TABLE:
        return Feedback(str(name), "error", None, _unknown(name))
    if not callable(fn):
        return Feedback(name, "error", None,
                        f"第二个参数 fn 应该是你写的函数（def 定义的名字，不带括号），收到的是 {type(fn).__name__}。"
                        f"写成 tl.exercises.check({name!r}, {name})。")
    return run(_TABLE[name], fn)


def hint(name: str, n: int = 1) -> Text:
    """这道练习的前 ``n`` 条提示（由浅到深）。

    Raises
    ------
    ValueError
        没有这个名字的练习，或 ``n`` 小于 1。
    TypeError
        ``n`` 不是整数。
    """
    ex = exercise(name)
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"提示的条数 n 应该是正整数，收到的是 {type(n).__name__} {n!r}。")
    if n < 1:
        raise ValueError(f"提示的条数 n 至少是 1，收到的是 {n}。")
    shown = ex.hints[:n]
    lines = [f"提示 {i + 1}/{len(ex.hints)}：{h}" for i, h in enumerate(shown)]
    if n >= len(ex.hints):
        lines.append(f"（提示就这些了；参考答案：tl.exercises.solution({name!r})）")
    else:
        lines.append(f"（还有更具体的提示：tl.exercises.hint({name!r}, {n + 1})）")
    return Text("\n".join(lines))


def solution(name: str) -> Text:
    """这道练习的参考答案（源码文字）。

    Raises
    ------
    ValueError
        没有这个名字的练习。
    """
    return Text(textwrap.dedent(inspect.getsource(exercise(name).solution)).rstrip())
