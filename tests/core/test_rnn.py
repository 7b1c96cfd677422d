"""core/rnn.py：Elman RNN、正交循环权重、输入雅可比矩阵、第 1 章共用的随机 RNN。

四类测试：书里手算的数、独立的参考实现（逐分量循环、中心差分、反向传播）、Hypothesis 性质、dtype 与不改输入，
以及文档里写明的每一种报错。
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import transformer_lab as tl
from transformer_lab.core import rnn

from helpers.errors import call, error_table_test
from helpers.gradcheck import numeric_gradient

# ---------------------------------------------------------------- rnn_forward


def ref_rnn(x, w_xh, w_hh, b_h=None, h0=None):
    """h_t = tanh(x_t W_xh + h_{t-1} W_hh + b_h)，每个分量用 Python 循环和 math.tanh 写出来。"""
    d_in, d_h = w_xh.shape
    b_h = [0.0] * d_h if b_h is None else list(b_h)
    h = [0.0] * d_h if h0 is None else list(h0)
    states = []
    for x_t in x:
        h = [math.tanh(sum(x_t[a] * w_xh[a, j] for a in range(d_in)) + sum(h[i] * w_hh[i, j] for i in range(d_h))
                       + b_h[j]) for j in range(d_h)]
        states.append(h)
    return np.array(states)


def test_rnn_two_steps_by_hand():
    x = np.array([[1.0], [0.0]])  # (T=2, d_in=1)
    h = tl.rnn_forward(x, np.array([[1.0]]), np.array([[0.5]]))
    h1 = math.tanh(1.0 * 1.0 + 0.0 * 0.5)
    h2 = math.tanh(0.0 * 1.0 + h1 * 0.5)
    np.testing.assert_allclose(h, [[h1], [h2]], rtol=1e-15)
    np.testing.assert_allclose(h.round(4), [[0.7616], [0.3634]])  # 书里印的数


def test_rnn_two_steps_with_bias_and_h0_by_hand():
    x = np.array([[1.0, 2.0], [0.5, -1.0]])  # (T=2, d_in=2)
    w_xh = np.array([[0.1, 0.2], [0.3, -0.4]])  # (d_in=2, d_h=2)
    w_hh = np.array([[0.5, 0.0], [-0.5, 1.0]])  # (d_h, d_h)
    b_h, h0 = np.array([0.0, 0.1]), np.array([1.0, -1.0])
    # 第 1 步：x_1 W_xh = [0.1 + 0.6, 0.2 - 0.8] = [0.7, -0.6]；h0 W_hh = [0.5 + 0.5, 0 - 1] = [1, -1]
    h1 = [math.tanh(0.7 + 1.0 + 0.0), math.tanh(-0.6 - 1.0 + 0.1)]
    # 第 2 步：x_2 W_xh = [0.05 - 0.3, 0.1 + 0.4] = [-0.25, 0.5]；h1 W_hh = [0.5 h1₀ - 0.5 h1₁, h1₁]
    h2 = [math.tanh(-0.25 + 0.5 * h1[0] - 0.5 * h1[1] + 0.0), math.tanh(0.5 + h1[1] + 0.1)]
    np.testing.assert_allclose(tl.rnn_forward(x, w_xh, w_hh, b_h=b_h, h0=h0), [h1, h2], rtol=1e-14)


@pytest.mark.parametrize("T, d_in, d_h, with_b, with_h0", [
    (1, 1, 1, False, False), (5, 3, 4, False, False), (6, 2, 3, True, False), (4, 4, 2, False, True),
    (8, 3, 5, True, True),
], ids=lambda v: str(v))
def test_rnn_matches_loop_reference(T, d_in, d_h, with_b, with_h0):
    rng = np.random.default_rng(T * 100 + d_h)
    x, w_xh, w_hh = rng.normal(size=(T, d_in)), rng.normal(size=(d_in, d_h)), rng.normal(size=(d_h, d_h))
    b_h = rng.normal(size=d_h) if with_b else None
    h0 = rng.normal(size=d_h) if with_h0 else None
    got = tl.rnn_forward(x, w_xh, w_hh, b_h=b_h, h0=h0)
    assert got.shape == (T, d_h)
    np.testing.assert_allclose(got, ref_rnn(x, w_xh, w_hh, b_h, h0), rtol=1e-12, atol=1e-14)


@st.composite
def rnn_inputs(draw):
    T, d_in, d_h = draw(st.integers(1, 6)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    arr = lambda shape: draw(hnp.arrays(np.float64, shape, elements=st.floats(-50, 50)))  # noqa: E731
    return arr((T, d_in)), arr((d_in, d_h)), arr((d_h, d_h)), arr((d_h,)), arr((d_h,))


@given(rnn_inputs(), st.data())
def test_rnn_is_causal_and_bounded(args, data):
    x, w_xh, w_hh, b_h, h0 = args
    states = tl.rnn_forward(x, w_xh, w_hh, b_h=b_h, h0=h0)
    assert np.all(np.abs(states) <= 1.0)  # tanh 的值域
    t = data.draw(st.integers(0, x.shape[0] - 1))
    x2 = x.copy()
    x2[t:] = data.draw(hnp.arrays(np.float64, x[t:].shape, elements=st.floats(-50, 50)))
    # 改动第 t 步及以后的输入，不影响第 t 步之前的隐状态（传话游戏只能往后传）
    np.testing.assert_array_equal(tl.rnn_forward(x2, w_xh, w_hh, b_h=b_h, h0=h0)[:t], states[:t])


@given(rnn_inputs())
def test_rnn_inputs_are_never_modified(args):
    before = [a.copy() for a in args]
    tl.rnn_forward(*args)
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype, with_defaults, expected", [
    pytest.param(np.float32, False, np.float32, id="float32-explicit-b_h-h0"),
    pytest.param(np.float32, True, np.float32, id="float32-default-b_h-h0"),
    pytest.param(np.float64, True, np.float64, id="float64"),
    pytest.param(np.int64, True, np.float64, id="int64"),
])
def test_rnn_output_dtype(dtype, with_defaults, expected):
    x, w_xh, w_hh = np.ones((3, 2), dtype), np.ones((2, 2), dtype), np.eye(2, dtype=dtype)
    extra = {} if with_defaults else dict(b_h=np.zeros(2, dtype), h0=np.zeros(2, dtype))
    assert tl.rnn_forward(x, w_xh, w_hh, **extra).dtype == expected


# ---------------------------------------------------------------- 雅可比矩阵


def test_jacobians_of_the_four_word_example_by_hand():
    x = np.array([[1.0], [0.0], [0.0], [0.0]])  # (T=4, d_in=1)
    states, jac = rnn.input_jacobians(x, np.array([[1.0]]), np.array([[0.5]]))
    h = [math.tanh(1.0)]
    for _ in range(3):
        h.append(math.tanh(0.5 * h[-1]))
    np.testing.assert_allclose(states.ravel(), h, rtol=1e-15)
    expected, d = [], (1 - h[0] ** 2) * 1.0  # ∂h_1/∂x_1
    expected.append(d)
    for t in range(1, 4):
        d = (1 - h[t] ** 2) * 0.5 * d  # 每传一步：tanh 的斜率 × W_hh
        expected.append(d)
    np.testing.assert_allclose(jac[:, 0, 0, 0], expected, rtol=1e-14)
    np.testing.assert_allclose(jac[:, 0, 0, 0].round(4), [0.42, 0.1823, 0.0882, 0.0437])  # 书里印的数
    assert jac.shape == (4, 4, 1, 1)
    np.testing.assert_array_equal(jac[0, 1:], 0.0)  # 后面的词影响不了第 1 步


def _random_rnn(seed, T, d_in, d_h, with_b=False, with_h0=False, scale=1.0):
    rng = np.random.default_rng(seed)
    x = scale * rng.standard_normal((T, d_in))
    w_xh, w_hh = rng.standard_normal((d_in, d_h)) / 2, rng.standard_normal((d_h, d_h)) / 2
    b_h = rng.standard_normal(d_h) if with_b else None
    h0 = rng.standard_normal(d_h) if with_h0 else None
    return x, w_xh, w_hh, b_h, h0


def _linear_reference(x, w_xh, w_hh, b_h, h0):
    h = np.zeros(w_hh.shape[0]) if h0 is None else h0
    b_h = np.zeros(w_hh.shape[0]) if b_h is None else b_h
    out = []
    for x_t in x:
        h = x_t @ w_xh + h @ w_hh + b_h
        out.append(h)
    return np.array(out)


CASES = [(5, 1, 1, False, False), (6, 3, 4, True, False), (4, 2, 5, False, True), (7, 4, 3, True, True)]


@pytest.mark.parametrize("T, d_in, d_h, with_b, with_h0", CASES, ids=str)
@pytest.mark.parametrize("linear", [False, True], ids=["tanh", "linear"])
def test_jacobians_match_finite_differences(T, d_in, d_h, with_b, with_h0, linear):
    x, w_xh, w_hh, b_h, h0 = _random_rnn(T * 10 + d_h, T, d_in, d_h, with_b, with_h0)
    forward = _linear_reference if linear else (lambda *a: tl.rnn_forward(*a))
    states, jac = rnn.input_jacobians(x, w_xh, w_hh, b_h=b_h, h0=h0, linear=linear)
    np.testing.assert_allclose(states, forward(x, w_xh, w_hh, b_h, h0), rtol=1e-12, atol=1e-14)
    fd = numeric_gradient(lambda a: forward(a, w_xh, w_hh, b_h, h0), x)  # (T, d_h, T, d_in)：∂h_t/∂x_s
    for s in range(T):
        for a in range(d_in):
            np.testing.assert_allclose(jac[:, s, :, a], fd[:, :, s, a], rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("T, d_in, d_h, with_b, with_h0", CASES, ids=str)
def test_jacobians_match_backpropagation(T, d_in, d_h, with_b, with_h0):
    """独立算法：从最后一步往回乘（反向传播），得到 ∂h_T/∂x_s 对所有 s。"""
    x, w_xh, w_hh, b_h, h0 = _random_rnn(T + 7 * d_in, T, d_in, d_h, with_b, with_h0)
    states, jac = rnn.input_jacobians(x, w_xh, w_hh, b_h=b_h, h0=h0)
    g = np.eye(d_h)  # ∂h_T/∂h_t，从 t = T 开始
    for t in range(T - 1, -1, -1):
        local = g * (1 - states[t] ** 2)  # ∂h_T/∂(第 t 步 tanh 之前的值)
        np.testing.assert_allclose(jac[T - 1, t], local @ w_xh.T, rtol=1e-10, atol=1e-14)
        g = local @ w_hh.T


@given(st.integers(1, 8), st.integers(1, 4), st.integers(1, 6), st.floats(0.1, 3.0), st.floats(0.0, 3.0),
       st.integers(0, 2**32 - 1))
def test_tanh_influence_is_bounded_by_gain_power_and_linear_is_exact(T, d_in, d_h, gain, scale, seed):
    rng = np.random.default_rng(seed)
    w_hh = rnn.orthogonal_recurrent_weights(d_h, gain, rng)
    w_xh = rng.standard_normal((d_in, d_h))
    x = scale * rng.standard_normal((T, d_in))
    _, jac = rnn.input_jacobians(x, w_xh, w_hh)
    _, jac_lin = rnn.input_jacobians(x, w_xh, w_hh, linear=True)
    first = np.linalg.norm(w_xh, 2)
    powers = first * gain ** np.arange(T)  # ‖W_xh‖ · g^(t-1)
    norms = np.linalg.norm(jac[:, 0], ord=2, axis=(-2, -1))
    norms_lin = np.linalg.norm(jac_lin[:, 0], ord=2, axis=(-2, -1))
    np.testing.assert_allclose(norms_lin, powers, rtol=1e-9)  # 正交矩阵：去掉 tanh 时正好是 g 的幂
    assert np.all(norms <= powers * (1 + 1e-9))  # tanh 的斜率 <= 1，只会更小


@given(st.integers(1, 6), st.integers(1, 3), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_jacobians_are_causal_and_inputs_untouched(T, d_in, d_h, seed):
    x, w_xh, w_hh, b_h, h0 = _random_rnn(seed, T, d_in, d_h, True, True)
    before = [a.copy() for a in (x, w_xh, w_hh, b_h, h0)]
    for linear in (False, True):
        _, jac = rnn.input_jacobians(x, w_xh, w_hh, b_h=b_h, h0=h0, linear=linear)
        upper = np.triu(np.ones((T, T), bool), k=1)  # t < s 的位置
        np.testing.assert_array_equal(jac[upper], 0.0)
    for a, b in zip((x, w_xh, w_hh, b_h, h0), before):
        np.testing.assert_array_equal(a, b)


@given(st.integers(1, 12), st.floats(0.01, 10.0), st.integers(0, 2**32 - 1))
def test_orthogonal_weights_scale_every_vector_by_gain(d_h, gain, seed):
    w = rnn.orthogonal_recurrent_weights(d_h, gain, np.random.default_rng(seed))
    assert w.shape == (d_h, d_h)
    np.testing.assert_allclose(w @ w.T, gain**2 * np.eye(d_h), atol=1e-10 * max(1.0, gain**2))
    v = np.random.default_rng(seed + 1).standard_normal(d_h)
    np.testing.assert_allclose(np.linalg.norm(v @ w), gain * np.linalg.norm(v), rtol=1e-10)


def test_orthogonal_weights_same_seed_same_matrix_and_gain_only_scales():
    a = rnn.orthogonal_recurrent_weights(5, 0.9, np.random.default_rng(3))
    b = rnn.orthogonal_recurrent_weights(5, 1.0, np.random.default_rng(3))
    np.testing.assert_allclose(a, 0.9 * b, rtol=1e-15)


def test_random_rnn_is_the_recipe_in_its_docstring():
    """独立地照说明书重抽一遍：先 Q（增益 1 的正交矩阵），再 W_xh / √d_in，最后标准正态的 x。"""
    q, w_xh, x = tl.random_rnn(60, 4, 16, np.random.default_rng(1))
    rng = np.random.default_rng(1)
    np.testing.assert_array_equal(q, rnn.orthogonal_recurrent_weights(16, 1.0, rng))
    np.testing.assert_array_equal(w_xh, rng.standard_normal((4, 16)) / 2)
    np.testing.assert_array_equal(x, rng.standard_normal((60, 4)))


def test_random_rnn_memory_decays_faster_than_gain():
    """正文的 16 维 RNN（g = 0.9，输入强度 0.5）：第 60 步的影响力远小于第 1 步，每步衰减得比 g 还快。"""
    q, w_xh, x = tl.random_rnn(60, 4, 16, np.random.default_rng(1))
    _, jac = rnn.input_jacobians(0.5 * x, w_xh, 0.9 * q)
    influence = np.linalg.norm(jac[:, 0], ord=2, axis=(-2, -1))
    assert influence[-1] < 1e-6 * influence[0]
    assert (influence[-1] / influence[0]) ** (1 / 59) < 0.9  # tanh 的斜率让它比 g 还小


# ---------------------------------------------------------------- 坏输入

RNG = np.random.default_rng(0)
JX, WX, WH = np.ones((3, 2)), np.ones((2, 4)), np.eye(4)  # 第 1 章雅可比矩阵的 x、W_xh (d_in=2, d_h=4)、W_hh
VE, TE = ValueError, TypeError


def rnn_fw(**kw):
    args = dict(x=np.ones((4, 2)), w_xh=np.ones((2, 3)), w_hh=np.eye(3)) | kw
    return lambda: tl.rnn_forward(**args)


ERROR_CASES = [
    # ---- rnn_forward
    ("rnn-w_hh-not-square", rnn_fw(w_hh=np.ones((3, 2))), VE, r"w_hh 的形状应为 \(3, 3\).*\(3, 2\)"),
    ("rnn-x-1d", rnn_fw(x=np.ones(2)), VE, r"x 至少要有 2 维.*shape=\(2,\)"),
    ("rnn-x-3d", rnn_fw(x=np.ones((1, 4, 2))), VE, r"x 的形状应为 \(任意, 任意\).*\(1, 4, 2\)"),
    ("rnn-w_xh-rows", rnn_fw(w_xh=np.ones((3, 3))), VE, r"w_xh 的形状应为 \(2, 任意\).*\(3, 3\).*d_in=2"),
    ("rnn-h0-length", rnn_fw(h0=np.zeros(2)), VE, r"h0 的形状应为 \(3,?\).*\(2,\)"),
    ("rnn-b_h-length", rnn_fw(b_h=np.zeros(4)), VE, r"b_h 的形状应为 \(3,?\).*\(4,\)"),
    ("rnn-b_h-expected-shape-is-a-tuple", rnn_fw(b_h=np.zeros(4)), VE, r"b_h 的形状应为 \(3,\)"),
    # ---- orthogonal_recurrent_weights
    ("orth-d_h-0", lambda: rnn.orthogonal_recurrent_weights(0, 1.0, RNG), ValueError, r"d_h 必须是正整数.*0"),
    ("orth-gain-0", lambda: rnn.orthogonal_recurrent_weights(3, 0.0, RNG), ValueError, r"gain 必须是有限的正实数.*0\.0"),
    ("orth-gain-inf", lambda: rnn.orthogonal_recurrent_weights(3, np.inf, RNG), ValueError, r"gain .*inf"),
    ("orth-gain-str", lambda: rnn.orthogonal_recurrent_weights(3, "1", RNG), TypeError, r"gain 必须是正实数.*'1'"),
    ("orth-rng-int", lambda: rnn.orthogonal_recurrent_weights(3, 1.0, 0), TypeError,
     r"rng 必须是 np\.random\.Generator.*int"),
    ("orthogonal-too-big", call(rnn.orthogonal_recurrent_weights, 10**5, 1.0, RNG), VE, r"d_h × d_h=10000000000 太大"),
    # ---- input_jacobians
    ("jac-x-list", lambda: rnn.input_jacobians(JX.tolist(), WX, WH), TypeError, r"x 必须是 NumPy 数组.*list"),
    ("jac-w_hh-shape", lambda: rnn.input_jacobians(JX, WX, np.ones((4, 3))), ValueError,
     r"w_hh 的形状应为 \(4, 4\).*\(4, 3\)"),
    ("jac-w_xh-rows", lambda: rnn.input_jacobians(JX, np.ones((3, 4)), WH), ValueError, r"w_xh 的形状应为 \(2, 任意\)"),
    ("jac-x-nan", lambda: rnn.input_jacobians(np.full((3, 2), np.nan), WX, WH), ValueError, r"x 含有 NaN"),
    ("jac-h0-linear", lambda: rnn.input_jacobians(JX, WX, WH, h0=np.zeros(3), linear=True), ValueError,
     r"h0 的形状应为"),
    ("rnn-linear-overflow", call(rnn.input_jacobians, np.ones((40, 1)), np.ones((1, 1)), np.full((1, 1), 1e10),
                                 linear=True), VE, r"linear=True.*溢出"),
    ("rnn-linear-not-bool", call(rnn.input_jacobians, JX, WX, WH, linear="no"), TE, r"linear 必须是 bool.*'no'"),
    ("jacobians-too-big", call(rnn.input_jacobians, np.ones((3000, 4)), np.ones((4, 16)), np.eye(16)), VE,
     r"T² × d_h × d_in=576000000 太大"),
    # ---- random_rnn（第 1 章共用的随机 RNN）
    ("random_rnn-T-0", call(tl.random_rnn, 0, 4, 16, RNG), VE, r"T 必须是正整数.*0"),
    ("random_rnn-d_h-float", call(tl.random_rnn, 3, 4, 16.0, RNG), TE, r"d_h 必须是正整数.*float 16\.0"),
    ("random_rnn-rng-int", call(tl.random_rnn, 3, 4, 16, 1), TE, r"rng 必须是 np\.random\.Generator.*int"),
    ("random-rnn-too-big", call(rnn.random_rnn, 10**9, 4, 16, RNG), VE, r"最大的数组=4000000000 太大"),
    ("rnn-preactivation-overflow", call(rnn.rnn_forward, np.array([[1e308, 1e308]]), np.ones((2, 1)), np.ones((1, 1))), VE,
     r"RNN 第 0 步进 tanh 之前的 x_t @ w_xh \+ h @ w_hh \+ b_h 溢出"),
]
test_documented_errors = error_table_test(ERROR_CASES)
