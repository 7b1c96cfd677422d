"""plot/axes.py：固定范围、只在给定处写刻度的对数纵轴。"""

from matplotlib.ticker import NullLocator

from transformer_lab.plot.axes import log_y_axes
from transformer_lab.plot.figure import new_figure


def test_log_y_axes_is_fixed_with_only_the_given_ticks():
    fig, (ax,) = new_figure(3.0, 2.0)
    log_y_axes(ax, "第 t 步", "影响力", (1, 60), (1e-30, 1e20), [1e-30, 1e-10, 1e10])
    ax.plot([1, 60], [1e-40, 1e40])  # 后画的曲线冲出上下沿：范围不变（各帧可比）
    assert ax.get_yscale() == "log" and ax.get_xlim() == (1, 60) and ax.get_ylim() == (1e-30, 1e20)
    assert list(ax.get_yticks()) == [1e-30, 1e-10, 1e10] and isinstance(ax.yaxis.get_minor_locator(), NullLocator)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("第 t 步", "影响力")
    assert ax.yaxis.get_gridlines()[0].get_visible() and not ax.xaxis.get_gridlines()[0].get_visible()  # 只有横线
