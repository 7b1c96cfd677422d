"""测试共用设置：Hypothesis 配置、报错检查 ``check_error`` 与跑报错表的 ``error_table_test``、
每张可交互图只画一次的缓存 ``rendered``，以及网站测试的 fixture。

默认用 "ci"（每个性质 50 个例子、不计时限）；本地想多跑可以 HYPOTHESIS_PROFILE=dev pytest。
"""

from __future__ import annotations

import os
import re
import warnings
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pytest
from hypothesis import settings

from site_tools import (
    CHROMIUM_ARGS,
    HTML,
    NO_CHROMIUM,
    build_site,
    build_warnings,
    chromium_path,
    open_tab,
    search_page,
    serve,
)

# tests/fixtures 里的 notebook 是故意写坏的反证（JupyterLab 测试用），不交给 nbval 运行
collect_ignore_glob = ["fixtures/*.ipynb"]

settings.register_profile("ci", max_examples=50, deadline=None)
settings.register_profile("dev", max_examples=300, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

CHINESE = re.compile(r"[\u4e00-\u9fff]")


def check_error(fn, exc_type: type[BaseException], pattern: str) -> BaseException:
    """调用 ``fn()``：必须恰好抛出 ``exc_type``（不是它的子类），信息匹配正则 ``pattern``，并且是中文。"""
    with pytest.raises(exc_type, match=pattern) as info:
        fn()
    assert type(info.value) is exc_type, f"抛出的是 {type(info.value).__name__}，不是 {exc_type.__name__}"
    assert CHINESE.search(str(info.value)), f"报错信息不是中文：{info.value}"
    return info.value


def call(fn, *args, **kwargs):
    """报错表的一行里"怎么调用"：``call(tl.softmax, [1.0])`` 就是 ``lambda: tl.softmax([1.0])``。"""
    return lambda: fn(*args, **kwargs)


def error_table_test(cases):
    """一张报错表 → 一个参数化的测试。每个测试文件只写两样：它的 ``ERROR_CASES`` 和这一行::

        test_documented_errors = error_table_test(ERROR_CASES)

    表的每一行是 ``(id, 调用, 异常类型, 正则)``，逐行交给 ``check_error``。id 在一张表里必须唯一
    （重复时收集阶段就报错，而不是让 pytest 悄悄给 id 加后缀）。
    """
    ids = [case[0] for case in cases]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise ValueError(f"ERROR_CASES 里的 id 必须唯一，重复的有：{repeated}")

    @pytest.mark.parametrize("fn, exc_type, pattern", [pytest.param(*case[1:], id=case[0]) for case in cases])
    def test_documented_errors(fn, exc_type, pattern):
        check_error(fn, exc_type, pattern)

    return test_documented_errors


@dataclass
class Rendered:
    """一张可交互图，建一次；全部帧的静态 HTML 也只画一次（整个测试运行期间共用）。"""

    name: str
    ex: object

    @cached_property
    def html(self) -> str:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # 缺字、溢出、除零……画任何一帧时出警告都算失败
            return self.ex.static_html(all_frames=True)

    @cached_property
    def player(self) -> dict:
        from transformer_lab.widgets.static import read_player

        (data,) = read_player(self.html)
        return data


_RENDERED: dict[str, Rendered] = {}


@pytest.fixture(scope="session")
def rendered():
    """``rendered(name)``：目录里名为 ``name`` 的可交互图（默认参数），整个测试运行只建一次、只画一次。"""
    import transformer_lab as tl

    def get(name: str) -> Rendered:
        if name not in _RENDERED:
            _RENDERED[name] = Rendered(name, tl.explore.catalog()[name]())
        return _RENDERED[name]

    return get


# ---------------------------------------------------------------- 网站测试（test_site.py、test_search.py）共用
# 构建一次网站、在本机端口上提供它、启动系统里的 Chromium、开一个拦截外部请求并记录控制台报错的标签页。

@pytest.fixture(scope="session")
def site() -> Path:
    """构建一次网站（-W：任何警告都算失败），返回 HTML 目录。"""
    code, log = build_site()
    warnings = build_warnings(log)
    assert code == 0 and not warnings, "网站构建失败或有警告：\n" + "\n".join(warnings or [log[-3000:]])
    return HTML


@pytest.fixture(scope="session")
def server(site):
    with serve(site) as base:
        yield base


@pytest.fixture(scope="session")
def browser():
    path = chromium_path()
    if path is None:
        pytest.skip(NO_CHROMIUM + "浏览器测试已跳过。")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield b
        b.close()


def assert_clean(pg) -> None:
    """``open_tab`` 开的标签页没有试图访问外部地址、控制台没有报错。"""
    assert not pg.external, f"页面试图访问外部地址：{pg.external}"
    assert not pg.errors, f"浏览器控制台报错：{pg.errors}"


def _closed_clean(pg) -> None:
    assert_clean(pg)
    pg.context.close()


@pytest.fixture
def page(browser, server):
    """一个新标签页（``site_tools.open_tab``：拦截一切非本站请求并记下来，记录控制台报错）。测试结束时断言两者都为空。"""
    pg = open_tab(browser, server)
    yield pg
    _closed_clean(pg)


@pytest.fixture(scope="module")
def searcher(browser, server):
    """一个打开了搜索页、索引已经载入的标签页（``site_tools.ranked`` 在上面连续查询），一个测试文件共用一个。"""
    pg = open_tab(browser, server)
    search_page(pg)
    yield pg
    _closed_clean(pg)


# ---------------------------------------------------------------- 慢测试的标记（python dev.py check 跳过它们）
# 要建网站、开浏览器或 JupyterLab 的测试都标成 slow：作者改完代码先跑 ``python dev.py check``（几十秒），
# 提交前再跑完整的 ``python dev.py test``。
SLOW_FIXTURES = frozenset({"site", "tiny", "server", "browser", "page", "searcher", "lab"})


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # optionalhook：-p no:xdist 时没有这个钩子
def pytest_xdist_auto_num_workers(config) -> int | None:
    """``-n auto`` 开几个工作进程：跑浏览器和 JupyterLab 的测试时比 CPU 核数多一个。那几个长测试有一截时间在等
    浏览器排版、等内核算完，多一个进程正好把空出来的 CPU 用上（这台 2 核机器上，整套测试里两个核空着的时间
    2 个进程时 41 CPU 秒，3 个进程时 12–13 CPU 秒）；``dev.py check`` 不跑它们（``-m "not slow"``），
    一直在算，多开一个只会多收集一遍测试，所以就用核数。设了 ``PYTEST_XDIST_AUTO_NUM_WORKERS`` 时照它的。"""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cores if "not slow" in (config.getoption("markexpr") or "") else cores + 1


# 最费时的三个文件排在最前面（各要一到四分钟）：xdist 按收集的顺序把文件一个个发给空下来的工作进程，长的先开跑，
# 短的在别的进程里填空；排在后面的话，全套测试最后要干等它一个跑完。
LONGEST_FIRST = ("test_jupyterlab.py", "test_site.py", "test_phone.py")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: LONGEST_FIRST.index(item.path.name) if item.path.name in LONGEST_FIRST
               else len(LONGEST_FIRST))  # sort 是稳定的：其余的测试保持原来的顺序
