"""plot/figure.py：中文字体（含"缺字时真的会报警"的反证）、tl.plotting 就是本包、书里的图存成可复现的 PNG。"""

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


def test_book_figure_png_is_reproducible():
    """同样的图得到同样的字节（PNG 里没有版本号之类的元数据）。"""
    def draw():
        fig, (ax,) = plot.new_figure(2, 2)
        ax.plot([0, 1], [1, 0])
        return fig.to_png()

    png = draw()
    assert png == draw() and png.startswith(b"\x89PNG") and b"Software" not in png
