"""小 GPT 怎样写字：一个字一个字地生成。

生成的每一步::

    logits = 模型(前文)[最后一个位置]        (V,)   对下一个字的打分
    p      = next_token_probs(logits, 温度, top_k, top_p)
    下一个字 = argmax(p)（贪心）或按 p 抽一个（采样；随机数只来自传入的 rng）
    前文 += 下一个字，回到第一行

``generate`` 用第 7 章的 KV 缓存（每层一个）：提示词走带检查的 ``core.decoder.decoder_layer_step``，之后每一步只算
新来的那个字，走不做检查的快路 ``decoder_token_step_fast``（参数在循环外检查过一次）。
``generate_recompute`` 每一步把整段前文重新过一遍所有层——结果相同（测试核对到 1e-12），只是慢得多。

``next_token_logits`` 给出一段提示词之后对下一个字的打分（第 9 章的概率条形图），``generation_trace`` 记下一次生成的
每一步：最新的字看前文的注意力、KV 缓存的长度、抽字用的概率（第 9 章的逐步演示）。本模块只依赖 NumPy 和 ``core``。
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .. import _validation as check
from ..core.decoder import decoder_layer_step, decoder_token_step_fast, fast_layer_norm, layer_cache
from ..core.decoding import next_token_probs
from ..core.encoder import check_layer_params
from .corpus import decode, encode
from .tiny_gpt import (
    NUM_HEADS,
    check_gpt,
    check_tokens,
    embed_unchecked,
    hidden_states,
    layer_params,
    output_vjp_unchecked,
)

__all__ = ["generate", "generate_recompute", "generate_text", "next_token_logits", "generation_trace",
           "checkpoint_samples"]


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
    L, D, S, P = info["num_layers"], info["d_model"], prompt.size + n - 1, prompt.size
    layers = [check_layer_params(layer_params(params, layer), D) for layer in range(L)]  # 参数在循环外检查一次
    caches = [layer_cache(P, D, num_heads) for _ in range(L)]  # 提示词走带检查的一步
    keys = np.zeros((L, num_heads, S, D // num_heads))  # (L, H, S, d_k) 之后的快路：每层的缓存就是这两个数组
    values = np.zeros_like(keys)
    tokens, probs, attention = [], [], np.zeros((n, L, num_heads, S))  # (num_new, L, H, S)
    x = embed_unchecked(params, prompt)  # (P, D) 提示词一次读进去
    for layer in range(L):
        x, w = decoder_layer_step(x, layers[layer], num_heads, caches[layer])  # (P, D), (H, P, P)
        keys[layer, :, :P], values[layer, :, :P] = caches[layer].keys, caches[layer].values  # (H, P, d_k)
        attention[0, layer, :, :P] = w[:, -1]  # (H, P) 提示词最后一个字看前文
    for step in range(n):
        if step > 0:  # 只读新来的 1 个字，走快路（decoder_token_step_fast，测试核对它与带检查的一步相同）
            x = embed_unchecked(params, np.array(tokens[-1:]), start=P + step - 1)  # (1, D)
            for layer in range(L):
                x, w = decoder_token_step_fast(x, layers[layer], num_heads, keys[layer], values[layer], P + step - 1)
                attention[step, layer, :, : P + step] = w[:, -1]  # (H, S_now) 最新读进的那个字看前文
        logits = fast_layer_norm(x[-1], params["lnf_gamma"], params["lnf_beta"]) @ params["w_out"] + params["b_out"]
        p = next_token_probs(logits, temperature, top_k, top_p)  # (V,)
        tokens.append(_pick(p, rng, temperature == 0))
        probs.append(p)
    return {"tokens": np.array(tokens), "probs": np.stack(probs), "attention": attention,
            "cache_length": np.arange(P, S + 1)}


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


def next_token_logits(params: Mapping[str, np.ndarray], chars: str, prompt: str,
                      num_heads: int = NUM_HEADS) -> np.ndarray:
    """读完提示词 ``prompt`` 之后，模型对下一个字的打分 (V,)：最后一个位置的向量 × 输出矩阵。
    交给 ``next_token_probs`` 就是"下一个字是字表里每个字的概率"。提示词比上下文长时只看最后 context 个字。

    Examples
    --------
    >>> from transformer_lab.lessons.tiny_gpt import init_gpt
    >>> p = init_gpt(4, np.random.default_rng(0), d_model=8, num_layers=1, d_ff=8, context=8)
    >>> next_token_logits(p, "甲乙丙丁", "丙甲乙", num_heads=2).shape
    (4,)
    """
    ids = encode(prompt, chars)  # (P,)
    tail = ids[-check_gpt(params)["context"]:]  # 最多 context 个字
    h, _ = hidden_states(params, tail, num_heads)  # (P, D)
    return output_vjp_unchecked(params, h[-1])[0]  # (V,)


def generation_trace(params: Mapping[str, np.ndarray], chars: str, prompt: str, num_new: int,
                     rng: np.random.Generator | None = None, temperature: float = 0.0, top_k: int | None = None,
                     top_p: float | None = None, num_heads: int = NUM_HEADS) -> dict:
    """一次生成的逐步记录（第 9 章一步一步地看）：``generate`` 的全部结果，另加用字写的 ``context``。

    Returns
    -------
    dict
        ``context``：提示词加上写出的字，一个字一项（长 P + num_new）；``new``：写出的字；第 s 步读进的最新的字是
        ``context[cache_length[s] - 1]``，它看的前文是 ``context[:cache_length[s]]``，注意力是 ``attention[s]``
        (L, H, S)，抽第 s 个新字用的概率是 ``probs[s]`` (V,)。其余同 ``generate``。
    """
    out = generate(params, encode(prompt, chars), num_new, rng, temperature, top_k, top_p, num_heads)
    new = decode(out["tokens"], chars)
    return out | {"context": list(prompt + new), "new": new}


def checkpoint_samples(run: Mapping, prompts: Sequence[str], num_new: int, temperature: float, seed: int,
                       num_heads: int = NUM_HEADS) -> np.ndarray:
    """每个检查点、每个提示词写一段字：(C, len(prompts)) 的字符串数组。每段都用 ``default_rng(seed)`` 重新开始，
    所以不同检查点之间的差别只来自模型本身。

    Raises
    ------
    TypeError, ValueError
        ``run`` 不是带 ``checkpoints``、``chars`` 的训练结果，``prompts`` 不是字符串列表，``seed`` 不是 [0, 2³² − 1] 里的整数；
        其余同 ``generate_text``。
    """
    seed = check.seed(seed)
    if not isinstance(run, Mapping) or "checkpoints" not in run or "chars" not in run:
        raise TypeError(f"run 必须是 tiny_gpt.train 那样的训练结果（含 checkpoints、chars），收到的是 {check.describe(run)}。")
    prompts = check.string_list(prompts, "prompts")
    return np.array([[generate_text(p, run["chars"], prompt, num_new, np.random.default_rng(seed), temperature,
                                    num_heads=num_heads) for prompt in prompts] for p in run["checkpoints"]])
