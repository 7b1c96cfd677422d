"""第 9 章的常见误区，用计算回答（每个函数给出一个可以打印、可以画的数）。

* "模型总是选最可能的词"：贪心（每步取最可能的字）很快就原地打转，``find_loop`` 找出转的那个圈；采样不会。
* "温度改变了模型知道的东西"：模型知道的都在打分 (logits) 里；``temperature_effect`` 对同一组打分换温度，
  概率变了、名次不变，打分本身一点没动。
* "生成时模型能看到后面的字"：``future_influence`` 改掉第 t 个字，前面每个位置的打分恰好不变（因果掩码）。
* "模型记住了原文"：``ngram_overlap`` 数写出的字里有多少连续 n 个字的片段在原文里出现过，``longest_copy`` 找最长
  原样照搬的一段；拿同一本书里没读过的正文、打乱了顺序的字作对照。

找圈和找照搬都是"两两比较"，花的时间（或内存）随长度的平方增长：每个函数在动手之前先按下面的上限检查长度，
超了就用中文报错说明上限和原因，而不是算上几个小时、或耗尽内存。第 9 章用到的长度（几百个字的生成、6 万字的训练文字）
都远在上限之内。

本模块只依赖 NumPy 和 ``core``。
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import _validation as check
from ..core.decoding import check_knobs, next_token_probs_unchecked
from .tiny_gpt import TinyGPT, check_tokens, forward

__all__ = ["find_loop", "temperature_effect", "future_influence", "ngram_overlap", "longest_copy",
           "MAX_LOOP_LENGTH", "MAX_GRAM_CHARS", "MAX_COPY_PAIRS"]

MAX_LOOP_LENGTH = 10_000  # find_loop：每个周期都要从头比一遍，时间 ∝ 长度²（"的"重复 1 万遍约要 4 秒）
MAX_GRAM_CHARS = 50_000_000  # ngram_overlap：reference 的全部 n-gram 一共存这么多个字（每字最多 4 字节，约 200 MB）
MAX_COPY_PAIRS = 1_000_000_000  # longest_copy：len(text) × len(reference) 的上限（约几秒；10 万 × 10 万要半分钟以上）


def _sequence(seq: object, name: str) -> list:
    """字符串或一维整数数组（字编号），不超过 ``MAX_LOOP_LENGTH`` 个；先查长度，再转成列表。"""
    if not (isinstance(seq, str) or isinstance(seq, np.ndarray) and seq.ndim == 1 and seq.dtype.kind in "iu"):
        raise TypeError(f"{name} 必须是字符串或一维整数数组（字编号），收到的是 {check.describe(seq)}。")
    if len(seq) > MAX_LOOP_LENGTH:
        raise ValueError(f"{name} 太长：收到 {len(seq)} 个字，上限是 MAX_LOOP_LENGTH = {MAX_LOOP_LENGTH}"
                         f"（找圈要把每个周期都从头比一遍，时间随长度的平方增长）。提示：只看结尾的一段，例如 {name}[-2000:]。")
    return list(seq) if isinstance(seq, str) else seq.tolist()


def find_loop(seq: str | np.ndarray, min_repeats: int = 3) -> dict[str, int] | None:
    """一段字的结尾是不是在原地打转：找周期 p，使最后 ``min_repeats`` × p 个字是同一小段重复 ``min_repeats`` 遍，
    再往前找到打转开始的地方；有几个周期都行时，取开始得最早的（一样早取最短的）。没有就返回 None。

    Raises
    ------
    TypeError
        ``seq`` 不是字符串或一维整数数组，``min_repeats`` 不是整数。
    ValueError
        ``seq`` 超过 ``MAX_LOOP_LENGTH`` 个字；``min_repeats`` 不在 [2, 10⁶] 之内。

    Returns
    -------
    dict or None
        ``period`` 周期 p；``start`` 从这里起到结尾，每个字都等于它后面第 p 个字（一直在转圈）。

    Examples
    --------
    >>> find_loop("模型说：每个词的，每个词的，每个词的，")
    {'period': 5, 'start': 4}
    >>> find_loop("注意力就是加权平均") is None
    True
    """
    s = _sequence(seq, "seq")
    r = check.int_in_range(min_repeats, "min_repeats", 2, 10**6)
    found = []
    for p in range(1, len(s) // r + 1):
        tail = s[len(s) - r * p:]
        if all(tail[i] == tail[i + p] for i in range(len(tail) - p)):  # 最后 r·p 个字是同一段重复 r 遍
            start = len(s) - r * p
            while start > 0 and s[start - 1] == s[start - 1 + p]:  # 往前找打转开始的地方
                start -= 1
            found.append((start, p))
    if not found:
        return None
    start, period = min(found)  # 转得最久的那个圈（开始得最早），一样早时取最短的周期
    return {"period": period, "start": start}


def temperature_effect(logits: np.ndarray, temperatures: Sequence[float]) -> dict[str, np.ndarray]:
    """同一组打分，不同的温度：概率变了，名次没变。

    Returns
    -------
    dict
        ``probs`` (K, V) 每个温度下的概率；``entropy`` (K,) 每个分布的熵（以 e 为底，越大越"犹豫"）；
        ``ranking`` (K, V) 每个温度下按概率从大到小的字编号（并列时编号小的在前）。温度 > 0 时每一行都相同。

    Raises
    ------
    TypeError, ValueError
        ``logits`` 不是有限实数数组（规则同 ``next_token_probs``）；``temperatures`` 不是非空的列表，
        或其中有 ``next_token_probs`` 不接受的温度（报错指出是 ``temperatures[i]``）；
        温度的个数 × logits 的元素数超过内存预算（``_validation.MAX_BYTES``）。

    Examples
    --------
    >>> out = temperature_effect(np.array([2.0, 1.0, 0.0]), [0.5, 1.0, 2.0])
    >>> out["probs"].round(3)
    array([[0.867, 0.117, 0.016],
           [0.665, 0.245, 0.09 ],
           [0.506, 0.307, 0.186]])
    >>> out["ranking"].tolist(), bool(np.all(np.diff(out["entropy"]) > 0))
    ([[0, 1, 2], [0, 1, 2], [0, 1, 2]], True)
    """
    x = check.as_real_array(logits, "logits", min_ndim=1)  # (V,) 或 (..., V)
    temps = check.nonempty_sequence(temperatures, "temperatures", "[0.5, 1.0, 2.0]")
    check.memory_budget(len(temps) * x.size, x.itemsize, f"probs（{len(temps)} 个温度 × logits 的 {x.size} 个数）",
                        "提示：少换几个温度，或只取 logits 的最后一个位置 logits[-1]。")
    knobs = [check_knobs(t, None, None, x.shape[-1], temperature_name=f"temperatures[{i}]") for i, t in enumerate(temps)]
    probs = np.stack([next_token_probs_unchecked(x, *k) for k in knobs])  # (K, V)
    safe = np.where(probs > 0, probs, 1)  # (K, V) 概率为 0 的词不计入熵（0 · log 0 = 0）：log 1 = 0，不产生 0 · (−inf)
    entropy = -np.sum(probs * np.log(safe), axis=-1)  # (K,)
    return {"probs": probs, "entropy": entropy, "ranking": np.argsort(-probs, axis=-1, kind="stable")}


def future_influence(model: TinyGPT, tokens: np.ndarray, position: int, replacement: int) -> np.ndarray:
    """把第 ``position`` 个字换成 ``replacement``，每个位置的打分 (logits) 最多变了多少：(T,)。

    因果掩码让每个位置只看自己和前面，所以 ``position`` 之前的位置一点不变（恰好是 0），从它起才变。

    Examples
    --------
    >>> from transformer_lab.lessons.tiny_gpt import GPTConfig, init_gpt
    >>> model = init_gpt(GPTConfig(6, d_model=8, num_layers=2, num_heads=2, d_ff=16, context=6), np.random.default_rng(0))
    >>> change = future_influence(model, np.array([1, 2, 3, 4, 5]), position=3, replacement=0)
    >>> change[:3].tolist(), bool(np.all(change[3:] > 0))
    ([0.0, 0.0, 0.0], True)
    """
    tokens, config = check_tokens(model, tokens)
    if tokens.ndim != 1:
        raise ValueError(f"tokens 必须是一维的字编号，收到的 shape={tokens.shape}。")
    position = check.index(position, "position", tokens.size, f"tokens 只有 {tokens.size} 个字")
    replacement = check.index(replacement, "replacement", config.vocab_size, f"字表只有 V={config.vocab_size} 个字")
    changed = np.where(np.arange(tokens.size) == position, replacement, tokens)  # (T,) 新数组，不改 tokens
    before, _ = forward(model, tokens)  # (T, V)
    after, _ = forward(model, changed)  # (T, V)
    return np.max(np.abs(after - before), axis=-1)  # (T,)


def _text(x: object, name: str) -> str:
    if not isinstance(x, str):
        raise TypeError(f"{name} 必须是非空字符串，收到的是 {check.describe(x)}。")
    if not x:
        raise ValueError(f"{name} 必须是非空字符串，收到的是空字符串 ''。")
    return x


def _cost(amount: int, limit: int, what: str, hint: str) -> None:
    """算之前先估算：``amount``（要比较的对数、要存的字数）超过 ``limit`` 就报错，写明怎么算的、上限和提示。"""
    if amount > limit:
        raise ValueError(f"{what}，超过上限 {limit:,}。{hint}")


def ngram_overlap(text: str, reference: str, n: int) -> float:
    """``text`` 里连续 ``n`` 个字的片段 (n-gram) 有多大比例在 ``reference`` 里原样出现过（按出现次数算）。

    Raises
    ------
    TypeError
        参数不是字符串、``n`` 不是整数。
    ValueError
        ``text`` 或 ``reference`` 是空字符串；``n`` 不是正数，或 ``text`` 比 ``n`` 短（一个 n-gram 也没有）；
        reference 的全部 n-gram 一共超过 ``MAX_GRAM_CHARS`` 个字（内存）。

    Examples
    --------
    >>> ngram_overlap("注意力权重", "注意力就是权重", 2)       # 注意、意力、力权、权重：力权没出现过
    0.75
    """
    text, reference, n = _text(text, "text"), _text(reference, "reference"), check.positive_int(n, "n")
    if len(text) < n:
        raise ValueError(f"text 只有 {len(text)} 个字，比 n={n} 短，一个 {n}-gram 也没有。")
    count = max(len(reference) - n + 1, 0)  # reference 里有几个 n-gram
    _cost(count * n, MAX_GRAM_CHARS, f"reference 的全部 {n}-gram 一共 {count} × {n} = {count * n:,} 个字（要放进内存）",
          "提示：n 取小一些（第 9 章用 4），或缩短 reference。")
    seen = {reference[i:i + n] for i in range(count)}
    total = len(text) - n + 1
    return sum(text[i:i + n] in seen for i in range(total)) / total  # 逐个切片：text 的 n-gram 不同时放进内存


def longest_copy(text: str, reference: str) -> str:
    """``text`` 里在 ``reference`` 中原样出现过的最长一段（有几段一样长时取最靠前的）。

    Raises
    ------
    TypeError
        参数不是字符串。
    ValueError
        参数是空字符串；``len(text) × len(reference)`` 超过 ``MAX_COPY_PAIRS``（每个起点都要在 reference 里找一遍）。

    Examples
    --------
    >>> longest_copy("模型的注意力权重很大", "注意力权重加起来是 1")
    '注意力权重'
    """
    text, reference = _text(text, "text"), _text(reference, "reference")
    _cost(len(text) * len(reference), MAX_COPY_PAIRS,
          f"text 有 {len(text)} 个字、reference 有 {len(reference)} 个字：每个起点都要在 reference 里找一遍，"
          f"约 {len(text)} × {len(reference)} = {len(text) * len(reference):,} 次比较", "提示：只比较一段，例如 text[:2000]。")
    best = ""
    for i in range(len(text)):
        while i + len(best) < len(text) and text[i:i + len(best) + 1] in reference:  # 比目前最长的再长一个字
            best = text[i:i + len(best) + 1]
    return best
