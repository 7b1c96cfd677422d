"""自测题库，第 4 章：计算四步。数值答案都由本包当场算出。

素材里的八道自测题有一道在这里（``from_seed=True``）。
本模块只导入 ``question``（题的格式），以及算答案要用的 core。
"""

from __future__ import annotations

import numpy as np

from ..core.softmax import softmax
from .question import Question

__all__ = ["questions", "softmax_cake", "scaled_score"]


def softmax_cake(scores=(5.0, 2.0, 0.0)) -> np.ndarray:
    """“分蛋糕”：softmax([5, 2, 0])。

    >>> softmax_cake().round(3)
    array([0.946, 0.047, 0.006])
    """
    return softmax(np.asarray(scores, dtype=float))


def scaled_score(raw: float = 16.0, d_k: int = 64) -> float:
    """缩放：原始分数除以 √d_k。

    >>> scaled_score(16.0, 64)
    2.0
    """
    return float(raw / np.sqrt(d_k))


def questions() -> list[Question]:
    """第 4 章的题：素材里的一道，加上本书自己的题。

    >>> qs = questions()
    >>> sorted({q.chapter for q in qs}), sum(q.from_seed for q in qs)
    ([4], 1)
    """
    cake = softmax_cake()
    sharp = softmax_cake((10.0, 4.0, 0.0))
    shifted = softmax_cake((105.0, 102.0, 100.0))
    return [
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
