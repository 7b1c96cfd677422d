"""比较读者的返回值和参考答案：结构（类型、形状、dtype）、数值（带容差），以及“差多少”的中文说法。

检查器 (``checker.py``) 用这里的函数做两件事：读者的结果对不对（``compare``），读者的结果是不是和某个
“常见错误的写法”算出来的一模一样（``same``：NaN 对 NaN、inf 对 inf 也算一样）。返回的 ``Verdict`` 里
``problem`` 是给读者看的中文一句话，``None`` 表示一致。

本模块只依赖 NumPy。
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

__all__ = ["Verdict", "compare", "same", "show", "closeness"]


@dataclass(frozen=True)
class Verdict:
    """一次比较的结论。``problem`` 为 ``None`` 表示一致；``error`` 是最大相对误差（结构不对时是 ``inf``）。"""

    problem: str | None
    error: float = 0.0

    @property
    def ok(self) -> bool:
        return self.problem is None


def show(x: object, precision: int = 4) -> str:
    """给读者看的值：数组按 4 位小数、太长时中间用 … 省略；其他值用 repr。

    >>> show(np.array([0.09003057, 0.24472847, 0.66524096]))
    '[0.09   0.2447 0.6652]'
    >>> show(np.array([[True, False], [True, True]]))
    '[[ True False]\\n [ True  True]]'
    """
    if isinstance(x, np.ndarray) and x.dtype.kind in "biuf":
        return np.array2string(x, precision=precision, threshold=30, edgeitems=3, max_line_width=72,
                               suppress_small=True)
    if isinstance(x, (float, np.floating)):
        return f"{float(x):.{precision + 2}g}"
    text = repr(x)
    return text if len(text) <= 200 else text[:197] + "…"


def closeness(error: float) -> str:
    """最大相对误差的中文说法（CS231n 梯度检查的分档）。

    >>> closeness(0.0)
    '和参考答案完全一致'
    >>> closeness(3e-16)
    '只差最后几位数字（浮点舍入），可以认为完全一样'
    >>> closeness(0.5)
    '差得很多：不是舍入误差，是算法不一样'
    """
    if error == 0:
        return "和参考答案完全一致"
    if error <= 1e-12:
        return "只差最后几位数字（浮点舍入），可以认为完全一样"
    if error <= 1e-7:
        return "只差很小的舍入误差（换一种运算顺序就会这样），可以认为一样"
    if error <= 1e-4:
        return "接近但不够精确：像是 float32 的精度，或少了一点点修正（比如 eps）"
    if error <= 1e-2:
        return "差了百分之一以内：方向对了，但公式里有一处小的不同"
    return "差得很多：不是舍入误差，是算法不一样"


_NAMES = {list: "list（Python 列表）", tuple: "tuple", dict: "dict", str: "字符串"}


def _kind(x: object) -> str:
    if x is None:
        return "None"
    if isinstance(x, (bool, np.bool_)):
        return "布尔值"
    if isinstance(x, np.ndarray):
        return f"NumPy 数组 (shape={x.shape}, dtype={x.dtype})"
    return _NAMES.get(type(x), type(x).__name__)


def _scalar(expected: float, got: object, rtol: float, atol: float) -> Verdict:
    if isinstance(got, np.ndarray) and got.ndim == 0:
        got = got[()]
    if isinstance(got, (bool, np.bool_)) or not isinstance(got, numbers.Real):
        hint = "是不是忘了写 return？" if got is None else "应该返回一个数（float），比如 float(np.mean(...))。"
        return Verdict(f"应该返回一个数，你的函数返回了 {_kind(got)}。{hint}", np.inf)
    return _values(np.asarray(float(expected)), np.asarray(float(got)), rtol, atol)


def _values(expected: np.ndarray, got: np.ndarray, rtol: float, atol: float) -> Verdict:
    """形状和 dtype 已经一致：逐个元素比较（NaN 与 inf 要出现在同样的位置才算一致）。"""
    e_bad, g_bad = ~np.isfinite(expected), ~np.isfinite(got)
    if np.any(g_bad & ~e_bad):
        where = np.argwhere(g_bad & ~e_bad)[0]
        value = got[tuple(where)]
        at = f"（位置 {tuple(int(i) for i in where)}）" if got.ndim else ""
        return Verdict(f"结果里出现了 {value}{at}，应该是有限的数 {show(expected[tuple(where)])}。", np.inf)
    if np.any(e_bad & ~g_bad) or np.any(e_bad & g_bad & (np.nan_to_num(expected) != np.nan_to_num(got))):
        return Verdict("结果里 NaN 或 inf 的位置和参考答案不一样。", np.inf)
    e, g = np.where(e_bad, 0.0, expected).astype(float), np.where(g_bad, 0.0, got).astype(float)
    diff = np.abs(e - g)
    scale = np.maximum(np.abs(e), np.abs(g))
    error = float(np.max(diff / np.maximum(scale, atol / max(rtol, 1e-300)))) if diff.size else 0.0
    if np.all(diff <= atol + rtol * np.abs(e)):
        return Verdict(None, error)
    where = np.unravel_index(int(np.argmax(diff - rtol * np.abs(e))), diff.shape)
    at = f"（位置 {tuple(int(i) for i in where)}）" if diff.ndim else ""
    return Verdict(f"数值不对{at}：应该是 {show(e[where])}，你的是 {show(g[where])}；最大相对误差 {error:.1e}，"
                   f"{closeness(error)}。", error)


def _array(expected: np.ndarray, got: object, rtol: float, atol: float) -> Verdict:
    if not isinstance(got, np.ndarray):
        hint = ("是不是忘了写 return？" if got is None else
                "请返回 NumPy 数组，比如 np.array(结果) 或直接用 NumPy 运算的结果。")
        return Verdict(f"应该返回 NumPy 数组，你的函数返回了 {_kind(got)}。{hint}", np.inf)
    if got.shape != expected.shape:
        return Verdict(f"形状不对：应该是 {expected.shape}，你的是 {got.shape}。", np.inf)
    if expected.dtype.kind == "b":
        if got.dtype.kind != "b":
            return Verdict(f"应该是布尔数组（True/False，dtype=bool），你的 dtype 是 {got.dtype}。"
                           "提示：比较运算（比如 j <= i）的结果本身就是布尔数组。", np.inf)
        wrong = np.argwhere(expected != got)
        if len(wrong):
            at = tuple(int(i) for i in wrong[0])
            return Verdict(f"有 {len(wrong)} 个位置不对，第一个在 {at}：应该是 {bool(expected[at])}，"
                           f"你的是 {bool(got[at])}。", np.inf)
        return Verdict(None, 0.0)
    if got.dtype.kind in "iu" and expected.dtype.kind in "iu":
        wrong = np.argwhere(expected != got)
        if len(wrong):
            at = tuple(int(i) for i in wrong[0])
            return Verdict(f"有 {len(wrong)} 个位置不对，第一个在 {at}：应该是 {expected[at]}，你的是 {got[at]}。",
                           np.inf)
        return Verdict(None, 0.0)
    if got.dtype.kind != "f":
        return Verdict(f"应该是浮点数组，你的 dtype 是 {got.dtype}。提示：整数除法或 np.zeros(..., dtype=int) "
                       "会把小数丢掉。", np.inf)
    return _values(expected, got, rtol, atol)


def _sequence(expected: list, got: object) -> Verdict:
    if isinstance(got, np.ndarray):
        got = got.tolist()
    if not isinstance(got, (list, tuple)):
        return Verdict(f"应该返回 list，你的函数返回了 {_kind(got)}。", np.inf)
    if list(got) == expected:
        return Verdict(None, 0.0)
    if len(got) != len(expected):
        return Verdict(f"长度不对：应该有 {len(expected)} 个元素，你的有 {len(got)} 个。", np.inf)
    at = next(i for i, (e, g) in enumerate(zip(expected, got)) if e != g)
    return Verdict(f"第 {at} 个元素不对：应该是 {expected[at]!r}，你的是 {got[at]!r}。", np.inf)


def _mapping(expected: dict, got: object) -> Verdict:
    if not isinstance(got, dict):
        return Verdict(f"应该返回 dict，你的函数返回了 {_kind(got)}。", np.inf)
    missing = [k for k in expected if k not in got]
    if missing:
        return Verdict(f"少了键 {missing[0]!r}（一共少了 {len(missing)} 个）。", np.inf)
    extra = [k for k in got if k not in expected]
    if extra:
        return Verdict(f"多了键 {extra[0]!r}（一共多了 {len(extra)} 个）。", np.inf)
    wrong = [k for k in expected if got[k] != expected[k]]
    if wrong:
        k = wrong[0]
        return Verdict(f"键 {k!r} 的值不对：应该是 {expected[k]!r}，你的是 {got[k]!r}。", np.inf)
    return Verdict(None, 0.0)


def compare(expected: object, got: object, rtol: float, atol: float, names: tuple[str, ...] = ()) -> Verdict:
    """读者的返回值 ``got`` 和参考答案 ``expected`` 一致吗？结构按参考答案的类型比较。

    - 参考答案是数组：``got`` 必须是同形状的数组，浮点数组在容差内一致（``|e-g| ≤ atol + rtol·|e|``），
      布尔、整数数组逐个相等；
    - 参考答案是浮点数：``got`` 是一个实数（0 维数组也行）；
    - 参考答案是 tuple（比如注意力的输出和权重）：``got`` 是同样长度的 tuple 或 list，逐项比较，``names`` 给各项起名；
    - 参考答案是 list 或 dict：逐项相等。

    >>> compare(np.array([0.5, 0.5]), np.array([0.5, 0.5 + 1e-15]), 1e-9, 1e-12).ok
    True
    >>> compare(np.array([0.5, 0.5]), [0.5, 0.5], 1e-9, 1e-12).problem.startswith("应该返回 NumPy 数组")
    True
    >>> compare(2.0, 2.5, 1e-9, 1e-12).problem[:5]
    '数值不对：'
    """
    if isinstance(expected, tuple):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            what = "、".join(names) if names else f"{len(expected)} 个值"
            return Verdict(f"应该返回 {len(expected)} 个值（{what}），写成 return {', '.join(names or ('a', 'b'))}；"
                           f"你的函数返回了 {_kind(got)}。", np.inf)
        worst = 0.0
        for i, (e, g) in enumerate(zip(expected, got)):
            verdict = compare(e, g, rtol, atol)
            if not verdict.ok:
                label = names[i] if i < len(names) else f"第 {i + 1} 个返回值"
                return Verdict(f"返回的 {label}：{verdict.problem}", verdict.error)
            worst = max(worst, verdict.error)
        return Verdict(None, worst)
    if isinstance(expected, np.ndarray):
        return _array(expected, got, rtol, atol)
    if isinstance(expected, list):
        return _sequence(expected, got)
    if isinstance(expected, dict):
        return _mapping(expected, got)
    return _scalar(float(expected), got, rtol, atol)


def same(a: object, b: object, rtol: float, atol: float) -> bool:
    """两个结果（都可能含 NaN、inf，或结构不对）是不是一样？用来认出“常见错误的写法”。

    >>> same(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), 1e-9, 1e-12)
    True
    >>> same(np.array([1.0, 2.0]), np.array([1.0, 2.5]), 1e-9, 1e-12)
    False
    """
    a, b = (x[()] if isinstance(x, np.ndarray) and x.ndim == 0 else x for x in (a, b))
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)) and len(a) == len(b)
                and all(same(x, y, rtol, atol) for x, y in zip(a, b)))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.shape != b.shape:
            return False
        if (a.dtype.kind == "b") != (b.dtype.kind == "b"):
            return False
        if a.dtype.kind not in "biuf" or b.dtype.kind not in "biuf":
            return False
        return bool(np.all(np.isclose(a.astype(float), b.astype(float), rtol=rtol, atol=atol, equal_nan=True)))
    if isinstance(a, numbers.Real) and isinstance(b, numbers.Real) and not isinstance(a, bool):
        return bool(np.isclose(float(a), float(b), rtol=rtol, atol=atol, equal_nan=True))
    return type(a) is type(b) and a == b
