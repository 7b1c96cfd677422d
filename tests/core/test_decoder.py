"""core/decoder.py：带 KV 缓存的逐词一步，与整段重新做因果计算逐步相等（1e-12，float64）。

层的数学只有一份（core/encoder.py 的 encoder_layer_unchecked）：这里证明把注意力换成"新词看缓存"之后，
每一步的输出和注意力权重都等于 encoder_layer(x[:t], mask=causal_mask(t)) 的最后几行；
另有反证：去掉因果掩码、或缓存里少存一个词，就对不上。
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.core import decoder
from transformer_lab.core.attention import attend, causal_mask
from transformer_lab.core.decoder import cached_attention, decoder_layer_step, decoder_layer_step_unchecked, layer_cache
from transformer_lab.core.encoder import encoder_layer, init_encoder_params
from transformer_lab.core.kv_cache import KVCache

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


# ---------------------------------------------------------------- 出错时缓存不变；极大的输入；旧名字


@pytest.mark.parametrize("where", ["scores", "ffn"])
def test_an_error_after_the_append_leaves_the_cache_unchanged(where):
    """新词的 k、v 在注意力那一步就追加进缓存了；之后溢出（注意力分数，或前馈网络）也要把缓存撤回到这一步之前。"""
    rng = np.random.default_rng(7)
    params, x = init_encoder_params(8, 16, rng), rng.normal(size=(4, 8))
    cache = layer_cache(5, 8, 2)
    decoder_layer_step(x[:3], params, 2, cache)  # 提示词：3 个词
    keys, values = cache.keys.copy(), cache.values.copy()
    huge = {"w_q": params["w_q"] * 1e160, "w_k": params["w_k"] * 1e160} if where == "scores" else {
        "w_1": params["w_1"] * 1e300, "w_2": params["w_2"] * 1e300}
    pattern = "注意力分数.*溢出" if where == "scores" else "前馈网络.*溢出"
    check_error(lambda: decoder_layer_step(x[3:], params | huge, 2, cache), ValueError, pattern)
    assert cache.length == 3
    np.testing.assert_array_equal(cache.keys, keys)
    np.testing.assert_array_equal(cache.values, values)
    out, _ = decoder_layer_step(x[3:], params, 2, cache)  # 缓存照常可用：接着算，结果与整段计算相同
    np.testing.assert_allclose(out, full(x, params, 2, 4)[0][3:], rtol=0, atol=1e-12)


def _cache_bytes(cache):
    return cache.length, cache.keys.tobytes(), cache.values.tobytes()


@pytest.mark.parametrize("error", [KeyboardInterrupt, FloatingPointError, MemoryError, RuntimeError])
def test_any_exception_after_the_append_leaves_the_cache_unchanged(monkeypatch, error):
    """docstring 说"出错时缓存总是不变"：不只是溢出的 ValueError。修之前只撤回 ValueError，
    注意力那一步（已经追加了 k、v）抛出别的异常，缓存就多了一个词。"""
    rng = np.random.default_rng(11)
    params, x = init_encoder_params(8, 16, rng), rng.normal(size=(4, 8))
    cache = layer_cache(5, 8, 2)
    decoder_layer_step(x[:3], params, 2, cache)
    before = _cache_bytes(cache)

    def failing_attend(*args):
        assert cache.length == 4  # 真的是在追加之后才出错
        raise error("在追加之后出错")

    monkeypatch.setattr(decoder, "attend", failing_attend)
    with pytest.raises(error):
        decoder_layer_step(x[3:], params, 2, cache)
    assert _cache_bytes(cache) == before
    monkeypatch.undo()
    out, _ = decoder_layer_step(x[3:], params, 2, cache)  # 缓存照常可用
    np.testing.assert_allclose(out, full(x, params, 2, 4)[0][3:], rtol=0, atol=1e-12)


def test_the_rollback_check_can_fail():
    """反证：不撤回（直接调用注意力、不经过这一步），溢出之后缓存里就多了一个词。"""
    rng = np.random.default_rng(7)
    params = init_encoder_params(8, 16, rng)
    cache = layer_cache(5, 8, 2)
    attention = cached_attention(cache)
    ws = (params["w_q"] * 1e160, params["w_k"] * 1e160, params["w_v"], params["w_o"])
    bs = tuple(params[f"b_{n}"] for n in "qkvo")
    with pytest.raises(ValueError):
        attention(rng.normal(size=(1, 8)), rng.normal(size=(1, 8)), ws, bs, 2, None)
    assert cache.length == 1


@pytest.mark.parametrize("scale", [1e155, 1e300])
def test_huge_residual_stream_is_still_the_full_layer(scale):
    """残差流大到 1e155 以上时，平方会溢出：层归一化仍须算对（旧的手写快路在这里悄悄算错）。"""
    rng = np.random.default_rng(8)
    D, H, T = 8, 2, 5
    params, x = init_encoder_params(D, 16, rng), rng.normal(size=(T, D)) * scale
    outs, _ = run_in_pieces(x, params, H, [2, 1, 1, 1])
    stepped = np.concatenate([o for o, _ in outs])
    want, _ = full(x, params, H, T)
    np.testing.assert_allclose(stepped, want, rtol=1e-12, atol=0)
    np.testing.assert_allclose(stepped, x, rtol=1e-12, atol=0)  # 层的改动（约 1）相对 x 小得看不见：out ≈ x


def test_the_unchecked_step_is_the_checked_step():
    rng = np.random.default_rng(9)
    params, x = init_encoder_params(8, 16, rng), rng.normal(size=(4, 8))
    a, b = layer_cache(4, 8, 2), layer_cache(4, 8, 2)
    for t in range(4):
        out_a, w_a = decoder_layer_step(x[t:t + 1], params, 2, a)
        out_b, w_b = decoder_layer_step_unchecked(x[t:t + 1], params, 2, b)
        np.testing.assert_array_equal(out_a, out_b)
        np.testing.assert_array_equal(w_a, w_b)
    np.testing.assert_array_equal(a.keys, b.keys)


@pytest.mark.parametrize("name", ["decoder_token_step_fast", "fast_layer_norm"])
def test_removed_names_point_to_the_single_path(name):
    error = check_error(lambda: getattr(decoder, name), AttributeError, f"core.decoder.{name} 已经删掉了，请改用")
    assert "decoder_layer_step_unchecked" in str(error) or "layer_norm" in str(error)
    with pytest.raises(AttributeError, match="没有属性"):
        decoder.no_such_name  # noqa: B018
