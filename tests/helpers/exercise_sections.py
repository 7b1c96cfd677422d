"""notebook 里“动手写”一节的约定（各章的练习测试 tests/exercises/test_exercises_chNN.py 调用它）。

这一节在“## 常见误区”之后、“## 小测验”之前，说明在哪里运行（``python3 dev.py lab``）；每道练习依次有：
题目的文字单元格；起始代码格，源码与 ``exercise(name).starter`` 一字不差；检查格
``tl.exercises.check("name", fn)``，存档的输出是起始代码的 ``not_attempted`` 反馈；一个文字单元格，
折叠的“提示”（``hint`` 的每一条，文字里多出来的反引号不算）和“参考答案”（```python 围起来的
``solution(name)``，一字不差）。包里的练习改了而 notebook 没跟上，这里就会指出来。
"""

from __future__ import annotations

from pathlib import Path

import nbformat

import transformer_lab as tl

from helpers.exercises import function_name, starter

__all__ = ["section_problems", "chapter_section_problems"]

ROOT = Path(__file__).resolve().parents[2]


def _heading(cells, text: str) -> int | None:
    return next((i for i, c in enumerate(cells) if c.cell_type == "markdown"
                 and any(line.strip() == text for line in c.source.splitlines())), None)


def _plain(cell) -> str:
    return "".join(o.get("data", {}).get("text/plain", "") + o.get("text", "") for o in cell.get("outputs", []))


def _exercise_problems(cells, name: str) -> list[str]:
    ex = tl.exercises.exercise(name)
    where = next((i for i, c in enumerate(cells) if c.cell_type == "code" and c.source == ex.starter), None)
    if where is None:
        return [f"{name}：没有源码和 exercise({name!r}).starter 一字不差的起始代码格"]
    problems = []
    check, answer = (cells[where + k] if where + k < len(cells) else None for k in (1, 2))
    call = f'tl.exercises.check("{name}", {function_name(name)})'
    if check is None or check.cell_type != "code" or check.source != call:
        return [f"{name}：起始代码格后面应该紧跟检查格 {call}"]
    if _plain(check).strip() != str(tl.exercises.check(name, starter(name))).strip():
        problems.append(f"{name}：检查格存档的输出不是起始代码的 not_attempted 反馈")
    text = answer.source if answer is not None and answer.cell_type == "markdown" else ""
    if ":::{dropdown} 提示" not in text or ":::{dropdown} 参考答案" not in text:
        problems.append(f"{name}：检查格后面应该是折叠的“提示”和“参考答案”")
    missing = [i + 1 for i, h in enumerate(ex.hints) if h not in text.replace("`", "")]
    if missing:
        problems.append(f"{name}：折叠的提示里没有第 {missing} 条提示")
    if f"```python\n{tl.exercises.solution(name)}\n```" not in text:
        problems.append(f"{name}：参考答案不是 solution({name!r}) 的原文")
    return problems


def section_problems(cells, names: list[str]) -> list[str]:
    """``cells``（nbformat 的单元格）里“动手写”一节的问题清单；空 = 没问题。"""
    where = {h: _heading(cells, h) for h in ("## 常见误区", "## 动手写", "## 小测验")}
    if where["## 动手写"] is None:
        return ["没有“## 动手写”一节"]
    start, end = where["## 动手写"], len(cells) if where["## 小测验"] is None else where["## 小测验"]
    if not (-1 if where["## 常见误区"] is None else where["## 常见误区"]) < start < end:
        return ["“## 动手写”要在“## 常见误区”之后、“## 小测验”之前"]
    section = cells[start:end]
    problems = [] if "python3 dev.py lab" in section[0].source else ["“动手写”的开头没有说在哪里运行（python3 dev.py lab）"]
    for name in names:
        problems += _exercise_problems(section, name)
    return problems


def chapter_section_problems(number: int) -> list[str]:
    nb = nbformat.read(ROOT / tl.chapters.chapter(number).notebook, as_version=4)
    return section_problems(nb.cells, tl.exercises.for_chapter(number))
