"""柱状图：一组权重（或分数），柱顶写数值。"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib
import numpy as np
from matplotlib.axes import Axes

from . import checks
from .figure import MIN_FONT_PT, new_figure

__all__ = ["Bars", "weight_bars"]


@dataclass
class Bars:
    """``weight_bars`` 画出的柱子和柱顶数字，可用 ``update`` 换数据。"""

    bars: matplotlib.container.BarContainer
    texts: list

    @property
    def artists(self) -> list:
        """随数据变化的图元（给可交互图的局部重画用）。"""
        return [*self.bars, *self.texts]

    def set_values(self, values: np.ndarray) -> None:
        """换一组同长度的数值，只改柱高和数字。"""
        values = checks.values(values, "values", 1)
        if len(values) != len(self.bars):
            raise ValueError(f"values 的长度 {len(values)} 与画好的柱子数 {len(self.bars)} 不符。")
        for bar, text, value in zip(self.bars, self.texts, values):
            bar.set_height(value)
            text.set_y(value)
            text.set_text(f"{value:.2f}")


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
