"""图上的字：量一段字有多宽（英寸），手机上的长句子和长标题怎样断行，写在图上的数怎样写。

自己排版的图（第 4 章的形状图）先量字再摆东西；第 2 章的句子标题、第 3 章的散点图标题在手机上断成几行；
第 3 章的两张图在标题里写点积和余弦，第 1 章的图写跨好几十个数量级的影响力。本模块只依赖 matplotlib 与 NumPy，不导入本包的任何数学模块。
"""

from __future__ import annotations

import numpy as np

from .figure import new_figure

__all__ = ["text_width", "char_width", "wrap_sentence", "wrap_title", "clean_number", "factor_text", "title_number",
           "NARROW_LINE", "BREAK_AFTER", "BREAK_BEFORE"]

NARROW_LINE = 40  # 窄版一行最多放几个"半角宽"（汉字算 2 个）：11 pt 的字在 3.6 英寸里约放得下 46 个
BREAK_AFTER, BREAK_BEFORE = "，。？！；：、）”", "（“"  # 标题在这些标点后面（前面）断行


def text_width(texts, pt: float) -> float:
    """这些字（``pt`` 磅）里最宽的一段有多宽（英寸）：用 matplotlib 真的排一次版来量。

    Examples
    --------
    >>> bool(text_width(["a", "ab"], 9.0) < text_width(["汉字"], 9.0) < 0.3)
    True
    """
    fig, _ = new_figure(1.0, 1.0, dpi=72)
    renderer = fig.canvas.get_renderer()
    return max(fig.text(0, 0, t, fontsize=pt).get_window_extent(renderer).width for t in texts) / 72


def char_width(text: str) -> int:
    """一段字占几个"半角宽"：汉字和全角标点算 2 个。

    >>> char_width("it 指谁？")
    9
    """
    return sum(1 if c.isascii() else 2 for c in text)


def wrap_sentence(text: str, width: int = NARROW_LINE) -> str:
    """把一句话在 ``width`` 个半角宽以内断成几行（手机上的标题）：英文在空格处断，中文在逗号后断。

    Examples
    --------
    >>> print(wrap_sentence("The animal didn't cross the street because it was too tired."))
    The animal didn't cross the street
    because it was too tired.
    >>> print(wrap_sentence("小明把苹果递给小红，因为她饿了"))
    小明把苹果递给小红，因为她饿了
    >>> print(wrap_sentence("小明把苹果递给小红，因为她饿了", width=20))
    小明把苹果递给小红，
    因为她饿了
    """
    lines, line = [], ""
    for word in text.replace("，", "， ").split(" "):
        joined = f"{line} {word}" if line and line[-1] != "，" else line + word
        if line and char_width(joined) > width:
            lines.append(line)
            joined = word
        line = joined
    return "\n".join([*lines, line])


def wrap_title(title: str, max_chars: int = 16) -> str:
    """手机上的标题：超过 ``max_chars`` 个字时，在最靠近中间的标点处断成两行（已有换行就不动）。

    >>> wrap_title("“借到的书有几页？”每个点是一个书架（书的坐标为讲解设计）")
    '“借到的书有几页？”每个点是一个书架\\n（书的坐标为讲解设计）'
    """
    if "\n" in title or len(title) <= max_chars:
        return title
    spots = [i + 1 for i, ch in enumerate(title[:-1]) if ch in BREAK_AFTER]
    spots += [i for i, ch in enumerate(title) if ch in BREAK_BEFORE and i > 0]
    cut = min(spots, key=lambda i: abs(i - len(title) / 2)) if spots else len(title) // 2
    return f"{title[:cut]}\n{title[cut:]}"


def clean_number(x: float) -> float:
    """要写在图上的数：去掉 cos 90° ≈ 6e-17 这类浮点残渣（保留 12 位小数），也不留 -0.0，免得图上出现 −0.00。

    >>> clean_number(float(np.cos(np.pi / 2))), clean_number(-1e-17), clean_number(0.1 + 0.2)
    (0.0, 0.0, 0.3)
    """
    return float(np.round(x, 12)) + 0.0


def factor_text(x: float) -> str:
    """乘式里的一个因子，两位小数；负数加括号：``2 × (-0.87)``。

    >>> factor_text(0.5), factor_text(-0.866)
    ('0.50', '(-0.87)')
    """
    return f"({x:.2f})" if x < 0 else f"{x:.2f}"


def title_number(value: float) -> str:
    """标题里的数：0.01 到 1000 之间写 3 位有效数字，太大太小写成 1.0e-08（= 1.0 × 10 的 −8 次方）。

    不用 mathtext：拖动滑块时标题每次都是新字符串，解析 mathtext 每次要好几毫秒。

    >>> title_number(0.123456), title_number(123.456), title_number(1e-8), title_number(-12345.0)
    ('0.123', '123', '1.0e-08', '-1.2e+04')
    """
    return f"{value:.3g}" if 0.01 <= abs(value) < 1000 else f"{value:.1e}"
