"""core/decoder.py：带 KV 缓存的逐词一步，与整段重新做因果计算逐步相等（1e-12，float64）。

层的数学只有一份（core/encoder.py 的 encoder_layer_unchecked）：这里证明把注意力换成"新词看缓存"之后，
每一步的输出和注意力权重都等于 encoder_layer(x[:t], mask=causal_mask(t)) 的最后几行；
另有反证：去掉因果掩码、或缓存里少存一个词，就对不上。
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.core.attention import attend, causal_mask
from transformer_lab.core.decoder import (
    cached_attention,
    decoder_layer_step,
    decoder_token_step_fast,
    fast_layer_norm,
    layer_cache,
)
from transformer_lab.core.encoder import encoder_layer, init_encoder_params
from transformer_lab.core.kv_cache import KVCache
from transformer_lab.core.layer_norm import layer_norm

from helpers.errors import check_error


def run_in_pieces(x, params, H, sizes, norm_first=True):
    """把 x (..., T, D) 按 sizes 切块依次喂进一层（第一块是提示词），返回每块的输出和权重。"""
    cache = layer_cache(x.shape[-2], x.shape[-1], H, batch_shape=x.shape[:-2])
    outs, start = [], 0
    for n in sizes:
        outs.append(decoder_layer_step(x[..., start:start + n, :], params, H, cache, norm_first=norm_first))
        start += n
    return outs, cache


def full(x, params, H, t, norm_first=True):
    """对前 t 个位置整段重新做一遍因果计算。"""
    return encoder_layer(x[..., :t, :], params, H, mask=causal_mask(t), norm_first=norm_first)


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("batch", [(), (3,)])
def test_every_step_equals_full_causal_recomputation(norm_first, batch):
    rng = np.random.default_rng(0)
    D, H, T = 8, 2, 9
    params, x = init_encoder_params(D, 4 * D, rng), rng.normal(size=batch + (T, D))
    sizes = [3] + [1] * (T - 3)  # 提示词 3 个字，之后每步 1 个
    outs, cache = run_in_pieces(x, params, H, sizes, norm_first)
    start = 0
    for (out, weights), n in zip(outs, sizes):
        t = start + n
        want_out, want_w = full(x, params, H, t, norm_first)
        np.testing.assert_allclose(out, want_out[..., start:t, :], rtol=0, atol=1e-12)  # (..., n, D)
        np.testing.assert_allclose(weights, want_w[..., start:t, :], rtol=0, atol=1e-12)  # (..., H, n, t)
        start = t
    assert cache.length == T


@given(st.lists(st.integers(1, 4), min_size=1, max_size=5), st.integers(0, 2**32 - 1), st.sampled_from([1, 2, 4]))
def test_any_split_into_pieces_gives_the_full_layer(sizes, seed, H):
    rng = np.random.default_rng(seed)
    D, T = 8, sum(sizes)
    params, x = init_encoder_params(D, 16, rng), rng.normal(size=(T, D))
    outs, _ = run_in_pieces(x, params, H, sizes)
    np.testing.assert_allclose(np.concatenate([o for o, _ in outs]), full(x, params, H, T)[0], rtol=0, atol=1e-12)


def test_the_equality_check_can_fail():
    rng = np.random.default_rng(1)
    D, H, T = 8, 2, 6
    params, x = init_encoder_params(D, 16, rng), rng.normal(size=(T, D))
    outs, _ = run_in_pieces(x, params, H, [1] * T)
    stepped = np.concatenate([o for o, _ in outs])
    no_mask, _ = encoder_layer(x, params, H, norm_first=True)  # 忘了因果掩码：前面的位置看到了后面
    assert np.abs(stepped - no_mask).max() > 1e-3
    cache = layer_cache(T, D, H)  # 缓存里少存第 0 个词：从第 1 个词开始喂
    skipped = np.concatenate([decoder_layer_step(x[t:t + 1], params, H, cache)[0] for t in range(1, T)])
    assert np.abs(skipped - full(x, params, H, T)[0][1:]).max() > 1e-3


def test_newest_token_row_is_a_probability_row_over_the_whole_cache():
    rng = np.random.default_rng(2)
    params, x = init_encoder_params(8, 16, rng), rng.normal(size=(5, 8))
    outs, _ = run_in_pieces(x, params, 2, [2, 1, 1, 1])
    for s, (_, weights) in enumerate(outs[1:], start=3):
        assert weights.shape == (2, 1, s)  # (H, 1, 缓存长度)
        np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
        assert np.all(weights > 0)  # 新词看得到整段前文（含自己）


def test_cached_attention_agrees_with_the_chapter_7_cache_attend():
    rng = np.random.default_rng(3)
    q, k, v = (rng.normal(size=(2, 4, 3)) for _ in range(3))  # (H, T, d_k)
    cache = KVCache(4, 3, batch_shape=(2,))
    cache.append(k, v)
    np.testing.assert_allclose(attend(q[:, -1:], cache.keys, cache.values)[0], cache.attend(q[:, -1:]), rtol=0,
                               atol=1e-12)  # 同一行：本章的 attend 与第 7 章的分块 attend


def test_inputs_are_not_modified():
    rng = np.random.default_rng(4)
    params, x = init_encoder_params(8, 16, rng), rng.normal(size=(3, 8))
    before = {k: v.copy() for k, v in params.items()}, x.copy()
    decoder_layer_step(x, params, 2, layer_cache(3, 8, 2))
    assert all(np.array_equal(before[0][k], params[k]) for k in params) and np.array_equal(before[1], x)


def test_the_cached_attention_has_no_backward():
    attention = cached_attention(layer_cache(2, 4, 1))
    ws, bs = [np.eye(4)] * 4, [np.zeros(4)] * 4
    _, _, backward = attention(np.ones((1, 4)), np.ones((1, 4)), ws, bs, 1, None)
    check_error(lambda: backward(np.ones((1, 4))), ValueError, "只做前向")


PARAMS = init_encoder_params(8, 16, np.random.default_rng(5))
X = np.random.default_rng(6).normal(size=(1, 8))

ERROR_CASES = [
    ("cache-type", lambda: decoder_layer_step(X, PARAMS, 2, None), TypeError, "cache 必须是 KVCache.*layer_cache"),
    ("cache-heads", lambda: decoder_layer_step(X, PARAMS, 2, layer_cache(4, 8, 4)), ValueError,
     r"cache 与这一层对不上.*batch_shape=\(2,\).*d_k=d_v=4"),
    ("cache-batch", lambda: decoder_layer_step(X, PARAMS, 2, layer_cache(4, 8, 2, batch_shape=(3,))), ValueError,
     "cache 与这一层对不上"),
    ("heads-divide", lambda: decoder_layer_step(X, PARAMS, 3, layer_cache(4, 8, 2)), ValueError,
     "d_model=8 必须能被 num_heads=3 整除"),
    ("params-missing", lambda: decoder_layer_step(X, {k: v for k, v in PARAMS.items() if k != "w_q"}, 2,
                                                  layer_cache(4, 8, 2)), ValueError, "缺少 w_q"),
    ("x-list", lambda: decoder_layer_step([[1.0] * 8], PARAMS, 2, layer_cache(4, 8, 2)), TypeError,
     "x_new 必须是 NumPy 数组"),
    ("norm_first", lambda: decoder_layer_step(X, PARAMS, 2, layer_cache(4, 8, 2), norm_first=1), TypeError,
     "norm_first 必须是 bool"),
    ("layer_cache-divide", lambda: layer_cache(4, 8, 3), ValueError, "d_model=8 必须能被 num_heads=3 整除"),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors(case):
    _, fn, exc, pattern = case
    check_error(fn, exc, pattern)


def test_full_cache_is_an_error_and_leaves_the_cache_unchanged():
    cache = layer_cache(2, 8, 2)
    decoder_layer_step(np.ones((2, 8)), PARAMS, 2, cache)
    keys = cache.keys.copy()
    check_error(lambda: decoder_layer_step(X, PARAMS, 2, cache), ValueError, "KV 缓存已满.*capacity=2")
    assert cache.length == 2 and np.array_equal(cache.keys, keys)
    bad = {k: v for k, v in PARAMS.items() if k != "w_1"}
    fresh = layer_cache(2, 8, 2)
    check_error(lambda: decoder_layer_step(X, bad, 2, fresh), ValueError, "缺少 w_1")
    assert fresh.length == 0  # 检查在追加之前


# ---------------------------------------------------------------- 生成循环里的快路


def test_the_fast_token_step_equals_the_checked_step_and_the_full_layer():
    """快路一个词一个词地走，输出、注意力和存下的 k、v 都和带检查的一步相同，拼起来就是整段因果计算（1e-12）。"""
    rng = np.random.default_rng(3)
    T, D, H = 7, 8, 2
    p, x = init_encoder_params(D, 16, rng), rng.normal(size=(T, D))
    cache = layer_cache(T, D, H)
    keys, values = np.zeros((H, T, D // H)), np.zeros((H, T, D // H))
    x_before = x.copy()
    outs = []
    for t in range(T):
        slow, w_slow = decoder_layer_step(x[t:t + 1], p, H, cache)
        fast, w_fast = decoder_token_step_fast(x[t:t + 1], p, H, keys, values, t)
        np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)
        np.testing.assert_allclose(w_fast, w_slow, rtol=0, atol=1e-12)
        outs.append(fast)
    np.testing.assert_allclose(keys, cache.keys, rtol=0, atol=1e-12)
    np.testing.assert_allclose(values, cache.values, rtol=0, atol=1e-12)
    full, _ = encoder_layer(x, p, H, mask=causal_mask(T), norm_first=True)
    np.testing.assert_allclose(np.concatenate(outs), full, rtol=0, atol=1e-12)
    assert np.array_equal(x, x_before)


def test_the_fast_layer_norm_is_the_layer_norm():
    x = np.random.default_rng(0).normal(size=(3, 8)) * 5
    g, b = np.linspace(0.5, 2, 8), np.linspace(-1, 1, 8)
    np.testing.assert_allclose(fast_layer_norm(x, g, b), layer_norm(x, g, b), rtol=0, atol=1e-12)
    assert not np.allclose(fast_layer_norm(x, g, b, eps=1.0), layer_norm(x, g, b))  # 比较能失败：ε 不同就不同
