"""``book/_ext/print_edition.py`` 的各步加工，在手搭的小文档树上（不需要 TeX，``dev.py check`` 里也跑）。
真书上的效果由 ``test_pdf.py`` 读 PDF 核对。"""

from __future__ import annotations

import base64

import print_edition as pe
from docutils import nodes
from sphinx import addnodes

PNG = base64.b64encode(b"\x89PNG fake").decode()
PREVIEW = (f'<div class="tlx-preview" role="figure" aria-label="缩放"><img src="data:image/png;base64,{PNG}" '
           'alt="d_k = 1 时的权重" width="680" height="400" style="x"><p>静态预览：运行这个单元格后可以拖动滑块（d_k）。</p></div>')


def bundle(*children: tuple[str, nodes.Node]) -> nodes.container:
    """myst-nb 的一个输出：每种格式一个子容器。"""
    out = nodes.container(nb_element="mime_bundle")
    for mime, node in children:
        child = nodes.container(mime_type=mime)
        child += node
        out += child
    return out


def section(title: str, *children: nodes.Node) -> nodes.section:
    sec = nodes.section()
    sec += nodes.title(title, title)
    sec.extend(children)
    return sec


def dropdown(title: str, body: str) -> nodes.container:
    box = nodes.container(design_component="dropdown")
    box += nodes.rubric(title, title)
    box += nodes.paragraph(text=body)
    return box


def test_caption_names_every_slider_and_shortens_long_grids():
    assert pe.caption("可交互图「甲」：g ∈ {0.5, 1.0}；输入 ∈ {1, 2, 3, 4, 5, 6, 7, 8, 9}") == (
        "图：甲。印刷版是滑块在初始位置时的样子；在本书网站上，或在 JupyterLab 里运行这一章，可以拖动滑块："
        "g（0.5、1.0）；输入（1 到 9，共 9 档）。")
    assert pe.caption("图「静态图」") is None


def test_preview_png_is_read_back_from_the_stored_html():
    assert pe.preview_png(PREVIEW) == (b"\x89PNG fake", "d_k = 1 时的权重", 680)
    assert pe.preview_png("<table></table>") is None


def test_explorable_gets_its_first_frame_and_a_caption_and_other_outputs_do_not():
    figure = bundle(("text/html", nodes.raw("", PREVIEW, format="html")),
                    ("text/plain", nodes.literal_block("", "可交互图「缩放」：d_k ∈ {1, 4}")))
    table = bundle(("text/html", nodes.raw("", "<table></table>", format="html")), ("text/plain", nodes.literal_block("", "t")))
    static = bundle(("image/png", nodes.image(uri="x.png")), ("text/plain", nodes.literal_block("", "图「乙」")))
    tree = section("第 1 章 甲", figure, table, static)
    assert pe.add_first_frames(tree) == 1
    added = figure.children[-1]
    assert added["mime_type"] == "image/png"
    image = added.next_node(nodes.image)
    assert image["uri"] == f"data:image/png;base64,{PNG}" and image["width"] == "680px" and image["candidates"] == {"?": image["uri"]}
    assert added.children[-1].astext().startswith("图：缩放。") and "d_k（1、4）" in added.children[-1].astext()
    assert [c["mime_type"] for c in table.children] == ["text/html", "text/plain"]
    assert len(static.children) == 2


def test_quiz_and_exercise_answers_move_to_the_chapter_end_and_asides_stay():
    quiz = section("小测验", dropdown("1. 问题一？", "答案一。"), dropdown("2. 问题二？", "答案二。"))
    exercise = section("动手写", section("练习 1", dropdown("提示", "提示一。"), dropdown("参考答案", "def f(): ...")))
    aside = dropdown("深入一点（可跳过）", "推导。")
    chapter = section("第 1 章 甲", nodes.paragraph(text="正文。"), aside, exercise, quiz)
    start = addnodes.start_of_file(docname="notebooks/01_x")
    start += chapter
    tree = nodes.section()
    tree += start
    assert pe.collect_answers(tree) == 4
    text = chapter.astext()
    # 题目留在原处，答案只在章末
    assert text.index("1. 问题一？") < text.index("\n\n答案与提示\n\n") < text.index("答案一。")
    assert text.count("答案一。") == 1 and text.count("1. 问题一？") == 2
    assert "（印刷版：答案印在本章末尾的“答案与提示”里。）" in quiz.astext()
    # 练习：一句指路的话，提示和参考答案在章末
    assert "提示和参考答案印在本章末尾的“答案与提示”里（练习 1）。" in exercise.astext()
    assert "提示一。" not in exercise.astext() and "def f()" not in exercise.astext()
    answers = chapter.children[-1]
    assert answers[0].astext() == "答案与提示"
    assert [s[0].astext() for s in answers.findall(nodes.section) if s is not answers] == ["小测验", "动手写"]
    assert "练习 1　参考答案" in answers.astext()
    # 其余折叠块原地展开，标题加粗
    assert not list(tree.findall(pe.is_dropdown))
    assert text.index("深入一点（可跳过）") < text.index("推导。") < text.index("提示和参考答案")


def test_side_by_side_equations_are_stacked_and_others_left_alone():
    wide = nodes.math_block("", r"\sin x = a,\qquad \cos x = \frac{1}{\qquad b}")
    aligned = nodes.math_block("", r"a &= b \qquad c")
    plain = nodes.math_block("", r"e^{i\pi} + 1 = 0")
    tree = section("第 1 章", wide, aligned, plain)
    assert pe.stack_equations(tree) == 1
    assert [m.astext() for m in tree.findall(nodes.math_block)] == [
        "&\\sin x = a, \\\\\n&\\cos x = \\frac{1}{\\qquad b}", r"a &= b \qquad c", r"e^{i\pi} + 1 = 0"]


def test_ansi_escapes_are_stripped_from_outputs():
    block = nodes.literal_block("", "\x1b[1;31m错误\x1b[0m 在这里")
    tree = section("第 1 章", block)
    assert pe.strip_ansi(tree) == 1
    assert tree.next_node(nodes.literal_block).astext() == "错误 在这里"


def test_preface_becomes_one_chapter_and_parts_get_a_title_page():
    first = addnodes.start_of_file(docname="notebooks/01_x")
    first += section("第 1 章 甲")
    second = addnodes.start_of_file(docname="book/glossary")
    second += section("术语表")
    root = section("前言", nodes.paragraph(text="欢迎。"), section("怎么读"), nodes.compound("", first, second))
    doc = nodes.document(None, None)
    doc += root
    assert pe.preface_chapter(doc)
    assert root[1][0].astext() == "前言" and [c.astext()[:2] for c in root[1].children[1:]] == ["欢迎", "怎么"]
    assert pe.part_pages(doc, [("第一部分：注意力机制", "notebooks/01_x"), ("附录", "book/glossary")]) == 2
    raws = [r.astext() for r in doc.findall(nodes.raw)]
    assert raws == ["\\part*{第一部分：注意力机制}\\addcontentsline{toc}{part}{第一部分：注意力机制}\n",
                    "\\part*{附录}\\addcontentsline{toc}{part}{附录}\n"]
    lone = nodes.document(None, None)
    lone += section("前言", nodes.paragraph(text="只有前言。"))
    assert not pe.preface_chapter(lone)


def table(rows: list[tuple[str, ...]], spans: bool = False) -> nodes.table:
    """docutils 的一张表：每行一个 row，每格一个 entry（``spans``：最后一行少一格，像合并了单元格）。"""
    tab, group = nodes.table(), nodes.tgroup(cols=len(rows[0]))
    tab += group
    group.extend(nodes.colspec(colwidth=1) for _ in rows[0])
    body = nodes.tbody()
    group += body
    for k, cells in enumerate(rows):
        row = nodes.row()
        for text in cells[:-1] if spans and k == len(rows) - 1 else cells:
            entry = nodes.entry()
            entry += nodes.paragraph(text=text)
            row += entry
        body += row
    return tab


def test_long_tables_break_across_pages_with_widths_from_their_content():
    long_rows = [(f"第 {n} 章", "一个很长的章名" * 2, "读者在这一章里亲手算、亲手拨的东西" * 3) for n in range(1, 14)]
    short_rows = long_rows[:pe.LONG_TABLE_ROWS]
    tree = section("前言", table(long_rows), table(short_rows), table(long_rows, spans=True))
    assert pe.long_tables(tree) == 1
    changed, short, spanned = tree.findall(nodes.table)
    assert changed["classes"] == ["longtable", "colwidths-given"]
    widths = [c["colwidth"] for c in changed.findall(nodes.colspec)]
    assert widths[0] == pe._units("第 13 章") + 2          # 章号一列：最长的一格加一点，不折行
    assert widths[1] < widths[2]                             # 内容多的列更宽
    assert sum(widths) <= pe.LINE_UNITS + 12                 # 差不多一行宽
    assert short["classes"] == [] and spanned["classes"] == []   # 十行以内、有合并单元格的表不动
    assert [c["colwidth"] for c in short.findall(nodes.colspec)] == [1, 1, 1]
