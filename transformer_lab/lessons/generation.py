"""小 GPT 怎样写字：一个字一个字地生成。

生成的每一步::

    logits = 模型(前文)[最后一个位置]        (V,)   对下一个字的打分
    p      = next_token_probs(logits, 温度, top_k, top_p)
    下一个字 = argmax(p)（贪心）或按 p 抽一个（采样；随机数只来自传入的 rng）
    前文 += 下一个字，回到第一行

``generate`` 用第 7 章的 KV 缓存（每层一个）：提示词一次读进去，之后每一步只读新来的那个字。提示词和之后的每个字
走的是**同一条路**：模型的 ``feed_unchecked``，也就是每层一次 ``core.decoder.decoder_layer_step_unchecked``
（第 8 章那一层，注意力看这一层的 ``KVCache``），再接输出端。模型、提示词、长度、三个旋钮在循环外检查一次，
循环里不再重复检查。``generate_recompute`` 每一步把整段前文重新过一遍所有层（小 GPT 的整段前向 ``tiny_gpt.hidden_states``，带因果掩码）
——结果相同（测试核对到 1e-12），只是慢得多。

``generate``（以及 ``generate_text``、``next_token_logits``、``generation_trace``、``checkpoint_samples``）只用到模型的
``config.vocab_size``、``config.context``、``new_caches(capacity)`` 和
``feed_unchecked(tokens, caches) -> (最后一个位置的打分 (V,), 每层的注意力)``，不碰小 GPT 的参数名：
别的模型提供同样的几样东西，就能走同一个生成循环。只有对照用的 ``generate_recompute`` 是小 GPT 专用的。

``next_token_logits`` 给出一段提示词之后对下一个字的打分（第 9 章的概率条形图），``generation_trace`` 记下一次生成的
每一步：最新的字看前文的注意力、KV 缓存的长度、抽字用的概率（第 9 章的逐步演示）。本模块只依赖 NumPy 和 ``core``。
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .. import _validation as check
from ..core.decoding import check_knobs, next_token_probs_unchecked
from .corpus import decode, encode
from .tiny_gpt import TinyGPT, hidden_states, output_logits

__all__ = ["generate", "generate_recompute", "generate_text", "next_token_logits", "generation_trace",
           "checkpoint_samples", "check_generator_model"]


def check_generator_model(model: object, name: str = "model"):
    """``model`` 能逐词生成：有 ``config``（带 ``vocab_size``、``context``）、``new_caches`` 和 ``feed_unchecked``。
    ``name`` 是它在报错里的名字（调用者传的参数，例如 ``run["checkpoints"][2]``）。

    Raises
    ------
    TypeError
        不是这样的模型（例如旧写法传的参数字典）。
    """
    config = getattr(model, "config", None)
    ok = all(callable(getattr(model, m, None)) for m in ("new_caches", "feed_unchecked")) and all(
        isinstance(getattr(config, a, None), int) for a in ("vocab_size", "context"))
    if not ok:
        hint = ("提示：头数等尺寸现在跟着模型走，训练结果的 run['checkpoints'][-1] 就是模型；不再单独传 num_heads。"
                if isinstance(model, Mapping) and name == "model" else "提示：用 tl.tiny_gpt.init_gpt(GPTConfig(...), rng) 生成一个。")
        raise TypeError(f"{name} 必须是能逐词生成的模型（例如 tl.tiny_gpt.TinyGPT：有 config、new_caches、feed_unchecked），"
                        f"收到的是 {check.describe(model)}。{hint}")
    return model


def _check_generation(model, prompt, num_new, rng, temperature, top_k, top_p):
    """生成的全部检查（循环外只做这一次）：模型、提示词、长度、随机数、三个旋钮。"""
    config = check_generator_model(model).config
    prompt = check.token_ids(prompt, "prompt", config.vocab_size)
    if prompt.ndim != 1 or prompt.size == 0:
        raise ValueError(f"prompt 必须是一维的字编号（一段提示词，至少 1 个字），收到的 shape={prompt.shape}。")
    n = check.positive_int(num_new, "num_new")
    if prompt.size + n - 1 > config.context:
        raise ValueError(f"prompt 的 {prompt.size} 个字加上要生成的 num_new={n} 个字超过了模型的上下文长度 context={config.context}"
                         f"（最后一个新字不必再读进模型，所以要求 {prompt.size} + {n} - 1 <= {config.context}）。")
    knobs = check_knobs(temperature, top_k, top_p, config.vocab_size)
    if knobs[0] != 0 or rng is not None:  # 贪心不需要随机数；给了就检查
        rng = check.generator(rng)
    return prompt, n, rng, knobs


def _check_chars(chars: object, vocab_size: int, name: str) -> str:
    """字表 ``chars`` 属于这个模型：是字符串，长度恰好是词表大小，每个字只出现一次（编号 i 就是第 i 个字）。"""
    if not isinstance(chars, str):
        raise TypeError(f"{name} 必须是字符串（模型的字表，第 i 个字就是编号 i），收到的是 {check.describe(chars)}。")
    if len(chars) != vocab_size:
        raise ValueError(f"{name} 不是这个模型的字表：模型的词表有 vocab_size={vocab_size} 个字，{name} 有 {len(chars)} 个字。"
                         "提示：用训练这个模型时的字表，例如训练结果的 run['chars']。")
    seen, repeated = set(), []
    for c in chars:
        if c in seen and c not in repeated:
            repeated.append(c)
        seen.add(c)
    if repeated:
        raise ValueError(f"{name} 里有重复的字：{''.join(repeated)!r}。字表里每个字只能出现一次，"
                         "否则一个字对应两个编号，模型写出的编号也译不回唯一的字。提示：用训练这个模型时的字表 run['chars']。")
    return chars


def _encode_prompt(model, chars: object, prompt: object, chars_name: str, prompt_name: str) -> tuple[str, str, np.ndarray]:
    """文字版的检查：模型、字表（属于这个模型）、提示词（非空字符串，每个字都在字表里）。报错用调用者的参数名。"""
    chars = _check_chars(chars, check_generator_model(model).config.vocab_size, chars_name)
    if not isinstance(prompt, str):
        raise TypeError(f"{prompt_name} 必须是字符串（提示词），收到的是 {check.describe(prompt)}。")
    if not prompt:
        raise ValueError(f"{prompt_name} 不能是空字符串：至少要有一个字。")
    unknown = sorted(set(prompt) - set(chars))
    if unknown:
        raise ValueError(f"{prompt_name} 里有字表中没有的字：{''.join(unknown)!r}（字表 {chars_name} 有 {len(chars)} 个字）。"
                         "提示：模型只认识训练语料里出现过的字，换几个常用字试试。")
    return chars, prompt, encode(prompt, chars)  # (P,)


def _pick(probs: np.ndarray, rng: np.random.Generator | None, greedy: bool) -> int:
    """贪心取概率最大的（并列取编号最小的）；否则按 probs 抽一个——转轮盘：把 [0, 1) 按概率切成一段一段，
    rng 随机扎一针，扎在第几段就取第几个字（概率为 0 的字段长为 0，永远扎不到）。"""
    if greedy:
        return int(np.argmax(probs))
    edges = np.cumsum(probs)  # (V,) 每一段的右端
    return int(np.searchsorted(edges, rng.random() * edges[-1], side="right"))  # 第一个右端 > 针的那一段


def generate(model, prompt: np.ndarray, num_new: int, rng: np.random.Generator | None = None,
             temperature: float = 0.0, top_k: int | None = None, top_p: float | None = None) -> dict[str, np.ndarray]:
    """接着提示词写 ``num_new`` 个字，用 KV 缓存（每层一个）：提示词一次读进去，之后每步只读新来的 1 个字。

    Parameters
    ----------
    model : TinyGPT
        小 GPT（``tiny_gpt.init_gpt`` 或训练结果的 ``run["checkpoints"][-1]``）；尺寸（含头数）在 ``model.config`` 里。
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
        不是模型（旧写法传参数字典会得到新写法的提示）、提示词有越界的编号、超出上下文长度、采样却没给 ``rng``，
        以及 ``next_token_probs`` 对三个旋钮的报错。

    Examples
    --------
    >>> from transformer_lab.lessons.tiny_gpt import GPTConfig, init_gpt
    >>> model = init_gpt(GPTConfig(6, d_model=8, num_layers=2, num_heads=2, d_ff=16, context=8), np.random.default_rng(0))
    >>> out = generate(model, np.array([1, 2]), 4)                          # 贪心
    >>> out["tokens"].shape, out["attention"].shape, out["cache_length"].tolist()
    ((4,), (4, 2, 2, 5), [2, 3, 4, 5])
    >>> bool(np.array_equal(out["tokens"], generate_recompute(model, np.array([1, 2]), 4)["tokens"]))
    True
    """
    prompt, n, rng, knobs = _check_generation(model, prompt, num_new, rng, temperature, top_k, top_p)
    S = prompt.size + n - 1  # 最后一个新字不必再读进模型
    caches = model.new_caches(S)
    tokens, probs, attention = [], [], None
    new = prompt  # 第一步读进整段提示词，之后每步只读上一步写出的 1 个字
    for step in range(n):
        logits, weights = model.feed_unchecked(new, caches)  # (V,), [(H, n_new, S_now)] × L
        if attention is None:
            attention = np.zeros((n, len(weights), weights[0].shape[-3], S))  # (num_new, L, H, S)
        for layer, w in enumerate(weights):
            attention[step, layer, :, : w.shape[-1]] = w[:, -1]  # (H, S_now) 最新读进的那个字看前文
        p = next_token_probs_unchecked(logits, *knobs)  # (V,)
        tokens.append(_pick(p, rng, knobs[0] == 0))
        probs.append(p)
        new = np.array(tokens[-1:])  # (1,)
    return {"tokens": np.array(tokens), "probs": np.stack(probs), "attention": attention,
            "cache_length": np.arange(prompt.size, S + 1)}


def generate_recompute(model: TinyGPT, prompt: np.ndarray, num_new: int, rng: np.random.Generator | None = None,
                       temperature: float = 0.0, top_k: int | None = None,
                       top_p: float | None = None) -> dict[str, np.ndarray]:
    """和 ``generate`` 一样写字，但不用缓存：每一步把整段前文重新过一遍所有层（小 GPT 的整段前向
    ``tiny_gpt.hidden_states``：第 8 章那一层带因果掩码，和训练时一样），只给最后一个位置打分。

    它是 ``generate`` 的独立对照（另一条计算路径：整段的因果掩码，而不是 KV 缓存）。参数、报错与 ``generate`` 相同；
    返回 ``tokens`` 和 ``probs``。同样的 ``rng`` 状态给出同样的字。

    Raises
    ------
    TypeError, ValueError
        与 ``generate`` 相同（``model`` 还必须是小 GPT ``TinyGPT``）。
    """
    prompt, n, rng, knobs = _check_generation(model, prompt, num_new, rng, temperature, top_k, top_p)
    ids, probs = list(prompt), []
    for _ in range(n):
        h, _ = hidden_states(model, np.array(ids))  # (t, D) 整段重算
        p = next_token_probs_unchecked(output_logits(model, h[-1]), *knobs)  # (V,) 只给最后一个位置打分
        ids.append(_pick(p, rng, knobs[0] == 0))
        probs.append(p)
    return {"tokens": np.array(ids[prompt.size:]), "probs": np.stack(probs)}


def generate_text(model, chars: str, prompt: str, num_new: int, rng: np.random.Generator | None = None,
                  temperature: float = 0.0, top_k: int | None = None, top_p: float | None = None) -> str:
    """``generate`` 的文字版：提示词是字符串（每个字都要在字表 ``chars`` 里），返回提示词加上写出的字。

    Raises
    ------
    TypeError, ValueError
        ``chars`` 不是这个模型的字表（不是字符串、长度不等于 ``model.config.vocab_size``、有重复的字）；
        ``prompt`` 不是字符串、是空串或有字表中没有的字；其余同 ``generate``。

    Examples
    --------
    >>> from transformer_lab.lessons.tiny_gpt import GPTConfig, init_gpt
    >>> model = init_gpt(GPTConfig(4, d_model=8, num_layers=1, num_heads=2, d_ff=8, context=8), np.random.default_rng(0))
    >>> text = generate_text(model, "甲乙丙丁", "甲", 5)
    >>> len(text), text[0]
    (6, '甲')
    """
    return _generate_text(model, chars, prompt, num_new, rng, (temperature, top_k, top_p), "chars", "prompt")


def _generate_text(model, chars, prompt, num_new, rng, knobs, chars_name, prompt_name) -> str:
    chars, prompt, ids = _encode_prompt(model, chars, prompt, chars_name, prompt_name)
    out = generate(model, ids, num_new, rng, *knobs)
    return prompt + decode(out["tokens"], chars)


def next_token_logits(model, chars: str, prompt: str) -> np.ndarray:
    """读完提示词 ``prompt`` 之后，模型对下一个字的打分 (V,)：最后一个位置的向量 × 输出矩阵。
    交给 ``next_token_probs`` 就是"下一个字是字表里每个字的概率"。提示词比上下文长时只看最后 context 个字。

    Raises
    ------
    TypeError, ValueError
        不是模型；``chars`` 不是这个模型的字表（同 ``generate_text``）；``prompt`` 不是字符串、是空串或有字表中没有的字。

    Examples
    --------
    >>> from transformer_lab.lessons.tiny_gpt import GPTConfig, init_gpt
    >>> model = init_gpt(GPTConfig(4, d_model=8, num_layers=1, num_heads=2, d_ff=8, context=8), np.random.default_rng(0))
    >>> next_token_logits(model, "甲乙丙丁", "丙甲乙").shape
    (4,)
    """
    _, _, ids = _encode_prompt(model, chars, prompt, "chars", "prompt")
    ids = ids[-model.config.context:]  # (P,) 最多 context 个字
    prompt_ids, _, _, _ = _check_generation(model, ids, 1, None, 0.0, None, None)
    return model.feed_unchecked(prompt_ids, model.new_caches(prompt_ids.size))[0]  # (V,)


def generation_trace(model, chars: str, prompt: str, num_new: int, rng: np.random.Generator | None = None,
                     temperature: float = 0.0, top_k: int | None = None, top_p: float | None = None) -> dict:
    """一次生成的逐步记录（第 9 章一步一步地看）：``generate`` 的全部结果，另加用字写的 ``context``。

    Returns
    -------
    dict
        ``context``：提示词加上写出的字，一个字一项（长 P + num_new）；``new``：写出的字；第 s 步读进的最新的字是
        ``context[cache_length[s] - 1]``，它看的前文是 ``context[:cache_length[s]]``，注意力是 ``attention[s]``
        (L, H, S)，抽第 s 个新字用的概率是 ``probs[s]`` (V,)。其余同 ``generate``。

    Raises
    ------
    TypeError, ValueError
        同 ``generate_text``。
    """
    chars, prompt, ids = _encode_prompt(model, chars, prompt, "chars", "prompt")
    out = generate(model, ids, num_new, rng, temperature, top_k, top_p)
    new = decode(out["tokens"], chars)
    return out | {"context": list(prompt + new), "new": new}


def checkpoint_samples(run: Mapping, prompts: Sequence[str], num_new: int, temperature: float,
                       seed: int) -> np.ndarray:
    """每个检查点、每个提示词写一段字：(C, len(prompts)) 的字符串数组。每段都用 ``default_rng(seed)`` 重新开始，
    所以不同检查点之间的差别只来自模型本身。

    Raises
    ------
    TypeError, ValueError
        ``run`` 不是带 ``checkpoints``（非空的模型列表；报错指出是 ``run["checkpoints"][j]``）、``chars`` 的训练结果，
        ``prompts`` 不是字符串列表，``seed`` 不是
        [0, 2³² − 1] 里的整数；``run["chars"]`` 不是这些模型的字表；其余同 ``generate_text``（提示词的报错指出是
        ``prompts[i]``）。
    """
    seed = check.seed(seed)
    if not isinstance(run, Mapping) or "checkpoints" not in run or "chars" not in run:
        raise TypeError(f"run 必须是 tiny_gpt.train 那样的训练结果（含 checkpoints、chars），收到的是 {check.describe(run)}。")
    prompts = check.string_list(prompts, "prompts")
    if not isinstance(run["checkpoints"], (list, tuple)):
        raise TypeError(f'run["checkpoints"] 必须是模型的列表或元组（每个检查点一个模型），收到的是 {check.describe(run["checkpoints"])}。')
    if not run["checkpoints"]:
        raise ValueError('run["checkpoints"] 不能是空的：至少要有一个检查点的模型。')
    for j, model in enumerate(run["checkpoints"]):  # 报错写明是哪一个检查点，而不是内部的 model
        check_generator_model(model, f'run["checkpoints"][{j}]')
    return np.array([[_generate_text(m, run["chars"], prompt, num_new, np.random.default_rng(seed), (temperature, None, None),
                                     'run["chars"]', f"prompts[{i}]")
                      for i, prompt in enumerate(prompts)] for m in run["checkpoints"]])
