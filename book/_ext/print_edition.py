"""PDF（印刷版）专用的加工：只在 LaTeX 构建里起作用（``tools/pdf.py`` 的那一次构建），网站的 HTML 构建里
也加载它，但什么也不做（post-transform 只登记给 latex 格式）。

LaTeX 构建把全书合成一棵文档树（每一章包在一个 ``start_of_file`` 节点里），在上面做一遍 post-transform。
这里在 myst-nb 挑输出格式 (``SelectMimeType``，优先级 4) 之前做这几件事：

1. **可交互图印成初始的一帧**：存档的 notebook 里，有滑块的图只有 ``text/html`` 的静态预览（一张 data URI 的 PNG
   加一句提示）和 ``text/plain`` 的说明（“可交互图「图名」：滑块 ∈ {…}”）。LaTeX 只认图片，这里从预览里取出
   那张 PNG，作为 ``image/png`` 加进同一个输出，下面跟一行图注：图名、每个滑块能取哪些值、去哪里拖
   （本书网站或 JupyterLab）。没有滑块的图，存档里本来就是 ``image/png``，照印。
2. **答案挪到章末**：“小测验”一节里的每道题（``:::{dropdown} 题目`` 折叠块）只留题目，答案收进本章末尾新加的
   “答案与提示”一节；“动手写”里每道练习的“提示”和“参考答案”也挪过去，原处留一句指路的话。别的折叠块
   （“深入一点（可跳过）”“旁注”……）原地印出：加粗的标题，下面是内容。
3. **代码输出去掉 ANSI 转义**（终端颜色码）：xelatex 会把 ESC 当成缺字。
4. **并排的公式上下叠放**（``stack_equations``）：网页上一行放得下的两个公式，在 A4 的版心里会伸出页边。
5. **书的骨架**：前言自成一章“前言”（``preface_chapter``）；``_toc.yml`` 的每一部分（第一部分……附录）前面有
   一页部分标题（``part_pages``），也进目录。
6. **长表跨页**（``long_tables``）：十行以上的表印成 longtable，列宽按内容给。

Markdown 页面里的图（``page_figures.py``）、自测页（``self_test_page.py``）和 PDF 下载链接（``pdf_download.py``）
各自在自己的扩展里按构建器分两种写法。
"""

from __future__ import annotations

import base64
import html
import re

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
PREVIEW_IMG = re.compile(r'<div class="tlx-preview"[^>]*>\s*<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"'
                         r'[^>]*?alt="([^"]*)"[^>]*?width="(\d+)"', re.S)
DESCRIBE = re.compile(r"^可交互图「(?P<title>.*)」：(?P<sliders>.*)$", re.S)
SLIDER = re.compile(r"^(?P<name>.*?) ∈ \{(?P<values>.*)\}$", re.S)
QUIZ_SECTION = "小测验"
EXERCISE_SECTION = "动手写"
ANSWERS_TITLE = "答案与提示"
WHERE_TO_DRAG = "在本书网站上，或在 JupyterLab 里运行这一章，可以拖动滑块"


def preview_png(html_text: str) -> tuple[bytes, str, int] | None:
    """静态预览（``widgets/static.py`` 的 ``tlx-preview``）里的 PNG 字节、替代文字和显示宽度 (px)；不是预览时 None。"""
    m = PREVIEW_IMG.search(html_text)
    if m is None:
        return None
    return base64.b64decode(m.group(1)), html.unescape(m.group(2)), int(m.group(3))


def caption(describe: str) -> str | None:
    """可交互图的图注，由 ``Explorable.describe()`` 的那行说明改写：图名、每个滑块能取的值、去哪里拖。
    不是有滑块的图的说明时 None。

    >>> caption("可交互图「缩放的效果」：d_k ∈ {1, 4, 16, 64}")
    '图：缩放的效果。印刷版是滑块在初始位置时的样子；在本书网站上，或在 JupyterLab 里运行这一章，可以拖动滑块：d_k（1、4、16、64）。'
    """
    m = DESCRIBE.match(describe.strip())
    if m is None:
        return None
    parts = []
    for piece in m.group("sliders").split("；"):
        s = SLIDER.match(piece.strip())
        if s is None:
            parts.append(piece.strip())
            continue
        values = [v.strip() for v in s.group("values").split(", ")]
        shown = "、".join(values) if len(values) <= 8 else f"{values[0]} 到 {values[-1]}，共 {len(values)} 档"
        parts.append(f"{s.group('name')}（{shown}）")
    return f"图：{m.group('title')}。印刷版是滑块在初始位置时的样子；{WHERE_TO_DRAG}：{'；'.join(parts)}。"


def _top_level_qquad(latex: str) -> list[int]:
    """``latex`` 里不在任何花括号内的 ``\\qquad`` 的位置。"""
    depth, found = 0, []
    for i, ch in enumerate(latex):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth == 0 and latex.startswith("\\qquad", i):
            found.append(i)
    return found


def stack_equations(tree: nodes.Node) -> int:
    """并排写在一行里的几个公式（用 ``\\qquad`` 隔开，没有换行和对齐符）在纸上排不下：A4 的版心只有网页的一半宽。
    这里把它们改成上下叠放、左对齐的几行（Sphinx 把有 ``\\\\`` 的公式写进 ``split`` 环境），返回改了几个。"""
    changed = 0
    for block in list(tree.findall(nodes.math_block)):
        latex = block.astext()
        cuts = _top_level_qquad(latex)
        if not cuts or "\\\\" in latex or "&" in latex:
            continue
        pieces, last = [], 0
        for cut in cuts:
            pieces.append(latex[last:cut].strip())
            last = cut + len("\\qquad")
        pieces.append(latex[last:].strip())
        stacked = " \\\\\n".join("&" + p for p in pieces if p)
        block.replace_self(nodes.math_block(stacked, stacked, **{k: v for k, v in block.attributes.items()
                                                               if k not in ("ids", "names")}))
        changed += 1
    return changed


def _mime(bundle: nodes.Element, mime_type: str) -> nodes.Element | None:
    return next((child for child in bundle.children if child.get("mime_type") == mime_type), None)


def add_first_frames(tree: nodes.Node) -> int:
    """给每个只有静态预览的可交互图输出加上 ``image/png``（预览里的那一帧）和图注，返回加了几张。"""
    added = 0
    for bundle in list(tree.findall(lambda n: isinstance(n, nodes.container) and n.get("nb_element") == "mime_bundle")):
        html_child, text_child = _mime(bundle, "text/html"), _mime(bundle, "text/plain")
        if html_child is None or _mime(bundle, "image/png") is not None:
            continue
        found = preview_png(html_child.astext())
        if found is None:
            continue
        png, alt, width = found
        uri = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
        image = nodes.image(uri=uri, alt=alt, width=f"{width}px", candidates={"?": uri})
        child = nodes.container(mime_type="image/png", classes=["print-figure"])
        child += image
        text = caption(text_child.astext()) if text_child is not None else None
        if text:
            child += nodes.paragraph("", "", nodes.emphasis(text, text))
        bundle += child
        added += 1
    return added


def strip_ansi(tree: nodes.Node) -> int:
    """代码输出里的 ANSI 转义全部去掉，返回改了几块。"""
    changed = 0
    for block in list(tree.findall(nodes.literal_block)):
        text = block.astext()
        if "\x1b" in text:
            clean = ANSI.sub("", text).replace("\x1b", "")
            block.replace_self(nodes.literal_block(clean, clean, **{k: v for k, v in block.attributes.items()
                                                                     if k not in ("ids", "names")}))
            changed += 1
    return changed


def is_dropdown(node: nodes.Node) -> bool:
    return isinstance(node, nodes.container) and node.get("design_component") == "dropdown"


def _section_titles(node: nodes.Node) -> list[str]:
    """从里到外，``node`` 所在的每一节的标题。"""
    titles = []
    parent = node.parent
    while parent is not None:
        if isinstance(parent, nodes.section) and parent.children and isinstance(parent[0], nodes.title):
            titles.append(parent[0].astext().strip())
        parent = parent.parent
    return titles


def _split(dropdown: nodes.Element) -> tuple[str, list[nodes.Node]]:
    """折叠块的标题（文字）和内容节点。"""
    if dropdown.children and isinstance(dropdown[0], nodes.rubric):
        return dropdown[0].astext().strip(), [c.deepcopy() for c in dropdown.children[1:]]
    return "", [c.deepcopy() for c in dropdown.children]


def _strong_para(text: str, *extra: nodes.Node) -> nodes.paragraph:
    return nodes.paragraph("", "", nodes.strong(text, text), *extra)


def _chapters(tree: nodes.Node) -> list[nodes.section]:
    """合成的文档树里每一篇（``start_of_file``）的顶层节；单独一篇时就是它自己的顶层节。"""
    files = list(tree.findall(addnodes.start_of_file))
    roots = files or [tree]
    out = []
    for root in roots:
        top = next((c for c in root.children if isinstance(c, nodes.section)), None)
        if top is not None:
            out.append(top)
    return out


def collect_answers(tree: nodes.Node) -> int:
    """小测验和动手写的折叠块挪到每一章末尾的“答案与提示”；别的折叠块原地展开。返回挪走了几块。"""
    moved = 0
    for chapter in _chapters(tree):
        quiz, exercise, pointed = [], [], set()
        for dropdown in list(chapter.findall(is_dropdown)):
            if any(is_dropdown(a) for a in _ancestors(dropdown)):
                continue  # 折叠块里的折叠块跟着外面那一块走
            titles = _section_titles(dropdown)
            title, body = _split(dropdown)
            if QUIZ_SECTION in titles:
                if not quiz:  # 第一道题前说一句答案在哪
                    note = f"（印刷版：答案印在本章末尾的“{ANSWERS_TITLE}”里。）"
                    dropdown.parent.insert(dropdown.parent.index(dropdown), nodes.paragraph("", "", nodes.emphasis(note, note)))
                quiz.append((title, body))
                dropdown.replace_self(_strong_para(title))
                moved += 1
                continue
            if EXERCISE_SECTION in titles:  # 一道练习的第一个折叠块换成指路的话，其余的删掉
                exercise_name = titles[0] if titles[0] != EXERCISE_SECTION else ""
                exercise.append((exercise_name, title, body))
                if exercise_name in pointed:
                    dropdown.parent.remove(dropdown)
                else:
                    pointed.add(exercise_name)
                    where = f"（{exercise_name}）" if exercise_name else ""
                    text = f"提示和参考答案印在本章末尾的“{ANSWERS_TITLE}”里{where}。"
                    dropdown.replace_self(nodes.paragraph("", "", nodes.emphasis(text, text)))
                moved += 1
        if quiz or exercise:
            chapter += _answers_section(quiz, exercise)
    for dropdown in list(tree.findall(is_dropdown)):  # 其余的（深入一点、旁注……）原地展开
        title, body = _split(dropdown)
        box = nodes.container(classes=["print-aside"])
        if title:
            box += _strong_para(title)
        box.extend(body)
        dropdown.replace_self(box)
    return moved


def preface_chapter(tree: nodes.Node) -> bool:
    """合成的全书里，前言的内容自成一章“前言”（不编号）。

    Sphinx 的 LaTeX 写出器把根文档（前言）的标题当成书名、不印出来，前言的各小节（这本书写给谁、怎么读……）
    于是和各章平级，目录里成了一章一章。这里把根文档里各章之前的内容包进一个新的“前言”节，它成为第一章，
    原来的小节成为它的节。不是合成的全书（没有 ``start_of_file``）时什么也不做，返回 False。"""
    root = next((c for c in tree.children if isinstance(c, nodes.section)), None)
    if root is None or not root.children or not isinstance(root[0], nodes.title) \
            or root.next_node(addnodes.start_of_file) is None:
        return False
    title = root[0].astext()
    preface = nodes.section(ids=[], names=[])
    preface += nodes.title(title, title)
    for child in list(root.children[1:]):
        if isinstance(child, addnodes.start_of_file) or child.next_node(addnodes.start_of_file) is not None:
            break
        root.remove(child)
        preface += child
    root.insert(1, preface)
    return True


def _ancestors(node: nodes.Node):
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def _answers_section(quiz, exercise) -> nodes.section:
    section = nodes.section(ids=[], names=[])
    section += nodes.title(ANSWERS_TITLE, ANSWERS_TITLE)
    if quiz:
        sub = nodes.section(ids=[], names=[])
        sub += nodes.title(QUIZ_SECTION, QUIZ_SECTION)
        for title, body in quiz:
            sub += _strong_para(title)
            sub.extend(body)
        section += sub
    if exercise:
        sub = nodes.section(ids=[], names=[])
        sub += nodes.title(EXERCISE_SECTION, EXERCISE_SECTION)
        for name, title, body in exercise:
            sub += _strong_para(f"{name}　{title}" if name else title)
            sub.extend(body)
        section += sub
    return section


def part_pages(tree: nodes.Node, parts: list[tuple[str, str]]) -> int:
    """``_toc.yml`` 的每一部分（``parts``：[(标题, 它的第一篇的文档名), …]）在合成的全书里前面加一页部分标题
    （``\\part*``，也进目录），返回加了几个。"""
    firsts = {docname: caption for caption, docname in parts}
    added = 0
    for start in list(tree.findall(addnodes.start_of_file)):
        caption = firsts.get(start.get("docname"))
        if caption:
            tex = f"\\part*{{{caption}}}\\addcontentsline{{toc}}{{part}}{{{caption}}}\n"
            start.parent.insert(start.parent.index(start), nodes.raw("", tex, format="latex"))
            added += 1
    return added


LONG_TABLE_ROWS = 10  # 多于这么多行的表可以跨页（longtable），列宽按内容定
LINE_UNITS = 84       # 版心一行大约能放多少“半角字宽”（一个汉字算 2）
NARROW_UNITS = 16     # 每格都不超过这么宽的列（“第 12 章”“$d_k$”）给足宽度、不折行


def _units(text: str) -> int:
    return sum(2 if ord(c) >= 0x2E80 else 1 for c in text)


def long_tables(tree: nodes.Node) -> int:
    """多于 ``LONG_TABLE_ROWS`` 行的表（前言的章节地图、记号表、NumPy 速成的表）印成可以跨页的 longtable，
    列宽按内容给（``colwidths-given``）：每格都很短的列（章号、记号）给足宽度不折行，其余的按平均和最长一格的长度分。
    Sphinx 默认的 tabulary 不会跨页，长表会压到页脚上；它还按内容比例分列宽，“第 1 章”一列窄到一格一个字。
    有合并单元格的表不动。返回改了几张表。"""
    changed = 0
    for table in list(tree.findall(nodes.table)):
        tgroup = table.next_node(nodes.tgroup)
        if tgroup is None:
            continue
        colspecs = [c for c in tgroup.children if isinstance(c, nodes.colspec)]
        rows = list(tgroup.findall(nodes.row))
        cells = [[e for e in row.children if isinstance(e, nodes.entry)] for row in rows]
        if len(rows) <= LONG_TABLE_ROWS or not colspecs or any(len(r) != len(colspecs) for r in cells):
            continue
        columns = list(zip(*cells))
        longest = [max(_units(e.astext()) for e in col) for col in columns]
        mean = [sum(_units(e.astext()) for e in col) / len(col) for col in columns]
        narrow = {i: longest[i] + 2 for i in range(len(columns)) if longest[i] <= NARROW_UNITS}
        rest = max(LINE_UNITS - sum(narrow.values()), 10 * max(1, len(columns) - len(narrow)))
        wide = [i for i in range(len(columns)) if i not in narrow]
        weight = {i: (mean[i] + longest[i]) / 2 for i in wide}  # 平均长度和最长一格各占一半：偶尔一格很长的列也不太窄
        total = sum(weight.values()) or 1
        for i, spec in enumerate(colspecs):
            spec["colwidth"] = narrow.get(i) or max(12, round(rest * weight[i] / total))
        table["classes"] = [c for c in table.get("classes", []) if c not in ("longtable", "colwidths-given")] + [
            "longtable", "colwidths-given"]
        changed += 1
    return changed


def toc_parts(site_map) -> list[tuple[str, str]]:
    """sphinx-external-toc 读出的 ``_toc.yml``（``site_map``，可以是 None）里带标题的各部分：(标题, 第一篇的文档名)。"""
    if site_map is None:
        return []
    return [(tree.caption, str(tree.items[0])) for tree in site_map.root.subtrees if tree.caption and tree.items]


class PrintEdition(SphinxPostTransform):
    """LaTeX 构建里，在 myst-nb 挑输出格式之前（优先级 3 < 4）做上面三件事。"""

    default_priority = 3
    formats = ("latex",)

    def run(self, **kwargs) -> None:
        preface_chapter(self.document)
        part_pages(self.document, toc_parts(getattr(self.config, "external_site_map", None)))
        add_first_frames(self.document)
        strip_ansi(self.document)
        stack_equations(self.document)
        collect_answers(self.document)
        long_tables(self.document)


def setup(app):
    app.add_post_transform(PrintEdition)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
