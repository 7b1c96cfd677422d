"""测试共用设置：Hypothesis 配置、每张可交互图只画一次的缓存 ``rendered``、第 10 章真模型的 fixture
（``minilm``、``e5``）、系统里的 Chromium（``browser``），以及 pytest-xdist 的工作进程数和长测试先跑的顺序。

报错测试的写法（``check_error``、``call``、``error_table_test``）在 ``helpers/errors.py``；网站、浏览器和 JupyterLab
的 fixture 在 ``site/conftest.py``（用到它们的测试自动标成 slow，``python dev.py check`` 跳过）。
测试文件之间不互相导入，fixture 只经由 conftest 共享。

默认用 "ci"（每个性质 50 个例子、不计时限）；本地想多跑可以 HYPOTHESIS_PROFILE=dev python dev.py test。
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from functools import cached_property

import pytest
from hypothesis import settings

from helpers.real_models import real_model
from helpers.slow import SLOW_FIXTURES, slow_fixture
from tools.site import CHROMIUM_ARGS, NO_CHROMIUM, chromium_path

# tests/fixtures 里的 notebook 是故意写坏的反证（JupyterLab 测试用），不交给 nbval 运行
collect_ignore_glob = ["fixtures/*.ipynb"]

settings.register_profile("ci", max_examples=50, deadline=None)
settings.register_profile("dev", max_examples=300, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


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


@pytest.fixture(scope="module")
def minilm():
    """第 10 章的英文真模型 all-MiniLM-L6-v2（wheel 不在时：本地跳过，CI 里失败，见 ``helpers.real_models``）。"""
    return real_model("all-MiniLM-L6-v2")


@pytest.fixture(scope="module")
def e5():
    """第 10 章的多语言真模型 multilingual-e5-small。"""
    return real_model("multilingual-e5-small")


@pytest.fixture(scope="module")
def smollm2():
    """第 12 章的真 GPT SmolLM2-135M-Instruct（解码器，float32 约 540 MB）。"""
    return real_model("SmolLM2-135M-Instruct")


@slow_fixture(scope="session")
def browser():
    """系统里的 Chromium（找不到时跳过用到它的测试，并说明怎么安装），整个测试运行共用一个。"""
    path = chromium_path()
    if path is None:
        pytest.skip(NO_CHROMIUM + "浏览器测试已跳过。")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield b
        b.close()


# ---------------------------------------------------------------- 慢测试、工作进程数与顺序


def is_slow(fixturenames) -> bool:
    """一个测试用到的 fixture（pytest 给的是连同间接用到的全部名字）里有没有慢的。"""
    return bool(SLOW_FIXTURES & set(fixturenames))


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
    """用到慢 fixture（``helpers.slow.slow_fixture`` 声明的：建网站、开浏览器或 JupyterLab）的测试标成 slow，
    ``python dev.py check``（``-m "not slow"``）跳过它们；再把最费时的文件排到最前面。"""
    for item in items:
        if is_slow(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: LONGEST_FIRST.index(item.path.name) if item.path.name in LONGEST_FIRST
               else len(LONGEST_FIRST))  # sort 是稳定的：其余的测试保持原来的顺序
