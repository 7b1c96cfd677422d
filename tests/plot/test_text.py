"""plot/text.py：量字的宽度（英寸）——取最宽的一段，和画在别的分辨率上的同一段字差不到两个 72 dpi 像素，随字号变宽；
手机上的标题怎样断行，写在图上的数。"""

from transformer_lab.plot.figure import new_figure
from transformer_lab.plot.text import (
    char_width,
    clean_number,
    factor_text,
    text_width,
    title_number,
    wrap_sentence,
    wrap_title,
)

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


def test_wrap_title_breaks_near_the_middle_at_punctuation():
    assert wrap_title("短标题") == "短标题"
    assert wrap_title("已经\n分好行的很长很长很长很长很长的标题") == "已经\n分好行的很长很长很长很长很长的标题"
    assert wrap_title("一二三四五六七八九十，一二三四五六七八九十") == "一二三四五六七八九十，\n一二三四五六七八九十"
    assert wrap_title("一二三四五六七八九十一二三四五六七八九十") == "一二三四五六七八九十\n一二三四五六七八九十"  # 没有标点：对半
    assert wrap_title("甲乙丙丁戊己庚辛壬癸（子丑寅卯辰巳午未）") == "甲乙丙丁戊己庚辛壬癸\n（子丑寅卯辰巳午未）"  # 括号前断


def test_wrap_sentence_counts_chinese_as_two_and_keeps_every_word():
    assert char_width("it") == 2 and char_width("它，") == 4
    text = "The animal didn't cross the street because it was too tired."
    for width in (10, 20, 40, 80):
        lines = wrap_sentence(text, width).split("\n")
        assert " ".join(lines) == text  # 只在空格处断，一个词也不丢
        assert all(char_width(line) <= width for line in lines if " " in line)  # 一行超宽只因为一个词本身太长
    assert wrap_sentence("小明把苹果递给小红，因为她饿了，所以吃了", width=20) == "小明把苹果递给小红，\n因为她饿了，所以吃了"


def test_numbers_written_on_the_figure():
    assert [clean_number(x) for x in (6.123e-17, -1e-13, 2.0000000000001, -0.5)] == [0.0, 0.0, 2.0, -0.5]
    assert f"{clean_number(-1e-13):.2f}" == "0.00"  # 不是 "-0.00"
    assert [factor_text(x) for x in (0.0, 1.5, -0.866)] == ["0.00", "1.50", "(-0.87)"]


def test_title_number_switches_to_exponent_outside_0_01_to_1000():
    assert [title_number(x) for x in (0.01, 0.5, 1.0, 999.0, 1000.0, 0.0099, 3.2e-30, 4e20)] == [
        "0.01", "0.5", "1", "999", "1.0e+03", "9.9e-03", "3.2e-30", "4.0e+20"]
