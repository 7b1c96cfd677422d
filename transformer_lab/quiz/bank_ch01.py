"""自测题库，第 1 章：RNN 与 Transformer。数值答案都由本包当场算出。

素材里的八道自测题有三道在这里（``from_seed=True``）。
本模块只导入 ``question``（题的格式），以及算答案要用的 core、lessons。
"""

from __future__ import annotations

import numpy as np

from ..core.rnn import input_jacobians, orthogonal_recurrent_weights
from ..lessons import dependency_graph
from .question import Question

__all__ = ["questions", "rnn_signal_left"]


def rnn_signal_left(gain: float = 0.5, steps: int = 10, d_h: int = 4) -> float:
    """线性 RNN（去掉 tanh）里，第 1 个词对 ``steps`` 步之后的笔记还剩多大影响（雅可比矩阵的范数之比）。

    循环权重是 gain 倍的正交矩阵，所以每传一步影响乘一次 gain。

    >>> round(rnn_signal_left(0.5, 10), 6)
    0.000977
    """
    rng = np.random.default_rng(0)
    w_hh = orthogonal_recurrent_weights(d_h, gain, rng)                   # (d_h, d_h)
    x = rng.normal(size=(steps + 1, d_h))                                 # (T, d_in)
    _, jac = input_jacobians(x, np.eye(d_h), w_hh, linear=True)           # (T, T, d_h, d_in)
    return float(np.linalg.norm(jac[steps, 0]) / np.linalg.norm(jac[0, 0]))


def questions() -> list[Question]:
    """第 1 章的题：素材里的三道，加上本书自己的题。

    >>> qs = questions()
    >>> sorted({q.chapter for q in qs}), sum(q.from_seed for q in qs)
    ([1], 3)
    """
    rnn_hops = dependency_graph.path_length(dependency_graph.rnn_dependencies(50), "x1", "h50")
    att_hops = dependency_graph.path_length(dependency_graph.attention_dependencies(50), "x1", "y50")
    signal = rnn_signal_left(0.5, 10)
    return [
        Question(
            "seed-forget", 1, "生活类比：传话游戏 vs 全员电话会议", "地基题", "choice",
            "读一个很长的句子时，RNN 为什么容易“忘掉”句首的词？",
            choices=("它的隐状态（那页笔记）太小，存不下一个词",
                     "句首的信息要一步一步传过每个词，每一步都乘一次权重，影响越传越弱",
                     "RNN 读句子是从右往左读的"),
            why=("不对。笔记确实是固定大小，但问题不在“存不下一个词”，而在传递：句首的信息要经过很多次改写才能到句尾。",
                 "对。这就是传话游戏：每传一步就乘一次循环权重，几十步之后，句首词的影响（梯度）乘成了接近 0 的数。"
                 "LSTM、GRU 的门控能让它好一些，但信息仍然要一步一步地传。",
                 "不对。RNN 是从左往右一个词一个词地读；方向不是问题，传的次数才是。"),
            correct=1, from_seed=True),
        Question(
            "seed-hops", 1, "动手算：注意力一步直达", "地基题", "number",
            "“我出生在法国……（中间隔了几十个词）……所以我能说一口流利的____。”设“法国”是第 1 个词，空格是第 50 个词。"
            f"在自注意力里，“法国”的信息最少经过几步就能到达第 50 个词的输出？（作为对比，RNN 要 {rnn_hops} 步。）",
            answer=float(att_hops), tolerance=0.0, unit="步",
            explain=f"{att_hops} 步。自注意力里每个输出都直接读所有输入——每一对词之间都直接相连，"
                    f"中间不经过别人传话；RNN 则要沿着笔记一步步传 {rnn_hops} 次。",
            from_seed=True),
        Question(
            "seed-parallel", 1, "动手算：数一数“必须排队”的轮数", "地基题", "choice",
            "为什么 Transformer 能让一句话里的所有词同时算，RNN 却不行？",
            choices=("RNN 算第 t 个词要用第 t−1 步的笔记，必须排队；自注意力里每个词的 Q、K、V 只靠它自己，分数表一次矩阵乘法算完",
                     "Transformer 的参数比 RNN 少",
                     "RNN 不能用 GPU"),
            why=("对。依赖关系决定能不能并行：RNN 的每一步都等着上一步，自注意力里没有“上一步”。",
                 "不对。能不能并行和参数多少无关，只看计算之间有没有“必须先算完谁”的依赖。",
                 "不对。RNN 也能在 GPU 上跑，只是每一步都要等上一步，GPU 的大部分核心闲着。"),
            correct=0, from_seed=True),
        Question(
            "ch1-decay", 1, "动手算：第 1 个词的影响还剩多少", "计算题", "number",
            "一个去掉 tanh 的 RNN，每传一步，信号乘一次放大倍数 g = 0.5。第 1 个词的影响传过 10 步之后，"
            "还剩原来的几分之几？（写成小数，保留到小数点后六位）",
            answer=signal, tolerance=6e-7,
            explain=f"0.5 乘 10 次：0.5¹⁰ ≈ {signal:.6f}，不到千分之一。这就是梯度消失：g < 1 时越传越小，g > 1 时又会爆炸。"),
        Question(
            "ch1-bottle", 1, "动手算：RNN 怎样一个词一个词地读", "易错题", "choice",
            "句子从 10 个词变成 1000 个词。RNN 的隐藏状态（那页笔记）和自注意力的权重表，大小各怎样变？",
            choices=("笔记的大小不变；权重表从 10 × 10 变成 1000 × 1000",
                     "两个都跟着变大", "两个都不变"),
            why=("对。RNN 要把整句话挤进同一个固定大小的“小瓶子”，越早的词越容易被挤掉；注意力给每一对词都记一笔账，"
                 "什么都不会被挤掉，代价是这张表按 n² 变大（第 7 章）。",
                 "不对。隐藏状态的长度 d_h 是定好的，和句子多长无关——这正是它记不住远处的原因。",
                 "不对。注意力的权重表每一对词一格，词数翻倍，格子数翻四倍。"),
            correct=0),
    ]
