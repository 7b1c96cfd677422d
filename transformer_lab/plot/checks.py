"""画图输入的检查：数组有限、长度对得上（规则来自全包共用的 ``_validation``），文字不会弄坏 mathtext；
几章共用的：热力图上的一句话的权重、对数图的横轴和纵轴。

出错时抛出写明参数名的中文 ``TypeError``/``ValueError``，而不是 matplotlib 的英文报错或一张画坏的图。
"""

from __future__ import annotations

import warnings

import numpy as np
from matplotlib.font_manager import FontProperties
from matplotlib.mathtext import MathTextParser

from .. import _validation as check

_PARSER = MathTextParser("path")


def values(x: object, name: str, ndim: int) -> np.ndarray:
    """要画的数：实数数组（列表也行），``ndim`` 维，非空，没有 NaN/inf。返回普通 float 数组。

    数组的规则和全包一样（``_validation.as_real_array``）；画图还收列表，并要求维数正好是 ``ndim``。
    """
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(f"{name} 是掩码数组 (np.ma.MaskedArray)。提示：先用 {name}.filled(0.0) 换成普通数组。")
    arr = check.as_real_array(x if isinstance(x, np.ndarray) else np.asarray(x), name)
    if arr.ndim != ndim:
        raise ValueError(f"{name} 必须是非空的 {ndim} 维数组，收到的 shape={arr.shape}。")
    return arr.astype(float)


def square_weights(w: object, name: str, n: int) -> np.ndarray:
    """要画成热力图的一句话的注意力权重：(n, n) 的有限实数 NumPy 数组（n = 词数），每个数在 [0, 1] 之内（颜色上限是 1）。"""
    w = check.as_real_array(w, name, min_ndim=2)
    if w.shape != (n, n):
        raise ValueError(f"{name} 的形状必须是 (T, T) = ({n}, {n})（tokens 有 {n} 个词），收到的是 {w.shape}。")
    if w.min() < 0 or w.max() > 1:
        raise ValueError(f"{name} 是注意力权重，每个数都应在 [0, 1] 之内，收到的最小 {w.min() + 0.0:.3g}、"
                         f"最大 {w.max() + 0.0:.3g}。")
    return w


def increasing_ints(x: object, name: str, what: str) -> np.ndarray:
    """横轴上的取值：至少 2 个、从小到大的正整数（NumPy 数组），``what`` 说明它们是什么（写在报错的括号里）。"""
    x = check.as_real_array(x, name)
    if x.ndim != 1 or len(x) < 2 or np.any(x < 1) or np.any(x != np.round(x)) or np.any(np.diff(x) <= 0):
        raise ValueError(f"{name} 必须是至少 2 个、从小到大的正整数（{what}），收到的是 {x.tolist()}。")
    return x


def positive_series(y: object, name: str, length: int, what: str) -> np.ndarray:
    """对数纵轴上的一组数：``length`` 个有限正数的 NumPy 数组（每个横坐标一个），``what`` 说明它们是什么。"""
    y = check.as_real_array(y, name)
    if y.shape != (length,) or np.any(y <= 0):
        raise ValueError(f"{name} 必须是 {length} 个正数（{what}；对数坐标画不出 ≤ 0 的数），"
                         f"收到的 shape={y.shape}、最小值 {y.min():.3g}。")
    return y


def positive(x: object, name: str) -> float:
    """有限正实数（例如颜色上限 vmax）。"""
    return check.positive_real(x, name)


def text(s: object, name: str) -> str:
    """一段要画出来的文字：必须是字符串；含 ``$`` 但不是合法 mathtext 时，把 ``$`` 转义成普通字符。

    本书的标题里有意写公式（``$\\sqrt{d_k}$``），所以合法的 mathtext 保留；像 "价格 $5 到 $6" 这样
    matplotlib 会当成公式、却又解析失败的文字，原样显示出来，而不是让整张图画不出来。
    """
    if not isinstance(s, str):
        raise TypeError(f"{name} 必须是字符串，收到的是 {type(s).__name__} {s!r}。")
    dollars = s.count("$") - s.count(r"\$")
    if dollars == 0 or dollars % 2:  # matplotlib 只把成对的 $ 当公式
        return s
    math = s.replace(r"\$", "").split("$")[1::2]  # 成对 $ 之间的部分
    if any(_cjk(part) for part in math):  # 公式字体没有汉字：画出来是一串方块
        return _escape(s)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for line in s.split("\n"):  # matplotlib 先按行拆开，再逐行解析公式（整段解析时换行符会被当成缺字）
                _PARSER.parse(line, dpi=72, prop=FontProperties())
    except (ValueError, RuntimeError):
        return _escape(s)
    return s


def _escape(s: str) -> str:
    return s.replace(r"\$", "$").replace("$", r"\$")


def _cjk(s: str) -> bool:
    return any("\u2e80" <= c <= "\u9fff" or "\uff00" <= c <= "\uffef" for c in s)


def labels(xs: object, name: str, n: int | None = None) -> list[str]:
    """一串名字（刻度、图例）：字符串的列表或元组，个数为 ``n``（给出时），每个都经过 ``text``。"""
    if not isinstance(xs, (list, tuple)):
        raise TypeError(f"{name} 必须是字符串的列表或元组，收到的是 {type(xs).__name__}。")
    if n is not None and len(xs) != n:
        raise ValueError(f"{name} 的个数 {len(xs)} 与数据不符：期望 {n} 个。")
    return [text(s, f"{name}[{i}]") for i, s in enumerate(xs)]
