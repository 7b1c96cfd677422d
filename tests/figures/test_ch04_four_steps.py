"""第 4 章的图讲的事实：d_k 越大，不除以 √d_k 的 softmax 越"尖"、梯度越小；d_k = 1 时两边一样。

只用 ``ex.update``（算数据，不画图）；画图的约定在 tests/test_explorables.py 里对所有图统一检查。
"""

import numpy as np
import pytest
from conftest import call, error_table_test

import transformer_lab as tl


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


def _drawn(fig):
    """按画的顺序取出七个数组：Q、Kᵀ、分数、缩放后、权重、V、输出。"""
    ax = fig.axes[0]
    return [np.asarray(im.get_array()) for im in ax.images], [t.get_text() for t in ax.texts]


def test_shape_figure_draws_the_chapter_example_by_hand():
    """第 4 章的例子，只让"它""累了"提问（T=2, S=5）：分数手算是 [4,0,0,0,0] 和 [2,0,0,2,0]。"""
    arrays, texts = _drawn(tl.explore.four_steps_shapes(Q5[3:], K5, V5, TOKENS[3:], TOKENS))
    q, k_t, scores, scaled, weights, v, out = arrays
    np.testing.assert_array_equal(q, Q5[3:])
    np.testing.assert_array_equal(k_t, K5.T)
    np.testing.assert_array_equal(scores, [[4, 0, 0, 0, 0], [2, 0, 0, 2, 0]])
    np.testing.assert_array_equal(scaled, [[2, 0, 0, 0, 0], [1, 0, 0, 1, 0]])  # ÷ √4 = 2
    e2 = np.exp(2.0)
    np.testing.assert_allclose(weights[0], np.array([e2, 1, 1, 1, 1]) / (e2 + 4))  # 手算的 softmax
    np.testing.assert_allclose(out, weights @ V5)
    np.testing.assert_array_equal(v, V5)
    for label in ["(T, $d_k$) = (2, 4)", "($d_k$, S) = (4, 5)", "(T, S) = (2, 5)", "(S, $d_v$) = (5, 3)",
                  "(T, $d_v$) = (2, 3)"]:
        assert any(label in t for t in texts), label
    assert "0.65" in texts  # "它"分给"小猫"的 0.649，格子里写两位


def test_shape_figure_matches_the_package_for_random_shapes():
    """与 tl.scaled_dot_product_attention 对照：T、S、d_k、d_v 各不相同。"""
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(3, 6)), rng.normal(size=(7, 6)), rng.normal(size=(7, 2))
    fig = tl.explore.four_steps_shapes(q, k, v, list("abc"), list("defghij"))
    arrays, _ = _drawn(fig)
    out, weights = tl.scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(arrays[4], weights)
    np.testing.assert_allclose(arrays[6], out)
    assert [a.shape for a in arrays] == [(3, 6), (6, 7), (3, 7), (3, 7), (3, 7), (7, 2), (3, 2)]
    assert "T = 3 个查询，S = 7 个键和值，$d_k$ = 6，$d_v$ = 2" in fig.axes[0].get_title()


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
]
test_documented_errors = error_table_test(ERROR_CASES)
