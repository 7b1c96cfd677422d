"""自测题库，第 1–4 章：RNN 与注意力、自注意力、Q/K/V、计算四步。数值答案都由本包当场算出。

素材里的八道自测题有六道在这里（``from_seed=True``），另两道（多头、位置编码）在 ``bank_ch05_08``。
本模块只导入 ``question``（题的格式），以及算答案要用的 core、lessons。
"""

from __future__ import annotations

import numpy as np

from ..core.rnn import input_jacobians, orthogonal_recurrent_weights
from ..core.similarity import cosine_similarity, dot
from ..core.softmax import softmax
from ..lessons import dependency_graph
from .question import Question

__all__ = ["questions", "softmax_cake", "rnn_signal_left", "scaled_score"]


def softmax_cake(scores=(5.0, 2.0, 0.0)) -> np.ndarray:
    """“分蛋糕”：softmax([5, 2, 0])。

    >>> softmax_cake().round(3)
    array([0.946, 0.047, 0.006])
    """
    return softmax(np.asarray(scores, dtype=float))


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


def scaled_score(raw: float = 16.0, d_k: int = 64) -> float:
    """缩放：原始分数除以 √d_k。

    >>> scaled_score(16.0, 64)
    2.0
    """
    return float(raw / np.sqrt(d_k))


def _seed_questions() -> list[Question]:
    rnn_hops = dependency_graph.path_length(dependency_graph.rnn_dependencies(50), "x1", "h50")
    att_hops = dependency_graph.path_length(dependency_graph.attention_dependencies(50), "x1", "y50")
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
            "seed-sqrt-dk", 4, "为什么要除以 √d_k：用实验说话", "机制题", "choice",
            "注意力分数为什么要除以 √d_k？挑出说得最具体的那一句。",
            choices=("为了数值稳定",
                     "d_k 越大，点积的波动越大；分数一大，softmax 就变成赢家通吃、梯度几乎为 0，模型学不动。除以 √d_k 把分数拉回温和的范围",
                     "为了让注意力权重加起来等于 1"),
            why=("不够具体。这句话没说清“不稳定”在哪：要说出点积的方差随 d_k 变大、softmax 饱和、梯度消失这条链。",
                 "对。两个各分量方差为 1 的随机向量，点积的方差正好是 d_k；除以 √d_k 后方差回到 1。"
                 "就像老师发现全班分数不是 0 就是 100、拉不开差距，于是按比例把分数缩一缩。",
                 "不对。加起来等于 1 是 softmax 自己保证的，缩不缩放都一样。"),
            correct=1, from_seed=True),
        Question(
            "seed-it-animal", 2, "图 1：点一个词，看它在听谁", "易错题", "choice",
            "“The animal didn't cross the street because it was too tired.” 里，模型靠什么让 it 指向 animal 而不是 street？",
            choices=("it 的查询向量 Q 和 animal 的键 K 点积大、和 street 的 K 点积小；softmax 后 animal 的权重大，it 的新表示里 animal 的 V 占大头",
                     "模型里写死了一条规则：代词指最近的名词",
                     "靠位置：animal 离 it 比 street 更近"),
            why=("对。分数是当场算出来的（Q·K），权重是 softmax 给的，新表示是 V 的加权平均——三步合起来完成了指代。",
                 "不对。要是“指最近的名词”，it 反而会指向 street。注意力没有写死的规则，权重由 Q·K 算出。",
                 "不对。street 离 it 更近。决定权重的是 Q 和 K 的匹配（“累”配得上动物），不是距离。"),
            correct=0, from_seed=True),
    ]


def _own_questions() -> list[Question]:
    signal = rnn_signal_left(0.5, 10)
    cake = softmax_cake()
    a, b = np.array([3.0, 4.0]), np.array([1.0, 2.0])
    weights, values = np.array([0.7, 0.2, 0.1]), np.array([10.0, 0.0, 5.0])
    sharp = softmax_cake((10.0, 4.0, 0.0))
    shifted = softmax_cake((105.0, 102.0, 100.0))
    return [
        Question(
            "ch1-decay", 1, "动手算：第 1 个词的影响还剩多少", "计算题", "number",
            "一个去掉 tanh 的 RNN，每传一步，信号乘一次放大倍数 g = 0.5。第 1 个词的影响传过 10 步之后，"
            "还剩原来的几分之几？（写成小数，保留到小数点后六位）",
            answer=signal, tolerance=6e-7,
            explain=f"0.5 乘 10 次：0.5¹⁰ ≈ {signal:.6f}，不到千分之一。这就是梯度消失：g < 1 时越传越小，g > 1 时又会爆炸。"),
        Question(
            "ch2-weighted", 2, "什么叫“加权”", "计算题", "number",
            "“它”对三个词的注意力权重是 [0.7, 0.2, 0.1]，三个词的值 V（这里每个只有一个数）是 [10, 0, 5]。"
            "“它”的新表示是多少？",
            answer=float(weights @ values), tolerance=1e-6,
            explain=f"加权平均：0.7×10 + 0.2×0 + 0.1×5 = {float(weights @ values):g}。权重大的词，它的 V 在结果里占大头。"),
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
                 "对。就像书脊上的标签和书里的内容：标签几个关键词就够，内容要丰富。",
                 "说反了。分数是 Q·K，加权求和的对象是 V。"),
            correct=1),
        Question(
            "ch4-softmax", 4, "动手算：softmax 分蛋糕", "计算题", "number",
            "分蛋糕：三个分数 [5, 2, 0] 经过 softmax，分数 5 分到多少？（保留三位小数）",
            answer=float(cake[0]), tolerance=6e-4,
            explain=f"e⁵ ÷ (e⁵ + e² + e⁰) ≈ {cake[0]:.3f}。三份是 {np.round(cake, 3).tolist()}：只大 3 分，"
                    f"却分到分数 2 那份的 {cake[0] / cake[1]:.0f} 倍——指数把差距放大了。"),
        Question(
            "ch4-scale", 4, "动手算：一句话走完四步", "计算题", "number",
            "d_k = 64，某一对词的原始点积是 16。缩放之后的分数是多少？",
            answer=scaled_score(16.0, 64), tolerance=1e-9,
            explain=f"16 ÷ √64 = 16 ÷ 8 = {scaled_score(16.0, 64):g}。"),
        Question(
            "ch4-sharper", 4, "可交互图：拖动 d_k，看 softmax 怎么“变尖”", "机制题", "predict",
            "先猜：把分数 [5, 2, 0] 全部乘 2 变成 [10, 4, 0]，softmax 之后第一份会怎样？",
            choices=("变得更大，分布更“尖”", "不变，softmax 只看谁最大", "变小"),
            why=("猜对了。分数整体放大，差距也放大，赢家拿得更多——这正是不缩放时大 d_k 带来的问题。",
                 "没猜对。softmax 是“软”的最大值，不只看名次，还看差多少。",
                 "没猜对。差距变大只会让最大的那份更大。"),
            correct=0,
            reveal=(f"softmax([5, 2, 0]) = {np.round(cake, 3).tolist()}",
                    f"softmax([10, 4, 0]) = {np.round(sharp, 3).tolist()}")),
        Question(
            "ch4-shift", 4, "动手算：softmax 分蛋糕", "易错题", "predict",
            "先猜：给三个分数都加上 100，变成 [105, 102, 100]，softmax 的结果会怎样？",
            choices=("完全不变", "三份变得几乎一样", "第一份变大"),
            why=("猜对了。每一项都乘了同一个 e¹⁰⁰，分子分母一起约掉：softmax 只看分数之间的差。",
                 "没猜对。差距还是 3 和 2，没有变小。", "没猜对。差距没变，结果就不变。"),
            correct=0,
            reveal=(f"softmax([5, 2, 0])       = {np.round(cake, 3).tolist()}",
                    f"softmax([105, 102, 100]) = {np.round(shifted, 3).tolist()}")),
    ]


def questions() -> list[Question]:
    """第 1–4 章的题：素材里的六道，加上本书自己的题。

    >>> qs = questions()
    >>> sorted({q.chapter for q in qs}), sum(q.from_seed for q in qs)
    ([1, 2, 3, 4], 6)
    """
    return _seed_questions() + _own_questions()
