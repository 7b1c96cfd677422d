"""lessons/corpus.py：本书正文的语料。存档文件是整齐的中文正文；取正文的规则在一个小 notebook 上逐字核对；
训练 / 考试的切分、字表与编号来回换。"""

import json
import re
from collections import Counter
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
