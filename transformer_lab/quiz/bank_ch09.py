"""自测题库，第 9 章：下一个词——输出端的概率、温度 / top-k / top-p、困惑度、KV 缓存、贪心与采样。
数值答案都由本包当场算出（``core.decoding.next_token_probs``）。

本模块只导入 ``question``（题的格式），以及算答案要用的 core。
"""

from __future__ import annotations

import numpy as np

from ..core.decoding import next_token_probs
from .question import Question

__all__ = ["questions", "HAND_LOGITS"]

HAND_LOGITS = (3.0, 1.5, 0.0, -0.5, -2.0)  # 第 9 章“动手算”那 5 个字的打分


def questions() -> list[Question]:
    """第 9 章的题。

    >>> qs = questions()
    >>> sorted({q.chapter for q in qs}), len(qs)
    ([9], 5)
    """
    logits = np.array(HAND_LOGITS)
    p1 = next_token_probs(logits)
    p_top2 = next_token_probs(logits, top_k=2)
    nucleus = next_token_probs(np.log(np.array([0.5, 0.3, 0.15, 0.05])), top_p=0.9)
    return [
        Question(
            "ch9-softmax", 9, "5 个字的小字表：从向量到概率", "计算题", "number",
            "5 个字的打分是 [3, 1.5, 0, −0.5, −2]。用 softmax 变成概率，第一个字（打分 3）的概率是多少？（保留三位小数）",
            answer=float(p1[0]), tolerance=6e-4,
            explain=f"每个打分取指数再除以总和：e³ ÷ (e³ + e^1.5 + e⁰ + e^−0.5 + e^−2) ≈ {p1[0]:.3f}。"
                    f"五个字的概率是 {np.round(p1, 3).tolist()}，合计 1。"),
        Question(
            "ch9-top-k", 9, "三个旋钮：温度、top-k、top-p", "计算题", "number",
            "同样这 5 个打分，top-k = 2（只留概率最大的 2 个字，再重新归一）。第一个字的概率变成多少？（保留三位小数）",
            answer=float(p_top2[0]), tolerance=6e-4,
            explain=f"只留前两个：e³ ÷ (e³ + e^1.5) ≈ {p_top2[0]:.3f}，第二个字 {p_top2[1]:.3f}，其余 3 个字都是 0。"),
        Question(
            "ch9-top-p", 9, "三个旋钮：温度、top-k、top-p", "计算题", "number",
            "概率从大到小是 0.5、0.3、0.15、0.05。top-p = 0.9 之后（留下累计刚好不小于 0.9 的那几个字，再重新归一），"
            "第一个字的概率是多少？（保留三位小数）",
            answer=float(nucleus[0]), tolerance=6e-4,
            explain=f"累计 0.5、0.8、0.95：到第 3 个字刚好不小于 0.9，留 3 个字，合计 0.95；第一个字 0.5 ÷ 0.95 ≈ "
                    f"{nucleus[0]:.3f}，最后一个字变成 0。"),
        Question(
            "ch9-temperature", 9, "常见误区", "易错题", "choice",
            "把温度从 1 调到 2，模型“知道”的东西变了吗？",
            choices=("变了：温度越高，模型学到的知识越多",
                     "没变：打分（logits）一点没动，温度只是把打分除以 2 再做 softmax，概率更平均，名次不变",
                     "变了：温度会重新训练输出矩阵"),
            why=("不对。温度不碰任何参数，模型的打分完全相同。",
                 "对。第 9 章对同一组打分换了四个温度：熵变了，名次一个也没变。",
                 "不对。生成时不训练，参数一个也不变。"),
            correct=1),
        Question(
            "ch9-kv-cache", 9, "用 KV 缓存生成：写出的字和整段重算一模一样", "机制题", "choice",
            "带 KV 缓存生成时，为什么每一步只算新来的那一个字，结果仍然和整段重算完全相同？",
            choices=("因为缓存里存的是近似值，误差小到可以忽略",
                     "因为因果掩码让前面的位置看不到新字：它们在每一层的 k、v 都不会变，存下来直接用就和重算的一样",
                     "因为模型只有一层"),
            why=("不对。两者相差不到 10⁻¹²，只是浮点运算顺序带来的舍入，缓存本身没有近似。",
                 "对。只有新字自己的 q、k、v 要算，它的 q 再去看缓存里全部的 k、v。",
                 "不对。小 GPT 有 2 层，每一层一个缓存；层数多少都成立。"),
            correct=1),
    ]
