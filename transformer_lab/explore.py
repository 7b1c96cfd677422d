"""本书的可交互图目录：每张图在章节里只需一行 ``tl.explore.xxx()``。

图的实现按章节放在 ``transformer_lab/figures/`` 里，每个模块在 ``__all__`` 里列出它的一行式函数
（调用后返回 ``Explorable``）；这里把它们统一导出，并提供 ``catalog()`` 供测试与基准脚本遍历。
"""

from __future__ import annotations

from typing import Callable

from .explorable import Explorable
from .figures import attention_maps, qkv, recurrence, scaling

_MODULES = (recurrence, attention_maps, qkv, scaling)

__all__ = ["catalog"]
for _module in _MODULES:
    for _name in _module.__all__:
        globals()[_name] = getattr(_module, _name)
        __all__.append(_name)


def catalog() -> dict[str, Callable[[], Explorable]]:
    """全部可交互图：名字 → 用默认参数构造它的函数（按章节顺序）。"""
    return {name: globals()[name] for name in __all__ if name != "catalog"}
