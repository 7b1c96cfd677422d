"""plot/text.py：量字的宽度（英寸）——取最宽的一段，和画在别的分辨率上的同一段字差不到两个 72 dpi 像素，随字号变宽。"""

from transformer_lab.plot.figure import new_figure
from transformer_lab.plot.text import text_width

PIXEL = 1 / 72  # text_width 在 72 dpi 上排版：宽度是整像素，精度约 1/72 英寸


def test_text_width_is_the_widest_and_matches_a_drawn_text():
    wide = text_width(["四步的形状", "ab", "Q"], 9.0)
    assert wide == text_width(["四步的形状"], 9.0)
    fig, (ax,) = new_figure(3.0, 1.0, dpi=100)
    drawn = ax.text(0, 0, "四步的形状", fontsize=9.0).get_window_extent(fig.canvas.get_renderer()).width / 100
    assert abs(wide - drawn) <= 2 * PIXEL  # 5 个汉字约 5 × 9 pt = 0.625 英寸


def test_text_width_grows_with_the_font_size_and_the_text():
    assert 1.9 < text_width(["softmax"], 18.0) / text_width(["softmax"], 9.0) < 2.2  # 字号翻倍，宽度约翻倍（取整像素）
    assert 0 < text_width(["i"], 9.0) < text_width(["汉"], 9.0) <= 9.0 / 72 + PIXEL  # 一个汉字约一个字号宽
    assert text_width(["汉字"], 9.0) > text_width(["汉"], 9.0)
