"""lessons/ngram.py：一元、二元计数表和它们的平均损失。手算的 5 个字的例子；换一种写法（字典里套 Counter 的循环）
的独立参考；概率的性质；报错表。"""

import math
from collections import Counter, defaultdict

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.lessons import corpus, ngram

from helpers.errors import check_error

# "注意力注意"，字表 "力意注"（力 0，意 1，注 2）
IDS = np.array([2, 1, 0, 2, 1])


def test_hand_worked_five_characters():
    np.testing.assert_allclose(ngram.unigram(IDS, 3, alpha=1.0), [2 / 8, 3 / 8, 3 / 8])  # (次数 + 1) / (5 + 3)
    table = ngram.bigram(IDS, 3, alpha=1.0)  # 注→意 ×2，意→力 ×1，力→注 ×1
    np.testing.assert_allclose(table, [[1 / 4, 1 / 4, 2 / 4],    # 力 后面：注 1 次
                                       [2 / 4, 1 / 4, 1 / 4],    # 意 后面：力 1 次
                                       [1 / 5, 3 / 5, 1 / 5]])   # 注 后面：意 2 次
    # "注意力"：猜 意（前一个是 注，0.6）和 力（前一个是 意，0.5）
    assert ngram.mean_loss(table, np.array([2, 1, 0])) == pytest.approx(-(math.log(0.6) + math.log(0.5)) / 2)
    # 一元表不看前文：猜 意 0.375，力 0.25
    assert ngram.mean_loss(ngram.unigram(IDS, 3, alpha=1.0), np.array([2, 1, 0])) == pytest.approx(
        -(math.log(3 / 8) + math.log(2 / 8)) / 2)


def reference_bigram(ids, V, alpha):
    """独立参考：字典里套 Counter，一对一对地数，再一格一格地除。"""
    follows = defaultdict(Counter)
    for a, b in zip(ids[:-1], ids[1:]):
        follows[int(a)][int(b)] += 1
    return [[(follows[a][b] + alpha) / (sum(follows[a].values()) + alpha * V) for b in range(V)] for a in range(V)]


def reference_loss(ids_train, ids_test, V, alpha, order):
    counts = Counter(int(i) for i in ids_train)
    total = 0.0
    for a, b in zip(ids_test[:-1], ids_test[1:]):
        if order == 1:
            total -= math.log((counts[int(b)] + alpha) / (len(ids_train) + alpha * V))
        else:
            total -= math.log(reference_bigram(ids_train, V, alpha)[int(a)][int(b)])
    return total / (len(ids_test) - 1)


@given(st.lists(st.integers(0, 5), min_size=2, max_size=30), st.lists(st.integers(0, 5), min_size=2, max_size=10),
       st.sampled_from([0.01, 0.5, 1.0]))
def test_tables_and_losses_match_a_counter_loop(train, test, alpha):
    train, test, V = np.array(train), np.array(test), 6
    np.testing.assert_allclose(ngram.bigram(train, V, alpha), reference_bigram(train, V, alpha), rtol=1e-12)
    for order, table in ((1, ngram.unigram(train, V, alpha)), (2, ngram.bigram(train, V, alpha))):
        assert ngram.mean_loss(table, test) == pytest.approx(reference_loss(train, test, V, alpha, order), rel=1e-12)


def test_rows_are_distributions_and_unseen_rows_are_uniform():
    table = ngram.bigram(IDS, 5)  # 字 3、4 从没出现过
    np.testing.assert_allclose(table.sum(axis=1), 1.0)
    np.testing.assert_allclose(table[3], 1 / 5)
    assert ngram.unigram(IDS, 5).sum() == pytest.approx(1.0)


def test_the_reference_check_can_fail():
    """反证：参考若忘了平滑（α = 0），或行列弄反（按"后一个字"归一），就对不上。"""
    table = ngram.bigram(IDS, 3, alpha=1.0)
    assert not np.allclose(table, reference_bigram(IDS, 3, 0.0))
    assert not np.allclose(table, np.array(reference_bigram(IDS[::-1], 3, 1.0)).T)


def test_bigram_beats_unigram_on_text_with_structure():
    """一段有规律的文字（总是 0 → 1 → 2 → 0 …）：看前一个字的二元表几乎不犹豫，一元表要在 3 个字里犹豫。"""
    ids = np.tile([0, 1, 2], 50)
    assert ngram.mean_loss(ngram.bigram(ids, 3), ids) < 0.01
    assert ngram.mean_loss(ngram.unigram(ids, 3), ids) == pytest.approx(math.log(3), abs=0.01)


ERROR_CASES = [
    ("unigram-ids-type", lambda: ngram.unigram([1, 2], 3), TypeError, "ids 必须是整数 NumPy 数组"),
    ("unigram-range", lambda: ngram.unigram(np.array([3]), 3), ValueError, "ids 越界"),
    ("unigram-alpha", lambda: ngram.unigram(IDS, 3, alpha=0), ValueError, "alpha 必须是有限的正实数"),
    ("bigram-short", lambda: ngram.bigram(np.array([1]), 3), ValueError, "至少 2 个编号的一维数组"),
    ("bigram-alpha", lambda: ngram.bigram(IDS, 3, alpha=-1.0), ValueError, "alpha 必须是有限的正实数"),
    ("loss-table-shape", lambda: ngram.mean_loss(np.ones((3, 2)), IDS), ValueError, r"table 必须是一元表.*shape=\(3, 2\)"),
    ("loss-table-type", lambda: ngram.mean_loss([0.5, 0.5], IDS), TypeError, "table"),
    ("baseline-type", lambda: ngram.baseline_losses(None), ValueError, "text 必须是非空字符串"),
    ("baseline-every", lambda: ngram.baseline_losses("注意\n力", every=1), ValueError, "every .*至少是 2"),
    ("loss-ids-2d", lambda: ngram.mean_loss(np.ones(3) / 3, IDS.reshape(1, -1)), ValueError, "一维数组"),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors(case):
    _, fn, exc, pattern = case
    check_error(fn, exc, pattern)



def test_baseline_losses_use_the_gpt_split_and_whole_vocabulary():
    text = "注意力注意力注意力\n注意力注意\n力的注意力"  # every=2：下标为 1 的一段是考题
    vocab = corpus.vocabulary(text)  # 字表来自整段语料（和小 GPT 一样），含换行
    train_ids, test_ids = (corpus.encode(t, vocab) for t in corpus.held_out_split(text, 2))
    assert corpus.decode(test_ids, vocab) == "注意力注意"
    losses = ngram.baseline_losses(text, every=2)
    assert losses["一元表"] == pytest.approx(reference_loss(train_ids, test_ids, len(vocab), ngram.UNIGRAM_ALPHA, 1))
    assert losses["二元表"] == pytest.approx(reference_loss(train_ids, test_ids, len(vocab), ngram.BIGRAM_ALPHA, 2))
