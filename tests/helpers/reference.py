"""独立的参考实现：只用 Python 循环和 math，不调用包里的任何函数。两个以上的测试文件要用它们，所以放在这里。

- ``ref_mha``：按论文逐头计算的多头注意力——取 W_Q 的第 h·d_k:(h+1)·d_k 列得到第 h 个头的投影，
  逐个 (i, j) 算分数、做带掩码的 softmax，拼接后乘 W_O；
- ``ref_layer_norm``：逐行算均值与（有偏）方差；
- ``ref_feed_forward``：逐位置、逐元素求和；
- ``ref_encoder_steps`` / ``ref_encoder``：用上面三块把一层编码器一步一步接起来（post-LN 与 pre-LN，可去掉残差）；
- ``assert_attention_close``：注意力输出与参考答案的比较（加权平均里正负抵消的元素按 v 的量级给绝对容差）。
"""

from __future__ import annotations

import math

import numpy as np

EPS = 1e-5  # LayerNorm 的 ε，与包里的默认值相同


def ref_attention_weights(Q, K, d_k, mask=None):
    """一个头的注意力权重 (T, S)：对每个 (i, j) 算 Q_i·K_j / √d_k，再做带掩码的 softmax。"""
    w = np.zeros((Q.shape[0], K.shape[0]))
    for i in range(Q.shape[0]):
        allowed = [j for j in range(K.shape[0]) if mask is None or mask[i, j]]
        scores = {j: float(Q[i] @ K[j]) / math.sqrt(d_k) for j in allowed}
        m = max(scores.values())
        z = sum(math.exp(s - m) for s in scores.values())
        for j, s in scores.items():
            w[i, j] = math.exp(s - m) / z
    return w


def ref_mha(x, w_q, w_k, w_v, w_o, num_heads, mask=None, kv=None, b_q=None, b_k=None, b_v=None, b_o=None):
    """逐头循环的多头注意力。x: (T, D) 或 (B, T, D)；mask 可广播到 (B, H, T, S)。返回 (out, weights)。"""
    H = num_heads
    if x.ndim == 3:  # 批：逐个样本算
        results = []
        for b in range(x.shape[0]):
            m = None if mask is None else (mask[b] if mask.ndim == 4 else mask)
            results.append(ref_mha(x[b], w_q, w_k, w_v, w_o, H, m, None if kv is None else kv[b], b_q, b_k, b_v, b_o))
        return np.stack([r[0] for r in results]), np.stack([r[1] for r in results])
    kv = x if kv is None else kv
    zero = np.zeros(x.shape[1])
    b_q, b_k, b_v, b_o = (zero if b is None else b for b in (b_q, b_k, b_v, b_o))
    d_k = x.shape[1] // H
    heads, weights = [], []
    for h in range(H):
        cols = slice(h * d_k, (h + 1) * d_k)
        Q = x @ w_q[:, cols] + b_q[cols]  # (T, d_k)
        K = kv @ w_k[:, cols] + b_k[cols]  # (S, d_k)
        V = kv @ w_v[:, cols] + b_v[cols]  # (S, d_k)
        m = None if mask is None else np.broadcast_to(mask, (H, x.shape[0], kv.shape[0]))[h]
        w = ref_attention_weights(Q, K, d_k, m)
        heads.append(w @ V)
        weights.append(w)
    return np.concatenate(heads, axis=1) @ w_o + b_o, np.stack(weights)  # (T, D), (H, T, S)


def ref_layer_norm(x, gamma, beta, eps=EPS):
    """逐行：μ = Σx/D，σ² = Σ(x-μ)²/D，y_j = γ_j (x_j - μ)/√(σ²+ε) + β_j。"""
    x2 = x.reshape(-1, x.shape[-1])
    out = np.zeros(x2.shape)
    for r, row in enumerate(x2):
        D = len(row)
        mu = sum(float(v) for v in row) / D
        var = sum((float(v) - mu) ** 2 for v in row) / D
        for j in range(D):
            out[r, j] = gamma[j] * (row[j] - mu) / math.sqrt(var + eps) + beta[j]
    return out.reshape(x.shape)


def ref_feed_forward(x, w_1, b_1, w_2, b_2):
    """逐位置、逐元素：hidden_k = max(0, Σ_i x_i W1[i,k] + b1_k)，out_j = Σ_k hidden_k W2[k,j] + b2_j。"""
    x2 = x.reshape(-1, x.shape[-1])
    D, d_ff = w_1.shape
    out = np.zeros(x2.shape)
    for r, row in enumerate(x2):
        hidden = [max(0.0, sum(row[i] * w_1[i, k] for i in range(D)) + b_1[k]) for k in range(d_ff)]
        for j in range(D):
            out[r, j] = sum(hidden[k] * w_2[k, j] for k in range(d_ff)) + b_2[j]
    return out.reshape(x.shape)


def ref_encoder_steps(x, p, H, mask=None, norm_first=False, residual=True):
    """一层编码器的每一步，键与 ``encoder_layer_steps`` 相同。x: (T, D) 或 (B, T, D)；mask: (T, T)、(H, T, T) 或 (B, H, T, T)。

    post-LN：a = MHA(x)，u = x + a，h = LN₁(u)，f = FFN(h)，v = h + f，out = LN₂(v)；
    pre-LN：n1 = LN₁(x)，a = MHA(n1)，h = x + a，n2 = LN₂(h)，f = FFN(n2)，out = h + f。
    ``residual=False`` 时两处 "x +" 都去掉。
    """
    if x.ndim == 3:
        per_item = [ref_encoder_steps(x[b], p, H, mask[b] if mask is not None and mask.ndim == 4 else mask,
                                      norm_first, residual) for b in range(x.shape[0])]
        return {key: np.stack([s[key] for s in per_item]) for key in per_item[0]}
    keep = 1.0 if residual else 0.0
    ln1 = lambda a: ref_layer_norm(a, p["ln1_gamma"], p["ln1_beta"])  # noqa: E731
    ln2 = lambda a: ref_layer_norm(a, p["ln2_gamma"], p["ln2_beta"])  # noqa: E731
    ffn = lambda a: ref_feed_forward(a, p["w_1"], p["b_1"], p["w_2"], p["b_2"])  # noqa: E731
    mha = lambda a: ref_mha(a, p["w_q"], p["w_k"], p["w_v"], p["w_o"], H, mask,  # noqa: E731
                            b_q=p["b_q"], b_k=p["b_k"], b_v=p["b_v"], b_o=p["b_o"])
    if norm_first:
        n1 = ln1(x)
        a, w = mha(n1)
        h = keep * x + a
        n2 = ln2(h)
        f = ffn(n2)
        return {"x": x, "n1": n1, "a": a, "h": h, "n2": n2, "f": f, "out": keep * h + f, "weights": w}
    a, w = mha(x)
    u = keep * x + a
    h = ln1(u)
    f = ffn(h)
    v = keep * h + f
    return {"x": x, "a": a, "u": u, "h": h, "f": f, "v": v, "out": ln2(v), "weights": w}


def ref_encoder(x, p, H, mask=None, norm_first=False, residual=True):
    """一层编码器的 (out, weights)，由 ``ref_encoder_steps`` 得到。"""
    steps = ref_encoder_steps(x, p, H, mask, norm_first, residual)
    return steps["out"], steps["weights"]


def assert_attention_close(out, ref, v):
    """相对 1e-12；接近 0 的元素（加权平均里正负抵消）按 v 的量级给绝对容差。"""
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12 * np.abs(v).max())
