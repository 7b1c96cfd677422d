"""core/tiled.py：分块注意力 (tiled attention, 在线 softmax)。

参照物：``scaled_dot_product_attention``（整张分数表）与逐行的纯 Python 循环；手算的两块例子；
数一数真正算了多少个分数；tracemalloc 量出的峰值内存；以及文档里写明的报错。
"""

import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import transformer_lab as tl
from transformer_lab.core import tiled
from transformer_lab.core.attention import causal_mask, scaled_dot_product_attention
from transformer_lab.core.tiled import tiled_attention

from helpers.errors import call, error_table_test
from helpers.reference import assert_attention_close as assert_close


def visible(T, S):
    """因果对齐的可见表：查询 i 看键 j <= i + (S - T)。用于造参照答案（只在小测试里建 T × S）。"""
    return np.arange(S)[None, :] <= np.arange(T)[:, None] + (S - T)  # (T, S)


# ---- 与整张分数表的版本相同（Hypothesis）

@st.composite
def cases(draw):
    causal = draw(st.booleans())
    S = draw(st.integers(1, 11))
    T = draw(st.integers(1, S)) if causal else draw(st.integers(1, 11))  # causal 要求 T <= S
    d_k, d_v = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    batch = draw(st.sampled_from([(), (2,), (2, 3)]))
    bq, bk, bv = (draw(st.sampled_from([batch, batch[1:], (1,) * len(batch)])) for _ in range(3))  # 可广播
    block = draw(st.sampled_from([1, 2, 3, 4, 5, 7, S, S + 3, 128]))  # 含 1、不整除 S、比 S 大
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    q, k, v = rng.normal(size=bq + (T, d_k)), rng.normal(size=bk + (S, d_k)), rng.normal(size=bv + (S, d_v))
    mask = None
    kind = draw(st.sampled_from(["none", "full", "row", "batched"]))
    if kind != "none":
        shape = {"full": (T, S), "row": (1, S), "batched": np.broadcast_shapes(bq, bk, bv) + (T, S)}[kind]
        mask = rng.random(shape) < draw(st.sampled_from([0.2, 0.6]))  # (..., T or 1, S)
        keep = np.zeros(shape[-2:], dtype=bool)
        keep[np.arange(shape[-2]), np.maximum(np.arange(shape[-2]) + S - T, 0) % S if kind != "row" else 0] = True
        mask = mask | keep  # 每行（含与 causal 合起来后）至少一个 True：对角线 j = i + S - T 或第 0 列
    return q, k, v, mask, causal, block


@given(cases())
def test_tiled_equals_full_attention(case):
    q, k, v, mask, causal, block = case
    T, S = q.shape[-2], k.shape[-2]
    full_mask = mask
    if causal:
        full_mask = visible(T, S) if mask is None else mask & visible(T, S)
    ref, _ = scaled_dot_product_attention(q, k, v, mask=full_mask)
    out = tiled_attention(q, k, v, mask=mask, causal=causal, block_size=block)
    assert out.shape == ref.shape and out.dtype == np.float64
    assert_close(out, ref, v)


@given(cases(), st.sampled_from([0.1, 1.0, 3.0]))
def test_tiled_scale_and_float32(case, scale):
    q, k, v, mask, causal, block = case
    f32 = [x.astype(np.float32) for x in (q, k, v)]
    out32 = tiled_attention(*f32, mask=mask, scale=scale, causal=causal, block_size=block)
    out64 = tiled_attention(q, k, v, mask=mask, scale=scale, causal=causal, block_size=block)
    assert out32.dtype == np.float32  # 不悄悄升成 float64
    np.testing.assert_allclose(out32, out64, rtol=1e-4, atol=1e-5)


def test_inputs_not_modified():
    rng = np.random.default_rng(1)
    q, k, v = rng.normal(size=(3, 2)), rng.normal(size=(5, 2)), rng.normal(size=(5, 2))
    copies = [x.copy() for x in (q, k, v)]
    tiled_attention(q, k, v, causal=True, block_size=2)
    for x, c in zip((q, k, v), copies):
        np.testing.assert_array_equal(x, c)


# ---- 手算的例子

def test_two_blocks_second_raises_max_by_hand():
    # 分数 [0, 0, 1, 0]，值 [1, 2, 3, 4]，每块 2 个键。第 1 块：m = 0, l = 2, acc = 3。
    # 第 2 块把 m 抬到 1：α = e^-1，l = 2α + 1 + α，acc = 3α + 3 + 4α；out = acc / l。
    a = math.exp(-1)
    expected = (3 + 7 * a) / (1 + 3 * a)
    q, k, v = np.array([[1.0]]), np.array([[0.0], [0.0], [1.0], [0.0]]), np.array([[1.0], [2.0], [3.0], [4.0]])
    out = tiled_attention(q, k, v, scale=1.0, block_size=2)
    assert out.shape == (1, 1) and out[0, 0] == pytest.approx(expected, rel=1e-14)
    assert expected == pytest.approx(2.6502, abs=1e-4)  # 与 docstring 里写给读者的数相同


def test_huge_jump_in_max_does_not_overflow():
    # 第 2 块分数 800：若不减 running max，e^800 会溢出成 inf。softmax ≈ [0, 0, 1, 0]，out ≈ 3。
    q, v = np.array([[1.0]]), np.array([[1.0], [2.0], [3.0], [4.0]])
    k = np.array([[0.0], [0.0], [800.0], [0.0]])
    assert tiled_attention(q, k, v, scale=1.0, block_size=2)[0, 0] == pytest.approx(3.0, rel=1e-12)


def test_whole_block_masked_gives_no_nan_or_warning():
    # 第 1 个查询的第 1 块全被掩掉：running max 停在 -inf，必须没有 NaN、没有 RuntimeWarning（pytest 设为报错）。
    q, k, v = np.ones((2, 1)), np.array([[5.0], [6.0], [0.0], [1.0]]), np.array([[9.0], [9.0], [1.0], [3.0]])
    mask = np.array([[False, False, True, True], [True, True, True, True]])
    out = tiled_attention(q, k, v, mask=mask, scale=1.0, block_size=2)
    e = math.e
    assert out[0, 0] == pytest.approx((1 + 3 * e) / (1 + e), rel=1e-14)  # softmax([0, 1]) · [1, 3]
    assert np.all(np.isfinite(out))


def loop_reference(q, k, v, T, S):
    """逐行的纯 Python 参照：查询 i 只看 j <= i + S - T。"""
    out = []
    for i in range(T):
        s = [float(q[i] @ k[j]) / math.sqrt(q.shape[-1]) for j in range(S) if j <= i + S - T]
        w = [math.exp(x - max(s)) for x in s]
        out.append(sum(wj * v[j] for j, wj in enumerate(w)) / sum(w))
    return np.array(out)


@pytest.mark.parametrize("T, S, block", [(1, 1, 1), (4, 4, 1), (5, 5, 2), (2, 7, 3), (1, 6, 4), (6, 9, 100)])
def test_causal_alignment_against_loop(T, S, block):
    rng = np.random.default_rng(T * 10 + S)
    q, k, v = rng.normal(size=(T, 3)), rng.normal(size=(S, 3)), rng.normal(size=(S, 2))
    assert_close(tiled_attention(q, k, v, causal=True, block_size=block), loop_reference(q, k, v, T, S), v)


def test_causal_equals_causal_mask_when_square():
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(3, 6, 4)), rng.normal(size=(3, 6, 4)), rng.normal(size=(3, 6, 4))
    ref, _ = scaled_dot_product_attention(q, k, v, mask=causal_mask(6))
    assert_close(tiled_attention(q, k, v, causal=True, block_size=4), ref, v)


@pytest.mark.parametrize("T, block, causal, expected", [(4, 2, False, 16), (4, 2, True, 10), (8, 4, True, 36),
                                                        (8, 8, True, 2 * (2 + 4 + 6 + 8)), (9, 4, True, 45), (5, 100, False, 25)])
def test_causal_scores_only_the_lower_triangle(monkeypatch, T, block, causal, expected):
    # 数一数真正算了多少个分数：非因果 T²；因果时整块在"未来"的键块跳过，跨对角线的块再按行切成 4 段，
    # 每段只看到它最后一行能看的键。block <= 4 时每段 1 行，正好只算下三角（含对角线）T(T+1)/2 个；
    # T = block = 8 时每段 2 行，算 2×2 + 2×4 + 2×6 + 2×8 个。
    sizes = []
    real = tiled._online_update
    monkeypatch.setattr(tiled, "_online_update", lambda *a: sizes.append(a[3].size) or real(*a))
    x = np.arange(2.0 * T).reshape(T, 2) / T
    out = tiled_attention(x, x, x, causal=causal, block_size=block)
    assert sum(sizes) == expected
    ref, _ = scaled_dot_product_attention(x, x, x, mask=causal_mask(T) if causal else None)
    assert_close(out, ref, x)


# ---- 内存：不造 T × S 的表

def peak_bytes(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_tiled_peak_memory_far_below_score_matrix():
    T = S = 2048
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(T, 16)), rng.normal(size=(S, 16)), rng.normal(size=(S, 16))
    score_matrix = T * S * 8  # 一张 float64 的 T × S 分数表 = 32 MiB
    tiled_peak = peak_bytes(lambda: tiled_attention(q, k, v, block_size=128))
    assert tiled_peak < score_matrix / 4
    full_peak = peak_bytes(lambda: scaled_dot_product_attention(q, k, v))
    assert full_peak >= score_matrix  # 对照：整张表的版本确实至少造了一张表（说明这个量法量得到）


def test_default_block_memory_is_a_fraction_of_the_score_matrix_at_8192():
    """Performance 里的内存条款的缩小版：T = 8192、H = 1、d_k = 8、默认 block_size，峰值 < 整张表的 1/20。"""
    rng = np.random.default_rng(0)
    q, k, v = (rng.normal(size=(8192, 8)) for _ in range(3))
    assert peak_bytes(lambda: tiled_attention(q, k, v)) < 8192 * 8192 * 8 / 20


# ---- 坏输入

Q, K, V = np.ones((3, 4)), np.ones((5, 4)), np.ones((5, 2))  # (T, d_k), (S, d_k), (S, d_v)
VE, TE = ValueError, TypeError


def tiled_call(**kw):
    args = dict(q=Q, k=K, v=V) | kw
    return lambda: tiled_attention(**args)


ERROR_CASES = [
    ("tiled-block-zero", tiled_call(block_size=0), VE, r"block_size 必须是正整数.*>= 1.*收到的是 0"),
    ("tiled-block-negative", tiled_call(block_size=-3), VE, r"block_size 必须是正整数.*收到的是 -3"),
    ("tiled-block-float", tiled_call(block_size=2.0), TE, r"block_size 必须是正整数.*float 2\.0"),
    ("tiled-block-bool", tiled_call(block_size=True), TE, r"block_size 必须是正整数.*bool True"),
    ("tiled-causal-int", tiled_call(causal=1), TE, r"causal 必须是 bool.*int 1"),
    ("tiled-causal-string", tiled_call(causal="yes"), TE, r"causal 必须是 bool.*'yes'"),
    ("tiled-causal-T-gt-S", tiled_call(k=np.ones((2, 4)), v=np.ones((2, 2)), causal=True), VE,
     r"causal=True 要求 T <= S.*T=3, S=2"),
    ("tiled-causal-mask-future-only", tiled_call(q=np.ones((2, 4)), k=np.ones((2, 4)), v=np.ones((2, 2)), causal=True,
                                                 mask=np.array([[False, True], [True, True]])), VE,
     r"mask 与 causal=True 合起来后.*\(0,\).*一整行都是 False"),
    ("tiled-causal-mask-shape", tiled_call(causal=True, mask=np.ones((3, 4), bool)), VE,
     r"mask 的形状 \(3, 4\) 无法广播.*\(3, 5\)"),
    ("tiled-d_k-mismatch", tiled_call(k=np.ones((5, 3))), VE, r"d_k.*q\.shape=\(3, 4\).*k\.shape=\(5, 3\)"),
    ("tiled-q-list", tiled_call(q=[[1.0] * 4] * 3), TE, r"q 必须是 NumPy 数组.*list"),
    ("tiled-mask-row-all-false", tiled_call(mask=np.array([[True] * 5, [False] * 5, [True] * 5])), VE,
     r"mask 在位置 \(1,\) 的一整行都是 False"),
    ("tiled-scale-negative", tiled_call(scale=-1.0), VE, r"scale 必须是有限的正实数.*-1\.0"),
    ("tiled-overflow-1e200", call(tl.tiled_attention, np.full((2, 2), 1e200), np.full((2, 2), 1e200), np.ones((2, 1))),
     VE, r"分块注意力的输出.*溢出"),
]
test_documented_errors = error_table_test(ERROR_CASES)
