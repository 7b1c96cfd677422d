"""plot/bars.py：柱状图的 set_values 改柱高和数字，以及文档里写明的报错。"""

import numpy as np

import transformer_lab as tl
from transformer_lab import plot

from helpers.errors import call, error_table_test


def test_bars_set_values():
    bars = plot.weight_bars(np.zeros(3), ["x", "y", "z"])
    bars.set_values(np.array([0.2, 0.5, 0.3]))
    assert [b.get_height() for b in bars.bars] == [0.2, 0.5, 0.3]
    assert [(t.get_text(), t.get_position()[1]) for t in bars.texts] == [("0.20", 0.2), ("0.50", 0.5), ("0.30", 0.3)]


VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("weight_bars-nan", call(lambda: tl.plotting.weight_bars(np.array([0.5, np.nan]), ["a", "b"])), VE,
     r"values 含有 NaN"),
    ("weight_bars-label-int", call(lambda: tl.plotting.weight_bars(np.ones(2), ["a", 2])), TE, r"labels\[1\] 必须是字符串"),
]
test_documented_errors = error_table_test(ERROR_CASES)
