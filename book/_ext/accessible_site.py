"""网页的无障碍修补：构建结束后改两处主题和 Markdown 表格生成的结构（axe-core 会报的两类问题）。

1. **侧边栏不在任何地标 (landmark) 里。** pydata 主题的主侧边栏是一个普通 ``<div>``，里面的书名链接和搜索按钮
   于是不属于任何地标，读屏软件按地标跳转时跳不到它们（axe 规则 ``region``）。给这个 ``<div>`` 加上
   ``role="complementary"`` 和中文名称“全书导航”，它就成了一个顶层的辅助地标，里面的目录 ``<nav>`` 不变。
2. **空的表头格。** Markdown 表格左上角留空时，生成 ``<th class="head"><p></p></th>``：一个没有文字的表头，
   读屏软件读不出它是哪一列的标题（axe 规则 ``empty-table-header``）。左上角的格子本来就不是任何一列的标题，
   改成普通的 ``<td>``。
"""

from __future__ import annotations

import re
from pathlib import Path

PRIMARY_SIDEBAR = '<div id="pst-primary-sidebar" class="bd-sidebar-primary bd-sidebar'
SIDEBAR_LANDMARK = '<div role="complementary" aria-label="全书导航" id="pst-primary-sidebar" class="bd-sidebar-primary bd-sidebar'
EMPTY_HEADER = re.compile(r'<th class="head">(?:<p>\s*</p>|\s*)</th>')


def make_accessible(text: str) -> str:
    """对一页 HTML 做上面两处修补。"""
    text = text.replace(PRIMARY_SIDEBAR, SIDEBAR_LANDMARK)
    return EMPTY_HEADER.sub('<td class="head"></td>', text)


def _finish_pages(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        new = make_accessible(text)
        if new != text:
            page.write_text(new, encoding="utf-8")


def setup(app):
    app.connect("build-finished", _finish_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
