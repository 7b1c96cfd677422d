"""core/kv_cache.py：KV 缓存——逐词生成 == 一次算完的因果注意力、先放提示词再逐词生成、dtype 与不共用内存、
占用的字节数与 lessons/costs 的计数一致，以及文档里写明的报错（出错时缓存不变）。
"""

import numpy as np
import pytest

from transformer_lab.core.attention import causal_mask, scaled_dot_product_attention
from transformer_lab.core.kv_cache import KVCache
from transformer_lab.lessons.costs import kv_cache_bytes

from helpers.errors import call, error_table_test
from helpers.reference import assert_attention_close as assert_close


def decode(cache, q, k, v):
    """逐词生成：第 t 步把第 t 个词的 k、v 放进缓存，再让它的 q 看缓存。返回 (..., T, d_v)。"""
    outs = [cache.step(q[..., t : t + 1, :], k[..., t : t + 1, :], v[..., t : t + 1, :]) for t in range(q.shape[-2])]
    return np.concatenate(outs, axis=-2)  # (..., T, d_v)


@pytest.mark.parametrize("batch_shape, d_k, d_v", [((), 4, 4), ((), 3, 2), ((4,), 2, 2), ((2, 4), 3, 5)])
def test_kv_cache_decode_equals_full_causal_attention(batch_shape, d_k, d_v):
    # 单头：(T, d)；多头：每头 (H, 1, d_k)，带批次 (B, H, 1, d_k)。
    T = 9
    rng = np.random.default_rng(len(batch_shape) + d_k)
    q, k = rng.normal(size=batch_shape + (T, d_k)), rng.normal(size=batch_shape + (T, d_k))
    v = rng.normal(size=batch_shape + (T, d_v))
    ref, _ = scaled_dot_product_attention(q, k, v, mask=causal_mask(T))
    cache = KVCache(T, d_k, d_v, batch_shape=batch_shape)
    assert_close(decode(cache, q, k, v), ref, v)
    assert cache.length == T and cache.keys.shape == batch_shape + (T, d_k)
    np.testing.assert_array_equal(cache.values, v)


def test_kv_cache_prefill_then_decode():
    # 先一次放进 5 个词（提示词），5 个查询因果地看；再逐词生成 3 个。
    rng = np.random.default_rng(7)
    q, k, v = (rng.normal(size=(2, 8, 3)) for _ in range(3))
    ref, _ = scaled_dot_product_attention(q, k, v, mask=causal_mask(8))
    cache = KVCache(8, 3, batch_shape=(2,))
    cache.append(k[:, :5], v[:, :5])
    first = cache.attend(q[:, :5], block_size=2)
    rest = decode(cache, q[:, 5:], k[:, 5:], v[:, 5:])
    assert_close(np.concatenate([first, rest], axis=-2), ref, v)


def test_kv_cache_float32_and_no_aliasing():
    cache = KVCache(3, 2, dtype=np.float32)
    k = np.ones((1, 2), np.float32)
    out = cache.step(k, k, k)
    k[:] = 5.0  # 改调用者的数组，不影响缓存
    assert out.dtype == np.float32 and np.all(cache.keys == 1.0)
    with pytest.raises(ValueError, match="read-only"):
        cache.keys[0, 0] = 2.0


def test_kv_cache_nbytes_matches_the_counter():
    cache = KVCache(100, 16, batch_shape=(4,), dtype=np.float32)  # H = 4 头 × d_k = 16 = D 64
    assert cache.nbytes == kv_cache_bytes(100, 64, dtype=np.float32)


def test_failed_step_leaves_cache_unchanged():
    cache = KVCache(3, 2)
    with pytest.raises(ValueError, match="q 的形状"):
        cache.step(np.ones((1, 3)), np.ones((1, 2)), np.ones((1, 2)))  # q 宽度不对：不应先把 k、v 写进去
    assert cache.length == 0


# ---- 坏输入

VE, TE = ValueError, TypeError


def full_cache():
    cache = KVCache(2, 4)
    cache.append(np.ones((2, 4)), np.ones((2, 4)))
    return cache



def huge_cache():
    """一个存着键 1e200 的缓存：再来一个 1e200 的查询，分数 1e400 就溢出了。"""
    cache = KVCache(3, 1)
    cache.append(np.full((1, 1), 1e200), np.ones((1, 1)))
    return cache


def snapshot(cache):
    return cache.length, cache.keys.copy(), cache.values.copy()


def test_failed_step_leaves_the_cache_unchanged():
    """step 要么全做要么全不做：溢出、q 行数太多、float32 放不下、scale 不对——出错后 length、keys、values 都不变。
    反证：同一个缓存，合法的一步确实改变了它（所以这个比较能失败）。"""
    failing = [
        lambda c: c.step(np.full((1, 1), 1e200), np.full((1, 1), 1e200), np.ones((1, 1))),  # 分数溢出（追加之后才发现）
        lambda c: c.step(np.ones((2, 1)), np.ones((1, 1)), np.ones((1, 1))),  # q 的行数多于追加的词数
        lambda c: c.step(np.ones((1, 1)), np.ones((1, 1)), np.ones((1, 1)), scale=-1.0),  # scale 不对
    ]
    for bad in failing:
        cache = huge_cache()
        before = snapshot(cache)
        with pytest.raises(ValueError):
            bad(cache)
        after = snapshot(cache)
        assert after[0] == before[0] and np.array_equal(after[1], before[1]) and np.array_equal(after[2], before[2])
        cache.step(np.ones((1, 1)), np.ones((1, 1)), np.full((1, 1), 2.0))  # 反证：合法的一步改变了缓存
        assert snapshot(cache)[0] == before[0] + 1 and cache.values[-1, 0] == 2.0
    small = KVCache(2, 1, dtype=np.float32)
    with pytest.raises(ValueError, match="float32"):
        small.step(np.ones((1, 1)), np.full((1, 1), 1e39), np.ones((1, 1)))
    assert small.length == 0


def test_append_unchecked_writes_the_same_as_append_without_copies():
    k, v = np.arange(6.0).reshape(2, 3), -np.arange(6.0).reshape(2, 3)
    checked, unchecked = KVCache(4, 3), KVCache(4, 3)
    checked.append(k, v)
    unchecked.append_unchecked(k, v)
    np.testing.assert_array_equal(checked.keys, unchecked.keys)
    np.testing.assert_array_equal(checked.values, unchecked.values)
    assert not np.shares_memory(unchecked.keys, k)  # 写进缓存自己预先分配的数组


def test_truncate_takes_back_the_last_tokens_and_the_next_append_overwrites_them():
    cache = KVCache(4, 1)
    cache.append(np.array([[1.0], [2.0], [3.0]]), np.array([[1.0], [2.0], [3.0]]))
    cache.truncate(1)
    assert cache.length == 1 and cache.keys.tolist() == [[1.0]]
    cache.append(np.array([[9.0]]), np.array([[9.0]]))
    assert cache.keys.tolist() == [[1.0], [9.0]]
    cache.truncate(2)  # 不变也可以
    assert cache.length == 2


ERROR_CASES = [
    ("cache-full", lambda: full_cache().append(np.ones((1, 4)), np.ones((1, 4))), VE,
     r"KV 缓存已满.*capacity=2.*已存 2 个词.*1 个"),
    ("cache-step-when-full", lambda: full_cache().step(np.ones((1, 4)), np.ones((1, 4)), np.ones((1, 4))), VE,
     r"KV 缓存已满"),
    ("cache-k-wrong-width", lambda: KVCache(3, 4).append(np.ones((1, 3)), np.ones((1, 4))), VE,
     r"k 的形状应为 \(任意, 4\).*\(1, 3\).*d_k=4"),
    ("cache-v-wrong-width", lambda: KVCache(3, 4, d_v=2).append(np.ones((1, 4)), np.ones((1, 4))), VE,
     r"v 的形状应为 \(任意, 2\).*\(1, 4\).*d_v=2"),
    ("cache-k-wrong-batch", lambda: KVCache(3, 4, batch_shape=(2,)).append(np.ones((3, 1, 4)), np.ones((3, 1, 4))),
     VE, r"k 的形状应为 \(2, 任意, 4\).*\(3, 1, 4\).*batch_shape=\(2,\)"),
    ("cache-kv-count-mismatch", lambda: KVCache(3, 4).append(np.ones((2, 4)), np.ones((1, 4))), VE,
     r"k 与 v 的词数必须相等.*\(2, 4\).*\(1, 4\)"),
    ("cache-q-wrong-width", lambda: full_cache().attend(np.ones((1, 2))), VE, r"q 的形状应为 \(任意, 4\).*\(1, 2\)"),
    ("cache-attend-empty", lambda: KVCache(3, 4).attend(np.ones((1, 4))), VE, r"q 的词数 n 必须在 \[1, length=0\]"),
    ("cache-k-nan", lambda: KVCache(3, 1).append(np.array([[np.nan]]), np.ones((1, 1))), VE, r"k 含有 NaN"),
    ("cache-capacity-zero", call(KVCache, 0, 4), VE, r"capacity 必须是正整数.*收到的是 0"),
    ("cache-d_k-float", call(KVCache, 3, 4.0), TE, r"d_k 必须是正整数.*float 4\.0"),
    ("cache-batch-list", call(KVCache, 3, 4, batch_shape=[2]), TE, r"batch_shape 必须是正整数组成的元组.*list"),
    ("cache-dtype-int", call(KVCache, 3, 4, dtype=np.int64), TE, r"dtype 必须是 np\.float32 或 np\.float64"),
    ("cache-float32-overflow", lambda: KVCache(3, 1, dtype=np.float32).append(np.array([[1e39]]), np.ones((1, 1))), VE,
     r"k 里有超出缓存 dtype=float32 范围的值.*1e\+39"),
    ("cache-attend-overflow", lambda: huge_cache().attend(np.full((1, 1), 1e200)), VE, r"KV 缓存注意力的输出.*溢出"),
    ("cache-step-overflow", lambda: huge_cache().step(np.full((1, 1), 1e200), np.full((1, 1), 1e200), np.ones((1, 1))), VE,
     r"KV 缓存注意力的输出.*溢出"),
    ("cache-step-q-too-many-rows", lambda: KVCache(3, 4).step(np.ones((2, 4)), np.ones((1, 4)), np.ones((1, 4))), VE,
     r"q 的行数 \(2\) 不能多于这一步追加的词数 \(1\)"),
    ("cache-over-budget", call(KVCache, 10**9, 64), VE, r"KV 缓存（capacity=1000000000） 要占 954 GiB.*预算 2 GiB"),
    ("truncate-longer", lambda: full_cache().truncate(3), VE, r"length 必须在 \[0, 2\] 之内，收到的是 3"),
    ("truncate-float", lambda: full_cache().truncate(1.0), TE, r"length 必须是.*整数"),
]
test_documented_errors = error_table_test(ERROR_CASES)
