"""章节表 ``transformer_lab/chapters.py`` 是全书唯一的章节清单：这里把它和仓库里每一处“列出各章”的地方对一遍。

* ``_toc.yml`` 里的 notebook，按顺序，恰好是表里的各章；
* ``notebooks/*.ipynb`` 恰好是表里的各章，不多不少；每本的一级标题是“第 N 章 ”加表里的章名；
* ``transformer_lab/figures/chNN_<notebook>.py`` 都属于表里的某一章，每个都有对应的 ``tests/figures/test_chNN_<notebook>.py``；
* 自测题库：每一章有自己的 ``transformer_lab/quiz/bank_chNN.py``（``quiz.questions`` 按这个名字找它），里面至少一道
  这一章的题、没有别的章的题；没有不属于任何一章的题库；汇总的题里没有题考表外的章；
* 前言 ``book/preface.md`` 的章节地图：每一章恰好一行，按顺序，章号、章名、链接一字不差；地图下面的文字提到
  每一章，不提表外的章。地图留在 Markdown 里（JupyterLab 里的 jupyterlab-myst 不跑本书的 Sphinx 扩展，
  自定义指令在那里会原样显示），由这里的检查保证它跟着表走。

每个检查都是一个函数：输入一张表和读到的内容，返回问题清单（空 = 没问题）。下半部分用假的表、假的目录文字
证明每个检查都能失败。
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from transformer_lab import chapters, quiz
from transformer_lab.chapters import CHAPTERS, Chapter

from helpers.errors import check_error, error_table_test

ROOT = Path(__file__).resolve().parents[1]
VE, TE = ValueError, TypeError


# ---------------------------------------------------------------- 检查函数

def table_problems(table: tuple[Chapter, ...]) -> list[str]:
    """表本身：章号从 1 起连续；文件名以两位章号开头、不重复；短章名按“：”分开的每一段都取自章名。"""
    problems = []
    if [c.number for c in table] != list(range(1, len(table) + 1)):
        problems.append(f"章号必须从 1 起连续编号，表里是 {[c.number for c in table]}")
    for c in table:
        if not c.stem.startswith(f"{c.number:02d}_"):
            problems.append(f"第 {c.number} 章的文件名 {c.stem} 应以 {c.number:02d}_ 开头")
        missing = [part for part in c.short.split("：") if part not in c.title]
        if missing:
            problems.append(f"第 {c.number} 章的短章名 {c.short!r} 里的 {missing} 不在章名 {c.title!r} 里")
    stems = [c.stem for c in table]
    if len(set(stems)) != len(stems):
        problems.append(f"文件名重复：{stems}")
    return problems


def toc_problems(table: tuple[Chapter, ...], toc_text: str) -> list[str]:
    """``_toc.yml`` 里列出的 notebook（``file: notebooks/...``），按顺序，必须恰好是表里的各章。"""
    def files(node) -> list[str]:
        if isinstance(node, dict):
            own = [node["file"]] if isinstance(node.get("file"), str) else []
            return own + [f for key, value in node.items() if key != "file" for f in files(value)]
        if isinstance(node, list):
            return [f for item in node for f in files(item)]
        return []

    listed = [f for f in files(yaml.safe_load(toc_text)) if f.startswith("notebooks/")]
    expected = [c.docname for c in table]
    return [] if listed == expected else [f"_toc.yml 列出的 notebook 是 {listed}，章节表是 {expected}"]


def notebook_problems(table: tuple[Chapter, ...], stems: set[str]) -> list[str]:
    """``notebooks/`` 里的 notebook（文件名，不带扩展名）必须恰好是表里的各章。"""
    expected = {c.stem for c in table}
    problems = [f"notebooks/ 里没有第 {c.number} 章的 {c.notebook}" for c in table if c.stem not in stems]
    return problems + [f"notebooks/{s}.ipynb 不在章节表里" for s in sorted(stems - expected)]


def heading_problems(table: tuple[Chapter, ...], headings: dict[str, str | None]) -> list[str]:
    """每章 notebook 的一级标题（``headings[stem]``，不带 ``#``）必须是“第 N 章 ”加表里的章名。"""
    return [f"{c.notebook} 的一级标题是 {headings.get(c.stem)!r}，章节表要的是 {c.heading!r}"
            for c in table if headings.get(c.stem) != c.heading]


def figures_problems(table: tuple[Chapter, ...], modules: set[str], tests: set[str]) -> list[str]:
    """``figures/`` 下的 ``chNN_*`` 模块都属于表里的某一章；每个都有同名的测试 ``test_chNN_*``，测试也不多出来。"""
    own = {c.figures_module for c in table}
    problems = [f"figures/{m}.py 不属于章节表里的任何一章" for m in sorted(modules - own)]
    problems += [f"figures/{m}.py 没有对应的测试 tests/figures/test_{m}.py" for m in sorted(modules - tests)]
    return problems + [f"tests/figures/test_{t}.py 没有对应的 figures/{t}.py" for t in sorted(tests - modules)]


def quiz_problems(table: tuple[Chapter, ...], question_chapters: list[int]) -> list[str]:
    """自测题考的章（每道题一个章号）：每一章至少一道题，没有题考表外的章。"""
    numbers = {c.number for c in table}
    problems = [f"第 {c.number} 章在自测里一道题也没有" for c in table if c.number not in question_chapters]
    return problems + [f"有题考的是第 {n} 章，章节表里没有这一章" for n in sorted(set(question_chapters) - numbers)]


def bank_problems(table: tuple[Chapter, ...], banks: dict[str, list[int]]) -> list[str]:
    """题库：``banks`` 是 ``quiz/`` 里的每个 ``bank_ch*`` 模块 → 它的题考的章号（每道题一个）。每一章都有
    ``Chapter.bank_module`` 那个模块、里面至少一道这一章的题；题库里只有它那一章的题；不属于任何一章的题库
    （``quiz.questions`` 不会读它）也算错。"""
    own = {c.bank_module: c.number for c in table}
    problems = []
    for c in table:
        if c.bank_module not in banks:
            problems.append(f"第 {c.number} 章没有题库 transformer_lab/quiz/{c.bank_module}.py")
        elif c.number not in banks[c.bank_module]:
            problems.append(f"quiz/{c.bank_module}.py 里没有第 {c.number} 章的题")
    for module, numbers in sorted(banks.items()):
        if module not in own:
            problems.append(f"quiz/{module}.py 不属于章节表里的任何一章（quiz.questions 不会读它）")
        elif set(numbers) - {own[module]}:
            problems.append(f"quiz/{module}.py 里有第 {sorted(set(numbers) - {own[module]})} 章的题：每道题放进它那一章的题库")
    return problems


MAP_HEADING = "## 章节地图"
MAP_ROW = re.compile(r"\| 第 (\d+) 章 \| \[([^\]]+)\]\(([^)]+)\) \| (.*?) *\|")
CHAPTER_MENTION = re.compile(r"第 (\d+(?:(?:、| 到 )\d+)*) 章")


def mentioned_chapters(text: str) -> set[int]:
    """文字里提到的章号：“第 8 章”“第 6、7 章”“第 1 到 5 章”。"""
    numbers = set()
    for group in CHAPTER_MENTION.findall(text):
        for part in group.split("、"):
            first, _, last = part.partition(" 到 ")
            numbers |= set(range(int(first), int(last or first) + 1))
    return numbers


def chapter_map(preface: str) -> tuple[list[str], str] | None:
    """前言里“章节地图”那一节：(第一张表格的数据行, 表格以外的文字)；没有这一节时是 None。"""
    found = re.search(rf"^{MAP_HEADING}\n(.*?)(?=^## |\Z)", preface, re.M | re.S)
    if found is None:
        return None
    lines = found.group(1).splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("|")), len(lines))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    prose = "\n".join(line for line in lines if not line.startswith("|"))
    return lines[start + 2:end], prose  # 去掉表头和分隔行


def map_rows(lines: list[str]) -> tuple[dict[int, tuple[str, str, str]], list[str]]:
    """章节地图的数据行 → ({章号: (章名, 链接, 你会做的事)}, 写法不对、重复的行)。"""
    rows, problems = {}, []
    for line in lines:
        row = MAP_ROW.fullmatch(line)
        if row is None:
            problems.append(f"章节地图里这一行的写法不对（应为 | 第 N 章 | [章名](../notebooks/NN_xxx.ipynb) | 你会做的事 |）：{line}")
            continue
        if int(row[1]) in rows:
            problems.append(f"章节地图里第 {row[1]} 章出现了不止一次")
        rows[int(row[1])] = (row[2], row[3], row[4])
    return rows, problems


def preface_problems(table: tuple[Chapter, ...], preface: str) -> list[str]:
    """前言的章节地图：每一章恰好一行、按表的顺序，章号、章名（链接的文字）、链接（``../notebooks/NN_xxx.ipynb``）
    一字不差，“你会亲手算、亲手拨的东西”不空；地图下面的文字提到每一章（“第 1 到 5 章”算提到了 1、2、3、4、5），
    不提表外的章。"""
    found = chapter_map(preface)
    if found is None:
        return [f"前言里没有“{MAP_HEADING}”这一节"]
    lines, prose = found
    rows, problems = map_rows(lines)
    numbers = {c.number for c in table}
    for c in table:
        if c.number not in rows:
            problems.append(f"章节地图里没有第 {c.number} 章")
            continue
        title, link, hands_on = rows[c.number]
        if title != c.title:
            problems.append(f"章节地图里第 {c.number} 章的章名是 {title!r}，章节表是 {c.title!r}")
        if link != f"../{c.notebook}":
            problems.append(f"章节地图里第 {c.number} 章链接到 {link}，应为 ../{c.notebook}")
        if not hands_on:
            problems.append(f"章节地图里第 {c.number} 章没有写“你会亲手算、亲手拨的东西”")
    problems += [f"章节地图里的第 {n} 章不在章节表里" for n in sorted(set(rows) - numbers)]
    order = [n for n in rows if n in numbers]
    if order != sorted(order):
        problems.append(f"章节地图的顺序是 {list(rows)}，应按章号排")
    mentioned = mentioned_chapters(prose)
    problems += [f"章节地图下面的文字没有提到第 {n} 章" for n in sorted(numbers - mentioned)]
    return problems + [f"章节地图下面的文字提到了第 {n} 章，章节表里没有这一章" for n in sorted(mentioned - numbers)]


# ---------------------------------------------------------------- 读仓库里的内容

def first_heading(path: Path) -> str | None:
    """notebook 里第一行以 ``# `` 开头的 Markdown（一级标题），去掉 ``# ``。"""
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return None


def _stems(folder: Path, pattern: str, drop: str = "") -> set[str]:
    return {p.stem.removeprefix(drop) for p in folder.glob(pattern)}


# ---------------------------------------------------------------- 真的仓库

def test_the_table_itself():
    assert table_problems(CHAPTERS) == []


def test_toc_lists_exactly_the_chapters_in_order():
    assert toc_problems(CHAPTERS, (ROOT / "_toc.yml").read_text(encoding="utf-8")) == []


def test_notebooks_are_exactly_the_chapters():
    assert notebook_problems(CHAPTERS, _stems(ROOT / "notebooks", "*.ipynb")) == []


def test_notebook_headings_match_the_titles():
    headings = {p.stem: first_heading(p) for p in (ROOT / "notebooks").glob("*.ipynb")}
    assert heading_problems(CHAPTERS, headings) == []


def test_figures_modules_and_tests_mirror_the_chapters():
    modules = _stems(ROOT / "transformer_lab" / "figures", "ch*.py")
    tests = _stems(ROOT / "tests" / "figures", "test_ch*.py", drop="test_")
    assert modules, "figures/ 里一个 chNN_*.py 也没找到：路径写错了？"
    assert figures_problems(CHAPTERS, modules, tests) == []


def test_every_chapter_has_questions():
    assert quiz_problems(CHAPTERS, [q.chapter for q in quiz.questions()]) == []


def test_every_chapter_has_its_own_bank():
    names = _stems(ROOT / "transformer_lab" / "quiz", "bank_ch*.py")
    banks = {name: [q.chapter for q in importlib.import_module(f"transformer_lab.quiz.{name}").questions()]
             for name in names}
    assert banks, "quiz/ 里一个 bank_ch*.py 也没找到：路径写错了？"
    assert bank_problems(CHAPTERS, banks) == []


def test_the_preface_map_follows_the_table():
    assert preface_problems(CHAPTERS, PREFACE) == []


def test_helpers():
    assert chapters.numbers() == tuple(range(1, len(CHAPTERS) + 1))
    for c in CHAPTERS:
        assert chapters.chapter(c.number) is c
        assert (ROOT / c.notebook).is_file() and c.notebook == f"notebooks/{c.stem}.ipynb"
    assert chapters.chapter(4).figures_module == "ch04_four_steps"
    assert chapters.chapter(4).bank_module == "bank_ch04" and chapters.chapter(10).bank_module == "bank_ch10"
    assert chapters.chapter(4).heading == "第 4 章 计算四步：点积 → 缩放 → Softmax → 加权求和"


def test_the_range_in_the_message_follows_the_table(monkeypatch):
    """报错里的章号范围来自表，不是写死的“1 到 8”：表里多一章，下一个章号就合法了，范围也跟着变。"""
    nine = Chapter(NEXT, f"{NEXT:02d}_next", "下一章", "下一章")
    monkeypatch.setattr(chapters, "CHAPTERS", (*CHAPTERS, nine))
    assert chapters.chapter(NEXT) is nine and chapters.numbers()[-1] == NEXT
    check_error(lambda: chapters.chapter(NEXT + 1), VE, rf"1 到 {NEXT} 之一，收到 {NEXT + 1}")


# ---------------------------------------------------------------- 反证：每个检查都能失败

NEXT = CHAPTERS[-1].number + 1  # 表里还没有的下一章（加了新章，这些反证跟着往后挪）
NINE = Chapter(NEXT, f"{NEXT:02d}_new_chapter", "新的一章：副标题", "新的一章")
LAST_LINE = f"      - file: {CHAPTERS[-1].docname}\n"
REAL_TOC = (ROOT / "_toc.yml").read_text(encoding="utf-8")
PREFACE = (ROOT / "book" / "preface.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("table, expected", [
    ((*CHAPTERS[:2], CHAPTERS[3]), "章号必须从 1 起连续编号"),
    ((replace(CHAPTERS[0], stem="1_rnn"), *CHAPTERS[1:]), "应以 01_ 开头"),
    ((replace(CHAPTERS[0], short="RNN 与 LSTM"), *CHAPTERS[1:]), "'RNN 与 LSTM'] 不在章名"),
    ((CHAPTERS[0], replace(CHAPTERS[0], number=2), *CHAPTERS[2:]), "文件名重复"),
], ids=["gap", "stem-prefix", "short-not-from-title", "stem-twice"])
def test_table_check_can_fail(table, expected):
    assert any(expected in p for p in table_problems(table)), table_problems(table)


@pytest.mark.parametrize("table, toc, expected", [
    ((*CHAPTERS, NINE), REAL_TOC, "章节表是"),                                               # 表里加了一章，目录没加
    (CHAPTERS, REAL_TOC.replace("      - file: notebooks/08_transformer_layer\n", ""), "章节表是"),  # 目录里少一章
    (CHAPTERS, REAL_TOC.replace("notebooks/02_self_attention", "notebooks/X")
                       .replace("notebooks/03_qkv", "notebooks/02_self_attention")
                       .replace("notebooks/X", "notebooks/03_qkv"), "章节表是"),  # 顺序对调
], ids=["table-has-more", "toc-has-fewer", "order-swapped"])
def test_toc_check_can_fail(table, toc, expected):
    assert toc != REAL_TOC or table != CHAPTERS
    problems = toc_problems(table, toc)
    assert len(problems) == 1 and expected in problems[0]


def test_toc_check_accepts_a_matching_new_chapter():
    toc = REAL_TOC.replace(LAST_LINE, LAST_LINE + f"      - file: {NINE.docname}\n")
    assert toc_problems((*CHAPTERS, NINE), toc) == []


def test_notebook_check_can_fail():
    stems = {c.stem for c in CHAPTERS}
    assert notebook_problems((*CHAPTERS, NINE), stems) == [f"notebooks/ 里没有第 {NEXT} 章的 {NINE.notebook}"]
    assert notebook_problems(CHAPTERS, stems | {"09_draft"}) == ["notebooks/09_draft.ipynb 不在章节表里"]


def test_heading_check_can_fail():
    headings = {c.stem: c.heading for c in CHAPTERS}
    assert heading_problems(CHAPTERS, headings) == []
    renamed = (replace(CHAPTERS[0], title="RNN 与 Transformer"), *CHAPTERS[1:])
    (problem,) = heading_problems(renamed, headings)
    assert "01_rnn_vs_transformer.ipynb 的一级标题是 '第 1 章 RNN 与 Transformer：传话游戏" in problem
    assert heading_problems(CHAPTERS, {**headings, "03_qkv": None})[0].startswith("notebooks/03_qkv.ipynb 的一级标题是 None")


def test_first_heading_reads_the_first_h1(tmp_path):
    nb = {"cells": [{"cell_type": "code", "source": ["# 不是标题，是注释"]},
                    {"cell_type": "markdown", "source": ["## 二级\n", "# 第 9 章 新的一章\n"]}]}
    (tmp_path / "x.ipynb").write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    assert first_heading(tmp_path / "x.ipynb") == "第 9 章 新的一章"


def test_figures_check_can_fail():
    modules = {c.figures_module for c in CHAPTERS}
    tests = set(modules)
    assert figures_problems(CHAPTERS, modules, tests) == []
    assert figures_problems(CHAPTERS, modules | {NINE.figures_module}, tests | {NINE.figures_module}) == [
        f"figures/{NINE.figures_module}.py 不属于章节表里的任何一章"]
    assert figures_problems(CHAPTERS, modules, tests - {"ch04_four_steps"}) == [
        "figures/ch04_four_steps.py 没有对应的测试 tests/figures/test_ch04_four_steps.py"]
    assert figures_problems(CHAPTERS, modules - {"ch04_four_steps"}, tests) == [
        "tests/figures/test_ch04_four_steps.py 没有对应的 figures/ch04_four_steps.py"]
    assert figures_problems((*CHAPTERS, NINE), modules, tests) == []  # 还没有图的新章不算错


def test_quiz_check_can_fail():
    every = [c.number for c in CHAPTERS]
    assert quiz_problems(CHAPTERS, every) == []
    assert quiz_problems((*CHAPTERS, NINE), every) == [f"第 {NEXT} 章在自测里一道题也没有"]
    assert quiz_problems(CHAPTERS, [*every, NEXT]) == [f"有题考的是第 {NEXT} 章，章节表里没有这一章"]


def test_bank_check_can_fail():
    banks = {c.bank_module: [c.number, c.number] for c in CHAPTERS}
    assert bank_problems(CHAPTERS, banks) == []
    assert bank_problems((*CHAPTERS, NINE), banks) == [f"第 {NEXT} 章没有题库 transformer_lab/quiz/{NINE.bank_module}.py"]
    assert bank_problems((*CHAPTERS, NINE), {**banks, NINE.bank_module: []}) == [
        f"quiz/{NINE.bank_module}.py 里没有第 {NEXT} 章的题"]
    assert bank_problems(CHAPTERS, {**banks, "bank_ch04": [4, 5, 4]}) == [
        "quiz/bank_ch04.py 里有第 [5] 章的题：每道题放进它那一章的题库"]
    assert bank_problems(CHAPTERS, {**banks, "bank_ch01_04": [1, 2]}) == [
        "quiz/bank_ch01_04.py 不属于章节表里的任何一章（quiz.questions 不会读它）"]
    assert bank_problems((*CHAPTERS, NINE), {**banks, NINE.bank_module: [NEXT]}) == []


def test_chapter_mentions_are_read_with_ranges():
    assert mentioned_chapters("第 1 到 5 章讲注意力。第 6、7 章补上顺序。第 10 章，第 9 章") == {1, 2, 3, 4, 5, 6, 7, 9, 10}
    assert mentioned_chapters("第 2、4 到 6 章") == {2, 4, 5, 6} and mentioned_chapters("第十章") == set()


def _map_row(c: Chapter, hands_on: str = "拨一拨") -> str:
    return f"| 第 {c.number} 章 | [{c.title}](../{c.notebook}) | {hands_on} |\n"


REAL_ROWS = {c.number: next(line + "\n" for line in PREFACE.splitlines() if line.startswith(f"| 第 {c.number} 章 |"))
             for c in CHAPTERS}
LAST_ROW = REAL_ROWS[CHAPTERS[-1].number]
NARRATIVE = "第 1 到 5 章讲注意力本身"  # 地图下面那段文字的开头


@pytest.mark.parametrize("table, preface, expected", [
    ((*CHAPTERS, NINE), PREFACE, [f"章节地图里没有第 {NEXT} 章", f"章节地图下面的文字没有提到第 {NEXT} 章"]),
    (CHAPTERS, PREFACE.replace(REAL_ROWS[8], ""), ["章节地图里没有第 8 章"]),
    (CHAPTERS, PREFACE.replace(REAL_ROWS[2] + REAL_ROWS[3], REAL_ROWS[3] + REAL_ROWS[2]),
     [f"章节地图的顺序是 {[1, 3, 2, *range(4, NEXT)]}，应按章号排"]),
    (CHAPTERS, PREFACE.replace("[Q、K、V 三兄弟]", "[Q、K、V 三姐妹]"),
     ["章节地图里第 3 章的章名是 'Q、K、V 三姐妹'，章节表是 'Q、K、V 三兄弟'"]),
    (CHAPTERS, PREFACE.replace("(../notebooks/03_qkv.ipynb)", "(../notebooks/03_qvk.ipynb)"),
     ["章节地图里第 3 章链接到 ../notebooks/03_qvk.ipynb，应为 ../notebooks/03_qkv.ipynb"]),
    (CHAPTERS, PREFACE.replace("| 第 3 章 | [Q、K、V", "| 第 4 章 | [Q、K、V"),
     ["章节地图里第 4 章出现了不止一次", "章节地图里没有第 3 章"]),
    (CHAPTERS, PREFACE.replace(LAST_ROW, LAST_ROW + _map_row(NINE)), [f"章节地图里的第 {NEXT} 章不在章节表里"]),
    (CHAPTERS, PREFACE.replace(REAL_ROWS[5], _map_row(CHAPTERS[4], "")), ["章节地图里第 5 章没有写“你会亲手算、亲手拨的东西”"]),
    (CHAPTERS, PREFACE.replace(REAL_ROWS[5], REAL_ROWS[5].replace(" | [", " [")),
     [f"章节地图里这一行的写法不对（应为 | 第 N 章 | [章名](../notebooks/NN_xxx.ipynb) | 你会做的事 |）："
      f"{REAL_ROWS[5].replace(' | [', ' [').rstrip()}", "章节地图里没有第 5 章"]),
    (CHAPTERS, PREFACE.replace("第 9 章走完", "再下一章走完"), ["章节地图下面的文字没有提到第 9 章"]),
    (CHAPTERS, PREFACE.replace(NARRATIVE, f"第 {NEXT} 章还在写。{NARRATIVE}"),
     [f"章节地图下面的文字提到了第 {NEXT} 章，章节表里没有这一章"]),
    (CHAPTERS, PREFACE.replace(MAP_HEADING, "## 各章"), [f"前言里没有“{MAP_HEADING}”这一节"]),
], ids=["table-has-more", "row-missing", "rows-swapped", "title", "link", "number", "row-for-no-chapter",
        "no-hands-on", "malformed-row", "prose-skips-a-chapter", "prose-names-no-chapter", "no-section"])
def test_preface_check_can_fail(table, preface, expected):
    assert preface != PREFACE or table != CHAPTERS
    assert preface_problems(table, preface) == expected


def test_preface_check_accepts_a_matching_new_chapter():
    preface = PREFACE.replace(LAST_ROW, LAST_ROW + _map_row(NINE)).replace(NARRATIVE, f"第 {NEXT} 章是新的一章。{NARRATIVE}")
    assert preface_problems((*CHAPTERS, NINE), preface) == []


LAST = CHAPTERS[-1].number
ERROR_CASES = [
    ("chapter-past-the-end", lambda: chapters.chapter(LAST + 1), VE, rf"chapter 必须是本书的章号 1 到 {LAST} 之一，收到 {LAST + 1}"),
    ("chapter-zero", lambda: chapters.chapter(0), VE, r"chapter 必须是正整数（>= 1），收到的是 0"),
    ("chapter-str", lambda: chapters.chapter("4"), TE, r"chapter 必须是正整数.*'4'"),
    ("chapter-bool", lambda: chapters.chapter(True), TE, r"chapter 必须是正整数"),
    ("chapter-float", lambda: chapters.chapter(4.0), TE, r"chapter 必须是正整数"),
    ("chapter-name", lambda: chapters.chapter(LAST + 1, "n"), VE, rf"n 必须是本书的章号.*收到 {LAST + 1}"),
]
test_documented_errors = error_table_test(ERROR_CASES)
