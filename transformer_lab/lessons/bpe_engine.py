"""第 11 章 BPE 的"快"的那一半（``bpe.train`` 和 ``bpe.encode`` 用它）：字节排成链表，合并只改动被换掉的那几处。

``learn_merges``：训练。记住每一对出现在哪些位置（``PairIndex``），合并一处只更新它左右两对的计数（增量计数），
用堆 (heap) 按"次数多、一样多时在当前序列里最早出现"取下一对——和每一步从头重数、按文字顺序填字典再取 ``max``
的朴素写法（minbpe 的规则）结果完全相同，但不必每步把整本语料数一遍。位置用原来字节的下标：合并后的词元留在
它左边那个字节的位置上，所以下标的大小就是在当前序列里的先后。

``apply_merges``：编码。堆里放 (名次, 位置)：总是先合并名次最小的一对、同一名次从左往右；新词元组成的对名次更大，
不会回头。输入检查在 ``bpe`` 的公开函数里做，这里只收已经检查过的字节块和合并规则。本模块只用标准库。
"""

from __future__ import annotations

import heapq
from collections import defaultdict

__all__ = ["learn_merges", "apply_merges", "PairIndex", "linked", "join"]

Pair = tuple[int, int]


def linked(chunks: list[bytes]) -> tuple[list[int], list[int], list[int]]:
    """所有块的字节排成一串，每个位置记住它的值、下一个和上一个位置（-1 表示块的边界）。"""
    vals, nxt, prv = [], [], []
    for chunk in chunks:
        start = len(vals)
        vals += chunk
        nxt += range(start + 1, start + len(chunk) + 1)
        prv += range(start - 1, start + len(chunk) - 1)
        if chunk:
            nxt[-1], prv[start] = -1, -1
    return vals, nxt, prv


def join(vals: list[int], nxt: list[int], prv: list[int], i: int, new_id: int) -> Pair:
    """把位置 i 和它的下一个合成 ``new_id``（留在位置 i），返回 (上一个位置, 新的下一个位置)。"""
    j = nxt[i]
    n = nxt[j]
    vals[i], vals[j] = new_id, -1  # -1：这个位置已经并进左边了
    nxt[i] = n
    if n >= 0:
        prv[n] = i
    return prv[i], n


class PairIndex:
    """增量计数：每一对 → 它出现的位置（左边那个词元的位置），以及一个按 (−次数, 最早位置, 对) 排的堆。

    堆里的记录可能过时（那一对后来变了）：每次变化都压入一条新记录，取出时只认和现状一致的那条。
    """

    def __init__(self, vals: list[int], nxt: list[int]):
        self.where: dict[Pair, set[int]] = defaultdict(set)
        self.firsts: dict[Pair, list[int]] = defaultdict(list)  # 位置的小根堆（可能有已经不在的位置）
        self.touched: set[Pair] = set()
        for i, j in enumerate(nxt):
            if j >= 0:
                self.add((vals[i], vals[j]), i)
        self.queue = [self.record(pair) for pair in self.where]
        heapq.heapify(self.queue)
        self.touched.clear()

    def add(self, pair: Pair, pos: int) -> None:
        self.where[pair].add(pos)
        heapq.heappush(self.firsts[pair], pos)
        self.touched.add(pair)

    def drop(self, pair: Pair, pos: int) -> None:
        self.where[pair].discard(pos)
        self.touched.add(pair)

    def record(self, pair: Pair) -> tuple[int, int, Pair]:
        heap = self.firsts[pair]
        while heap[0] not in self.where[pair]:  # 丢掉堆顶已经不在的位置
            heapq.heappop(heap)
        return -len(self.where[pair]), heap[0], pair

    def most_frequent(self) -> Pair | None:
        """次数最多、一样多时在当前序列里最早出现的一对；没有哪一对出现 2 次以上时返回 None。"""
        while self.queue:
            entry = heapq.heappop(self.queue)
            if self.where.get(entry[2]) and self.record(entry[2]) == entry:
                return entry[2] if -entry[0] >= 2 else None
        return None

    def take(self, pair: Pair) -> list[int]:
        """要合并的这一对的所有位置，从左往右；它从表里删掉（合并之后它不会再出现）。"""
        del self.firsts[pair]
        return sorted(self.where.pop(pair))

    def requeue(self) -> None:
        """这一步里变过的每一对压入一条新记录；没有位置了的删掉。"""
        for pair in self.touched:
            if self.where.get(pair):
                heapq.heappush(self.queue, self.record(pair))
            else:
                self.where.pop(pair, None)
                self.firsts.pop(pair, None)
        self.touched.clear()


def learn_merges(chunks: list[bytes], num_merges: int) -> list[Pair]:
    """在几块字节上学 ``num_merges`` 条合并规则（合并不跨块；没有哪一对出现 2 次以上就提前停下）。"""
    vals, nxt, prv = linked(chunks)
    pairs = PairIndex(vals, nxt)
    merges: list[Pair] = []
    while len(merges) < num_merges and (pair := pairs.most_frequent()) is not None:
        new_id, (a, b) = 256 + len(merges), pair
        merges.append(pair)
        for i in pairs.take(pair):  # 从左往右，不重叠
            if vals[i] != a or nxt[i] < 0 or vals[nxt[i]] != b:
                continue  # "aaa" 里第二个 (a, a)：它左边的 a 已经并进前一个新词元了
            p, j, n = prv[i], nxt[i], nxt[nxt[i]]
            if p >= 0:  # 左邻居：(p, a) 变成 (p, 新)，位置还是 p
                pairs.drop((vals[p], a), p)
                pairs.add((vals[p], new_id), p)
            if n >= 0:  # 右邻居：(b, n) 在位置 j，变成 (新, n) 在位置 i
                pairs.drop((b, vals[n]), j)
                pairs.add((new_id, vals[n]), i)
            join(vals, nxt, prv, i, new_id)
        pairs.requeue()
    return merges


def apply_merges(chunks: list[bytes], merges: list[Pair]) -> list[int]:
    """按名次重放合并：总是先合并名次最小的一对，同一名次从左往右（堆里的记录按 (名次, 位置) 排）。"""
    rank = {pair: k for k, pair in enumerate(merges)}
    vals, nxt, prv = linked(chunks)
    queue = [(rank[(vals[i], vals[j])], i) for i, j in enumerate(nxt) if j >= 0 and (vals[i], vals[j]) in rank]
    heapq.heapify(queue)
    while queue:
        k, i = heapq.heappop(queue)
        a, b = merges[k]
        if vals[i] != a or nxt[i] < 0 or vals[nxt[i]] != b:
            continue  # 这一处已经被别的合并改掉了
        p, n = join(vals, nxt, prv, i, 256 + k)  # 新对里有 256 + k，名次一定比 k 大：不会回头
        if p >= 0 and (vals[p], 256 + k) in rank:
            heapq.heappush(queue, (rank[(vals[p], 256 + k)], p))
        if n >= 0 and (256 + k, vals[n]) in rank:
            heapq.heappush(queue, (rank[(256 + k, vals[n])], i))
    return [v for v in vals if v >= 0]


