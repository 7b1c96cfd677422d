"""``tools/pdf_checks.py`` 的每个检查都会失败：喂给它故意弄坏的日志、.tex、PDF 文字和工具输出。
不需要 TeX，``python dev.py check`` 里也跑。"""

from __future__ import annotations

import json
from pathlib import Path

from tools import pdf, pdf_checks

LOG_OK = """This is XeTeX, Version 3.141592653-2.6-0.999994
Overfull \\hbox (3.53485pt too wide) in paragraph at lines 12--12
Output written on transformer-lab.xdv (314 pages, 2932836 bytes).
"""
TEX = "\n".join(["\\begin{document}", "\\chapter{前言}", "前言的字", "\\chapter{第 1 章 甲}", "甲的字", "甲的公式",
                 "\\chapter{第 2 章 乙 \\& 丙}", "乙的字", "\\chapter{术语表}", "术语"])
HEADINGS = ["第 1 章 甲", "第 2 章 乙 & 丙"]


def test_missing_character_is_reported():
    assert pdf_checks.missing_characters(LOG_OK) == []
    broken = LOG_OK + "Missing character: There is no 词 (U+8BCD) in font DejaVu Serif/OT:script=latn;language=dflt;!\n" * 2
    assert pdf_checks.missing_characters(broken) == ["缺字 “词 (U+8BCD)”（字体 DejaVu Serif） ×2"]


def test_chapter_ranges_follow_the_tex():
    assert pdf_checks.chapter_ranges(TEX, HEADINGS) == {"第 1 章 甲": (4, 6), "第 2 章 乙 & 丙": (7, 8)}
    assert pdf_checks.chapter_ranges(TEX.replace("\\chapter{第 2 章", "\\section{第 2 章"), HEADINGS) == {
        "第 1 章 甲": (4, 8)}


def test_overfull_line_in_a_chapter_fails_but_not_in_front_matter_or_under_the_bound():
    wide = "Overfull \\hbox (59.71692pt too wide) detected at line {}\n"
    assert pdf_checks.overfull_lines(LOG_OK, TEX, HEADINGS) == []
    assert pdf_checks.overfull_lines(wide.format(3), TEX, HEADINGS) == []         # 前言里：不归各章管
    assert pdf_checks.overfull_lines(wide.format(10), TEX, HEADINGS) == []        # 术语表
    assert pdf_checks.overfull_lines("Overfull \\hbox (9.9pt too wide) in paragraph at lines 5--5\n", TEX, HEADINGS) == []
    found = pdf_checks.overfull_lines(wide.format(6), TEX, HEADINGS)
    assert len(found) == 1 and found[0].startswith("第 1 章 甲：.tex 第 6 行伸出版心 59.7 pt") and "甲的公式" in found[0]
    found = pdf_checks.overfull_lines("Overfull \\hbox (10.5pt too wide) in paragraph at lines 8--9\n", TEX, HEADINGS)
    assert len(found) == 1 and found[0].startswith("第 2 章 乙 & 丙")


def test_in_order_finds_titles_and_sentences_across_line_breaks():
    text = "目录\n第 1 章 甲\n第 2 章 乙\n\f第 1 章 甲\n甲的第一句话\n在这里断\n开了。\n第 2 章 乙\n乙的句子。"
    groups = [("第 1 章 甲", ["甲的第一句话在这里断开了。"]), ("第 2 章 乙", ["乙的句子。"])]
    assert pdf_checks.in_order(text, groups) == []


def test_in_order_fails_on_a_missing_chapter_and_on_a_wrong_order():
    text = "第 1 章 甲\n甲的句子。\n第 2 章 乙\n乙的句子。"
    missing = pdf_checks.in_order(text.replace("第 2 章 乙", "第 2 章 丁"), [("第 1 章 甲", ["甲的句子。"]),
                                                                        ("第 2 章 乙", ["乙的句子。"])])
    assert missing == ["《第 2 章 乙》：PDF 里没有：第 2 章 乙"]
    swapped = pdf_checks.in_order(text, [("第 2 章 乙", ["乙的句子。"]), ("第 1 章 甲", ["甲的句子。"])])
    assert swapped == ["《第 1 章 甲》：顺序不对（出现在前面的内容之前）：第 1 章 甲",
                       "《第 1 章 甲》：顺序不对（出现在前面的内容之前）：甲的句子。"]
    # 答案印在题目下面（而不是章末）：章末的“答案与提示”之后找不到答案
    quiz = "第 1 章 甲\n题目一\n答案一是这样的。\n答案与提示\n"
    assert pdf_checks.in_order(quiz, [("第 1 章 甲", ["答案与提示", "答案一是这样的。"])]) == [
        "《第 1 章 甲》：顺序不对（出现在前面的内容之前）：答案一是这样的。"]


def test_sample_sentences_skip_dropdowns_headings_and_lists():
    cells = ["# 第 1 章 甲\n\n这是第一句完整的中文句子，没有公式。后面还有第二句完整的中文句子，也没有代码。",
             ":::{dropdown} 1. 题目\n折叠块里的答案不算，它会挪到章末去。\n:::",
             "- 列表里的句子也不算，它们前面有符号。\n\n有 $x$ 公式的句子不算，因为它排版后会变样。",
             "最后一段里是第三句完整的中文句子，用来取样。"]
    assert pdf_checks.candidate_sentences(cells) == [
        "这是第一句完整的中文句子，没有公式。", "后面还有第二句完整的中文句子，也没有代码。",
        "最后一段里是第三句完整的中文句子，用来取样。"]
    assert pdf_checks.spread(pdf_checks.candidate_sentences(cells), k=2) == [
        "这是第一句完整的中文句子，没有公式。", "最后一段里是第三句完整的中文句子，用来取样。"]
    other = ["这是第一句完整的中文句子，没有公式。两章都有的句子不拿来比对。"]
    assert pdf_checks.chapter_samples([cells, other], k=3) == [
        ["后面还有第二句完整的中文句子，也没有代码。", "最后一段里是第三句完整的中文句子，用来取样。"],
        ["两章都有的句子不拿来比对。"]]


def test_unembedded_font_is_reported():
    header = ("name                                 type              encoding         emb sub uni object ID\n"
              "------------------------------------ ----------------- ---------------- --- --- --- ---------\n")
    ok = "GBOSID+NotoSerifCJKjp-Regular-Identity-H CID Type 0C       Identity-H       yes yes yes      4  0\n"
    bad = "DejaVuSerif                          CID TrueType      Identity-H       no  no  yes      8  0\n"
    assert pdf_checks.unembedded_fonts(header + ok) == []
    assert pdf_checks.unembedded_fonts(header + ok + bad) == ["字体没有嵌入：DejaVuSerif"]


def test_image_count_skips_masks():
    listing = ("page   num  type   width height color comp bpc  enc interp  object ID x-ppi y-ppi size ratio\n"
               "--------------------------------------------------------------------------------------------\n"
               "   5     0 image    1360   800  index   1   8  image  no        12  0   200   200 28.1K 2.6%\n"
               "   5     1 smask    1360   800  gray    1   8  image  no        12  0   200   200  1.1K 0.1%\n"
               "   9     2 image     680   400  rgb     3   8  image  no        30  0   100   100 10.0K 1.2%\n")
    assert pdf_checks.image_count(listing) == 2
    assert pdf_checks.image_count(listing.splitlines(keepends=True)[0] + listing.splitlines(keepends=True)[1]) == 0


def test_figure_count_reads_previews_and_pngs(tmp_path):
    nb = {"cells": [{"cell_type": "code", "outputs": [
        {"data": {"text/html": ['<div class="tlx-preview" role="figure">…</div>'], "text/plain": ["可交互图「甲」"]}},
        {"data": {"image/png": "iVBOR", "text/plain": ["图「乙」"]}},
        {"data": {"text/html": ["<table></table>"]}}, {"output_type": "stream", "text": "x"}]},
        {"cell_type": "markdown", "source": ["# 标题"]}]}
    path = tmp_path / "x.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    assert pdf_checks.figure_count(path) == 2
    assert pdf_checks.notebook_markdown(path) == ["# 标题"]


def test_page_range_grows_with_the_chapters():
    assert pdf_checks.page_range(11) == (220, 480)
    low, high = pdf_checks.page_range(13)
    assert low > 220 and high > 480


def test_ci_installs_what_the_build_and_the_tests_need():
    """.ci/run 装的 Debian 包正是 ``tools.pdf.APT_PACKAGES``（没有 TeX 时给读者的安装提示也是这一行）。"""
    run = (Path(__file__).resolve().parents[2] / ".ci" / "run").read_text(encoding="utf-8")
    line = next(x for x in run.splitlines() if x.startswith("TEX_PACKAGES="))
    assert line.split("=", 1)[1].strip('"').split() == list(pdf.APT_PACKAGES)
    assert " ".join(pdf.APT_PACKAGES) in pdf.INSTALL_HINT
    assert pdf.no_tex_message(["命令 xelatex"]).startswith("不能生成 PDF：缺少命令 xelatex。")
