"""pretrained/gpt_tokenizer.py：SmolLM2 的字节级 BPE。

- 手算：GPT-2 的字节 → 字符表；一个小词表上的合并（" the" 三步合成一个词元）；切块的例子（数字一个一个切）。
- 真词表：几个常见英文词的编号是从词表里按字面查出来的（``tok.vocab[260] == "Ġthe"``），编码必须给出它们。
- 独立实现：测试里另写一个"找名次最小的一对、把它所有的出现从左往右合并、再找"的朴素循环（minbpe 的写法），
  在随机的中英文、emoji、代码、数字上和包里的堆实现逐个编号比较。
- 参照分词器：Hugging Face ``tokenizers``（Rust，自己的 Unicode 表，与本包毫无共同代码）按同一份词表和合并规则、
  SmolLM2 的切块方式（先单独切数字，再 GPT-2 的 ByteLevel 正则）编出的 429 段文字的编号存在
  ``smollm2_tokens_reference.json``，逐个相同。``tokenizers`` 不值得放进 dev 依赖，只在另建的虚拟环境里用了一次::

      tok = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=[tuple(m.split(" ")) for m in merges]))
      tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                   pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
      {text: tok.encode(text, add_special_tokens=False).ids for text in 29 段手写的 + 400 段随机的文字}

- 往返：任意 Unicode（除了代理项和词表缺的 21 个字节）``decode(encode(s)) == s``。
"""

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_lab.pretrained import gpt_tokenizer as gt
from transformer_lab.pretrained.gguf import read_gguf
from transformer_lab.pretrained.gpt_tokenizer import ByteLevelBPE, byte_to_char

from helpers.errors import call, error_table_test
from helpers.real_models import real_wheel
from helpers.tiny_gguf import ARRAY, STRING, gguf_bytes

REFERENCE = json.loads((Path(__file__).parent / "smollm2_tokens_reference.json").read_text(encoding="utf-8"))["ids"]
BYTES = [byte_to_char()[b] for b in range(256)]  # 编号 = 字节的值
TINY = ByteLevelBPE(BYTES + ["Ġt", "he", "Ġthe", "aa"], ["Ġ t", "h e", "Ġt he", "a a"])  # 编号 256–259


def test_byte_table_by_hand():
    table = byte_to_char()
    assert (table[ord("A")], table[ord("~")], table[0xA1], table[0xAE], table[0xFF]) == ("A", "~", "¡", "®", "ÿ")
    assert (table[0x00], table[0x20], table[0x0A], table[0x7F], table[0xAD]) == ("Ā", "Ġ", "Ċ", "ġ", "Ń")
    assert len(set(table.values())) == 256


def test_tiny_vocabulary_by_hand():
    # " the"：字节 Ġ t h e → (Ġ, t) 名次 0 → Ġt h e → (h, e) 名次 1 → Ġt he → (Ġt, he) 名次 2 → Ġthe
    assert TINY.encode(" the") == [258]
    assert TINY.encode("the") == [ord("t"), 257]  # 没有前导空格："t" 单独一个，"he" 合并
    assert TINY.encode("aaa") == [259, ord("a")]  # 从左往右、不重叠
    assert TINY.tokens(" the 注") == [" the", " ", "<e6>", "<b3>", "<a8>"]
    assert TINY.decode([258, 32]) == " the " and TINY.decode([0xE6, 0xB3]) == "\ufffd"


def test_pre_split_by_hand():
    assert TINY.pre_split("I'll pay 1234 dollars!!") == ["I", "'ll", " pay", " ", "1", "2", "3", "4", " dollars", "!!"]
    assert TINY.pre_split("注意力机制是Transformer的核心。") == ["注意力机制是Transformer的核心", "。"]
    assert TINY.pre_split("a  b\tc \n") == ["a", " ", " b", "\t", "c", " \n"]
    assert TINY.pre_split("½ x²") == ["½", " x", "²"]  # ½ ² 是 \p{N}（No）：和数字一样单独切（Python 的 \d 不算它们）
    assert TINY.pre_split("a\u3000b\x1cc") == ["a", "\u3000", "b", "\x1c", "c"]  # 全角空格是空白；\x1c 不是


# ---------------------------------------------------------------- 真词表


@pytest.fixture(scope="module")
def tok():
    real_wheel(gt.MODEL_NAME)
    return gt.load()


def test_common_words_have_the_ids_in_the_vocabulary(tok):
    """编号是从词表里按字面查出来的：" the" 是 260 号 "Ġthe"，等等。编码必须给出这些编号。"""
    words = {"Hello": 19556, "Ġworld": 905, "Ġthe": 260, "the": 1195, ".": 30, "Ġcat": 2644, "The": 504}
    assert {w: tok.vocab[i] for w, i in words.items()} == {w: w for w in words}
    assert tok.encode("Hello world") == [19556, 905] and tok.encode(" the") == [260]
    assert tok.encode("The cat sat on the mat.") == [504, 2644, 2643, 335, 260, 1171, 30]
    assert tok.tokens("The cat") == ["The", " cat"] and len(tok.vocab) == 49152


def test_chinese_costs_about_two_tokens_per_character(tok):
    sentence = "注意力机制让模型看见整句话的关系"
    assert len(sentence) == 16 and len(tok.encode(sentence)) == 33
    assert tok.tokens("注意力")[:2] == ["<e6><b3>", "<a8>"]  # "注" 的 3 个字节分成两个词元


def test_equal_to_the_hugging_face_tokenizer(tok):
    assert len(REFERENCE) == 429
    different = {text: (tok.encode(text), ids) for text, ids in REFERENCE.items() if tok.encode(text) != ids}
    assert not different


def test_missing_bytes_are_dropped_like_the_reference(tok):
    assert tok.missing_bytes() == [0xC0, 0xC1, 0xF1, 0xF2, *range(0xF5, 0x100), 0x04, 0x06, 0x13, 0x14, 0x16, 0x1D]
    assert tok.encode("a\x04b") == [81, 82] != tok.encode("ab")  # 丢掉的字节仍把 a、b 隔开（同 Hugging Face）
    assert tok.encode("x\U00040000y") == [104, 218, 218, 218, 105] and tok.encode("\x04") == []  # F1 80 80 80：丢 F1


def plain_encode(tok, text):
    """独立的朴素实现：每块从字节字符出发，每一步数出所有相邻的对，取名次最小的一对，把它所有的出现从左往右合并。"""
    table = byte_to_char()
    ranks = {tuple(pair): k for pair, k in tok.ranks.items()}
    ids = []
    for piece in tok.pre_split(text):
        symbols = [table[b] for b in piece.encode("utf-8")]
        while True:
            present = [p for p in zip(symbols, symbols[1:]) if p in ranks]
            if not present:
                break
            a, b = min(present, key=ranks.get)
            merged, i = [], 0
            while i < len(symbols):
                if i + 1 < len(symbols) and symbols[i] == a and symbols[i + 1] == b:
                    merged.append(a + b)
                    i += 2
                else:
                    merged.append(symbols[i])
                    i += 1
            symbols = merged
        ids += [tok.ids[s] for s in symbols if s in tok.ids]
    return ids


MIXED = st.text(st.one_of(st.sampled_from(list("the cat 注意力机制模型，。😀👩‍💻 def f(x): return 1234\n\t'sll")),
                          st.characters(exclude_categories=("Cs",))), max_size=40)


@settings(max_examples=80, deadline=None)
@given(MIXED)
def test_equal_to_a_plain_rank_loop(tok, text):
    assert tok.encode(text) == plain_encode(tok, text)


@settings(max_examples=80, deadline=None)
@given(st.text(st.characters(exclude_categories=("Cs",)), max_size=40))
def test_round_trip_on_arbitrary_text(tok, text):
    missing = set(tok.missing_bytes())
    if any(b in missing for b in text.encode("utf-8")):
        assert tok.decode(tok.encode(text)) != text or not text
    else:
        assert tok.decode(tok.encode(text)) == text
    assert "".join(tok.pre_split(text)) == text


def test_from_a_hand_made_gguf():
    data = gguf_bytes([("tokenizer.ggml.model", STRING, "gpt2"), ("tokenizer.ggml.pre", STRING, "smollm"),
                       ("tokenizer.ggml.tokens", ARRAY, BYTES + ["Ġt"], STRING),
                       ("tokenizer.ggml.merges", ARRAY, ["Ġ t"], STRING)], [])
    bpe = gt.from_gguf(read_gguf(data))
    assert bpe.encode(" t t") == [256, 256] and bpe.decode(np.array([256])) == " t"


def tiny_gguf(**meta):
    base = {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "smollm", "tokenizer.ggml.tokens": BYTES,
            "tokenizer.ggml.merges": []}
    base.update(meta)
    rows = [(k, ARRAY, v, STRING) if isinstance(v, list) else (k, STRING, v) for k, v in base.items() if v is not None]
    return read_gguf(gguf_bytes(rows, []), "x.gguf")


ERROR_CASES = [
    ("tokens-type", call(ByteLevelBPE, "abc", []), TypeError, r"tokens 必须是字符串的列表或元组"),
    ("merges-type", call(ByteLevelBPE, BYTES, "Ġ t"), TypeError, r"merges 必须是字符串的列表"),
    ("merge-not-a-pair", call(ByteLevelBPE, BYTES, ["Ġt"]), ValueError, r"merges 的第 0 条 'Ġt' 应是用一个空格隔开的两个词元"),
    ("merge-not-in-vocab", call(ByteLevelBPE, BYTES, ["Ġ t"]), ValueError, r"merges 的第 0 条 'Ġ t'.*都在词表里"),
    ("pre-unknown", call(ByteLevelBPE, BYTES, [], pre="qwen2"), ValueError, r"pre"),
    ("encode-type", call(TINY.encode, b"the"), TypeError, r"text 必须是字符串"),
    ("encode-surrogate", call(TINY.encode, "a\ud800"), ValueError, r"text 的第 1 个字符 U\+D800 是单独的代理项"),
    ("pre-split-type", call(TINY.pre_split, None), TypeError, r"text 必须是字符串"),
    ("tokens-surrogate", call(TINY.tokens, "\udfff"), ValueError, r"text 的第 0 个字符 U\+DFFF"),
    ("decode-type", call(TINY.decode, "abc"), TypeError, r"ids 必须是整数编号的列表"),
    ("decode-range", call(TINY.decode, [1, 260]), ValueError, r"ids\[1\]=260 越界：词表只有 260 个词元"),
    ("decode-float", call(TINY.decode, [1.0]), TypeError, r"ids\[0\] 必须是整数"),
    ("decode-errors", call(TINY.decode, [1], errors="ignore"), ValueError, r"errors"),
    ("decode-strict", call(TINY.decode, [0xE6], errors="strict"), ValueError, r"ids 拼出的字节从第 0 个起不是完整的 UTF-8"),
    ("gguf-missing-keys", lambda: gt.from_gguf(tiny_gguf(**{"tokenizer.ggml.merges": None})), ValueError,
     r"x\.gguf 的元数据里缺少 tokenizer\.ggml\.merges：读不出分词器"),
    ("gguf-not-gpt2", lambda: gt.from_gguf(tiny_gguf(**{"tokenizer.ggml.model": "llama"})), ValueError,
     r"x\.gguf 的分词器是 'llama'，本书只读字节级 BPE"),
    ("gguf-bad-merges", lambda: gt.from_gguf(tiny_gguf(**{"tokenizer.ggml.merges": ["a b c"]})), ValueError,
     r"x\.gguf 的分词器数据不合法：merges 的第 0 条"),
    ("load-dir-type", call(gt.load, 3), TypeError, r"models_dir 必须是目录的路径"),
    ("load-missing", call(gt.load, "/nonexistent-dir"), FileNotFoundError, r"找不到模型 SmolLM2-135M-Instruct 的权重文件"),
]
test_documented_errors = error_table_test(ERROR_CASES)
