"""自测题库，第 2 章：自注意力。数值答案都由本包当场算出。

素材里的八道自测题有一道在这里（``from_seed=True``）。
本模块只导入 ``question``（题的格式），以及 NumPy。
"""

from __future__ import annotations

import numpy as np

from .question import Question

__all__ = ["questions"]


def questions() -> list[Question]:
    """第 2 章的题：素材里的一道，加上本书自己的题。

    >>> qs = questions()
    >>> sorted({q.chapter for q in qs}), sum(q.from_seed for q in qs)
    ([2], 1)
    """
    weights, values = np.array([0.7, 0.2, 0.1]), np.array([10.0, 0.0, 5.0])
    return [
        Question(
            "seed-it-animal", 2, "图 1：点一个词，看它在听谁", "易错题", "choice",
            "在第 2 章设计的模型里，“The animal didn't cross the street because it was too tired.” 这一句，"
            "靠什么让 it 指向 animal 而不是 street？",
            choices=("it 的查询向量 Q 和 animal 的键 K 点积大、和 street 的 K 点积小；softmax 后 animal 的权重大，it 的新表示里 animal 的 V 占大头",
                     "模型里写死了一条规则：代词指最近的名词",
                     "靠位置：animal 离 it 比 street 更近"),
            why=("对。在第 2 章手工设计的权重里，分数是当场算出来的（Q·K），权重是 softmax 给的，新表示是 V 的加权平均——"
                 "三步合起来让 it 指向了 animal。第 10 章在真模型里量过：没有一个头这样做——72 个头里，没有一个像第 2 章"
                 "设计的头那样，把大部分注意力直接投给正确的名词。",
                 "不对。要是“指最近的名词”，it 反而会指向 street。注意力没有写死的规则，权重由 Q·K 算出。",
                 "不对。street 离 it 更近。决定权重的是 Q 和 K 的匹配（“累”配得上动物），不是距离。"),
            correct=0, from_seed=True),
        Question(
            "ch2-weighted", 2, "什么叫“加权”", "计算题", "number",
            "“它”对三个词的注意力权重是 [0.7, 0.2, 0.1]，三个词的值 V（这里每个只有一个数）是 [10, 0, 5]。"
            "“它”的新表示是多少？",
            answer=float(weights @ values), tolerance=1e-6,
            explain=f"加权平均：0.7×10 + 0.2×0 + 0.1×5 = {float(weights @ values):g}。权重大的词，它的 V 在结果里占大头。"),
        Question(
            "ch2-broken", 2, "画面一：做阅读理解", "机制题", "choice",
            "“我把朋友送的耳机摔了。它坏了，朋友秒回：换新的。”你一听就知道“它”是耳机，不是朋友本人。"
            "换成自注意力的说法，发生了什么？",
            choices=("“它”的查询在找“一个会坏、能换新的东西”，和前文里“耳机”的键最对得上，于是从“耳机”的值里取了最多的信息",
                     "“它”只看紧挨着它的下一个词",
                     "“它”把所有词的信息平均分，每个词拿一样多"),
            why=("对。“摔了”“坏了”“换新的”这些线索让查询偏向能摔坏的东西，也就是耳机；权重由 Q·K 当场算出，再按权重混合 V。",
                 "不对。自注意力里每个词都能一步看到整句话的所有词，不只看邻居。",
                 "不对。平均分就分不出“它”指谁了；softmax 让最对得上的词拿大头。"),
            correct=0),
        Question(
            "ch2-rounds", 2, "为什么一轮不够：一个计算", "易错题", "choice",
            "自注意力的输出里，每个词的新表示是什么？",
            choices=("就是它自己的 V", "所有词的 V 按注意力权重混合出来的加权平均", "注意力权重最大的那个词的 V"),
            why=("不对。V 是原料，新表示是成品：它是全场的 V 按权重混出来的。",
                 "对。Σ 权重 × V——谁的权重大，谁的“货”在成品里占大头。",
                 "不对。softmax 是“软”的：最高分拿大头，别的词也各拿一点，不是只取一个。"),
            correct=1),
    ]
