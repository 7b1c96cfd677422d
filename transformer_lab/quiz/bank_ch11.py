"""自测题库，第 11 章：分词——UTF-8 字节、BPE 的合并和平手规则、词元数和 T² 的代价、嵌入表的大小、
分词器“偏向”哪种文字。数值答案都由本包当场算出（``lessons.bpe``）。

本模块只导入 ``question``（题的格式），以及算答案要用的 lessons。
"""

from __future__ import annotations

from ..lessons import bpe
from .question import Question

__all__ = ["questions", "HAND_TEXT"]

HAND_TEXT = "aaabdaaabac"  # 第 11 章“手算三次合并”的例子
TINY_D, BIG_VOCAB = 64, 4096  # 第 9 章小 GPT 的 D；本章最大的词表


def questions() -> list[Question]:
    """第 11 章的题。

    >>> qs = questions()
    >>> sorted({q.chapter for q in qs}), len(qs)
    ([11], 6)
    """
    zh_bytes = len(bpe.encode("注意力", []))
    hand = bpe.encode(HAND_TEXT, bpe.train(HAND_TEXT, 3))
    first = bpe.pair_counts(list(b"aaaa"))[(97, 97)]
    return [
        Question(
            "ch11-utf8", 11, "从字到字节：UTF-8", "计算题", "number",
            "“注意力”三个字写成 UTF-8，一共几个字节？",
            answer=float(zh_bytes), tolerance=0.0,
            explain=f"常用汉字每个 3 个字节：3 × 3 = {zh_bytes}。英文字母 1 个字节，emoji 4 个。"),
        Question(
            "ch11-pairs", 11, "手算三次合并", "计算题", "number",
            "BPE 数相邻的对时，和 zip(ids, ids[1:]) 数的一样。“aaaa”里 a a 这一对算几次？",
            answer=float(first), tolerance=0.0,
            explain=f"相邻的位置有 (1, 2)、(2, 3)、(3, 4) 三处都是 a a，所以算 {first} 次。"
                    "合并时却是从左往右、不重叠地换：aaaa 只换出 2 个新词元。"),
        Question(
            "ch11-three-merges", 11, "手算三次合并", "计算题", "number",
            f"在 {HAND_TEXT}（11 个字节）上做三次 BPE 合并（一样多时取最早出现的一对）。最后剩几个词元？",
            answer=float(len(hand)), tolerance=0.0,
            explain=f"aa → Z：ZabdZabac；Za 和 ab 都是 2 次，Za 先出现 → Y：YbdYbac；Yb → X：XdXac，"
                    f"一共 {len(hand)} 个词元。"),
        Question(
            "ch11-unk", 11, "从字到字节：UTF-8", "机制题", "choice",
            "为什么从 256 个字节出发的 BPE 词表永远不会遇到 [UNK]，而第 10 章的 WordPiece 会？",
            choices=("因为 BPE 的词表比 WordPiece 的大",
                     "因为任何文字写成 UTF-8 都只是 0 到 255 之间的数：字节词表全都认识，最坏一个字节一个词元",
                     "因为 BPE 训练时见过世界上所有的字"),
            why=("不对。本章的 BPE 词表只有一千到四千个词元，比 MiniLM 的三万个小得多，照样没有 [UNK]。",
                 "对。WordPiece 从“字”出发，词表里没有的字只能记成 [UNK]；字节词表从更小的单位出发，什么都拼得出来。",
                 "不对。训练文字里没出现过的字（例如“龘”）照样能编码：它就停在字节那一层，多占几个词元。"),
            correct=1),
        Question(
            "ch11-cheaper", 11, "常见误区", "易错题", "choice",
            "同样意思的一句话，中文要的词元比英文少还是多？",
            choices=("总是更少：一个汉字的意思比一个英文字母多",
                     "总是更多：一个汉字要 3 个字节",
                     "看分词器：它读什么文字学出来，就把什么文字切得省"),
            why=("不对。主要读英文的分词器（第 11 章量过 SmolLM2 的）切中文，一个字要一个多词元，比同样意思的英文多。",
                 "不对。字节只是起点；在中文上训练的 BPE 一个字常常不到 1 个词元。",
                 "对。第 11 章量过：本书的 BPE（读的是中文）中文只要英文的三分之一；多语言的 e5 两边差不多；"
                 "主要读英文的 SmolLM2 中文要英文的两倍多。"),
            correct=2),
        Question(
            "ch11-embedding", 11, "嵌入表有多大", "计算题", "number",
            f"第 9 章的小 GPT（D = {TINY_D}）换成 {BIG_VOCAB} 个词元的词表。只算嵌入表（每个词元一行、D 个数），有多少个数？",
            answer=float(BIG_VOCAB * TINY_D), tolerance=0.0,
            explain=f"{BIG_VOCAB} × {TINY_D} = {BIG_VOCAB * TINY_D}。输出层还要一个 D × |V| 的矩阵和 |V| 个偏置："
                    "词表的代价要算两遍。"),
    ]
