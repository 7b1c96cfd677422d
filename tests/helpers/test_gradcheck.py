"""helpers/gradcheck.py 自己的测试：数值梯度的形状与数值对，检查真的能失败。"""

import numpy as np
import pytest

from transformer_lab.core.layer_norm import layer_norm, layer_norm_backward

from helpers.gradcheck import assert_gradients_close, numeric_gradient


def test_numeric_grad_check_can_fail():
    x = np.array([1.0, 2.0, 4.0])
    grad_x, _, _ = layer_norm_backward(x, np.ones(3), np.array([1.0, 0.0, 0.0]))
    numeric = numeric_gradient(lambda a: layer_norm(a, np.ones(3), np.zeros(3))[0], x)
    assert_gradients_close(grad_x, numeric)
    with pytest.raises(AssertionError, match="相对误差"):
        assert_gradients_close(grad_x * (1 + 1e-5), numeric)  # 差十万分之一就被抓住


def test_gradient_and_jacobian_by_hand():
    a = np.array([[1.0, -2.0], [0.5, 3.0]])
    np.testing.assert_allclose(numeric_gradient(lambda b: np.sum(b**2), a), 2 * a, rtol=1e-9)  # ∂Σb²/∂b = 2b
    m = np.arange(12.0).reshape(3, 2, 2)
    jac = numeric_gradient(lambda b: np.einsum("kij,ij->k", m, b), a)  # f_k = Σ_ij m[k,i,j] b[i,j]：J[k] = m[k]
    assert jac.shape == (3, 2, 2)
    np.testing.assert_allclose(jac, m, rtol=1e-9, atol=1e-9)
    before = a.copy()
    numeric_gradient(np.sum, a)
    np.testing.assert_array_equal(a, before)  # 不改输入


def test_floor_only_forgives_noise_when_the_gradient_is_zero():
    zero, noise = np.zeros(3), np.full(3, 1e-10)
    with pytest.raises(AssertionError, match="相对误差"):
        assert_gradients_close(zero, noise)  # 纯相对：解析梯度为 0 时，任何噪声都算 100% 的误差
    assert_gradients_close(zero, noise, floor=1e-2)  # 绝对误差 ≈ 1.7e-10 ≤ 1e-6 × 1e-2
    with pytest.raises(AssertionError, match="相对误差"):
        assert_gradients_close(zero, np.full(3, 1e-7), floor=1e-2)  # 真的错了（1.7e-7 > 1e-8）照样抓住
    with pytest.raises(AssertionError, match="形状不同"):
        assert_gradients_close(np.zeros(3), np.zeros((3, 1)))
