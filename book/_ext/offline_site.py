"""让网站完全离线：去掉 sphinx-thebe 注入的脚本。

Jupyter Book 1 总会加载 sphinx-thebe。它在每页写入一段内联脚本（声明 THEBE_JS_URL，指向 unpkg CDN）
和 sphinx-thebe.js；这段内联脚本被加了两次，浏览器报错 "Identifier 'THEBE_JS_URL' has already been
declared"。本书不用 thebe（网页上的滑块靠预先画好的帧工作），所以直接撤掉它的事件处理函数。
"""

from __future__ import annotations


def _drop_thebe_listeners(app) -> None:
    for event in ("env-before-read-docs", "doctree-resolved"):
        for listener in list(app.events.listeners.get(event, [])):
            if getattr(listener.handler, "__module__", "").startswith("sphinx_thebe"):
                app.disconnect(listener.id)


def setup(app):
    _drop_thebe_listeners(app)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
