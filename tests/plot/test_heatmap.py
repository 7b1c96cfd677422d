"""plot/heatmap.py：热力图的 set_values 只改像素和数字、带标签的热力图可以跳过 0，以及文档里写明的报错。"""

import numpy as np

import transformer_lab as tl
from transformer_lab import plot

from helpers.errors import call, error_table_test


def test_heatmap_set_values_changes_pixels_and_numbers_only():
    heat = plot.attention_heatmap(np.eye(2), ["a", "b"])
    ax = heat.image.axes
    before = len(ax.get_children())
    heat.set_values(np.array([[0.25, 0.75], [1.0, 0.0]]))
    np.testing.assert_array_equal(heat.image.get_array(), [[0.25, 0.75], [1.0, 0.0]])
    assert [t.get_text() for t in heat.texts] == ["0.25", "0.75", "1.00", "0.00"]
    assert [t.get_color() for t in heat.texts] == ["white", "black", "black", "white"]  # 深色格子写白字
    assert len(ax.get_children()) == before and heat.artists == [heat.image, *heat.texts]


def test_labelled_heatmap_can_skip_zeros():
    m = np.array([[0.0, 1.0, 0.5], [2.0, 0.0, 0.0]])
    heat = plot.labelled_heatmap(m, ["r1", "r2"], ["c1", "c2", "c3"], skip_zeros=True, vmax=2.0)
    assert sorted(t.get_text() for t in heat.texts) == sorted(["1.00", "0.50", "2.00"])
    assert [t.get_text() for t in heat.image.axes.get_xticklabels()] == ["c1", "c2", "c3"]


def test_colorbar_below_moves_the_one_colorbar_under_the_map():
    fig, (ax,) = plot.new_figure(3.6, 4.0)
    heat = plot.attention_heatmap(np.eye(3), ["a", "b", "c"], ax=ax)
    plot.heatmap.colorbar_below(heat)
    (bar,) = [a for a in fig.axes if a is not ax]  # 还是只有一个色条
    assert heat.image.colorbar.ax is bar and bar.xaxis.get_visible() and heat.image.colorbar.orientation == "horizontal"
    fig.canvas.draw()
    assert bar.get_position().y1 < ax.get_position().y0  # 在热力图下面


def test_column_pointer_points_from_the_band_above_to_the_top_of_a_column():
    fig, (ax,) = plot.new_figure(3.6, 3.0)
    ax.imshow(np.zeros((4, 6)))
    ax.set_ylim(3.5, -3.0)  # 表的上方留一条空白带
    left = plot.heatmap.column_pointer(ax, "第 0 列", 0, (0, -2.0), "left", -1)
    right = plot.heatmap.column_pointer(ax, "最后一列", 5, (5.5, -1.0), "right", 3)
    assert left.xy == (0, -0.5) and right.xy == (5, -0.5)  # 第 0、5 列的顶边
    assert (left.get_text(), left.xyann, left.get_zorder()) == ("第 0 列", (0, -2.0), -1)
    assert left.arrowprops["relpos"] == (0.0, 0.0) and right.arrowprops["relpos"] == (1.0, 0.0)  # 从文字的哪一角出发
    assert (right.get_ha(), right.get_va(), right.get_fontsize()) == ("right", "bottom", 9.0)


VE = ValueError
ERROR_CASES = [
    ("heatmap-inf", call(lambda: tl.plotting.attention_heatmap(np.array([[np.inf]]), ["a"])), VE, r"weights 含有 inf"),
    ("labelled-heatmap-1d", call(plot.labelled_heatmap, np.ones(3), ["a"], ["b"]), VE,
     r"matrix 必须是非空的 2 维数组.*shape=\(3,\)"),
    ("labelled-heatmap-names", call(plot.labelled_heatmap, np.ones((2, 2)), ["a"], ["b", "c"]), VE,
     r"matrix 的形状 \(2, 2\) 与名字个数不符：期望 \(1, 2\)"),
    ("heatmap-vmax-0", call(lambda: tl.plotting.attention_heatmap(np.ones((1, 1)), ["a"], vmax=0)), VE,
     r"vmax 必须是有限的正实数"),
]
test_documented_errors = error_table_test(ERROR_CASES)
