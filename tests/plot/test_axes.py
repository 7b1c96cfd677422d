"""plot/axes.py：不要坐标轴的子图、按英寸摆放的子图、固定范围且只在给定处写刻度的对数纵轴。"""

import pytest
from matplotlib.ticker import NullLocator

from transformer_lab.plot.axes import blank, inch_axes, log_y_axes
from transformer_lab.plot.figure import new_figure


def test_log_y_axes_is_fixed_with_only_the_given_ticks():
    fig, (ax,) = new_figure(3.0, 2.0)
    log_y_axes(ax, "第 t 步", "影响力", (1, 60), (1e-30, 1e20), [1e-30, 1e-10, 1e10])
    ax.plot([1, 60], [1e-40, 1e40])  # 后画的曲线冲出上下沿：范围不变（各帧可比）
    assert ax.get_yscale() == "log" and ax.get_xlim() == (1, 60) and ax.get_ylim() == (1e-30, 1e20)
    assert list(ax.get_yticks()) == [1e-30, 1e-10, 1e10] and isinstance(ax.yaxis.get_minor_locator(), NullLocator)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("第 t 步", "影响力")
    assert ax.yaxis.get_gridlines()[0].get_visible() and not ax.xaxis.get_gridlines()[0].get_visible()  # 只有横线


def test_blank_hides_ticks_and_frame_but_keeps_the_axes_on():
    fig, (ax,) = new_figure(2.0, 2.0)
    blank(ax)
    assert list(ax.get_xticks()) == [] and list(ax.get_yticks()) == []
    assert not any(spine.get_visible() for spine in ax.spines.values())
    assert ax.axison  # 不是 axis("off")：局部重画时边框不会被重画出来


def test_inch_axes_places_the_box_in_inches_with_y_down():
    fig, (ax,) = new_figure(6.8, 3.65)
    fig.set_layout_engine("none")
    inch_axes(ax, (6.8, 3.65), (4.35, 0.0, 2.45, 3.65))  # 第 6 章宽版的计数器：右边 2.45 英寸
    x0, y0, w, h = ax.get_position().bounds
    assert (x0 * 6.8, y0 * 3.65, w * 6.8, h * 3.65) == pytest.approx((4.35, 0.0, 2.45, 3.65))
    assert ax.get_xlim() == (4.35, 6.8) and ax.get_ylim() == (3.65, 0.0)  # 坐标就是英寸，y 朝下
    ax.plot([0, 100], [0, 100])
    assert ax.get_xlim() == (4.35, 6.8)  # 不再自动缩放
    assert not ax.patch.get_visible() and list(ax.get_xticks()) == []
