"""测试共用设置：Hypothesis 配置、报错检查 ``check_error``、每张可交互图只画一次的缓存 ``rendered``。

默认用 "ci"（每个性质 50 个例子、不计时限）；本地想多跑可以 HYPOTHESIS_PROFILE=dev pytest。
"""

from __future__ import annotations

import os
import re
import warnings
from dataclasses import dataclass
from functools import cached_property

import pytest
from hypothesis import settings

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
