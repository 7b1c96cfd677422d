"""自测题库，第 12 章：一个真正预训练过的 GPT——分组查询注意力让 KV 缓存变小、RMSNorm 和 LayerNorm 的关系、
权重共享省下的参数、一次只写一个词元、温度和“对不对”、为什么它写不出中文。数值答案都由本包当场算出
（``lessons.costs``、``core.rms_norm``、``core.layer_norm``）。

本模块只导入 ``question``（题的格式），以及算答案要用的 core、lessons。
"""

from __future__ import annotations

import numpy as np

from ..core.layer_norm import layer_norm
from ..core.rms_norm import rms_norm
from ..lessons import costs
from .question import Question

__all__ = ["questions", "SMOLLM2"]

# SmolLM2-135M 的尺寸（第 12 章载入的那个模型；tests/quiz 里和真模型的 config 核对）
SMOLLM2 = {"vocab_size": 49152, "d_model": 576, "num_layers": 30, "num_heads": 9, "num_kv_heads": 3, "d_ff": 1536}


def questions() -> list[Question]:
    """第 12 章的题。

    >>> qs = questions()
    >>> sorted({q.chapter for q in qs}), len(qs)
    ([12], 6)
    """
    s = SMOLLM2
    d_k = s["d_model"] // s["num_heads"]
    per_token = int(costs.kv_cache_bytes(1, s["num_kv_heads"] * d_k, s["num_layers"]))
    tied = costs.decoder_parameters(**s)
    saved = costs.decoder_parameters(**s, tied=False)["output"]
    row = np.array([3.0, 4.0])
    first = float(rms_norm(row, np.ones(2), 1e-5)[0])
    centred = np.array([-1.0, 0.0, 2.0, -1.0])  # 均值 0：两种归一化处处相等，加 5 以后不等
    same = [bool(np.allclose(rms_norm(x, np.ones(4)), layer_norm(x, np.ones(4), np.zeros(4)))) for x in (centred, centred + 5)]
    return [
        Question(
            "ch12-gqa-cache", 12, "2017 年的 Transformer 和今天的 GPT", "计算题", "number",
            f"SmolLM2 有 {s['num_layers']} 层，每层 {s['num_heads']} 个查询头共用 {s['num_kv_heads']} 组键和值，"
            f"每个头 {d_k} 维。KV 缓存用 float32（每个数 4 字节），每多读一个词元要多存多少字节？",
            answer=float(per_token), tolerance=0.0, unit="字节",
            explain=f"k 和 v 各一份：2 × {s['num_layers']} 层 × {s['num_kv_heads']} 组 × {d_k} × 4 = {per_token}。"
                    f"要是 9 个头各有自己的 k、v，就是它的 3 倍：分组查询注意力让缓存小到三分之一。"),
        Question(
            "ch12-rmsnorm", 12, "2017 年的 Transformer 和今天的 GPT", "计算题", "number",
            "RMSNorm（权重全是 1，ε = 10⁻⁵）作用在 x = [3, 4] 上。结果的第一个数是多少？（保留三位小数）",
            answer=first, tolerance=6e-4,
            explain=f"均方 mean(x²) = (9 + 16) / 2 = 12.5，均方根 √12.5 ≈ 3.536，3 / 3.536 ≈ {first:.3f}。"
                    "不减均值：LayerNorm 会先减去均值 3.5，得到完全不同的数。"),
        Question(
            "ch12-rms-vs-ln", 12, "2017 年的 Transformer 和今天的 GPT", "机制题", "choice",
            "一行 x 的均值恰好是 0。RMSNorm（w = 1）和 LayerNorm（γ = 1、β = 0）的结果一样吗？",
            choices=("一样：RMSNorm 就是去掉“减均值”的 LayerNorm，均值是 0 时减不减都一样",
                     "不一样：RMSNorm 除以的是均方根，LayerNorm 除以的是标准差，两者总是不同",
                     "不一样：RMSNorm 还要再加上一个 β"),
            why=(f"对。均值 0 的一行 [-1, 0, 2, -1]：两者{'相等' if same[0] else '不等'}；每个数加 5 以后{'仍然相等' if same[1] else '就不等了'}。",
                 "不对。均值是 0 时，标准差 √(mean((x − 0)²)) 正好就是均方根。",
                 "不对。RMSNorm 只有一个权重 w，没有 β，参数比 LayerNorm 少一半。"),
            correct=0),
        Question(
            "ch12-tied", 12, "2017 年的 Transformer 和今天的 GPT", "计算题", "number",
            f"SmolLM2 的输出层和词嵌入表共用一张表（词表 {s['vocab_size']} 个词元，D = {s['d_model']}）。"
            "和另设一个输出矩阵比，省下多少个参数？",
            answer=float(saved), tolerance=0.0, unit="个",
            explain=f"{s['vocab_size']} × {s['d_model']} = {saved}，约占整个模型（{tied['total']:,} 个参数）的 "
                    f"{saved / tied['total']:.0%}。"),
        Question(
            "ch12-temperature", 12, "常见误区", "易错题", "choice",
            "问 SmolLM2“The capital of France is”，把温度从 1 调到 2。会怎样？",
            choices=("它更有创意，也更可能答对",
                     "抽出的词元更分散，抽到 Paris 的机会却小得多：温度不添知识，只把同一组打分拉平",
                     "没有变化：温度只影响贪心解码"),
            why=("不对。本章在 1000 次抽样里数过：温度 1 时七百多次是 Paris，温度 2 时只有几十次。",
                 "对。温度越高，排名靠后的词元越容易被抽到；问事实时，多出来的“创意”大多是错的。",
                 "不对。贪心（温度 0）只取最大的；温度改变的正是采样时的概率。"),
            correct=1),
        Question(
            "ch12-chinese", 12, "中文：写得出字，写不出意思", "机制题", "choice",
            "SmolLM2 有一亿三千多万个参数，续写中文却不成意思；第 9 章只有 25 万多个参数的小 GPT 写出来的大多是汉字词语。为什么？",
            choices=("模型越大越难学中文",
                     "会什么取决于读过什么：SmolLM2 的训练文字几乎全是英文，词表里只有几十个含汉字的词元",
                     "因为本书的 NumPy 代码算错了中文"),
            why=("不对。大小决定能记住多少，不决定学什么语言。",
                 "对。词表是从训练文字里数出来的：80 个含汉字的词元，一个汉字要一两个词元；小 GPT 虽小，读的全是中文。",
                 "不对。本章把 30 层亲手算了一遍，和模型的打分一致；英文照样写得通顺。"),
            correct=1),
    ]
