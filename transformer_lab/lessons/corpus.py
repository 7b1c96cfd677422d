"""第 9 章的语料 (corpus)：本书自己的中文正文，以及把文字变成编号的字表 (vocabulary)。

小 GPT 要读一大段中文才能学会"写字"。我们用的是本书各章 notebook 里的说明文字（Markdown 单元格）：
它是本书作者写的，和本项目一样按 MIT 许可发布，可以随书分发、拿来训练，出处也清清楚楚。

``gather_prose`` 从 notebook 里取出正文：去掉代码（代码块和行内代码）、公式（``$...$``、``$$...$$``）、
链接的目标地址（只留链接文字）、图片、表格（以 ``|`` 开头的行）、"延伸阅读"这样的书目小节（``READING_LISTS``：
从这个标题起，到下一个同级或更高一级的标题为止），以及 Markdown 记号（标题的 #、加粗的 **、列表的 -、
HTML 标签、``:::{dropdown}`` 这类指令的外壳），每段一行，各章之间空一行。同样的 notebook 总是得到同样的文字。

训练用的是它的一份**存档** ``transformer_lab/data/book_corpus.txt``（``load_corpus``），而不是每次现取：
以后改了正文，训练出来的模型不会悄悄跟着变。想让模型读到新的正文，在仓库根目录重新生成存档（再提交它）::

    python -c "import transformer_lab as tl; tl.corpus.write_snapshot('notebooks')"

（只读第 1–8 章，``CHAPTERS``：第 9 章自己的正文不进语料。）

``held_out_split`` 把每一章里每第 10 段正文留作考题（模型训练时从没见过；考题散在全书各处，
和训练文字是同一种文字，``script_shares`` 可以核对），``trained_neighbours`` 取每道考题前面紧挨着的那一段
（训练过的，作"见过的文字"的对照），``vocabulary``/``encode``/``decode``
在字和编号之间来回换（一个字一个编号：字符级 (character level)）。本模块只依赖 NumPy 和标准库。
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import numpy as np

from .. import _validation as check

__all__ = ["clean_markdown", "gather_prose", "write_snapshot", "load_corpus", "SNAPSHOT", "CHAPTERS", "READING_LISTS",
           "chapters", "held_out_split", "trained_neighbours", "script_shares", "vocabulary", "encode", "decode", "HAN",
           "LATIN"]

SNAPSHOT = Path(__file__).resolve().parents[1] / "data" / "book_corpus.txt"
HAN = re.compile(r"[\u4e00-\u9fff]")  # 常用汉字（CJK 统一表意文字基本区）
LATIN = re.compile(r"[A-Za-z]")  # 拉丁字母（英文术语、人名、书名）
CHAPTERS = range(1, 9)  # 语料读哪几章：第 1–8 章
READING_LISTS = re.compile(r"^(#{1,6})\s+(延伸阅读|参考文献|参考资料)")  # 书目小节的标题：整节不要（多是英文书名）

_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.S | re.M)  # 代码块（含 ```{code-cell} 之类）
_DISPLAY_MATH = re.compile(r"\$\$.*?\$\$", re.S)  # 独立成段的公式
_INLINE_MATH = re.compile(r"\$[^$\n]+\$")  # 行内公式
_INLINE_CODE = re.compile(r"`[^`\n]*`")  # 行内代码
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")  # 图片：整个去掉
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")  # 链接：只留文字
_TAG = re.compile(r"</?[A-Za-z][^>]*>")  # HTML 标签（<details>、<summary> ……）
_DIRECTIVE = re.compile(r"^:{3,}\s*(\{[^}]*\})?\s*")  # :::{dropdown} 标题 → 标题；单独的 ::: → 空
_LINE_MARK = re.compile(r"^\s*(#+\s+|>\s?|[-*+]\s+|\d+[.)]\s+)")  # 标题、引用、列表的开头记号
_EMPHASIS = re.compile(r"\*+|_{2,}")  # **加粗**、*斜体*
_TABLE_ROW = re.compile(r"^\s*(>\s*)*\|")  # 表格的一行（含 |---|---|）：整行不要
_HEADING = re.compile(r"^(#{1,6})\s")
_CJK_PUNCT = "，。、；：？！“”‘’（）《》【】—…·「」"


_HOLE = "\x00"  # 去掉的行内公式、代码、图片先留一个记号，最后再决定那里要不要空格
_NEAR_HOLE = re.compile(rf" *{_HOLE}[ {_HOLE}]*")
_CJK = re.compile(rf"[\u4e00-\u9fff{_CJK_PUNCT}]")


def _close_hole(match: re.Match) -> str:
    """洞的任一边是汉字、中文标点或行首行尾：直接合上（"第 $t$ 个词" → "第个词"）；两边都是西文：留一个空格。"""
    text, a, b = match.string, match.start(), match.end()
    before, after = text[a - 1] if a else "", text[b] if b < len(text) else ""
    return "" if not before or not after or _CJK.match(before) or _CJK.match(after) else " "


def _clean_line(line: str) -> str:
    line = _DIRECTIVE.sub("", line)
    while (stripped := _LINE_MARK.sub("", line)) != line:  # "> - 1. 文字" 这样叠在一起的记号
        line = stripped
    line = line.replace("|", " ")  # 表格之外零星的 | → 空格
    line = _EMPHASIS.sub("", line)
    line = re.sub(r"[ \t]+", " ", line).strip()
    return _NEAR_HOLE.sub(_close_hole, line).strip()


def clean_markdown(source: str) -> list[str]:
    """一个 Markdown 单元格 → 正文的各行（每段一行，没有空行）。

    Examples
    --------
    >>> clean_markdown("## 小结\\n\\n- **注意力**就是[加权平均](glossary.md#x)，$\\\\alpha$ 加起来是 1；\\n\\n```python\\nx = 1\\n```")
    ['小结', '注意力就是加权平均，加起来是 1；']
    """
    if not isinstance(source, str):
        raise TypeError(f"source 必须是字符串（一个 Markdown 单元格的内容），收到的是 {check.describe(source)}。")
    text = _FENCE.sub("\n", source)
    text = _DISPLAY_MATH.sub("\n", text)
    for pattern, repl in ((_INLINE_MATH, _HOLE), (_INLINE_CODE, _HOLE), (_IMAGE, _HOLE), (_LINK, r"\1"), (_TAG, "")):
        text = pattern.sub(repl, text)
    lines = (_clean_line(line) for line in text.split("\n") if not _TABLE_ROW.match(line))
    return [line for line in lines if line]


def _markdown_cells(path: Path) -> list[str]:
    """一个 notebook 里每个 Markdown 单元格的内容。文件不对就报错，写明文件和第几个单元格（``cells[i]``）。

    规则（nbformat 4 的必填项里用得到的几样）：文件是 UTF-8 的 JSON 对象，有 ``cells`` 列表；每个单元格是对象，
    ``cell_type`` 是字符串；Markdown 单元格的 ``source`` 是字符串或字符串的列表。别的单元格（代码、raw……）
    整个跳过，它们的 ``source`` 不看。
    """
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise ValueError(f"读不出 notebook {path}：{error}。提示：paths 里应是 .ipynb 文件。") from None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        got = f"顶层是 {type(notebook).__name__}" if not isinstance(notebook, dict) else \
            "没有 cells" if "cells" not in notebook else f"cells 是 {type(cells).__name__}"
        raise ValueError(f"notebook {path} 的格式不对：应是有 cells 列表的 JSON 对象（nbformat 4），{got}。")
    return [text for i, cell in enumerate(cells) if (text := _markdown_source(cell, f"notebook {path} 的 cells[{i}]"))
            is not None]


def _markdown_source(cell: object, where: str) -> str | None:
    """一个单元格：Markdown 的返回内容（列表连成一个字符串），别的类型返回 None（跳过）。"""
    kind = cell.get("cell_type") if isinstance(cell, dict) else None
    if not isinstance(kind, str):
        got = f"是 {type(cell).__name__}" if not isinstance(cell, dict) else \
            "没有 cell_type" if "cell_type" not in cell else f"cell_type 是 {check.describe(kind)}"
        raise ValueError(f"{where} 应是有 cell_type（字符串）的 JSON 对象，{got}。")
    if kind != "markdown":
        return None
    source = cell.get("source")
    if isinstance(source, str):
        return source
    if isinstance(source, list):
        bad = next((j for j, line in enumerate(source) if not isinstance(line, str)), None)
        if bad is None:
            return "".join(source)
        got = f"source[{bad}] 是 {check.describe(source[bad])}"
    else:
        got = "没有 source" if "source" not in cell else f"source 是 {check.describe(source)}"
    raise ValueError(f"{where}（Markdown）的 source 应是字符串或字符串的列表，{got}。")


def _without_reading_lists(cells: list[str]) -> list[str]:
    """去掉"延伸阅读"这样的小节：从这个标题起（可以跨单元格），到下一个同级或更高一级的标题为止。"""
    kept, skip_level = [], 0  # skip_level > 0：正在跳过一个这一级的书目小节
    for cell in cells:
        lines = []
        for line in _FENCE.sub("\n", cell).split("\n"):
            heading = _HEADING.match(line)
            if heading and skip_level and len(heading.group(1)) <= skip_level:
                skip_level = 0
            if (reading := READING_LISTS.match(line)) and not skip_level:
                skip_level = len(reading.group(1))
            if not skip_level:
                lines.append(line)
        kept.append("\n".join(lines))
    return kept


def gather_prose(paths: Iterable[str | Path]) -> str:
    """把几个 notebook 的正文连起来：按文件名排序，每章的各段各占一行，章与章之间空一行，末尾一个换行。
    表格和"延伸阅读"小节不要（见模块说明）。

    Parameters
    ----------
    paths : iterable of str or Path
        notebook 文件（.ipynb）。只取 Markdown 单元格，代码单元格（连同输出）、raw 单元格和别的类型都跳过。

    Returns
    -------
    str

    Raises
    ------
    TypeError
        ``paths`` 不是路径的列表。
    ValueError
        没有给任何文件；某个文件读不出来（不存在、不是 UTF-8、不是 JSON）；或它不是 notebook 的格式：顶层不是有
        ``cells`` 列表的对象，某个单元格不是有 ``cell_type``（字符串）的对象，某个 Markdown 单元格的 ``source``
        不是字符串或字符串的列表。报错写明文件和第几个单元格（``cells[i]``）。
    """
    if isinstance(paths, (str, Path)) or not isinstance(paths, Iterable):
        raise TypeError(f"paths 必须是 notebook 路径的列表，收到的是 {check.describe(paths)}。"
                        "提示：sorted(Path('notebooks').glob('0*.ipynb'))。")
    files = sorted(Path(p) for p in paths)
    if not files:
        raise ValueError("paths 是空的：至少要给一个 notebook。")
    parts = ["\n".join(line for cell in _without_reading_lists(_markdown_cells(f)) for line in clean_markdown(cell))
             for f in files]
    return "\n\n".join(p for p in parts if p) + "\n"


def write_snapshot(folder: str | Path, path: str | Path = SNAPSHOT) -> Path:
    """把 ``folder`` 里第 ``CHAPTERS`` 章的 notebook（``01_*.ipynb`` …，按文件名排序）的正文写进 ``path``
    （默认是随包发布的存档）。"""
    files = sorted(f for f in Path(folder).glob("[0-9][0-9]_*.ipynb") if int(f.name[:2]) in CHAPTERS)
    target = Path(path)
    target.write_text(gather_prose(files), encoding="utf-8")
    return target


@cache
def load_corpus() -> str:
    """随包发布的语料存档（``SNAPSHOT``，第 1–8 章的正文）。同一个进程里只读一次。"""
    return SNAPSHOT.read_text(encoding="utf-8")


def chapters(text: str) -> list[str]:
    """按空行把语料切回各章。

    Examples
    --------
    >>> chapters("第一章\\n第二段\\n\\n第二章\\n")
    ['第一章\\n第二段', '第二章']
    """
    if not isinstance(text, str):
        raise TypeError(f"text 必须是字符串，收到的是 {check.describe(text)}。")
    return [c.strip("\n") for c in text.split("\n\n") if c.strip("\n")]


def _every_nth(text: str, every: int, offset: int, unique: bool) -> tuple[str, str]:
    """``(其余的段, 挑出的段)``：每一章的段落从 0 数起，下标除以 ``every`` 余 ``offset`` 的挑出来；
    ``unique`` 时只挑全书独一无二的段（"小结""常见误区"这类在每章都出现的标题留在其余的段里）。"""
    every = check.positive_int(every, "every")
    if every < 2:
        raise ValueError(f"every 是每几段留一段作考题，至少是 2，收到的是 {every}。")
    parts = chapters(text)
    if not parts:
        raise ValueError("text 里没有文字，没法切出训练和考试两部分。")
    times = Counter(p for chapter in parts for p in chapter.split("\n"))
    rest, picked = [], []
    for chapter in parts:
        lines = chapter.split("\n")  # 一段一行
        chosen = [i % every == offset and (times[p] == 1 or not unique) for i, p in enumerate(lines)]
        rest.append("\n".join(p for p, c in zip(lines, chosen) if not c))
        picked.append("\n".join(p for p, c in zip(lines, chosen) if c))
    return "\n\n".join(p for p in rest if p), "\n\n".join(p for p in picked if p)


def held_out_split(text: str, every: int = 10) -> tuple[str, str]:
    """``(训练文字, 考试文字)``：每一章的段落（一段一行）从 0 数起，下标为 9、19、29 …… 的段（每 ``every`` 段里的
    最后一段）留作考题，其余拿来训练。两边都是一段一行、各章之间空一行。在全书出现不止一次的段
    （"小结""常见误区"这样的标题）不作考题，所以没有一段文字同时在两边。

    考题散在每一章从头到尾的正文里，而不是每章的结尾（结尾多是小测验答案和小结）：这样考的是"同一本书里没读过的段落"，
    文字的样子（汉字、英文、标点的比例，见 ``script_shares``）和训练文字一样。

    Raises
    ------
    TypeError
        ``every`` 不是整数。
    ValueError
        ``every`` 小于 2，或 ``text`` 里没有文字。

    Examples
    --------
    >>> held_out_split("甲\\n乙\\n丙\\n丁\\n\\n子\\n丑\\n寅", every=2)
    ('甲\\n丙\\n\\n子\\n寅', '乙\\n丁\\n\\n丑')
    """
    every = check.positive_int(every, "every")
    return _every_nth(text, every, every - 1, unique=True)


def trained_neighbours(text: str, every: int = 10) -> str:
    """每一道考题（``held_out_split``）前面紧挨着的那一段：都在训练文字里，段数和考题一样、位置也相邻，
    作"读过的文字"的对照（看模型在见过的和没见过的文字上各猜得多好）。

    Raises
    ------
    ValueError
        ``text`` 里没有文字（``every`` 的规则同 ``held_out_split``）。

    Examples
    --------
    >>> trained_neighbours("甲\\n乙\\n丙\\n丁\\n\\n子\\n丑\\n寅", every=2)
    '甲\\n丙\\n\\n子\\n寅'
    """
    every = check.positive_int(every, "every")
    return _every_nth(text, every, every - 2, unique=False)[1]


def script_shares(text: str) -> dict[str, float]:
    """一段文字里汉字、拉丁字母和其他（数字、标点）各占多少（不算空白和换行），三个数加起来是 1。

    Raises
    ------
    TypeError
        ``text`` 不是字符串。
    ValueError
        ``text`` 里没有可见的字。

    Examples
    --------
    >>> script_shares("注意力 attn！")
    {'汉字': 0.375, '拉丁字母': 0.5, '其他': 0.125}
    """
    if not isinstance(text, str):
        raise TypeError(f"text 必须是字符串，收到的是 {check.describe(text)}。")
    visible = "".join(text.split())
    if not visible:
        raise ValueError("text 里没有可见的字，算不出比例。")
    han, latin = len(HAN.findall(visible)) / len(visible), len(LATIN.findall(visible)) / len(visible)
    return {"汉字": han, "拉丁字母": latin, "其他": 1 - han - latin}


def vocabulary(text: str) -> str:
    """字表：``text`` 里出现过的每个字（含标点、换行），按 Unicode 编号排好，连成一个字符串。第 i 个字的编号是 i。

    Examples
    --------
    >>> vocabulary("注意力的注意")
    '力意注的'
    """
    if not isinstance(text, str) or not text:
        raise ValueError(f"text 必须是非空字符串，收到的是 {check.describe(text)}。")
    return "".join(sorted(set(text)))


def encode(text: str, chars: str) -> np.ndarray:
    """字 → 编号：``text`` 的每个字在字表 ``chars`` 里的位置，整数数组 (len(text),)。

    Raises
    ------
    TypeError
        参数不是字符串。
    ValueError
        ``text`` 为空，或有字表里没有的字（列出来）。

    Examples
    --------
    >>> encode("注意", "力意注的").tolist()
    [2, 1]
    """
    if not isinstance(text, str) or not isinstance(chars, str):
        raise TypeError(f"text 和 chars 都必须是字符串，收到的是 {check.describe(text)} 和 {check.describe(chars)}。")
    if not text:
        raise ValueError("text 不能是空字符串：至少要有一个字。")
    index = {c: i for i, c in enumerate(chars)}
    unknown = sorted(set(text) - set(index))
    if unknown:
        raise ValueError(f"text 里有字表中没有的字：{''.join(unknown)!r}（字表有 {len(chars)} 个字）。"
                         "提示：模型只认识训练语料里出现过的字，换几个常用字试试。")
    return np.array([index[c] for c in text], dtype=np.int64)  # (len(text),)


def decode(ids: np.ndarray, chars: str) -> str:
    """编号 → 字：``encode`` 的逆运算。

    Examples
    --------
    >>> decode(np.array([2, 1, 0]), "力意注的")
    '注意力'
    """
    if not isinstance(chars, str) or not chars:
        raise TypeError(f"chars 必须是非空字符串（字表），收到的是 {check.describe(chars)}。")
    ids = check.token_ids(ids, "ids", len(chars))
    return "".join(chars[i] for i in ids.reshape(-1))
