"""core/feed_forward.py 的 activation 选项：精确的 erf 形式 GELU，它的导数，以及 ReLU（默认）的行为不变。

- 手算：GELU(0) = 0，GELU(1) = Φ(1) = 0.8413447…，GELU(−1) = −Φ(−1)；GELU'(0) = ½。
- 参照：逐个元素的 math.erf；性质 GELU(x) − GELU(−x) = x、GELU'(x) + GELU'(−x) = 1（因为 Φ(x) + Φ(−x) = 1）。
- 反向：中心差分 (finite differences) 检查所有 5 个梯度；VJP 与 backward 一致；
  反证：把 GELU 的导数换成 ReLU 的，同一个差分检查必须失败。
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import transformer_lab as tl
from transformer_lab.core.feed_forward import feed_forward_vjp_unchecked, gelu, gelu_derivative

from helpers.errors import check_error

EPS = 1e-6


def ffn_params(rng, D=3, d_ff=5):
    return {"w_1": rng.normal(size=(D, d_ff)), "b_1": rng.normal(size=d_ff), "w_2": rng.normal(size=(d_ff, D)),
            "b_2": rng.normal(size=D)}


def numerical_grads(loss, arrays):
    """loss(**arrays) 对每个数组的中心差分梯度。"""
    grads = {}
    for name, base in arrays.items():
        g = np.zeros_like(base)
        for i in np.ndindex(base.shape):
            step = np.zeros_like(base)
            step[i] = EPS
            g[i] = (loss(**{**arrays, name: base + step}) - loss(**{**arrays, name: base - step})) / (2 * EPS)
        grads[name] = g
    return grads


def test_gelu_by_hand():
    phi_1 = 0.5 * (1 + math.erf(1 / math.sqrt(2)))  # Φ(1) ≈ 0.8413447
    np.testing.assert_allclose(gelu(np.array([0.0, 1.0, -1.0])), [0.0, phi_1, -(1 - phi_1)], rtol=1e-15, atol=1e-16)
    assert round(phi_1, 7) == 0.8413447
    assert gelu_derivative(np.array([0.0]))[0] == 0.5  # Φ(0) + 0·φ(0)
    big = gelu(np.array([-40.0, 40.0]))
    assert big[0] == 0.0 and big[1] == 40.0  # 远离 0 时：负的一侧是 0，正的一侧就是 x（像 ReLU）


@given(st.lists(st.floats(-8, 8), min_size=1, max_size=20))
def test_gelu_matches_math_erf_and_its_symmetries(values):
    x = np.array(values)
    expected = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in values])
    np.testing.assert_allclose(gelu(x), expected, rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(gelu(x) - gelu(-x), x, atol=1e-13)  # Φ(x) + Φ(−x) = 1
    np.testing.assert_allclose(gelu_derivative(x) + gelu_derivative(-x), 1.0, atol=1e-13)


def test_gelu_derivative_matches_finite_differences():
    x = np.linspace(-5, 5, 41)
    numeric = (gelu(x + EPS) - gelu(x - EPS)) / (2 * EPS)
    np.testing.assert_allclose(gelu_derivative(x), numeric, atol=1e-8)


@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_backward_matches_finite_differences(activation):
    rng = np.random.default_rng(1)
    arrays = {"x": rng.normal(size=(2, 4, 3))} | ffn_params(rng)
    g_out = rng.normal(size=(2, 4, 3))

    def loss(**kw):
        return float(np.sum(tl.feed_forward(**kw, activation=activation) * g_out))

    analytic = tl.feed_forward_backward(**arrays, grad_out=g_out, activation=activation)
    numeric = numerical_grads(loss, arrays)
    for name in arrays:
        np.testing.assert_allclose(analytic[name], numeric[name], rtol=1e-5, atol=1e-7, err_msg=name)


def test_the_finite_difference_check_can_fail():
    """反证：GELU 的前向配 ReLU 的导数，差分检查必须发现 x 的梯度不对。"""
    rng = np.random.default_rng(1)
    arrays = {"x": rng.normal(size=(4, 3))} | ffn_params(rng)
    g_out = rng.normal(size=(4, 3))
    wrong = tl.feed_forward_backward(**arrays, grad_out=g_out, activation="relu")
    numeric = numerical_grads(lambda **kw: float(np.sum(tl.feed_forward(**kw, activation="gelu") * g_out)), arrays)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(wrong["x"], numeric["x"], rtol=1e-5, atol=1e-7)


def test_relu_default_is_unchanged():
    """默认仍是 ReLU：与论文的公式逐元素相同，反向里 z ≤ 0 处的梯度恰好是 0。"""
    rng = np.random.default_rng(2)
    x, p = rng.normal(size=(5, 3)), ffn_params(rng)
    z = x @ p["w_1"] + p["b_1"]
    np.testing.assert_array_equal(tl.feed_forward(x, **p), np.maximum(z, 0) @ p["w_2"] + p["b_2"])
    g = tl.feed_forward_backward(x, **p, grad_out=np.ones((5, 3)))
    dz = np.where(z > 0, np.ones((5, 3)) @ p["w_2"].T, 0)
    np.testing.assert_array_equal(g["b_1"], dz.sum(axis=0))
    assert not np.allclose(tl.feed_forward(x, **p), tl.feed_forward(x, **p, activation="gelu"))


def test_vjp_equals_backward_and_keeps_float32():
    rng = np.random.default_rng(3)
    x, p = rng.normal(size=(4, 3)).astype(np.float32), {k: v.astype(np.float32) for k, v in ffn_params(rng).items()}
    out, backward = feed_forward_vjp_unchecked(x, *p.values(), activation="gelu")
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, tl.feed_forward(x, **p, activation="gelu"))
    g_out = np.ones((4, 3), np.float32)
    for name, g in backward(g_out).items():
        assert g.dtype == np.float32, name
        np.testing.assert_array_equal(g, tl.feed_forward_backward(x, **p, grad_out=g_out, activation="gelu")[name])


def test_inputs_are_not_modified():
    rng = np.random.default_rng(4)
    x, p = rng.normal(size=(4, 3)), ffn_params(rng)
    before = [a.copy() for a in (x, *p.values())]
    tl.feed_forward_backward(x, **p, grad_out=np.ones((4, 3)), activation="gelu")
    for a, b in zip((x, *p.values()), before):
        np.testing.assert_array_equal(a, b)


X, P = np.ones((2, 3)), ffn_params(np.random.default_rng(0))
ERROR_CASES = [
    ("ffn-activation-unknown", lambda: tl.feed_forward(X, **P, activation="tanh"), ValueError,
     r"activation='tanh' 不存在.*'relu'、'gelu'"),
    ("ffn-activation-type", lambda: tl.feed_forward(X, **P, activation=1), TypeError, r"activation 必须是字符串"),
    ("ffn_bw-activation-unknown", lambda: tl.feed_forward_backward(X, **P, grad_out=X, activation="GELU"), ValueError,
     r"activation='GELU' 不存在"),
    ("ffn-gelu-overflow", lambda: tl.feed_forward(np.full((2, 3), 100.0), P["w_1"], P["b_1"], np.full((5, 3), 1e308),
                                                  P["b_2"], activation="gelu"), ValueError,
     r"GELU\(x W_1 \+ b_1\) W_2 \+ b_2 溢出"),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_documented_errors(case):
    _, fn, exc, pattern = case
    check_error(fn, exc, pattern)
