"""小 GPT 怎样写字：一个字一个字地生成，以及用计算回答第 9 章的四个常见误区。

生成的每一步::

    logits = 模型(前文)[最后一个位置]        (V,)   对下一个字的打分
    p      = next_token_probs(logits, 温度, top_k, top_p)
    下一个字 = argmax(p)（贪心）或按 p 抽一个（采样；随机数只来自传入的 rng）
    前文 += 下一个字，回到第一行

``generate`` 用第 7 章的 KV 缓存（每层一个，``core.decoder.decoder_layer_step``）：每一步只算新来的那个字。
``generate_recompute`` 每一步把整段前文重新过一遍所有层——结果相同（测试核对到 1e-12），只是慢得多。

常见误区的计算：``find_loop``（贪心会原地打转）、``temperature_effect``（温度不改模型知道的东西）、
``future_influence``（改后面的字，前面的输出一点不变）、``ngram_overlap`` 和 ``longest_copy``（写出来的字和原文有多少重合）。
本模块只依赖 NumPy 和 ``core``。
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .. import _validation as check
from ..core.decoder import decoder_layer_step, decoder_layer_step_unchecked, layer_cache
from ..core.encoder import check_layer_params
from ..core.decoding import next_token_probs
from .corpus import decode, encode
from .tiny_gpt import (NUM_HEADS, check_gpt, check_tokens, embed_unchecked, forward, hidden_states, layer_params,
                       output_vjp_unchecked)

__all__ = ["generate", "generate_recompute", "generate_text", "checkpoint_samples", "find_loop",
           "temperature_effect", "future_influence", "ngram_overlap", "longest_copy"]


def _check_generation(params, prompt, num_new, rng, temperature):
    prompt, info = check_tokens(params, prompt, "prompt")
    if prompt.ndim != 1:
        raise ValueError(f"prompt 必须是一维的字编号（一段提示词），收到的 shape={prompt.shape}。")
    n = check.positive_int(num_new, "num_new")
    if prompt.size + n - 1 > info["context"]:
        raise ValueError(f"提示词 {prompt.size} 个字加上要生成的 {n} 个字超过了模型的上下文长度 context={info['context']}"
                         f"（最后一个新字不必再读进模型，所以要求 {prompt.size} + {n} - 1 <= {info['context']}）。")
    if temperature != 0 or rng is not None:  # 贪心不需要随机数；给了就检查
        rng = check.generator(rng)
    return prompt, n, rng, info


def _pick(probs: np.ndarray, rng: np.random.Generator | None, greedy: bool) -> int:
    """贪心取概率最大的（并列取编号最小的）；否则按 probs 抽一个——转轮盘：把 [0, 1) 按概率切成一段一段，
    rng 随机扎一针，扎在第几段就取第几个字（概率为 0 的字段长为 0，永远扎不到）。"""
    if greedy:
        return int(np.argmax(probs))
    edges = np.cumsum(probs)  # (V,) 每一段的右端
    return int(np.searchsorted(edges, rng.random() * edges[-1], side="right"))  # 第一个右端 > 针的那一段


def generate(params: Mapping[str, np.ndarray], prompt: np.ndarray, num_new: int, rng: np.random.Generator | None = None,
             temperature: float = 0.0, top_k: int | None = None, top_p: float | None = None,
             num_heads: int = NUM_HEADS) -> dict[str, np.ndarray]:
    """接着提示词写 ``num_new`` 个字，用 KV 缓存（每层一个）：提示词一次读进去，之后每步只读新来的 1 个字。

    Parameters
    ----------
    params : mapping
        小 GPT 的参数（``tiny_gpt.init_gpt`` 或训练出来的检查点）。
    prompt : ndarray of int, shape (P,)
        提示词的字编号，至少 1 个。P + num_new - 1 不能超过模型的上下文长度。
    num_new : int
        要写几个字。
    rng : np.random.Generator, optional
        采样用的随机数；``temperature=0``（贪心）时不需要。
    temperature, top_k, top_p
        交给 ``next_token_probs``；``temperature=0`` 是贪心。

    Returns
    -------
    dict
        ``tokens`` (num_new,) 写出的字；``probs`` (num_new, V) 每一步抽字用的概率；
        ``attention`` (num_new, L, H, S) 每一步最新读进的那个字对前文（含它自己）的注意力，S = P + num_new - 1，
        还没写出来的位置是 0；``cache_length`` (num_new,) 每一步之后 KV 缓存里存了几个字（= 能看到的前文长度）。

    Raises
    ------
    TypeError, ValueError
        参数不对、提示词有越界的编号、超出上下文长度、采样却没给 ``rng``，以及 ``next_token_probs`` 的报错。

    Examples
    --------
    >>> from transformer_lab.lessons.tiny_gpt import init_gpt
    >>> p = init_gpt(6, np.random.default_rng(0), d_model=8, num_layers=2, d_ff=16, context=8)
    >>> out = generate(p, np.array([1, 2]), 4, num_heads=2)                 # 贪心
    >>> out["tokens"].shape, out["attention"].shape, out["cache_length"].tolist()
    ((4,), (4, 2, 2, 5), [2, 3, 4, 5])
    >>> bool(np.array_equal(out["tokens"], generate_recompute(p, np.array([1, 2]), 4, num_heads=2)["tokens"]))
    True
    """
    prompt, n, rng, info = _check_generation(params, prompt, num_new, rng, temperature)
    L, D, S = info["num_layers"], info["d_model"], prompt.size + n - 1
    layers = [check_layer_params(layer_params(params, layer), D) for layer in range(L)]  # 参数在循环外检查一次
    caches = [layer_cache(S, D, num_heads) for _ in range(L)]
    tokens, probs, attention = [], [], np.zeros((n, L, num_heads, S))  # (num_new, L, H, S)
    x = embed_unchecked(params, prompt)  # (P, D) 提示词一次读进去
    for step in range(n):
        for layer in range(L):
            if step == 0 and layer == 0:  # 第一次走带检查的入口（头数、缓存的形状）；之后每一步直接计算
                x, w = decoder_layer_step(x, layers[layer], num_heads, caches[layer])  # (P, D), (H, P, P)
            else:
                x, w = decoder_layer_step_unchecked(x, layers[layer], num_heads, caches[layer])  # (t, D), (H, t, S_now)
            attention[step, layer, :, : w.shape[-1]] = w[:, -1]  # (H, S_now) 最新读进的那个字看前文
        logits, _ = output_vjp_unchecked(params, x[-1])  # (V,)
        p = next_token_probs(logits, temperature, top_k, top_p)  # (V,)
        tokens.append(_pick(p, rng, temperature == 0))
        probs.append(p)
        if step < n - 1:
            x = embed_unchecked(params, np.array(tokens[-1:]), start=prompt.size + step)  # (1, D) 只读新来的字
    return {"tokens": np.array(tokens), "probs": np.stack(probs), "attention": attention,
            "cache_length": np.arange(prompt.size, S + 1)}


def generate_recompute(params: Mapping[str, np.ndarray], prompt: np.ndarray, num_new: int,
                       rng: np.random.Generator | None = None, temperature: float = 0.0, top_k: int | None = None,
                       top_p: float | None = None, num_heads: int = NUM_HEADS) -> dict[str, np.ndarray]:
    """和 ``generate`` 一样写字，但不用缓存：每一步把整段前文重新过一遍所有层（只对最后一个位置打分）。

    参数、报错与 ``generate`` 相同；返回 ``tokens`` 和 ``probs``。同样的 ``rng`` 状态给出同样的字。
    """
    prompt, n, rng, _ = _check_generation(params, prompt, num_new, rng, temperature)
    ids, probs = list(prompt), []
    for _ in range(n):
        h, _ = hidden_states(params, np.array(ids), num_heads)  # (t, D) 整段重算
        p = next_token_probs(output_vjp_unchecked(params, h[-1])[0], temperature, top_k, top_p)  # (V,)
        ids.append(_pick(p, rng, temperature == 0))
        probs.append(p)
    return {"tokens": np.array(ids[prompt.size:]), "probs": np.stack(probs)}


def generate_text(params: Mapping[str, np.ndarray], chars: str, prompt: str, num_new: int,
                  rng: np.random.Generator | None = None, temperature: float = 0.0, top_k: int | None = None,
                  top_p: float | None = None, num_heads: int = NUM_HEADS) -> str:
    """``generate`` 的文字版：提示词是字符串（每个字都要在字表 ``chars`` 里），返回提示词加上写出的字。

    Examples
    --------
    >>> from transformer_lab.lessons.tiny_gpt import init_gpt
    >>> p = init_gpt(4, np.random.default_rng(0), d_model=8, num_layers=1, d_ff=8, context=8)
    >>> text = generate_text(p, "甲乙丙丁", "甲", 5, num_heads=2)
    >>> len(text), text[0]
    (6, '甲')
    """
    out = generate(params, encode(prompt, chars), num_new, rng, temperature, top_k, top_p, num_heads)
    return prompt + decode(out["tokens"], chars)


def checkpoint_samples(run: Mapping, prompts: Sequence[str], num_new: int, temperature: float, seed: int,
                       num_heads: int = NUM_HEADS) -> np.ndarray:
    """每个检查点、每个提示词写一段字：(C, len(prompts)) 的字符串数组。每段都用 ``default_rng(seed)`` 重新开始，
    所以不同检查点之间的差别只来自模型本身。"""
    seed = check.nonnegative_int(seed, "seed")
    return np.array([[generate_text(p, run["chars"], prompt, num_new, np.random.default_rng(seed), temperature,
                                    num_heads=num_heads) for prompt in prompts] for p in run["checkpoints"]])


# ---------------------------------------------------------------- 常见误区，用计算回答


def _sequence(seq: object, name: str) -> list:
    if isinstance(seq, str):
        return list(seq)
    if isinstance(seq, np.ndarray) and seq.ndim == 1 and seq.dtype.kind in "iu":
        return seq.tolist()
    raise TypeError(f"{name} 必须是字符串或一维整数数组（字编号），收到的是 {check.describe(seq)}。")


def find_loop(seq: str | np.ndarray, min_repeats: int = 3) -> dict[str, int] | None:
    """一段字的结尾是不是在原地打转：找周期 p，使最后 ``min_repeats`` × p 个字是同一小段重复 ``min_repeats`` 遍，
    再往前找到打转开始的地方；有几个周期都行时，取开始得最早的（一样早取最短的）。没有就返回 None。

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
        ``temperatures`` 不是非空的列表，或其中有 ``next_token_probs`` 不接受的温度。

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
    temps = check.nonempty_sequence(temperatures, "temperatures", "[0.5, 1.0, 2.0]")
    probs = np.stack([next_token_probs(logits, t) for t in temps])  # (K, V)
    with np.errstate(divide="ignore"):
        entropy = -np.sum(np.where(probs > 0, probs * np.log(probs), 0.0), axis=-1)  # (K,)
    return {"probs": probs, "entropy": entropy, "ranking": np.argsort(-probs, axis=-1, kind="stable")}


def future_influence(params: Mapping[str, np.ndarray], tokens: np.ndarray, position: int, replacement: int,
                     num_heads: int = NUM_HEADS) -> np.ndarray:
    """把第 ``position`` 个字换成 ``replacement``，每个位置的打分 (logits) 最多变了多少：(T,)。

    因果掩码让每个位置只看自己和前面，所以 ``position`` 之前的位置一点不变（恰好是 0），从它起才变。

    Examples
    --------
    >>> from transformer_lab.lessons.tiny_gpt import init_gpt
    >>> p = init_gpt(6, np.random.default_rng(0), d_model=8, num_layers=2, d_ff=16, context=6)
    >>> change = future_influence(p, np.array([1, 2, 3, 4, 5]), position=3, replacement=0, num_heads=2)
    >>> change[:3].tolist(), bool(np.all(change[3:] > 0))
    ([0.0, 0.0, 0.0], True)
    """
    tokens, info = check_tokens(params, tokens)
    if tokens.ndim != 1:
        raise ValueError(f"tokens 必须是一维的字编号，收到的 shape={tokens.shape}。")
    position = check.index(position, "position", tokens.size, f"tokens 只有 {tokens.size} 个字")
    replacement = check.index(replacement, "replacement", info["vocab_size"], f"字表只有 V={info['vocab_size']} 个字")
    changed = np.where(np.arange(tokens.size) == position, replacement, tokens)  # (T,) 新数组，不改 tokens
    before, _ = forward(params, tokens, num_heads)  # (T, V)
    after, _ = forward(params, changed, num_heads)  # (T, V)
    return np.max(np.abs(after - before), axis=-1)  # (T,)


def _text(x: object, name: str) -> str:
    if not isinstance(x, str) or not x:
        raise TypeError(f"{name} 必须是非空字符串，收到的是 {check.describe(x)}。")
    return x


def ngram_overlap(text: str, reference: str, n: int) -> float:
    """``text`` 里连续 ``n`` 个字的片段 (n-gram) 有多大比例在 ``reference`` 里原样出现过（按出现次数算）。

    Raises
    ------
    TypeError
        参数不是非空字符串、``n`` 不是整数。
    ValueError
        ``n`` 不是正数，或 ``text`` 比 ``n`` 短（一个 n-gram 也没有）。

    Examples
    --------
    >>> ngram_overlap("注意力权重", "注意力就是权重", 2)       # 注意、意力、力权、权重：力权没出现过
    0.75
    """
    text, reference, n = _text(text, "text"), _text(reference, "reference"), check.positive_int(n, "n")
    if len(text) < n:
        raise ValueError(f"text 只有 {len(text)} 个字，比 n={n} 短，一个 {n}-gram 也没有。")
    seen = {reference[i:i + n] for i in range(len(reference) - n + 1)}
    grams = [text[i:i + n] for i in range(len(text) - n + 1)]
    return sum(g in seen for g in grams) / len(grams)


def longest_copy(text: str, reference: str) -> str:
    """``text`` 里在 ``reference`` 中原样出现过的最长一段（有几段一样长时取最靠前的）。

    Examples
    --------
    >>> longest_copy("模型的注意力权重很大", "注意力权重加起来是 1")
    '注意力权重'
    """
    text, reference = _text(text, "text"), _text(reference, "reference")
    best = ""
    for i in range(len(text)):
        while i + len(best) < len(text) and text[i:i + len(best) + 1] in reference:  # 比目前最长的再长一个字
            best = text[i:i + len(best) + 1]
    return best
