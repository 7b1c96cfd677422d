"""BERT 的分词器 (tokenizer)：先粗切成“词”，再把每个词切成词表里有的小块 (WordPiece)。

两步（与 BERT 原版 ``BasicTokenizer`` + ``WordpieceTokenizer``、uncased 的设置相同）::

    1. 粗切 (basic tokenization)
       清理：去掉控制字符（Unicode 类别以 C 开头的都算，见下），各种空白都当空格；每个汉字（CJK 统一表意文字）前后加空格，单独成词；
       转小写 (lower-casing)，去掉重音 (accent stripping：café → cafe)；按空格切开，再把每个标点单独切出来。
    2. WordPiece：对每个词从左往右，每次取词表里能找到的**最长**前缀 (greedy longest-match)；
       不是词首的小块前面加 "##"（playing → play ##ing）。有一段怎么也找不到，整个词记作 [UNK]。

最后在句首加 [CLS]、句尾加 [SEP]。文本里原样写出的特殊词元（"[SEP]"、"[MASK]" 这样，大小写也一样）
不拆开，直接当那个特殊词元。

清理时去掉的字符与 Hugging Face ``transformers`` 的 ``BasicTokenizer._clean_text`` / ``_is_control`` 相同
（也就是 wheel 里 ``tokenizer.json`` 的 ``BertNormalizer``）：空字符 U+0000、替换字符 U+FFFD，以及除了 \t \n \r
以外所有类别以 C 开头的字符——控制字符 Cc、格式字符 Cf（零宽空格 U+200B……）、私用区 Co（U+E000……，字体里
自造的图标）、未分配的码位 Cn（哪些码位“未分配”取决于 Python 自带的 Unicode 版本）。留着它们就悄悄改变了
模型的输入：一个私用字符会让整个词变成 [UNK]。孤立的代理码位 Cs（"\ud800"）不是真正的字符，连 UTF-8 都编不出，
这里直接报错（``check_text``），而不是悄悄删掉。

本模块只依赖标准库和本包的参数检查。
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import numpy as np

from .. import _validation as check

__all__ = ["WordPiece", "basic_tokenize", "check_text", "is_cjk", "is_punctuation"]

# CJK 统一表意文字的码位区间（与 BERT 原版 _is_chinese_char 相同）：每个字单独成词
_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
        (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def check_text(text: object, name: str) -> str:
    """分词器收到的一段文字：必须是字符串，而且不含孤立的代理码位 (lone surrogate，U+D800–U+DFFF)。

    ``"\ud800"`` 这样的字符串 Python 允许存在，但它不是一个真正的字符（是半个 UTF-16 的 emoji），编不成 UTF-8，
    模型的词表里也不可能有它。常见来源：用 ``errors="surrogateescape"`` 读进来的文件，或把 emoji 拆成两半的 JSON。

    Raises
    ------
    TypeError
        ``text`` 不是字符串。
    ValueError
        含孤立的代理码位（报告第几个字符、哪个码位）。

    Examples
    --------
    >>> check_text("猫 cat", "text")
    '猫 cat'
    """
    if not isinstance(text, str):
        raise TypeError(f"{name} 必须是字符串，收到的是 {check.describe(text)}。")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise ValueError(f"{name} 的第 {err.start} 个字符（从 0 数）是孤立的代理码位 U+{ord(text[err.start]):04X} "
                         f"(lone surrogate)：它只是半个 UTF-16 字符，不是真正的字符，编不成 UTF-8，分词器无法处理。"
                         f"请先修好输入的文字（例如按 UTF-8 重新读文件，或把拆成两半的 emoji 拼回去）。") from None
    return text


def check_flag(flag: object, name: str) -> bool:
    """开关参数必须是 True 或 False：字符串 ``"no"``、``"False"`` 在 ``if`` 里都算真，不能收。

    Raises
    ------
    TypeError
        ``flag`` 不是 bool（NumPy 的 bool 也可以）。

    Examples
    --------
    >>> check_flag(False, "lowercase")
    False
    """
    if not isinstance(flag, (bool, np.bool_)):
        raise TypeError(f"{name} 必须是 True 或 False，收到的是 {check.describe(flag)}"
                        f"（非空的字符串、非零的数在 if 里都算真，\"no\" 也会被当成 True）。")
    return bool(flag)


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
    """与 BERT 原版 ``_is_control`` 相同：\t \n \r 当空白；其余类别以 C 开头的（Cc、Cf、Co、Cn、Cs）都删。"""
    return ch not in "\t\n\r" and unicodedata.category(ch).startswith("C")


def _clean(text: str) -> str:
    """去掉空字符、替换字符 U+FFFD 和控制字符（C 类，含私用区、未分配码位）；各种空白（含全角空格）都换成普通空格；
    汉字前后加空格。"""
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

    Raises
    ------
    TypeError
        ``text`` 不是字符串；``lowercase`` 不是 True/False。
    ValueError
        ``text`` 含孤立的代理码位（见 ``check_text``）。

    Examples
    --------
    >>> basic_tokenize("The café didn't 过马路!")
    ['the', 'cafe', 'didn', "'", 't', '过', '马', '路', '!']
    """
    text, lowercase = check_text(text, "text"), check_flag(lowercase, "lowercase")
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

    Raises
    ------
    TypeError
        ``vocab`` 不是字符串的列表；``lowercase`` 不是 True/False；``max_chars`` 不是正整数。
    ValueError
        ``vocab`` 缺少特殊词元，或某个词元含孤立的代理码位；``max_chars`` 不是正数。

    Examples
    --------
    >>> tok = WordPiece(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "play", "##ing", "##ed", "the", "."])
    >>> tok.tokenize("The playing played, playz.")     # "," 不在词表里；playz 切到 ##z 就切不动了
    ['[CLS]', 'the', 'play', '##ing', 'play', '##ed', '[UNK]', '[UNK]', '.', '[SEP]']
    """

    def __init__(self, vocab: Sequence[str], lowercase: bool = True, max_chars: int = 100) -> None:
        if not isinstance(vocab, Sequence) or isinstance(vocab, str) or not all(isinstance(t, str) for t in vocab):
            raise TypeError(f"vocab 必须是字符串的列表（按编号排列的词表），收到的是 {type(vocab).__name__}。")
        for i, token in enumerate(vocab):
            check_text(token, f"vocab[{i}]")
        self.vocab = tuple(vocab)
        self.ids = {token: i for i, token in enumerate(self.vocab)}
        missing = [t for t in ("[CLS]", "[SEP]", "[UNK]") if t not in self.ids]
        if missing:
            raise ValueError(f"vocab 里缺少特殊词元 {'、'.join(missing)}：BERT 的词表必须有 [CLS]、[SEP]、[UNK]。")
        self.lowercase = check_flag(lowercase, "lowercase")
        self.max_chars = check.positive_int(max_chars, "max_chars")
        self.cls, self.sep, self.unk = "[CLS]", "[SEP]", "[UNK]"
        specials = [t for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]") if t in self.ids]
        self._specials = re.compile("(" + "|".join(re.escape(t) for t in specials) + ")")

    def split_word(self, word: str) -> list[str]:
        """第 2 步：一个词按“最长匹配”切成词表里的小块；切不动时整个词是 [UNK]。

        Raises
        ------
        TypeError, ValueError
            ``word`` 不是字符串，或含孤立的代理码位（见 ``check_text``）。
        """
        word = check_text(word, "word")
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
        """整句分词：[CLS] + 每个词的 WordPiece 小块 + [SEP]。

        Raises
        ------
        TypeError, ValueError
            ``text`` 不是字符串，或含孤立的代理码位（见 ``check_text``）。
        """
        text = check_text(text, "text")
        tokens = []
        for i, part in enumerate(self._specials.split(text)):  # 奇数位置是文本里原样写出的特殊词元
            tokens += [part] if i % 2 else [p for w in basic_tokenize(part, self.lowercase) for p in self.split_word(w)]
        return [self.cls, *tokens, self.sep]

    def token_ids(self, text: str) -> list[int]:
        """整句分词后的编号（``text`` 的要求同 ``tokenize``）。"""
        return [self.ids[t] for t in self.tokenize(text)]
