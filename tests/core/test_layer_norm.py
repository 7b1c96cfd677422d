"""core/layer_norm.py：层归一化 layer_norm 与它的反向 layer_norm_backward。

参考实现 ref_layer_norm（tests/helpers/reference.py）逐行算均值与方差；反向与中心差分比较（float64，相对误差 ≤ 1e-6）；
任何量级的输入结果都不变（只看形状不看大小）；以及文档里写明的报错。
"""

import math
import warnings

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.core.layer_norm import layer_norm, layer_norm_backward, layer_norm_forward_unchecked, normalize

from helpers.errors import call, error_table_test
from helpers.gradcheck import assert_gradients_close, numeric_gradient
from helpers.reference import EPS, ref_layer_norm

shapes = st.tuples(st.lists(st.integers(1, 3), min_size=0, max_size=2), st.integers(2, 7))


def test_layer_norm_by_hand():
    # [1, 2, 3]：μ = 2，σ² = ((-1)² + 0² + 1²)/3 = 2/3
    s = math.sqrt(2 / 3 + EPS)
    expected = np.array([-1 / s, 0.0, 1 / s])
    np.testing.assert_allclose(layer_norm(np.array([1.0, 2.0, 3.0]), np.ones(3), np.zeros(3)), expected, rtol=1e-12)
    np.testing.assert_allclose(layer_norm(np.array([1.0, 2.0, 3.0]), np.full(3, 2.0), np.ones(3)), 2 * expected + 1)
    assert round(1 / s, 4) == 1.2247


@given(shapes, st.integers(0, 10**6), st.floats(0.1, 100), st.floats(-50, 50))
def test_layer_norm_rows_have_mean_0_variance_1_before_gamma_beta(shape, seed, scale, shift):
    lead, D = shape
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(*lead, D)) * scale + shift
    y = layer_norm(x, np.ones(D), np.zeros(D))
    var = x.var(axis=-1)
    np.testing.assert_allclose(y.mean(axis=-1), 0, atol=1e-9)
    np.testing.assert_allclose(y.var(axis=-1), var / (var + EPS), rtol=1e-9)  # σ²/(σ²+ε)：ε 只让它略小于 1
    y_exact = layer_norm(x, np.ones(D), np.zeros(D), eps=1e-12)
    np.testing.assert_allclose(y_exact.var(axis=-1)[var > 1e-4], 1, rtol=1e-7)  # ε → 0：方差就是 1
    gamma, beta = rng.normal(size=D), rng.normal(size=D)
    np.testing.assert_allclose(layer_norm(x, gamma, beta), gamma * y + beta, atol=1e-12)  # 然后才是 γ、β


@given(shapes, st.integers(0, 10**6))
def test_layer_norm_matches_loop(shape, seed):
    lead, D = shape
    rng = np.random.default_rng(seed)
    x, gamma, beta = rng.normal(size=(*lead, D)), rng.normal(size=D), rng.normal(size=D)
    np.testing.assert_allclose(layer_norm(x, gamma, beta), ref_layer_norm(x, gamma, beta), rtol=1e-10, atol=1e-12)


@given(st.floats(min_value=-140, max_value=300))
def test_layer_norm_is_scale_free_at_every_magnitude(power):
    """LayerNorm 只看形状不看大小：把一行乘上 10^power，结果不变，也不发警告。

    power >= -140 时方差 (≥ 1e-280) 比 ε = 1e-300 大 1e20 倍，ε 可以忽略；更小的输入里 ε 本来就该起作用。"""
    x = np.array([[3.0, -1.0, 0.5, 2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = layer_norm(x * 10.0**power, np.ones(4), np.zeros(4), eps=1e-300)
    np.testing.assert_allclose(big, layer_norm(x, np.ones(4), np.zeros(4), eps=1e-300), rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- 反向

@given(shapes, st.integers(0, 10**6), st.sampled_from([1e-5, 1e-2, 1.0]))
def test_layer_norm_backward_matches_finite_differences(shape, seed, eps):
    lead, D = shape
    eps = 1.0 if D == 2 else eps  # D = 2 且 ε 很小时输出几乎恒为 ±1，∂/∂x ~ ε/σ³ 小到与差分的舍入噪声同级
    rng = np.random.default_rng(seed)
    x, gamma, beta, g = (rng.normal(size=s) for s in [(*lead, D), D, D, (*lead, D)])
    loss = lambda x_, gamma_, beta_: np.sum(layer_norm(x_, gamma_, beta_, eps) * g)  # noqa: E731
    grad_x, grad_gamma, grad_beta = layer_norm_backward(x, gamma, g, eps)
    assert_gradients_close(grad_x, numeric_gradient(lambda a: loss(a, gamma, beta), x))
    assert_gradients_close(grad_gamma, numeric_gradient(lambda a: loss(x, a, beta), gamma))
    assert_gradients_close(grad_beta, numeric_gradient(lambda a: loss(x, gamma, a), beta))
    np.testing.assert_allclose(grad_x.sum(axis=-1), 0, atol=1e-10)  # 整体平移 x 不改变输出


@given(st.integers(0, 2**32 - 1), st.integers(-300, 300), st.sampled_from([1e-5, 1e-12, 1.0]))
def test_the_ordinary_shortcut_is_the_same_arithmetic_as_the_careful_path(seed, power, eps):
    """普通的行走几步直接的算术；批里只要有一行全是 0，整批就走逐行 np.where 的那条路。两条路逐位相同。"""
    x = np.random.default_rng(seed).normal(size=(3, 6)) * 10.0**power
    shortcut = normalize(x, eps)
    careful = normalize(np.concatenate([x, np.zeros((1, 6))]), eps)  # 多一行 0：逼它走 np.where 那条路
    np.testing.assert_array_equal(shortcut[0], careful[0][:3])
    np.testing.assert_array_equal(shortcut[1], careful[1][:3])


@given(st.integers(0, 2**32 - 1), st.integers(-300, 300), st.sampled_from([1e-5, 1e-12, 1.0, 1e-300]))
def test_forward_only_layer_norm_is_the_layer_norm_at_every_magnitude(seed, power, eps):
    """只做前向的 LayerNorm（逐词生成用）：普通的输入走公式，极大（平方溢出）、极小（ε 也极小）的输入改走防溢出的路；
    在 1e-300 到 1e300 的每个量级上都等于 layer_norm（舍入之内）。"""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(3, 6)) * 10.0**power
    gamma, beta = rng.normal(size=6), rng.normal(size=6)
    out, backward = layer_norm_forward_unchecked(x, gamma, beta, eps)
    assert backward is None
    np.testing.assert_allclose(out, layer_norm(x, gamma, beta, eps), rtol=0, atol=1e-12)


def test_the_naive_formula_is_wrong_for_a_huge_residual_stream():
    """反证：不防溢出的公式在 |x| ≈ 1e155 时平方溢出，σ² = inf，结果悄悄变成 0；只做前向的 LayerNorm 不会。"""
    x = np.array([[1.0, -2.0, 3.0, 0.5]]) * 1e155
    ones, zeros = np.ones(4), np.zeros(4)
    with np.errstate(over="ignore"):
        naive = (x - x.mean()) / np.sqrt(x.var() + 1e-5)
    assert np.all(naive == 0)  # 悄悄算错
    want = layer_norm(x, ones, zeros)  # 防溢出的 layer_norm：ε 相对 σ² 可以忽略，就是 [1, -2, 3, 0.5] 的标准化
    np.testing.assert_allclose(want[0], (x[0] / 1e155 - 0.625) / np.std(x[0] / 1e155), rtol=0, atol=1e-12)
    np.testing.assert_allclose(layer_norm_forward_unchecked(x, ones, zeros, 1e-5)[0], want, rtol=0, atol=1e-12)


def test_the_shortcut_comparison_can_fail():
    x = np.random.default_rng(0).normal(size=(3, 6))
    plain = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)  # 不先除以 s 的写法
    assert not np.array_equal(normalize(x, 1e-5)[0], plain)  # 舍入不同：逐位比较看得出来


def test_float32_is_preserved():
    x = np.random.default_rng(3).normal(size=(2, 4, 8)).astype(np.float32)
    ones, zeros = np.ones(8, np.float32), np.zeros(8, np.float32)
    results = [layer_norm(x, ones, zeros), *layer_norm_backward(x, ones, x)]
    assert [r.dtype for r in results] == [np.float32] * len(results)


def test_inputs_are_not_modified():
    rng = np.random.default_rng(4)
    x, gamma = rng.normal(size=(4, 8)), 1 + 0.3 * rng.normal(size=8)
    saved = x.copy(), gamma.copy()
    layer_norm(x, gamma, np.zeros(8))
    layer_norm_backward(x, gamma, x)
    np.testing.assert_array_equal(x, saved[0])
    np.testing.assert_array_equal(gamma, saved[1])


# ---------------------------------------------------------------- 坏输入

X = np.ones((3, 4))
VE = ValueError
ERROR_CASES = [
    ("layer_norm-gamma-length", call(layer_norm, X, np.ones(3), np.zeros(4)), VE,
     r"gamma 的形状应为 \(4,\)，收到的是 \(3,\).*D=4"),
    ("layer_norm-eps-negative", call(layer_norm, X, np.ones(4), np.zeros(4), eps=-1.0), VE, r"eps 必须是有限的正实数.*-1\.0"),
    ("ln-backward-grad_out-shape", call(layer_norm_backward, X, np.ones(4), np.ones((3, 5))), VE,
     r"grad_out 的形状应为 \(3, 4\)，收到的是 \(3, 5\)"),
    ("layer_norm-scale-shift-overflow", call(layer_norm, np.array([1.0, 2.0, 3.0]), np.full(3, 1.7e308), np.zeros(3)), VE,
     r"LayerNorm 的缩放与平移 γ ⊙ x̂ \+ β 溢出"),
    ("layer_norm_bw-grad-overflow", call(layer_norm_backward, np.array([1.0, 2.0, 3.0]), np.full(3, 1e300),
                                         np.array([1e300, 0.0, -1e300])), VE, r"layer_norm_backward 的梯度 grad_x 溢出"),
]
test_documented_errors = error_table_test(ERROR_CASES)
