"""lessons/scale.py：真模型的大小表（每个数都有出处、字段类型对）、本书小 GPT 的大小（手算的参数个数、和
``init_gpt`` 逐个数出的一致）、6·N·D（GPT-3 的独立核对：论文 Table D.1 的 3.14E+23）、假时钟下的计时算术、
时长的中文写法（手算的表、单调性）、语料的词元数，以及文档里写明的报错。从不断言真实的用时。
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.lessons import bpe, scale
from transformer_lab.lessons.corpus import held_out_split, load_corpus, vocabulary
from transformer_lab.lessons.gpt_model import GPTConfig, init_gpt, sizes
from transformer_lab.lessons.runs import GPT

from helpers.errors import call, error_table_test

YEAR = 365 * 86400


# ---------------------------------------------------------------- 大小表


def test_every_row_is_typed_and_sourced():
    assert [m.name for m in scale.PUBLISHED] == ["GPT-2", "GPT-3", "LLaMA 2", "Qwen2.5", "DeepSeek-V3", "SmolLM2-135M"]
    for m in scale.PUBLISHED:
        assert isinstance(m, scale.PublishedModel)
        for name in ("name", "organisation", "variant", "note"):
            assert isinstance(getattr(m, name), str) and getattr(m, name).strip(), (m.name, name)
        assert type(m.year) is int and 2019 <= m.year <= 2025
        for name in ("parameters", "active_parameters", "context"):
            assert type(getattr(m, name)) is int and getattr(m, name) > 0, (m.name, name)
        assert m.tokens is None or (type(m.tokens) is int and m.tokens > 0)
        assert m.active_parameters <= m.parameters
        src = m.source
        assert isinstance(src, scale.Source)
        assert all(isinstance(s, str) and s.strip() for s in (src.cite, src.title, src.url))
        assert src.url.startswith("https://")
        assert {"parameters", "tokens", "context"} <= set(src.where)
        assert all(isinstance(v, str) and v.strip() for v in src.where.values())


def test_a_missing_number_says_why_instead_of_guessing():
    missing = [m for m in scale.PUBLISHED if m.tokens is None]
    assert [m.name for m in missing] == ["GPT-2"]
    assert "论文没有给出" in missing[0].note and "没有给出" in missing[0].source.where["tokens"]


def test_published_values():
    by = {m.name: m for m in scale.PUBLISHED}
    assert (by["GPT-2"].parameters, by["GPT-2"].context) == (1_542_000_000, 1024)
    assert (by["GPT-3"].parameters, by["GPT-3"].tokens, by["GPT-3"].context) == (175 * 10**9, 300 * 10**9, 2048)
    assert (by["LLaMA 2"].parameters, by["LLaMA 2"].tokens, by["LLaMA 2"].context) == (70 * 10**9, 2 * 10**12, 4096)
    assert (by["Qwen2.5"].parameters, by["Qwen2.5"].tokens) == (72 * 10**9, 18 * 10**12)
    v3 = by["DeepSeek-V3"]
    assert (v3.parameters, v3.active_parameters, v3.tokens) == (671 * 10**9, 37 * 10**9, 14_800 * 10**9)
    assert [m.name for m in scale.PUBLISHED if m.moe] == ["DeepSeek-V3"]
    assert (by["SmolLM2-135M"].parameters, by["SmolLM2-135M"].tokens, by["SmolLM2-135M"].context) == \
        (134_515_008, 2 * 10**12, 8192)
    for m in scale.PUBLISHED:  # 一个系列有好几种尺寸的，说明列的是哪一种
        assert "列的是" in m.variant or "只有一种" in m.variant


def test_pretraining_data():
    mix = scale.PRETRAINING_DATA["gpt3_mix"]
    assert sum(tokens for _, tokens, _ in mix) == 499 * 10**9  # Table 2.2：410 + 19 + 12 + 55 + 3
    assert sum(share for *_, share in mix) == pytest.approx(1.0, abs=0.02)  # 论文四舍五入，合计 1.01
    assert all(isinstance(kind, str) and text.strip() for kind, text in scale.PRETRAINING_DATA["kinds"])
    assert "2005.14165" in scale.PRETRAINING_DATA["gpt3_source"] and scale.PRETRAINING_DATA["kinds_source"].strip()


# ---------------------------------------------------------------- 本书的小 GPT


def test_book_gpt_by_hand():
    gpt = scale.book_gpt()
    V, D, L, d_ff, ctx = gpt["vocab_size"], GPT["d_model"], GPT["num_layers"], GPT["d_ff"], GPT["context"]
    assert V == len(vocabulary(load_corpus()))
    # 嵌入 V·D + 位置 ctx·D；每层 4D² + 2D·d_ff + d_ff + 9D（偏置 b_2、b_o…… 和两处 LayerNorm）；LN_f 2D；输出 D·V + V
    by_hand = V * D + ctx * D + L * (4 * D * D + 2 * D * d_ff + d_ff + 9 * D) + 2 * D + D * V + V
    assert gpt["parameters"] == by_hand
    assert (gpt["tokens_per_step"], gpt["characters_seen"]) == (4 * 256, 300 * 4 * 256)
    train, held_out = held_out_split(load_corpus())
    assert (gpt["corpus_characters"], gpt["train_characters"], gpt["held_out_characters"]) == \
        (len(load_corpus()), len(train), len(held_out))


def test_book_gpt_parameters_equal_the_initialised_model():
    gpt = scale.book_gpt()
    config = GPTConfig(gpt["vocab_size"], GPT["d_model"], GPT["num_layers"], GPT["num_heads"], GPT["d_ff"], GPT["context"])
    assert sizes(init_gpt(config, np.random.default_rng(0)))["parameters"] == gpt["parameters"]


# ---------------------------------------------------------------- 6·N·D


def test_training_flops_by_hand():
    assert scale.training_flops(100, 1000) == 600_000.0
    assert scale.training_flops(1, 1) == 6.0


def test_gpt3_independent_check():
    """6·N·D 与 GPT-3 论文自己报的算力（Table D.1：3.64E+03 PF-days = 3.14E+23 FLOPs）相差不到 1%。"""
    flops = scale.training_flops(175e9, 300e9)
    assert flops == pytest.approx(scale.GPT3_REPORTED_FLOPS, rel=0.01)
    assert scale.GPT3_REPORTED_PF_DAYS * 1e15 * 86400 == pytest.approx(scale.GPT3_REPORTED_FLOPS, rel=0.005)
    assert flops != pytest.approx(scale.GPT3_REPORTED_FLOPS, rel=1e-4)  # 是约等，不是照抄


@given(st.floats(1.0, 1e12), st.floats(1.0, 1e13), st.floats(0.5, 100.0))
def test_training_flops_is_linear_in_N_and_D(N, D, k):
    assert scale.training_flops(k * N, D) == pytest.approx(k * scale.training_flops(N, D), rel=1e-12)
    assert scale.training_flops(N, k * D) == pytest.approx(k * scale.training_flops(N, D), rel=1e-12)


def test_moe_is_counted_with_active_parameters():
    rows = {r["name"]: r for r in scale.on_this_computer(1.0)}
    assert rows["DeepSeek-V3"]["flops"] == pytest.approx(6 * 37e9 * 14.8e12)
    assert rows["GPT-2"]["flops"] is None and rows["GPT-2"]["seconds"] is None and "算不出" in rows["GPT-2"]["readable"]


def test_on_this_computer_by_hand():
    # GPT-3：6 × 175e9 × 300e9 = 3.15e23 次；每秒 6e9 次 → 5.25e13 秒 = 1,664,764 年 ≈ 166 万年
    row = scale.on_this_computer(6e9)[1]
    assert row["seconds"] == pytest.approx(5.25e13)
    assert row["readable"] == "约 166 万年"


# ---------------------------------------------------------------- 量一步训练（假时钟）


TINY = GPTConfig(7, d_model=8, num_layers=1, num_heads=2, d_ff=16, context=5)


def fake_clock(values):
    it = iter(values)
    return lambda: next(it)


def test_time_training_step_arithmetic_with_a_fake_clock():
    out = scale.time_training_step(np.random.default_rng(0), TINY, batch_size=3, repeats=3,
                                   clock=fake_clock([0.0, 2.0, 10.0, 13.0, 20.0, 24.0]))  # 每步 2、3、4 秒
    N = sizes(init_gpt(TINY, np.random.default_rng(0)))["parameters"]
    np.testing.assert_array_equal(out["times"], [2.0, 3.0, 4.0])
    assert out["seconds"] == 3.0 and out["parameters"] == N and out["tokens_per_step"] == 15
    assert out["flops_per_step"] == 6 * N * 15
    assert out["flops_per_second"] == 6 * N * 15 / 3.0


def test_time_training_step_reads_the_clock_twice_per_timed_step():
    reads = []

    def counting():
        reads.append(None)
        return float(len(reads))

    out = scale.time_training_step(np.random.default_rng(0), TINY, batch_size=2, repeats=4, clock=counting)
    assert len(reads) == 8 and out["times"].shape == (4,) and out["seconds"] == 1.0


def test_time_training_step_default_is_the_book_gpt():
    out = scale.time_training_step(np.random.default_rng(0), repeats=1)
    assert out["parameters"] == scale.book_gpt()["parameters"] and out["tokens_per_step"] == 1024
    assert out["seconds"] > 0 and out["flops_per_second"] == out["flops_per_step"] / out["seconds"]


# ---------------------------------------------------------------- 时长的写法


@pytest.mark.parametrize("seconds, text", [
    (0, "0.0 秒"), (0.5, "0.5 秒"), (9.96, "10 秒"), (42, "42 秒"), (59.97, "60 秒"), (60, "1.0 分钟"), (150, "2.5 分钟"),
    (3600, "1.0 小时"), (7200, "2.0 小时"), (86400 * 3, "3.0 天"), (86400 * 400, "1.1 年"), (YEAR * 10, "10 年"),
    (YEAR * 9999, "9999 年"), (YEAR * 1e4, "约 1.0 万年"), (YEAR * 3.6e4, "约 3.6 万年"), (YEAR * 1.2345e7, "约 1234 万年"),
    (YEAR * 2.5e8, "约 2.5 亿年"), (YEAR * 3e12, "约 30000 亿年"),
])
def test_readable_duration_by_hand(seconds, text):
    assert scale.readable_duration(seconds) == text


def _back(seconds):
    value, _, size = scale.duration_parts(seconds)
    return value * size


@given(st.floats(0, 1e22), st.floats(0, 1e22))
def test_duration_is_monotone(a, b):
    lo, hi = sorted((a, b))
    assert _back(lo) <= _back(hi)
    units = [u for u, _ in scale._UNITS]
    assert units.index(scale.duration_parts(lo)[1]) <= units.index(scale.duration_parts(hi)[1])


def test_duration_is_monotone_across_every_unit_boundary():
    edges = [1, 60, 3600, 86400, YEAR, 1e4 * YEAR, 1e8 * YEAR]
    points = sorted(e * f for e in edges for f in (0.9499, 0.99, 0.9999, 1.0, 1.0001, 9.95, 9.96, 10.0))
    backs = [_back(p) for p in points]
    assert all(x <= y for x, y in itertools.pairwise(backs))


# ---------------------------------------------------------------- 数据


def test_book_tokens():
    train, _ = held_out_split(load_corpus())
    counts = scale.book_tokens()
    assert counts["characters"] == len(train) and counts["bytes"] == len(train.encode("utf-8"))
    assert counts["characters"] < counts["bpe_tokens"] * 2 and counts["bpe_tokens"] < counts["bytes"]  # 合并真的起了作用
    merges = bpe.train(train[:2000], 10)  # 反证：另一套合并规则数出来的不同
    assert len(bpe.encode(train, merges)) != counts["bpe_tokens"]


def test_data_ratio():
    assert scale.data_ratio(2e12, 50_000) == 4e7
    smol = scale.data_ratio(scale.PUBLISHED[-1].tokens, scale.book_tokens()["bpe_tokens"])
    assert math.isclose(smol, 2e12 / scale.book_tokens()["bpe_tokens"])


ERROR_CASES = [
    ("flops-params-zero", call(scale.training_flops, 0, 10), ValueError, r"params 必须是有限的正实数.*0"),
    ("flops-tokens-none", call(scale.training_flops, 10, None), TypeError, r"tokens 必须是正实数.*None"),
    ("time-rng", call(scale.time_training_step, 0, TINY), TypeError, r"rng"),
    ("time-config", call(scale.time_training_step, np.random.default_rng(0), {"d_model": 8}), TypeError,
     r"config 必须是 GPTConfig.*dict"),
    ("time-batch-zero", call(scale.time_training_step, np.random.default_rng(0), TINY, 0), ValueError,
     r"batch_size 必须是正整数.*0"),
    ("time-repeats-float", call(scale.time_training_step, np.random.default_rng(0), TINY, 2, 2.0), TypeError,
     r"repeats 必须是正整数"),
    ("time-clock-not-callable", call(scale.time_training_step, np.random.default_rng(0), TINY, 2, 2, 1.0), TypeError,
     r"clock 必须是可以调用的时钟"),
    ("time-clock-backwards", call(scale.time_training_step, np.random.default_rng(0), TINY, 2, 2,
                                  fake_clock([5.0, 4.0, 6.0, 7.0])), ValueError, r"clock 量出的时间必须都是正数.*-1\.0"),
    ("computer-speed-zero", call(scale.on_this_computer, 0.0), ValueError, r"flops_per_second 必须是有限的正实数"),
    ("computer-models", call(scale.on_this_computer, 1e9, ("GPT-3",)), TypeError, r"models 里每一项都必须是 PublishedModel.*字符串 'GPT-3'"),
    ("parts-negative", call(scale.duration_parts, -1.0), ValueError, r"seconds 是一段时间，不能是负数.*-1\.0"),
    ("parts-nan", call(scale.duration_parts, float("nan")), ValueError, r"seconds 必须是有限实数.*nan"),
    ("readable-inf", call(scale.readable_duration, float("inf")), ValueError, r"seconds 必须是有限实数.*inf"),
    ("readable-str", call(scale.readable_duration, "3 天"), TypeError, r"seconds 必须是实数.*字符串 '3 天'"),
    ("ratio-none", call(scale.data_ratio, None, 100), TypeError, r"tokens 必须是正实数.*None"),
    ("ratio-book-zero", call(scale.data_ratio, 1e12, 0), ValueError, r"book 必须是有限的正实数.*0"),
]

test_documented_errors = error_table_test(ERROR_CASES)
