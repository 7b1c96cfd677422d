"""第 13 章的三组实验（``runs.sft``、``runs.lora``、``runs.dpo`` 各调用一个）：从第 9 章预训练好的小 GPT 出发，
指令微调、LoRA、DPO，各自训练并打分。设置都写在这里的常数里，notebook、图和测试读的是同一份。

打分（``evaluate``）：对每道题贪心地回答（``instructions.answer``），按 ``instructions.grade`` 判格式和对错，
分别算训练过的题 (trained) 和从没训练过的题 (held_out) 上的比例。对照：第 0 步的存档就是预训练模型本身；
``copy_baseline`` 是"把问题抄一遍当答案"的字重合度；``other_answer_baseline`` 是"拿别的题的答案来答"的字重合度。
本模块只依赖 NumPy 和 ``core``。
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import finetune
from .instructions import answer, char_f1, first_line, grade, load_instructions, sft_batch
from .tiny_gpt import TinyGPT, check_model

__all__ = ["SFT", "LORA", "LORA_RANKS", "DPO", "DPO_BETAS", "FIXED_TERMS", "pairs", "evaluate", "copy_baseline",
           "other_answer_baseline", "sft_experiment", "lora_experiment", "dpo_experiment"]

SFT = {"steps": 200, "lr": 1e-3, "batch_size": 8, "checkpoint_every": 20}
LORA = {"steps": 200, "lr": 2e-2, "batch_size": 8, "alpha": 8.0, "rank": 4}
LORA_RANKS = (1, 4, 16, 64)
DPO = {"steps": 100, "lr": 2e-4, "checkpoint_every": 10}
DPO_BETAS = (0.1, 0.5, 2.0)
FIXED_TERMS = ("注意力", "因果掩码", "矩阵乘法")  # 可交互图里每个存档回答的三道题：前两道训练过，第三道没有


def pairs(part: str) -> list[tuple[str, str]]:
    """数据的一部分（``trained`` 或 ``held_out``）写成 (术语, 答案) 的列表。"""
    return [(x["term"], x["answer"]) for x in load_instructions()[part]]


def evaluate(model: TinyGPT, chars: str) -> dict[str, object]:
    """在训练过的题和没训练过的题上各答一遍：``{part: {"answers", "format", "right", "f1"}}``（比例和平均重合度）。"""
    out = {}
    for part in ("trained", "held_out"):
        raws = [answer(model, chars, term) for term, _ in pairs(part)]
        grades = [grade(raw, ref) for raw, (_, ref) in zip(raws, pairs(part))]
        out[part] = {"answers": np.array([first_line(r) for r in raws]),
                     "format": float(np.mean([g["format"] for g in grades])),
                     "right": float(np.mean([g["right"] for g in grades])),
                     "f1": float(np.mean([g["f1"] for g in grades]))}
    return out


def copy_baseline(part: str) -> float:
    """对照："把问题抄一遍当答案"（``什么是注意力？``）和参考答案的平均字重合度。"""
    return float(np.mean([char_f1(f"什么是{term}？", ref) for term, ref in pairs(part)]))


def other_answer_baseline() -> float:
    """对照：拿训练过的某一道题的答案去答没训练过的题——每道没训练过的题，对全部训练答案的平均字重合度，再平均。"""
    trained = [a for _, a in pairs("trained")]
    return float(np.mean([np.mean([char_f1(a, ref) for a in trained]) for _, ref in pairs("held_out")]))


def sft_experiment(base: TinyGPT, chars: str, seed: int) -> dict[str, object]:
    """全部参数的指令微调（设置 ``SFT``）。每个存档回答 ``FIXED_TERMS``，并在两部分题上打分（第 0 步 = 预训练模型）。"""
    base = check_model(base)
    run = finetune.finetune(base, chars, pairs("trained"), np.random.default_rng(seed), SFT["steps"], SFT["lr"],
                            SFT["batch_size"], SFT["checkpoint_every"])
    models = [TinyGPT(base.config, p) for p in run["checkpoints"]]
    scores = [evaluate(m, chars) for m in models]
    fixed = [[first_line(answer(m, chars, t)) for t in FIXED_TERMS] for m in models]
    table = {f"{part}_{k}": np.array([s[part][k] for s in scores]) for part in ("trained", "held_out")
             for k in ("format", "right", "f1")}
    return {"losses": run["losses"], "checkpoint_steps": run["checkpoint_steps"], "final": dict(run["checkpoints"][-1]),
            "trainable": run["trainable"], "fixed_answers": np.array(fixed), "scores": table,
            "answers": {part: scores[-1][part]["answers"] for part in ("trained", "held_out")},
            "pretrained_answers": {part: scores[0][part]["answers"] for part in ("trained", "held_out")},
            "seconds": run["seconds"]}


def lora_experiment(base: TinyGPT, chars: str, seed: int, ranks: Sequence[int] = LORA_RANKS) -> dict[str, object]:
    """LoRA（设置 ``LORA``）：``ranks`` 里的每个秩各训练一次，抽题的随机数和全部参数的微调相同（同一个 ``seed``）。"""
    base = check_model(base)
    out = {}
    for rank in ranks:
        run = finetune.finetune(base, chars, pairs("trained"), np.random.default_rng(seed), LORA["steps"], LORA["lr"],
                                LORA["batch_size"], LORA["steps"], rank=rank, alpha=LORA["alpha"],
                                lora_rng=np.random.default_rng(seed + 1))
        merged = finetune.merge_lora(base, run["checkpoints"][-1], LORA["alpha"])
        scores = evaluate(merged, chars)
        out[f"rank{rank}"] = {"losses": run["losses"], "trainable": run["trainable"], "lora": dict(run["checkpoints"][-1]),
                              "scores": {f"{p}_{k}": scores[p][k] for p in scores for k in ("format", "right", "f1")},
                              "seconds": run["seconds"]}
    return out


def dpo_experiment(sft_model: TinyGPT, chars: str, betas: Sequence[float] = DPO_BETAS) -> dict[str, object]:
    """DPO（设置 ``DPO``）：从指令微调后的模型出发（它也是参照模型），``betas`` 里的每个 β 各训练一次。

    每个存档量离参照模型的距离（训练过的题的答案位置上的平均 KL），训练完在训练过的题上重新打分，
    并记下模型对最后那一对（喜欢的回答是错的）那道题的贪心回答。
    """
    sft_model = check_model(sft_model)
    prefs = load_instructions()["preferences"]
    tokens, _, mask = sft_batch(pairs("trained"), chars)
    wrong_term = prefs[-1]["term"]
    out = {}
    for beta in betas:
        run = finetune.dpo_train(sft_model, chars, prefs, beta, DPO["steps"], DPO["lr"], DPO["checkpoint_every"])
        models = [TinyGPT(sft_model.config, p) for p in run["checkpoints"]]
        final = evaluate(models[-1], chars)["trained"]
        out[f"beta{beta}"] = {"losses": run["losses"], "margins": run["margins"], "ref_margins": run["ref_margins"],
                              "checkpoint_steps": run["checkpoint_steps"],
                              "kl": np.array([finetune.kl_from(m, sft_model, tokens, mask) for m in models]),
                              "wrong_answers": np.array([first_line(answer(m, chars, wrong_term)) for m in models]),
                              "trained_right": final["right"], "trained_format": final["format"],
                              "seconds": run["seconds"]}
    return out
