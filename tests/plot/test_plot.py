"""plot/：画图小函数——中文字体（含"缺字时真的会报警"的反证）、热力图与柱状图的 set_values、曲线的坐标刻度。"""

import io
import warnings

import matplotlib
import numpy as np
import pytest

import transformer_lab as tl
from transformer_lab import plot


def _render_mixed_text():
    """一张同时有中文、拉丁字母、数学公式和 Unicode 减号的热力图，存成 PNG。"""
    heat = plot.attention_heatmap(np.full((3, 3), 1 / 3), ["小明", "它", "cat"],
                                  title="注意力权重 softmax $\\sqrt{d_k}$ −1")
    buf = io.BytesIO()
    heat.image.axes.figure.savefig(buf, format="png")
    return buf.getvalue()


def test_plotting_alias_is_the_plot_package():
    assert tl.plotting is plot


def test_setup_fonts_picks_a_cjk_font_first():
    with matplotlib.rc_context():
        name = plot.setup_fonts()
        assert name is not None and ("CJK" in name or "SC" in name)
        assert matplotlib.rcParams["font.sans-serif"][0] == name


def test_chinese_latin_and_math_render_without_warnings():
    with matplotlib.rc_context(), warnings.catch_warnings():
        plot.setup_fonts()
        warnings.simplefilter("error")
        png = _render_mixed_text()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")


def test_missing_glyph_warning_fires_with_latin_only_font():
    # 反证：只用 DejaVu Sans（没有汉字）时必须出现缺字警告——证明上面那个测试真的能失败
    with matplotlib.rc_context({"font.family": ["sans-serif"], "font.sans-serif": ["DejaVu Sans"]}):
        with pytest.warns(UserWarning, match=r"Glyph \d+ .*missing from font"):
            _render_mixed_text()


def test_multi_line_title_with_math_logs_nothing(caplog):
    # 标题里既有公式又有换行（第 3 章的"手工设计的示意"）：检查公式时要逐行解析，
    # 整段解析会让 matplotlib 把换行符当成缺字，往 stderr 打一条日志（notebook 的存档输出就对不上了）
    title = "原来的提问眼镜 $W_Q$\n（手工设计的示意，不是训练所得）"
    with caplog.at_level("WARNING", logger="matplotlib"):
        heat = plot.attention_heatmap(np.full((2, 2), 0.5), ["小猫", "鱼"], title=title)
        heat.image.axes.figure.canvas.draw()
    assert heat.image.axes.get_title() == title
    assert not caplog.records, [r.getMessage() for r in caplog.records]


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


def test_bars_set_values():
    bars = plot.weight_bars(np.zeros(3), ["x", "y", "z"])
    bars.set_values(np.array([0.2, 0.5, 0.3]))
    assert [b.get_height() for b in bars.bars] == [0.2, 0.5, 0.3]
    assert [(t.get_text(), t.get_position()[1]) for t in bars.texts] == [("0.20", 0.2), ("0.50", 0.5), ("0.30", 0.3)]


def test_line_plot_scales_and_labels():
    lines = plot.line_plot(np.array([1.0, 10.0, 100.0]), {"a": np.array([1.0, 2.0, 3.0]), "b": np.ones(3)},
                           xscale="log", title="t")
    ax = lines[0].axes
    assert (ax.get_xscale(), ax.get_yscale(), ax.get_title()) == ("log", "linear", "t")
    assert [line.get_label() for line in lines] == ["a", "b"]


def test_scatter_vs_target_plots_prediction_against_target():
    dots = plot.scatter_vs_target(np.array([1.0, 2.0, 3.0]), np.array([1.5, 2.0, 2.5]))
    np.testing.assert_array_equal(dots.get_offsets(), [[1.0, 1.5], [2.0, 2.0], [3.0, 2.5]])


def test_book_figure_png_is_reproducible():
    """同样的图得到同样的字节（PNG 里没有版本号之类的元数据）。"""
    def draw():
        fig, (ax,) = plot.new_figure(2, 2)
        ax.plot([0, 1], [1, 0])
        return fig.to_png()

    png = draw()
    assert png == draw() and png.startswith(b"\x89PNG") and b"Software" not in png
