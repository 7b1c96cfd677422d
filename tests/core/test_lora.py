"""core/lora.py：LoRA 线性层——手算、合并后输出相同、对 A/B 的梯度与中心差分一致、lora_grads 与逐样本循环一致、报错。"""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.core.lora import lora_grads, lora_linear, lora_linear_backward, lora_merge, lora_parameters

from helpers.errors import call, error_table_test
from helpers.gradcheck import assert_gradients_close, numeric_gradient


def test_lora_by_hand():
    x, w = np.array([[1.0, 2.0]]), np.array([[1.0, 0.0], [0.0, 1.0]])
    a, b = np.array([[1.0], [1.0]]), np.array([[2.0, 0.0]])  # A B = [[2, 0], [2, 0]]，α/r = 0.5
    np.testing.assert_allclose(lora_linear(x, w, a, b, 0.5), [[1 + 0.5 * 6, 2.0]])
    np.testing.assert_allclose(lora_merge(w, a, b, 0.5), [[2.0, 0.0], [1.0, 1.0]])


def test_zero_b_changes_nothing():
    rng = np.random.default_rng(0)
    x, w, a = rng.normal(size=(3, 5)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    np.testing.assert_array_equal(lora_linear(x, w, a, np.zeros((2, 4)), 8.0), x @ w)


@given(st.integers(1, 4), st.integers(1, 5), st.integers(1, 5), st.integers(1, 3), st.integers(0, 10**6))
def test_merge_gives_same_outputs(N, d_in, d_out, r, seed):
    rng = np.random.default_rng(seed)
    x, w = rng.normal(size=(2, N, d_in)), rng.normal(size=(d_in, d_out))
    a, b = rng.normal(size=(d_in, r)), rng.normal(size=(r, d_out))
    np.testing.assert_allclose(lora_linear(x, w, a, b, 3.0), x @ lora_merge(w, a, b, 3.0), atol=1e-12)


@given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), st.integers(0, 10**6))
def test_backward_matches_finite_differences(N, d_in, d_out, r, seed):
    rng = np.random.default_rng(seed)
    x, w = rng.normal(size=(N, 2, d_in)), rng.normal(size=(d_in, d_out))
    a, b, g = rng.normal(size=(d_in, r)), rng.normal(size=(r, d_out)), rng.normal(size=(N, 2, d_out))
    grads = lora_linear_backward(x, w, a, b, 2.0, g)

    def loss(x_, a_, b_):
        return float((lora_linear(x_, w, a_, b_, 2.0) * g).sum())

    assert_gradients_close(grads["a"], numeric_gradient(lambda v: loss(x, v, b), a))
    assert_gradients_close(grads["b"], numeric_gradient(lambda v: loss(x, a, v), b))
    assert_gradients_close(grads["x"], numeric_gradient(lambda v: loss(v, a, b), x))


def test_lora_grads_is_the_chain_rule_of_the_merged_gradient():
    """对合并矩阵的梯度 G_W = Σ xᵀ g（逐样本的 float64 循环）→ lora_grads 与 lora_linear_backward 相同。"""
    rng = np.random.default_rng(2)
    x, w, a, b, g = (rng.normal(size=s) for s in ((6, 4), (4, 3), (4, 2), (2, 3), (6, 3)))
    grad_w = sum(np.outer(x[i], g[i]) for i in range(6))
    expected = lora_linear_backward(x, w, a, b, 4.0, g)
    got = lora_grads(grad_w, a, b, 4.0)
    for k in ("a", "b"):
        np.testing.assert_allclose(got[k], expected[k], rtol=1e-12)


def test_counter_test_w_has_no_gradient():
    grads = lora_linear_backward(np.ones((1, 2)), np.eye(2), np.ones((2, 1)), np.ones((1, 2)), 1.0, np.ones((1, 2)))
    assert set(grads) == {"x", "a", "b"}


def test_parameter_count():
    assert lora_parameters(64, 64, 4) == 4 * 128 == 512
    assert lora_parameters(3, 5, 1) == np.ones((3, 1)).size + np.ones((1, 5)).size


VE, TE = ValueError, TypeError
_W, _A, _B = np.eye(2), np.ones((2, 1)), np.ones((1, 2))
ERROR_CASES = [
    ("lora-b-shape", call(lora_linear, np.ones((1, 2)), _W, _A, np.ones((2, 2)), 1.0), VE, r"LoRA 的形状对不上.*b 应为"),
    ("lora-x-width", call(lora_linear, np.ones((1, 3)), _W, _A, _B, 1.0), VE, r"x 的最后一维必须等于 w 的行数 D_in=2"),
    ("lora-alpha", call(lora_linear, np.ones((1, 2)), _W, _A, _B, 0.0), VE, r"alpha"),
    ("lora-alpha-str", call(lora_merge, _W, _A, _B, "1"), TE, r"alpha"),
    ("lora-w-3d", call(lora_merge, np.ones((2, 2, 2)), _A, _B, 1.0), VE, r"w 必须是二维矩阵"),
    ("lora-a-list", call(lora_grads, _W, [[1.0], [1.0]], _B, 1.0), TE, r"a 必须是 NumPy 数组"),
    ("lora-grad-shape", call(lora_linear_backward, np.ones((1, 2)), _W, _A, _B, 1.0, np.ones((1, 3))), VE, r"grad_y"),
    ("lora-rank-zero", call(lora_parameters, 4, 4, 0), VE, r"rank"),
    ("lora-rank-float", call(lora_parameters, 4, 4, 1.5), TE, r"rank"),
]
test_documented_errors = error_table_test(ERROR_CASES)
