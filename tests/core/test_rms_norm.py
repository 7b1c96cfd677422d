"""core/rms_norm.py：RMSNorm——手算的 [3, 4]、逐行的参照、与 LayerNorm 的关系（均值为 0 的行上两者相同）、
任何量级的输入结果都不变、float32 进 float32 出、文档里写明的报错。"""

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.core.layer_norm import layer_norm
from transformer_lab.core.rms_norm import rms_norm

from helpers.errors import call, error_table_test


def ref_rms_norm(x, w, eps):
    """逐行：x / √(Σx²/D + ε) · w（math 写法，float64）。"""
    rows = x.reshape(-1, x.shape[-1])
    out = [[v / math.sqrt(sum(u * u for u in row) / len(row) + eps) * wi for v, wi in zip(row, w)] for row in rows]
    return np.array(out).reshape(x.shape)


def test_by_hand():
    # [3, 4]：mean(x²) = 12.5，√12.5 = 3.5355…
    np.testing.assert_allclose(rms_norm(np.array([3.0, 4.0]), np.ones(2), eps=1e-12), [3 / 12.5**0.5, 4 / 12.5**0.5])
    assert rms_norm(np.zeros((2, 3)), np.ones(3)).tolist() == [[0.0] * 3] * 2  # 全是 0 的行：结果是 0，不是 NaN


@given(st.integers(0, 10**6), st.integers(1, 4), st.integers(2, 9), st.floats(1e-6, 1e-2))
def test_matches_the_row_by_row_reference(seed, T, D, eps):
    rng = np.random.default_rng(seed)
    x, w = rng.normal(size=(T, D)) * rng.uniform(0.01, 10), rng.normal(size=D)
    np.testing.assert_allclose(rms_norm(x, w, eps), ref_rms_norm(x, w, eps), rtol=1e-10, atol=1e-12)


@given(st.integers(0, 10**6), st.integers(2, 9))
def test_equals_layer_norm_on_rows_with_mean_zero(seed, D):
    """LayerNorm = RMSNorm 先减均值、再加 β：行的均值是 0、β = 0 时两者相同。"""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(3, D))
    x = x - x.mean(axis=-1, keepdims=True)
    w = rng.normal(size=D)
    np.testing.assert_allclose(rms_norm(x, w), layer_norm(x, w, np.zeros(D)), rtol=1e-9, atol=1e-12)
    y = x + 1.0  # 反证：均值不是 0 时两者不同
    assert not np.allclose(rms_norm(y, w), layer_norm(y, w, np.zeros(D)))


@given(st.sampled_from([1.0, 1e20, 1e200, 1e300]))
def test_huge_rows_do_not_overflow(scale):
    """x² 在 1e200 时就溢出了；先除以每行的最大绝对值，结果仍是 x / rms(x)（ε 可以忽略）。"""
    x = np.array([[3.0, -4.0, 0.0, 1.0]])
    expected = x / math.sqrt(26 / 4)
    np.testing.assert_allclose(rms_norm(x * scale, np.ones(4)), expected, rtol=1e-6)


def test_tiny_rows_are_dominated_by_eps():
    """x ≈ 1e-200：mean(x²) 下溢成 0，结果是 x / √ε（而不是 0/0）。"""
    x = np.array([[3e-200, -4e-200]])
    np.testing.assert_allclose(rms_norm(x, np.ones(2), eps=1e-4), x / 1e-2, rtol=1e-12)


def test_float32_stays_float32_and_input_untouched():
    x = np.array([[1.0, 2.0, 3.0]], dtype=np.float32)
    before = x.copy()
    y = rms_norm(x, np.ones(3, dtype=np.float32))
    assert y.dtype == np.float32 and np.array_equal(x, before)
    assert rms_norm(x, np.ones(3)).dtype == np.float32  # float64 的权重不把结果提升成 float64


V, T = ValueError, TypeError
ERROR_CASES = [
    ("x-list", call(rms_norm, [1.0, 2.0], np.ones(2)), T, r"x 必须是 NumPy 数组"),
    ("x-nan", call(rms_norm, np.array([np.nan, 1.0]), np.ones(2)), V, r"x 含有 NaN"),
    ("weight-length", call(rms_norm, np.ones((2, 3)), np.ones(2)), V, r"weight 的形状应为 \(3,\).*weight 的长度是 x 的最后一维"),
    ("eps-zero", call(rms_norm, np.ones(2), np.ones(2), eps=0.0), V, r"eps 必须是有限的正实数"),
    ("eps-str", call(rms_norm, np.ones(2), np.ones(2), eps="1e-5"), T, r"eps 必须是"),
]
test_documented_errors = error_table_test(ERROR_CASES)
