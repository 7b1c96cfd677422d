"""可交互图在静态网站上的前一半：建书时，执行 notebook 的内核画出每张可交互图的全部帧。

有内核时，可交互图平常只输出初始帧的预览（读者用的是活滑块，存进仓库的 notebook 也因此很小）。
建网站时本扩展在 setup 里设置环境变量 ``ALL_FRAMES_ENV``（在任何 notebook 执行之前），内核从构建进程
继承它，每张图就把网格上的每一帧都写进 HTML（格式由 ``transformer_lab.widgets.static`` 定义）。

静态网页上的滑块是这些帧，不是 ipywidgets：myst-nb 照例把执行时记下的控件状态（``WIDGET_STATE``，每个活滑块的
图片字节都在里面，一章 0.2–0.4 MB）写进页面，可网页上没有读它的脚本（``nb_ipywidgets_js`` 为空），所以在
``html-page-context``（Sphinx 给每页准备模板变量的有文档事件）里把这一段从这一页要写出的脚本里去掉。

后一半在 ``postprocess.py``：构建结束后把这些帧从页面里搬成 ``_static/tlx/`` 下的文件。
"""

from __future__ import annotations

import os

from transformer_lab.widgets.static import ALL_FRAMES_ENV

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def drop_widget_state(app, pagename, templatename, context, doctree) -> None:
    """这一页的 ``script_files`` 里去掉 ipywidgets 的控件状态（myst-nb 以 ``type`` 为它的脚本块）。"""
    scripts = context.get("script_files")
    if scripts:
        context["script_files"] = [js for js in scripts if getattr(js, "attributes", {}).get("type") != WIDGET_STATE]


def setup(app):
    os.environ[ALL_FRAMES_ENV] = "1"
    # myst-nb 在默认优先级 500 加上这段脚本；排在它之后才去得掉
    app.connect("html-page-context", drop_widget_state, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
