"""测试专用的小图（画一帧只要几毫秒）：引擎和 HTML 格式的测试都用它们，不必去画书里的图。

``tests/helpers/`` 里只有被测试导入的工具，没有测试；测试模块之间不互相导入。
"""

from __future__ import annotations

import numpy as np

from transformer_lab.widgets.explorable import Explorable, Slider

# 标签文字里有能关掉 <script> 的字符串
NASTY = 'a & b </script><!--<script> "c"'


class Line:
    """一条从 (0, 0) 到 (1, a) 的线；``top`` 是 y 轴的上限。"""

    def __init__(self, fig, axes, layout, top):
        self.line, = axes[0].plot([0, 1], [0, 0])
        axes[0].set_ylim(0, top)
        self.artists = [self.line]

    def update(self, a):
        self.line.set_ydata([0, a])
        return {"y": np.array([0.0, a])}


class Labels:
    """滑块取值是字符串：图上写出它有几个字符。"""

    def __init__(self, fig, axes, layout):
        self.text = axes[0].text(0.5, 0.5, "")
        self.artists = [self.text]

    def update(self, a):
        self.text.set_text(str(len(a)))
        return {"n": np.array([len(a)])}


class Titled:
    """有标题和刻度的图：``title`` 写在子图上（窄版用 ``narrow_title``，没给就用同一个），刻度字 ``tick_pt``。"""

    def __init__(self, fig, axes, layout, title, narrow_title=None, tick_pt=10):
        for ax in axes:
            ax.set_title(narrow_title if layout.narrow and narrow_title else title, fontsize=14)
            ax.tick_params(labelsize=tick_pt)
        self.line, = axes[0].plot([0, 1], [0, 0])
        self.artists = [self.line]

    def update(self, **params):
        self.line.set_ydata([0, params.get("a", 0)])
        return {}


class Exploding:
    """一建图就报错的 view：用来证明某件事不需要建图（网格、替代文字、帧数上限……）。"""

    def __init__(self, fig, axes, layout):
        raise RuntimeError("这个 view 不该被建出来")

    def update(self, **params):  # 任意滑块都行
        return {}


def tiny(label: str = "a", title: str = "直线", alt: str = "斜率 {a}", values=(1, 2, 3), **options) -> Explorable:
    """一个滑块 ``a`` 的直线图（2 × 1.5 英寸）。"""
    return Explorable(Line, [Slider("a", values, label=label)], title=title, alt=alt, data={"top": max(values)},
                      size=(2.0, 1.5), **options)
