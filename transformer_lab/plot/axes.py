"""坐标轴的摆法：不要坐标轴的子图、按英寸摆放的子图、固定范围的对数纵轴。

几张图共用（第 5、6 章自己排版的图，第 1 章的两张对数图）。本模块只依赖 matplotlib。
"""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.ticker import NullLocator

__all__ = ["blank", "inch_axes", "log_y_axes"]


def blank(ax: Axes) -> None:
    """不要坐标轴的子图（没有刻度、没有边框）。

    不用 ``ax.axis("off")``：局部重画 (blitting) 时引擎会把仍标为可见的边框重画出来。
    """
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_visible(False)


def inch_axes(ax: Axes, size: tuple[float, float], box: tuple[float, float, float, float]) -> None:
    """把子图放在大小为 ``size`` = (宽, 高) 的图上的 ``box`` = (左, 上, 宽, 高)（英寸，从左上角量），坐标就用英寸、
    y 朝下：排版可控，字号不随图缩放。子图没有坐标轴（``blank``），也不画白底：两块挨着时，后画的一块不会盖住
    前一块伸出来的字。"""
    (W, H), (x0, y0, w, h) = size, box
    ax.set_position((x0 / W, 1 - (y0 + h) / H, w / W, h / H))
    ax.set_xlim(x0, x0 + w)
    ax.set_ylim(y0 + h, y0)
    ax.set_autoscale_on(False)
    ax.patch.set_visible(False)
    blank(ax)


def log_y_axes(ax: Axes, xlabel: str, ylabel: str, xlim: tuple[float, float], ylim: tuple[float, float],
               yticks) -> None:
    """对数纵轴、固定范围（滑块的各帧可比）；纵轴只在 ``yticks`` 处写字、不画次刻度（拖动滑块时重绘更快）。"""
    ax.set_yscale("log")
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_yticks(yticks)
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3, axis="y")
