"""网站的两处加工，让它完全离线、又不臃肿。

1. 去掉 sphinx-thebe。Jupyter Book 1 总会加载它：每页写入一段内联脚本（声明 THEBE_JS_URL，指向 unpkg
   CDN）和 sphinx-thebe.js，而这段内联脚本被加了两次，浏览器报错 "Identifier 'THEBE_JS_URL' has already
   been declared"。本书不用 thebe（网页上的滑块靠预先画好的帧工作），所以直接撤掉它的事件处理函数。

2. 不加载 fontawesome.js。pydata 主题每页都加载这个 1.5 MB 的脚本，把图标换成 SVG；可主题的 CSS
   已经带了同样的图标字体 (fa-solid-900.woff2)，去掉脚本后图标照样显示（截图核对过），每页少 1.5 MB。

3. 把可交互图的帧从页面里搬出来。notebook 里的可交互图把所有帧以 base64 写在 HTML 里（这样在
   JupyterLab 里也能离线工作）；网站上把每一帧存成 ``_static/tlx/<内容哈希>.png``，页面里只留网址：
   首次加载只下载每张图的当前帧，其余帧在图快进入视野时才预取，而且省掉了 base64 多出的三分之一。
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

DATA = re.compile(r'(<script type="application/json" class="tlx-data">)(.*?)(</script>)', re.S)
FONTAWESOME_JS = re.compile(r'<script defer src="[./]*_static/scripts/fontawesome\.js[^"]*"></script>\s*')
FIRST_FRAME = re.compile(r'(<div class="tlx"[^>]*>\s*<img src=")data:image/png;base64,([^"]+)(")')


def _drop_thebe_listeners(app) -> None:
    for event in ("env-before-read-docs", "doctree-resolved"):
        for listener in list(app.events.listeners.get(event, [])):
            if getattr(listener.handler, "__module__", "").startswith("sphinx_thebe"):
                app.disconnect(listener.id)


def _save(frame_b64: str, folder: Path) -> str:
    raw = base64.b64decode(frame_b64)
    name = hashlib.sha1(raw).hexdigest()[:16] + ".png"
    (folder / name).write_bytes(raw)
    return name


def externalize_frames(html: str, folder: Path, prefix: str) -> str:
    """把 HTML 里每张可交互图的 base64 帧写成文件，换成 ``prefix + 文件名`` 的网址。"""

    def swap_data(m):
        data = json.loads(m.group(2))
        data["urls"] = [prefix + _save(f, folder) for f in data.pop("frames")]
        return m.group(1) + json.dumps(data, ensure_ascii=False).replace("</", "<\\/") + m.group(3)

    html = DATA.sub(swap_data, html)
    return FIRST_FRAME.sub(lambda m: m.group(1) + prefix + _save(m.group(2), folder) + m.group(3), html)


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
    _drop_thebe_listeners(app)
    app.connect("build-finished", _finish_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
