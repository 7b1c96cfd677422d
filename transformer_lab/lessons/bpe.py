"""第 11 章：字节级 BPE (byte-level byte pair encoding)——从 UTF-8 字节出发，一次次把最常见的相邻一对合成新词元。

文字先变成 UTF-8 字节（编号 0–255：一个汉字 3 个字节，一个 emoji 4 个），所以词表从不缺字、没有 ``[UNK]``。
训练 (``train``) 反复数出相邻的每一对 (``pair_counts``)，把最多的那一对换成新编号 ``256 + k`` (``merge``)；编码
(``encode``) 按先后（名次 rank）重放这些合并；解码 (``decode``) 把编号展开成字节 (``vocab``)，按 UTF-8 读回文字。
规则和 minbpe 的基础分词器一样：数对和 ``zip(ids, ids[1:])`` 一样（"aaa" 里 (a, a) 算 2 次）；一样多时选**当前
序列里最早出现**的一对（按文字顺序填的字典做 ``max(counts, key=counts.get)``）；替换从左往右、不重叠；没有哪一对
出现 2 次以上就提前停下。``split=True`` 时先用 GPT-2 式的正则 (``pre_split``) 切块，合并不跨块。

``train`` 不每步从头重数：它记住每一对出现的位置，合并时只更新被换掉的几处左右的计数（增量计数，见
``bpe_engine``）；测试拿每步重数的朴素写法逐条核对。
"""

from __future__ import annotations

import numbers
import re
from collections import Counter

import numpy as np

from .. import _validation as check
from .bpe_engine import apply_merges, learn_merges

__all__ = ["train", "encode", "decode", "pair_counts", "merge", "vocab", "pre_split", "token_strings",
           "readable_bytes", "GPT2_SPLIT"]

# GPT-2 的切分正则，换成 Python 标准库 re 的写法：\p{L}（字母）→ [^\W\d_]，\p{N}（数字）→ \d，
# 其余的非空白 → [^\s\w] 或下划线。汉字也是"字母"：一整串没有空格的中文是一块。
GPT2_SPLIT = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+""")


# ---------------------------------------------------------------- 检查输入


def _utf8(text: object, name: str) -> bytes:
    """文字 → UTF-8 字节；单独的代理项 (lone surrogate) 不是完整的字符，没有 UTF-8 编码，报中文错。"""
    if not isinstance(text, str):
        raise TypeError(f"{name} 必须是字符串，收到的是 {check.describe(text)}。")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise ValueError(f"{name} 的第 {err.start} 个字符 U+{ord(text[err.start]):04X} 是单独的代理项 (lone surrogate)，"
                         "不是完整的 Unicode 字符，没有 UTF-8 编码。提示：它多半来自被截断的 emoji 或错误的解码，"
                         "先把它删掉或换成完整的字符。") from None


def _is_int(x: object) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, (bool, np.bool_))


def _checked_merges(merges: object) -> list[tuple[int, int]]:
    """合并规则：(左, 右) 整数对的列表；第 k 条只能用已经有的编号（0 … 255 + k），不许重复。"""
    if not isinstance(merges, (list, tuple)):
        raise TypeError(f"merges 必须是 (左, 右) 整数对的列表（train 的返回值），收到的是 {check.describe(merges)}。")
    seen: dict[tuple[int, int], int] = {}
    for k, pair in enumerate(merges):
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2 and all(_is_int(x) for x in pair)):
            raise TypeError(f"merges 的第 {k} 条必须是两个整数组成的一对，例如 (101, 32)，收到的是 {pair!r}。")
        pair = (int(pair[0]), int(pair[1]))
        if not all(0 <= x < 256 + k for x in pair):
            raise ValueError(f"merges 的第 {k} 条 {pair} 用了还没有的编号：第 {k} 条合并只能用 0 … {255 + k}"
                             f"（256 个字节加上前 {k} 条合并出来的新词元）。")
        if pair in seen:
            raise ValueError(f"merges 的第 {k} 条 {pair} 和第 {seen[pair]} 条重复了：同一对只能合并一次。")
        seen[pair] = k
    return list(seen)


def _checked_ids(ids: object, name: str, vocab_size: int | None) -> list[int]:
    """词元编号：整数的列表、元组或一维整数数组；给了 ``vocab_size`` 时每个在 [0, vocab_size) 之内。"""
    if isinstance(ids, np.ndarray):
        if ids.ndim != 1 or ids.dtype.kind not in "iu":
            raise TypeError(f"{name} 必须是一维的整数编号，收到的是 {check.describe(ids)}。")
        ids = ids.tolist()
    if not isinstance(ids, (list, tuple)) or not all(_is_int(i) for i in ids):
        raise TypeError(f"{name} 必须是整数编号的列表，收到的是 {check.describe(ids)}。")
    for pos, i in enumerate(ids if vocab_size is not None else ()):
        if not 0 <= i < vocab_size:
            raise ValueError(f"{name} 的第 {pos} 个编号 {i} 越界：这份词表有 256 + {vocab_size - 256} = {vocab_size} "
                             f"个词元，编号应在 [0, {vocab_size - 1}] 之内。")
    return [int(i) for i in ids]


def _chunks(text: object, name: str, split: object) -> list[bytes]:
    """要训练或编码的几块 UTF-8 字节：整段文字一块，或 ``split=True`` 时 ``pre_split`` 切出的每一块。"""
    whole = _utf8(text, name)
    if not check.boolean(split, "split"):
        return [whole]
    return [chunk.encode("utf-8") for chunk in pre_split(text)]


# ---------------------------------------------------------------- 小帮手（第 11 章的动手算和练习用）


def pair_counts(ids: list[int]) -> dict[tuple[int, int], int]:
    """相邻的每一对出现几次，和 ``zip(ids, ids[1:])`` 数的一样（"aaa" 里 (a, a) 算 2 次）。

    字典按每一对**第一次出现**的先后排列，所以 ``max(counts, key=counts.get)`` 在一样多时取最早出现的那一对。

    Raises
    ------
    TypeError
        ``ids`` 不是整数的列表（或一维整数数组）。

    Examples
    --------
    >>> pair_counts([97, 97, 97, 98])            # "aaab"：(a, a) 两次，(a, b) 一次
    {(97, 97): 2, (97, 98): 1}
    """
    ids = _checked_ids(ids, "ids", None)
    return dict(Counter(zip(ids, ids[1:])))  # Counter 也按第一次出现的先后排


def merge(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """一次合并：从左往右，把每个不重叠的 ``pair`` 换成 ``new_id``，返回新的列表（不改 ``ids``）。

    Raises
    ------
    TypeError
        ``ids`` 不是整数的列表，``pair`` 不是两个整数，或 ``new_id`` 不是整数。

    Examples
    --------
    >>> merge([97, 97, 97, 97, 98], (97, 97), 256)   # "aaaab"：前两个 a 合并后，第 2 个 a 不再和第 3 个配对
    [256, 256, 98]
    """
    ids = _checked_ids(ids, "ids", None)
    if not (isinstance(pair, (list, tuple)) and len(pair) == 2 and all(_is_int(x) for x in pair)):
        raise TypeError(f"pair 必须是两个整数组成的一对，例如 (97, 97)，收到的是 {pair!r}。")
    if not _is_int(new_id):
        raise TypeError(f"new_id 必须是整数，收到的是 {check.describe(new_id)}。")
    a, b = pair
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == a and ids[i + 1] == b:
            out.append(int(new_id))
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def vocab(merges: list[tuple[int, int]]) -> dict[int, bytes]:
    """每个编号代表的字节：0–255 是单个字节，第 k 条合并的 ``256 + k`` 是它左右两个词元的字节接起来。

    Raises
    ------
    TypeError, ValueError
        ``merges`` 不是合法的合并规则（不是整数对、用了还没有的编号、有重复）。

    Examples
    --------
    >>> table = vocab([(97, 97), (256, 98)])
    >>> table[97], table[256], table[257], len(table)
    (b'a', b'aa', b'aab', 258)
    """
    table = {i: bytes([i]) for i in range(256)}
    for k, (a, b) in enumerate(_checked_merges(merges)):
        table[256 + k] = table[a] + table[b]
    return table


def pre_split(text: str) -> list[str]:
    """GPT-2 式的预切分：按 ``GPT2_SPLIT`` 把文字切成英文缩写、（带一个前导空格的）词、数字、标点和空白，
    接起来正好是原文。没有空格的中文整串是一块（汉字也算"字母"），中文标点自成一块。

    Raises
    ------
    TypeError
        ``text`` 不是字符串。

    Examples
    --------
    >>> pre_split("I've 2 cats.")
    ['I', "'ve", ' 2', ' cats', '.']
    >>> pre_split("注意力很重要，对吧")
    ['注意力很重要', '，', '对吧']
    """
    if not isinstance(text, str):
        raise TypeError(f"text 必须是字符串，收到的是 {check.describe(text)}。")
    return GPT2_SPLIT.findall(text)


def readable_bytes(data: bytes) -> str:
    """把一个词元的字节写成看得见的样子：完整的 UTF-8 字符照原样，不成字符的字节（半个汉字）和控制字符写成
    ``<e6>`` 这样的十六进制。

    Raises
    ------
    TypeError
        ``data`` 不是 bytes。

    Examples
    --------
    >>> readable_bytes("注意".encode("utf-8")[:4]), readable_bytes(b"a\\n")
    ('注<e6>', 'a<0a>')
    """
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"data 必须是 bytes，收到的是 {check.describe(data)}。")
    text = bytes(data).decode("utf-8", errors="surrogateescape")  # 不成字符的字节 → U+DC80…U+DCFF
    return "".join(f"<{ord(c) - 0xDC00:02x}>" if 0xDC80 <= ord(c) <= 0xDCFF
                   else f"<{ord(c):02x}>" if ord(c) < 0x20 or ord(c) == 0x7F else c for c in text)


# ---------------------------------------------------------------- 训练、编码、解码


def train(text: str, num_merges: int, *, split: bool = False) -> list[tuple[int, int]]:
    """在 ``text`` 上训练字节级 BPE，返回最多 ``num_merges`` 条合并规则：第 k 条 (左, 右) 合成编号 ``256 + k``。

    每一步合并出现最多的相邻一对（一样多时取当前序列里最早出现的），没有哪一对出现 2 次以上就提前停下。
    ``split=True`` 时先 ``pre_split``，合并不跨块。

    Raises
    ------
    TypeError
        ``text`` 不是字符串、``num_merges`` 不是整数，或 ``split`` 不是 bool。
    ValueError
        ``text`` 里有单独的代理项，或 ``num_merges`` 是负数。

    Examples
    --------
    维基百科的例子 "aaabdaaabac"：aa 出现 4 次，先合成 256；之后 (256, a) 和 (a, b) 都是 2 次，
    (256, a) 在 "Zabd…" 里先出现（维基百科选的是 ab，本书和 minbpe 按最早出现选）：

    >>> merges = train("aaabdaaabac", 10)
    >>> merges
    [(97, 97), (256, 97), (257, 98)]
    >>> encode("aaabdaaabac", merges)             # 11 个字节 → 5 个词元
    [258, 100, 258, 97, 99]
    """
    chunks = _chunks(text, "text", split)
    num_merges = check.nonnegative_int(num_merges, "num_merges")
    return learn_merges(chunks, num_merges)


def encode(text: str, merges: list[tuple[int, int]], *, split: bool = False) -> list[int]:
    """把 ``text`` 编码成词元编号：从 UTF-8 字节出发，反复合并当前出现的名次最小（最早学到）的一对，
    每次把它所有的出现从左往右换掉。``split=True`` 时先 ``pre_split``，合并不跨块（训练时怎么切，编码时也怎么切）。

    Raises
    ------
    TypeError
        ``text`` 不是字符串、``merges`` 不是整数对的列表，或 ``split`` 不是 bool。
    ValueError
        ``text`` 里有单独的代理项，或 ``merges`` 用了还没有的编号、有重复。

    Examples
    --------
    >>> merges = train("注意力注意", 10)       # 每个汉字 3 个字节；"注意" 的 6 个字节合了 5 次
    >>> len(merges), encode("注意力注意", merges)
    (5, [260, 229, 138, 155, 260])
    >>> token_strings("注意力注意", merges)     # "力" 只出现一次，还是 3 个字节
    ['注意', '<e5>', '<8a>', '<9b>', '注意']
    """
    merges = _checked_merges(merges)
    return apply_merges(_chunks(text, "text", split), merges)


def decode(ids: list[int], merges: list[tuple[int, int]], *, errors: str = "strict") -> str:
    """把词元编号解码回文字：每个编号展开成它代表的字节，接起来按 UTF-8 读。``decode(encode(s, m), m) == s``。

    编号串如果在半个字符处断开（例如只有 "注" 的前两个字节），默认报错；``errors="replace"`` 时那几个字节换成 �。

    Raises
    ------
    TypeError
        ``ids`` 不是整数编号的列表，或 ``merges`` 不是整数对的列表。
    ValueError
        编号越界、``merges`` 不合法、``errors`` 不是 "strict" 或 "replace"，或（``errors="strict"`` 时）字节不是完整的 UTF-8。

    Examples
    --------
    >>> decode([258, 100, 258, 97, 99], [(97, 97), (256, 97), (257, 98)])
    'aaabdaaabac'
    >>> decode([230, 179], [], errors="replace")    # "注" 的前两个字节：不成字
    '�'
    """
    table = vocab(merges)
    ids = _checked_ids(ids, "ids", len(table))
    errors = check.one_of(errors, "errors", ("strict", "replace"))
    data = b"".join(table[i] for i in ids)
    try:
        return data.decode("utf-8", errors=errors)
    except UnicodeDecodeError as err:
        raise ValueError(f"ids 拼出的字节不是完整的 UTF-8：第 {err.start} 个字节起 {readable_bytes(data[err.start:err.end])} "
                         "不成字符（多半是一个汉字只取了前一两个字节）。提示：token_strings 或 readable_bytes 能把"
                         "半个字符显示成 <e6> 这样；或者用 errors=\"replace\"。") from None


def token_strings(text: str, merges: list[tuple[int, int]], *, split: bool = False) -> list[str]:
    """``text`` 编码后每个词元的样子（给人看的）：完整的字符照原样，半个字符的字节写成 ``<e6>``（见 ``readable_bytes``）。

    Raises
    ------
    TypeError, ValueError
        同 ``encode``。

    Examples
    --------
    >>> token_strings("aaab a", [(97, 97), (256, 97)])
    ['aaa', 'b', ' ', 'a']
    """
    merges = _checked_merges(merges)
    table = vocab(merges)
    return [readable_bytes(table[i]) for i in apply_merges(_chunks(text, "text", split), merges)]
