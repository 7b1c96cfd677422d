"""全书前后一致：这些检查看的是整本书，而不是某一章。

1. **不照抄种子**：正文（各章 notebook 的文字单元格、``book/*.md``）里没有一段连续 9 个汉字与种子文档
   （本书长出来的两份中文材料）相同——想法、比喻、例子的数可以用，句子要自己写。种子不在仓库里，比的是
   ``tests/data/seed_runs.bin`` 里的指纹（见 ``seed_text.py``）。引用的书名、视频名和例句写在 ``QUOTED`` 里，
   每条注明为什么可以一字不差。
2. **一种小测验**：每一章的小测验都用 MyST 的 ``:::{dropdown}``（JupyterLab 里靠 jupyterlab-myst 折叠，
   网站上是 sphinx-design 的折叠框），不用原始 HTML 的 ``<details>``——后者里的公式不渲染，两种写法的样子也不同。
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from seed_text import DIGESTS, SEEDS, SeedIndex, runs, seed_digests
from site_tools import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
PAGES = sorted((ROOT / "book").glob("*.md"))

# 与种子一字不差、却理应如此的 9 字段：引用的标题和例句
QUOTED = {
    "小明把苹果递给小红": "全书的例句（种子里的例子，第 2、8 章逐词计算它）",
    "一条视频搞懂两个机": "延伸阅读里引用的视频标题《RNN VS Transformer 一条视频搞懂两个机制》",
    "条视频搞懂两个机制": "同上",
    "多头注意力数学原理": "延伸阅读里引用的视频标题《15 分钟认识注意力·多头注意力数学原理详解》",
    "头注意力数学原理详": "同上",
    "注意力数学原理详解": "同上",
}


def prose(path: Path) -> str:
    """一页的正文：notebook 的文字单元格，或 Markdown 页面本身。"""
    if path.suffix == ".ipynb":
        return "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")
    return path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def seeds() -> SeedIndex:
    return SeedIndex(DIGESTS.read_bytes())


@pytest.mark.parametrize("path", NOTEBOOKS + PAGES, ids=lambda p: p.name)
def test_no_sentence_copies_nine_han_characters_from_the_seeds(seeds, path):
    copied = [r for r in seeds.copied(prose(path)) if r not in QUOTED]
    assert not copied, f"{path.name} 照抄了种子文档的这些片段（换成自己的话）：{copied}"


def test_the_seed_check_catches_a_copied_sentence(seeds):
    """反证：例句去掉白名单就会被挑出来；换一个字就不算照抄。"""
    assert seeds.copied("他说：小明把苹果递给小红。") == ["小明把苹果递给小红"]
    assert seeds.copied("他说：小明把梨子递给小红。") == []
    assert runs("小明把苹果递给小红") == {"小明把苹果递给小红"}


def test_quoted_runs_are_still_used():
    """白名单里的每一条都还出现在书里（不再用的删掉，免得它替以后的照抄开门）。"""
    text = "\n".join(prose(p) for p in NOTEBOOKS + PAGES)
    assert [q for q in QUOTED if q not in text] == []


@pytest.mark.skipif(not SEEDS.is_dir(), reason=f"种子文档 {SEEDS} 不在这台机器上：只能用已提交的指纹检查")
def test_the_fingerprint_file_matches_the_seeds():
    assert DIGESTS.read_bytes() == seed_digests(), "种子文档变了：运行 python tests/seed_text.py 重新生成指纹"


# ---------------------------------------------------------------- 一种小测验

QUIZ_HEADING = re.compile(r"^## 小测验", re.M)


def quiz_problems(markdown_cells: list[str]) -> list[str]:
    """小测验（“## 小测验”那一节，到下一个二级标题为止）的写法问题：没有这一节、没有 dropdown、用了 <details>。"""
    text = "\n".join(markdown_cells)
    match = QUIZ_HEADING.search(text)
    if not match:
        return ["没有“## 小测验”一节"]
    rest = text[match.end():]
    section = rest[:m.start()] if (m := re.search(r"^## ", rest, re.M)) else rest
    problems = []
    if ":::{dropdown}" not in section:
        problems.append("小测验里没有 :::{dropdown}")
    if re.search(r"<details|<summary", section):
        problems.append("小测验用了 <details>/<summary>（换成 :::{dropdown}）")
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_quiz_uses_the_dropdown_form(path):
    cells = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"]
    assert quiz_problems(cells) == [], path.name


def test_the_quiz_check_can_fail():
    good = ["## 小测验\n\n:::{dropdown} 1. 问题\n答案\n:::\n", "## 小结\n<details>不在小测验里</details>"]
    assert quiz_problems(good) == []
    assert quiz_problems(["## 小测验\n\n<details>\n<summary>1. 问题</summary>\n答案\n</details>\n"]) == [
        "小测验里没有 :::{dropdown}", "小测验用了 <details>/<summary>（换成 :::{dropdown}）"]
    assert quiz_problems(["## 小结"]) == ["没有“## 小测验”一节"]
