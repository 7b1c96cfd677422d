"""lessons/library.py：图书馆实验（V = K 时答不出内容问题）与线性读出。"""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from transformer_lab.lessons import library as P

from helpers.errors import call, error_table_test

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False, width=64)


def matrices(shape):
    return hnp.arrays(np.float64, shape, elements=finite)


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


# ---------------------------------------------------------------- 坏输入

RNG = np.random.default_rng(0)
VE = ValueError
ERROR_CASES = [
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
    ("library-too-many-books", call(P.library_experiment, 10**9, 10**9, RNG), VE,
     r"num_shelves × num_books=1000000000000000000 太大.*上限是 25000000"),
    ("readout-target-indistinguishable", lambda: P.linear_readout(np.ones((3, 1)), np.array([1e300, 1e300 * (1 + 1e-17), 1e300])),
     ValueError, r"target 的所有值都相同"),
]
test_documented_errors = error_table_test(ERROR_CASES)


@pytest.mark.parametrize("scale", [1e-250, 1e-100, 1e100, 1e300])
def test_linear_readout_error_does_not_depend_on_the_units(scale):
    # 误差 1 − R² 与单位无关：目标（或特征）整体乘上 1e±300，误差不变、回答跟着缩放，而不是 inf/NaN 或"全都一样"
    rng = np.random.default_rng(0)
    f, t = rng.normal(size=(20, 2)), rng.normal(size=20)
    pred, err = P.linear_readout(f, t)
    pred_t, err_t = P.linear_readout(f, t * scale)
    pred_f, err_f = P.linear_readout(f * scale, t)
    assert 0 < err < 1
    np.testing.assert_allclose([err_t, err_f], [err, err], rtol=1e-9)
    np.testing.assert_allclose(pred_t, pred * scale, rtol=1e-9)
    np.testing.assert_allclose(pred_f, pred, rtol=1e-9)
