"""全书前后一致：这些检查看的是整本书，而不是某一章。

1. **不照抄种子**：正文（各章 notebook 的文字单元格、``book/*.md``）里没有一段连续 9 个汉字与种子文档
   （本书长出来的两份中文材料）相同——想法、比喻、例子的数可以用，句子要自己写。种子不在仓库里，比的是
   ``tests/data/seed_runs.bin`` 里的指纹（见 ``seed_text.py``）。引用的书名、视频名和例句写在 ``QUOTED`` 里，
   每条注明为什么可以一字不差。
2. **一种小测验**：每一章的小测验都用 MyST 的 ``:::{dropdown}``（JupyterLab 里靠 jupyterlab-myst 折叠，
   网站上是 sphinx-design 的折叠框），不用原始 HTML 的 ``<details>``——后者里的公式不渲染，两种写法的样子也不同。
3. **“第 N 章”指对地方**：``CONCEPTS`` 这张概念表写着每个概念在哪几章讲；正文里“因果掩码（第 4 章）”
   “第 6 章的位置编码”这样的引用、术语表里每个词条的“见第 N 章”，都拿它核对。
4. **一个记号一个意思**：各章和 ``book/*.md`` 公式里用到的每个记号（字母连同名字性的下标、希腊字母、⊙ ∂ Σ 这些
   运算符、写成整词的函数），都在 ``book/notation.md`` 表格的第一栏里；同一个记号不在两行里出现（两行就是两个意思）。
   这只能查“列没列、列了几次”，查不出某一章悄悄拿一个已列出的字母另作他用——那要靠换字母时对照记号表。
每一项检查都有一个反证测试，证明它在故意写错的文字上会失败。
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from helpers.seed_text import DIGESTS, SEEDS, SeedIndex, runs, seed_digests
from tools.site import ROOT

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
    assert DIGESTS.read_bytes() == seed_digests(), "种子文档变了：运行 python tests/helpers/seed_text.py 重新生成指纹"


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


# ---------------------------------------------------------------- 记号表：每个记号都查得到，一个记号一个意思

# 公式（$…$ 和 $$…$$）里的记号：一个拉丁字母或希腊字母，带上它的名字性下标（d_k、W_Q、W_{out}、d_\text{model}）；
# 写成整词的函数和量（\text{LN}、\mathrm{softmax}）；以及下面这几个运算符。两个字母挨着写是相乘（QK^\top 是 Q 和 K），
# 只有 NAMES 里的几个是整词。
MATH = re.compile(r"\$\$(.+?)\$\$|\$([^$\n]+?)\$", re.S)
CODE_SPAN = re.compile(r"```.*?```|`[^`\n]*`", re.S)
GREEK = set("alpha beta gamma delta epsilon varepsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma tau "
            "upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Phi Psi Omega ell".split())
OPERATORS = {"odot": "⊙", "partial": "∂", "sum": "Σ", "lceil": "⌈⌉", "top": "⊤", "sqrt": "√"}
NAMES = {"PE"}  # 不用 \text 写、却是一个整词的记号
# 不是记号、不用进记号表的东西（忽略表）：
# - 排版和空白：\frac \left \right \big \qquad \, \; \! \begin{…} \end{…} \underbrace …
# - 高中就认识的函数和关系：\log \exp \sin \cos \tan \tanh \max \min，× ÷ ± ≤ ≥ ≠ → ← ∈ ∝ ∞ …
# - 乘号和点积 \cdot（记号表“运算和符号”里解释它，但它是运算，不是字母；记号表自己也拿它当占位符 O(·)）
# - 范数的竖线 \| \lVert \lvert（同上，记号表里有）和数集 \mathbb{R}
# - 常数 π（高中数学）
IGNORED_GREEK = {"pi"}
# 下标里这些写法只说“第几个”，不构成新记号：x_i、h_{t-1}、k_1、α_{T,1}、R_{p'-p}、W_O^{(h)}；
# 写成文字的下标（x_{\text{新}}、k_{\text{tired}}、E_{\text{位置}}）是标签，也一样。
INDEX = re.compile(r"^[0-9ijtsnmphTSkΔ+\-,′'() ]+$")
# 这几个字母的下标总是名字：d_k、d_h 是不同的量，W_1、b_1 是不同的矩阵，LN_1、LN_2 是不同的两道层归一化。
NAMED_BASES = {"d", "W", "b", "LN"}
NAMED_INDEX = re.compile(r"^[ijts+\-,′'() ]*[ijts][ijts+\-,′'() ]*$")  # 它们只有 i、j、t、s 这样的下标才是“第几个”
CJK = re.compile(r"[\u4e00-\u9fff]")


def _group(tex: str, i: int) -> tuple[str, int]:
    """``tex[i]`` 是 ``{``：返回配对的花括号里的内容和它后面的位置。"""
    depth = 0
    for j in range(i, len(tex)):
        depth += {"{": 1, "}": -1}.get(tex[j], 0)
        if depth == 0:
            return tex[i + 1:j], j + 1
    return tex[i + 1:], len(tex)


def _script(tex: str, i: int) -> tuple[str | None, int]:
    """``tex[i]`` 是 ``_`` 或 ``^`` 时读出上下标（``_k``、``_{out}``、``_\\text{model}``）。"""
    if i >= len(tex) or tex[i] not in "_^":
        return None, i
    i += 1
    while i < len(tex) and tex[i] == " ":
        i += 1
    if i < len(tex) and tex[i] == "{":
        return _group(tex, i)
    m = re.match(r"\\[a-zA-Z]+|.", tex[i:])
    i += len(m[0]) if m else 0
    if m and m[0] in ("\\text", "\\mathrm") and i < len(tex) and tex[i] == "{":
        body, i = _group(tex, i)
        return "\\text{" + body + "}", i
    return (m[0] if m else ""), i


def _with_subscript(base: str, sub: str | None) -> str:
    if sub is None:
        return base
    if "\\text" in sub and base not in NAMED_BASES:
        return base  # 文字下标是标签
    sub = re.sub(r"\\(?:text|mathrm)\{([^{}]*)\}", r"\1", sub).replace("\\Delta", "Δ")
    sub = re.sub(r"\\[,;!]|[{} ]", "", sub)
    index = NAMED_INDEX if base in NAMED_BASES else INDEX
    return base if not sub or CJK.search(sub) or index.match(sub) else f"{base}_{sub}"


def math_symbols(tex: str) -> list[str]:
    """一段 LaTeX 里的记号，按出现的顺序（可能重复）。"""
    found, i = [], 0
    while i < len(tex):
        if tex[i] == "\\":
            m = re.match(r"\\([a-zA-Z]+|.)", tex[i:])
            name, i = m[1], i + len(m[0])
            if name in ("text", "mathrm", "operatorname"):
                while i < len(tex) and tex[i] == " ":
                    i += 1
                word, i = _group(tex, i) if i < len(tex) and tex[i] == "{" else ("", i)
                if not word.strip() or CJK.search(word):
                    for _ in range(2):  # 公式里的中文是说明文字（连同它的下标：\text{新表示}_i）
                        _, i = _script(tex, i)
                    continue
                base = word.strip()
            elif name in ("begin", "end", "mathbb"):
                _, i = _group(tex, i)
                continue
            elif name == "mathcal":
                letter, i = _group(tex, i)
                base = f"\\mathcal{{{letter}}}"
            elif name in GREEK and name not in IGNORED_GREEK:
                base = "\\" + name
            elif name in OPERATORS:
                found.append(OPERATORS[name])
                if name == "sum":  # Σ_j、Σ_{j=1}^{S} 的上下标是求和的范围
                    for _ in range(2):
                        _, i = _script(tex, i)
                continue
            else:
                continue
        elif tex[i].isascii() and tex[i].isalpha():
            word = re.match(r"[A-Za-z]+", tex[i:])[0]
            base = word if word in NAMES else tex[i]
            i += len(base)
        else:
            i += 1
            continue
        while i < len(tex) and tex[i] in "'′":
            base, i = base + "′", i + 1
        sub = sup = None
        for _ in range(2):
            if i < len(tex) and tex[i] == "_":
                sub, i = _script(tex, i)
            elif i < len(tex) and tex[i] == "^":
                sup, i = _script(tex, i)
        found.append(_with_subscript(base, sub))
        if sup is not None and not re.fullmatch(r"\(.*\)", sup):  # 上标 (h) 是“第 h 个”，其余照读：e^{x}、K^\top
            found += math_symbols(sup)
    return found


def formulas(text: str) -> list[str]:
    """一页正文里的公式（代码片段里的 $ 不算）。"""
    return [m[1] or m[2] for m in MATH.finditer(CODE_SPAN.sub("", text))]


def notation_rows(page: str) -> list[tuple[str, list[str]]]:
    """记号表的每一行：（“意思”一栏，第一栏写的记号）。只看表格里第一栏有公式的行。"""
    rows = []
    for line in page.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 2 or set(cells[0]) <= set("-: "):
            continue
        symbols = list(dict.fromkeys(s for f in formulas(cells[0]) for s in math_symbols(f)))
        if symbols:
            rows.append((cells[1], symbols))
    return rows


def unlisted_symbols(pages: dict[str, str], notation: str) -> dict[str, list[str]]:
    """各页公式里用到、记号表第一栏却没有的记号：{记号: [哪几页]}。"""
    listed = {s for _, symbols in notation_rows(notation) for s in symbols}
    missing: dict[str, list[str]] = {}
    for name, text in pages.items():
        for symbol in dict.fromkeys(s for f in formulas(text) for s in math_symbols(f)):
            if symbol not in listed:
                missing.setdefault(symbol, []).append(name)
    return missing


def symbols_listed_twice(notation: str) -> dict[str, list[str]]:
    """记号表里出现在两行（两个意思）的记号：{记号: [两行的意思]}。"""
    meanings: dict[str, list[str]] = {}
    for meaning, symbols in notation_rows(notation):
        for s in symbols:
            meanings.setdefault(s, []).append(meaning[:30])
    return {s: m for s, m in meanings.items() if len(m) > 1}


NOTATION = ROOT / "book" / "notation.md"


def test_every_symbol_in_the_chapters_math_is_in_the_notation_page():
    pages = {p.name: prose(p) for p in NOTEBOOKS + PAGES if p != NOTATION}
    assert unlisted_symbols(pages, NOTATION.read_text(encoding="utf-8")) == {}, "这些记号不在记号表里（补一行，或者换个字母）"


def test_no_symbol_has_two_meanings_in_the_notation_page():
    assert symbols_listed_twice(NOTATION.read_text(encoding="utf-8")) == {}


def test_the_symbol_parser_reads_symbols_not_letters():
    assert math_symbols(r"Q = X W_Q,\qquad \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)V") == [
        "Q", "X", "W_Q", "softmax", "Q", "K", "⊤", "√", "d_k", "V"]
    assert math_symbols(r"x_{\text{新}} = x_i + \sum_{j=1}^{S} \alpha_{ij}\, v_j") == ["x", "x", "Σ", "\\alpha", "v"]
    assert math_symbols(r"d_\text{model},\ d_{ff},\ W_{out},\ \text{LN}_2(h),\ PE(p') = R_{p'-p}") == [
        "d_model", "d_ff", "W_out", "LN_2", "h", "PE", "p′", "R"]
    assert math_symbols(r"\text{（对每一个 } 2\pi \times 10^{-5} \le e^{x} \in \mathbb{R}^{D}") == ["e", "x", "D"]


def test_the_notation_checks_can_fail():
    """反证：章节里冒出一个记号表没有的字母，或者记号表把一个字母写进两行，都会被挑出来。"""
    notation = "| 记号 | 意思 |\n|---|---|\n| $q_i$，$Q$ | 查询 |\n| $p$，$p'$ | 位置 |\n"
    chapter = {"06.ipynb": "查询 $q_i$ 在位置 $p$，键在 $p'$；$\\text{新}_i = Q$"}
    assert unlisted_symbols(chapter, notation) == {}
    assert unlisted_symbols({**chapter, "07.ipynb": "折扣 $\\alpha = e^{m}$"}, notation) == {
        "\\alpha": ["07.ipynb"], "e": ["07.ipynb"], "m": ["07.ipynb"]}
    assert symbols_listed_twice(notation) == {}
    assert symbols_listed_twice(notation + "| $q$ | 第二个位置 |\n") == {"q": ["查询", "第二个位置"]}
