"""第 12 章的真 GPT（SmolLM2-135M-Instruct，Llama 式解码器）的前向：全是 ``tl.core`` 的函数拼起来的。

每个词元的向量走 30 层，每层两个子层，都是“先归一化、再算、再加回残差”（pre-norm）::

    h = x + W_o · GQA(RoPE(W_q · RMSNorm(x)), RoPE(W_k · RMSNorm(x)), W_v · RMSNorm(x))     注意力子层
    x = h + SwiGLU(RMSNorm(h))                                                              前馈子层
    logits = RMSNorm(x) · Eᵀ                                                                输出层和词嵌入表是同一个 E

和 2017 年的 Transformer 比：后归一化 → 前归一化的 RMSNorm（``core.rms_norm``），ReLU → SwiGLU（``core.swiglu``），
正弦位置编码 → RoPE（``core.rotary``，base = 100000，相邻配对：GGUF 里 W_q、W_k 的行已被 llama.cpp 重排过），
多头 → 分组查询注意力（``core.gqa``：9 个查询头共用 3 个键值头，缓存是第 7 章的 ``KVCache``），
单独的输出矩阵 → 与词嵌入表共用（tied）。注意力本身是第 4 章的 ``attention.attend``（因果掩码、softmax）。

全程 float32：NumPy 2 里一个 float64 的数组标量就会把整条计算提升成 float64（慢 4–5 倍），所以缩放系数、ε 都是
Python 的 float。本模块只依赖 NumPy 和 ``core``。形状字母：n 新词元数，S 缓存里的词元数，D = 576，H = 9，
H_kv = 3，d_k = 64，d_ff = 1536，V = 49152，L = 30。
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..core.gqa import grouped_attend, new_rows_mask
from ..core.kv_cache import KVCache
from ..core.rms_norm import rms_norm_unchecked
from ..core.rotary import rotary_unchecked
from ..core.swiglu import swiglu_unchecked

__all__ = ["LlamaConfig", "config_from_metadata", "LAYER_NAMES", "tensor_names", "Layer", "layers", "new_caches",
           "forward"]


@dataclass(frozen=True)
class LlamaConfig:
    """尺寸：V 词表、D 宽度、L 层数、H 查询头、H_kv 键值头、d_ff 前馈宽度、context 上下文长度、ε、RoPE 的 base。"""

    vocab_size: int
    d_model: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    d_ff: int
    context: int
    eps: float
    rope_base: float

    @property
    def d_k(self) -> int:
        return self.d_model // self.num_heads


_KEYS = {"vocab_size": "llama.vocab_size", "d_model": "llama.embedding_length", "num_layers": "llama.block_count",
         "num_heads": "llama.attention.head_count", "num_kv_heads": "llama.attention.head_count_kv",
         "d_ff": "llama.feed_forward_length", "context": "llama.context_length"}
_FLOATS = {"eps": "llama.attention.layer_norm_rms_epsilon", "rope_base": "llama.rope.freq_base"}


def config_from_metadata(meta: Mapping, source: str) -> LlamaConfig:
    """GGUF 的元数据 → ``LlamaConfig``。

    Raises
    ------
    ValueError
        不是 llama 架构、缺键、尺寸不是正整数、ε 不在 (0, 1)、base 不大于 1，或头数对不上（D 不能被 H 整除、
        H 不是 H_kv 的整数倍、每头的维数不是偶数、``llama.rope.dimension_count`` 不等于每头的维数）。
    """
    if meta.get("general.architecture") != "llama":
        raise ValueError(f"{source} 的 general.architecture 是 {meta.get('general.architecture')!r}：本书只读 'llama'。")
    missing = [k for k in (*_KEYS.values(), *_FLOATS.values()) if k not in meta]
    if missing:
        raise ValueError(f"{source} 的元数据里缺少 {'、'.join(missing)}：读不出模型的尺寸。")
    sizes = {f: meta[k] for f, k in _KEYS.items()}
    bad = [f"{_KEYS[f]}={v!r}" for f, v in sizes.items() if type(v) is not int or v <= 0]
    eps, base = (meta[k] for k in _FLOATS.values())
    if not (type(eps) is float and 0 < eps < 1):
        bad.append(f"{_FLOATS['eps']}={eps!r}")
    if not (type(base) is float and 1 < base < 1e300):
        bad.append(f"{_FLOATS['rope_base']}={base!r}")
    if bad:
        raise ValueError(f"{source} 里这些尺寸应是正整数（ε 在 0 和 1 之间，base 大于 1），收到 {'、'.join(bad)}。")
    config = LlamaConfig(**sizes, eps=float(eps), rope_base=float(base))
    D, H, H_kv = config.d_model, config.num_heads, config.num_kv_heads
    rope_dims = meta.get("llama.rope.dimension_count", D // H if D % H == 0 else None)
    if D % H or H % H_kv or (D // H) % 2 or rope_dims != D // H:
        raise ValueError(f"{source} 的头数对不上：D={D} 要能被 H={H} 整除、每头的维数是偶数，H 要是 H_kv={H_kv} 的整数倍，"
                         f"llama.rope.dimension_count={rope_dims!r} 要等于每头的维数（本书只转整个头）。")
    return config


# 每层的张量：本书的名字 → GGUF 里 blk.N. 后面的名字。矩阵在 GGUF 里是 (out, in)，算的时候用转置视图 (in, out)。
LAYER_NAMES = {"attn_norm": "attn_norm.weight", "w_q": "attn_q.weight", "w_k": "attn_k.weight", "w_v": "attn_v.weight",
               "w_o": "attn_output.weight", "ffn_norm": "ffn_norm.weight", "w_gate": "ffn_gate.weight",
               "w_up": "ffn_up.weight", "w_down": "ffn_down.weight"}


def tensor_names(config: LlamaConfig) -> dict[str, tuple[int, ...]]:
    """模型需要的全部张量和它们的形状（NumPy 的顺序）：词嵌入表、最后的 RMSNorm、每层的 9 个。"""
    D, d_ff, kv = config.d_model, config.d_ff, config.num_kv_heads * config.d_k
    shapes = {"attn_norm": (D,), "w_q": (D, D), "w_k": (kv, D), "w_v": (kv, D), "w_o": (D, D), "ffn_norm": (D,),
              "w_gate": (d_ff, D), "w_up": (d_ff, D), "w_down": (D, d_ff)}
    out = {"token_embd.weight": (config.vocab_size, D), "output_norm.weight": (D,)}
    for i in range(config.num_layers):
        out.update({f"blk.{i}.{LAYER_NAMES[key]}": shape for key, shape in shapes.items()})
    return out


@dataclass(frozen=True)
class Layer:
    """一层的权重，按本书的约定摆好：矩阵是 (in, out)（state_dict 里 (out, in) 数组的转置视图，不占新内存）。"""

    attn_norm: np.ndarray  # (D,)
    w_q: np.ndarray  # (D, H · d_k)
    w_k: np.ndarray  # (D, H_kv · d_k)
    w_v: np.ndarray  # (D, H_kv · d_k)
    w_o: np.ndarray  # (H · d_k, D)
    ffn_norm: np.ndarray  # (D,)
    w_gate: np.ndarray  # (D, d_ff)
    w_up: np.ndarray  # (D, d_ff)
    w_down: np.ndarray  # (d_ff, D)


def layers(state_dict: Mapping[str, np.ndarray], config: LlamaConfig) -> tuple[Layer, ...]:
    """state_dict（GGUF 的名字）→ 每层一个 ``Layer``。"""
    def one(i: int) -> Layer:
        t = {key: state_dict[f"blk.{i}.{name}"] for key, name in LAYER_NAMES.items()}
        return Layer(**{key: (a if a.ndim == 1 else a.T) for key, a in t.items()})
    return tuple(one(i) for i in range(config.num_layers))


def new_caches(config: LlamaConfig, capacity: int) -> list[KVCache]:
    """每层一个第 7 章的 ``KVCache``：批维度 (H_kv,)，每头 d_k 维，float32。只存 H_kv = 3 组，不是 H = 9 组。"""
    return [KVCache(capacity, config.d_k, batch_shape=(config.num_kv_heads,), dtype=np.float32)
            for _ in range(config.num_layers)]


def _heads(x: np.ndarray, num: int) -> np.ndarray:
    return x.reshape(x.shape[0], num, -1).swapaxes(0, 1)  # (n, num · d_k) → (num, n, d_k)


def _attention(h: np.ndarray, w: Layer, config: LlamaConfig, cache: KVCache | None,
               start: int) -> tuple[np.ndarray, np.ndarray]:
    """注意力子层（不含残差）：投影、RoPE（从位置 start 起）、GQA。有缓存时新词的 k、v 先追加进去。"""
    q = rotary_unchecked(_heads(h @ w.w_q, config.num_heads), start, config.rope_base)  # (H, n, d_k)
    k = rotary_unchecked(_heads(h @ w.w_k, config.num_kv_heads), start, config.rope_base)  # (H_kv, n, d_k)
    v = _heads(h @ w.w_v, config.num_kv_heads)  # (H_kv, n, d_k)
    if cache is not None:
        cache.append_unchecked(k, v)  # 第 7 章的缓存：写进预先分配的下 n 格
        k, v = cache.keys, cache.values  # (H_kv, S, d_k)
    heads, weights = grouped_attend(q, k, v, new_rows_mask(q.shape[-2], k.shape[-2]))  # (H, n, d_k), (H, n, S)
    merged = heads.swapaxes(0, 1).reshape(h.shape[0], -1)  # (n, H · d_k)
    return merged @ w.w_o, weights  # (n, D)


def forward(embed: np.ndarray, norm: np.ndarray, blocks: tuple[Layer, ...], config: LlamaConfig, ids: np.ndarray,
            caches: list[KVCache] | None = None, all_positions: bool = True) -> tuple[np.ndarray, list[np.ndarray]]:
    """n 个词元走完整个模型（输入已检查过）。

    ``caches`` 为 None：这 n 个词元就是整段（位置 0…n−1，因果掩码）；否则它们接在缓存里已有的词元之后
    （位置从 ``caches[0].length`` 起），k、v 追加进每层的缓存。任何一步出错，缓存都撤回到这一步之前。

    Returns
    -------
    logits : ndarray of shape (n, V) 或 (V,)
        ``all_positions`` 为 False 时只给最后一个位置打分（生成时只要它，省下 (n − 1) × D × V 次乘加）。
    weights : list of ndarray (H, n, S)
        每层的注意力权重。
    """
    start = 0 if caches is None else caches[0].length
    before = [c.length for c in caches or ()]
    try:
        x = embed[ids]  # (n, D)
        weights = []
        for i, w in enumerate(blocks):
            out, a = _attention(rms_norm_unchecked(x, w.attn_norm, config.eps), w, config,
                                None if caches is None else caches[i], start)  # (n, D), (H, n, S)
            x = x + out  # (n, D) 残差
            x = x + swiglu_unchecked(rms_norm_unchecked(x, w.ffn_norm, config.eps), w.w_gate, w.w_up, w.w_down)
            weights.append(a)
        x = rms_norm_unchecked(x if all_positions else x[-1:], norm, config.eps)  # (n 或 1, D)
        logits = x @ embed.T  # (n 或 1, V) 输出层就是词嵌入表
    except BaseException:
        for c, length in zip(caches or (), before):
            c.truncate(length)  # 要么全做、要么全不做
        raise
    return (logits if all_positions else logits[0]), weights
