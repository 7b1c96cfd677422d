"""第 3 章的图讲的事实：点积 = |q||k|cos θ（既看方向也看长度），余弦只看方向；一个键变长就能抢走注意力。

只用 ``ex.update``（算数据，不画图）；画图的约定在 tests/test_explorables.py 里对所有图统一检查。
"""

import warnings

import numpy as np
import pytest
from conftest import call, error_table_test

import transformer_lab as tl
from transformer_lab.figures import ch03_qkv as figs
from transformer_lab.lessons.geometry import vector_2d
from transformer_lab.lessons.library import library_experiment, linear_readout


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


def test_readout_scatter_draws_one_panel_per_method():
    r = library_experiment(200, 4, np.random.default_rng(0))
    preds, errs = {}, {}
    for name in ("tied", "separate"):
        preds[name], errs[name] = linear_readout(r[name], r["pages"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = figs.readout_scatter(r["pages"], preds, errs, "测试")
        png = fig.to_png()
    assert len(fig.axes) == 2 and png.startswith(b"\x89PNG")
    assert f"{errs['tied']:.3f}" in fig.axes[0].get_title() and f"{errs['separate']:.3f}" in fig.axes[1].get_title()


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
     VE, r"target 与 prediction 必须是同样长的一维数组.*\(3,\).*\(2,\)"),
    ("readout-errors-missing", call(lambda: tl.explore.readout_scatter(np.ones(3), {"a": np.ones(3)}, {}, "t")), VE,
     r"errors 里没有 'a'"),
    ("readout-predictions-list", call(lambda: tl.explore.readout_scatter(np.ones(3), [np.ones(3)], {}, "t")), TE,
     r"predictions 必须是有 1 到 6 项的字典"),
    ("readout-nan", call(lambda: tl.explore.readout_scatter(np.ones(3), {"a": np.array([1, np.nan, 1])}, {"a": 0.1},
                                                            "t")), VE, r"prediction 含有 NaN"),
]
test_documented_errors = error_table_test(ERROR_CASES)
