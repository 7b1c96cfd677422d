"""第 3 章：Q、K、V 投影（transformer_lab.projections）与两张可交互图（figures/qkv.py）。

四类测试：书里手算的例子、独立参考实现、Hypothesis 性质、每个文档里写明的报错。
"""

import ast
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import transformer_lab as tl
from transformer_lab import projections as P
from transformer_lab.figures import qkv as figs

# 第 3 章的手算例子：小猫 / 吃 / 鱼，D = 3 → d_k = 2（手工设计）
X = np.array([[2.0, 0.0, 1.0], [0.0, 1.0, 2.0], [1.0, 2.0, 0.0]])  # (T=3, D=3)
W_Q = np.array([[0.0, 1.0], [0.0, 0.0], [1.0, 0.0]])  # (D=3, d_k=2)
W_K = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
W_V = np.array([[1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False, width=64)


def matrices(shape):
    return hnp.arrays(np.float64, shape, elements=finite)


# ---------------------------------------------------------------- 手算的例子


def test_book_example_projections_by_hand():
    q, k, v = P.qkv_projections(X, W_Q, W_K, W_V)
    # 小猫：[2,0,1] 乘 W_Q 的两列 → [2·0+0·0+1·1, 2·1+0·0+1·0] = [1, 2]
    np.testing.assert_array_equal(q, [[1, 2], [2, 0], [0, 1]])
    np.testing.assert_array_equal(k, [[2, 0], [0, 1], [1, 2]])
    np.testing.assert_array_equal(v, [[3, 2], [2, 1], [1, 3]])
    assert not np.array_equal(q[0], k[0]) and not np.array_equal(k[0], v[0])  # 同一个词，三个分身


def test_book_example_swapping_w_q_moves_attention_of_eat():
    q, k, v = P.qkv_projections(X, W_Q, W_K, W_V)
    np.testing.assert_array_equal(q @ k.T, [[2, 2, 5], [4, 0, 2], [0, 1, 2]])
    _, w = tl.scaled_dot_product_attention(q, k, v)
    _, w2 = tl.scaled_dot_product_attention(X @ W_Q[:, ::-1], k, v)
    assert w[1].argmax() == 0 and w2[1].argmax() == 2  # “吃”：小猫 → 鱼
    e = np.exp(np.array([4.0, 0.0, 2.0]) / np.sqrt(2))  # 手算 softmax
    np.testing.assert_allclose(w[1], e / e.sum())


def test_dot_and_cosine_of_3_4_and_1_2():
    a, b = np.array([3.0, 4.0]), np.array([1.0, 2.0])
    assert tl.dot(a, b) == 11.0
    assert round(tl.cosine_similarity(a, b), 3) == 0.984
    np.testing.assert_allclose(11 / (5 * np.sqrt(5)), tl.cosine_similarity(a, b))


def test_realistic_shapes_and_parameter_count():
    rng = np.random.default_rng(0)
    w_q, w_k, w_v = P.init_qkv_weights(512, 64, rng)
    q, k, v = P.qkv_projections(rng.standard_normal((6, 512)), w_q, w_k, w_v)
    assert q.shape == k.shape == v.shape == (6, 64) and (q @ k.T).shape == (6, 6)
    assert w_q.size + w_k.size + w_v.size == 3 * 512 * 64 == 98304


def test_vector_2d_by_hand():
    np.testing.assert_allclose(P.vector_2d(2.0, 0), [2.0, 0.0])
    np.testing.assert_allclose(P.vector_2d(2.0, 90), [0.0, 2.0], atol=1e-15)
    np.testing.assert_allclose(P.vector_2d(1.0, 180), [-1.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(P.vector_2d(0.0, 45), [0.0, 0.0])


def test_with_key_length_by_hand_and_no_mutation():
    k = np.array([[3.0, 4.0], [1.0, 0.0]])
    before = k.copy()
    out = P.with_key_length(k, 0, 10.0)
    np.testing.assert_allclose(out, [[6.0, 8.0], [1.0, 0.0]])
    np.testing.assert_array_equal(k, before)
    assert out is not k


def test_linear_readout_by_hand():
    f = np.array([[0.0], [1.0], [2.0], [3.0]])
    pred, err = P.linear_readout(f, 2 * f[:, 0] + 1)
    np.testing.assert_allclose(pred, [1, 3, 5, 7])
    assert err == pytest.approx(0.0, abs=1e-12)
    pred, err = P.linear_readout(np.ones((4, 1)), f[:, 0])  # 特征全一样：只能猜平均 1.5
    np.testing.assert_allclose(pred, 1.5)
    assert err == pytest.approx(1.0)
    # y = [0, 1, 0, 1] 与 x = [0, 1, 2, 3]：最小二乘直线 y = 0.2 + 0.2 x，残差平方和 0.8，总平方和 1
    _, err = P.linear_readout(f, np.array([0.0, 1.0, 0.0, 1.0]))
    assert err == pytest.approx(0.8)


def test_library_weights_are_fresh_copies():
    w_k, w_v = P.library_weights()
    w_k[0, 0] = 99.0  # 调用者改了自己拿到的那份
    w_k2, _ = P.library_weights()
    assert w_k2[0, 0] == 1.0
    book = np.array([0.5, -1.0, 3.0, 2.0])
    np.testing.assert_array_equal(book @ w_v, [3.0, 2.0])


# ---------------------------------------------------------------- 参考实现


@given(x=matrices((2, 3, 4)), w_q=matrices((4, 2)), w_k=matrices((4, 2)), w_v=matrices((4, 5)))
def test_projections_match_elementwise_loop(x, w_q, w_k, w_v):
    q, k, v = P.qkv_projections(x, w_q, w_k, w_v)
    assert q.shape == k.shape == (2, 3, 2) and v.shape == (2, 3, 5)
    for name, out, w in (("q", q, w_q), ("k", k, w_k), ("v", v, w_v)):
        ref = np.zeros(out.shape)
        for b in range(2):
            for t in range(3):
                for j in range(w.shape[1]):
                    ref[b, t, j] = sum(x[b, t, i] * w[i, j] for i in range(4))
        np.testing.assert_allclose(out, ref, rtol=1e-10, atol=1e-9, err_msg=name)


def test_readout_matches_normal_equations():
    rng = np.random.default_rng(3)
    f, y = rng.standard_normal((50, 3)), rng.standard_normal(50)
    design = np.column_stack([np.ones(50), f])
    coef = np.linalg.solve(design.T @ design, design.T @ y)  # 正规方程
    ref_err = np.sum((y - design @ coef) ** 2) / np.sum((y - y.mean()) ** 2)
    pred, err = P.linear_readout(f, y)
    np.testing.assert_allclose(pred, design @ coef)
    assert err == pytest.approx(ref_err)


def test_library_experiment_matches_a_plain_loop():
    r = P.library_experiment(5, 3, np.random.default_rng(4), sharpness=2.5)
    w_k, w_v = P.library_weights()
    for n in range(5):
        books = r["books"][n]  # (S, 4)
        keys, values = books[:, :2], books[:, 2:]
        # 从权重反推不出 q，所以检查：权重是概率，输出是对应的加权平均
        w = r["weights"][n]
        assert w.min() > 0 and w.sum() == pytest.approx(1.0)
        np.testing.assert_allclose(r["tied"][n], sum(w[j] * keys[j] for j in range(3)))
        np.testing.assert_allclose(r["separate"][n], sum(w[j] * values[j] for j in range(3)))
        assert r["pages"][n] == books[np.argmax(w), 2]
        np.testing.assert_allclose(books @ w_k, keys)


# ---------------------------------------------------------------- 性质


@given(x1=matrices((3, 4)), x2=matrices((3, 4)), w=matrices((4, 2)))
def test_projection_is_linear(x1, x2, w):
    sum_q = P.qkv_projections(x1 + x2, w, w, w)[0]
    np.testing.assert_allclose(sum_q, P.qkv_projections(x1, w, w, w)[0] + P.qkv_projections(x2, w, w, w)[0],
                               rtol=1e-9, atol=1e-9)


@given(x=matrices((3, 4)), w_q=matrices((4, 2)), w_k=matrices((4, 2)))
def test_same_x_different_glasses_only_changes_q(x, w_q, w_k):
    q1, k1, v1 = P.qkv_projections(x, w_q, w_k, w_k)
    q2, k2, v2 = P.qkv_projections(x, -w_q, w_k, w_k)
    np.testing.assert_array_equal(q2, -q1)
    np.testing.assert_array_equal(k1, k2)
    np.testing.assert_array_equal(v1, v2)


@given(length_a=st.floats(0.1, 5), length_b=st.floats(0.1, 5), angle=st.floats(0, 360), base=st.floats(-180, 180))
def test_dot_equals_lengths_times_cosine(length_a, length_b, angle, base):
    a, b = P.vector_2d(length_a, base), P.vector_2d(length_b, base + angle)
    np.testing.assert_allclose(np.linalg.norm(b), length_b)
    cos = np.cos(np.radians(angle))
    np.testing.assert_allclose(tl.dot(a, b), length_a * length_b * cos, atol=1e-9)
    np.testing.assert_allclose(tl.cosine_similarity(a, b), cos, atol=1e-9)


@given(k=matrices((4, 3)), index=st.integers(0, 3), length=st.floats(0.01, 100))
def test_with_key_length_keeps_direction_and_other_keys(k, index, length):
    assume(np.linalg.norm(k[index]) > 1e-3)
    out = P.with_key_length(k, index, length)
    np.testing.assert_allclose(np.linalg.norm(out[index]), length, rtol=1e-9)
    np.testing.assert_allclose(tl.cosine_similarity(out[index], k[index]), 1.0, rtol=1e-9)
    np.testing.assert_array_equal(np.delete(out, index, axis=0), np.delete(k, index, axis=0))


@given(f=matrices((12, 2)), extra=matrices((12, 1)), y=matrices((12,)))
def test_readout_error_in_range_and_more_features_never_hurt(f, extra, y):
    assume(np.ptp(y) > 1e-3)
    _, err = P.linear_readout(f, y)
    _, err_more = P.linear_readout(np.column_stack([f, extra]), y)
    assert 0.0 <= err <= 1.0 and 0.0 <= err_more <= 1.0
    assert err_more <= err + 1e-7


@given(seed=st.integers(0, 10_000))
def test_tied_outputs_live_in_the_label_plane(seed):
    r = P.library_experiment(40, 4, np.random.default_rng(seed))
    w_k, _ = P.library_weights()
    in_book = r["tied"] @ w_k.T  # (N, 4)
    assert np.all(in_book[:, 2:] == 0)  # 页数、难度两栏永远是 0
    assert np.linalg.matrix_rank(in_book) <= 2


def test_tied_value_cannot_answer_content_question_but_separate_can():
    for seed in range(3):
        r = P.library_experiment(1000, 4, np.random.default_rng(seed))
        assert P.linear_readout(r["tied"], r["pages"])[1] > 0.95
        assert P.linear_readout(r["separate"], r["pages"])[1] < 0.25


def test_sharper_query_helps_separate_but_not_tied():
    errs = {}
    for sharpness in (4.0, 12.0):
        r = P.library_experiment(2000, 4, np.random.default_rng(1), sharpness=sharpness)
        errs[sharpness] = (P.linear_readout(r["tied"], r["pages"])[1], P.linear_readout(r["separate"], r["pages"])[1])
    assert errs[12.0][1] < errs[4.0][1]
    assert min(errs[4.0][0], errs[12.0][0]) > 0.95


def test_init_qkv_weights_variance_and_reproducibility():
    w_q, w_k, w_v = P.init_qkv_weights(512, 64, np.random.default_rng(0), d_v=32)
    assert w_q.shape == w_k.shape == (512, 64) and w_v.shape == (512, 32)
    assert np.var(w_q) == pytest.approx(1 / 512, rel=0.05)
    again = P.init_qkv_weights(512, 64, np.random.default_rng(0), d_v=32)
    for a, b in zip((w_q, w_k, w_v), again):
        np.testing.assert_array_equal(a, b)
    x = np.random.default_rng(1).standard_normal((2000, 512))
    assert np.var(x @ w_q) == pytest.approx(1.0, rel=0.1)  # 投影后分量方差约为 1


def test_float32_input_stays_float32():
    x = X.astype(np.float32)
    q, k, v = P.qkv_projections(x, W_Q.astype(np.float32), W_K.astype(np.float32), W_V.astype(np.float32))
    assert q.dtype == k.dtype == v.dtype == np.float32


# ---------------------------------------------------------------- 报错

ERRORS = [
    ("qkv-x-list", lambda: P.qkv_projections([[1.0, 2.0, 3.0]], W_Q, W_K, W_V), TypeError, r"x 必须是 NumPy 数组.*list"),
    ("qkv-x-1d", lambda: P.qkv_projections(np.ones(3), W_Q, W_K, W_V), ValueError, r"x 至少要有 2 维.*shape=\(3,\)"),
    ("qkv-x-nan", lambda: P.qkv_projections(np.full((2, 3), np.nan), W_Q, W_K, W_V), ValueError, r"x 含有 NaN"),
    ("qkv-w_q-rows", lambda: P.qkv_projections(X, np.ones((4, 2)), W_K, W_V), ValueError,
     r"w_q 的形状应为 \(D, 输出维数\) = \(3, 任意\).*\(4, 2\).*D=3"),
    ("qkv-w_v-1d", lambda: P.qkv_projections(X, W_Q, W_K, np.ones(3)), ValueError, r"w_v 的形状应为.*\(3,\)"),
    ("qkv-w_k-bool", lambda: P.qkv_projections(X, W_Q, np.ones((3, 2), bool), W_V), TypeError, r"w_k 的 dtype.*bool"),
    ("qkv-d_k-mismatch", lambda: P.qkv_projections(X, W_Q, np.ones((3, 4)), W_V), ValueError,
     r"w_q 与 w_k 的列数 \(d_k\) 必须相等.*w_q\.shape=\(3, 2\).*w_k\.shape=\(3, 4\)"),
    ("init-d_model-zero", lambda: P.init_qkv_weights(0, 2, np.random.default_rng()), ValueError, r"d_model 必须是正整数.*0"),
    ("init-d_k-float", lambda: P.init_qkv_weights(4, 2.0, np.random.default_rng()), TypeError, r"d_k 必须是正整数.*float"),
    ("init-d_v-negative", lambda: P.init_qkv_weights(4, 2, np.random.default_rng(), d_v=-1), ValueError,
     r"d_v 必须是正整数.*-1"),
    ("init-rng-int", lambda: P.init_qkv_weights(4, 2, 0), TypeError, r"rng 必须是 np\.random\.Generator.*int"),
    ("vec-length-negative", lambda: P.vector_2d(-1.0, 0), ValueError, r"length 不能是负数.*-1\.0"),
    ("vec-length-bool", lambda: P.vector_2d(True, 0), TypeError, r"length 必须是实数.*bool"),
    ("vec-angle-str", lambda: P.vector_2d(1.0, "30"), TypeError, r"angle_deg 必须是实数.*字符串 '30'"),
    ("vec-angle-inf", lambda: P.vector_2d(1.0, float("inf")), ValueError, r"angle_deg 必须是有限实数.*inf"),
    ("key-k-1d", lambda: P.with_key_length(np.ones(3), 0, 1.0), ValueError, r"k 至少要有 2 维"),
    ("key-k-3d", lambda: P.with_key_length(np.ones((2, 2, 2)), 0, 1.0), ValueError,
     r"k 的形状应为 \(任意, 任意\).*\(2, 2, 2\)"),
    ("key-index-float", lambda: P.with_key_length(np.ones((2, 2)), 1.0, 1.0), TypeError, r"index 必须是整数.*float"),
    ("key-index-range", lambda: P.with_key_length(np.ones((2, 2)), 2, 1.0), ValueError, r"index=2 越界.*S=2.*\[0, 1\]"),
    ("key-index-negative", lambda: P.with_key_length(np.ones((2, 2)), -1, 1.0), ValueError, r"index=-1 越界"),
    ("key-zero-row", lambda: P.with_key_length(np.array([[0.0, 0.0], [1.0, 0.0]]), 0, 1.0), ValueError,
     r"第 0 个键是零向量"),
    ("key-length-zero", lambda: P.with_key_length(np.ones((2, 2)), 0, 0.0), ValueError, r"length 必须是有限的正实数.*0\.0"),
    ("key-length-str", lambda: P.with_key_length(np.ones((2, 2)), 0, "2"), TypeError, r"length 必须是正实数.*字符串"),
    ("readout-features-1d", lambda: P.linear_readout(np.ones(4), np.arange(4.0)), ValueError,
     r"features 的形状应为 \(任意, 任意\).*\(4,\)"),
    ("readout-target-length", lambda: P.linear_readout(np.ones((4, 1)), np.arange(3.0)), ValueError,
     r"target 的形状应为 \(4,?\).*\(3,\)"),
    ("readout-one-sample", lambda: P.linear_readout(np.ones((1, 1)), np.ones(1)), ValueError, r"至少要有 2 个样本.*N=1"),
    ("readout-constant-target", lambda: P.linear_readout(np.eye(3), np.ones(3)), ValueError, r"target 的所有值都相同"),
    ("readout-target-list", lambda: P.linear_readout(np.eye(3), [1.0, 2.0, 3.0]), TypeError, r"target 必须是 NumPy 数组"),
    ("lib-one-shelf", lambda: P.library_experiment(1, 4, np.random.default_rng()), ValueError, r"num_shelves 至少为 2.*1"),
    ("lib-books-zero", lambda: P.library_experiment(10, 0, np.random.default_rng()), ValueError, r"num_books 必须是正整数"),
    ("lib-sharpness", lambda: P.library_experiment(10, 4, np.random.default_rng(), sharpness=-1.0), ValueError,
     r"sharpness 必须是有限的正实数.*-1\.0"),
    ("lib-rng", lambda: P.library_experiment(10, 4, np.random.RandomState(0)), TypeError, r"rng 必须是.*RandomState"),
]


@pytest.mark.parametrize("call, exc, pattern", [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_documented_errors(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


# ---------------------------------------------------------------- 依赖方向


def test_projections_imports_numpy_only():
    tree = ast.parse((Path(P.__file__)).read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in tree.body if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in tree.body if isinstance(node, ast.ImportFrom) and node.level == 0}
    assert imported <= {"numpy", "numbers", "__future__"}


# ---------------------------------------------------------------- 可交互图


@pytest.fixture(scope="module")
def dot_ex():
    return tl.explore.dot_vs_cosine()


@pytest.fixture(scope="module")
def key_ex():
    return tl.explore.key_length_attention()


def test_explorables_are_exported_and_within_frame_budget(dot_ex, key_ex):
    assert {"dot_vs_cosine", "key_length_attention"} <= set(tl.explore.catalog())
    assert figs.__all__ == ["dot_vs_cosine", "key_length_attention"]
    assert len(dot_ex.grid()) == 7 * 6 and len(key_ex.grid()) == 10
    assert len(dot_ex.grid()) + len(key_ex.grid()) <= 60


def test_dot_view_numbers(dot_ex):
    one, three = dot_ex.update(angle=60, length=1.0), dot_ex.update(angle=60, length=3.0)
    np.testing.assert_allclose(three["dot"], 3 * one["dot"])
    np.testing.assert_allclose(one["dot"], 2 * 1.0 * 0.5)
    np.testing.assert_allclose(three["cosine"], one["cosine"])
    right = dot_ex.update(angle=90, length=2.0)
    assert right["dot"][0] == 0.0 and right["cosine"][0] == 0.0 and np.signbit(right["dot"][0]) == 0
    back = dot_ex.update(angle=180, length=2.5)
    assert back["cosine"][0] == -1.0 and back["dot"][0] == pytest.approx(-5.0)
    np.testing.assert_allclose(back["curve"].max(), 2 * 2.5)  # 曲线的最高点 = |q||k|


def test_dot_view_accepts_off_grid_values_from_live_slider(dot_ex):
    d = dot_ex.update(angle=47, length=1.3)
    np.testing.assert_allclose(d["dot"], 2 * 1.3 * np.cos(np.radians(47)))
    np.testing.assert_allclose(d["k"], P.vector_2d(1.3, 47))


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


@pytest.mark.parametrize("factory", [tl.explore.dot_vs_cosine, tl.explore.key_length_attention])
def test_update_changes_data_not_axes(factory):
    ex = factory()
    fig, _ = ex._view()
    axes = list(fig.axes)
    counts = [len(ax.get_children()) for ax in axes]
    first = ex.png(**ex.grid()[0])
    last = ex.png(**ex.grid()[-1])
    assert list(fig.axes) == axes and [len(ax.get_children()) for ax in axes] == counts
    assert first != last


def test_alt_texts_mention_the_slider_values(dot_ex, key_ex):
    assert "120" in dot_ex.alt_text({"angle": 120, "length": 2.5}) and "2.5" in dot_ex.alt_text(
        {"angle": 120, "length": 2.5})
    assert "4.5" in key_ex.alt_text({"length": 4.5})


def test_readout_scatter_draws_one_panel_per_method():
    r = P.library_experiment(200, 4, np.random.default_rng(0))
    preds, errs = {}, {}
    for name in ("tied", "separate"):
        preds[name], errs[name] = P.linear_readout(r[name], r["pages"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = figs.readout_scatter(r["pages"], preds, errs, "测试")
        png = fig.to_png()
    assert len(fig.axes) == 2 and png.startswith(b"\x89PNG")
    assert f"{errs['tied']:.3f}" in fig.axes[0].get_title()
