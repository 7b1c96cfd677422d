"""柱状图：一组权重（或分数），柱顶写数值；手机上词多时，柱子横过来画（数写在柱子右端）。"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib
import numpy as np
from matplotlib.axes import Axes

from .. import _validation as check
from . import checks
from .figure import MIN_FONT_PT, new_figure

__all__ = ["Bars", "weight_bars", "HorizontalBars", "horizontal_bars"]


@dataclass
class Bars:
    """``weight_bars`` 画出的柱子和柱顶数字，可用 ``set_values`` 换数据。"""

    bars: matplotlib.container.BarContainer
    texts: list

    @property
    def artists(self) -> list:
        """随数据变化的图元（给可交互图的局部重画用）。"""
        return [*self.bars, *self.texts]

    def set_values(self, values: np.ndarray) -> None:
        """换一组同长度的数值，只改柱子的长短和数字。"""
        values = checks.values(values, "values", 1)
        if len(values) != len(self.bars):
            raise ValueError(f"values 的长度 {len(values)} 与画好的柱子数 {len(self.bars)} 不符。")
        for bar, text, value in zip(self.bars, self.texts, values):
            self._place(bar, text, value)
            text.set_text(f"{value:.2f}")

    @staticmethod
    def _place(bar, text, value: float) -> None:
        """竖柱：柱高是数值，数字写在柱顶。"""
        bar.set_height(value)
        text.set_y(value)


def weight_bars(
    values: np.ndarray,
    labels: list[str],
    ax: Axes | None = None,
    title: str = "",
    ylim: tuple[float, float] = (0.0, 1.0),
    color: str = "#31688e",
) -> Bars:
    """一组权重（或分数）的柱状图，柱顶写数值。

    Parameters
    ----------
    values : ndarray of shape (S,)
    labels : list of str, length S
    ax : Axes, optional
    title : str
    ylim : (float, float)
        纵轴范围，固定下来，滑块移动时柱子的高低才可比。
    color : str

    Returns
    -------
    Bars

    Raises
    ------
    TypeError, ValueError
        ``values`` 不是一维实数数组、含 NaN/inf，或长度与 ``labels`` 不符；标签不是字符串。
    """
    values = checks.values(values, "values", 1)
    labels = checks.labels(labels, "labels")
    if values.shape != (len(labels),):
        raise ValueError(f"values 的形状 {values.shape} 与标签数 {len(labels)} 不符。")
    title = checks.text(title, "title")
    if ax is None:
        ax = new_figure(4.5, 3.0)[1][0]
    bars = ax.bar(range(len(labels)), values, color=color)
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylim(*ylim)
    ax.set_title(title)
    texts = [ax.text(i, v, f"{v:.2f}", ha="center", va="bottom", fontsize=MIN_FONT_PT) for i, v in enumerate(values)]
    return Bars(bars, texts)


class HorizontalBars(Bars):
    """``horizontal_bars`` 画出的横柱和柱子右端的数字（0 到 1 的权重），可用 ``set_values`` 换数据。"""

    @staticmethod
    def _place(bar, text, value: float) -> None:
        """横柱：柱长是数值，数字写在柱子右端。"""
        bar.set_width(value)
        text.set_x(value + 0.02)


def horizontal_bars(n: int, ax: Axes | None = None, color: str = "#31688e") -> HorizontalBars:
    """``n`` 根横着的柱子，第 i 根在第 i 行（第 1 根在最上面），先都是 0，用 ``set_values`` 填上权重。

    一行权重有十几个数时，竖柱顶上的数在手机上挤不下：柱子横过来，词竖着列在左边（纵轴的刻度字由调用者写），
    数写在柱子右端。横轴固定为 0 到 1.2（权重最大是 1，右边留出写数的地方）。

    Parameters
    ----------
    n : int
        柱子的根数。
    ax : Axes, optional
    color : str

    Returns
    -------
    HorizontalBars

    Raises
    ------
    TypeError, ValueError
        ``n`` 不是正整数。
    """
    n = check.positive_int(n, "n")
    if ax is None:
        ax = new_figure(3.6, 0.3 * n + 1.0)[1][0]
    bars = ax.barh(range(n), np.zeros(n), color=color, height=0.7)
    texts = [ax.text(0.0, i, "", va="center", ha="left", fontsize=MIN_FONT_PT) for i in range(n)]
    ax.set_ylim(n - 0.5, -0.5)  # 第 1 根在最上面
    ax.set_xlim(0.0, 1.2)  # 右边留出写数的地方（权重最大是 1）
    ax.set_xticks([0.0, 0.5, 1.0])
    return HorizontalBars(bars, texts)
