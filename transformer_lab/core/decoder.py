"""逐词生成的一步 (decoding step)：带因果掩码的那一层，配上第 7 章的 KV 缓存，每次只算新来的词。

GPT 一类的模型（只有解码器 (decoder-only)）每一层就是第 8 章的那一层，传 ``mask=causal_mask(T)``：
第 t 个位置只看自己和前面。生成时每多一个词就重算整段 T 个位置，前面 T - 1 个位置的结果其实一点没变——
因果掩码保证了它们看不到新词。所以只算新词就够了：

1. 新词（n 个，通常 1 个）的 LN、Q、K、V 投影，和整层里一模一样；
2. 新词的 k、v 追加进这一层的 KV 缓存（每层一个，批维度是 ``(H,)``）；
3. 新词的 q 看缓存里的全部键（它自己和之前的所有词），得到一行注意力权重；
4. 输出投影、残差、LN、前馈网络，和整层里一模一样。

这一步**不另写一遍层的数学**：它就是 ``encoder.encoder_layer_unchecked``（只做前向，``with_backward=False``），
只把其中的多头注意力换成 ``cached_attention(cache)``（同样的 ``linear``、``split``、``attend``、``merge`` 零件，
键和值从缓存里取）。提示词（n 个词一起）和之后的每一个词走的都是这同一步、同一个第 7 章的 ``KVCache``；
生成的循环在循环外检查一次参数，之后每一步直接调用 ``decoder_layer_step_unchecked``。
测试逐步核对：每一步的输出与对整段重新做因果计算的结果相差不到 1e-12 (float64)。

本模块只依赖 NumPy。形状字母：n 新词数，S 缓存里的词数（含新词），H 头数，D = d_model，d_k = D // H。
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .. import _validation as check
from .attention import attend
from .encoder import check_layer_params, encoder_layer_unchecked
from .kv_cache import KVCache
from .linear import linear
from .multihead import merge, split

__all__ = ["layer_cache", "cached_attention", "decoder_layer_step", "decoder_layer_step_unchecked"]

# 删掉的旧名字 → 现在怎么做（旧名字给出中文提示，而不是英文的 AttributeError）
_REMOVED = {
    "decoder_token_step_fast": "decoder_layer_step_unchecked(x_new, p, H, cache)：每个词（提示词和之后的词）都走同一层、"
                               "同一个 KVCache，不再有手写的第二份层",
    "fast_layer_norm": "core.layer_norm.layer_norm（普通大小的输入它自己就走快路，极大、极小的输入也算得对）",
}


def layer_cache(capacity: int, d_model: int, num_heads: int, batch_shape: tuple = ()) -> KVCache:
    """一层的 KV 缓存：每个头存 ``capacity`` 个词的 k、v（各 d_k = D // H 维），批维度 ``batch_shape + (H,)``。

    Raises
    ------
    TypeError, ValueError
        参数不是正整数，或 D 不能被 num_heads 整除。

    Examples
    --------
    >>> cache = layer_cache(capacity=10, d_model=8, num_heads=2)
    >>> cache.batch_shape, cache.d_k, cache.length
    ((2,), 4, 0)
    """
    D, H = check.positive_int(d_model, "d_model"), check.positive_int(num_heads, "num_heads")
    check.heads_divide(D, H, source="")
    return KVCache(capacity, D // H, batch_shape=tuple(batch_shape) + (H,))


def _new_rows_mask(n: int, S: int) -> np.ndarray | None:
    """n 个新词接在 S - n 个旧词之后：新词 i 看键 j <= i + (S - n)。只有 1 个新词时它什么都能看，不要掩码。"""
    if n == 1:
        return None
    return np.arange(S)[None, :] <= np.arange(n)[:, None] + (S - n)  # (n, S)


def _no_backward(grad_out):
    raise ValueError("逐词生成的一步只做前向：KV 缓存里的键和值不带反向函数。训练请用 encoder_layer_vjp 对整段计算。")


def cached_attention(cache: KVCache):
    """一个多头注意力函数（签名同 ``multi_head_attention_vjp_unchecked``），键和值来自 ``cache``：
    先把新词的 k、v 追加进缓存（不再检查：缓存与这一层对得上、放得下，调用者查过），再让新词的 q 看缓存里的全部键。
    返回 ``(out, weights, backward)``，weights 形状 (..., H, n, S)；backward 只会报错（生成不训练）。``kv`` 就是新词自己（自注意力），``mask`` 不用：
    新词与缓存的因果关系由缓存的长度决定。"""

    def attention(x, kv, ws, bs, H, mask):
        (w_q, w_k, w_v, w_o), (b_q, b_k, b_v, b_o) = ws, bs
        q = split(linear(x, w_q, b_q, "查询投影 x @ w_q"), H)  # (..., H, n, d_k)
        cache.append_unchecked(split(linear(kv, w_k, b_k, "键投影 @ w_k"), H),  # (..., H, n, d_k) 新词的键
                               split(linear(kv, w_v, b_v, "值投影 @ w_v"), H))  # (..., H, n, d_k) 新词的值
        n, S = q.shape[-2], cache.length
        heads, weights = attend(q, cache.keys, cache.values, _new_rows_mask(n, S))  # (..., H, n, d_k), (..., H, n, S)
        return linear(merge(heads), w_o, b_o, "输出投影 @ w_o"), weights, _no_backward  # (..., n, D)

    return attention


def _check_cache(cache: object, lead: tuple[int, ...], D: int, H: int, n: int) -> KVCache:
    if not isinstance(cache, KVCache):
        raise TypeError(f"cache 必须是 KVCache，收到的是 {check.describe(cache)}。"
                        "提示：每一层一个，用 layer_cache(capacity, d_model, num_heads) 创建。")
    want = (lead + (H,), D // H, D // H)
    got = (cache.batch_shape, cache.d_k, cache.d_v)
    if got != want:
        raise ValueError(f"cache 与这一层对不上：期望 batch_shape={want[0]}、d_k=d_v={want[1]}（D={D}，H={H}），"
                         f"收到 batch_shape={got[0]}、d_k={got[1]}、d_v={got[2]}。"
                         "提示：用 layer_cache(capacity, d_model, num_heads) 创建。")
    if cache.length + n > cache.capacity:
        raise ValueError(f"KV 缓存已满：capacity={cache.capacity}，已存 {cache.length} 个词，放不下再来的 {n} 个。"
                         "提示：创建时把 capacity 设成提示词加上要生成的总词数。")
    return cache


def decoder_layer_step(
    x_new: np.ndarray,
    params: Mapping[str, np.ndarray],
    num_heads: int,
    cache: KVCache,
    norm_first: bool = True,
    eps: float = 1e-5,
) -> tuple[np.ndarray, np.ndarray]:
    """带因果掩码的一层，只算新来的 n 个词：它们的 k、v 追加进 ``cache``，它们的 q 看缓存里的全部词。

    依次把一段 (T, D) 的输入切成几块喂进来（第一块是整段提示词，之后每次 1 个词），拼起来的输出就等于
    ``encoder_layer(x, params, num_heads, mask=causal_mask(T), norm_first=norm_first)[0]``（float64 下相差
    不到 1e-12）。**会改变** ``cache``（追加新词的 k、v）；不改变任何输入数组。

    Parameters
    ----------
    x_new : ndarray of shape (..., n, D)
        新来的 n 个词在这一层的输入，接在缓存里已有的词之后。
    params : mapping
        这一层的 16 个参数（同 ``encoder_layer``）。
    num_heads : int
        头数 H，必须整除 D。
    cache : KVCache
        这一层的缓存（``layer_cache`` 创建），批维度是 ``x_new`` 的前导维度 + ``(H,)``，d_k = D // H。
    norm_first : bool, default True
        True = 前归一化 (pre-LN，GPT 用的)；False = 论文的后归一化 (post-LN)。必须与整段计算时相同。
    eps : float, default 1e-5

    Returns
    -------
    out : ndarray of shape (..., n, D)
    weights : ndarray of shape (..., H, n, S)
        新词对缓存里 S 个词（含它们自己）的注意力权重；只有 1 个新词时，就是最新的词看整段前文的那一行。

    Raises
    ------
    TypeError
        ``x_new`` 不是实数数组、``cache`` 不是 KVCache、``norm_first`` 不是 bool 等。
    ValueError
        参数缺键或形状不对、D 不能被 num_heads 整除、缓存与这一层对不上或放不下（这些检查都在追加之前）；
        输入有限但投影、注意力分数、残差或前馈网络溢出（在追加之后才发现的，缓存也撤回到这一步之前）。
        出错时缓存总是不变。

    Examples
    --------
    >>> import numpy as np
    >>> from transformer_lab.core.attention import causal_mask
    >>> from transformer_lab.core.encoder import encoder_layer, init_encoder_params
    >>> rng = np.random.default_rng(0)
    >>> params, x = init_encoder_params(8, 16, rng), rng.normal(size=(5, 8))       # (T=5, D=8)
    >>> cache = layer_cache(capacity=5, d_model=8, num_heads=2)
    >>> first, _ = decoder_layer_step(x[:3], params, 2, cache)                    # 提示词：3 个词一起进
    >>> outs = [decoder_layer_step(x[t:t + 1], params, 2, cache)[0] for t in (3, 4)]   # 之后每次 1 个词
    >>> full, _ = encoder_layer(x, params, 2, mask=causal_mask(5), norm_first=True)
    >>> bool(np.allclose(np.concatenate([first, *outs]), full, rtol=0, atol=1e-12)), cache.length
    (True, 5)
    """
    x_new = check.as_real_array(x_new, "x_new", min_ndim=2)
    H = check.positive_int(num_heads, "num_heads")
    D = x_new.shape[-1]
    check.heads_divide(D, H, source="x_new 的最后一维")
    p = check_layer_params(params, D)
    norm_first, eps = check.boolean(norm_first, "norm_first"), check.positive_real(eps, "eps")
    cache = _check_cache(cache, x_new.shape[:-2], D, H, x_new.shape[-2])
    return decoder_layer_step_unchecked(x_new, p, H, cache, norm_first, eps)


def decoder_layer_step_unchecked(x_new, p, H, cache, norm_first=True, eps=1e-5):
    """``decoder_layer_step`` 的计算本身（输入已检查过）。逐词生成的循环里，参数在循环外检查一次，每一步直接用它。

    就是 ``encoder_layer_unchecked``（``with_backward=False``：只做前向，不留反向要用的东西），注意力换成
    ``cached_attention(cache)``。新词的 k、v 在注意力那一步追加进缓存；之后任何一步出错（例如前馈网络溢出，
    或任何别的异常，连 KeyboardInterrupt 在内），缓存都撤回到这一步之前的长度再报错。
    """
    before = cache.length
    try:
        steps, _ = encoder_layer_unchecked(x_new, p, H, None, norm_first, eps, True, attention=cached_attention(cache),
                                           with_backward=False)
    except BaseException:  # 不只是溢出的 ValueError：np.errstate(all="raise") 的 FloatingPointError、MemoryError、Ctrl-C ……
        cache.truncate(before)  # 要么全做、要么全不做：撤回这一步追加的 k、v
        raise
    return steps["out"], steps["weights"]  # (..., n, D), (..., H, n, S)


def __getattr__(name: str):
    if name in _REMOVED:
        raise AttributeError(f"core.decoder.{name} 已经删掉了，请改用 {_REMOVED[name]}。")
    raise AttributeError(f"模块 {__name__} 没有属性 {name!r}")
