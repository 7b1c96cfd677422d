"""报错测试的共用写法：``check_error`` 检查一次调用抛出的中文报错，``call`` 写表里的一行，``error_table_test``
把一张报错表 (``ERROR_CASES``) 变成一个参数化的测试。各测试文件 ``from helpers.errors import ...``。"""

from __future__ import annotations

import re

import pytest

__all__ = ["CHINESE", "check_error", "call", "error_table_test"]

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
