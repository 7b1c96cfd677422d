"""plot/bars.py：柱状图（竖柱、横柱）的 set_values 改柱子和数字，以及文档里写明的报错。"""

import numpy as np
import pytest

import transformer_lab as tl
from transformer_lab import plot

from helpers.errors import call, error_table_test


def test_bars_set_values():
    bars = plot.weight_bars(np.zeros(3), ["x", "y", "z"])
    bars.set_values(np.array([0.2, 0.5, 0.3]))
    assert [b.get_height() for b in bars.bars] == [0.2, 0.5, 0.3]
    assert [(t.get_text(), t.get_position()[1]) for t in bars.texts] == [("0.20", 0.2), ("0.50", 0.5), ("0.30", 0.3)]


def test_horizontal_bars_start_at_zero_top_down_and_write_the_value_at_the_end():
    hb = plot.bars.horizontal_bars(3)
    ax = hb.bars[0].axes
    assert [b.get_width() for b in hb.bars] == [0.0, 0.0, 0.0] and [t.get_text() for t in hb.texts] == ["", "", ""]
    assert ax.get_ylim() == (2.5, -0.5) and ax.get_xlim() == (0.0, 1.2)  # 第 1 根在最上面；右边留出写数的地方
    hb.set_values(np.array([0.25, 0.7, 0.05]))
    assert [b.get_width() for b in hb.bars] == [0.25, 0.7, 0.05]
    assert [(t.get_text(), t.get_position()) for t in hb.texts] == [("0.25", (0.27, 0)), ("0.70", (0.72, 1)),
                                                                    ("0.05", (0.07, 2))]
    assert hb.artists == [*hb.bars, *hb.texts]


def test_horizontal_bars_draw_on_the_given_axes():
    fig, (ax,) = plot.new_figure(3.6, 2.0)
    hb = plot.bars.horizontal_bars(2, ax=ax, color="#e3702d")
    assert hb.bars[0].axes is ax
    assert hb.bars[1].get_facecolor()[:3] == pytest.approx((0xe3 / 255, 0x70 / 255, 0x2d / 255))


VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("weight_bars-nan", call(lambda: tl.plotting.weight_bars(np.array([0.5, np.nan]), ["a", "b"])), VE,
     r"values 含有 NaN"),
    ("weight_bars-label-int", call(lambda: tl.plotting.weight_bars(np.ones(2), ["a", 2])), TE, r"labels\[1\] 必须是字符串"),
    ("horizontal_bars-zero", call(lambda: plot.bars.horizontal_bars(0)), VE, r"^n 必须是正整数（>= 1），收到的是 0"),
    ("horizontal_bars-float", call(lambda: plot.bars.horizontal_bars(2.0)), TE, r"^n 必须是正整数.*float"),
    ("horizontal_bars-set-length", call(lambda: plot.bars.horizontal_bars(2).set_values(np.ones(3))), VE,
     r"values 的长度 3 与画好的柱子数 2 不符"),
]
test_documented_errors = error_table_test(ERROR_CASES)
