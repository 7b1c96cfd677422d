"""``plot/sampling.py``：采样柱状图（第 9、12 章共用）。"""

from __future__ import annotations

import matplotlib
import numpy as np

from transformer_lab.plot.figure import new_figure
from transformer_lab.plot.sampling import DROPPED, KEPT, SamplingBars, sampling_title


def draw():
    fig, (ax,) = new_figure(4.0, 3.0)
    view = SamplingBars(fig, ax, np.array([0.5, 0.3, 0.2]), ["a", "b", "c"], unit="词元", tick_style={"fontsize": 9},
                        marker_size=14, ylabel="概率", xlabel=None, title_size=10)
    return fig, ax, view


def test_show_sets_heights_colours_note_and_title():
    fig, ax, view = draw()
    view.show(np.array([0.7, 0.3, 0.0]), "2", "标题")
    assert [b.get_height() for b in view.bars] == [0.7, 0.3, 0.0]
    colours = [matplotlib.colors.to_hex(b.get_facecolor()) for b in view.bars]
    assert colours == [KEPT, KEPT, DROPPED]                      # 概率为 0 的（被截掉的）画成灰色
    assert view.note.get_text() == "还能被抽到的词元：2 个\n最高的一根：0.70"
    assert view.suptitle.get_text() == "标题"
    assert view.artists == [*view.bars, view.note, view.suptitle]


def test_baseline_ticks_and_axes():
    fig, ax, view = draw()
    (line,) = ax.get_lines()                                      # 原始概率：每个候选一根小横线
    assert list(line.get_ydata()) == [0.5, 0.3, 0.2] and line.get_marker() == "_"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]
    assert ax.get_ylim() == (0, 1.05) and ax.get_xlabel() == ""


def test_title_names_greedy_only_at_temperature_zero():
    assert sampling_title(0.0, 5, 0.9, False, "").startswith("温度 0（贪心）")
    assert "贪心" not in sampling_title(1.0, 5, 0.9, False, "")
    assert sampling_title(1.0, 5, 0.9, True, "：宽", "\n窄") == "温度 1，top-k 5，top-p 0.9\n窄"
