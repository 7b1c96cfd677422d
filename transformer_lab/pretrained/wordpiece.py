"""BERT 的分词器 (tokenizer)：先粗切成“词”，再把每个词切成词表里有的小块 (WordPiece)。

两步（与 BERT 原版 ``BasicTokenizer`` + ``WordpieceTokenizer``、uncased 的设置相同）::

    1. 粗切 (basic tokenization)
       清理：去掉控制字符，各种空白都当空格；每个汉字（CJK 统一表意文字）前后加空格，单独成词；
       转小写 (lower-casing)，去掉重音 (accent stripping：café → cafe)；按空格切开，再把每个标点单独切出来。
    2. WordPiece：对每个词从左往右，每次取词表里能找到的**最长**前缀 (greedy longest-match)；
       不是词首的小块前面加 "##"（playing → play ##ing）。有一段怎么也找不到，整个词记作 [UNK]。

最后在句首加 [CLS]、句尾加 [SEP]。文本里原样写出的特殊词元（"[SEP]"、"[MASK]" 这样，大小写也一样）
不拆开，直接当那个特殊词元。本模块只依赖标准库。
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

__all__ = ["WordPiece", "basic_tokenize", "is_cjk", "is_punctuation"]

# CJK 统一表意文字的码位区间（与 BERT 原版 _is_chinese_char 相同）：每个字单独成词
_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
        (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def is_cjk(ch: str) -> bool:
    """``ch`` 是不是汉字（CJK 统一表意文字；不含假名、谚文和全角标点）。"""
    cp = ord(ch)
    return any(low <= cp <= high for low, high in _CJK)


def is_punctuation(ch: str) -> bool:
    """标点：Unicode 类别以 P 开头的字符，再加上 ASCII 里所有非字母数字的可见符号（$、+、^、` 等也算）。"""
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_control(ch: str) -> bool:
    return ch not in "\t\n\r" and unicodedata.category(ch) in ("Cc", "Cf")


def _clean(text: str) -> str:
    """去掉空字符、替换字符 U+FFFD 和控制字符；各种空白（含全角空格）都换成普通空格；汉字前后加空格。"""
    out = []
    for ch in text:
        if ch in ("\x00", "\ufffd") or _is_control(ch):
            continue
        if ch in " \t\n\r" or unicodedata.category(ch) == "Zs":
            out.append(" ")
        elif is_cjk(ch):
            out.append(f" {ch} ")
        else:
            out.append(ch)
    return "".join(out)


def _strip_accents(word: str) -> str:
    """é = e + 组合重音符（NFD 分解后）；去掉所有组合符号 (Mn 类)。"""
    return "".join(ch for ch in unicodedata.normalize("NFD", word) if unicodedata.category(ch) != "Mn")


def _split_punctuation(word: str) -> list[str]:
    """把标点单独切出来："didn't" → ["didn", "'", "t"]。"""
    pieces, current = [], ""
    for ch in word:
        if is_punctuation(ch):
            pieces += [current, ch] if current else [ch]
            current = ""
        else:
            current += ch
    return pieces + [current] if current else pieces


def basic_tokenize(text: str, lowercase: bool = True) -> list[str]:
    """第 1 步粗切：清理、汉字单独成词、小写并去重音、按空格和标点切开。

    Examples
    --------
    >>> basic_tokenize("The café didn't 过马路!")
    ['the', 'cafe', 'didn', "'", 't', '过', '马', '路', '!']
    """
    words = []
    for word in _clean(text).split():
        if lowercase:  # 逐个字符转小写：词尾的 Σ 也是 σ（整词的 str.lower() 会把它变成 ς）
            word = _strip_accents("".join(ch.lower() for ch in word))
        words += _split_punctuation(word)
    return words


class WordPiece:
    """WordPiece 分词器：词表 ``vocab``（第 i 行是编号 i 的词元）加上上面的粗切。

    Parameters
    ----------
    vocab : sequence of str
        词表，按编号排列（BERT 的 vocab.txt，每行一个）。必须含 [CLS]、[SEP]、[UNK]。
    lowercase : bool, default True
        uncased 模型（例如 all-MiniLM-L6-v2）先转小写、去重音。
    max_chars : int, default 100
        比这还长的“词”直接记作 [UNK]（BERT 原版的设置）。

    Examples
    --------
    >>> tok = WordPiece(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "play", "##ing", "##ed", "the", "."])
    >>> tok.tokenize("The playing played, playz.")     # "," 不在词表里；playz 切到 ##z 就切不动了
    ['[CLS]', 'the', 'play', '##ing', 'play', '##ed', '[UNK]', '[UNK]', '.', '[SEP]']
    """

    def __init__(self, vocab: Sequence[str], lowercase: bool = True, max_chars: int = 100) -> None:
        if not isinstance(vocab, Sequence) or isinstance(vocab, str) or not all(isinstance(t, str) for t in vocab):
            raise TypeError(f"vocab 必须是字符串的列表（按编号排列的词表），收到的是 {type(vocab).__name__}。")
        self.vocab = tuple(vocab)
        self.ids = {token: i for i, token in enumerate(self.vocab)}
        missing = [t for t in ("[CLS]", "[SEP]", "[UNK]") if t not in self.ids]
        if missing:
            raise ValueError(f"vocab 里缺少特殊词元 {'、'.join(missing)}：BERT 的词表必须有 [CLS]、[SEP]、[UNK]。")
        self.lowercase, self.max_chars = lowercase, max_chars
        self.cls, self.sep, self.unk = "[CLS]", "[SEP]", "[UNK]"
        specials = [t for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]") if t in self.ids]
        self._specials = re.compile("(" + "|".join(re.escape(t) for t in specials) + ")")

    def split_word(self, word: str) -> list[str]:
        """第 2 步：一个词按“最长匹配”切成词表里的小块；切不动时整个词是 [UNK]。"""
        if len(word) > self.max_chars:
            return [self.unk]
        pieces, start = [], 0
        while start < len(word):
            for end in range(len(word), start, -1):  # 从最长的前缀试起
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.ids:
                    break
            else:
                return [self.unk]  # 没有一个前缀在词表里
            pieces.append(piece)
            start = end
        return pieces

    def tokenize(self, text: str) -> list[str]:
        """整句分词：[CLS] + 每个词的 WordPiece 小块 + [SEP]。"""
        if not isinstance(text, str):
            raise TypeError(f"text 必须是字符串，收到的是 {type(text).__name__}。")
        tokens = []
        for i, part in enumerate(self._specials.split(text)):  # 奇数位置是文本里原样写出的特殊词元
            tokens += [part] if i % 2 else [p for w in basic_tokenize(part, self.lowercase) for p in self.split_word(w)]
        return [self.cls, *tokens, self.sep]

    def token_ids(self, text: str) -> list[int]:
        """整句分词后的编号。"""
        return [self.ids[t] for t in self.tokenize(text)]
