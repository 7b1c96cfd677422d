"""第 11 章的实验帮手（``lessons/tokenization.py``）：

* ``vocab_sweep``：和"逐条合并"的独立写法（每条规则用 ``bpe.merge`` 在整串上换一遍）逐数相同；词表越大词元越少（性质测试）；
* ``rare_tokens``：和逐个数的写法相同；
* ``bits_per_char``：手算的均匀模型（每个词元 log2 V 比特）、一字一词元时就是每个词元的损失 / ln 2；
* ``train_on_ids``：同一个种子一模一样、损失下降、不改传入的数组；
* ``book_bpe``：在训练文字上训练（考题不参与）；以及每个文档写明的报错。
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_lab.lessons import bpe, tokenization
from transformer_lab.lessons.corpus import held_out_split, load_corpus
from transformer_lab.lessons.gpt_model import GPTConfig, TinyGPT, init_gpt
from transformer_lab.lessons.tiny_gpt import mean_loss

from helpers.errors import call, error_table_test


def merge_one_by_one(text: str, merges) -> list[int]:
    """另一种写法：从字节出发，按训练的先后，每条规则在整串上从左往右换一遍（不用 bpe.encode 的堆）。"""
    ids = list(text.encode("utf-8"))
    for k, pair in enumerate(merges):
        ids = bpe.merge(ids, tuple(pair), 256 + k)
    return ids


TEXTS = ("注意力注意力让每个词", "the the then there", "aaabdaaabac", "😀😀 é")


def test_vocab_sweep_hand_example():
    merges = bpe.train("注意力注意", 10)  # 5 条：把 "注意" 的 6 个字节合成一个词元（"力" 只出现一次）
    assert vocab_counts(merges) == [[15], [11], [5]]  # 2 次合并：两个"注"各成一个词元


def vocab_counts(merges):
    return tokenization.vocab_sweep(merges, (256, 258, 261), ("注意力注意",)).tolist()


def test_vocab_sweep_matches_merging_one_rule_at_a_time():
    merges = bpe.train(" ".join(TEXTS) * 3, 40)
    sizes = (256, 260, 270, 256 + len(merges))
    got = tokenization.vocab_sweep(merges, sizes, TEXTS)
    want = [[len(merge_one_by_one(t, merges[:V - 256])) for t in TEXTS] for V in sizes]
    assert got.tolist() == want
    assert got.shape == (len(sizes), len(TEXTS)) and got.dtype.kind == "i"


@settings(deadline=None, max_examples=30)
@given(st.text(min_size=1, max_size=40), st.text(min_size=1, max_size=20))
def test_more_merges_never_give_more_tokens(train, probe):
    merges = bpe.train(train.replace("\ud800", "") * 2 or "ab", 30)
    probe = "".join(c for c in probe if not 0xD800 <= ord(c) <= 0xDFFF) or "x"
    sizes = tuple(range(256, 257 + len(merges)))
    counts = tokenization.vocab_sweep(merges, sizes, (probe,))[:, 0]
    assert np.all(np.diff(counts) <= 0)
    assert counts[0] == len(probe.encode("utf-8"))


def test_rare_tokens_against_counting_by_hand():
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 30, size=200)
    want = sum(1 for v in range(40) if list(ids).count(v) <= 3)
    assert tokenization.rare_tokens(ids, 40, 3) == want
    assert tokenization.rare_tokens([0, 0, 0, 1, 2, 2], 4, 1) == 2  # 编号 1 一次，编号 3 零次


def _flat(V: int, context: int = 8) -> TinyGPT:
    """所有词元打分相同的模型：每个词元的概率都是 1/V。"""
    model = init_gpt(GPTConfig(V, d_model=8, num_layers=1, num_heads=2, d_ff=8, context=context), np.random.default_rng(0))
    return TinyGPT(model.config, model.params | {"w_out": np.zeros((8, V)), "b_out": np.zeros(V)})


def test_bits_per_char_of_a_uniform_model_by_hand():
    ids = np.array([0, 1, 2, 3, 4, 5, 6, 7, 1, 2])  # 10 个词元，猜 9 个，每个 log2(8) = 3 比特
    assert tokenization.bits_per_char(_flat(8), ids, 19) == pytest.approx(9 * 3 / 18)
    assert tokenization.bits_per_char(_flat(8), ids.tolist(), 10) == pytest.approx(3.0)  # 列表也行


def test_bits_per_char_is_the_loss_in_bits_when_tokens_are_characters():
    model = init_gpt(GPTConfig(6, d_model=8, num_layers=1, num_heads=2, d_ff=8, context=4), np.random.default_rng(2))
    ids = np.random.default_rng(3).integers(0, 6, size=23)
    assert tokenization.bits_per_char(model, ids, 23) == pytest.approx(mean_loss(model, ids) / np.log(2))


def test_train_on_ids_is_reproducible_learns_and_leaves_inputs_alone():
    ids = np.tile(np.array([0, 1, 2, 3, 1, 2]), 30)  # 很有规律：学得会
    train_ids, test_ids = ids[:150], ids[150:]
    before = (train_ids.copy(), test_ids.copy())
    kw = dict(steps=30, batch_size=2, context=8, lr=1e-2, checkpoint_every=10, d_model=8, num_layers=1, d_ff=16,
              num_heads=2)
    a = tokenization.train_on_ids(np.random.default_rng(0), train_ids, test_ids, 4, **kw)
    b = tokenization.train_on_ids(np.random.default_rng(0), train_ids, test_ids, 4, **kw)
    assert np.array_equal(a["losses"], b["losses"]) and np.array_equal(a["test_loss"], b["test_loss"])
    assert a["test_loss"][-1] < a["test_loss"][0] - 0.3
    assert a["test_loss"][0] == pytest.approx(np.log(4), abs=0.1)  # 一开始是瞎猜
    assert a["config"].vocab_size == 4 and len(a["checkpoints"]) == len(a["checkpoint_steps"]) == 4
    assert np.array_equal(train_ids, before[0]) and np.array_equal(test_ids, before[1])


def test_book_bpe_is_trained_on_the_training_text_only():
    merges = tokenization.book_bpe()
    train_text, test_text = held_out_split(load_corpus())
    assert len(merges) == tokenization.MAX_MERGES and merges is tokenization.book_bpe()
    assert list(merges[:50]) == bpe.train(train_text, 50)  # 前 50 条：和只在训练文字上训练的一样
    assert list(merges) != bpe.train(load_corpus(), tokenization.MAX_MERGES)  # 连考题一起训练就不一样了
    assert test_text and test_text not in load_corpus().replace("\n\n", "\n").split("\n")[0]
    assert tokenization.SIZES[0] == 256 and tokenization.SIZES[-1] == 256 + tokenization.MAX_MERGES


def test_parallel_sentences_are_pairs_not_in_the_corpus():
    corpus = load_corpus()
    assert len(tokenization.PARALLEL) == 6
    for zh, en in tokenization.PARALLEL:
        assert zh not in corpus and en not in corpus
        assert any("\u4e00" <= c <= "\u9fff" for c in zh) and en.isascii()


MERGES = bpe.train("aaabdaaabac", 3)
ERROR_CASES = [
    ("sweep-texts-str", call(tokenization.vocab_sweep, MERGES, (256,), "abc"), TypeError, "texts 必须是非空的字符串列表"),
    ("sweep-texts-item", call(tokenization.vocab_sweep, MERGES, (256,), ("a", 3)), TypeError, r"texts\[1\]"),
    ("sweep-size-type", call(tokenization.vocab_sweep, MERGES, (256.0,), ("a",)), TypeError, r"sizes\[0\]"),
    ("sweep-size-range", call(tokenization.vocab_sweep, MERGES, (300,), ("a",)), ValueError, r"不在 \[256, 259\] 之内"),
    ("rare-vocab", call(tokenization.rare_tokens, [0, 1], 0, 1), ValueError, "vocab_size"),
    ("rare-at-most", call(tokenization.rare_tokens, [0, 1], 3, 1.5), TypeError, "at_most"),
    ("rare-ids", call(tokenization.rare_tokens, [0, 5], 3, 1), ValueError, "ids"),
    ("train-ids-range", call(tokenization.train_on_ids, np.random.default_rng(0), np.arange(20), np.arange(5), 4),
     ValueError, "train_ids"),
    ("train-ids-type", call(tokenization.train_on_ids, np.random.default_rng(0), np.arange(20) * 0.5, np.arange(3), 40),
     TypeError, "train_ids"),
    ("train-short", call(tokenization.train_on_ids, np.random.default_rng(0), np.arange(5), np.arange(5), 10, context=8),
     ValueError, "至少 length"),
    ("train-heads", call(tokenization.train_on_ids, np.random.default_rng(0), np.arange(20), np.arange(5), 30,
                         d_model=10, num_heads=4), ValueError, "整除"),
    ("bpc-chars", call(tokenization.bits_per_char, _flat(4), np.array([0, 1]), 1), ValueError, "num_chars 必须至少是 2"),
    ("bpc-chars-type", call(tokenization.bits_per_char, _flat(4), np.array([0, 1]), 2.5), TypeError, "num_chars"),
    ("bpc-ids", call(tokenization.bits_per_char, _flat(4), np.array([0, 9]), 5), ValueError, "ids"),
]

test_documented_errors = error_table_test(ERROR_CASES)
