"""图上的字：量一段字有多宽（英寸）。

自己排版的图（第 4 章的形状图）先量字再摆东西。本模块只依赖 matplotlib，不导入本包的任何数学模块。
"""

from __future__ import annotations

from .figure import new_figure

__all__ = ["text_width"]


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
