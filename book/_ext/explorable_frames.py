"""可交互图在静态网站上的前一半：告诉执行 notebook 的内核“这是在建书”。

有读者的内核里，可交互图输出活滑块（ipywidgets）和初始帧的预览（存进仓库的 notebook 也因此很小）。建书时
本扩展在 setup 里（任何 notebook 执行之前）设置环境变量 ``BOOK_BUILD_ENV``，内核从构建进程继承它，
``transformer_lab.widgets.explorable.building_book()`` 就是真：每张图把网格上的每一帧都写进 HTML 播放器
（格式由 ``transformer_lab.widgets.static`` 定义），另附初始帧的 PNG（给将来的 LaTeX/PDF），不建活滑块——
静态网页上没有内核，也就没有控件状态写进页面。

为什么是环境变量：myst-nb 执行 notebook（jupyter-cache 的 ``single_nb_execution`` → nbclient）时，
内核是另一个进程，而这条路上没有有文档的办法给内核传话（不能另设环境变量，也不能先运行一段代码）；
内核从构建进程继承环境变量是唯一的通道。

后一半在 ``postprocess.py``：构建结束后把这些帧从页面里搬成 ``_static/tlx/`` 下的文件。
"""

from __future__ import annotations

import os

from transformer_lab.widgets.explorable import BOOK_BUILD_ENV


def setup(app):
    os.environ[BOOK_BUILD_ENV] = "1"
    return {"parallel_read_safe": True, "parallel_write_safe": True}
