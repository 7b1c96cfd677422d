"""自测题库，第 9 章：下一个词——输出端的概率、温度 / top-k / top-p、困惑度、KV 缓存、贪心与采样、
编码器与只有解码器。数值答案都由本包当场算出（``core.decoding.next_token_probs``，困惑度是 ``np.exp``）。

本模块只导入 ``question``（题的格式），以及算答案要用的 core。
"""

from __future__ import annotations

import numpy as np

from ..core.decoding import next_token_probs
from .question import Question

__all__ = ["questions", "HAND_LOGITS"]

HAND_LOGITS = (3.0, 1.5, 0.0, -0.5, -2.0)  # 第 9 章“动手算”那 5 个字的打分
EXAM_LOSS = 4.0  # 困惑度题里的考试损失（一个整数，方便心算 e⁴）


def questions() -> list[Question]:
    """第 9 章的题。

    >>> qs = questions()
    >>> sorted({q.chapter for q in qs}), len(qs)
    ([9], 8)
    """
    logits = np.array(HAND_LOGITS)
    p1 = next_token_probs(logits)
    p_top2 = next_token_probs(logits, top_k=2)
    nucleus = next_token_probs(np.log(np.array([0.5, 0.3, 0.15, 0.05])), top_p=0.9)
    perplexity = float(np.exp(EXAM_LOSS))
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
        Question(
            "ch9-perplexity", 9, "训练：损失、困惑度和考试", "计算题", "number",
            f"一个字符级模型在考试文字上的平均损失（交叉熵，自然对数）是 {EXAM_LOSS:g}。它的困惑度是多少？（保留三位小数）",
            answer=perplexity, tolerance=6e-4,
            explain=f"困惑度 = e^损失 = e^{EXAM_LOSS:g} ≈ {perplexity:.3f}：大致是“每一步在五十几个字之间犹豫”。"
                    "瞎猜时损失是 log|V|，困惑度就是字表大小 |V|。"),
        Question(
            "ch9-greedy-loop", 9, "常见误区", "机制题", "choice",
            "让小 GPT 贪心地（每步取概率最大的字）写 200 个字，结尾常常是同几个字一遍遍重复。为什么？",
            choices=("因为模型的字表太小，能用的字用完了",
                     "因为贪心是确定的：同样的前文永远选同样的字；最近几个字主导了打分，一旦写出的几个字把它带回同样的选择，"
                     "就一圈圈转下去",
                     "因为 KV 缓存存满了，后面的字只能重复前面的"),
            why=("不对。字表有一千多个字，重复的圈只有几个字长。",
                 "对。采样每一步都有随机性，偶尔选一个不是第一名的字，就跳出了圈；所以聊天模型多用采样。",
                 "不对。带缓存和整段重算写出的字完全相同，重复和缓存无关。"),
            correct=1),
        Question(
            "ch9-encoder-decoder", 9, "常见误区", "机制题", "choice",
            "前几章的编码器层和本章小 GPT 的层，真正的区别是什么？",
            choices=("GPT 的层是另一种结构，没有注意力，只有前馈网络",
                     "同一种层；GPT 的每一层都带因果掩码（每个字只看自己和前面），最上面再接一个输出矩阵去猜下一个字",
                     "编码器每个字只看前面，GPT 每个字看全部"),
            why=("不对。小 GPT 用的就是第 8 章那一层：注意力、前馈、残差、层归一化都在。",
                 "对。不加掩码适合“读懂”一句话（BERT 这一类），加上掩码适合一个字一个字往后写（GPT 这一类）。",
                 "不对，正好说反了：是 GPT 的每个字只看自己和前面。"),
            correct=1),
    ]
