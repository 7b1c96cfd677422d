"""独立的参照实现：一个 BERT 编码器，直接从检查点的 state dict 算，写法与 ``tl.pretrained`` 故意不同。

- 不用 ``tl.core`` 的任何函数，也不用包里摆好的 ``weights``：直接按 PyTorch 的名字取张量，按 PyTorch 的
  写法 ``x @ W.T + b``（不转置存储）；
- 全部用 float64（包里是 float32）；
- 多头注意力一个头一个头地循环，softmax 一行一行地算；
- LayerNorm 按定义写均值与方差；GELU 对每个元素调用 ``math.erf``（包里用 ``np.frompyfunc``）。
"""

from __future__ import annotations

import math

import numpy as np


def _f64(state_dict, name):
    return np.asarray(state_dict[name], dtype=np.float64)


def _layer_norm(x, gamma, beta, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def _gelu(z):
    return np.array([[0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))) for v in row] for row in z])


def _softmax_rows(scores):
    out = np.empty_like(scores)
    for t in range(scores.shape[0]):
        e = np.exp(scores[t] - scores[t].max())
        out[t] = e / e.sum()
    return out


def reference_forward(state_dict, word_rows, ids, num_layers, num_heads, eps):
    """返回 (hidden_states (L+1, T, D), attentions (L, H, T, T))，float64。``word_rows[i]`` 是编号 ids[i] 的词嵌入。"""
    T = len(ids)
    x = (np.asarray(word_rows, np.float64) + _f64(state_dict, "embeddings.position_embeddings.weight")[:T]
         + _f64(state_dict, "embeddings.token_type_embeddings.weight")[0])
    x = _layer_norm(x, _f64(state_dict, "embeddings.LayerNorm.weight"), _f64(state_dict, "embeddings.LayerNorm.bias"),
                    eps)
    hidden, attentions = [x], []
    for layer in range(num_layers):
        def p(name):
            return _f64(state_dict, f"encoder.layer.{layer}.{name}")

        q = x @ p("attention.self.query.weight").T + p("attention.self.query.bias")
        k = x @ p("attention.self.key.weight").T + p("attention.self.key.bias")
        v = x @ p("attention.self.value.weight").T + p("attention.self.value.bias")
        d_k = x.shape[1] // num_heads
        heads, probs = [], np.zeros((num_heads, T, T))
        for h in range(num_heads):
            cols = slice(h * d_k, (h + 1) * d_k)
            probs[h] = _softmax_rows(q[:, cols] @ k[:, cols].T / math.sqrt(d_k))
            heads.append(probs[h] @ v[:, cols])
        a = np.concatenate(heads, axis=1) @ p("attention.output.dense.weight").T + p("attention.output.dense.bias")
        h1 = _layer_norm(x + a, p("attention.output.LayerNorm.weight"), p("attention.output.LayerNorm.bias"), eps)
        inner = _gelu(h1 @ p("intermediate.dense.weight").T + p("intermediate.dense.bias"))
        f = inner @ p("output.dense.weight").T + p("output.dense.bias")
        x = _layer_norm(h1 + f, p("output.LayerNorm.weight"), p("output.LayerNorm.bias"), eps)
        hidden.append(x)
        attentions.append(probs)
    return np.stack(hidden), np.stack(attentions)
