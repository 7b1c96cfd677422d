"""lessons/generation.py：带 KV 缓存的生成等于每步整段重算（字相同，概率相差 < 1e-12），注意力的逐步记录，
随机数只来自 rng，以及四个常见误区的计算（打转、温度、因果、与原文的重合）。"""

import numpy as np
import pytest
from conftest import check_error
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.core.decoding import next_token_probs
from transformer_lab.lessons import generation as gen
from transformer_lab.lessons import tiny_gpt as gpt


def model(seed=0, V=12, context=40, D=16, L=2):
    return gpt.init_gpt(V, np.random.default_rng(seed), d_model=D, num_layers=L, d_ff=2 * D, context=context)


SETTINGS = [dict(temperature=0.0), dict(temperature=1.0), dict(temperature=0.7, top_k=4), dict(temperature=1.3, top_p=0.8),
            dict(temperature=0.9, top_k=6, top_p=0.9)]


@pytest.mark.parametrize("kw", SETTINGS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_cached_generation_equals_full_recomputation_at_every_step(kw):
    p = model()
    p = p | {"w_out": np.random.default_rng(9).normal(size=p["w_out"].shape)}  # 打分拉开，采样才有意思
    prompt = np.array([3, 1, 4, 1, 5])
    rng_a, rng_b = (np.random.default_rng(5) if kw["temperature"] else None for _ in range(2))
    cached = gen.generate(p, prompt, 30, rng_a, num_heads=4, **kw)
    full = gen.generate_recompute(p, prompt, 30, rng_b, num_heads=4, **kw)
    np.testing.assert_array_equal(cached["tokens"], full["tokens"])
    np.testing.assert_allclose(cached["probs"], full["probs"], rtol=0, atol=1e-12)
    ids = np.concatenate([prompt, cached["tokens"]])
    for step in (0, 13, 29):  # 再用整段的 forward 独立核对几步
        logits, _ = gpt.forward(p, ids[: prompt.size + step], num_heads=4)
        np.testing.assert_allclose(cached["probs"][step], next_token_probs(logits[-1], **kw), rtol=0, atol=1e-12)


def test_the_equality_check_can_fail():
    p = model()
    a = gen.generate(p, np.array([1, 2]), 10, np.random.default_rng(0), temperature=1.0, num_heads=4)
    b = gen.generate_recompute(p, np.array([1, 2]), 10, np.random.default_rng(0), temperature=1.1, num_heads=4)
    assert np.abs(a["probs"] - b["probs"]).max() > 1e-6


def test_attention_record_is_the_newest_row_of_the_full_causal_attention():
    p = model(1)
    prompt = np.array([2, 7, 1])
    out = gen.generate(p, prompt, 8, num_heads=4)
    ids = np.concatenate([prompt, out["tokens"]])
    assert out["attention"].shape == (8, 2, 4, 10) and out["cache_length"].tolist() == list(range(3, 11))
    for step, S in enumerate(out["cache_length"]):
        _, weights = gpt.forward(p, ids[:S], num_heads=4)  # (L, H, S, S)
        np.testing.assert_allclose(out["attention"][step, :, :, :S], weights[:, :, -1], rtol=0, atol=1e-12)
        assert np.all(out["attention"][step, :, :, S:] == 0)  # 还没写出来的字：0
        np.testing.assert_allclose(out["attention"][step].sum(axis=-1), 1.0, rtol=0, atol=1e-12)


def test_randomness_comes_only_from_rng():
    p = model(2)
    p = p | {"w_out": np.random.default_rng(3).normal(size=p["w_out"].shape)}
    draw = lambda seed: gen.generate(p, np.array([0]), 25, np.random.default_rng(seed), temperature=1.0,  # noqa: E731
                                     num_heads=4)["tokens"].tolist()
    assert draw(11) == draw(11) and draw(11) != draw(12)
    greedy = [gen.generate(p, np.array([0]), 25, num_heads=4)["tokens"].tolist() for _ in range(2)]
    assert greedy[0] == greedy[1]
    assert gen.generate(p, np.array([0]), 25, np.random.default_rng(1), num_heads=4)["tokens"].tolist() == greedy[0]


def test_generate_text_uses_the_character_table():
    p = model(V=4)
    text = gen.generate_text(p, "甲乙丙丁", "丙甲", 6, num_heads=4)
    assert text.startswith("丙甲") and len(text) == 8 and set(text) <= set("甲乙丙丁")


def test_checkpoint_samples_restart_the_rng_for_every_checkpoint():
    p = model(V=4)
    run = {"chars": "甲乙丙丁", "checkpoints": [p, p]}
    samples = gen.checkpoint_samples(run, ["甲", "乙丙"], 5, 1.0, seed=3, num_heads=4)
    assert samples.shape == (2, 2) and samples[0, 0] == samples[1, 0]  # 同一个模型、同一个种子：写得一样
    assert samples[0, 1].startswith("乙丙") and len(samples[0, 1]) == 7


P = model()

ERROR_CASES = [
    ("too-long", lambda: gen.generate(P, np.arange(10), 32, num_heads=4), ValueError,
     r"超过了模型的上下文长度 context=40.*10 \+ 32 - 1 <= 40"),
    ("sample-without-rng", lambda: gen.generate(P, np.array([1]), 3, temperature=1.0, num_heads=4), TypeError,
     "rng 必须是 np.random.Generator"),
    ("prompt-2d", lambda: gen.generate(P, np.array([[1, 2]]), 3, num_heads=4), ValueError, "prompt 必须是一维"),
    ("prompt-range", lambda: gen.generate(P, np.array([12]), 3, num_heads=4), ValueError, "prompt 越界"),
    ("num-new", lambda: gen.generate(P, np.array([1]), 0, num_heads=4), ValueError, "num_new 必须是正整数"),
    ("top-k", lambda: gen.generate(P, np.array([1]), 2, np.random.default_rng(0), 1.0, top_k=13, num_heads=4),
     ValueError, r"top_k 必须在 \[1, V=12\]"),
    ("recompute-rng", lambda: gen.generate_recompute(P, np.array([1]), 3, temperature=0.5, num_heads=4), TypeError,
     "rng 必须是"),
    ("unknown-char", lambda: gen.generate_text(P, "甲乙丙丁戊己庚辛壬癸子丑", "猫", 3, num_heads=4), ValueError,
     "字表中没有的字"),
    ("loop-type", lambda: gen.find_loop([1, 1, 1]), TypeError, "seq 必须是字符串或一维整数数组"),
    ("loop-repeats", lambda: gen.find_loop("aaa", min_repeats=1), ValueError, "min_repeats 必须是不小于 2 的整数"),
    ("temperatures", lambda: gen.temperature_effect(np.zeros(3), []), ValueError, "temperatures 必须是非空"),
    ("future-position", lambda: gen.future_influence(P, np.array([1, 2]), 2, 0, num_heads=4), ValueError,
     r"position=2 越界"),
    ("future-replacement", lambda: gen.future_influence(P, np.array([1, 2]), 1, 12, num_heads=4), ValueError,
     r"replacement=12 越界"),
    ("ngram-short", lambda: gen.ngram_overlap("注意", "注意力", 3), ValueError, "比 n=3 短"),
    ("ngram-type", lambda: gen.ngram_overlap("注意", None, 1), TypeError, "reference 必须是非空字符串"),
    ("copy-empty", lambda: gen.longest_copy("", "注意力"), TypeError, "text 必须是非空字符串"),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors(case):
    _, fn, exc, pattern = case
    check_error(fn, exc, pattern)


# ---------------------------------------------------------------- 误区 1：贪心会原地打转

def test_find_loop_by_hand():
    assert gen.find_loop("开头每个词的，每个词的，每个词的，") == {"period": 5, "start": 2}
    assert gen.find_loop("的的的的") == {"period": 1, "start": 0}
    assert gen.find_loop(np.array([5, 1, 2, 1, 2, 1, 2])) == {"period": 2, "start": 1}
    assert gen.find_loop("ab" * 2 + "c") is None  # 结尾不在转圈
    assert gen.find_loop("abab", min_repeats=3) is None and gen.find_loop("abab") is None
    assert gen.find_loop("xabab", min_repeats=2) == {"period": 2, "start": 1}
    assert gen.find_loop("己丁丁丁" * 3) == {"period": 4, "start": 0}  # 不是只看结尾的"丁丁丁"


@given(st.text(alphabet="甲乙丙", max_size=8), st.text(alphabet="丁戊己", min_size=1, max_size=4), st.integers(3, 6))
def test_find_loop_finds_a_planted_loop(head, unit, repeats):
    found = gen.find_loop(head + unit * repeats)
    assert found is not None and found["start"] <= len(head)  # 种下的圈从 len(head) 开始转：不会更晚
    s = head + unit * repeats
    assert all(s[i] == s[i + found["period"]] for i in range(found["start"], len(s) - found["period"]))


# ---------------------------------------------------------------- 误区 2：温度改了模型知道的东西？

@given(st.lists(st.floats(-8, 8), min_size=2, max_size=10, unique=True))
def test_temperature_changes_the_probabilities_not_the_ranking(values):
    logits = np.array(values)
    before = logits.copy()
    out = gen.temperature_effect(logits, [0.3, 0.7, 1.0, 2.0, 5.0])
    assert all(row.tolist() == out["ranking"][0].tolist() for row in out["ranking"])  # 名次不变
    assert np.all(np.diff(out["entropy"]) > -1e-12)  # 越热越犹豫
    np.testing.assert_array_equal(logits, before)  # 打分（模型知道的东西）一点没变


# ---------------------------------------------------------------- 误区 3：生成时模型能看到后面的字？

def test_changing_a_later_character_does_not_change_earlier_outputs():
    p = model(4, context=12)
    tokens = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3])
    for position in (0, 4, 9):
        change = gen.future_influence(p, tokens, position, replacement=(tokens[position] + 1) % 12, num_heads=4)
        assert np.all(change[:position] == 0)  # 恰好是 0：一点都看不到
        assert np.all(change[position:] > 1e-6)


def test_without_the_causal_mask_earlier_outputs_would_change():
    from transformer_lab.core.encoder import encoder_layer

    p = model(4, context=12)
    tokens = np.array([3, 1, 4, 1, 5])
    changed = np.array([3, 1, 4, 1, 6])
    layer = gpt.layer_params(p, 0)
    a, _ = encoder_layer(gpt.embed_positions(p, tokens), layer, 4, norm_first=True)  # 没有掩码：编码器的用法
    b, _ = encoder_layer(gpt.embed_positions(p, changed), layer, 4, norm_first=True)
    assert np.abs(a[0] - b[0]).max() > 1e-6


# ---------------------------------------------------------------- 误区 4：模型记住了原文？

def test_ngram_overlap_and_longest_copy_by_hand():
    ref = "注意力就是加权平均"
    assert gen.ngram_overlap("注意力权重", ref, 2) == 0.5  # 注意 意力 ✓，力权 权重 ✗
    assert gen.ngram_overlap("加权平均", ref, 4) == 1.0 and gen.ngram_overlap("猫猫", ref, 1) == 0.0
    assert gen.longest_copy("他说注意力就是", ref) == "注意力就是"
    assert gen.longest_copy("猫", ref) == ""


def ngram_reference(text, reference, n):
    """逐个片段用 str.find 在原文里找（另一种写法）。"""
    grams = [text[i:i + n] for i in range(len(text) - n + 1)]
    return sum(reference.find(g) >= 0 for g in grams) / len(grams)


@given(st.text(alphabet="甲乙丙丁", min_size=4, max_size=30), st.text(alphabet="甲乙丙丁戊", min_size=1, max_size=40),
       st.integers(1, 4))
def test_overlap_and_copy_agree_with_brute_force(text, reference, n):
    assert gen.ngram_overlap(text, reference, n) == pytest.approx(ngram_reference(text, reference, n))
    best = max((text[i:j] for i in range(len(text)) for j in range(i + 1, len(text) + 1) if text[i:j] in reference),
               key=len, default="")
    assert len(gen.longest_copy(text, reference)) == len(best)
    assert gen.longest_copy(text, reference) in reference
