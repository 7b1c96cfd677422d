"""第 9 章的对照组：只数数、不训练的"语言模型"——一元 (unigram) 和二元 (bigram) 计数表。

小 GPT 训练了几百步，考试困惑度降到了几十。这有多了不起？要和最简单的做法比一比：

- **一元表**：只数每个字在训练文字里出现了几次，``P(字) = (次数 + α) / (总字数 + α·|V|)``，完全不看前文；
- **二元表**：数"前一个字是 a 时，后一个字是 b"出现了几次，``P(b | a) = (次数(a, b) + α) / (次数(a 后面跟着字) + α·|V|)``，
  只看前一个字。

``α`` 是加 α 平滑 (add-α smoothing)：每个格子先假装见过 α 次，没见过的搭配概率也不是 0（否则考试里一出现就是
``log 0``，困惑度无穷大）。|V| 是字表大小。``mean_loss`` 用和小 GPT 一样的算法给一段文字打分（第一个字之后的每个字
猜一次，取 −log 概率的平均），所以两边的困惑度可以直接比。本模块只依赖 NumPy。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from .corpus import encode, held_out_split, vocabulary

__all__ = ["unigram", "bigram", "mean_loss", "baseline_losses", "UNIGRAM_ALPHA", "BIGRAM_ALPHA"]

UNIGRAM_ALPHA = 1.0  # 一元表：每个字先假装见过 1 次
BIGRAM_ALPHA = 0.01  # 二元表的格子多得多（|V|² 个），假装见过的次数要小，不然把真数出来的次数淹没了


def _ids(ids: object, vocab_size: int, need: int) -> np.ndarray:
    ids = check.token_ids(ids, "ids", check.positive_int(vocab_size, "vocab_size"))
    if ids.ndim != 1 or ids.size < need:
        raise ValueError(f"ids 必须是至少 {need} 个编号的一维数组，收到的 shape={ids.shape}。")
    return ids


def unigram(ids: np.ndarray, vocab_size: int, alpha: float = UNIGRAM_ALPHA) -> np.ndarray:
    """一元表：每个字的概率 ``(次数 + α) / (总字数 + α·|V|)``，形状 (|V|,)，加起来是 1。

    Raises
    ------
    TypeError, ValueError
        ``ids`` 不是一维的整数编号数组、有编号越界，或 ``alpha`` 不是正数。

    Examples
    --------
    >>> unigram(np.array([2, 1, 0, 2, 1]), 3).tolist()       # "注意力注意"，字表"力意注"：(1+1, 2+1, 2+1) / (5+3)
    [0.25, 0.375, 0.375]
    """
    ids = _ids(ids, vocab_size, 1)
    alpha = check.positive_real(alpha, "alpha")
    counts = np.bincount(ids, minlength=vocab_size)  # (V,)
    return (counts + alpha) / (ids.size + alpha * vocab_size)  # (V,)


def bigram(ids: np.ndarray, vocab_size: int, alpha: float = BIGRAM_ALPHA) -> np.ndarray:
    """二元表：第 a 行是"前一个字是 a"时下一个字的概率 ``(次数(a, b) + α) / (次数(a, ·) + α·|V|)``，形状 (|V|, |V|)，
    每一行加起来是 1（没在前面出现过的字，那一行是平均的 1/|V|）。

    Raises
    ------
    TypeError, ValueError
        ``ids`` 不是至少 2 个编号的一维整数数组、有编号越界，或 ``alpha`` 不是正数。

    Examples
    --------
    >>> table = bigram(np.array([2, 1, 0, 2, 1]), 3, alpha=1.0)   # 注→意 两次，意→力、力→注 各一次
    >>> table[2].tolist()                                          # 前一个字是"注"：(0+1, 2+1, 0+1) / (2+3)
    [0.2, 0.6, 0.2]
    """
    ids = _ids(ids, vocab_size, 2)
    alpha = check.positive_real(alpha, "alpha")
    check.memory_budget(vocab_size * vocab_size, 8, f"{vocab_size} × {vocab_size} 的二元表")
    pairs = ids[:-1] * vocab_size + ids[1:]  # (n - 1,) 每一对 (a, b) 编成一个数
    counts = np.bincount(pairs, minlength=vocab_size * vocab_size).reshape(vocab_size, vocab_size)  # (V, V)
    return (counts + alpha) / (counts.sum(axis=1, keepdims=True) + alpha * vocab_size)  # (V, V)


def mean_loss(table: np.ndarray, ids: np.ndarray) -> float:
    """计数表在一段文字上的平均交叉熵：第一个字之后的每个字猜一次（和 ``tiny_gpt.mean_loss`` 一样），
    一元表 ``table`` (|V|,) 不看前文，二元表 (|V|, |V|) 看前一个字。困惑度是 e 的这个数次方。

    Raises
    ------
    TypeError, ValueError
        ``table`` 不是一维或方的二维概率表，或 ``ids`` 不是至少 2 个编号的一维整数数组、有编号越界。

    Examples
    --------
    >>> table = bigram(np.array([2, 1, 0, 2, 1]), 3, alpha=1.0)
    >>> round(mean_loss(table, np.array([2, 1, 0])), 4), round(float(-(np.log(0.6) + np.log(0.5)) / 2), 4)  # 注→意 0.6，意→力 0.5
    (0.602, 0.602)
    """
    table = check.as_real_array(table, "table", min_ndim=1)
    if table.ndim > 2 or (table.ndim == 2 and table.shape[0] != table.shape[1]):
        raise ValueError(f"table 必须是一元表 (|V|,) 或二元表 (|V|, |V|)，收到的 shape={table.shape}。"
                         "提示：用 ngram.unigram 或 ngram.bigram 得到它。")
    ids = _ids(ids, table.shape[-1], 2)
    probs = table[ids[1:]] if table.ndim == 1 else table[ids[:-1], ids[1:]]  # (n - 1,) 每个字被猜中的概率
    return float(-np.mean(np.log(probs)))


def baseline_losses(text: str, every: int = 10) -> dict[str, float]:
    """小 GPT 的同一种切分（``corpus.held_out_split(text, every)``，字表是整段语料的字）上，两张计数表在
    考试文字上的平均损失：``{"一元表": …, "二元表": …}``（平滑用 ``UNIGRAM_ALPHA``、``BIGRAM_ALPHA``）。

    Raises
    ------
    TypeError, ValueError
        ``text`` 不是字符串、没有文字，或 ``every`` 不合法（见 ``corpus.held_out_split``）。

    Examples
    --------
    >>> losses = baseline_losses("注意力注意力注意力\\n注意力注意\\n力的注意力", every=2)   # 考题是第 2 段"注意力注意"
    >>> round(losses["一元表"], 2), round(losses["二元表"], 2)      # 看前一个字的表猜得准得多
    (1.34, 0.18)
    """
    chars = vocabulary(text)
    train, test = held_out_split(text, every)
    train_ids, test_ids = encode(train, chars), encode(test, chars)
    return {"一元表": mean_loss(unigram(train_ids, len(chars)), test_ids),
            "二元表": mean_loss(bigram(train_ids, len(chars)), test_ids)}
