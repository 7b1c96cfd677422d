"""第 9 章的语料 (corpus)：本书自己的中文正文，以及把文字变成编号的字表 (vocabulary)。

小 GPT 要读一大段中文才能学会"写字"。我们用的是本书各章 notebook 里的说明文字（Markdown 单元格）：
它是本书作者写的，和本项目一样按 MIT 许可发布，可以随书分发、拿来训练，出处也清清楚楚。

``gather_prose`` 从 notebook 里取出正文：去掉代码（代码块和行内代码）、公式（``$...$``、``$$...$$``）、
链接的目标地址（只留链接文字）、图片和 Markdown 记号（标题的 #、加粗的 **、列表的 -、表格的 |、
HTML 标签、``:::{dropdown}`` 这类指令的外壳），每段一行，各章之间空一行。同样的 notebook 总是得到同样的文字。

训练用的是它的一份**存档** ``transformer_lab/data/book_corpus.txt``（``load_corpus``），而不是每次现取：
以后改了正文，训练出来的模型不会悄悄跟着变。想让模型读到新的正文，在仓库根目录重新生成存档（再提交它）::

    python -c "import transformer_lab as tl; tl.corpus.write_snapshot('notebooks')"

``held_out_split`` 把每一章的最后 10% 留作考题（模型训练时从没见过），``vocabulary``/``encode``/``decode``
在字和编号之间来回换（一个字一个编号：字符级 (character level)）。本模块只依赖 NumPy 和标准库。
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import numpy as np

from .. import _validation as check

__all__ = ["clean_markdown", "gather_prose", "write_snapshot", "load_corpus", "SNAPSHOT", "chapters", "held_out_split",
           "vocabulary", "encode", "decode", "HAN"]

SNAPSHOT = Path(__file__).resolve().parents[1] / "data" / "book_corpus.txt"
HAN = re.compile(r"[\u4e00-\u9fff]")  # 常用汉字（CJK 统一表意文字基本区）

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
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")  # 表格的 |---|---| 行
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
    if _TABLE_RULE.match(line):
        return ""
    line = line.replace("|", " ")  # 表格的格子 → 空格隔开
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
    lines = (_clean_line(line) for line in text.split("\n"))
    return [line for line in lines if line]


def _markdown_cells(path: Path) -> list[str]:
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise ValueError(f"读不出 notebook {path}：{error}。提示：paths 里应是 .ipynb 文件。") from None
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in notebook.get("cells", []) if c.get("cell_type") == "markdown"]


def gather_prose(paths: Iterable[str | Path]) -> str:
    """把几个 notebook 的正文连起来：按文件名排序，每章的各段各占一行，章与章之间空一行，末尾一个换行。

    Parameters
    ----------
    paths : iterable of str or Path
        notebook 文件（.ipynb）。只取 Markdown 单元格，代码单元格和输出都不要。

    Returns
    -------
    str

    Raises
    ------
    TypeError
        ``paths`` 不是路径的列表。
    ValueError
        没有给任何文件，或某个文件读不出来。
    """
    if isinstance(paths, (str, Path)) or not isinstance(paths, Iterable):
        raise TypeError(f"paths 必须是 notebook 路径的列表，收到的是 {check.describe(paths)}。"
                        "提示：sorted(Path('notebooks').glob('0*.ipynb'))。")
    files = sorted(Path(p) for p in paths)
    if not files:
        raise ValueError("paths 是空的：至少要给一个 notebook。")
    parts = ["\n".join(line for cell in _markdown_cells(f) for line in clean_markdown(cell)) for f in files]
    return "\n\n".join(p for p in parts if p) + "\n"


def write_snapshot(folder: str | Path, path: str | Path = SNAPSHOT) -> Path:
    """把 ``folder`` 里各章 notebook（``0*.ipynb``，按文件名排序）的正文写进 ``path``（默认是随包发布的存档）。"""
    files = sorted(Path(folder).glob("0*.ipynb"))
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


def held_out_split(text: str, held_out: float = 0.1) -> tuple[str, str]:
    """``(训练文字, 考试文字)``：每一章的最后 ``held_out``（按字数）留作考题，其余拿来训练；各章之间空一行。

    考题来自每一章，而不是只有最后一章：这样考的是"同一本书里没读过的段落"，而不是换了一个话题。

    Examples
    --------
    >>> held_out_split("一二三四五六七八九十\\n\\n甲乙丙丁戊己庚辛壬癸")
    ('一二三四五六七八九\\n\\n甲乙丙丁戊己庚辛壬', '十\\n\\n癸')
    """
    share = check.positive_real(held_out, "held_out")
    if share >= 1:
        raise ValueError(f"held_out 是留作考题的比例，必须在 (0, 1) 之内，收到的是 {held_out}。")
    parts = chapters(text)
    if not parts:
        raise ValueError("text 里没有文字，没法切出训练和考试两部分。")
    cuts = [len(c) - max(1, round(share * len(c))) for c in parts]  # 每章至少留 1 个字作考题
    return "\n\n".join(c[:k] for c, k in zip(parts, cuts)), "\n\n".join(c[k:] for c, k in zip(parts, cuts))


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
