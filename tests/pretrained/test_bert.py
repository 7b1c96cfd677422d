"""pretrained/bert.py 的句向量 ``mean_pool``：手算、掩码与“先切掉再平均”的参照相同、0/0 的报错。
（前向 ``forward`` 与 ``layer_params`` 在真模型上的对照见 test_model.py、test_reference.py。）"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_lab.pretrained.bert import mean_pool

from helpers.errors import error_table_test


def test_mean_pool_by_hand():
    """平均 [3, 4]，长度 5；掩掉的第三个词元（[PAD]）不算进平均。"""
    x = np.array([[3.0, 0.0], [3.0, 8.0], [100.0, -100.0]])
    np.testing.assert_allclose(mean_pool(x[:2]), [0.6, 0.8])
    np.testing.assert_allclose(mean_pool(x, mask=np.array([True, True, False])), [0.6, 0.8])
    assert not np.allclose(mean_pool(x), [0.6, 0.8])  # 反证：不掩的话 [PAD] 会把方向拉偏


def test_mean_pool_keeps_float32_and_does_not_touch_its_input():
    x = np.arange(1, 13, dtype=np.float32).reshape(2, 3, 2)
    before = x.copy()
    out = mean_pool(x, mask=np.array([[True, True, False], [True, True, True]]))
    assert out.dtype == np.float32 and out.shape == (2, 2)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_array_equal(mean_pool(x), mean_pool(x, mask=np.ones((2, 3), bool)))  # 全 True = 不给掩码


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(1, 4), st.integers(0, 2**32 - 1), st.data())
def test_masked_mean_equals_slicing_first(T, D, seed, data):
    """独立参照：掩码版 = 先用布尔下标挑出 True 的词元、再不带掩码地平均。"""
    x = np.random.default_rng(seed).normal(size=(T, D))
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=T, max_size=T).filter(any)))
    np.testing.assert_allclose(mean_pool(x, mask=mask), mean_pool(x[mask]), rtol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(mean_pool(x, mask=mask)), 1.0)


ERROR_CASES = [
    ("mask-all-false", lambda: mean_pool(np.ones((2, 3, 4)), mask=np.array([[True, False, False], [False] * 3])),
     ValueError, r"mask 在第 \(1,\) 句全是 False：一个词元都不平均，平均值是 0/0"),
    ("mask-int", lambda: mean_pool(np.ones((3, 4)), mask=np.array([1, 1, 0])), TypeError,
     r"mask 必须是 bool 类型的 NumPy 数组.*int"),
    ("mask-shape", lambda: mean_pool(np.ones((3, 4)), mask=np.ones(4, bool)), ValueError,
     r"mask 的形状必须是 last_hidden 去掉最后一维的 \(3,\)（每个词元一个），收到的是 \(4,\)"),
    ("zero-vector", lambda: mean_pool(np.array([[1.0, -2.0], [-1.0, 2.0]])), ValueError,
     r"last_hidden 的平均向量长度是 0.*0/0"),
    ("all-zero-hidden", lambda: mean_pool(np.zeros((2, 3, 4))), ValueError, r"平均向量长度是 0"),
    ("hidden-list", lambda: mean_pool([[1.0, 2.0]]), TypeError, r"last_hidden 必须是 NumPy 数组"),
    ("hidden-1d", lambda: mean_pool(np.ones(3)), ValueError, r"last_hidden 至少要有 2 维"),
    ("hidden-nan", lambda: mean_pool(np.array([[1.0, np.nan]])), ValueError, r"last_hidden 含有 NaN"),
    ("hidden-no-tokens", lambda: mean_pool(np.ones((0, 4))), ValueError, r"last_hidden 不能是空数组"),
]
test_documented_errors = error_table_test(ERROR_CASES)
