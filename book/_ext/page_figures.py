"""Markdown 页面里的图：在 ``book/*.md`` 里写

    ```{explorable} transformer_diagram
    ```

建网站时换成 ``tl.explore`` 里这张图（``tl.explore.__all__`` 里的一个画图函数）的静态 HTML——和 notebook 里同一张图的输出是同一段（两种版式、
滑块的全部帧），之后照样由 ``postprocess.py`` 把帧搬成 ``_static/tlx/`` 下的文件。指令的内容（可以没有）是一个
JSON 对象，作为关键字参数交给画图函数，例如 ``{"decoder": true}``。

PDF（LaTeX 构建）里印的是这张图初始的一帧和一行图注（``printed``）。

前言不是 notebook，没有内核替它画图；这张图又要和第 8 章里的同一张一模一样，所以由建书的进程当场画。
图在 Python 包里，Sphinx 看不到它的改动：和自测页一样，把整个工具包的源文件登记为这一页的依赖。
"""

from __future__ import annotations

import json

from docutils import nodes
from print_edition import caption
from self_test_page import dependencies
from sphinx import addnodes
from sphinx.util.docutils import SphinxDirective

import transformer_lab as tl
from transformer_lab.widgets.static import first_frame_b64


class ExplorableDirective(SphinxDirective):
    required_arguments = 1
    has_content = True

    def run(self):
        name = self.arguments[0]
        if name not in tl.explore.__all__ or not callable(getattr(tl.explore, name)):
            raise self.error(f"tl.explore 里没有名为 {name!r} 的画图函数（可用的见 tl.explore.__all__）。")
        try:
            kwargs = json.loads("\n".join(self.content)) if self.content else {}
        except json.JSONDecodeError as err:
            raise self.error(f"{name} 的参数必须是一个 JSON 对象，例如 {{\"decoder\": true}}：{err}") from None
        if not isinstance(kwargs, dict):
            raise self.error(f"{name} 的参数必须是一个 JSON 对象，收到的是 {kwargs!r}。")
        for path in dependencies(self.env.srcdir):
            self.env.note_dependency(str(path))
        figure = getattr(tl.explore, name)(**kwargs)
        return [nodes.raw("", figure.static_html(all_frames=True), format="html"), printed(figure)]


def printed(figure) -> addnodes.only:
    """PDF 里的这张图：初始的一帧（网站上第一眼看到的那一帧）加图注，只在 LaTeX 构建里出现（HTML 构建丢掉
    ``only`` 节点，LaTeX 构建丢掉 ``raw`` HTML）。data URI 由 Sphinx 的 ``DataURIExtractor`` 存成 LaTeX 要的文件。"""
    uri = "data:image/png;base64," + first_frame_b64(figure)
    only = addnodes.only(expr="latex")
    only += nodes.image(uri=uri, alt=figure.title, width=f"{figure.figure_pixels()[0]}px", candidates={"?": uri})
    text = caption(figure.describe()) or f"图：{figure.title}。"
    only += nodes.paragraph("", "", nodes.emphasis(text, text))
    return only


def setup(app):
    app.add_directive("explorable", ExplorableDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
