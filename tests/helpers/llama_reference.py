"""Llama（SmolLM2）前向的独立参照：写法故意和包里不同。

- float64；逐个头的循环（查询头 h 用键值头 h // G），逐个位置的 RMSNorm；没有 KV 缓存，整段一次因果计算；
- RoPE 用 Hugging Face 的“前后两半”公式（rotate_half），作用在**还原回原来次序**的 W_q、W_k 上：llama.cpp 的转换脚本
  把每个头的行重排成 (0, d/2, 1, d/2 + 1, ...)，这里按它的定义倒回去（每个头：偶数行在前、奇数行在后），
  与包里 ``core.rotary.unpermute_pairs`` 的 reshape 写法无关；
- softmax、SiLU 用 ``math`` 的写法；不调用 ``transformer_lab`` 的任何函数。
"""

from __future__ import annotations

import math

import numpy as np


def unpermute_rows(w: np.ndarray, heads: int) -> np.ndarray:
    """每个头：GGUF 的第 2i 行是原来的第 i 行，第 2i+1 行是原来的第 i + d/2 行 → 原来的次序。"""
    d = w.shape[0] // heads
    return np.concatenate([np.concatenate([w[h * d:(h + 1) * d][0::2], w[h * d:(h + 1) * d][1::2]]) for h in range(heads)])


def rms(x: np.ndarray, w: np.ndarray, eps: float) -> np.ndarray:
    return np.stack([row / math.sqrt(float(np.mean(row ** 2)) + eps) for row in x]) * w


def rope_rotate_half(x: np.ndarray, base: float) -> np.ndarray:
    """x (T, d)：位置 m 的 (x_i, x_{i+d/2}) 转 m · base^(−2i/d)。"""
    T, d = x.shape
    half = d // 2
    out = np.empty_like(x)
    for m in range(T):
        theta = m * base ** (-np.arange(half) * 2.0 / d)
        c, s = np.cos(theta), np.sin(theta)
        out[m, :half] = x[m, :half] * c - x[m, half:] * s
        out[m, half:] = x[m, half:] * c + x[m, :half] * s
    return out


def causal_softmax(scores: np.ndarray) -> np.ndarray:
    T = scores.shape[0]
    out = np.zeros_like(scores)
    for t in range(T):
        row = scores[t, :t + 1]
        e = np.exp(row - row.max())
        out[t, :t + 1] = e / e.sum()
    return out


def reference_logits(sd, config, ids) -> np.ndarray:
    """(T, V) float64 的打分。``sd`` 是 GGUF 名字 → 数组（float32 也行），``config`` 有 LlamaConfig 的字段。"""
    f = lambda name: np.asarray(sd[name], dtype=np.float64)  # noqa: E731
    H, H_kv, D = config.num_heads, config.num_kv_heads, config.d_model
    d = D // H
    E = f("token_embd.weight")
    x = E[list(ids)]
    for i in range(config.num_layers):
        p = f"blk.{i}."
        h = rms(x, f(p + "attn_norm.weight"), config.eps)
        q = h @ unpermute_rows(f(p + "attn_q.weight"), H).T
        k = h @ unpermute_rows(f(p + "attn_k.weight"), H_kv).T
        v = h @ f(p + "attn_v.weight").T
        heads = []
        for head in range(H):
            g = head // (H // H_kv)
            qh = rope_rotate_half(q[:, head * d:(head + 1) * d], config.rope_base)
            kh = rope_rotate_half(k[:, g * d:(g + 1) * d], config.rope_base)
            heads.append(causal_softmax(qh @ kh.T / math.sqrt(d)) @ v[:, g * d:(g + 1) * d])
        x = x + np.concatenate(heads, axis=1) @ f(p + "attn_output.weight").T
        h = rms(x, f(p + "ffn_norm.weight"), config.eps)
        gate = h @ f(p + "ffn_gate.weight").T
        x = x + (gate / (1 + np.exp(-gate)) * (h @ f(p + "ffn_up.weight").T)) @ f(p + "ffn_down.weight").T
    return rms(x, f("output_norm.weight"), config.eps) @ E.T
