"""浏览器测试与基准脚本共用的小工具：在本机端口上提供构建好的网站，找到系统里的 Chromium。"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
# 无头、无沙箱（CI 以 root 运行），并关掉 Chromium 自己的后台联网（本机网络是封闭的）
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
NO_CHROMIUM = ("没有找到 Chromium。安装：sudo apt-get install chromium fonts-noto-cjk，"
               "或设置环境变量 CHROMIUM_PATH 指向 Chromium/Chrome 可执行文件。")


def chromium_path() -> str | None:
    """系统里的 Chromium：优先环境变量 CHROMIUM_PATH，再找 PATH 上的 chromium / google-chrome。"""
    candidates = [os.environ.get("CHROMIUM_PATH"), shutil.which("chromium"), shutil.which("chromium-browser"),
                  shutil.which("google-chrome")]
    return next((c for c in candidates if c and Path(c).exists()), None)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # 不把每个请求打印出来
        pass


@contextlib.contextmanager
def serve(directory: Path = HTML):
    """在 127.0.0.1 的随机端口上提供 ``directory``，产出网址前缀。"""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_port}"
    finally:
        srv.shutdown()


def pages(site: Path = HTML) -> list[Path]:
    """书里的正文页面（不含搜索页、索引页和 index.html 跳转页）。"""
    return sorted(p for p in site.rglob("*.html")
                  if not p.name.startswith(("search", "genindex", "index")) and "_static" not in p.parts)


def block_outside(page, base: str, blocked: list[str]) -> None:
    """拦截一切不属于本站的请求，记进 ``blocked``。"""

    def route(r):
        url = r.request.url
        if url.startswith(base) or url.startswith("data:"):
            return r.continue_()
        blocked.append(url)
        return r.abort()

    page.route("**/*", route)
