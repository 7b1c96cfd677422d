"""lessons/corpus.py：本书正文的语料。存档文件是整齐的中文正文；取正文的规则在一个小 notebook 上逐字核对；
训练 / 考试的切分、字表与编号来回换。"""

import json
import re
import tempfile
from collections import Counter
from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.lessons import corpus

from helpers.errors import CHINESE, check_error

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
    ("markdown", "## 延伸阅读\n\n- Vaswani, A. (2017). *Attention Is All You Need*.\n\n### 更多\n\n书目的小标题也不要。\n"),
    ("markdown", "书目跨到下一个单元格也不要。\n\n## 下一节\n\n```python\n# 代码里的井号不是标题\n```\n正文回来了。\n"),
]
FIXTURE_TEXT = ("第 1 章 小例子：加粗和斜体\n读完这一章，你能够：\n说出是点积；\n看懂的输出 (softmax)。\n"
                "公式单独一段：\n引用的话。\n图片整个去掉。\n小测验的题目？\n答案在这里。\n另一题\n另一个答案。\n"
                "下一节\n正文回来了。")  # 表格和"延伸阅读"一节（到同级的下一个标题为止）都不要


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
    write_notebook(tmp_path / "09_next_token.ipynb", [("markdown", "第 9 章自己不进语料。")])
    out = corpus.write_snapshot(tmp_path, tmp_path / "out.txt")
    assert out.read_text(encoding="utf-8") == FIXTURE_TEXT + "\n"
    check_error(lambda: corpus.write_snapshot(tmp_path / "空的", tmp_path / "x.txt"), ValueError, "paths 是空的")


def test_the_gatherer_check_can_fail(tmp_path):
    first = write_notebook(tmp_path / "01_a.ipynb", FIXTURE_CELLS[:1] + [("markdown", "多了一段。")])
    assert corpus.gather_prose([first]) != FIXTURE_TEXT + "\n"


def test_spaces_left_by_removed_math_are_closed_but_not_around_numbers():
    assert corpus.clean_markdown("每个头 $d_k$ 维，第 4 章；$x$，再说") == ["每个头维，第 4 章；，再说"]


# ---------------------------------------------------------------- 切分、字表、编号

def test_snapshot_has_no_reading_lists_or_tables():
    assert "延伸阅读\n" not in TEXT + "\n" and "Advances in Neural" not in TEXT and "et al." not in TEXT


def test_held_out_split_takes_every_tenth_paragraph_of_every_chapter():
    train, test = corpus.held_out_split(TEXT)
    times = Counter(TEXT.split("\n"))
    for whole, a, b in zip(corpus.chapters(TEXT), corpus.chapters(train), corpus.chapters(test)):
        paragraphs = whole.split("\n")
        exam = [i for i, p in enumerate(paragraphs) if i % 10 == 9 and times[p] == 1]  # 下标 9、19、29 ……
        assert len(exam) >= len(paragraphs) // 10 - 2  # 重复的标题很少
        assert b.split("\n") == [paragraphs[i] for i in exam]
        assert a.split("\n") == [p for i, p in enumerate(paragraphs) if i not in exam]
    assert not set(train.split("\n")) & set(test.split("\n")) - {""}  # 没有一段文字同时在两边（"" 是章与章之间的空行）
    assert len(test.replace("\n", "")) + len(train.replace("\n", "")) == len(TEXT.replace("\n", ""))
    assert 0.06 < len(test) / len(TEXT) < 0.14


def test_seen_paragraphs_were_trained_on_and_sit_next_to_the_exam():
    train, test = corpus.held_out_split(TEXT)
    seen = corpus.trained_neighbours(TEXT)
    trained = set(train.split("\n"))
    assert all(p in trained for p in seen.split("\n") if p)
    assert abs(len(seen.split("\n")) - len(test.split("\n"))) <= 20  # 段数差不多


def test_exam_text_looks_like_the_training_text():
    """考题和训练文字的汉字、拉丁字母比例相差不到 3 个百分点（旧的切法：每章最后 10%，多是英文书目，
    拉丁字母 34% 对 6%，这个测试会失败）。"""
    train, test = (corpus.script_shares(t) for t in corpus.held_out_split(TEXT))
    assert abs(train["汉字"] - test["汉字"]) < 0.03 and abs(train["拉丁字母"] - test["拉丁字母"]) < 0.03
    assert train["汉字"] > 0.7


def test_the_script_mix_check_can_fail():
    """反证：把每章最后 10%（旧的切法）接上一段英文书目当考题，拉丁字母的比例就远远超出。"""
    reading_list = "Vaswani, A., Shazeer, N. (2017). Attention Is All You Need. Advances in Neural Information. " * 20
    mix = corpus.script_shares(corpus.held_out_split(TEXT)[1] + reading_list)
    assert abs(mix["拉丁字母"] - corpus.script_shares(TEXT)["拉丁字母"]) > 0.03


def test_script_shares_hand_worked():
    assert corpus.script_shares("注意力 attn！\n") == {"汉字": 3 / 8, "拉丁字母": 4 / 8, "其他": 1 / 8}


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
    ("held-out-every", lambda: corpus.held_out_split("一\n二\n三", 1), ValueError, r"every .*至少是 2"),
    ("held-out-type", lambda: corpus.held_out_split("一\n二\n三", 0.1), TypeError, "every"),
    ("held-out-empty", lambda: corpus.held_out_split("\n\n"), ValueError, "没有文字"),
    ("gather-string", lambda: corpus.gather_prose("notebooks"), TypeError, "paths 必须是 notebook 路径的列表"),
    ("gather-empty", lambda: corpus.gather_prose([]), ValueError, "paths 是空的"),
    ("clean-type", lambda: corpus.clean_markdown(None), TypeError, "source 必须是字符串"),
    ("neighbours-empty", lambda: corpus.trained_neighbours("\n\n"), ValueError, "没有文字"),
    ("shares-type", lambda: corpus.script_shares(None), TypeError, "text 必须是字符串"),
    ("shares-empty", lambda: corpus.script_shares(" \n"), ValueError, "没有可见的字"),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors(case):
    _, fn, exc, pattern = case
    check_error(fn, exc, pattern)


def test_unreadable_notebook_is_a_chinese_error(tmp_path):
    bad = tmp_path / "01_bad.ipynb"
    bad.write_text("这不是 JSON", encoding="utf-8")
    check_error(lambda: corpus.gather_prose([bad]), ValueError, "读不出 notebook")


# ---------------------------------------------------------------- notebook 文件不对：中文报错写明文件和单元格，从不抛原始异常

BAD_NOTEBOOKS = [  # (id, 文件内容, 报错必须匹配的正则，前面自动加上 "notebook <文件路径>")
    ("not-json", "这不是 JSON", r"：.*提示：paths 里应是 \.ipynb 文件"),
    ("not-utf8", b"\xff\xfe{}", r"：'utf-8' codec"),
    ("too-deep", "[" * 100_000 + "]" * 100_000, r"：maximum recursion depth"),
    ("top-list", "[1, 2]", r" 的格式不对：应是有 cells 列表的 JSON 对象（nbformat 4），顶层是 list"),
    ("top-null", "null", r" 的格式不对.*顶层是 NoneType"),
    ("no-cells", '{"metadata": {}}', r" 的格式不对.*没有 cells"),
    ("cells-dict", '{"cells": {}}', r" 的格式不对.*cells 是 dict"),
    ("cell-int", '{"cells": [{"cell_type": "markdown", "source": "好"}, 3]}', r" 的 cells\[1\] 应是有 cell_type.*是 int"),
    ("no-cell-type", '{"cells": [{"source": "好"}]}', r" 的 cells\[0\] 应是有 cell_type（字符串）的 JSON 对象，没有 cell_type"),
    ("cell-type-int", '{"cells": [{"cell_type": 1}]}', r" 的 cells\[0\] 应是有 cell_type.*cell_type 是 int 1"),
    ("no-source", '{"cells": [{"cell_type": "markdown"}]}', r" 的 cells\[0\]（Markdown）的 source.*没有 source"),
    ("source-int", '{"cells": [{"cell_type": "markdown", "source": 5}]}',
     r" 的 cells\[0\]（Markdown）的 source 应是字符串或字符串的列表，source 是 int 5"),
    ("source-list-of-int", '{"cells": [{"cell_type": "code", "source": 5}, {"cell_type": "markdown", "source": ["好", null]}]}',
     r" 的 cells\[1\]（Markdown）的 source.*source\[1\] 是 NoneType"),
]


@pytest.mark.parametrize("content, pattern", [pytest.param(c, p, id=i) for i, c, p in BAD_NOTEBOOKS])
def test_a_broken_notebook_is_a_chinese_error_naming_the_file_and_cell(tmp_path, content, pattern):
    """修复前：顶层是列表 → AttributeError，缺 source → KeyError，source 是数 → TypeError，不是 UTF-8 →
    UnicodeDecodeError，套得太深 → RecursionError，没有 cells → 悄悄当成空的 notebook。"""
    path = tmp_path / "01_bad.ipynb"
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    check_error(lambda: corpus.gather_prose([path]), ValueError, rf"notebook {re.escape(str(path))}" + pattern)


def test_cells_that_are_not_markdown_are_skipped_whatever_their_source():
    """跳过是文档写明的规则：代码、raw 和不认识的 cell_type 整个跳过，它们的 source 不看（坏了也不报错）。"""
    cells = [{"cell_type": "code", "source": 5}, {"cell_type": "raw"}, {"cell_type": "未来的类型", "source": None},
             {"cell_type": "markdown", "source": ["注意力", "就是加权平均"]}]
    assert _gather({"cells": cells}) == "注意力就是加权平均\n"


def _gather(notebook) -> str:
    """把 ``notebook``（任意 JSON 值）写进一个临时文件，交给 gather_prose。"""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "01_x.ipynb"
        path.write_text(json.dumps(notebook), encoding="utf-8")
        return corpus.gather_prose([path])


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                    max_leaves=8)
CELL = st.one_of(
    JSON,
    st.fixed_dictionaries({}, optional={"cell_type": st.sampled_from(["markdown", "code", "raw"]) | JSON,
                                        "source": st.text(max_size=20) | st.lists(st.text(max_size=8), max_size=3) | JSON}),
)
NOTEBOOK = st.one_of(JSON, st.fixed_dictionaries({}, optional={"cells": st.lists(CELL, max_size=5) | JSON,
                                                               "metadata": JSON}))


def first_bad_cell(cells: list):
    """独立写一遍规则：第一个格式不对的单元格的下标（None：都对）。"""
    for i, cell in enumerate(cells):
        if not (isinstance(cell, dict) and isinstance(cell.get("cell_type"), str)):
            return i
        source = cell.get("source")
        ok = isinstance(source, str) or isinstance(source, list) and all(isinstance(x, str) for x in source)
        if cell["cell_type"] == "markdown" and not ok:
            return i
    return None


@given(NOTEBOOK)
def test_any_json_is_read_or_refused_in_chinese(notebook):
    """任意的 JSON：要么读出正文（和只留下 Markdown 单元格、source 连成字符串的整齐 notebook 读出的一样），要么是
    中文的 ValueError，写明文件，是单元格的问题时写明第一个坏单元格的 cells[i]。从不抛别的异常。"""
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    bad = first_bad_cell(cells) if isinstance(cells, list) else "file"
    if bad is None:
        tidy = [{"cell_type": "markdown", "source": "".join(c["source"]) if isinstance(c["source"], list) else c["source"]}
                for c in cells if c["cell_type"] == "markdown"]
        assert _gather(notebook) == _gather({"cells": tidy})
        return
    error = check_error(lambda: _gather(notebook), ValueError, r"notebook .*01_x\.ipynb")
    if bad != "file":
        assert re.search(rf"的 cells\[{bad}\]", str(error)), (bad, str(error))


@given(st.binary(max_size=40))
def test_any_bytes_are_read_or_refused_in_chinese(content):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "01_x.ipynb"
        path.write_bytes(content)
        try:
            corpus.gather_prose([path])
        except ValueError as error:
            assert type(error) is ValueError and str(path) in str(error) and CHINESE.search(str(error))
