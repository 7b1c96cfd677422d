"""第 10 章的练习：句向量的两步——按掩码平均每个词元的向量（补齐的 [PAD] 不算），再用余弦相似度找最像的另一句。

每个常见错误都附一份（或几份）“错误的写法”，检查时在同样的输入上重算，读者的结果和它处处一样就报告这个错误。
测试输入的设计：补齐位置上的向量不是 0（真模型的 [PAD] 也有向量；是 0 的话“连补齐一起平均”和“除以 T”就分不出来）、
各句真实长度不同；句向量的长度各不相同（点积和余弦才会选出不同的句子）。
"""

from __future__ import annotations

import numpy as np

from .checker import Case, Exercise, Mistake

__all__ = ["EXERCISES"]


# ---------------------------------------------------------------- masked_mean


def masked_mean(hidden, mask):
    weights = mask[..., None].astype(hidden.dtype)     # (B, T, 1) 真的词元是 1，补齐的 [PAD] 是 0
    total = (hidden * weights).sum(axis=1)             # (B, D)    只把真的词元加起来
    count = mask.sum(axis=1)[:, None]                  # (B, 1)    每句有几个真的词元
    return total / count                               # (B, D)    平均


def _padded(rng: np.random.Generator, lengths: list[int], t: int, d: int, scale: float = 1.0):
    """B 句话补齐到 T 个词元：hidden (B, T, D)，补齐位置上的向量也不是 0；mask (B, T)，True = 真的词元。"""
    hidden = rng.normal(scale=scale, size=(len(lengths), t, d))
    mask = np.arange(t) < np.array(lengths)[:, None]
    return hidden, mask


def _mm_cases(rng: np.random.Generator) -> list[Case]:
    hand = np.array([[[3.0, 4.0], [1.0, 0.0], [9.0, 9.0]],
                     [[2.0, 2.0], [4.0, 0.0], [0.0, 1.0]]])        # 两句，各 3 个位置
    hand_mask = np.array([[True, True, False], [True, True, True]])  # 第 1 句最后一个是 [PAD]
    lengths = [5, 2, 7, 1]
    big_hidden, big_mask = _padded(rng, [3, 6], 6, 4)
    big_hidden = np.where(big_mask[..., None], big_hidden, big_hidden * 1e3)   # (B, T, D) 只有 [PAD] 上的很大
    f32_hidden, f32_mask = _padded(rng, [2, 5, 3], 5, 8)
    return [
        Case("手算的例子：第 1 句补了一个 [PAD] [9, 9]", (hand, hand_mask)),
        Case("随机：4 句，真实长度 5、2、7、1，补齐到 T = 7，D = 6", _padded(rng, lengths, 7, 6)),
        Case("没有补齐：mask 全是 True", (rng.normal(size=(2, 4, 3)), np.ones((2, 4), dtype=bool))),
        Case("只有一个真的词元：一句话，补齐到 T = 4", _padded(rng, [1], 4, 5)),
        Case("很大的数：[PAD] 上的向量放大一千倍", (big_hidden, big_mask)),
        Case("float32 的输入：3 句，T = 5，D = 8", (f32_hidden.astype(np.float32), f32_mask), rtol=2e-6, atol=1e-6),
    ]


MASKED_MEAN = Exercise(
    name="masked_mean",
    chapter=10,
    signature="masked_mean(hidden, mask)",
    task="按掩码求平均（句向量的第一步）：hidden 的形状 (B, T, D)，B 句话补齐到同样的 T 个词元；mask 是 (B, T) 的布尔数组，"
         "True 表示真的词元，False 表示补齐用的 [PAD]。每句只平均它真的词元，返回 (B, D)。（不用缩成长度 1。）",
    solution=masked_mean,
    cases=_mm_cases,
    mistakes=(
        Mistake("averages_padding", "把补齐的 [PAD] 也平均进去了",
                "补齐只是为了让几句话凑成一个长方形的数组；[PAD] 位置上的向量没有意思（但不是 0），"
                "算进平均，同一句话补得多少不同，句向量就不同。",
                "只加 mask 为 True 的位置，再除以这句真的词元个数。",
                (lambda hidden, mask: hidden.mean(axis=1),)),
        Mistake("divides_by_T", "加的是真的词元，除的却是 T",
                "分子只加了真的词元，分母却用了补齐后的长度 T：补齐越多，句向量越短，平均值被悄悄缩小。",
                "分母是每句真的词元个数：mask.sum(axis=1)，形状 (B, 1) 才能和 (B, D) 对齐相除。",
                (lambda hidden, mask: (hidden * mask[..., None]).sum(axis=1) / hidden.shape[1],)),
        Mistake("first_token_only", "只取了第一个词元（[CLS]）",
                "有的模型用句首的 [CLS] 当句向量，但第 10 章的 all-MiniLM-L6-v2 训练时用的是所有真的词元的平均。",
                "把每句真的词元都加起来，再除以它们的个数。",
                (lambda hidden, mask: hidden[:, 0],)),
    ),
    hints=(
        "平均 = 真的词元的向量之和 ÷ 真的词元个数；两样都只看 mask 为 True 的位置。",
        "mask[..., None] 的形状是 (B, T, 1)，乘上 hidden 就把 [PAD] 位置变成 0；再 .sum(axis=1) 得到 (B, D)。",
        "个数：mask.sum(axis=1)，形状 (B,)；写成 mask.sum(axis=1)[:, None]（形状 (B, 1)）才能和 (B, D) 相除。",
    ),
)


# ---------------------------------------------------------------- most_similar


def most_similar(vectors):
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)   # (N, D) 每一行缩成长度 1
    cos = unit @ unit.T                                               # (N, N) 两两的余弦相似度
    np.fill_diagonal(cos, -np.inf)                                    # 自己和自己不算
    return cos.argmax(axis=1)                                         # (N,) 每一句最像的另一句的编号


def _nearest(vectors, normalise=1, self_too=False, pick=np.argmax):
    """找最像的另一句的各种写法（包括写错的）：normalise 是按哪一轴缩放（None = 不缩放）。"""
    v = vectors if normalise is None else vectors / np.linalg.norm(vectors, axis=normalise, keepdims=True)
    sim = v @ v.T
    if not self_too:
        sim = np.where(np.eye(len(v), dtype=bool), np.inf if pick is np.argmin else -np.inf, sim)
    return pick(sim, axis=1)


def _ms_cases(rng: np.random.Generator) -> list[Case]:
    hand = np.array([[1.0, 0.0], [10.0, 1.0], [0.0, 3.0], [1.0, 1.0]])
    lengths = rng.uniform(0.2, 5.0, size=(8, 1))                       # 长度各不相同
    unit = rng.normal(size=(6, 4))
    unit = unit / np.linalg.norm(unit, axis=1, keepdims=True)          # 每行长度 1
    return [
        Case("手算的例子：4 句，D = 2（长度各不相同）", (hand,)),
        Case("随机：8 句，D = 5，长度各不相同", (rng.normal(size=(8, 5)) * lengths,)),
        Case("随机：12 句，D = 16（四个话题，每个话题三句）",
             (np.repeat(rng.normal(size=(4, 16)), 3, axis=0) + 0.8 * rng.normal(size=(12, 16)),)),
        Case("长度 1：已经缩放过的向量", (unit,)),
        Case("只有两句：N = 2", (np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 5.0]]),)),
        Case("float32 的输入：7 句，D = 6", ((rng.normal(size=(7, 6)) * rng.uniform(0.5, 3.0, size=(7, 1))).astype(np.float32),)),
    ]


MOST_SIMILAR = Exercise(
    name="most_similar",
    chapter=10,
    signature="most_similar(vectors)",
    task="每一句最像的另一句：vectors 的形状 (N, D)，每行是一句话的句向量（长度不一定是 1）。"
         "对每一句，找出和它余弦相似度最高的另一句（不算它自己），返回 (N,) 的整数数组：第 i 个数是那一句的编号。",
    solution=most_similar,
    cases=_ms_cases,
    mistakes=(
        Mistake("includes_self", "把自己也算进去了",
                "每个向量和自己的余弦相似度都是 1，是最大的：不排除自己，每一句“最像的”都是它自己。",
                "比较之前把对角线设成 -inf：np.fill_diagonal(cos, -np.inf)。",
                (lambda vectors: _nearest(vectors, self_too=True),)),
        Mistake("dot_not_cosine", "用点积代替了余弦相似度",
                "点积 = 长度 × 长度 × cos：向量越长，点积越大。不先缩成长度 1，“最像的”往往只是最长的那一句。",
                "先把每一行除以它的长度：vectors / np.linalg.norm(vectors, axis=1, keepdims=True)。",
                (lambda vectors: _nearest(vectors, normalise=None),)),
        Mistake("normalised_columns", "按列缩放了",
                "要缩成长度 1 的是每一句（每一行）；你按列（每一维）除了长度，句子之间的比较就变了。",
                "np.linalg.norm(vectors, axis=1, keepdims=True)：axis=1 是每一行。",
                (lambda vectors: _nearest(vectors, normalise=0),)),
        Mistake("least_similar", "找成了最不像的",
                "余弦相似度越大越像：要取最大的（argmax），不是最小的。",
                "用 argmax（排除自己以后）。",
                (lambda vectors: _nearest(vectors, pick=np.argmin),)),
    ),
    hints=(
        "两步：每一行缩成长度 1（除以 np.linalg.norm(..., axis=1, keepdims=True)）；两两的余弦相似度就是 unit @ unit.T。",
        "自己和自己的相似度是 1，要先排除：np.fill_diagonal(cos, -np.inf)（cos 是新算出来的数组，可以改）。",
        "每一行最大的那一列：cos.argmax(axis=1)。",
    ),
)

EXERCISES = (MASKED_MEAN, MOST_SIMILAR)
