"""core/qkv.py：Q、K、V 投影——第 3 章的手算例子、逐元素参考实现、线性性质、初始化的方差、文档里写明的报错。"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import transformer_lab as tl
from transformer_lab.core import qkv as P

from helpers.errors import error_table_test

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


def test_realistic_shapes_and_parameter_count():
    rng = np.random.default_rng(0)
    w_q, w_k, w_v = P.init_qkv_weights(512, 64, rng)
    q, k, v = P.qkv_projections(rng.standard_normal((6, 512)), w_q, w_k, w_v)
    assert q.shape == k.shape == v.shape == (6, 64) and (q @ k.T).shape == (6, 6)
    assert w_q.size + w_k.size + w_v.size == 3 * 512 * 64 == 98304


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


def test_top_level_name_is_the_core_function():
    assert tl.qkv_projections is P.qkv_projections and tl.init_qkv_weights is P.init_qkv_weights


# ---------------------------------------------------------------- 坏输入

RNG = np.random.default_rng(0)
ERROR_CASES = [
    ("qkv-x-list", lambda: P.qkv_projections([[1.0, 2.0, 3.0]], W_Q, W_K, W_V), TypeError, r"x 必须是 NumPy 数组.*list"),
    ("qkv-x-1d", lambda: P.qkv_projections(np.ones(3), W_Q, W_K, W_V), ValueError, r"x 至少要有 2 维.*shape=\(3,\)"),
    ("qkv-x-nan", lambda: P.qkv_projections(np.full((2, 3), np.nan), W_Q, W_K, W_V), ValueError, r"x 含有 NaN"),
    ("qkv-w_q-rows", lambda: P.qkv_projections(X, np.ones((4, 2)), W_K, W_V), ValueError,
     r"w_q 的形状应为 \(D, 输出维数\) = \(3, 任意\).*\(4, 2\).*D=3"),
    ("qkv-w_v-1d", lambda: P.qkv_projections(X, W_Q, W_K, np.ones(3)), ValueError, r"w_v 的形状应为.*\(3,\)"),
    ("qkv-w_k-bool", lambda: P.qkv_projections(X, W_Q, np.ones((3, 2), bool), W_V), TypeError, r"w_k 的 dtype.*bool"),
    ("qkv-d_k-mismatch", lambda: P.qkv_projections(X, W_Q, np.ones((3, 4)), W_V), ValueError,
     r"w_q 与 w_k 的列数 \(d_k\) 必须相等.*w_q\.shape=\(3, 2\).*w_k\.shape=\(3, 4\)"),
    ("qkv-overflow", lambda: P.qkv_projections(np.full((1, 3), 1e300), np.full((3, 2), 1e10), np.eye(3)[:, :2],
                                               np.eye(3)), ValueError, r"x @ w_q 溢出"),
    ("init-d_model-zero", lambda: P.init_qkv_weights(0, 2, np.random.default_rng()), ValueError, r"d_model 必须是正整数.*0"),
    ("init-d_k-float", lambda: P.init_qkv_weights(4, 2.0, np.random.default_rng()), TypeError, r"d_k 必须是正整数.*float"),
    ("init-d_v-negative", lambda: P.init_qkv_weights(4, 2, np.random.default_rng(), d_v=-1), ValueError,
     r"d_v 必须是正整数.*-1"),
    ("init-rng-int", lambda: P.init_qkv_weights(4, 2, 0), TypeError, r"rng 必须是 np\.random\.Generator.*int"),
    ("init-qkv-too-big", lambda: P.init_qkv_weights(10**5, 10**5, RNG), ValueError,
     r"d_model × max\(d_k, d_v\)=10000000000 太大"),
]
test_documented_errors = error_table_test(ERROR_CASES)
