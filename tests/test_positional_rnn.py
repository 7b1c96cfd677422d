"""正弦位置编码与 Elman RNN：手算例子、逐元素参考实现、性质测试、dtype、不改输入。"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import transformer_lab as tl

# ---------------------------------------------------------------- 位置编码


def ref_pe(num_positions, d_model, base=10000.0):
    """论文 3.5 节的公式，逐个元素写：PE[p, 2i] = sin(p / base^(2i/d))，PE[p, 2i+1] = cos(同一个角度)。"""
    pe = np.zeros((num_positions, d_model))
    for p in range(num_positions):
        for i in range(d_model // 2):
            angle = p / base ** (2 * i / d_model)
            pe[p, 2 * i] = math.sin(angle)
            pe[p, 2 * i + 1] = math.cos(angle)
    return pe


def test_pe_position_zero_is_0_1_0_1():
    np.testing.assert_array_equal(tl.sinusoidal_positional_encoding(1, 8)[0], [0, 1] * 4)


def test_pe_position_one_by_hand():
    # d_model = 4：第 0 对的频率是 1，第 1 对是 1 / 10000^(2/4) = 0.01
    expected = [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)]
    np.testing.assert_allclose(tl.sinusoidal_positional_encoding(3, 4)[1], expected, rtol=1e-15)


@pytest.mark.parametrize("num_positions, d_model, base", [
    (1, 2, 10000.0), (7, 6, 10000.0), (50, 16, 10000.0), (128, 64, 10000.0), (10, 4, 100.0), (5, 8, 2.5), (4, 2, 1),
], ids=lambda v: str(v))
def test_pe_matches_elementwise_formula(num_positions, d_model, base):
    got = tl.sinusoidal_positional_encoding(num_positions, d_model, base=base)
    assert got.shape == (num_positions, d_model) and got.dtype == np.float64
    np.testing.assert_allclose(got, ref_pe(num_positions, d_model, base), rtol=1e-12, atol=1e-12)


@given(st.integers(1, 60), st.integers(1, 16), st.integers(0, 20))
def test_pe_pairs_lie_on_unit_circle_and_shift_is_a_rotation(num_positions, half, k):
    d_model = 2 * half
    pe = tl.sinusoidal_positional_encoding(num_positions + k, d_model)
    sin, cos = pe[:, 0::2], pe[:, 1::2]  # (P, D/2)
    np.testing.assert_allclose(sin**2 + cos**2, 1.0, rtol=1e-12)
    # 位置 p+k 的每一对 (sin, cos) = 位置 p 的那一对旋转 k·ω_i：相对位置是一个线性变换
    omega = np.array([1 / 10000 ** (2 * i / d_model) for i in range(half)])
    s, c = np.sin(k * omega), np.cos(k * omega)
    p = np.arange(num_positions)
    np.testing.assert_allclose(sin[p + k], sin[p] * c + cos[p] * s, atol=1e-9)
    np.testing.assert_allclose(cos[p + k], cos[p] * c - sin[p] * s, atol=1e-9)


def test_pe_rows_are_distinct():
    pe = tl.sinusoidal_positional_encoding(200, 16)
    assert len({tuple(np.round(row, 9)) for row in pe}) == 200  # 每个位置的"座位号"都不同


# ---------------------------------------------------------------- RNN


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
