"""core/embedding.py：词嵌入 embed 与它的反向 embedding_backward——手算、重复的编号、中心差分、报错。"""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.core.embedding import embed, embedding_backward

from helpers.errors import call, error_table_test
from helpers.gradcheck import assert_gradients_close, numeric_gradient


def test_embed_by_hand():
    table = np.array([[0.0, 0.0], [1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(embed(np.array([[2, 0], [1, 1]]), table), [[[3, 4], [0, 0]], [[1, 2], [1, 2]]])


def test_embedding_backward_accumulates_repeated_ids():
    grad = embedding_backward(np.array([[1, 3, 1], [1, 0, 3]]), np.arange(12.0).reshape(2, 3, 2), vocab_size=5)
    # 词 1 在位置 (0,0)、(0,2)、(1,0)：[0,1] + [4,5] + [6,7]；词 3 在 (0,1)、(1,2)：[2,3] + [10,11]；词 0 在 (1,1)
    np.testing.assert_array_equal(grad, [[8, 9], [10, 13], [0, 0], [12, 14], [0, 0]])


@given(st.lists(st.integers(1, 4), min_size=1, max_size=2), st.integers(1, 5), st.integers(1, 4), st.integers(0, 10**6))
def test_embedding_backward_matches_finite_differences(lead, V, D, seed):
    rng = np.random.default_rng(seed)
    ids, table = rng.integers(0, V, size=lead), rng.normal(size=(V, D))
    g = rng.normal(size=(*lead, D))
    numeric = numeric_gradient(lambda t: np.sum(embed(ids, t) * g), table)
    assert_gradients_close(embedding_backward(ids, g, V), numeric)


def test_float32_is_preserved():
    table = np.random.default_rng(3).normal(size=(4, 8)).astype(np.float32)
    results = [embed(np.array([0, 2]), table), embedding_backward(np.array([0, 2]), table[:2], 3)]
    assert [r.dtype for r in results] == [np.float32] * len(results)


@given(st.sampled_from([np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.uint64]), st.integers(0, 10**6))
def test_narrow_integer_ids_give_the_same_answer_as_int64(dtype, seed):
    """窄整数的编号转成 np.intp 再用：结果与 int64 的编号完全相同，返回的编号数组也不会回绕。"""
    rng = np.random.default_rng(seed)
    V = min(np.iinfo(dtype).max + 1, 200)
    ids = rng.integers(0, V, size=(2, 3))
    table = rng.normal(size=(V, 2))
    np.testing.assert_array_equal(embed(ids.astype(dtype), table), embed(ids, table))
    np.testing.assert_array_equal(embedding_backward(ids.astype(dtype), np.ones((2, 3, 2)), V),
                                  embedding_backward(ids, np.ones((2, 3, 2)), V))


def test_token_ids_are_widened():
    """int8 的 127：检查过的编号是 np.intp，+1 得到 128，而不是 int8 回绕成的 -128（反证：int8 本身会回绕）。"""
    from transformer_lab import _validation as check
    raw = np.array([127], dtype=np.int8)
    assert int((raw + np.int8(1))[0]) == -128  # 反证：不转换就会回绕
    checked = check.token_ids(raw, "ids", 200)
    assert checked.dtype == np.intp and int(checked[0] + 1) == 128


TABLE = np.ones((3, 4))
VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("embed-id-out-of-range", call(embed, np.array([0, 5]), TABLE), VE, r"token_ids 越界.*V=3.*\[0, 2\].*\(1,\) 的值 5"),
    ("embed-id-negative", call(embed, np.array([[0, -1]]), TABLE), VE, r"token_ids 越界.*\(0, 1\) 的值 -1"),
    ("embed-float-ids", call(embed, np.array([0.0, 1.0]), TABLE), TE, r"token_ids.*dtype 必须是整数.*float64"),
    ("embed-list-ids", call(embed, [0, 1], TABLE), TE, r"token_ids 必须是整数 NumPy 数组.*list"),
    ("embed-table-1d", call(embed, np.array([0]), np.ones(3)), VE, r"table 的形状应为 \(任意, 任意\).*\(3,\)"),
    ("embedding-backward-grad_out-shape", call(embedding_backward, np.array([0, 1]), np.ones((3, 4)), 3), VE,
     r"grad_out 的形状应为 \(2, 4\)，收到的是 \(3, 4\)"),
    ("embedding-backward-vocab_size-0", call(embedding_backward, np.array([0]), np.ones((1, 4)), 0), VE,
     r"vocab_size 必须是正整数.*0"),
    ("embedding_bw-grad-overflow", call(embedding_backward, np.array([0, 0]), np.full((2, 1), 1e308), 1), VE,
     r"embedding_backward 的梯度 溢出"),
    ("embed-masked-ids", call(embed, np.ma.masked_array([0, 1], mask=[False, True]), TABLE), TE,
     r"token_ids 是掩码数组.*filled"),
    ("embedding_bw-masked-ids", call(embedding_backward, np.ma.masked_array([0, 1], mask=[True, False]), np.ones((2, 4)), 3),
     TE, r"token_ids 是掩码数组"),
    ("embedding_bw-over-budget", call(embedding_backward, np.array([0]), np.ones((1, 1000)), 10**7), VE,
     r"嵌入表的梯度 \(V=10000000, D\) 要占 74\.5 GiB"),
]
test_documented_errors = error_table_test(ERROR_CASES)
