"""自测题库，第 3 章：Q、K、V 三兄弟。数值答案都由本包当场算出。

素材里的八道自测题有一道在这里（``from_seed=True``）。
本模块只导入 ``question``（题的格式），以及算答案要用的 core。
"""

from __future__ import annotations

import numpy as np

from ..core.similarity import cosine_similarity, dot
from .question import Question

__all__ = ["questions"]


def questions() -> list[Question]:
    """第 3 章的题：素材里的一道，加上本书自己的题。

    >>> qs = questions()
    >>> sorted({q.chapter for q in qs}), sum(q.from_seed for q in qs)
    ([3], 1)
    """
    a, b = np.array([3.0, 4.0]), np.array([1.0, 2.0])
    return [
        Question(
            "seed-qkv-origin", 3, "动手算：同一个词，戴上三副眼镜", "机制题", "choice",
            "Q、K、V 是词本来就带着的，还是模型在训练中学到的？",
            choices=("每个词在词表里就存着现成的 Q、K、V 三个向量",
                     "同一个词向量分别乘三个投影矩阵 W_Q、W_K、W_V 得到；这三个矩阵是训练学出来的",
                     "Q、K、V 是人手工设计的三种特征"),
            why=("不对。词表里每个词只有一个嵌入向量；Q、K、V 是它戴上三副“眼镜”之后的样子。",
                 "对。同一个 x 乘三个不同的矩阵，就得到“我要找什么”“我是什么”“我能给什么”三个分身；眼镜是练出来的。",
                 "不对。本书前几章为了讲解设计过权重（并且都标明了），真实模型里这些矩阵是训练出来的。"),
            correct=1, from_seed=True),
        Question(
            "ch3-dot", 3, "动手算：点积和余弦相似度——给“对不对得上”打分", "计算题", "number",
            "向量 a = [3, 4]，b = [1, 2]。它们的点积 a·b 是多少？",
            answer=float(dot(a, b)), tolerance=0.0,
            explain=f"对应位置相乘再相加：3×1 + 4×2 = {float(dot(a, b)):g}。"),
        Question(
            "ch3-cosine", 3, "动手算：点积和余弦相似度——给“对不对得上”打分", "计算题", "number",
            "还是 a = [3, 4]，b = [1, 2]。它们的余弦相似度是多少？（保留三位小数）",
            answer=float(cosine_similarity(a, b)), tolerance=6e-4,
            explain=f"点积除以两个长度：11 ÷ (5 × √5) ≈ {float(cosine_similarity(a, b)):.3f}。接近 1，说明方向几乎一致；"
                    "余弦只看方向、不看长度。"),
        Question(
            "ch3-longer-key", 3, "动手算：点积和余弦相似度——给“对不对得上”打分", "易错题", "predict",
            "先猜：把某个键 k 的长度放大 3 倍（方向不变），查询 q 和它的点积、余弦相似度会怎样？",
            choices=("点积变成 3 倍，余弦不变", "两个都变成 3 倍", "两个都不变"),
            why=("猜对了。点积既看方向又看长度；余弦只看方向。", "没猜对。余弦把长度除掉了，所以不变。",
                 "没猜对。点积会跟着长度变。"),
            correct=0,
            reveal=(f"q = [3, 4]，k = [1, 2]：点积 {float(dot(a, b)):g}，余弦 {float(cosine_similarity(a, b)):.3f}",
                    f"k 放大 3 倍 = [3, 6]：点积 {float(dot(a, 3 * b)):g}，余弦 {float(cosine_similarity(a, 3 * b)):.3f}")),
        Question(
            "ch3-xiaohong", 3, "生活类比：图书馆查书和做阅读理解", "机制题", "choice",
            "查小红的身高：你带着“小红有多高？”去翻全班的花名册，找到写着“小红”的那一行，读出她的身高。这里谁是 Q、K、V？",
            choices=("Q 是“小红有多高？”这个问题；K 是每一行上写的名字；V 是那一行记的身高",
                     "Q 是花名册；K 是小红；V 是问题",
                     "Q、K、V 都是小红的身高"),
            why=("对。拿问题去比对每一行的标签（Q·K），对上了就把那一行的内容（V）取回来——这就是最朴素的注意力。",
                 "不对。提问的一方是 Q；被比对的标签是 K；真正取回来的内容是 V。",
                 "不对。三个角色分工不同：找什么、靠什么找到、取回什么。"),
            correct=0),
        Question(
            "ch3-why-v", 3, "动手算：为什么 V 不能直接用 K？", "机制题", "choice",
            "既然每个词已经有了键 K，为什么还要另算一个值 V？",
            choices=("K 和 V 其实总是相同的，分开写只是习惯",
                     "K 要“好找”（和查询比对），V 要“有用”（交出去的内容）；分开后两件事可以各学各的",
                     "V 用来算注意力分数，K 用来加权求和"),
            why=("不对。W_K 和 W_V 是两个不同的矩阵，K 和 V 一般不同。",
                 "对。就像目录里登记的主题词和书里的内容：主题词几个就够，内容要丰富。",
                 "说反了。分数是 Q·K，加权求和的对象是 V。"),
            correct=1),
    ]
