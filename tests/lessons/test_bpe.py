"""lessons/bpe.py：字节级 BPE。

- 手算的例子：维基百科的 "aaabdaaabac"（一样多时按最早出现选，和维基百科选的不同）、"注意力注意"、"aaaa" 不重叠；
- 独立参考（minbpe 的写法）：每一步按文字顺序从头重数一遍，``max(counts, key=counts.get)`` 选对，整串从左往右
  合并；编码时每一步重数、取名次最小的一对。和增量计数、堆的实现逐条比较合并规则和编号（随机文字、小字母表、
  预切分）；
- 往返：任意 Unicode（emoji、组合附加符号、罕用汉字、NUL）``decode(encode(s)) == s``；
- 报错表。
"""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.lessons import bpe

from helpers.errors import error_table_test

# ---------------------------------------------------------------- 独立参考：每一步从头重数（minbpe 的基础分词器）


def ref_counts(seqs):
    counts = {}  # 按文字顺序填：第一次出现的先进字典
    for seq in seqs:
        for pair in zip(seq, seq[1:]):
            counts[pair] = counts.get(pair, 0) + 1
    return counts


def ref_merge(seq, pair, new_id):
    out, i = [], 0
    while i < len(seq):
        if seq[i:i + 2] == list(pair):
            out.append(new_id)
            i += 2
        else:
            out.append(seq[i])
            i += 1
    return out


def ref_chunks(text, split):
    pieces = bpe.GPT2_SPLIT.findall(text) if split else [text]
    return [list(piece.encode("utf-8")) for piece in pieces]


def ref_train(text, num_merges, split=False):
    seqs, merges = ref_chunks(text, split), []
    for k in range(num_merges):
        counts = ref_counts(seqs)
        if not counts or max(counts.values()) < 2:
            break
        best = max(counts, key=counts.get)  # 一样多时：字典里靠前的，也就是最早出现的
        merges.append(best)
        seqs = [ref_merge(seq, best, 256 + k) for seq in seqs]
    return merges


def ref_encode(text, merges, split=False):
    rank = {pair: k for k, pair in enumerate(merges)}
    out = []
    for seq in ref_chunks(text, split):
        while len(seq) >= 2:
            pair = min(ref_counts([seq]), key=lambda p: rank.get(p, float("inf")))
            if pair not in rank:
                break
            seq = ref_merge(seq, pair, 256 + rank[pair])
        out += seq
    return out


# ---------------------------------------------------------------- 手算的例子


def test_wikipedia_example_by_hand():
    # aaabdaaabac：aa 4 次 → 256 "ZabdZabac"；(Z, a) 和 (a, b) 都是 2 次，(Z, a) 在位置 0 先出现 → 257 "YbdYbac"；
    # (Y, b) 2 次 → 258 "XdXac"；之后每一对只出现 1 次，停下（要 10 条，只学到 3 条）
    merges = bpe.train("aaabdaaabac", 10)
    assert merges == [(97, 97), (256, 97), (257, 98)]
    assert bpe.encode("aaabdaaabac", merges) == [258, 100, 258, 97, 99]
    assert bpe.token_strings("aaabdaaabac", merges) == ["aaab", "d", "aaab", "a", "c"]
    assert ref_train("aaabdaaabac", 10) == merges


def test_the_tie_rule_is_first_occurrence_not_smallest_pair():
    """反证：一样多时按 (左, 右) 的大小选，第二条会是 (97, 98)——维基百科的 ab，而不是 (256, 97)。"""
    counts = bpe.pair_counts(bpe.merge(list(b"aaabdaaabac"), (97, 97), 256))
    assert counts[(256, 97)] == counts[(97, 98)] == 2
    assert min(p for p, c in counts.items() if c == 2) == (97, 98) != bpe.train("aaabdaaabac", 2)[1]


def test_first_occurrence_is_in_the_current_sequence():
    """"aaaababab"：aa 和 ab 都是 3 次，aa 先出现 → "ZZbabab"。位置 3 的 ab 被并掉了，ab 现在最早在位置 5，
    ba（也是 2 次）在位置 4：选 ba。只记住"最初第一次出现的位置"（3）的写法会选错成 ab（找到这个例子的就是这种变体）。"""
    assert bpe.pair_counts(bpe.merge(list(b"aaaababab"), (97, 97), 256)) == {(256, 256): 1, (256, 98): 1,
                                                                             (98, 97): 2, (97, 98): 2}
    assert bpe.train("aaaababab", 10) == [(97, 97), (98, 97)] == ref_train("aaaababab", 10)


def test_chinese_by_hand():
    # 注 e6 b3 a8，意 e6 84 8f，力 e5 8a 9b："注意力注意" 里 "注意" 的 5 对各 2 次，从左往右一对对合起来（跨过了字的边界：
    # 第 3 条是 "注" 加上 "意" 的第一个字节）；之后每一对只出现一次
    merges = bpe.train("注意力注意", 10)
    assert merges == [(0xE6, 0xB3), (256, 0xA8), (257, 0xE6), (258, 0x84), (259, 0x8F)]
    table = bpe.vocab(merges)
    assert table[257] == "注".encode() and table[258] == "注".encode() + b"\xe6" and table[260] == "注意".encode()
    assert bpe.encode("注意力注意", merges) == [260, 0xE5, 0x8A, 0x9B, 260]
    assert bpe.token_strings("注意力注意", merges) == ["注意", "<e5>", "<8a>", "<9b>", "注意"]
    assert bpe.token_strings("意注", merges) == ["<e6>", "<84>", "<8f>", "注"]


def test_overlapping_pairs_count_twice_and_merge_without_overlap():
    assert bpe.pair_counts([97, 97, 97]) == {(97, 97): 2}
    assert bpe.merge([97, 97, 97], (97, 97), 256) == [256, 97]
    assert bpe.train("aaaa", 5) == [(97, 97)]  # aaaa → ZZ（不是 aZa）；(Z, Z) 只有 1 次，停下
    assert bpe.train("a" * 8, 5) == [(97, 97), (256, 256)]  # ZZZZ 里 (Z, Z) 3 次 → YY
    assert bpe.encode("aaaaa", [(97, 97), (256, 256)]) == [257, 97]


def test_helpers_do_not_change_their_input_and_keep_first_occurrence_order():
    ids = [3, 1, 3, 1, 2, 3, 1]
    assert list(bpe.pair_counts(ids).items()) == [((3, 1), 3), ((1, 3), 1), ((1, 2), 1), ((2, 3), 1)]
    assert bpe.merge(ids, (3, 1), 9) == [9, 9, 2, 9] and ids == [3, 1, 3, 1, 2, 3, 1]
    assert bpe.merge(np.array([1, 2]), (1, 2), 5) == [5]


def test_split_keeps_merges_inside_chunks():
    # "ab ab ab" → "Z Z Z"：(Z, ' ') 和 (' ', Z) 都是 2 次，(Z, ' ') 先出现 → "YYZ"，停下。
    # 切成 "ab" " ab" " ab" 后 (Z, ' ') 跨块、根本不算：(' ', Z) 2 次
    assert bpe.pre_split("ab ab ab") == ["ab", " ab", " ab"]
    assert bpe.train("ab ab ab", 5) == [(97, 98), (256, 32)]
    assert bpe.train("ab ab ab", 5, split=True) == [(97, 98), (32, 256)]
    merges = bpe.train("ab ab ab", 5)
    assert bpe.encode("ab ab", merges, split=True) == [256, 32, 256]  # 不跨块："ab " 合不起来
    assert bpe.encode("ab ab", merges) == [257, 256]


def test_pre_split_examples():
    assert bpe.pre_split("Hello world, I'll pay 100!") == ["Hello", " world", ",", " I", "'ll", " pay", " 100", "!"]
    assert bpe.pre_split("你好，世界  \n\n end") == ["你好", "，", "世界", "  \n\n", " end"]
    assert bpe.pre_split("a_b x²") == ["a", "_", "b", " x²"]  # ² 在 Python 的 re 里算 \w、不算 \d：和字母一块
    assert bpe.pre_split("") == []


def test_vocab_and_readable_bytes():
    table = bpe.vocab([(104, 105), (256, 33)])
    assert (table[256], table[257], len(table)) == (b"hi", b"hi!", 258)
    assert bpe.readable_bytes("😀".encode()) == "😀"
    assert bpe.readable_bytes("😀".encode()[:3]) == "<f0><9f><98>"
    assert bpe.readable_bytes(b"\x00\t a\x7f") == "<00><09> a<7f>"


def test_decode_strict_and_replace():
    assert bpe.decode([], []) == ""
    assert bpe.decode(np.array([104, 105]), []) == "hi"
    assert bpe.decode([0xE6, 0xB3], [], errors="replace") == "\ufffd"


# ---------------------------------------------------------------- 和独立参考比较

SMALL = st.text(alphabet="ab 注意。\n", max_size=60)  # 小字母表：对很多、一样多的也很多，最考验选对的规则
WORDS = st.text(alphabet=st.sampled_from(list("abc de,1 2'sl注意力😀")), max_size=80)


@given(st.one_of(SMALL, WORDS, st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=40)),
       st.integers(0, 40), st.booleans())
def test_train_and_encode_match_the_plain_reference(text, num_merges, split):
    merges = bpe.train(text, num_merges, split=split)
    assert merges == ref_train(text, num_merges, split)
    ids = bpe.encode(text, merges, split=split)
    assert ids == ref_encode(text, merges, split)
    assert bpe.decode(ids, merges) == text


@given(SMALL, SMALL, st.integers(0, 30), st.booleans())
def test_encode_other_text_matches_the_reference(train_text, text, num_merges, split):
    """编码一段没训练过的文字：有的规则用不上，名次最小的那一对才先合并。"""
    merges = bpe.train(train_text, num_merges)
    assert bpe.encode(text, merges, split=split) == ref_encode(text, merges, split)


def test_reference_on_the_book_corpus_start():
    from transformer_lab.lessons import corpus

    text = corpus.load_corpus()[:3000]
    for split in (False, True):
        merges = bpe.train(text, 120, split=split)
        assert len(merges) == 120 and merges == ref_train(text, 120, split)
        assert bpe.encode(text, merges, split=split) == ref_encode(text, merges, split)


# ---------------------------------------------------------------- 往返与预切分的性质

MERGES = bpe.train("注意力 attention 注意力机制 😀😀 e\u0301e\u0301 \U00020000\U00020000 \x00\x00 abcabc", 40)
UNICODE = st.text(alphabet=st.characters(exclude_categories=("Cs",)))  # 除了代理项，什么都有


@given(st.one_of(UNICODE, st.text(alphabet="注意力😀\u0301e\U00020000\x00 ")), st.booleans())
def test_round_trip_on_arbitrary_unicode(text, split):
    ids = bpe.encode(text, MERGES, split=split)
    assert bpe.decode(ids, MERGES) == text
    assert len(bpe.token_strings(text, MERGES, split=split)) == len(ids)
    assert len(ids) <= len(text.encode("utf-8"))


def test_round_trip_on_named_hard_cases():
    for text in ["😀👩‍👩‍👧", "e\u0301", "\U00020000\U0002a6d6", "a\x00b", "注意力", ""]:
        assert bpe.decode(bpe.encode(text, MERGES), MERGES) == text


@given(UNICODE)
def test_pre_split_pieces_join_back_to_the_text(text):
    pieces = bpe.pre_split(text)
    assert "".join(pieces) == text and all(pieces)


# ---------------------------------------------------------------- 报错表

ERROR_CASES = [
    ("train-text-type", lambda: bpe.train(b"abc", 3), TypeError, "text 必须是字符串"),
    ("train-surrogate", lambda: bpe.train("a\ud83d", 3), ValueError, r"text 的第 1 个字符 U\+D83D 是单独的代理项"),
    ("train-num-merges-type", lambda: bpe.train("abc", 2.0), TypeError, "num_merges 必须是非负整数"),
    ("train-num-merges-negative", lambda: bpe.train("abc", -1), ValueError, "num_merges 必须是非负整数"),
    ("train-split-type", lambda: bpe.train("abc", 1, split=1), TypeError, "split 必须是 bool"),
    ("encode-surrogate", lambda: bpe.encode("\udc80", []), ValueError, "text 的第 0 个字符 U\\+DC80 是单独的代理项"),
    ("encode-merges-type", lambda: bpe.encode("ab", {(97, 98): 256}), TypeError, "merges 必须是 .*整数对的列表"),
    ("encode-merges-not-pair", lambda: bpe.encode("ab", [(97, 98, 99)]), TypeError, "merges 的第 0 条必须是两个整数"),
    ("encode-merges-bool", lambda: bpe.encode("ab", [(True, 98)]), TypeError, "merges 的第 0 条必须是两个整数"),
    ("encode-merges-future-id", lambda: bpe.encode("ab", [(97, 98), (257, 97)]), ValueError,
     r"merges 的第 1 条 \(257, 97\) 用了还没有的编号.*0 … 256"),
    ("encode-merges-negative", lambda: bpe.encode("ab", [(-1, 98)]), ValueError, "merges 的第 0 条 .*还没有的编号"),
    ("encode-merges-duplicate", lambda: bpe.encode("ab", [(97, 98), (97, 98)]), ValueError,
     "merges 的第 1 条 .*和第 0 条重复了"),
    ("decode-ids-type", lambda: bpe.decode("ab", []), TypeError, "ids 必须是整数编号的列表"),
    ("decode-ids-float", lambda: bpe.decode(np.array([1.0]), []), TypeError, "ids 必须是一维的整数编号"),
    ("decode-ids-range", lambda: bpe.decode([97, 256], []), ValueError, r"ids 的第 1 个编号 256 越界.*\[0, 255\]"),
    ("decode-merges", lambda: bpe.decode([97], [(97, 300)]), ValueError, "merges 的第 0 条"),
    ("decode-errors", lambda: bpe.decode([97], [], errors="ignore"), ValueError, "errors"),
    ("decode-half-character", lambda: bpe.decode([0xE6, 0xB3], []), ValueError, "ids 拼出的字节不是完整的 UTF-8.*<e6><b3>"),
    ("pair-counts-type", lambda: bpe.pair_counts("abc"), TypeError, "ids 必须是整数编号的列表"),
    ("merge-ids-type", lambda: bpe.merge([1.5], (1, 2), 3), TypeError, "ids 必须是整数编号的列表"),
    ("merge-pair", lambda: bpe.merge([1, 2], 1, 3), TypeError, "pair 必须是两个整数组成的一对"),
    ("merge-new-id", lambda: bpe.merge([1, 2], (1, 2), "3"), TypeError, "new_id 必须是整数"),
    ("vocab-merges", lambda: bpe.vocab([(97,)]), TypeError, "merges 的第 0 条必须是两个整数"),
    ("pre-split-type", lambda: bpe.pre_split(None), TypeError, "text 必须是字符串"),
    ("readable-type", lambda: bpe.readable_bytes("ab"), TypeError, "data 必须是 bytes"),
    ("token-strings-surrogate", lambda: bpe.token_strings("\ud800", []), ValueError, "text 的第 0 个字符"),
]
test_documented_errors = error_table_test(ERROR_CASES)
