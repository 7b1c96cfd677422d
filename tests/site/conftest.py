"""网站、浏览器和 JupyterLab 测试共用的 fixture：构建一次网站、在本机端口上提供它、启动系统里的 Chromium、
开一个拦截外部请求并记录控制台报错的标签页（浏览器本身 ``browser`` 在 ``tests/conftest.py``：
quiz 和 widgets 的测试也用它）。

这里的每个 fixture 都用 ``slow_fixture`` 声明：用到它们的测试自动标成 slow，``python dev.py check`` 跳过。
工具函数（建网站、判断能否重用上次的构建、服务、找 Chromium）在 ``tools/site.py``，``tools/lab.py`` 管 JupyterLab。
"""

from __future__ import annotations

from pathlib import Path

from helpers.slow import slow_fixture
from tools.site import (
    HTML,
    build_site,
    build_warnings,
    closed_clean,
    open_tab,
    search_page,
    serve,
)


@slow_fixture(scope="session")
def site() -> Path:
    """构建一次网站（-W：任何警告都算失败），返回 HTML 目录。"""
    code, log = build_site()
    warnings = build_warnings(log)
    assert code == 0 and not warnings, "网站构建失败或有警告：\n" + "\n".join(warnings or [log[-3000:]])
    return HTML


@slow_fixture(scope="session")
def server(site):
    with serve(site) as base:
        yield base


@slow_fixture
def page(browser, server):
    """一个新标签页（``tools.site.open_tab``：拦截一切非本站请求并记下来，记录控制台报错）。测试结束时断言两者都为空。"""
    pg = open_tab(browser, server)
    yield pg
    closed_clean(pg)


@slow_fixture(scope="module")
def searcher(browser, server):
    """一个打开了搜索页、索引已经载入的标签页（``tools.site.ranked`` 在上面连续查询），一个测试文件共用一个。"""
    pg = open_tab(browser, server)
    search_page(pg)
    yield pg
    closed_clean(pg)

