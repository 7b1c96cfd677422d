"""每章的“动手写”一节：有练习的章，notebook 里都有这一节，而且和包里的练习一字不差。

- ``## 动手写`` 紧跟在 ``## 常见误区`` 之后、``## 小测验`` 之前（二级标题的顺序）；
- 每道练习在这一节里有：源码正好是起始代码 (``Exercise.starter``) 的代码格子；调用
  ``tl.exercises.check("名字", …)`` 的格子，存档的输出正是起始代码得到的 not_attempted 反馈；
  一个 ``:::{dropdown}``，里面的 python 代码块正好是 ``tl.exercises.solution(名字)``；
- 第 1–10 章每章至少两道练习（第 5–10 章的练习由别的分支加，合并之后才全部通过）。

``test_the_section_check_can_fail`` 证明检查会失败：没有这一节、位置不对、参考答案抄错、存档没有反馈。
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

import transformer_lab as tl
from transformer_lab import chapters

from helpers.exercises import starter

ROOT = Path(__file__).resolve().parents[2]
WITH_EXERCISES = [c for c in chapters.CHAPTERS if tl.exercises.for_chapter(c.number)]
HEADING = re.compile(r"^## (.+?)\s*$", re.M)
FENCE = re.compile(r":::\{dropdown\}[^\n]*\n(?:(?!:::)[^\n]*\n)*?```python\n([\s\S]*?)\n```\n")


def _not_attempted(name: str) -> str:
    feedback = tl.exercises.check(name, starter(name))
    assert feedback.status == "not_attempted", str(feedback)
    return str(feedback)


def _section(nb) -> tuple[list, list[str]]:
    """“动手写”一节的格子（从它的标题所在的格子到“小测验”的标题之前），以及二级标题的顺序问题。"""
    headings = [(i, m[1]) for i, cell in enumerate(nb.cells) if cell.cell_type == "markdown"
                for m in HEADING.finditer(cell.source)]
    titles = [t for _, t in headings]
    if "动手写" not in titles:
        return [], ["没有“## 动手写”一节"]
    at = titles.index("动手写")
    problems = []
    if at == 0 or titles[at - 1] != "常见误区":
        problems.append(f"“## 动手写”前面一节应该是“## 常见误区”，是 {titles[at - 1] if at else None!r}")
    if at + 1 >= len(titles) or titles[at + 1] != "小测验":
        problems.append(f"“## 动手写”后面一节应该是“## 小测验”，是 {titles[at + 1] if at + 1 < len(titles) else None!r}")
    start = headings[at][0]
    end = headings[at + 1][0] if at + 1 < len(headings) else len(nb.cells)
    return nb.cells[start:end], problems


def _text(cell) -> str:
    return "\n".join(out.get("text", "") + out.get("data", {}).get("text/plain", "") for out in cell.get("outputs", []))


def section_problems(nb, names: list[str]) -> list[str]:
    """notebook ``nb`` 的“动手写”一节对照练习 ``names``，返回问题（空 = 没问题）。"""
    cells, problems = _section(nb)
    code = [c for c in cells if c.cell_type == "code"]
    markdown = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    solutions = FENCE.findall(markdown + "\n")
    for name in names:
        ex = tl.exercises.exercise(name)
        starters = [i for i, c in enumerate(code) if c.source == ex.starter]
        call = re.compile(rf"tl\.exercises\.check\(\s*[\"']{re.escape(name)}[\"']\s*,")
        checks = [i for i, c in enumerate(code) if call.search(c.source)]
        if not starters:
            problems.append(f"{name}：没有源码正好是起始代码的格子")
        if not checks:
            problems.append(f"{name}：没有调用 tl.exercises.check({name!r}, …) 的格子")
        elif starters and not min(starters) < min(checks):
            problems.append(f"{name}：检查的格子在起始代码之前")
        elif _not_attempted(name) not in _text(code[checks[0]]):
            problems.append(f"{name}：检查格子存档的输出不是“还没有写”的反馈（先 dev.py refresh）")
        if str(tl.exercises.solution(name)) not in solutions:
            problems.append(f"{name}：没有一个 dropdown 里的 python 代码块正好是 tl.exercises.solution({name!r})")
    return problems


@pytest.mark.parametrize("chapter", WITH_EXERCISES, ids=lambda c: c.stem)
def test_every_chapter_with_exercises_has_the_section(chapter):
    nb = nbformat.read(ROOT / chapter.notebook, as_version=4)
    assert section_problems(nb, tl.exercises.for_chapter(chapter.number)) == []


@pytest.mark.parametrize("chapter", [c for c in chapters.CHAPTERS if c.number <= 10], ids=lambda c: c.stem)
def test_every_chapter_has_at_least_two_exercises(chapter):
    assert len(tl.exercises.for_chapter(chapter.number)) >= 2, tl.exercises.for_chapter(chapter.number)


def _notebook(*cells) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=list(cells))


def test_the_section_check_can_fail():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    name = "softmax"
    ex = tl.exercises.exercise(name)
    shown = nbformat.v4.new_output("execute_result", data={"text/plain": _not_attempted(name)}, execution_count=2)
    fence = f":::{{dropdown}} 参考答案\n```python\n{tl.exercises.solution(name)}\n```\n:::"
    good = [md("## 常见误区\n\n误区"), md("## 动手写\n\n写一写"), code(ex.starter),
            code(f'tl.exercises.check("{name}", softmax)', outputs=[shown]), md(fence), md("## 小测验\n\n题")]
    assert section_problems(_notebook(*good), [name]) == []

    without = [good[0], good[-1]]
    assert section_problems(_notebook(*without), [name])[0] == "没有“## 动手写”一节"
    assert len(section_problems(_notebook(*without), [name])) == 4  # 外加：没有起始代码、没有检查、没有参考答案

    misplaced = [good[1], *good[2:5], good[0], good[5]]
    assert section_problems(_notebook(*misplaced), [name]) == [
        "“## 动手写”前面一节应该是“## 常见误区”，是 None", "“## 动手写”后面一节应该是“## 小测验”，是 '常见误区'"]

    edited = [*good[:4], md(fence.replace("axis=-1", "axis=0")), good[5]]
    assert section_problems(_notebook(*edited), [name]) == [
        "softmax：没有一个 dropdown 里的 python 代码块正好是 tl.exercises.solution('softmax')"]

    unrun = [*good[:3], code(f'tl.exercises.check("{name}", softmax)'), *good[4:]]
    assert section_problems(_notebook(*unrun), [name]) == [
        "softmax：检查格子存档的输出不是“还没有写”的反馈（先 dev.py refresh）"]

    changed_starter = [*good[:2], code(ex.starter.replace("# 在这里写", "# 写")), *good[3:]]
    assert section_problems(_notebook(*changed_starter), [name]) == ["softmax：没有源码正好是起始代码的格子"]


def test_the_stored_feedback_is_what_a_reader_gets():
    """存档里要找的那段文字，正是读者运行起始代码得到的：not_attempted，提到 hint 和 solution。"""
    text = _not_attempted("softmax")
    assert text.startswith("… 练习 softmax：还没有写") and "tl.exercises.hint('softmax')" in text
