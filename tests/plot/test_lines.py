"""plot/lines.py：曲线的坐标刻度与图例、预测对目标的散点图，以及文档里写明的报错。"""

import numpy as np

import transformer_lab as tl
from transformer_lab import plot

from helpers.errors import call, error_table_test


def test_line_plot_scales_and_labels():
    lines = plot.line_plot(np.array([1.0, 10.0, 100.0]), {"a": np.array([1.0, 2.0, 3.0]), "b": np.ones(3)},
                           xscale="log", title="t")
    ax = lines[0].axes
    assert (ax.get_xscale(), ax.get_yscale(), ax.get_title()) == ("log", "linear", "t")
    assert [line.get_label() for line in lines] == ["a", "b"]


def test_scatter_vs_target_plots_prediction_against_target():
    dots = plot.scatter_vs_target(np.array([1.0, 2.0, 3.0]), np.array([1.5, 2.0, 2.5]))
    np.testing.assert_array_equal(dots.get_offsets(), [[1.0, 1.5], [2.0, 2.0], [3.0, 2.5]])


VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("line_plot-length", call(lambda: tl.plotting.line_plot(np.ones(3), {"a": np.ones(2)})), VE,
     r"ys\['a'\] 的长度 2 与 x 的长度 3 不符"),
    ("line_plot-nan", call(lambda: tl.plotting.line_plot(np.arange(3.0), {"a": np.array([1, np.nan, 2])})), VE,
     r"ys\['a'\] 含有 NaN"),
    ("line_plot-log-zero", call(lambda: tl.plotting.line_plot(np.arange(3.0), {"a": np.ones(3)}, xscale="log")), VE,
     r"xscale='log' 时数值必须都 > 0"),
    ("line_plot-ys-list", call(lambda: tl.plotting.line_plot(np.arange(3.0), [np.ones(3)])), TE, r"ys 必须是非空的字典"),
    ("scatter-nan", call(lambda: tl.plotting.scatter_vs_target(np.ones(2), np.array([1.0, np.nan]))), VE,
     r"prediction 含有 NaN"),
]
test_documented_errors = error_table_test(ERROR_CASES)
