"""第 13 章的图：只检查本章的事实（通用的管道——帧数、两种版式的字号、局部重画——由 tests/test_explorables.py 检查）。

每一帧画的数要等于另一条路算出来的：指令微调那张图的回答和比例 = 实验里存的；LoRA 的"要学的数" = r·(D + D) 逐个
投影相加；DPO 的曲线 = 偏好差减去参照模型的偏好差，标题里的"喜欢哪一份"跟着标错那一对的符号走。
"""

from __future__ import annotations

import numpy as np

import transformer_lab as tl
from transformer_lab.core.lora import lora_parameters
from transformer_lab.figures.ch13_assistant import dpo_beta, lora_ranks, sft_checkpoints
from transformer_lab.lessons import assistant

from helpers.errors import call, error_table_test


def test_sft_frames_show_the_stored_answers_and_rates():
    run = tl.runs.sft()
    ex = sft_checkpoints()
    for i, step in enumerate(run["checkpoint_steps"]):
        out = ex.update(step=int(step))
        assert out["checkpoint"][0] == i and out["loss"][0] == run["losses"][step]
        assert out["right"].tolist() == [run["scores"]["trained_right"][i], run["scores"]["held_out_right"][i]]
    ex.png({"step": 200})
    drawn = " ".join(t.text.replace("\n", "") for t in ex.texts(layout="wide"))
    for reply in run["fixed_answers"][-1]:
        assert str(reply) in drawn


def test_lora_counts_are_r_times_2d_per_projection():
    ex = lora_ranks()
    D, L = tl.runs.gpt()["config"].d_model, tl.runs.gpt()["config"].num_layers
    for r in assistant.LORA_RANKS:
        out = ex.update(rank=r)
        assert out["count"][0] == L * 4 * lora_parameters(D, D, r)
        np.testing.assert_allclose(out["final"][0], np.mean(tl.runs.lora()[f"rank{r}"]["losses"][-20:]))


def test_dpo_curves_are_margin_gains_and_the_title_follows_the_sign():
    run = tl.runs.dpo()
    ex = dpo_beta()
    for beta in assistant.DPO_BETAS:
        r = run[f"beta{beta}"]
        out = ex.update(beta=beta, step=100)
        gain = r["margins"] - r["ref_margins"]
        np.testing.assert_allclose(out["wrong"], gain[:, -1])
        np.testing.assert_allclose(out["normal"], gain[:, :-1].mean(axis=1))
        assert out["kl"][0] == r["kl"][-1]
    ex.png({"beta": 0.1, "step": 100})
    title = [t.text for t in ex.texts(layout="wide") if "β = 0.1" in t.text][0]
    assert ("等于二" in title) == (run["beta0.1"]["margins"][100, -1] > 0)


ERROR_CASES = [
    ("sft-fig-run", call(sft_checkpoints, {"losses": []}), TypeError, r"run 必须是 tl.runs 里那样的实验结果"),
    ("lora-fig-run", call(lora_ranks, {}), TypeError, r"run 必须是"),
    ("lora-fig-sft", call(lora_ranks, None, 3), TypeError, r"sft_run 必须是"),
    ("dpo-fig-run", call(dpo_beta, [1]), TypeError, r"run 必须是"),
]
test_documented_errors = error_table_test(ERROR_CASES)
