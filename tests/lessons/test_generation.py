"""lessons/generation.py：带 KV 缓存的生成等于每步整段重算（字相同，概率相差 < 1e-12），注意力的逐步记录，
随机数只来自 rng，提示词之后的打分。四个常见误区的计算在 test_gpt_myths.py。"""

import numpy as np
import pytest

from transformer_lab.core.decoding import next_token_probs
from transformer_lab.lessons import generation as gen
from transformer_lab.lessons import tiny_gpt as gpt

from helpers.errors import check_error


def model(seed=0, V=12, context=40, D=16, L=2):
    config = gpt.GPTConfig(V, d_model=D, num_layers=L, num_heads=4, d_ff=2 * D, context=context)
    return gpt.init_gpt(config, np.random.default_rng(seed))


def spread(m, seed):
    """同一个模型，输出矩阵换成 N(0, 1)：打分拉开，采样才有意思。"""
    return gpt.TinyGPT(m.config, m.params | {"w_out": np.random.default_rng(seed).normal(size=m.params["w_out"].shape)})


SETTINGS = [dict(temperature=0.0), dict(temperature=1.0), dict(temperature=0.7, top_k=4),
            dict(temperature=1.3, top_p=0.8), dict(temperature=0.9, top_k=6, top_p=0.9)]


@pytest.mark.parametrize("kw", SETTINGS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_cached_generation_equals_full_recomputation_at_every_step(kw):
    p = spread(model(), 9)
    prompt = np.array([3, 1, 4, 1, 5])
    rng_a, rng_b = (np.random.default_rng(5) if kw["temperature"] else None for _ in range(2))
    cached = gen.generate(p, prompt, 30, rng_a, **kw)
    full = gen.generate_recompute(p, prompt, 30, rng_b, **kw)
    np.testing.assert_array_equal(cached["tokens"], full["tokens"])
    np.testing.assert_allclose(cached["probs"], full["probs"], rtol=0, atol=1e-12)
    ids = np.concatenate([prompt, cached["tokens"]])
    for step in (0, 13, 29):  # 再用整段的 forward 独立核对几步
        logits, _ = gpt.forward(p, ids[: prompt.size + step])
        np.testing.assert_allclose(cached["probs"][step], next_token_probs(logits[-1], **kw), rtol=0, atol=1e-12)


def test_the_equality_check_can_fail():
    p = model()
    a = gen.generate(p, np.array([1, 2]), 10, np.random.default_rng(0), temperature=1.0)
    b = gen.generate_recompute(p, np.array([1, 2]), 10, np.random.default_rng(0), temperature=1.1)
    assert np.abs(a["probs"] - b["probs"]).max() > 1e-6


def test_attention_record_is_the_newest_row_of_the_full_causal_attention():
    p = model(1)
    prompt = np.array([2, 7, 1])
    out = gen.generate(p, prompt, 8)
    ids = np.concatenate([prompt, out["tokens"]])
    assert out["attention"].shape == (8, 2, 4, 10) and out["cache_length"].tolist() == list(range(3, 11))
    for step, S in enumerate(out["cache_length"]):
        _, weights = gpt.forward(p, ids[:S])  # (L, H, S, S)
        np.testing.assert_allclose(out["attention"][step, :, :, :S], weights[:, :, -1], rtol=0, atol=1e-12)
        assert np.all(out["attention"][step, :, :, S:] == 0)  # 还没写出来的字：0
        np.testing.assert_allclose(out["attention"][step].sum(axis=-1), 1.0, rtol=0, atol=1e-12)


def test_randomness_comes_only_from_rng():
    p = spread(model(2), 3)
    draw = lambda seed: gen.generate(p, np.array([0]), 25, np.random.default_rng(seed),  # noqa: E731
                                     temperature=1.0)["tokens"].tolist()
    assert draw(11) == draw(11) and draw(11) != draw(12)
    greedy = [gen.generate(p, np.array([0]), 25)["tokens"].tolist() for _ in range(2)]
    assert greedy[0] == greedy[1]
    assert gen.generate(p, np.array([0]), 25, np.random.default_rng(1))["tokens"].tolist() == greedy[0]


def test_generate_text_uses_the_character_table():
    p = model(V=4)
    text = gen.generate_text(p, "甲乙丙丁", "丙甲", 6)
    assert text.startswith("丙甲") and len(text) == 8 and set(text) <= set("甲乙丙丁")


def test_checkpoint_samples_restart_the_rng_for_every_checkpoint():
    p = model(V=4)
    run = {"chars": "甲乙丙丁", "checkpoints": [p, p]}
    samples = gen.checkpoint_samples(run, ["甲", "乙丙"], 5, 1.0, seed=3)
    assert samples.shape == (2, 2) and samples[0, 0] == samples[1, 0]  # 同一个模型、同一个种子：写得一样
    assert samples[0, 1].startswith("乙丙") and len(samples[0, 1]) == 7


class Counting:
    """只有生成接口的"别的模型"（例如第 12 章的 Llama 式 GPT）：把 config、new_caches、feed_unchecked 转给小 GPT，
    并数 feed_unchecked 被调用了几次。generate 不碰小 GPT 的参数名，所以它照样能用。"""

    def __init__(self, inner):
        self.inner, self.config, self.calls = inner, inner.config, []

    def new_caches(self, capacity):
        return self.inner.new_caches(capacity)

    def feed_unchecked(self, tokens, caches):
        self.calls.append(len(tokens))
        return self.inner.feed_unchecked(tokens, caches)


def test_generate_only_needs_the_small_model_interface():
    p = model(4)
    other = Counting(p)
    out = gen.generate(other, np.array([1, 2, 3]), 6)
    np.testing.assert_array_equal(out["tokens"], gen.generate(p, np.array([1, 2, 3]), 6)["tokens"])
    assert other.calls == [3, 1, 1, 1, 1, 1]  # 提示词一次读进去，之后每步只读 1 个字
    assert gen.generate_text(other, "甲乙丙丁戊己庚辛壬癸子丑", "甲乙", 3).startswith("甲乙")


def test_the_loop_checks_its_inputs_once(monkeypatch):
    """模型、提示词和旋钮在循环外检查一次：生成 20 个字和 2 个字，调用检查函数的次数相同。"""
    from transformer_lab import _validation

    p = model(5)
    counts = {}
    for n in (2, 20):
        calls = []
        for name in ("as_real_array", "token_ids", "positive_int", "generator", "check_shape"):
            original = getattr(_validation, name)
            monkeypatch.setattr(_validation, name, lambda *a, _f=original, _n=name, **k: (calls.append(_n), _f(*a, **k))[1])
        gen.generate(p, np.array([1, 2]), n, np.random.default_rng(0), temperature=1.0, top_p=0.9)
        monkeypatch.undo()
        counts[n] = len(calls)
    assert counts[2] == counts[20] > 0


P = model()
CHARS = "甲乙丙丁戊己庚辛壬癸子丑"  # 12 个字，与 P 的词表一样长

ERROR_CASES = [
    ("too-long", lambda: gen.generate(P, np.arange(10), 32), ValueError,
     r"prompt 的 10 个字加上要生成的 num_new=32 个字超过了模型的上下文长度 context=40.*10 \+ 32 - 1 <= 40"),
    # 字表必须属于这个模型（issue 41 根因 3），报错用调用者的参数名（prompt、chars、prompts[i]、run["chars"]）
    ("chars-longer", lambda: gen.generate_text(P, CHARS + "寅", "甲", 3), ValueError,
     r"chars 不是这个模型的字表：模型的词表有 vocab_size=12 个字，chars 有 13 个字"),
    ("chars-shorter", lambda: gen.generate_text(P, CHARS[:11], "甲", 3), ValueError, r"chars 有 11 个字"),
    ("chars-duplicate", lambda: gen.generate_text(P, "甲甲丙丁戊己庚辛壬癸子丑", "甲", 3), ValueError,
     r"chars 里有重复的字：'甲'"),
    ("chars-list", lambda: gen.generate_text(P, list(CHARS), "甲", 3), TypeError, r"chars 必须是字符串.*list"),
    ("prompt-not-str", lambda: gen.generate_text(P, CHARS, ["甲"], 3), TypeError, r"prompt 必须是字符串.*list"),
    ("prompt-unknown-named", lambda: gen.generate_text(P, CHARS, "甲猫", 3), ValueError,
     r"prompt 里有字表中没有的字：'猫'（字表 chars 有 12 个字）"),
    ("text-too-long", lambda: gen.generate_text(P, CHARS, "甲" * 10, 32), ValueError,
     r"prompt 的 10 个字加上要生成的 num_new=32 个字"),
    ("logits-chars-duplicate", lambda: gen.next_token_logits(P, "甲甲丙丁戊己庚辛壬癸子丑", "甲"), ValueError,
     r"chars 里有重复的字"),
    ("trace-chars-longer", lambda: gen.generation_trace(P, CHARS + "寅", "甲", 3), ValueError,
     r"chars 不是这个模型的字表"),
    ("trace-prompt-empty", lambda: gen.generation_trace(P, CHARS, "", 3), ValueError, r"prompt 不能是空字符串"),
    ("samples-chars-wrong", lambda: gen.checkpoint_samples({"checkpoints": [P], "chars": CHARS + "寅"}, ["甲"], 2, 0.5, 0),
     ValueError, r'run\["chars"\] 不是这个模型的字表'),
    ("samples-prompt-unknown", lambda: gen.checkpoint_samples({"checkpoints": [P], "chars": CHARS}, ["甲", "猫"], 2, 0.5, 0),
     ValueError, r"prompts\[1\] 里有字表中没有的字：'猫'"),
    ("samples-temperature-huge", lambda: gen.checkpoint_samples({"checkpoints": [P], "chars": CHARS}, ["甲"], 2, 10**400, 0),
     ValueError, r"temperature 太大了"),
    ("sample-without-rng", lambda: gen.generate(P, np.array([1]), 3, temperature=1.0), TypeError,
     "rng 必须是 np.random.Generator"),
    ("prompt-2d", lambda: gen.generate(P, np.array([[1, 2]]), 3), ValueError, "prompt 必须是一维"),
    ("prompt-range", lambda: gen.generate(P, np.array([12]), 3), ValueError, "prompt 越界"),
    ("num-new", lambda: gen.generate(P, np.array([1]), 0), ValueError, "num_new 必须是正整数"),
    ("top-k", lambda: gen.generate(P, np.array([1]), 2, np.random.default_rng(0), 1.0, top_k=13),
     ValueError, r"top_k 必须在 \[1, V=12\]"),
    ("recompute-rng", lambda: gen.generate_recompute(P, np.array([1]), 3, temperature=0.5), TypeError,
     "rng 必须是"),
    ("unknown-char", lambda: gen.generate_text(P, "甲乙丙丁戊己庚辛壬癸子丑", "猫", 3), ValueError,
     "字表中没有的字"),
    ("logits-unknown", lambda: gen.next_token_logits(P, "甲乙丙丁戊己庚辛壬癸子丑", "猫"), ValueError, "字表中没有的字"),
    ("samples-run-none", lambda: gen.checkpoint_samples(None, ["猫"], 2, 0.5, 0), TypeError,
     r"run 必须是 tiny_gpt\.train 那样的训练结果.*NoneType"),
    ("samples-prompts-str", lambda: gen.checkpoint_samples({"checkpoints": [P], "chars": "甲乙丙丁戊己庚辛壬癸子丑"}, "甲", 2, 0.5, 0),
     TypeError, r"prompts 必须是字符串的列表或元组"),
    ("old-api-params-dict", lambda: gen.generate(dict(P.params), np.array([1]), 3), TypeError,
     r"model 必须是能逐词生成的模型.*dict.*run\['checkpoints'\]\[-1\] 就是模型；不再单独传 num_heads"),
    ("recompute-old-api", lambda: gen.generate_recompute(dict(P.params), np.array([1]), 3), TypeError,
     r"model 必须是能逐词生成的模型"),
    ("logits-empty", lambda: gen.next_token_logits(P, "甲乙丙丁戊己庚辛壬癸子丑", ""), ValueError, r"prompt 不能是空字符串"),
    ("check-model-none", lambda: gen.check_generator_model(None), TypeError, r"model 必须是能逐词生成的模型.*NoneType"),
    # 报错写调用者传的东西：run["checkpoints"][j]，不是内部参数名 model（修复前写的是 "model 必须是……"）
    ("samples-checkpoint-not-a-model", lambda: gen.checkpoint_samples({"checkpoints": [P, {}], "chars": CHARS}, ["甲"], 2, 0.5, 0),
     TypeError, r'^run\["checkpoints"\]\[1\] 必须是能逐词生成的模型.*收到的是 dict。提示：用 tl\.tiny_gpt\.init_gpt'),
    ("samples-checkpoints-empty", lambda: gen.checkpoint_samples({"checkpoints": [], "chars": CHARS}, ["甲"], 2, 0.5, 0),
     ValueError, r'run\["checkpoints"\] 不能是空的'),
    ("samples-checkpoints-int", lambda: gen.checkpoint_samples({"checkpoints": 3, "chars": CHARS}, ["甲"], 2, 0.5, 0),
     TypeError, r'run\["checkpoints"\] 必须是模型的列表或元组.*int 3'),
    ("samples-seed-huge", lambda: gen.checkpoint_samples({}, ["甲"], 2, 0.5, 2**70), ValueError,
     r"seed 必须是非负整数且不超过 2³² − 1"),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors(case):
    _, fn, exc, pattern = case
    check_error(fn, exc, pattern)


def test_trace_spells_out_each_step():
    p = model(V=4)
    trace = gen.generation_trace(p, "甲乙丙丁", "丙甲", 5)
    assert "".join(trace["context"]) == "丙甲" + trace["new"] and len(trace["new"]) == 5
    assert trace["cache_length"].tolist() == [2, 3, 4, 5, 6] and trace["attention"].shape == (5, 2, 4, 6)
    for s, S in enumerate(trace["cache_length"]):  # 第 s 步读进的最新的字
        assert trace["context"][S - 1] == (trace["new"][s - 1] if s else "甲")


def test_next_token_logits_is_the_last_row_of_the_forward_pass():
    p = model(V=4, context=6)
    chars = "甲乙丙丁"
    logits, _ = gpt.forward(p, np.array([1, 2, 0, 3, 3, 1]))
    np.testing.assert_allclose(gen.next_token_logits(p, chars, "乙丙甲丁丁乙"), logits[-1], rtol=0, atol=1e-12)
    longer, _ = gpt.forward(p, np.array([2, 0, 3, 3, 1, 0]))  # 比上下文长：只看最后 6 个字
    np.testing.assert_allclose(gen.next_token_logits(p, chars, "乙丙甲丁丁乙甲"), longer[-1], rtol=0,
                               atol=1e-12)


@pytest.mark.parametrize("chars", [CHARS + "寅卯", "甲甲丙丁戊己庚辛壬癸子丑"])
def test_a_character_table_that_is_not_the_models_is_refused_not_silently_used(chars):
    """issue 41 根因 3：修之前，长了两个字的字表、有重复字的字表都被接受，写出的字悄悄对错了号（重复的字表里，
    编号 0 和 1 都译成"甲"）。现在四个文字版的入口都在生成之前拒绝它。"""
    for call in (lambda: gen.generate_text(P, chars, "甲", 3), lambda: gen.next_token_logits(P, chars, "甲"),
                 lambda: gen.generation_trace(P, chars, "甲", 3),
                 lambda: gen.checkpoint_samples({"checkpoints": [P], "chars": chars}, ["甲"], 3, 0.0, 0)):
        with pytest.raises(ValueError, match="chars"):
            call()
    text = gen.generate_text(P, CHARS, "甲", 3)  # 对的字表照常生成，写出的字就是编号对应的字
    assert text == "甲" + "".join(CHARS[i] for i in gen.generate(P, np.array([0]), 3)["tokens"])


@pytest.mark.parametrize("scale", [1e155, 1e300])
def test_a_huge_residual_stream_generates_as_the_checked_full_pass(scale):
    """issue 41 根因 2：残差流 ≳ 1e155 时，旧的手写快路 fast_layer_norm 的平方溢出，悄悄与整段计算不一致。
    现在生成的每一步都走 layer_norm（先除以最大绝对值的那条路）：缓存生成与整段重算（带因果掩码的检查过的前向）逐字相同。"""
    m = model()
    big = gpt.TinyGPT(m.config, m.params | {"tok_embed": m.params["tok_embed"] * scale,
                                            "pos_embed": m.params["pos_embed"] * scale})
    a = gen.generate(big, np.array([1, 2, 3]), 8, np.random.default_rng(0), temperature=1.0)
    b = gen.generate_recompute(big, np.array([1, 2, 3]), 8, np.random.default_rng(0), temperature=1.0)
    np.testing.assert_array_equal(a["tokens"], b["tokens"])
    np.testing.assert_allclose(a["probs"], b["probs"], rtol=1e-12, atol=1e-15)
    assert np.all(np.isfinite(a["probs"]))
