"""plot/vectors.py：从原点出发的箭头（改 ``.xy`` 移动箭头尖），等比例、固定范围的坐标平面。"""

import numpy as np

from transformer_lab.plot.figure import new_figure
from transformer_lab.plot.vectors import origin_arrow, vector_plane


def test_origin_arrow_starts_at_zero_and_moves_its_tip():
    fig, (ax,) = new_figure(3.0, 3.0)
    arrow = origin_arrow(ax, np.array([2.0, 0.0]), "#31688e", lw=3, zorder=2)
    assert arrow.xy == (2.0, 0.0) and arrow.xyann == (0.0, 0.0) and arrow.get_zorder() == 2
    props = arrow.arrowprops
    assert (props["color"], props["lw"], props["arrowstyle"]) == ("#31688e", 3, "-|>")
    arrow.xy = (-1.0, 1.5)
    fig.canvas.draw()  # 移动之后照样画得出来
    assert arrow.xy == (-1.0, 1.5)


def test_vector_plane_is_fixed_and_equal_aspect():
    fig, (ax,) = new_figure(3.0, 3.0)
    vector_plane(ax, (-3.4, 3.4), (-1.3, 3.4), "射箭打靶", 10.5)
    ax.plot([0, 10], [0, 10])  # 后画的东西不会把范围撑开
    assert ax.get_xlim() == (-3.4, 3.4) and ax.get_ylim() == (-1.3, 3.4) and ax.get_aspect() == 1.0
    assert ax.get_title() == "射箭打靶" and ax.title.get_fontsize() == 10.5
    assert len(ax.lines) == 3  # 横轴、竖轴，加上面那条线
