"""第 4 章的图讲的事实：d_k 越大，不除以 √d_k 的 softmax 越"尖"、梯度越小；d_k = 1 时两边一样。

只用 ``ex.update``（算数据，不画图）；画图的约定在 tests/test_explorables.py 里对所有图统一检查。
"""

import numpy as np
import pytest

import transformer_lab as tl

from helpers.errors import call, error_table_test


@pytest.fixture
def ex(rendered):
    return rendered("scaling_saturation").ex


def test_unscaled_and_scaled_agree_only_when_d_k_is_1(ex):
    small, large = ex.update(d_k=1), ex.update(d_k=512)
    np.testing.assert_array_equal(small["raw"], small["scaled"])  # √1 = 1：两边一样
    assert large["raw"].max() > large["scaled"].max()  # 不缩放时更"尖"
    assert large["grad_raw"] < large["grad_scaled"]  # ……梯度也更小（饱和）
    np.testing.assert_allclose([large["raw"].sum(), large["scaled"].sum()], 1.0, rtol=1e-12)


def test_unscaled_weights_get_sharper_as_d_k_grows(ex):
    peaks = [ex.update(d_k=d)["raw"].max() for d in (1, 16, 512)]
    assert peaks[0] < peaks[1] < peaks[2] and peaks[2] > 0.9


def test_starts_at_the_chapter_value(ex):
    assert ex.start == {"d_k": 64}  # 正文用的 d_k = 64（论文的每头维数）


def test_alt_text_counts_the_keys_it_was_given():
    """评审发现的 bug：替代文字曾经写死"8 个键"。"""
    small = tl.explore.scaling_saturation(num_keys=4)
    assert "4 个键" in small.alt_text(d_k=64) and "8 个键" not in small.alt_text(d_k=64)
    assert small.update(d_k=64)["raw"].shape == (4,)


# ---------------------------------------------------------------- 四步的形状图（静态）

Q5 = np.array([[0, 1, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [2, 0, 0, 0], [1, 0, 0, 1]], dtype=float)
K5 = np.array([[2, 0, 0, 0], [0, 2, 0, 0], [0, 0, 2, 0], [0, 0, 0, 2], [0, 2, 0, 0]], dtype=float)
V5 = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0], [0, 1, 1]], dtype=float)
TOKENS = ["小猫", "睡了", "因为", "它", "累了"]


def _drawn(ex, layout="wide"):
    """按画的顺序取出七个数组（Q、Kᵀ、分数、缩放后、权重、V、输出）和这种版式里画着的字。"""
    ex.png(ex.start, layout=layout)
    arrays = [np.asarray(im.get_array()) for im in ex.figure.axes[0].images]
    return arrays, [t.text for t in ex.texts(layout)]


def test_shape_figure_draws_the_chapter_example_by_hand():
    """第 4 章的例子，只让"它""累了"提问（T=2, S=5）：分数手算是 [4,0,0,0,0] 和 [2,0,0,2,0]。"""
    ex = tl.explore.four_steps_shapes(Q5[3:], K5, V5, TOKENS[3:], TOKENS)
    arrays, texts = _drawn(ex)
    q, k_t, scores, scaled, weights, v, out = arrays
    np.testing.assert_array_equal(q, Q5[3:])
    np.testing.assert_array_equal(k_t, K5.T)
    np.testing.assert_array_equal(scores, [[4, 0, 0, 0, 0], [2, 0, 0, 2, 0]])
    np.testing.assert_array_equal(scaled, [[2, 0, 0, 0, 0], [1, 0, 0, 1, 0]])  # ÷ √4 = 2
    e2 = np.exp(2.0)
    np.testing.assert_allclose(weights[0], np.array([e2, 1, 1, 1, 1]) / (e2 + 4))  # 手算的 softmax
    np.testing.assert_allclose(out, weights @ V5)
    np.testing.assert_array_equal(v, V5)
    for layout in ("wide", "narrow"):
        _, texts = _drawn(ex, layout)
        for label in ["(T, $d_k$) = (2, 4)", "($d_k$, S) = (4, 5)", "(T, S) = (2, 5)", "(S, $d_v$) = (5, 3)",
                      "(T, $d_v$) = (2, 3)"]:
            assert any(label in t for t in texts), (layout, label)
        assert "0.65" in texts, layout  # "它"分给"小猫"的 0.649，格子里写两位：两种版式都放得下
        assert texts.count("小猫") == 2  # Kᵀ 上面一次、V 左边一次
    assert {k: np.shape(a) for k, a in ex.update().items()} == {
        "q": (2, 4), "k_t": (4, 5), "scores": (2, 5), "scaled": (2, 5), "weights": (2, 5), "v": (5, 3), "out": (2, 3)}


def test_shape_figure_matches_the_package_for_random_shapes():
    """与 tl.scaled_dot_product_attention 对照：T、S、d_k、d_v 各不相同。"""
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(3, 6)), rng.normal(size=(7, 6)), rng.normal(size=(7, 2))
    ex = tl.explore.four_steps_shapes(q, k, v, list("abc"), list("defghij"))
    arrays, texts = _drawn(ex)
    out, weights = tl.scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(arrays[4], weights)
    np.testing.assert_allclose(arrays[6], out)
    assert [a.shape for a in arrays] == [(3, 6), (6, 7), (3, 7), (3, 7), (3, 7), (7, 2), (3, 2)]
    assert any("T = 3 个查询，S = 7 个键和值，$d_k$ = 6，$d_v$ = 2" in t for t in texts)


def test_shape_figure_narrow_layout_is_half_as_wide_and_reads_top_down():
    """窄版 ≤ 3.6 英寸：标题分两行；权重拐到左下角（在 Q 的正下方，而不是分数那一列里）。"""
    ex = tl.explore.four_steps_shapes(Q5[3:], K5, V5, TOKENS[3:], TOKENS)
    wide, narrow = ex.layout("wide").size, ex.layout("narrow").size
    assert wide[0] <= 6.8 and narrow[0] <= 3.6 < wide[0]
    plans = ex.data["plans"]
    assert "\n" not in plans["wide"].title and plans["narrow"].title.count("\n") == 1
    for name, plan in plans.items():
        assert plan.at["scores"][0] == plan.at["scaled"][0]  # 第 2 步不改形状：同一列
        assert plan.at["v"][1] < plan.at["out"][1] and plan.at["v"][0] == plan.at["out"][0]  # V 在输出正上方
    assert plans["wide"].at["weights"][0] == plans["wide"].at["scores"][0]
    assert plans["narrow"].at["weights"][0] == plans["narrow"].at["q"][0]
    assert len(plans["narrow"].arrows[2][0]) == 3  # 第 3 步拐一个弯
    assert plans["narrow"].numbers and plans["wide"].numbers


def test_shape_figure_drops_cell_numbers_only_where_they_do_not_fit():
    """7 个键：窄版的格子太小，数字写不下 9 pt，就不写（标题里说明）；宽版照写。"""
    rng = np.random.default_rng(3)
    ex = tl.explore.four_steps_shapes(rng.normal(size=(3, 6)), rng.normal(size=(7, 6)), rng.normal(size=(7, 2)),
                                      list("abc"), list("defghij"))
    plans = ex.data["plans"]
    assert not plans["narrow"].numbers and "不写数值" in plans["narrow"].title
    assert "格子放得下时" in ex.alt
    _, narrow_texts = _drawn(ex, "narrow")
    assert not any(t.startswith(("0.", "-0.")) for t in narrow_texts)  # 格子里没有数


@pytest.mark.parametrize("args, error, match", [
    ((Q5[3:], K5, V5, ["它"], TOKENS), ValueError, r"^query_tokens 有 1 个词，应该等于 q 的行数 T = 2"),
    ((Q5[3:], K5, V5, TOKENS[3:], TOKENS[:4]), ValueError, r"^key_tokens 有 4 个词"),
    ((Q5[None], K5, V5, TOKENS, TOKENS), ValueError, r"^q 必须是二维数组"),
    ((np.ones((13, 4)), K5, V5, ["a"] * 13, TOKENS), ValueError, r"^q 的每一维最多 12"),
    ((Q5[:, :3], K5, V5, TOKENS, TOKENS), ValueError, r"^q 与 k 的最后一维 \(d_k\) 必须相等"),
    ((Q5, K5, V5, "小猫睡了", TOKENS), TypeError, r"^query_tokens 必须是字符串的列表"),
])
def test_shape_figure_rejects_bad_input(args, error, match):
    with pytest.raises(error, match=match):
        tl.explore.four_steps_shapes(*args)


def test_scaling_narrow_layout_stacks_and_breaks_the_title(ex):
    wide, narrow = ex.layout("wide"), ex.layout("narrow")
    assert (wide.nrows, wide.ncols, narrow.nrows, narrow.ncols) == (1, 2, 2, 1)
    assert wide.size[0] <= 6.8 and narrow.size[0] <= 3.6
    ex.png(ex.start, layout="wide")
    ex.png(ex.start, layout="narrow")
    title = {lay: max((t.text for t in ex.texts(lay) if t.text.startswith("$d_k$ = 64")), key=len)
             for lay in ("wide", "narrow")}
    assert "\n" not in title["wide"] and title["narrow"].count("\n") == 1


def test_scaling_with_many_keys_hides_bar_numbers_and_thins_ticks():
    """64 根柱子：柱顶不写数（9 pt 的数会叠在一起），横轴每 7 根写一个名字。"""
    many = tl.explore.scaling_saturation(num_keys=64)
    many.png(many.start, layout="narrow")
    texts = [t.text for t in many.texts("narrow")]
    assert not any(t.startswith("0.") and len(t) == 4 for t in texts)
    assert "k1" in texts and "k8" in texts and "k2" not in texts
    few = [t.text for t in tl.explore.scaling_saturation(num_keys=8).texts("wide")]
    assert "k2" in few


# ---------------------------------------------------------------- 一句话的注意力热力图（静态）

W2 = np.array([[0.75, 0.25], [0.5, 0.5]])


def test_sentence_attention_draws_the_given_weights_in_both_layouts():
    ex = tl.explore.sentence_attention(W2, ["小猫", "睡了"], "小猫睡了")
    assert ex.sliders == [] and ex.frame_count == 1  # 静态图：没有滑块，只有一帧
    np.testing.assert_array_equal(ex.update()["weights"], W2)
    for layout in ("wide", "narrow"):
        ex.png(ex.start, layout=layout)
        texts = [t.text for t in ex.texts(layout)]
        assert {"0.75", "0.25", "0.50"} <= set(texts), layout  # 2×2 的格子：两种版式都写数
        assert any(t.startswith("「小猫睡了」的注意力权重\n（手工设计的示意") for t in texts)
    assert ex.layout("narrow").size[0] <= 3.6 < ex.layout("wide").size[0] <= 6.8
    assert "小猫、睡了" in ex.alt


# ---------------------------------------------------------------- 点积的方差随 d_k 增长（静态）

DIMS, RAW, SCALED = [1, 4, 16, 64, 256, 512], [1.0, 4.1, 15.8, 64.5, 251.0, 503.0], [1.0, 1.02, 0.99, 1.01, 0.98, 0.98]


def test_variance_growth_ticks_and_alt_text():
    ex = tl.explore.variance_growth(DIMS, RAW, SCALED, 20000)
    drawn = ex.update()
    np.testing.assert_array_equal(drawn["raw_var"], RAW)
    np.testing.assert_array_equal(drawn["dims"], DIMS)
    ticks = {}
    for layout in ("wide", "narrow"):
        ex.png(ex.start, layout=layout)
        ticks[layout] = [t.text for t in ex.texts(layout)]
    assert {"1", "4", "16", "64", "256", "512", "10", "100", "500"} <= set(ticks["wide"])
    assert "256" not in ticks["narrow"] and {"1", "4", "16", "64", "512"} <= set(ticks["narrow"])  # 窄版：挤的去掉
    assert any("\n（每个 $d_k$ 抽样 20000 对）" in t for t in ticks["narrow"])
    assert "从 1 到 512" in ex.alt and "涨到 503.0" in ex.alt and "0.98 到 1.02" in ex.alt


# ---------------------------------------------------------------- 工厂的参数（滑块取值的检查属于可交互图引擎 widgets/，不在这里）

Q, K, V = np.ones((3, 4)), np.ones((5, 4)), np.ones((5, 2))  # (T, d_k), (S, d_k), (S, d_v)
VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("scaling_saturation-num_keys-0", call(lambda: tl.explore.scaling_saturation(num_keys=0)), VE,
     r"num_keys 必须是正整数.*0"),
    ("scaling_saturation-num_keys-float", call(lambda: tl.explore.scaling_saturation(num_keys=2.5)), TE,
     r"num_keys 必须是正整数.*float"),
    ("scaling_saturation-seed-negative", call(lambda: tl.explore.scaling_saturation(seed=-1)), VE,
     r"seed 必须是非负整数.*-1"),
    ("scaling_saturation-seed-string", call(lambda: tl.explore.scaling_saturation(seed="a")), TE,
     r"seed 必须是非负整数.*字符串"),
    ("scaling-num-keys-huge", call(lambda: tl.explore.scaling_saturation(num_keys=10**4)), VE, r"num_keys=10000 太大"),
    ("four-steps-shapes-tokens", call(lambda: tl.explore.four_steps_shapes(Q, K, V, ["a"], list("abcde"))), VE,
     r"query_tokens 有 1 个词，应该等于 q 的行数 T = 3"),
    ("four-steps-shapes-3d", call(lambda: tl.explore.four_steps_shapes(Q[None], K, V, list("abc"), list("abcde"))), VE,
     r"q 必须是二维数组.*shape=\(1, 3, 4\)"),
    ("four-steps-shapes-too-big", call(lambda: tl.explore.four_steps_shapes(np.ones((13, 4)), K, V, ["a"] * 13,
                                                                            list("abcde"))), VE, r"q 的每一维最多 12.*\(13, 4\)"),
    ("sentence-attention-not-square", call(lambda: tl.explore.sentence_attention(np.ones((2, 3)) / 3, ["a", "b"], "ab")),
     VE, r"weights 的形状必须是 \(T, T\) = \(2, 2\).*\(2, 3\)"),
    ("sentence-attention-above-1", call(lambda: tl.explore.sentence_attention(2 * W2, ["a", "b"], "ab")), VE,
     r"weights 是注意力权重，每个数都应在 \[0, 1\] 之内.*最大 1.5"),
    ("sentence-attention-nan", call(lambda: tl.explore.sentence_attention(np.full((2, 2), np.nan), ["a", "b"], "ab")),
     VE, r"weights"),
    ("sentence-attention-tokens", call(lambda: tl.explore.sentence_attention(W2, "ab", "ab")), TE,
     r"tokens 必须是字符串的列表"),
    ("sentence-attention-empty-sentence", call(lambda: tl.explore.sentence_attention(W2, ["a", "b"], "  ")), VE,
     r"sentence 必须是非空的字符串.*"),
    ("sentence-attention-note-type", call(lambda: tl.explore.sentence_attention(W2, ["a", "b"], "ab", note=3)), TE,
     r"note 必须是非空的字符串.*int"),
    ("variance-growth-dims-order", call(lambda: tl.explore.variance_growth([4, 1], [1, 1], [1, 1], 10)), VE,
     r"dims 必须是至少 2 个、从小到大的正整数（d_k）.*\[4(\.0)?, 1(\.0)?\]"),
    ("variance-growth-dims-one", call(lambda: tl.explore.variance_growth([4], [1], [1], 10)), VE, r"dims 必须是至少 2 个"),
    ("variance-growth-raw-zero", call(lambda: tl.explore.variance_growth([1, 4], [0, 4], [1, 1], 10)), VE,
     r"raw_var 必须是 2 个正数.*最小值 0"),
    ("variance-growth-scaled-length", call(lambda: tl.explore.variance_growth([1, 4], [1, 4], [1], 10)), VE,
     r"scaled_var 必须是 2 个正数.*shape=\(1,\)"),
    ("variance-growth-samples", call(lambda: tl.explore.variance_growth([1, 4], [1, 4], [1, 1], 0)), VE,
     r"samples 必须是正整数"),
]
test_documented_errors = error_table_test(ERROR_CASES)
