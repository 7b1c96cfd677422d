"""滑块 (Slider)：一个参数的取值网格、打开时的默认值，以及对一个取值的检查。

静态网页上预先画好的帧就是各滑块网格的所有组合（见 ``Explorable.grid``）；活滑块 (``live.py``) 和
换帧脚本 (``static.py``) 都从这里读滑块的名字、网格和默认值。本模块不导入 matplotlib。
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Slider"]


@dataclass(frozen=True)
class Slider:
    """一个滑块。``values`` 是静态网页上预先画好的网格；``continuous=True`` 时活滑块可取区间内任意值。

    Examples
    --------
    >>> Slider("d_k", (1, 2, 4)).start          # 没给默认值：取网格正中间的那个
    2
    >>> Slider("d_k", (1, 2, 4), label="每个向量的长度 d_k", default=4).shown
    '每个向量的长度 d_k'
    """

    name: str
    values: tuple
    label: str = ""
    default: Any = None
    continuous: bool = False
    step: float = 1

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise TypeError(f"滑块的名字必须是合法的参数名（字符串），收到的是 {self.name!r}。")
        if not isinstance(self.label, str):
            raise TypeError(f"滑块 {self.name} 的 label 必须是字符串（显示在滑块旁边），收到的是 {type(self.label).__name__} "
                            f"{self.label!r}。")
        if not isinstance(self.values, (tuple, list)):
            raise TypeError(f"滑块 {self.name} 的 values 必须是元组或列表，收到的是 {type(self.values).__name__}。")
        object.__setattr__(self, "values", tuple(self.values))  # 冻结的 dataclass：统一存成元组
        if not isinstance(self.continuous, (bool, np.bool_)):
            raise TypeError(f"滑块 {self.name} 的 continuous 必须是 bool（True 或 False），收到的是 {type(self.continuous).__name__} "
                            f"{self.continuous!r}。")
        if isinstance(self.step, (bool, np.bool_)) or not isinstance(self.step, numbers.Real) or not 0 < self.step < np.inf:
            raise ValueError(f"滑块 {self.name} 的 step（活滑块每格走多少）必须是有限的正数，收到的是 {self.step!r}。")
        if any(isinstance(v, numbers.Real) and not np.isfinite(v) for v in self.values):
            raise ValueError(f"滑块 {self.name} 的取值必须都是有限的数，收到的是 {self.values!r}。")
        if any(_same(a, b) for i, a in enumerate(self.values) for b in self.values[i + 1:]):
            raise ValueError(f"滑块 {self.name} 的取值有重复：{self.values!r}。每个取值是一帧，重复的帧分不清。")
        if self.continuous and not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in self.values):
            raise TypeError(f"连续滑块 {self.name} 的取值必须都是数，收到的是 {self.values!r}。")
        if len(self.values) < 2:
            raise ValueError(f"滑块 {self.name} 至少要有 2 个取值，收到的是 {self.values!r}。")
        if self.default is not None and self.default not in self.values:
            raise ValueError(f"滑块 {self.name} 的默认值 {self.default!r} 不在网格 {self.values!r} 里。")

    @property
    def shown(self) -> str:
        """滑块旁边显示的名字。"""
        return self.label or self.name

    @property
    def start(self) -> Any:
        """打开图时滑块所在的值。"""
        return self.values[len(self.values) // 2] if self.default is None else self.default

    @property
    def integral(self) -> bool:
        """网格全是整数时，滑块只取整数（连续滑块也是 IntSlider）。"""
        return all(isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)) for v in self.values)

    def check(self, value: Any) -> Any:
        """检查一个滑块取值并返回它：离散滑块必须是网格里的值；连续滑块必须在 [最小, 最大] 之内；整数滑块只收整数。

        >>> Slider("d_k", (1, 2, 4), continuous=True).check(3)
        3
        >>> Slider("d_k", (1, 2, 4), continuous=True).check(2.7)
        Traceback (most recent call last):
        ...
        TypeError: 滑块 d_k 只取整数，收到的是 float 2.7。
        """
        if self.integral and (isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral)):
            raise TypeError(f"滑块 {self.name} 只取整数，收到的是 {type(value).__name__} {value!r}。")
        if not self.continuous:
            if not any(_same(value, v) for v in self.values):
                raise ValueError(f"滑块 {self.name}={value!r} 不在它的取值里。可选：{'、'.join(map(repr, self.values))}。")
            return value
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise TypeError(f"滑块 {self.name} 只取实数，收到的是 {type(value).__name__} {value!r}。")
        x, lo, hi = float(value), min(self.values), max(self.values)
        if not lo <= x <= hi:  # NaN 也不在范围内
            raise ValueError(f"滑块 {self.name}={value!r} 超出范围：应在 [{lo}, {hi}] 之内。")
        return int(value) if self.integral else value  # 浮点滑块原样返回：帧的文字与网格值一致


def _same(value: Any, v: Any) -> bool:
    """网格值比较：同为字符串或同为数，且相等（"1" 不等于 1，True 不等于 1）。"""
    if isinstance(value, (bool, np.bool_)) != isinstance(v, (bool, np.bool_)):
        return False
    if isinstance(v, str) or isinstance(value, str):
        return isinstance(value, str) and isinstance(v, str) and value == v
    return isinstance(value, numbers.Real) and value == v
