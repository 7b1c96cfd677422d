"""每章的“动手写”一节：有练习的章，notebook 里都有这一节，而且和包里的练习一字不差。

约定和检查在 ``tests/helpers/exercise_sections.py``：``## 动手写`` 在 ``## 常见误区`` 之后、``## 小测验`` 之前，
开头说明在哪里运行；每道练习有起始代码格（一字不差）、检查格（存档的输出是 not_attempted 反馈）、折叠的提示和
参考答案（一字不差）。每一章至少两道练习。``test_the_section_check_can_fail`` 证明检查会失败。
"""

from __future__ import annotations

import nbformat
import pytest

import transformer_lab as tl
from transformer_lab import chapters

from helpers.exercise_sections import chapter_section_problems, section_problems
from helpers.exercises import starter

WITH_EXERCISES = [c for c in chapters.CHAPTERS if tl.exercises.for_chapter(c.number)]


@pytest.mark.parametrize("chapter", WITH_EXERCISES, ids=lambda c: c.stem)
def test_every_chapter_with_exercises_has_the_section(chapter):
    assert chapter_section_problems(chapter.number) == []


@pytest.mark.parametrize("chapter", chapters.CHAPTERS, ids=lambda c: c.stem)
def test_every_chapter_has_at_least_two_exercises(chapter):
    assert len(tl.exercises.for_chapter(chapter.number)) >= 2, tl.exercises.for_chapter(chapter.number)


def test_the_stored_feedback_is_what_a_reader_gets():
    """存档里要找的那段文字，正是读者运行起始代码得到的：not_attempted，提到 hint 和 solution。"""
    feedback = tl.exercises.check("softmax", starter("softmax"))
    assert feedback.status == "not_attempted"
    assert str(feedback).startswith("… 练习 softmax：还没有写") and "tl.exercises.hint('softmax')" in str(feedback)


md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell


def _good_cells(name="causal_mask"):
    ex = tl.exercises.exercise(name)
    feedback = str(tl.exercises.check(name, starter(name)))
    hints = "\n".join(f"{i}. {h}" for i, h in enumerate(ex.hints, 1))
    return [
        md("## 常见误区\n误区"),
        md("## 动手写\n在 JupyterLab 里运行：python3 dev.py lab"),
        md("### 练习 1"),
        code(ex.starter),
        code(f'tl.exercises.check("{name}", causal_mask)',
             outputs=[nbformat.v4.new_output("execute_result", data={"text/plain": feedback}, execution_count=1)]),
        md(f":::{{dropdown}} 提示\n{hints}\n:::\n\n:::{{dropdown}} 参考答案\n```python\n"
           f"{tl.exercises.solution(name)}\n```\n:::"),
        md("## 小测验\n:::{dropdown} 1. 题\n答\n:::"),
    ]


def test_a_good_section_has_no_problems():
    assert section_problems(_good_cells(), ["causal_mask"]) == []


def test_the_section_check_can_fail():
    cells = _good_cells()
    assert section_problems(cells[:1] + cells[2:], ["causal_mask"]) != []                      # 没有这一节
    assert section_problems([cells[-1]] + cells[:-1], ["causal_mask"]) == [
        "“## 动手写”要在“## 常见误区”之后、“## 小测验”之前"]
    assert section_problems(cells, ["causal_mask", "kv_cache_bytes"]) == [
        "kv_cache_bytes：没有源码和 exercise('kv_cache_bytes').starter 一字不差的起始代码格"]
    stale = [*cells[:4], code(cells[4].source), *cells[5:]]                                    # 没有存档的输出
    assert section_problems(stale, ["causal_mask"]) == ["causal_mask：检查格存档的输出不是起始代码的 not_attempted 反馈"]
    edited = [*cells[:5], md(cells[5].source.replace("j <= i", "j < i")), cells[6]]          # 提示和答案都改了一处
    assert section_problems(edited, ["causal_mask"]) == ["causal_mask：折叠的提示里没有第 [1, 3] 条提示",
                                                         "causal_mask：参考答案不是 solution('causal_mask') 的原文"]
    assert section_problems([cells[0], md("## 动手写"), *cells[2:]], ["causal_mask"]) == [
        "“动手写”的开头没有说在哪里运行（python3 dev.py lab）"]
