"""慢 fixture 的登记处：要建网站、开浏览器或 JupyterLab 的 fixture 用 ``@slow_fixture(...)`` 代替 ``@pytest.fixture(...)``。

用到它们（直接或经由别的 fixture）的测试由 ``tests/conftest.py`` 自动标成 ``slow``，``python dev.py check``
跳过它们。名单由装饰器自己记下，不再手写一份会忘了更新的名字表；``tests/site/conftest.py`` 里的每个 fixture
都必须这样声明（``tests/site/test_site_conftest.py`` 核对）。
"""

from __future__ import annotations

import pytest

__all__ = ["SLOW_FIXTURES", "slow_fixture"]

SLOW_FIXTURES: set[str] = set()


def slow_fixture(*args, **kwargs):
    """同 ``pytest.fixture``，另把 fixture 的名字（``name=`` 或函数名）记进 ``SLOW_FIXTURES``。"""

    def register(fn):
        SLOW_FIXTURES.add(kwargs.get("name") or fn.__name__)
        return pytest.fixture(*args, **kwargs)(fn)

    if len(args) == 1 and callable(args[0]) and not kwargs:  # 不带括号：@slow_fixture
        fn, args = args[0], ()
        return register(fn)
    return register
