"""第 2 章的图讲的事实：it → animal（换成 wide 就 → street），她 → 小红；权重是手工设计的，图上写明。

可交互图的事实只用 ``ex.update``（算数据）；画图的约定在 tests/test_explorables.py 里对所有可交互图统一检查。
这里另外检查：窄版（手机）确实和宽版不同的地方，以及不在目录里的两张静态图（特征热力图）的数据和字号。
"""

import dataclasses
import warnings

import numpy as np
import pytest

import transformer_lab as tl
from transformer_lab.figures import ch02_self_attention as ch02
from transformer_lab.lessons import toy_sentences as toy

from helpers.errors import call, error_table_test
from helpers.layouts import drawn, reads_on_both, texts

SENTENCES = toy.sentence_names()


@pytest.fixture(scope="module", params=SENTENCES)
def explorer(request):
    return request.param, ch02.attention_explorer(request.param)


def test_explorer_starts_on_the_pronoun_in_round_two(explorer):
    name, ex = explorer
    s = toy.toy_sentence(name)
    assert ex.start == {"query": s.tokens[s.pronoun], "turn": "第 2 轮"}


def test_explorer_rows_are_the_discussion_weights(explorer):
    name, ex = explorer
    s = toy.toy_sentence(name)
    _, weights = toy.discuss(s.x)
    for i, tok in enumerate(s.tokens):
        for t, turn in enumerate(ch02.TURNS):
            drawn = ex.update(query=tok, turn=turn)
            np.testing.assert_array_equal(drawn["row"], weights[t][i])
            np.testing.assert_array_equal(drawn["weights"], weights[t])


def test_the_pronoun_finds_its_referent_in_round_two(explorer):
    name, ex = explorer
    s = toy.toy_sentence(name)
    row = ex.update(**ex.start)["row"]
    assert s.tokens[int(row.argmax())] == s.referent  # it → animal，她 → 小红


@pytest.mark.parametrize("name", SENTENCES)
def test_shift_moves_to_the_referent(name):
    ex = ch02.pronoun_shift(name)
    for variant in toy.variant_names(name):
        s = toy.toy_sentence(name, variant)
        drawn = ex.update(variant=variant)
        assert int(drawn["turn1"].argmax()) == s.predicate  # 第 1 轮：找到换掉的那个描述词
        assert s.tokens[int(drawn["turn2"].argmax())] == s.referent  # 第 2 轮：指向人读出的对象


def test_figures_say_the_weights_are_hand_designed(rendered):
    for name in ("attention_explorer", "pronoun_shift"):
        ex = rendered(name).ex
        assert ch02.ILLUSTRATIVE_NOTE in ex.figure.get_suptitle()
        assert all(ch02.ILLUSTRATIVE_NOTE in ex.alt_text(**p) for p in ex.grid())


@pytest.mark.parametrize("factory", [ch02.attention_explorer, ch02.pronoun_shift])
def test_chinese_sentence_draws_without_missing_glyphs(factory):
    """目录里的图默认是英文句子；中文句子的初始帧也要画得出来（缺字会发出警告）。"""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ex = factory("apple")
        assert ex.png(ex.start).startswith(b"\x89PNG")


def test_explorer_narrow_layout_lays_the_bars_on_their_side_and_wraps_the_sentence():
    ex = ch02.attention_explorer("animal")
    assert (ex.layout("narrow").nrows, ex.layout("narrow").ncols) == (2, 1)
    wide, narrow = drawn(ex, "wide").fig, drawn(ex, "narrow").fig
    sentence = "The animal didn't cross the street because it was too tired."
    assert wide.get_suptitle().split("\n")[0] == sentence  # 宽版一行写完
    assert narrow.get_suptitle().split("\n")[:2] == ["The animal didn't cross the street", "because it was too tired."]
    # 宽版竖柱（词在横轴上），窄版横柱（词在纵轴上，从上往下按句子顺序）
    assert [t.get_text() for t in wide.axes[0].get_xticklabels()] == list(toy.toy_sentence("animal").tokens)
    assert [t.get_text() for t in narrow.axes[0].get_yticklabels()] == list(toy.toy_sentence("animal").tokens)
    bars = narrow.axes[0].patches[:12]
    it = toy.toy_sentence("animal").pronoun
    widths = np.array([b.get_width() for b in bars])
    np.testing.assert_allclose(widths, toy.discuss(toy.toy_sentence("animal").x)[1][1][it])  # 横柱的长度就是那一行权重
    top, bottom = (ax.get_position() for ax in narrow.axes[:2])
    assert top.y0 > bottom.y1  # 上下叠


def test_the_chinese_sentence_stays_on_one_line_on_a_phone():
    """中文句子「小明把苹果递给小红，因为她饿了」15 个字，窄版一行放得下（约 40 个半角宽），不断行。"""
    narrow = drawn(ch02.attention_explorer("apple"), "narrow").fig
    assert narrow.get_suptitle() == f"小明把苹果递给小红，因为她饿了\n（{ch02.ILLUSTRATIVE_NOTE}）"


def test_shift_narrow_layout_stacks_horizontal_bars_and_marks_the_same_bars():
    ex = ch02.pronoun_shift("animal")
    params = {"variant": "crowded"}
    assert ex.layout("narrow").nrows == 2
    wide, narrow = drawn(ex, "wide", params).fig, drawn(ex, "narrow", params).fig
    s = toy.toy_sentence("animal", "crowded")
    for fig, length in ((wide, "get_height"), (narrow, "get_width")):
        for ax, mark in zip(fig.axes[:2], (s.predicate, s.tokens.index(s.referent))):  # 橙色：crowded、street
            colors = [b.get_facecolor() for b in ax.patches[:len(s.tokens)]]
            assert [j for j, c in enumerate(colors) if c != colors[(mark + 1) % len(colors)]] == [mark]
            heights = [getattr(b, length)() for b in ax.patches[:len(s.tokens)]]
            assert int(np.argmax(heights)) == mark
    assert "street" in narrow.get_suptitle().split("\n")[0] and "crowded" not in narrow.get_suptitle().split("\n")[0]
    words = [t for t in texts(ex, "narrow", params) if t in s.tokens]
    assert set(s.tokens) <= set(words)  # 词写在窄版的纵轴旁边（自己画的文字，换句子时跟着变）


# ---------------------------------------------------------------- 静态图：特征热力图

# it 的笔记（第 2 章第 21 格）：讨论前只有"是代词"；第 1 轮后多了 0.74 的"描述活物"；第 2 轮后又多了 0.74 的"是动物"
NOTES = np.zeros((3, 12))
NOTES[:, 6] = 1.0
NOTES[1:, 9] = 0.74
NOTES[2, [0, 4]] = [0.74, 0.02]
ROUNDS = ["讨论前", "第 1 轮后", "第 2 轮后"]


def test_feature_heatmap_writes_every_nonzero_value():
    ex = tl.explore.feature_heatmap(NOTES, ROUNDS, title="it 的笔记")
    assert ex.sliders == []
    np.testing.assert_array_equal(ex.update()["x0"], NOTES)
    (ax, _) = ex.figure.axes  # 热力图和它的色条
    np.testing.assert_array_equal(ax.images[0].get_array(), NOTES)
    assert ax.get_title() == f"it 的笔记\n（{ch02.FEATURE_NOTE}）"
    assert [t.get_text() for t in ax.get_xticklabels()] == list(toy.FEATURES)
    assert [t.get_text() for t in ax.get_yticklabels()] == ROUNDS
    cells = sorted(t.get_text() for t in ax.texts)
    assert cells == sorted(["1", "1", "1", "0.74", "0.74", "0.74", "0.02"])  # 7 个不为 0 的格子；整数写成 "1"


def test_feature_heatmap_narrow_layout_turns_a_short_table_on_its_side():
    """3 行 12 列的表在手机上每格只有约 0.2 英寸，写不下 "0.74"：转过来画，特征竖着列、三个时刻横着排。"""
    ex = tl.explore.feature_heatmap(NOTES, ROUNDS, title="it 的笔记")
    fig = drawn(ex, "narrow").fig
    ax = fig.axes[0]
    np.testing.assert_array_equal(ax.images[0].get_array(), NOTES.T)
    assert [t.get_text() for t in ax.get_yticklabels()] == list(toy.FEATURES)
    assert [t.get_text() for t in ax.get_xticklabels()] == ROUNDS
    assert sorted(t.get_text() for t in ax.texts) == sorted(["1", "1", "1", "0.74", "0.74", "0.74", "0.02"])
    cbar = fig.axes[1]
    assert cbar.get_position().y1 < ax.get_position().y0  # 色条挪到了下面


def test_feature_heatmap_narrow_layout_drops_fractional_numbers_of_a_long_table():
    s = toy.toy_sentence("animal")
    states, _ = toy.discuss(s.x)
    ex = tl.explore.feature_heatmap(states[2], list(s.tokens))  # 12 行、有小数：窄版不写数，只留色条
    assert len(ex.figure.axes[0].texts) == int(np.count_nonzero(states[2]))
    assert len(drawn(ex, "narrow").fig.axes[0].texts) == 0
    whole = tl.explore.feature_heatmap(s.x, list(s.tokens))  # 12 行、全是 0/1：窄版也写得下 "1"
    assert len(drawn(whole, "narrow").fig.axes[0].texts) == int(np.count_nonzero(s.x)) == 4


def test_sentence_features_draws_one_panel_per_sentence():
    ex = tl.explore.sentence_features(("animal", "apple"))
    drawn_x = ex.update()
    np.testing.assert_array_equal(drawn_x["x0"], toy.toy_sentence("animal").x)
    np.testing.assert_array_equal(drawn_x["x1"], toy.toy_sentence("apple").x)
    heat_axes = [ax for ax in ex.figure.axes if ax.images and ax.get_title()]
    assert [ax.get_title() for ax in heat_axes] == ["英文句子的特征", "中文句子的特征"]
    assert len(ex.figure.axes) == 3  # 两张热力图共用一个色条（颜色上限都是 1）
    assert (ex.layout("wide").ncols, ex.layout("narrow").nrows) == (2, 2)
    top, bottom = (ax.get_position() for ax in drawn(ex, "narrow").fig.axes[:2])
    assert top.y0 > bottom.y1  # 手机上两张图上下叠
    single = tl.explore.sentence_features(["apple"])
    assert single.ncols == 1 and [ax.get_title() for ax in single.figure.axes[:1]] == ["中文句子的特征"]
    assert "小明把苹果递给小红" in ex.alt_text() and ch02.FEATURE_NOTE in ex.alt_text()


def test_static_figures_read_on_a_phone_and_a_laptop():
    assert reads_on_both(tl.explore.feature_heatmap(NOTES, ROUNDS, title="it 的笔记"))
    assert reads_on_both(tl.explore.sentence_features())


def test_the_reading_check_can_fail():
    """反证：同一张特征图按改版前 notebook 里的大小（12.5 英寸宽）画，显示时被缩小，电脑上的字就不够大。"""
    assert not reads_on_both(dataclasses.replace(tl.explore.sentence_features(), size=(12.5, 5.4)))


# ---------------------------------------------------------------- 工厂的参数（滑块取值的检查属于可交互图引擎 widgets/，不在这里）

VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("toy-explorer-unknown", lambda: ch02.attention_explorer("cat"), ValueError, r"sentence='cat' 不存在"),
    ("explorer-sentence-bogus", call(lambda: tl.explore.attention_explorer(sentence="bogus")), VE,
     r"^sentence='bogus' 不存在"),
    ("pronoun_shift-unknown", call(lambda: tl.explore.pronoun_shift("cat")), VE, r"sentence='cat' 不存在"),
    ("toy-feature-heatmap-shape", lambda: ch02.feature_heatmap(np.ones((2, 3)), ["a", "b"]), ValueError,
     r"^x 的形状 \(2, 3\).*\(2, 12\)"),
    ("feature-heatmap-names-x", call(lambda: tl.explore.feature_heatmap(np.ones((2, 3)), ["a", "b"])), VE, r"^x 的形状"),
    ("feature-heatmap-x-nan", call(tl.explore.feature_heatmap, np.full((3, 12), np.nan), ROUNDS), VE, r"^x 含有 NaN"),
    ("feature-heatmap-rows", call(tl.explore.feature_heatmap, NOTES, "讨论前"), TE, r"^row_labels 必须是字符串的列表"),
    ("feature-heatmap-title", call(tl.explore.feature_heatmap, NOTES, ROUNDS, title=3), TE, r"^title 必须是字符串.*int"),
    ("feature-heatmap-vmax", call(tl.explore.feature_heatmap, NOTES, ROUNDS, vmax=0.0), VE, r"^vmax 必须是有限的正实数"),
    ("sentence-features-three", call(tl.explore.sentence_features, ("animal", "apple", "animal")), VE,
     r"^sentences 最多 2 句.*3 句"),
    ("sentence-features-unknown", call(tl.explore.sentence_features, ("cat",)), VE, r"^sentences 里的句子名='cat' 不存在"),
    ("sentence-features-str", call(tl.explore.sentence_features, "animal"), TE, r"^sentences 必须是字符串的列表"),
]
test_documented_errors = error_table_test(ERROR_CASES)
