"""自测题库，第 13 章：从接话到助手——损失掩码算几个位置、LoRA 要学几个数、DPO 的起点损失、
微调和知识、LoRA 和模型大小、偏好和对错。数值答案都由本包当场算出（``core``、``lessons.instructions``）。

本模块只导入 ``question``（题的格式），以及算答案要用的 core 和 lessons。
"""

from __future__ import annotations

import numpy as np

from ..core.dpo import dpo_loss
from ..core.lora import lora_parameters
from ..lessons.instructions import sft_batch
from .question import Question

__all__ = ["questions", "KEY_ANSWER"]

KEY_ANSWER = ("键", "每个词挂出来的标签：我是什么。")  # 第 13 章训练过的一道题
D, RANK = 64, 8  # 第 9 章小 GPT 的 D；题里的秩


def questions() -> list[Question]:
    """第 13 章的题。

    >>> qs = questions()
    >>> sorted({q.chapter for q in qs}), len(qs)
    ([13], 6)
    """
    chars = "".join(sorted(set("问：什么是？答" + "".join(KEY_ANSWER) + "\n")))
    scored = int(sft_batch([KEY_ANSWER], chars)[2].sum())
    zeros = np.zeros(3)
    start = dpo_loss(zeros, zeros, zeros, zeros, beta=0.5)[0]
    return [
        Question(
            "ch13-mask", 13, "损失掩码，落在一道真题上", "计算题", "number",
            f"指令微调的一道题：“问：什么是{KEY_ANSWER[0]}？答：{KEY_ANSWER[1]}”，后面跟一个换行。"
            "损失掩码里有几个位置是 True（算损失）？",
            answer=float(scored), tolerance=0.0,
            explain=f"只有答案的 {len(KEY_ANSWER[1])} 个字和结尾的换行算损失，一共 {scored} 个；"
                    "问题里的字一个也不算。"),
        Question(
            "ch13-lora", 13, "LoRA：冻住预训练的矩阵，只学一个低秩的改动", "计算题", "number",
            f"一个 {D} × {D} 的投影矩阵，秩 {RANK} 的 LoRA（A 是 {D} × {RANK}，B 是 {RANK} × {D}）一共要学几个数？",
            answer=float(lora_parameters(D, D, RANK)), tolerance=0.0,
            explain=f"{RANK} × ({D} + {D}) = {lora_parameters(D, D, RANK)}，是整个矩阵 {D * D} 个数的四分之一。"),
        Question(
            "ch13-dpo-start", 13, "手算一次 DPO", "计算题", "number",
            "DPO 训练的第一步，正在训练的模型就是参照模型。这时每一对的损失是多少？（保留三位小数）",
            answer=float(start), tolerance=6e-4,
            explain=f"z = 0，σ(0) = 1/2，损失 = −log(1/2) = ln 2 ≈ {start:.3f}，和 β、对数概率是多少都无关。"),
        Question(
            "ch13-knowledge", 13, "常见误区", "易错题", "choice",
            "本章的小 GPT 指令微调之后，没训练过的题格式全对、内容全错。这说明什么？",
            choices=("微调的步数不够，多训练几步就能答对",
                     "格式可以从几十道题里学会，知识要在预训练里读到",
                     "字重合度这个标准太严，其实它答对了"),
            why=("不对。训练过的题早已一字不差，再练只会背得更牢；没见过答案的题，练多少步也看不到答案。",
                 "对。模型在没见过的题上，是把训练过的答案换个样子搬出来：和最像的那道训练答案的重合度远高于和参考答案的。",
                 "不对。它的回答和参考答案的平均字重合度，和“随便拿一道训练答案来答”差不多：内容确实不对。"),
            correct=1),
        Question(
            "ch13-lora-size", 13, "常见误区", "易错题", "choice",
            "LoRA 训练完、把 A、B 合并回 W 之后，模型比原来小吗？",
            choices=("小得多：只剩 A、B 两个小矩阵",
                     "一样大：W + (α/r)·AB 和 W 形状相同；LoRA 省的是要训练的数",
                     "大一点：多了 A、B"),
            why=("不对。推理时用的是合并后的 W'，形状和 W 一样；A、B 只是训练时学的改动。",
                 "对。省下的是要算梯度、存 Adam 状态的那部分；让模型变小要靠量化这类方法。",
                 "不对。合并之后 A、B 就不需要了；只有训练时（或者不合并时）才多出它们。"),
            correct=1),
        Question(
            "ch13-preference", 13, "偏好训练：DPO", "机制题", "choice",
            "偏好数据里有一对标错了：被喜欢的回答其实是错的。DPO 训练之后，模型会怎样？",
            choices=("DPO 会发现它是错的，跳过这一对",
                     "往被喜欢的那份推：β 小、训练久时，模型会更相信错的那份",
                     "没有影响：DPO 只看参照模型"),
            why=("不对。DPO 的损失里只有“哪一份被喜欢”，没有“哪一份是对的”。",
                 "对。本章 β = 0.1 时，标错那一对的偏好差从负的变成了正的：模型学会了标注的人喜欢的，而不是对的。",
                 "不对。参照模型只决定“从哪里量起”；推的方向来自偏好数据。"),
            correct=1),
    ]
