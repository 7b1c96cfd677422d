"""网站的四处加工，让它完全离线、又不臃肿。

1. 去掉 sphinx-thebe。Jupyter Book 1 总会加载它：每页写入一段内联脚本（声明 THEBE_JS_URL，指向 unpkg
   CDN）和 sphinx-thebe.js，而这段内联脚本被加了两次，浏览器报错 "Identifier 'THEBE_JS_URL' has already
   been declared"。本书不用 thebe（网页上的滑块靠预先画好的帧工作），所以直接撤掉它的事件处理函数。

2. 不加载 fontawesome.js。pydata 主题每页都加载这个 1.5 MB 的脚本，把图标换成 SVG；可主题的 CSS
   已经带了同样的图标字体 (fa-solid-900.woff2)，去掉脚本后图标照样显示（截图核对过），每页少 1.5 MB。

3. 让执行 notebook 的内核画出可交互图的全部帧。有内核时，可交互图平常只输出初始帧的预览（读者用的是
   活滑块，存进仓库的 notebook 也因此很小）；建网站时设置环境变量 ``ALL_FRAMES_ENV``，内核继承它，
   每张图就把网格上的每一帧都写进 HTML。这个格式由 ``transformer_lab.widgets.static`` 定义。

4. 把可交互图的帧从页面里搬出来：每一帧存成 ``_static/tlx/<内容哈希>.png``，页面里只留网址
   （``static.externalize_frames``）。首次加载只下载每张图的当前帧，其余帧在图快进入视野时才预取。

第 1 条动到了 Sphinx 的内部结构 ``app.events.listeners``（Sphinx 7–8 如此），升级 Sphinx 时要复查。
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from transformer_lab.widgets.static import ALL_FRAMES_ENV, externalize_frames

FONTAWESOME_JS = re.compile(r'<script defer src="[./]*_static/scripts/fontawesome\.js[^"]*"></script>\s*')


def _drop_thebe_listeners(app) -> None:
    for event in ("env-before-read-docs", "doctree-resolved"):
        for listener in list(app.events.listeners.get(event, [])):
            if getattr(listener.handler, "__module__", "").startswith("sphinx_thebe"):
                app.disconnect(listener.id)


def _finish_pages(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    folder = out / "_static" / "tlx"
    folder.mkdir(parents=True, exist_ok=True)
    for page in out.rglob("*.html"):
        text = FONTAWESOME_JS.sub("", page.read_text(encoding="utf-8"))
        prefix = "../" * (len(page.relative_to(out).parts) - 1) + "_static/tlx/"
        page.write_text(externalize_frames(text, folder, prefix), encoding="utf-8")


def setup(app):
    os.environ[ALL_FRAMES_ENV] = "1"  # 在任何 notebook 执行之前设好：内核从本进程继承环境变量
    _drop_thebe_listeners(app)
    app.connect("build-finished", _finish_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
