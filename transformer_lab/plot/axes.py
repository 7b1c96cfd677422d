"""坐标轴的摆法：固定范围的对数纵轴。

几张图共用（第 1 章的两张对数图）。本模块只依赖 matplotlib。
"""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.ticker import NullLocator

__all__ = ["log_y_axes"]


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
