"""第 9 章那一次训练（tl.runs.gpt，存在硬盘上、各进程共用）：模型大小、考试损失、各检查点写的字越来越像中文，
以及在训练好的模型上：缓存生成等于整段重算、贪心会打转、写出的字并不是在抄原文。"""

import math
from collections import Counter

import numpy as np
import pytest

import transformer_lab as tl
from transformer_lab.lessons import corpus, generation, gpt_myths, runs, tiny_gpt


@pytest.fixture(scope="module")
def run():
    return tl.runs.gpt()


@pytest.fixture(scope="module")
def texts():
    train, test = corpus.held_out_split(corpus.load_corpus())
    return {"train": train, "test": test}


def test_model_size_and_checkpoints(run):
    assert tiny_gpt.sizes(run["checkpoints"][-1]) == {"vocab_size": 1074, "d_model": 64, "num_layers": 2, "num_heads": 4,
                                                     "d_ff": 256, "context": 256, "parameters": 255026}
    assert run["config"] == tiny_gpt.GPTConfig(1074) and all(m.config == run["config"] for m in run["checkpoints"])
    assert run["checkpoint_steps"].tolist() == list(range(0, runs.GPT["steps"] + 1, runs.GPT["checkpoint_every"]))
    assert run is tl.runs.gpt() and not run["checkpoints"][0].params["w_out"].flags.writeable  # 只算一次、只读
    assert run["samples"].shape == (len(run["checkpoints"]), 3) and tuple(run["prompts"]) == runs.GPT_PROMPTS


def test_loss_starts_at_uniform_guessing_and_the_exam_is_honest(run):
    V = len(run["chars"])
    assert abs(run["test_loss"][0] - math.log(V)) < 0.05  # 一开始：V 个字里瞎猜
    assert run["test_loss"][-1] < math.log(V) - 2.5  # 困惑度从 1074 降到 100 以下
    assert np.exp(run["test_loss"][-1]) < 100
    assert run["train_loss"][-1] < run["test_loss"][-1]  # 没读过的文字更难：考试损失比训练过的段落上的高（过拟合）
    assert np.all(np.isfinite(run["losses"])) and run["losses"][-20:].mean() < run["losses"][:20].mean() - 2


def test_the_stored_run_is_the_training_run():
    """存进硬盘再读出来（模型拆成参数字典、再配上同一个 config）之后，和直接训练的结果一模一样：
    notebook 打印的损失就是这些（第 0 步 6.991，最后考试损失 3.759，训练过的段落 3.560）。"""
    run = tl.runs.gpt()
    assert round(float(run["losses"][0]), 3) == 6.991 and round(float(run["test_loss"][-1]), 3) == 3.759
    assert round(float(run["train_loss"][-1]), 3) == 3.560


def test_the_model_beats_counting_tables_only_with_context(run, texts):
    """第 9 章的对照：小 GPT 的考试损失比二元计数表低（一点点），可只给它 1 个字的前文时比二元表还差，
    前文越长越好——它多出来的本事来自更长的前文。"""
    model, chars = run["checkpoints"][-1], run["chars"]
    base = tl.ngram.baseline_losses(corpus.load_corpus())
    assert run["test_loss"][-1] < base["二元表"] < base["一元表"]
    test_ids = corpus.encode(texts["test"], chars)
    by_length = [tiny_gpt.mean_loss(model, test_ids, length=L) for L in (1, 8, 128)]
    assert by_length[0] > base["二元表"] and by_length[0] > by_length[1] > by_length[2]
    assert abs(by_length[2] - run["test_loss"][-1]) < 0.01


def _written(run, i):
    return [s[len(p):] for s, p in zip(run["samples"][i], run["prompts"])]


def test_samples_go_from_gibberish_to_characters_to_words(run, texts):
    common = {c for c, _ in Counter(texts["train"]).most_common(200)}
    share = [np.mean([c in common for s in _written(run, i) for c in s]) for i in range(len(run["checkpoints"]))]
    pairs = [np.mean([gpt_myths.ngram_overlap(s, texts["train"], 2) for s in _written(run, i)])
             for i in range(len(run["checkpoints"]))]
    assert share[0] < 0.35 and min(share[2:]) > 0.7  # 随机的生僻字 → 常用字
    assert pairs[0] < 0.1 and pairs[2] < pairs[-1] and pairs[-1] > 0.7  # 两个字连在一起也是书里见过的"词"
    assert all(len(s) == runs.GPT_SAMPLE_LENGTH for i in range(len(run["checkpoints"])) for s in _written(run, i))


def test_cached_generation_equals_recomputation_on_the_trained_model(run):
    params, prompt = run["checkpoints"][-1], corpus.encode("注意力", run["chars"])
    for kw in ({}, {"temperature": 0.8, "top_p": 0.9}):
        rng = (lambda: np.random.default_rng(3)) if kw else (lambda: None)
        a = generation.generate(params, prompt, 200, rng(), **kw)
        b = generation.generate_recompute(params, prompt, 200, rng(), **kw)
        np.testing.assert_array_equal(a["tokens"], b["tokens"])
        np.testing.assert_allclose(a["probs"], b["probs"], rtol=0, atol=1e-12)


def test_greedy_decoding_falls_into_a_loop_sampling_does_not(run):
    params, chars = run["checkpoints"][-1], run["chars"]
    for prompt in runs.GPT_PROMPTS:
        greedy = generation.generate_text(params, chars, prompt, 200)
        assert gpt_myths.find_loop(greedy) is not None, greedy
    sampled = [generation.generate_text(params, chars, "注意力", 200, np.random.default_rng(s), temperature=1.0)
               for s in range(3)]
    assert all(gpt_myths.find_loop(s) is None for s in sampled)


def test_the_model_does_not_copy_the_book(run, texts):
    params, chars = run["checkpoints"][-1], run["chars"]
    written = "".join(generation.generate_text(params, chars, "注意力", 200, np.random.default_rng(s), temperature=1.0)[3:]
                      for s in range(3))
    held_out = gpt_myths.ngram_overlap(texts["test"], texts["train"], 8)  # 同一位作者没读过的正文
    assert gpt_myths.ngram_overlap(written, texts["train"], 8) < held_out  # 模型写的连 8 个字的重合都比它少
    assert len(gpt_myths.longest_copy(written, texts["train"])) < 20
