"""第 13 章的三份命名实验（tl.runs.sft / lora / dpo，存在硬盘上、各进程共用）：notebook 里说的每一件事在这里核对——
训练过的题学会了、没训练过的题格式对但内容不对（知识来自预训练）、LoRA 要学的数少得多、DPO 学会了标错的那一对。"""

import numpy as np
import pytest

import transformer_lab as tl
from transformer_lab.lessons import assistant, finetune, instructions, runs, tiny_gpt


@pytest.fixture(scope="module")
def sft():
    return tl.runs.sft()


def test_sft_learns_the_trained_answers_but_not_the_held_out_ones(sft):
    s = sft["scores"]
    assert s["trained_format"][0] == s["held_out_format"][0] == 0  # 第 0 步就是预训练模型：不会答题
    assert s["trained_right"][-1] >= 0.9 and s["held_out_format"][-1] >= 0.9  # 训练过的答对；没训练过的格式也对
    assert s["held_out_right"].max() == 0  # 没训练过的题一道也没答对
    assert s["held_out_f1"][-1] < 2 * assistant.other_answer_baseline()  # 和"拿别的答案来答"差不多
    assert sft["losses"][-1] < 0.2 < 2.5 < sft["losses"][0]
    assert sft["fixed_answers"].shape == (len(sft["checkpoint_steps"]), 3)
    assert sft is tl.runs.sft()


def test_baselines_are_far_below_the_bar():
    assert assistant.copy_baseline("held_out") < instructions.RIGHT_AT / 2
    assert assistant.other_answer_baseline() < instructions.RIGHT_AT / 2


def test_lora_trains_few_parameters_and_merges_exactly(sft):
    lora = tl.runs.lora()
    base = tl.runs.gpt()["checkpoints"][-1]
    full = sft["trainable"]
    assert full == tiny_gpt.sizes(base)["parameters"]
    counts = [lora[f"rank{r}"]["trainable"] for r in assistant.LORA_RANKS]
    assert counts == [2 * 4 * 2 * 64 * r for r in assistant.LORA_RANKS]  # 2 层 × 4 个投影 × (A + B)
    assert counts[1] / full < 0.02
    finals = [lora[f"rank{r}"]["losses"][-20:].mean() for r in assistant.LORA_RANKS]
    assert finals == sorted(finals, reverse=True)  # 秩越大，损失越低
    assert sft["losses"][-20:].mean() < finals[-1]  # 全部参数仍然最低
    merged = finetune.merge_lora(base, lora["rank4"]["lora"], assistant.LORA["alpha"])
    assert tiny_gpt.sizes(merged) == tiny_gpt.sizes(base)  # LoRA 没让模型变小（合并后一样大）


def test_dpo_learns_the_wrong_preference_at_small_beta():
    dpo = tl.runs.dpo()
    small, large = dpo["beta0.1"], dpo["beta2.0"]
    assert small["ref_margins"][-1] < 0 < small["margins"][-1, -1]  # 标错的那一对：从偏向"等于一"变成偏向"等于二"
    assert large["margins"][-1, -1] < 0  # β 大：离参照模型近，没翻过来
    kls = [dpo[f"beta{b}"]["kl"][-1] for b in assistant.DPO_BETAS]
    assert kls == sorted(kls, reverse=True)  # β 越大，走得越近
    assert small["trained_right"] < large["trained_right"]  # 走得远的代价：训练过的题答错了一些
    for run in dpo.values():
        assert run["losses"][0] == pytest.approx(np.log(2))


def test_runs_are_listed():
    assert {(f.__name__, tuple(kw)) for f, kw in runs.CHAPTER_RUNS} >= {("sft", ()), ("lora", ()), ("dpo", ())}
