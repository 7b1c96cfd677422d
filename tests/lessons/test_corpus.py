"""lessons/corpus.py：本书正文的语料。存档文件是整齐的中文正文；取正文的规则在一个小 notebook 上逐字核对；
训练 / 考试的切分、字表与编号来回换。"""

import json
import re
from importlib.resources import files

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.lessons import corpus

from helpers.errors import check_error

TEXT = corpus.load_corpus()


# ---------------------------------------------------------------- 存档

def test_snapshot_is_shipped_with_the_package():
    shipped = files("transformer_lab").joinpath("data/book_corpus.txt")
    assert shipped.is_file() and shipped.read_text(encoding="utf-8") == TEXT
    assert corpus.SNAPSHOT.name == "book_corpus.txt"


def test_snapshot_is_mostly_han_prose_of_eight_chapters():
    assert 50_000 <= len(TEXT) <= 200_000
    visible = [c for c in TEXT if not c.isspace()]
    assert len(corpus.HAN.findall(TEXT)) / len(visible) > 0.65  # 大部分是汉字（其余是标点、数字、英文术语）
    parts = corpus.chapters(TEXT)
    assert [re.match(r"第 (\d+) 章", p).group(1) for p in parts] == [str(i) for i in range(1, 9)]
    assert all(len(p) > 3000 for p in parts)
    assert TEXT.endswith("\n") and not TEXT.endswith("\n\n") and "\n\n\n" not in TEXT


def test_snapshot_has_no_code_math_links_or_markdown_left():
    for residue in ("$", "`", "](", "**", ":::", "<details", "<summary", "</", "{dropdown}", "\t"):
        assert residue not in TEXT, residue
    for line in TEXT.split("\n"):
        assert line == line.strip() and not re.match(r"(#|>|- |\* |\d+\. |\|)", line), line


def test_the_snapshot_checks_can_fail():
    dirty = TEXT + "\n看 `tl.softmax` 和 $x$ 的 [链接](a.md)"
    assert any(r in dirty for r in ("$", "`", "]("))


# ---------------------------------------------------------------- 取正文的规则：一个小 notebook 逐字核对

FIXTURE_CELLS = [
    ("markdown", "# 第 1 章 小例子：**加粗**和*斜体*\n\n读完这一章，你能够：\n\n- 说出 $q\\cdot k$ 是"
                 "[点积](../book/glossary.md#点积)；\n1. 看懂 `tl.softmax` 的输出 (softmax)。\n"),
    ("code", "import numpy as np\nprint('代码单元格不要')\n"),
    ("markdown", "公式单独一段：\n\n$$\nh_t = \\tanh(x_t W)\n$$\n\n> 引用的话。\n\n![图](a.png)图片整个去掉。\n"),
    ("markdown", ":::{dropdown} 1. 小测验的题目？\n答案在这里。\n:::\n\n<details>\n<summary>2. 另一题</summary>\n\n"
                 "另一个答案。\n\n</details>\n\n| 头数 | 乘加 |\n|---|---|\n| 8 | 相同 |\n\n```python\nx = 1\n```\n"),
]
FIXTURE_TEXT = ("第 1 章 小例子：加粗和斜体\n读完这一章，你能够：\n说出是点积；\n看懂的输出 (softmax)。\n"
                "公式单独一段：\n引用的话。\n图片整个去掉。\n小测验的题目？\n答案在这里。\n另一题\n另一个答案。\n"
                "头数 乘加\n8 相同")


def write_notebook(path, cells):
    nb = {"cells": [{"cell_type": kind, "metadata": {}, "source": src.splitlines(keepends=True),
                     **({"outputs": [], "execution_count": None} if kind == "code" else {})} for kind, src in cells],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    return path


def test_gatherer_reproduces_the_expected_prose_from_a_small_notebook(tmp_path):
    first = write_notebook(tmp_path / "01_a.ipynb", FIXTURE_CELLS)
    second = write_notebook(tmp_path / "02_b.ipynb", [("markdown", "# 第 2 章 第二章\n\n只有一段。")])
    assert corpus.gather_prose([second, first]) == FIXTURE_TEXT + "\n\n第 2 章 第二章\n只有一段。\n"  # 按文件名排序
    assert corpus.gather_prose([first]) == corpus.gather_prose([str(first)]) == FIXTURE_TEXT + "\n"  # 同样的输入，同样的文字


def test_write_snapshot_takes_the_chapter_notebooks_of_a_folder(tmp_path):
    write_notebook(tmp_path / "01_a.ipynb", FIXTURE_CELLS)
    write_notebook(tmp_path / "index.ipynb", [("markdown", "不是章节，不要。")])
    out = corpus.write_snapshot(tmp_path, tmp_path / "out.txt")
    assert out.read_text(encoding="utf-8") == FIXTURE_TEXT + "\n"
    check_error(lambda: corpus.write_snapshot(tmp_path / "空的", tmp_path / "x.txt"), ValueError, "paths 是空的")


def test_the_gatherer_check_can_fail(tmp_path):
    first = write_notebook(tmp_path / "01_a.ipynb", FIXTURE_CELLS[:1] + [("markdown", "多了一段。")])
    assert corpus.gather_prose([first]) != FIXTURE_TEXT + "\n"


def test_spaces_left_by_removed_math_are_closed_but_not_around_numbers():
    assert corpus.clean_markdown("每个头 $d_k$ 维，第 4 章；$x$，再说") == ["每个头维，第 4 章；，再说"]


# ---------------------------------------------------------------- 切分、字表、编号

def test_held_out_split_takes_the_last_tenth_of_every_chapter():
    train, test = corpus.held_out_split(TEXT)
    for whole, a, b in zip(corpus.chapters(TEXT), train.split("\n\n"), test.split("\n\n")):
        assert a + b == whole
        assert abs(len(b) / len(whole) - 0.1) < 0.001


@given(st.text(alphabet="注意力的权重。\n ab", min_size=1, max_size=40))
def test_encode_then_decode_is_the_identity(text):
    chars = corpus.vocabulary(text)
    ids = corpus.encode(text, chars)
    assert ids.dtype == np.int64 and ids.max() < len(chars)
    assert corpus.decode(ids, chars) == text
    assert list(chars) == sorted(set(text))


def test_vocabulary_of_the_book():
    chars = corpus.vocabulary(TEXT)
    assert 900 < len(chars) < 1500 and "\n" in chars and "的" in chars


ERROR_CASES = [
    ("unknown-char", lambda: corpus.encode("注意力龘", "力意注"), ValueError, "字表中没有的字.*龘"),
    ("empty-text", lambda: corpus.encode("", "力"), ValueError, "不能是空字符串"),
    ("encode-type", lambda: corpus.encode(["注"], "注"), TypeError, "text 和 chars 都必须是字符串"),
    ("decode-range", lambda: corpus.decode(np.array([3]), "力意注"), ValueError, r"ids 越界.*\[0, 2\]"),
    ("decode-float", lambda: corpus.decode(np.array([1.0]), "力意注"), TypeError, "ids 是词的编号"),
    ("held-out-one", lambda: corpus.held_out_split("一二三", 1.0), ValueError, r"held_out .*\(0, 1\)"),
    ("held-out-empty", lambda: corpus.held_out_split("\n\n"), ValueError, "没有文字"),
    ("gather-string", lambda: corpus.gather_prose("notebooks"), TypeError, "paths 必须是 notebook 路径的列表"),
    ("gather-empty", lambda: corpus.gather_prose([]), ValueError, "paths 是空的"),
    ("clean-type", lambda: corpus.clean_markdown(None), TypeError, "source 必须是字符串"),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors(case):
    _, fn, exc, pattern = case
    check_error(fn, exc, pattern)


def test_unreadable_notebook_is_a_chinese_error(tmp_path):
    bad = tmp_path / "01_bad.ipynb"
    bad.write_text("这不是 JSON", encoding="utf-8")
    check_error(lambda: corpus.gather_prose([bad]), ValueError, "读不出 notebook")
