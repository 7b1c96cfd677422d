"""自测题库，第 8 章：一层 Transformer。数值答案都由本包当场算出。

本模块只导入 ``question``（题的格式），以及算答案要用的 core，和第 5 章题库数参数的 ``parameter_count``。
"""

from __future__ import annotations

import numpy as np

from ..core.layer_norm import layer_norm
from .bank_ch05 import parameter_count
from .question import Question

__all__ = ["questions"]


def questions() -> list[Question]:
    """第 8 章的题。

    >>> qs = questions()
    >>> sorted({q.chapter for q in qs}), sum(q.from_seed for q in qs)
    ([8], 0)
    """
    x = np.array([1.0, 2.0, 3.0, 4.0])
    normed = layer_norm(x, np.ones(4), np.zeros(4))
    ffn = parameter_count(512, 2048, ("w_1", "b_1", "w_2", "b_2"))
    return [
        Question(
            "ch8-residual", 8, "零件三：残差连接——在原来的笔记上添", "机制题", "choice",
            "残差连接把子层写成 x + 子层(x)。它最直接的好处是什么？",
            choices=("原来的信息 x 原样保留，子层只需学“要补充什么”；梯度也能沿着这条直路传回前面的层",
                     "让计算量减半", "代替位置编码"),
            why=("对。就像在笔记上添批注而不是擦掉重写；很深的堆叠也能训练。",
                 "不对。残差多了一次加法，计算量几乎不变。", "不对。残差不带任何位置信息。"),
            correct=0),
        Question(
            "ch8-layernorm", 8, "零件一：层归一化，一个向量手算", "计算题", "number",
            "对向量 [1, 2, 3, 4] 做层归一化（γ 全为 1，β 全为 0，ε = 10⁻⁵）。第一个数变成多少？（保留三位小数）",
            answer=float(normed[0]), tolerance=6e-4,
            explain=f"均值 2.5，方差 1.25：(1 − 2.5) ÷ √1.25 ≈ {normed[0]:.3f}。整行变成 {np.round(normed, 3).tolist()}，"
                    "均值 0、方差 1。"),
        Question(
            "ch8-ffn", 8, "零件二：前馈网络——每个词各自“自习”", "计算题", "number",
            "前馈网络 FFN(x) = max(0, x W_1 + b_1) W_2 + b_2，d_model = 512，d_ff = 2048。一层 FFN 有多少个参数（连偏置）？",
            answer=float(ffn), tolerance=0.0, unit="个",
            explain=f"W_1 是 512 × 2048，b_1 有 2048 个，W_2 是 2048 × 512，b_2 有 512 个：一共 {ffn}，"
                    f"大约是多头注意力四个投影矩阵的两倍。"),
        Question(
            "ch8-pre-ln", 8, "组装：一层编码器，每一步的形状", "易错题", "choice",
            "论文原版（post-LN）和今天常用的 pre-LN，区别在哪里？",
            choices=("post-LN 在残差相加之后做层归一化：LN(x + 子层(x))；pre-LN 先归一化再进子层：x + 子层(LN(x))",
                     "pre-LN 不用残差连接", "两者只是名字不同"),
            why=("对。pre-LN 让残差这条直路上没有归一化挡着，深的模型更容易训练。",
                 "不对。两种写法都有残差，差别只在 LayerNorm 放在哪里。", "不对。两者算出来不一样。"),
            correct=0),
        Question(
            "ch8-reverse", 8, "故意弄坏：去掉位置编码", "易错题", "choice",
            "第 8 章训练一个小 Transformer 把符号序列倒过来。去掉位置编码以后，它为什么学不会？",
            choices=("模型太小", "没有位置，第 t 个输出不知道自己该去找哪个位置的词——注意力对词序是“瞎”的",
                     "倒序任务需要 RNN"),
            why=("不对。同样大小的模型加上位置编码就能学会。",
                 "对。倒序要求第 t 个输出去看倒数第 t 个输入；不知道谁在第几位，就只能瞎猜。",
                 "不对。注意力加上位置编码，就能把注意力图学成一条反对角线。"),
            correct=1),
    ]
