"""可交互图在静态网站上的前一半：建书时，执行 notebook 的内核画出每张可交互图的全部帧。

有内核时，可交互图平常只输出初始帧的预览（读者用的是活滑块，存进仓库的 notebook 也因此很小）。
建网站时本扩展在 setup 里设置环境变量 ``ALL_FRAMES_ENV``（在任何 notebook 执行之前），内核从构建进程
继承它，每张图就把网格上的每一帧都写进 HTML（格式由 ``transformer_lab.widgets.static`` 定义）。

后一半在 ``postprocess.py``：构建结束后把这些帧从页面里搬成 ``_static/tlx/`` 下的文件。
"""

from __future__ import annotations

import os

from transformer_lab.widgets.static import ALL_FRAMES_ENV


def setup(app):
    os.environ[ALL_FRAMES_ENV] = "1"
    return {"parallel_read_safe": True, "parallel_write_safe": True}
