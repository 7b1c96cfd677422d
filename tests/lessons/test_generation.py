"""lessons/generation.py：带 KV 缓存的生成等于每步整段重算（字相同，概率相差 < 1e-12），注意力的逐步记录，
随机数只来自 rng，提示词之后的打分。四个常见误区的计算在 test_gpt_myths.py。"""

import numpy as np
import pytest

from transformer_lab.core.decoding import next_token_probs
from transformer_lab.lessons import generation as gen
from transformer_lab.lessons import tiny_gpt as gpt

from helpers.errors import check_error


def model(seed=0, V=12, context=40, D=16, L=2):
    return gpt.init_gpt(V, np.random.default_rng(seed), d_model=D, num_layers=L, d_ff=2 * D, context=context)


SETTINGS = [dict(temperature=0.0), dict(temperature=1.0), dict(temperature=0.7, top_k=4),
            dict(temperature=1.3, top_p=0.8), dict(temperature=0.9, top_k=6, top_p=0.9)]


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
    ("logits-unknown", lambda: gen.next_token_logits(P, "甲乙丙丁戊己庚辛壬癸子丑", "猫"), ValueError, "字表中没有的字"),
    ("samples-run-none", lambda: gen.checkpoint_samples(None, ["猫"], 2, 0.5, 0, 4), TypeError,
     r"run 必须是 tiny_gpt\.train 那样的训练结果.*NoneType"),
    ("samples-prompts-str", lambda: gen.checkpoint_samples({"checkpoints": [P], "chars": "甲乙丙丁戊己庚辛壬癸子丑"}, "甲", 2, 0.5, 0, 4),
     TypeError, r"prompts 必须是字符串的列表或元组"),
    ("samples-seed-huge", lambda: gen.checkpoint_samples({}, ["甲"], 2, 0.5, 2**70, 4), ValueError,
     r"seed 必须是非负整数且不超过 2³² − 1"),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors(case):
    _, fn, exc, pattern = case
    check_error(fn, exc, pattern)


def test_trace_spells_out_each_step():
    p = model(V=4)
    trace = gen.generation_trace(p, "甲乙丙丁", "丙甲", 5, num_heads=4)
    assert "".join(trace["context"]) == "丙甲" + trace["new"] and len(trace["new"]) == 5
    assert trace["cache_length"].tolist() == [2, 3, 4, 5, 6] and trace["attention"].shape == (5, 2, 4, 6)
    for s, S in enumerate(trace["cache_length"]):  # 第 s 步读进的最新的字
        assert trace["context"][S - 1] == (trace["new"][s - 1] if s else "甲")


def test_next_token_logits_is_the_last_row_of_the_forward_pass():
    p = model(V=4, context=6)
    chars = "甲乙丙丁"
    logits, _ = gpt.forward(p, np.array([1, 2, 0, 3, 3, 1]), num_heads=4)
    np.testing.assert_allclose(gen.next_token_logits(p, chars, "乙丙甲丁丁乙", num_heads=4), logits[-1], rtol=0, atol=1e-12)
    longer, _ = gpt.forward(p, np.array([2, 0, 3, 3, 1, 0]), num_heads=4)  # 比上下文长：只看最后 6 个字
    np.testing.assert_allclose(gen.next_token_logits(p, chars, "乙丙甲丁丁乙甲", num_heads=4), longer[-1], rtol=0,
                               atol=1e-12)
