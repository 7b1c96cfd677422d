"""core/gqa.py：分组查询注意力。

- 独立参照：逐个查询头的循环，查询头 h 用键值头 h // G，各自做一次第 4 章的缩放点积注意力；
- H_kv = H 时就是每个头各看各的；G 个查询头看同一组 k、v 时等于把 k、v 复制 G 份；
- 带缓存的一步：提示词一次进、之后每次 1 个词，拼起来等于整段带因果掩码的结果；缓存只存 H_kv 组（第 7 章的账：
  9 个查询头、3 个键值头，缓存是 9 组的 1/3）；出错时缓存不变；报错表。
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import transformer_lab as tl
from transformer_lab.core.gqa import cached_grouped_attention, grouped_query_attention, new_rows_mask
from transformer_lab.core.kv_cache import KVCache

from helpers.errors import call, error_table_test

groups = st.sampled_from([(1, 1), (2, 1), (4, 2), (6, 3), (9, 3)])


def per_head_reference(q, k, v, mask=None):
    H, H_kv = q.shape[0], k.shape[0]
    outs, weights = [], []
    for h in range(H):
        g = h // (H // H_kv)
        o, w = tl.scaled_dot_product_attention(q[h], k[g], v[g], mask)
        outs.append(o)
        weights.append(w)
    return np.stack(outs), np.stack(weights)


@given(st.integers(0, 10**6), groups, st.integers(1, 5), st.integers(1, 5))
def test_matches_the_per_head_loop(seed, heads, T, d):
    H, H_kv = heads
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(H, T, d)), rng.normal(size=(H_kv, T, d)), rng.normal(size=(H_kv, T, d + 1))
    out, w = grouped_query_attention(q, k, v, tl.causal_mask(T))
    ref_out, ref_w = per_head_reference(q, k, v, tl.causal_mask(T))
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out, grouped_query_attention(q, np.repeat(k, H // H_kv, 0), np.repeat(v, H // H_kv, 0),
                                                            tl.causal_mask(T))[0], rtol=1e-12, atol=1e-12)


def test_the_grouping_is_consecutive():
    """查询头 0、1、2 看键值头 0，3、4、5 看键值头 1……（Hugging Face 的 repeat_kv，llama.cpp 同样）：
    让每个键值头的值是它的编号，第 h 个头的输出就是 h // 3。"""
    q = np.zeros((9, 1, 2))
    k = np.zeros((3, 2, 2))
    v = np.arange(3.0)[:, None, None] * np.ones((3, 2, 1))
    out, _ = grouped_query_attention(q, k, v)
    assert out[:, 0, 0].tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]


@given(st.integers(0, 10**6), groups, st.integers(1, 4), st.integers(1, 4))
def test_cached_steps_equal_the_full_causal_computation(seed, heads, prompt, steps):
    H, H_kv = heads
    T, d = prompt + steps, 4
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(H, T, d)), rng.normal(size=(H_kv, T, d)), rng.normal(size=(H_kv, T, d))
    full, _ = grouped_query_attention(q, k, v, tl.causal_mask(T))
    cache = KVCache(T, d, batch_shape=(H_kv,))
    parts = [cached_grouped_attention(q[:, :prompt], k[:, :prompt], v[:, :prompt], cache)[0]]
    parts += [cached_grouped_attention(q[:, t:t + 1], k[:, t:t + 1], v[:, t:t + 1], cache)[0] for t in range(prompt, T)]
    np.testing.assert_allclose(np.concatenate(parts, axis=1), full, rtol=1e-12, atol=1e-12)
    assert cache.length == T


def test_the_cache_holds_only_the_kv_heads():
    """第 7 章的账：每个词元存 2 × H_kv × d_k 个数。SmolLM2（d_k = 64）的 3 个键值头是 9 个头的 1/3。"""
    gqa = KVCache(8192, 64, batch_shape=(3,), dtype=np.float32)
    mha = KVCache(8192, 64, batch_shape=(9,), dtype=np.float32)
    assert gqa.nbytes == 2 * 8192 * 3 * 64 * 4 and mha.nbytes == 3 * gqa.nbytes


def test_new_rows_mask():
    assert new_rows_mask(1, 5) is None
    np.testing.assert_array_equal(new_rows_mask(3, 3), tl.causal_mask(3))


def test_a_failed_step_leaves_the_cache_unchanged():
    """k、v 已经追加进去以后才发现 q 的 d_k 不对：缓存撤回到这一步之前。"""
    cache = KVCache(4, 2, batch_shape=(1,))
    cached_grouped_attention(np.ones((2, 1, 2)), np.ones((1, 1, 2)), np.ones((1, 1, 2)), cache)
    with pytest.raises(ValueError, match="d_k"):
        cached_grouped_attention(np.ones((2, 1, 3)), np.ones((1, 1, 2)), np.ones((1, 1, 2)), cache)
    assert cache.length == 1


V, T = ValueError, TypeError
CACHE = KVCache(2, 2, batch_shape=(1,))
ERROR_CASES = [
    ("q-2d", call(grouped_query_attention, np.ones((2, 2)), np.ones((1, 2, 2)), np.ones((1, 2, 2))), V, r"q 至少要有 3 维"),
    ("heads-not-multiple", call(grouped_query_attention, np.ones((3, 1, 2)), np.ones((2, 1, 2)), np.ones((2, 1, 2))),
     V, r"q 的头数 H 必须是 k、v 的头数 H_kv 的整数倍"),
    ("d-k-mismatch", call(grouped_query_attention, np.ones((2, 1, 2)), np.ones((1, 1, 3)), np.ones((1, 1, 3))), V,
     r"q 与 k 的最后一维 \(d_k\) 必须相等"),
    ("mask-shape", call(grouped_query_attention, np.ones((2, 2, 2)), np.ones((1, 2, 2)), np.ones((1, 2, 2)),
                        np.ones((3, 3), bool)), V, r"mask"),
    ("scale-negative", call(grouped_query_attention, np.ones((2, 1, 2)), np.ones((1, 1, 2)), np.ones((1, 1, 2)),
                            scale=-1.0), V, r"scale 必须是有限的正实数"),
    ("k-list", call(grouped_query_attention, np.ones((2, 1, 2)), [[[1.0, 1.0]]], np.ones((1, 1, 2))), T,
     r"k 必须是 NumPy 数组"),
    ("cache-type", call(cached_grouped_attention, np.ones((2, 1, 2)), np.ones((1, 1, 2)), np.ones((1, 1, 2)), {}), T,
     r"cache 必须是 KVCache"),
    ("cache-shape", call(cached_grouped_attention, np.ones((2, 1, 2)), np.ones((2, 1, 2)), np.ones((2, 1, 2)), CACHE),
     V, r"k 的形状应为"),
]
test_documented_errors = error_table_test(ERROR_CASES)
