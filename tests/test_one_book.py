"""全书前后一致：这些检查看的是整本书，而不是某一章。

1. **不照抄种子**：正文（各章 notebook 的文字单元格、``book/*.md``）里没有一段连续 9 个汉字与种子文档
   （本书长出来的两份中文材料）相同——想法、比喻、例子的数可以用，句子要自己写。种子不在仓库里，比的是
   ``tests/data/seed_runs.bin`` 里的指纹（见 ``seed_text.py``）。引用的书名、视频名和例句写在 ``QUOTED`` 里，
   每条注明为什么可以一字不差。
2. **一种小测验**：每一章的小测验都用 MyST 的 ``:::{dropdown}``（JupyterLab 里靠 jupyterlab-myst 折叠，
   网站上是 sphinx-design 的折叠框），不用原始 HTML 的 ``<details>``——后者里的公式不渲染，两种写法的样子也不同。
3. **“第 N 章”指对地方**：``CONCEPTS`` 这张概念表写着每个概念在哪几章讲；正文里“因果掩码（第 4 章）”
   “第 6 章的位置编码”这样的引用、术语表里每个词条的“见第 N 章”，都拿它核对。
每一项检查都有一个反证测试，证明它在故意写错的文字上会失败。
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


# ---------------------------------------------------------------- 概念表：“第 N 章”的引用要指对地方

# 概念 → 讲它的那几章（第一个是主讲的一章）。正文里写“X（第 N 章）”“第 N 章讲过的 X”、术语表里 X 的“见第 N 章”，
# N 都必须在这里；新概念或者搬了家的概念，先改这张表。
CONCEPTS: dict[str, tuple[int, ...]] = {
    "循环神经网络": (1,), "自注意力": (2, 1), "查询": (3,), "点积": (3, 4), "余弦相似度": (3,), "梯度": (3, 1, 4, 5, 8),
    "梯度下降": (3, 5), "交叉熵": (3, 8), "softmax": (4,), "缩放": (4,), "饱和": (4,), "多头注意力": (5,),
    "对称性破缺": (5,), "位置编码": (6,), "RoPE": (6,), "置换等变": (6, 1), "复杂度": (7, 1), "在线 softmax": (7,),
    "分块注意力": (7,), "KV 缓存": (7, 1), "线性注意力": (7,), "掩码": (7, 8), "因果掩码": (7, 8), "层归一化": (8,),
    "残差": (8,), "残差连接": (8,), "前馈网络": (8,), "编码器": (8,), "解码器": (8,),
}
_NAMES = "|".join(sorted(map(re.escape, CONCEPTS), key=len, reverse=True))
# “因果掩码（第 4 章）”“[因果掩码](…)（见第 4、7 章）”；“第 4 章讲过的因果掩码”“第 4 章的正弦[位置编码](…)”
# （“第 N 章”后面同一个短句里、8 个字以内的概念）
REFERENCE = re.compile(rf"\[?(?P<a>{_NAMES})(?:\]\([^)]*\))?[）)]?[（(]见?第 (?P<n1>\d+(?:[–、]\d+)*) 章"
                       rf"|第 (?P<n2>\d+) 章[^，。；：！？\n（）]{{0,8}}?\[?(?P<b>{_NAMES})")


def _numbers(text: str) -> list[int]:
    """“4、7”→ [4, 7]；“2–5”→ [2, 3, 4, 5]。"""
    if "–" in text:
        lo, hi = map(int, text.split("–"))
        return list(range(lo, hi + 1))
    return [int(n) for n in text.split("、")]


def reference_problems(text: str, where: str) -> list[str]:
    """``text`` 里指错了章的概念引用（几章一起引用时，每一章都要讲过它）。"""
    problems = []
    for m in REFERENCE.finditer(text):
        concept, numbers = (m["a"], _numbers(m["n1"])) if m["a"] else (m["b"], [int(m["n2"])])
        wrong = [n for n in numbers if n not in CONCEPTS[concept]]
        if wrong:
            problems.append(f"{where}：“{m[0]}”——{concept} 在第 {'、'.join(map(str, CONCEPTS[concept]))} 章讲，"
                            f"不在第 {'、'.join(map(str, wrong))} 章")
    return problems


def glossary_problems(text: str) -> list[str]:
    """术语表里概念表有的词条：“见 [第 N 章]”至少要有一处指向主讲的那一章。"""
    problems = []
    for m in re.finditer(r"^(\S[^\n]*)\n  ([^\n]+)", text, re.M):
        term, body = m[1].strip(), m[2]
        linked = [int(n) for n in re.findall(r"\[第 (\d+) 章\]", body)]
        if term in CONCEPTS and linked and CONCEPTS[term][0] not in linked:
            problems.append(f"术语表“{term}”：见第 {linked} 章，可它在第 {CONCEPTS[term][0]} 章讲")
    return problems


def test_every_chapter_reference_to_a_concept_points_where_it_is_taught():
    problems = [p for path in NOTEBOOKS + PAGES for p in reference_problems(prose(path), path.name)]
    problems += glossary_problems((ROOT / "book" / "glossary.md").read_text(encoding="utf-8"))
    assert problems == []


def test_the_reference_check_can_fail():
    assert reference_problems("加上因果掩码（第 4 章）就行", "x") == ["x：“因果掩码（第 4 章”——因果掩码 在第 7、8 章讲，不在第 4 章"]
    assert reference_problems("加上因果掩码（第 8 章）就行", "x") == []
    assert len(reference_problems("一个[因果掩码](../book/glossary.md#因果掩码)（第 4、7 章）", "x")) == 1
    assert reference_problems("第 6 章的正弦[位置编码](a)", "x") == []
    assert len(reference_problems("第 2 章的正弦[位置编码](a)", "x")) == 1
    assert reference_problems("第 4 章讲过的梯度", "x") == []  # 梯度在第 4 章也讲过（饱和时梯度变小）
    assert len(reference_problems("第 2 章讲过的层归一化，和 softmax（第 4 章）", "x")) == 1
    assert glossary_problems("掩码\n  英文 mask。见 [第 4 章](a)。\n") == ["术语表“掩码”：见第 [4] 章，可它在第 7 章讲"]
    assert glossary_problems("掩码\n  英文 mask。见 [第 7 章](a) 和 [第 4 章](b)。\n") == []
