"""自测题库，第 6 章：位置编码。数值答案都由本包当场算出。

素材里的八道自测题有一道在这里（``from_seed=True``）。
本模块只导入 ``question``（题的格式），以及算答案要用的 core。
"""

from __future__ import annotations

import numpy as np

from ..core.attention import scaled_dot_product_attention
from ..core.positional import rope, sinusoidal_positional_encoding
from .question import Question

__all__ = ["questions", "order_blind", "rope_scores"]


def order_blind(T: int = 5, d: int = 4) -> tuple[bool, bool]:
    """不加位置编码时把词序倒过来：(输出是否只是跟着倒过来, 所有词输出的平均是否完全相同)。

    >>> order_blind()
    (True, True)
    """
    x = np.random.default_rng(0).normal(size=(T, d))                  # (T, D)
    out, _ = scaled_dot_product_attention(x, x, x)                    # (T, D)
    out_rev, _ = scaled_dot_product_attention(x[::-1], x[::-1], x[::-1])
    return bool(np.allclose(out_rev, out[::-1])), bool(np.allclose(out_rev.mean(0), out.mean(0)))


def rope_scores(T: int = 12, d: int = 8) -> np.ndarray:
    """同一对 q、k 放在每个位置上，RoPE 之后的分数表 scores[m, n] = rope(q)_m · rope(k)_n。"""
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, d))
    qs, ks = rope(np.tile(q, (T, 1))), rope(np.tile(k, (T, 1)))      # (T, d)
    return qs @ ks.T                                                 # (T, T)


def questions() -> list[Question]:
    """第 6 章的题：素材里的一道，加上本书自己的题。

    >>> qs = questions()
    >>> sorted({q.chapter for q in qs}), sum(q.from_seed for q in qs)
    ([6], 1)
    """
    same_order, same_mean = order_blind()
    pe = sinusoidal_positional_encoding(2, 4)
    scores = rope_scores()
    return [
        Question(
            "seed-position", 6, "动手算：注意力到底“瞎”在哪里", "易错题", "predict",
            "先猜：不加位置编码，把一句话的词序整个倒过来（比如“猫追狗”和“狗追猫”，“我打你”和“你打我”），自注意力的输出会怎样？",
            choices=("每个词的输出内容完全不变，只是跟着换了位置——两种词序分不出来", "输出完全变了", "会报错"),
            why=("猜对了。自注意力本身不看先后（置换等变），所以要给每个词发一个座位号：位置编码。",
                 "没猜对。每个词的分数只取决于词的内容，换了位置内容不变，输出也不变。",
                 "没猜对。注意力对任何顺序都照算不误——问题恰恰在于它算出来一样。"),
            correct=0, from_seed=True,
            reveal=(f"倒序后的输出 == 原输出倒过来：{same_order}",
                    f"所有词输出的平均完全相同：{same_mean}")),
        Question(
            "ch6-pe-value", 6, "动手算：论文里的公式，一个下标一个下标地看", "计算题", "number",
            "D = 4 的正弦位置编码：位置 p = 1 的第 0 列 PE(1, 0) 是多少？（保留三位小数）",
            answer=float(pe[1, 0]), tolerance=6e-4,
            explain=f"第 0 列是 sin(p·ω₀)，ω₀ = 1，所以 PE(1, 0) = sin 1 ≈ {pe[1, 0]:.3f}。位置 0 的整行是 "
                    f"{pe[0].tolist()}：sin 0 = 0，cos 0 = 1。"),
        Question(
            "ch6-index-i", 6, "动手算：论文里的公式，一个下标一个下标地看", "易错题", "choice",
            "正弦位置编码的公式里，sin(p·ω_i) 中的 i 是什么？",
            choices=("第几个词", "第几对维度（第几根转速不同的指针），只和 D 有关", "句子的长度"),
            why=("不对。第几个词是 p。", "对。D = 4 时 i 只有 0 和 1，不管句子多长。", "不对。公式里没有句子长度。"),
            correct=1),
        Question(
            "ch6-rope", 6, "RoPE 尝鲜：不是“加”一个座位号，而是“转”一下", "机制题", "predict",
            "先猜：用 RoPE 时，同一对 q、k，“位置 10 的查询对位置 7 的键”和“位置 3 的查询对位置 0 的键”，分数相比如何？",
            choices=("完全相同", "前者更大", "后者更大"),
            why=("猜对了。RoPE 的分数只看两个位置相隔多远（p − p′），这里都是 3。",
                 "没猜对。位置的绝对值不影响分数，只有相隔多远才影响。", "没猜对。两对都相隔 3 个位置。"),
            correct=0,
            reveal=(f"scores[10, 7] = {scores[10, 7]:.4f}", f"scores[3, 0]  = {scores[3, 0]:.4f}")),
    ]
