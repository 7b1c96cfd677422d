"""多头的管道：reshape 陷阱、三种算法相同、形状追踪与包里的多头注意力一致（数数在 test_costs.py）。"""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.core.attention import scaled_dot_product_attention
from transformer_lab.core.multihead import multi_head_attention, split_heads
from transformer_lab.lessons.head_shapes import heads_by_block_product, heads_by_loop, naive_split, shape_trace

from helpers.errors import error_table_test


def test_naive_split_mixes_tokens():
    T, D, H = 4, 8, 2
    x = 10.0 * np.arange(T)[:, None] + np.arange(D)  # 数字 = 10 × 词号 + 维号
    right, wrong = split_heads(x, H), naive_split(x, H)
    assert right.shape == wrong.shape == (H, T, D // H)
    assert np.all(right[:, 2] // 10 == 2)  # 对：每个头的第 2 个"词"确实是词 2
    assert np.any(wrong[:, 2] // 10 != 2)  # 错：混进了别的词
    assert np.array_equal(wrong[0, 1], [4.0, 5.0, 6.0, 7.0][:D // H])  # 头 0 的"词 1"其实是词 0 的后半段


@given(st.integers(1, 5), st.sampled_from([(4, 1), (4, 2), (6, 3), (8, 4)]), st.integers(0, 2**31))
def test_three_ways_agree(T, DH, seed):
    D, H = DH
    rng = np.random.default_rng(seed)
    q, k, v = (split_heads(rng.normal(size=(T, D)), H) for _ in range(3))
    vectorised, _ = scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(heads_by_loop(q, k, v), vectorised, atol=1e-12)
    block, scores = heads_by_block_product(q, k, v)
    np.testing.assert_allclose(block, vectorised, atol=1e-12)
    off = ~np.kron(np.eye(H, dtype=bool), np.ones((T, T), dtype=bool))
    assert np.all(scores[off] == 0)  # 不同头之间的打分恰为 0


def test_shape_trace_matches_package():
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(4, 8)), rng.normal(size=(4, 8, 8))
    tr = shape_trace(x, *w, num_heads=2)
    out, weights = multi_head_attention(x, *w, num_heads=2)
    np.testing.assert_allclose(tr["out"], out)
    np.testing.assert_allclose(tr["concat"] @ w[3], out)
    np.testing.assert_allclose(tr["weights"], weights)
    assert tr["q"].shape == (2, 4, 4) and tr["heads"].shape == (2, 4, 4)


def test_shape_trace_int8_does_not_wrap():
    """int8 的输入：路上的数组都按浮点数算，与 float64 的输入一模一样（反证：int8 里直接 x @ w 会回绕）。"""
    x, w = np.full((2, 4), 100, dtype=np.int8), np.full((4, 4, 4), 2, dtype=np.int8)
    assert int((x @ w[0])[0, 0]) != 800  # 反证：int8 的 100 × 2 × 4 回绕了
    tr, ref = shape_trace(x, *w, num_heads=2), shape_trace(x.astype(float), *w.astype(float), num_heads=2)
    assert all(np.array_equal(tr[k], ref[k]) for k in ref) and tr["Q"][0, 0] == 800
    q = np.arange(12, dtype=np.int8).reshape(2, 3, 2) * np.int8(10)  # (H, T, d_k)：q·kᵀ 在 int8 里会回绕
    np.testing.assert_array_equal(heads_by_block_product(q, q, q)[0], heads_by_block_product(*(q.astype(float),) * 3)[0])


ERROR_CASES = [
    ("naive-divisible", lambda: naive_split(np.zeros((2, 6)), 4), ValueError, "整除"),
    ("naive-ndim", lambda: naive_split(np.zeros((2, 2, 4)), 2), ValueError, "2 维"),
    ("loop-shape", lambda: heads_by_loop(np.zeros((2, 3, 2)), np.zeros((2, 4, 2)), np.zeros((2, 3, 2))),
     ValueError, "k"),
    ("block-dtype", lambda: heads_by_block_product(np.ones((2, 3, 2), complex), np.ones((2, 3, 2)), np.ones((2, 3, 2))),
     TypeError, r"q 的 dtype 必须是实数"),
    ("block-heads", lambda: heads_by_block_product(np.ones((2, 3, 2)), np.ones((3, 3, 2)), np.ones((2, 3, 2))),
     ValueError, r"k 的形状应为 \(2, 3, 2\)"),
    ("block-length", lambda: heads_by_block_product(np.ones((2, 3, 2)), np.ones((2, 4, 2)), np.ones((2, 3, 2))),
     ValueError, r"k 的形状应为 \(2, 3, 2\)"),
    ("block-ndim", lambda: heads_by_block_product(np.ones((2, 3, 2, 1)), np.ones((2, 3, 2, 1)), np.ones((2, 3, 2, 1))),
     ValueError, r"q 必须是 3 维"),
    ("block-nan", lambda: heads_by_block_product(np.full((2, 3, 2), np.nan), np.ones((2, 3, 2)), np.ones((2, 3, 2))),
     ValueError, r"q.*NaN"),
    ("trace-divisible", lambda: shape_trace(np.zeros((2, 6)), *np.zeros((4, 6, 6)), num_heads=4), ValueError, "整除"),
    ("block-product-overflow", lambda: heads_by_block_product(*np.full((3, 2, 3, 4), 1e300)), ValueError,
     r"打分 q·k / √d_k 溢出"),
    ("block-product-memory", lambda: heads_by_block_product(*np.ones((3, 4, 10**4, 1))), ValueError,
     r"\(H·T\) × \(H·T\) 的大打分表（H=4, T=10000） 要占"),
]
test_documented_errors = error_table_test(ERROR_CASES)
