"""第 11 章的练习：BPE 的两块积木——数相邻的对（``pair_counts``）和做一次合并（``merge``）。

每个常见错误都附一份“错误的写法”，检查时在同样的输入上重算，读者的结果和它处处一样就报告这个错误。
参考答案和 ``tl.bpe.pair_counts``、``tl.bpe.merge`` 的规则相同（测试里逐个核对）。
"""

from __future__ import annotations

import numpy as np

from .checker import Case, Exercise, Mistake

__all__ = ["EXERCISES"]

AAAB = [97, 97, 97, 98]  # "aaab" 的字节
WIKI = list(b"aaabdaaabac")  # 维基百科的例子（本章手算的那一个）


# ---------------------------------------------------------------- 数相邻的对


def pair_counts(ids):
    counts = {}
    for pair in zip(ids, ids[1:]):                    # 相邻的每一对：(第 0 个, 第 1 个)、(第 1 个, 第 2 个) ……
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def _pairs_no_overlap(ids):
    """错：每一对像 str.count 那样不重叠地数（aaa 里的 (a, a) 只算 1 次）。"""
    counts = {}
    for pair in dict.fromkeys(zip(ids, ids[1:])):
        n, i = 0, 0
        while i + 1 < len(ids):
            if (ids[i], ids[i + 1]) == pair:
                n, i = n + 1, i + 2
            else:
                i += 1
        counts[pair] = n
    return counts


def _pair_cases(rng: np.random.Generator) -> list[Case]:
    return [
        Case("手算的例子：aaab（a a 这一对算 2 次）", (list(AAAB),)),
        Case("本章手算的 aaabdaaabac", (list(WIKI),)),
        Case("只有一个编号：没有相邻的对", ([42],)),
        Case("空列表", ([],)),
        Case("一长串一样的：aaaaaa", ([97] * 6,)),
        Case("随机的 40 个编号（0 到 5）", ([int(i) for i in rng.integers(0, 6, size=40)],)),
        Case("合并过的编号（大于 255）", ([256, 256, 100, 256, 97, 99],)),
    ]


PAIR_COUNTS = Exercise(
    name="pair_counts",
    chapter=11,
    signature="pair_counts(ids)",
    task="ids 是一串整数编号（Python 列表）。返回字典：相邻的每一对 (ids[i], ids[i + 1]) → 它出现的次数。"
         "重叠的也要数：[97, 97, 97] 里 (97, 97) 出现 2 次。",
    solution=pair_counts,
    cases=_pair_cases,
    mistakes=(
        Mistake("no_overlap", "重叠的对没有数",
                "数对和合并不一样：数的时候每个相邻的位置都算一次，aaa 里 (a, a) 有两处（第 0、1 个和第 1、2 个），"
                "算 2 次；只有合并时才从左往右、不重叠地换。",
                "用 zip(ids, ids[1:]) 逐个位置地数，不要跳过。",
                (_pairs_no_overlap,)),
        Mistake("presence_not_count", "只记了出现过，没有数次数",
                "BPE 要找出现**最多**的那一对，次数是关键；你的字典里每一对都是 1。",
                "counts[pair] = counts.get(pair, 0) + 1。",
                (lambda ids: {pair: 1 for pair in zip(ids, ids[1:])},)),
        Mistake("misses_last_pair", "漏了最后一对",
                "长度为 n 的列表有 n − 1 对相邻的：下标 i 从 0 到 n − 2。你的循环少走了一步。",
                "range(len(ids) - 1)，或者干脆 zip(ids, ids[1:])。",
                (lambda ids: pair_counts(ids[:-1]),)),
        Mistake("wraps_around", "把最后一个和第一个也算成了一对",
                "ids 是一串，不是一个圈：最后一个后面什么也没有。",
                "zip(ids, ids[1:])，不要 zip(ids, ids[1:] + ids[:1])。",
                (lambda ids: pair_counts(ids + ids[:1]) if len(ids) > 1 else {},)),
    ),
    hints=(
        "相邻的对就是 (ids[0], ids[1])、(ids[1], ids[2]) …… 一直到 (ids[-2], ids[-1])：zip(ids, ids[1:]) 正好给出它们。",
        "用一个字典计数：counts[pair] = counts.get(pair, 0) + 1。字典的键可以是元组 (a, b)。",
        "空列表和只有一个编号时没有相邻的对，应该返回空字典 {}——zip 自然就是这样。",
    ),
)


# ---------------------------------------------------------------- 合并一次


def merge(ids, pair, new_id):
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)                        # 找到这一对：换成新编号，跳过两个
            i += 2
        else:
            out.append(ids[i])                        # 不是：原样留下，往后走一个
            i += 1
    return out


def _merge_overlapping(ids, pair, new_id):
    """错：换完以后只往后走一个，同一个编号被用了两次。"""
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == tuple(pair):
            out.append(new_id)
        else:
            out.append(ids[i])
        i += 1
    return out


def _merge_drops_last(ids, pair, new_id):
    """错：循环只走到倒数第二个，最后一个编号（没有被合并时）丢了。"""
    out, i = [], 0
    while i < len(ids) - 1:
        if (ids[i], ids[i + 1]) == tuple(pair):
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def _merge_first_only(ids, pair, new_id):
    """错：只换了第一处。"""
    for i in range(len(ids) - 1):
        if (ids[i], ids[i + 1]) == tuple(pair):
            return ids[:i] + [new_id] + ids[i + 2:]
    return list(ids)


def _merge_from_right(ids, pair, new_id):
    """错：从右往左换（aaa 合并 (a, a) 得到 [a, 新]，应该是 [新, a]）。"""
    return merge(ids[::-1], (pair[1], pair[0]), new_id)[::-1]


def _merge_cases(rng: np.random.Generator) -> list[Case]:
    random_ids = [int(i) for i in rng.integers(0, 4, size=40)]
    return [
        Case("手算的例子：aaab 合并 (a, a)", (list(AAAB), (97, 97), 256)),
        Case("本章手算的第 1 次：aaabdaaabac 合并 (a, a)", (list(WIKI), (97, 97), 256)),
        Case("本章手算的第 2 次：合并 (256, a)", ([256, 97, 98, 100, 256, 97, 98, 97, 99], (256, 97), 257)),
        Case("这一对不在里面", ([1, 2, 3], (3, 1), 256)),
        Case("这一对在最后", ([5, 1, 2], (1, 2), 300)),
        Case("一串一样的：aaaaa 合并 (a, a)", ([97] * 5, (97, 97), 256)),
        Case("空列表", ([], (97, 97), 256)),
        Case("随机的 40 个编号（0 到 3），合并 (1, 2)", (random_ids, (1, 2), 256)),
    ]


MERGE = Exercise(
    name="merge",
    chapter=11,
    signature="merge(ids, pair, new_id)",
    task="ids 是一串整数编号（Python 列表），pair 是一对编号 (a, b)。从左往右，把每一处相邻的 a、b 换成一个 new_id，"
         "换过的编号不再参与下一对（不重叠），返回新的列表，不要改动 ids。",
    solution=merge,
    cases=_merge_cases,
    mistakes=(
        Mistake("overlapping", "换完只往后走了一步",
                "一个编号只能并进一个新词元：换掉 ids[i]、ids[i + 1] 之后，下一次要从 ids[i + 2] 看起。"
                "aaab 合并 (a, a) 应该得到 [新, a, b]，你的结果多出了词元。",
                "找到这一对时 i += 2，没找到时 i += 1。",
                (_merge_overlapping,)),
        Mistake("drops_last", "丢了最后一个编号",
                "循环只走到倒数第二个位置时，最后一个编号如果没有被合并，就再也没有机会放进结果。",
                "循环条件写 while i < len(ids)，判断这一对时再看 i + 1 < len(ids)。",
                (_merge_drops_last,)),
        Mistake("first_only", "只换了第一处",
                "BPE 每次合并要把这一对的**每一处**都换掉（从左往右，不重叠）；你只换了第一处。",
                "别在找到第一处时就 return：一直扫到末尾。",
                (_merge_first_only,)),
        Mistake("right_to_left", "从右往左换了",
                "有重叠时方向很要紧：aaa 合并 (a, a)，从左往右是 [新, a]，从右往左是 [a, 新]。"
                "BPE（和 tl.bpe）约定从左往右。",
                "i 从 0 开始往后走。",
                (_merge_from_right,)),
    ),
    hints=(
        "用一个下标 i 从左往右走，边走边往新列表 out 里放东西。",
        "如果 ids[i] 和 ids[i + 1] 正好是 pair，就放 new_id、i 加 2；否则放 ids[i]、i 加 1。",
        "别忘了 i + 1 < len(ids) 的检查：最后一个编号后面没有邻居，它原样放进去。",
    ),
)

EXERCISES = (PAIR_COUNTS, MERGE)
