"""plot/ticks.py：对数轴上挑刻度（太挤的去掉、最大值的一位有效数字）的手算例子，斜着写的刻度字。"""

import numpy as np

from transformer_lab.plot.figure import new_figure
from transformer_lab.plot.ticks import log_ticks, slanted_ticks, spread_ticks

DIMS = np.array([1, 4, 16, 64, 256, 512])


def test_spread_ticks_by_hand():
    assert spread_ticks(DIMS, 0.45) == [1, 4, 16, 64, 512]  # log10(512/256) = 0.3 < 0.45：256 去掉
    assert spread_ticks(DIMS, 0.25) == [1, 4, 16, 64, 256, 512]  # 0.3 ≥ 0.25：都留着
    assert spread_ticks(DIMS, 0.7) == [4, 64, 512]  # 256 差 0.3 跳过，64 差 0.9 留；16 差 0.6 跳过，4 差 1.2 留；1 跳过
    assert spread_ticks(np.array([3.0]), 1.0) == [3.0]  # 只有一个：最大的总留着


def test_spread_ticks_keeps_the_largest_and_gaps_of_at_least_decades():
    values = np.geomspace(1, 1e4, 37)
    for decades in (0.1, 0.5, 1.0, 2.0):
        kept = spread_ticks(values, decades)
        assert kept[-1] == values[-1] and kept == sorted(kept)
        assert np.all(np.diff(np.log10(kept)) >= decades - 1e-12)


def test_log_ticks_by_hand():
    assert log_ticks(np.array([0.98, 503.0])) == ([1.0, 10.0, 100.0, 500.0], ["1", "10", "100", "500"])
    assert log_ticks(np.array([1.0, 120.0]))[0] == [1.0, 10.0, 100.0]  # 100 到 120 之间不再加一个刻度
    assert log_ticks(np.array([2.0, 5.0])) == ([5.0], ["5"])  # 范围里没有 10 的整数次幂：只写最大值
    assert log_ticks(np.array([0.01, 0.5]))[1] == ["0.01", "0.1", "0.5"]


def test_slanted_ticks_label_every_position_at_45_degrees():
    fig, (ax,) = new_figure(3.0, 2.0)
    slanted_ticks(ax, ("The", "animal", "it"))
    assert list(ax.get_xticks()) == [0, 1, 2]
    labels = ax.get_xticklabels()
    assert [t.get_text() for t in labels] == ["The", "animal", "it"]
    assert {(t.get_rotation(), t.get_ha(), t.get_rotation_mode()) for t in labels} == {(45.0, "right", "anchor")}
