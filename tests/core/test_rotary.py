"""core/rotary.py：RoPE 的两种配对和 llama.cpp 的行重排。

- ``rotary(x, 0)`` 就是第 6 章的 ``rope``；从 start 开始转 = 整段转完后取后面几行（逐词生成靠它）；
- 手算：前后两半的配对在 d = 4 时转的是 (x_0, x_2)、(x_1, x_3)；
- 本章的关键关系（Hypothesis）：前后两半配对训练的 W_q、W_k，经 ``permute_pairs`` 重排后用相邻配对转，
  得到的 q、k 正好是原来的 q、k 重排后的样子，所以每个头的注意力分数一模一样；反证：不重排就不一样；
- ``unpermute_pairs`` 是 ``permute_pairs`` 的逆；报错表。
"""

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import transformer_lab as tl
from transformer_lab.core.rotary import permute_pairs, rotary, rotary_halves, unpermute_pairs

from helpers.errors import call, error_table_test


@given(st.integers(0, 10**6), st.integers(1, 6), st.sampled_from([2, 4, 8]), st.sampled_from([10000.0, 100000.0]))
def test_start_zero_is_the_books_rope_and_start_shifts(seed, T, d, base):
    x = np.random.default_rng(seed).normal(size=(2, T + 3, d))
    full = rotary(x, 0, base)
    np.testing.assert_allclose(full, tl.rope(x, base), rtol=0, atol=1e-12)
    np.testing.assert_allclose(rotary(x[:, 3:], 3, base), full[:, 3:], rtol=0, atol=1e-12)


def test_halves_pairing_by_hand():
    """d = 4，位置 1：(x_0, x_2) 转 1 弧度，(x_1, x_3) 转 100000^(−1/2) 弧度。"""
    x = np.array([[0.0, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0, 4.0]])
    out = rotary_halves(x, 0, 100000.0)[1]
    a, b = 1.0, 100000.0 ** -0.5
    expected = [1 * math.cos(a) - 3 * math.sin(a), 2 * math.cos(b) - 4 * math.sin(b),
                3 * math.cos(a) + 1 * math.sin(a), 4 * math.cos(b) + 2 * math.sin(b)]
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_permute_by_hand_matches_llama_cpp():
    """llama.cpp 的 convert_hf_to_gguf.py：w.reshape(H, 2, d/2, ...).swapaxes(1, 2).reshape(w.shape)。
    两个头、d = 4：第 0 个头的行 [0, 1, 2, 3] → [0, 2, 1, 3]，第 1 个头 [4, 5, 6, 7] → [4, 6, 5, 7]。"""
    assert permute_pairs(np.arange(8.0), 2).tolist() == [0, 2, 1, 3, 4, 6, 5, 7]
    w = np.arange(16.0).reshape(8, 2)
    assert permute_pairs(w, 2)[:, 0].tolist() == [0, 4, 2, 6, 8, 12, 10, 14]
    assert unpermute_pairs(permute_pairs(w, 2), 2).tolist() == w.tolist()


@given(st.integers(0, 10**6), st.integers(1, 3), st.sampled_from([2, 4, 8]), st.integers(1, 5))
def test_permuted_weights_with_adjacent_pairs_equal_halves_on_the_original(seed, H, d, T):
    rng = np.random.default_rng(seed)
    D = 6
    w_q, w_k, h = rng.normal(size=(H * d, D)), rng.normal(size=(H * d, D)), rng.normal(size=(T, D))

    def per_head(w, rot, start=2):
        y = (h @ w.T).reshape(T, H, d).swapaxes(0, 1)  # (H, T, d)
        return rot(y, start, 100000.0)

    q_hf, k_hf = per_head(w_q, rotary_halves), per_head(w_k, rotary_halves)  # 原模型：前后两半
    q_gg, k_gg = per_head(permute_pairs(w_q, H), rotary), per_head(permute_pairs(w_k, H), rotary)  # GGUF：相邻
    np.testing.assert_allclose(q_gg @ k_gg.swapaxes(1, 2), q_hf @ k_hf.swapaxes(1, 2), rtol=1e-10, atol=1e-10)
    # q 本身也只是换了次序：把 GGUF 的 q 按同样的规则还原，就是原模型的 q
    np.testing.assert_allclose(np.concatenate([q_gg[..., 0::2], q_gg[..., 1::2]], axis=-1), q_hf, atol=1e-12)
    if d > 2 and T > 1:  # 反证：不重排就直接用相邻配对，分数不同（d = 2 时两种配对是同一对；同一位置的 q·k 转了也不变）
        q_bad, k_bad = per_head(w_q, rotary), per_head(w_k, rotary)
        assert not np.allclose(q_bad @ k_bad.swapaxes(1, 2), q_hf @ k_hf.swapaxes(1, 2), atol=1e-6)


def test_float32_stays_float32():
    x = np.ones((2, 3, 4), dtype=np.float32)
    assert rotary(x, 5, 100000.0).dtype == np.float32 and rotary_halves(x, 5).dtype == np.float32


V, T = ValueError, TypeError
ERROR_CASES = [
    ("odd-d", call(rotary, np.ones((2, 3))), V, r"x 的最后一维 d 必须是偶数"),
    ("one-dim", call(rotary, np.ones(4)), V, r"x 至少要有 2 维"),
    ("start-negative", call(rotary, np.ones((2, 2)), -1), V, r"start"),
    ("start-float", call(rotary, np.ones((2, 2)), 1.5), T, r"start"),
    ("start-too-far", call(rotary, np.ones((2, 2)), 10**6), V, r"start \+ T 不能超过 1000000"),
    ("base-1", call(rotary, np.ones((2, 2)), 0, 1.0), V, r"base 必须大于 1"),
    ("too-big", call(rotary, np.full((2, 2), 1e308)), V, r"x 的元素太大"),
    ("halves-odd-d", call(rotary_halves, np.ones((2, 5))), V, r"x 的最后一维 d 必须是偶数"),
    ("permute-rows", call(permute_pairs, np.ones((6, 2)), 4), V, r"w 的行数 6 必须能分成 num_heads=4 个头"),
    ("permute-odd-head", call(permute_pairs, np.ones((6, 2)), 2), V, r"每个头的行数 d 是偶数"),
    ("permute-heads-type", call(permute_pairs, np.ones((4, 2)), 2.0), T, r"num_heads 必须是正整数"),
    ("unpermute-list", call(unpermute_pairs, [1.0, 2.0], 1), T, r"w 必须是 NumPy 数组"),
]
test_documented_errors = error_table_test(ERROR_CASES)
