"""自测题库，第 7 章：复杂度。数值答案都由本包当场算出。

本模块只导入 ``question``（题的格式），以及算答案要用的 core、lessons。
"""

from __future__ import annotations

from ..core.attention import causal_mask
from ..lessons import costs
from .question import Question

__all__ = ["questions"]


def questions() -> list[Question]:
    """第 7 章的题。

    >>> qs = questions()
    >>> sorted({q.chapter for q in qs}), sum(q.from_seed for q in qs)
    ([7], 0)
    """
    ratio = costs.attention_multiply_adds(2048, 64) / costs.attention_multiply_adds(1024, 64)
    mib = costs.score_matrix_bytes(4096, "float32") / 2**20
    allowed = int(causal_mask(4).sum())
    return [
        Question(
            "ch7-double", 7, "动手算：一层要做多少次乘加", "计算题", "number",
            "d_k 不变，上下文从 1024 个词加到 2048 个词。注意力里打分和加权求和的乘加次数变成原来的几倍？",
            answer=float(ratio), tolerance=0.0, unit="倍",
            explain=f"2·T²·d：T 翻倍，T² 变成 {ratio:g} 倍。圆桌上人数翻倍，握手次数翻四倍。"),
        Question(
            "ch7-bytes", 7, "动手算：一层要做多少次乘加", "计算题", "number",
            "n = 4096 个词，一张 n × n 的注意力分数表用 float32（每个数 4 字节）存，要多少 MiB？（1 MiB = 2²⁰ 字节）",
            answer=float(mib), tolerance=0.0, unit="MiB",
            explain=f"4096² × 4 字节 = {costs.score_matrix_bytes(4096, 'float32')} 字节 = {mib:g} MiB；这还只是一个头、一层。"),
        Question(
            "ch7-kv-cache", 7, "动手算：KV 缓存，生成时不重算", "机制题", "choice",
            "一个字一个字生成时，KV 缓存存的是什么？",
            choices=("之前每个词的 K 和 V：新词只算自己的 q，再和缓存里的 K、V 算一行注意力",
                     "之前每个词的 Q", "整张 n × n 的注意力权重表"),
            why=("对。旧词的 K、V 不会变，存下来就不必重算；分数表只新增最后一行。",
                 "不对。旧词的查询以后再也用不到——新的一行只需要新词自己的 q。",
                 "不对。缓存的是 K、V，不是整张表；权重表每次只新增一行，用完就可以丢。"),
            correct=0),
        Question(
            "ch7-online", 7, "动手算：在线 softmax，不存整张表也能算对", "易错题", "choice",
            "分块注意力（tiled attention）一块一块地读键和值，不存整张分数表。它的结果和普通注意力相比如何？",
            choices=("只是近似，块越小越不准", "完全一样（只差浮点舍入）：在线 softmax 边走边把旧的部分和“打折换算”",
                     "只有因果掩码时才一样"),
            why=("不对。分块注意力是精确算法，不是近似。", "对。它省的是内存，不是精度。",
                 "不对。有没有掩码，结果都和普通注意力一样。"),
            correct=1),
        Question(
            "ch7-causal", 7, "动手算：KV 缓存，生成时不重算", "计算题", "number",
            "4 个词的因果掩码（每个词只能看自己和前面的词）里，一共有多少格是“允许看”的？",
            answer=float(allowed), tolerance=0.0, unit="格",
            explain=f"1 + 2 + 3 + 4 = {allowed}：下三角连同对角线。对角线以上的格子在 softmax 之前被设成 −∞，权重为 0。"),
    ]
