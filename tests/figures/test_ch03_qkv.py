"""第 3 章的图讲的事实：点积 = |q||k|cos θ（既看方向也看长度），余弦只看方向；一个键变长就能抢走注意力。

只用 ``ex.update``（算数据，不画图）；画图的约定在 tests/test_explorables.py 里对所有图统一检查。
"""

import warnings

import numpy as np
import pytest

import transformer_lab as tl
from transformer_lab.figures import ch03_qkv as figs
from transformer_lab.lessons.geometry import vector_2d
from transformer_lab.lessons.library import library_experiment, linear_readout

from helpers.errors import call, error_table_test


@pytest.fixture
def dot_ex(rendered):
    return rendered("dot_vs_cosine").ex


@pytest.fixture
def key_ex(rendered):
    return rendered("key_length_attention").ex


def test_dot_view_numbers(dot_ex):
    one, three = dot_ex.update(angle=60, length=1.0), dot_ex.update(angle=60, length=3.0)
    np.testing.assert_allclose(three["dot"], 3 * one["dot"])  # k 长 3 倍：点积 3 倍
    np.testing.assert_allclose(one["dot"], 2 * 1.0 * 0.5)  # |q| = 2，cos 60° = 0.5
    np.testing.assert_allclose(three["cosine"], one["cosine"])  # 余弦不变
    right = dot_ex.update(angle=90, length=2.0)
    assert right["dot"][0] == 0.0 and right["cosine"][0] == 0.0 and not np.signbit(right["dot"][0])  # 不写 -0.00
    back = dot_ex.update(angle=180, length=2.5)
    assert back["cosine"][0] == -1.0 and back["dot"][0] == pytest.approx(-5.0)
    np.testing.assert_allclose(back["curve"].max(), 2 * 2.5)  # 曲线的最高点 = |q||k|


def test_dot_view_accepts_off_grid_values_from_live_slider(dot_ex):
    d = dot_ex.update(angle=47, length=1.3)
    np.testing.assert_allclose(d["dot"], 2 * 1.3 * np.cos(np.radians(47)))
    np.testing.assert_allclose(d["k"], vector_2d(1.3, 47))


def test_key_view_longer_key_takes_over(key_ex):
    weights = [key_ex.update(length=length)["weights"] for length in figs.KEY_LENGTH_GRID]
    k2 = np.array([w[figs.CHANGING] for w in weights])
    assert np.all(np.diff(k2) > 0)  # k2 越长，权重越大
    assert weights[0].argmax() == 0 and weights[-1].argmax() == figs.CHANGING
    for w in weights:
        assert w.sum() == pytest.approx(1.0)
    d = key_ex.update(length=3.0)  # 点积打平：k2 的点积 = 2·3·cos60° = 3 = k1 的点积 2·1.5
    assert d["scores"][0] == pytest.approx(d["scores"][1])
    np.testing.assert_allclose(d["weights"][0], d["weights"][1])


def test_key_view_only_changes_the_length_of_k2(key_ex):
    a, b = key_ex.update(length=0.5)["keys"], key_ex.update(length=4.2)["keys"]
    np.testing.assert_allclose(np.delete(a, 1, axis=0), np.delete(b, 1, axis=0))
    np.testing.assert_allclose(tl.cosine_similarity(a[1], b[1]), 1.0)
    np.testing.assert_allclose(np.linalg.norm(b[1]), 4.2)


def test_alt_texts_mention_the_slider_values(dot_ex, key_ex):
    text = dot_ex.alt_text(angle=120, length=2.5)
    assert "120" in text and "2.5" in text
    assert "4.5" in key_ex.alt_text(length=4.5)


def _texts(ex, layout):
    ex.png(ex.start, layout=layout)
    return [t.text for t in ex.texts(layout)]


def test_readout_scatter_draws_one_panel_per_method():
    r = library_experiment(200, 4, np.random.default_rng(0))
    preds, errs = {}, {}
    for name in ("tied", "separate"):
        preds[name], errs[name] = linear_readout(r[name], r["pages"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ex = figs.readout_scatter(r["pages"], preds, errs, "“借到的书有几页？”每个点是一个书架（书的坐标为讲解设计）")
        png = ex.png(ex.start)
    assert ex.sliders == [] and png.startswith(b"\x89PNG")
    assert len(ex.figure.axes) == 2 and (ex.layout("narrow").nrows, ex.layout("wide").ncols) == (2, 2)
    np.testing.assert_array_equal(ex.update()["prediction:tied"], preds["tied"])
    for layout in ("wide", "narrow"):
        texts = _texts(ex, layout)
        assert f"tied\n读出误差 = {errs['tied']:.3f}" in texts and f"separate\n读出误差 = {errs['separate']:.3f}" in texts
    assert "“借到的书有几页？”每个点是一个书架\n（书的坐标为讲解设计）" in _texts(ex, "narrow")  # 手机上断成两行
    assert "“借到的书有几页？”每个点是一个书架（书的坐标为讲解设计）" in _texts(ex, "wide")
    assert f"tied 的读出误差 {errs['tied']:.3f}" in ex.alt


W_BEFORE = np.array([[0.1, 0.1, 0.8], [0.75, 0.05, 0.2], [0.15, 0.25, 0.6]])
W_AFTER = W_BEFORE[:, ::-1]


def test_swapped_glasses_draws_both_tables_in_both_layouts():
    ex = tl.explore.swapped_glasses(W_BEFORE, W_AFTER, ["小猫", "吃", "鱼"])
    drawn = ex.update()
    np.testing.assert_array_equal(drawn["weights"], W_BEFORE)
    np.testing.assert_array_equal(drawn["swapped"], W_AFTER)
    wide, narrow = ex.layout("wide"), ex.layout("narrow")
    assert (wide.ncols, narrow.nrows) == (2, 2) and narrow.size[0] <= 3.6 < wide.size[0] <= 6.8
    for layout in ("wide", "narrow"):
        texts = _texts(ex, layout)
        assert [texts.count(n) for n in ("0.75", "0.80", "0.05", "0.60")] == [2, 2, 2, 2], layout  # 每张表各一次
        assert "原来的提问眼镜 $W_Q$" in texts and "两列对调后的 $W_Q$" in texts
        assert "（手工设计的示意，不是训练所得）" in texts
    assert "$" not in ex.alt and "原来的提问眼镜 W_Q" in ex.alt


def test_narrow_layouts_stack_and_shorten():
    dot = tl.explore.dot_vs_cosine()
    title = {lay: next(t for t in _texts(dot, lay) if t.startswith("θ = 60°")) for lay in ("wide", "narrow")}
    assert "\n" not in title["wide"] and "|q|\\,|k|\\cos" in title["wide"]
    assert title["narrow"] == "θ = 60°，$|q|$ = 2，$|k|$ = 1.5\n$q\\cdot k$ = 2 × 1.5 × 0.50 = 1.50"
    ticks = {lay: [t for t in _texts(dot, lay) if t in ("30", "60", "90")] for lay in ("wide", "narrow")}
    assert ticks == {"wide": ["30", "60", "90"], "narrow": ["60"]}  # 手机上的横轴隔一个写一个
    key = tl.explore.key_length_attention()
    assert "一个查询 $q$、四个键" in _texts(key, "narrow") and "一个查询 $q$、四个键（手工设计的示意）" in _texts(key, "wide")
    glasses = tl.explore.learned_glasses()
    narrow = next(t for t in _texts(glasses, "narrow") if t.startswith("第 150 步"))
    assert "交叉熵" not in narrow and narrow.count("\n") == 1
    for ex in (dot, key, glasses):
        assert (ex.layout("narrow").nrows, ex.layout("narrow").ncols) == (2, 1)
        assert ex.layout("wide").size[0] <= 6.8 and ex.layout("narrow").size[0] <= 3.6


def test_dot_view_keeps_the_k_label_inside_when_it_points_left():
    """评审前的 bug：θ = 180°、|k| = 3 时 "k" 写在 x = −3.35，贴着左边框被切掉一半。"""
    dot = tl.explore.dot_vs_cosine()
    dot.update(angle=180, length=3.0)
    (label,) = [t for t in dot.figure.axes[0].texts if t.get_text() == "$k$"]
    x, y = label.get_position()
    assert -3.2 < x < -2.8 and y > 0.2


def test_learned_glasses_frames():
    from transformer_lab.explore import learned_glasses
    from transformer_lab.lessons.learned_glasses import chapter3_example

    ex = learned_glasses()
    first, last = ex.update(step=0), ex.update(step=150)
    assert np.abs(first["weights"] - 1 / 3).max() < 0.05
    np.testing.assert_allclose(last["weights"], chapter3_example()["target"], atol=1e-3)
    assert last["loss"][0] < first["loss"][0]


# ---------------------------------------------------------------- 工厂的参数

VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("readout_scatter-length", call(lambda: tl.explore.readout_scatter(np.ones(3), {"a": np.ones(2)}, {"a": 0.1}, "t")),
     VE, r"predictions\['a'\] 必须与 target 是同样长的一维数组.*\(2,\).*\(3,\)"),
    ("readout-errors-missing", call(lambda: tl.explore.readout_scatter(np.ones(3), {"a": np.ones(3)}, {}, "t")), VE,
     r"errors 里没有 'a'"),
    ("readout-predictions-list", call(lambda: tl.explore.readout_scatter(np.ones(3), [np.ones(3)], {}, "t")), TE,
     r"predictions 必须是有 1 到 3 项的字典"),
    ("readout-predictions-four", call(lambda: tl.explore.readout_scatter(
        np.ones(3), {c: np.ones(3) for c in "abcd"}, dict.fromkeys("abcd", 0.1), "t")), TE, r"predictions 必须是有 1 到 3 项"),
    ("readout-nan", call(lambda: tl.explore.readout_scatter(np.ones(3), {"a": np.array([1, np.nan, 1])}, {"a": 0.1},
                                                            "t")), VE, r"predictions\['a'\] 含有 NaN"),
    ("readout-title-empty", call(lambda: tl.explore.readout_scatter(np.ones(3), {"a": np.ones(3)}, {"a": 0.1}, " ")),
     VE, r"title 必须是非空的字符串"),
    ("swapped-shape", call(lambda: tl.explore.swapped_glasses(W_BEFORE, np.eye(2), ["a", "b", "c"])), VE,
     r"swapped 的形状必须是 \(T, T\) = \(3, 3\).*\(2, 2\)"),
    ("swapped-negative", call(lambda: tl.explore.swapped_glasses(-W_BEFORE, W_AFTER, ["a", "b", "c"])), VE,
     r"weights 是注意力权重，每个数都应在 \[0, 1\] 之内，收到的最小 -0.8、最大 -0.05"),
    ("swapped-tokens", call(lambda: tl.explore.swapped_glasses(W_BEFORE, W_AFTER, "abc")), TE,
     r"tokens 必须是字符串的列表"),
    ("swapped-titles-one", call(lambda: tl.explore.swapped_glasses(W_BEFORE, W_AFTER, list("abc"), titles="x")), TE,
     r"titles 必须是两个字符串.*'x'"),
    ("swapped-titles-empty", call(lambda: tl.explore.swapped_glasses(W_BEFORE, W_AFTER, list("abc"), titles=("x", ""))),
     VE, r"titles\[1\] 必须是非空的字符串"),
    ("swapped-note", call(lambda: tl.explore.swapped_glasses(W_BEFORE, W_AFTER, list("abc"), note=None)), TE,
     r"note 必须是非空的字符串.*NoneType"),
]
test_documented_errors = error_table_test(ERROR_CASES)
