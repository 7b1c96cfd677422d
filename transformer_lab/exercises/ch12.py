"""第 12 章的练习：RMSNorm（LayerNorm 去掉均值），以及把 RoPE 用到一个向量上（SmolLM2 的相邻配对、底数 base）。

每个常见错误都附一份（或几份）“错误的写法”，检查时在同样的输入上重算，读者的结果和它处处一样就报告这个错误。
"""

from __future__ import annotations

import numpy as np

from .checker import Case, Exercise, Mistake

__all__ = ["EXERCISES"]


# ---------------------------------------------------------------- rms_norm


def rms_norm(x, weight, eps):
    ms = (x * x).mean(axis=-1, keepdims=True)             # (..., 1) 每一行的均方 mean(x²)，不减均值
    return x / np.sqrt(ms + eps) * weight                 # (..., D) 除以均方根，再逐维乘 w


def _layer_norm_no_beta(x, weight, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * weight


def _rms_norm_cases(rng: np.random.Generator) -> list[Case]:
    r = lambda *shape: rng.normal(size=shape)  # noqa: E731
    return [
        Case("手算的例子：x = [3, 4]，w = [1, 1]（mean(x²) = 12.5）", (np.array([3.0, 4.0]), np.ones(2), 1e-5)),
        Case("手算的例子：x = [3, 4]，w = [2, 0.5]", (np.array([3.0, 4.0]), np.array([2.0, 0.5]), 1e-5)),
        Case("二维：每一行单独归一化（T = 4, D = 6）", (r(4, 6), r(6), 1e-5)),
        Case("每一行的均值不是 0（x + 5）", (r(3, 8) + 5.0, r(8), 1e-5)),
        Case("三维随机", (r(2, 3, 5), r(5), 1e-5)),
        Case("很小的数：x ≈ 1e-3，ε = 1e-5 不能忽略", (r(3, 8) * 1e-3, np.ones(8), 1e-5)),
        Case("有一行全是 0", (np.vstack([np.zeros(4), r(4)]), r(4), 1e-5)),
        Case("SmolLM2 的宽度：D = 576", (r(2, 576), r(576), 1e-5), atol=1e-9),
        Case("float32 的输入", (r(3, 16).astype(np.float32), r(16).astype(np.float32), 1e-5), rtol=2e-5, atol=1e-6),
    ]


RMS_NORM = Exercise(
    name="rms_norm",
    chapter=12,
    signature="rms_norm(x, weight, eps)",
    task="RMSNorm：x 的形状 (..., D)，沿最后一维算均方 mean(x²)，每一行除以 √(mean(x²) + eps)，再逐维乘 weight "
         "（形状 (D,)）。不减均值，也没有 β。返回同样形状的新数组。",
    solution=rms_norm,
    cases=_rms_norm_cases,
    mistakes=(
        Mistake("subtracts_mean", "减去了均值（写成了第 8 章的 LayerNorm）",
                "LayerNorm 先减去每一行的均值 μ，再除以标准差；RMSNorm 正是 LayerNorm 去掉这一步：不减 μ，"
                "直接除以均方根 √(mean(x²) + ε)。均值为 0 的行两者一样，均值不是 0 的行（比如 x + 5）就不同了。",
                "不要 x - x.mean(...)：ms = (x * x).mean(axis=-1, keepdims=True)，return x / np.sqrt(ms + eps) * weight。",
                (_layer_norm_no_beta,)),
        Mistake("eps_outside_sqrt", "ε 加在了根号外面",
                "公式是 √(mean(x²) + ε)：ε 先加到均方上，再开方。写成 √mean(x²) + ε，数大时看不出来，"
                "数很小（x ≈ 1e-3，均方 ≈ 1e-6，和 ε = 1e-5 差不多）时结果就差得远了。",
                "np.sqrt(ms + eps)，不是 np.sqrt(ms) + eps。",
                (lambda x, weight, eps: x / (np.sqrt((x * x).mean(axis=-1, keepdims=True)) + eps) * weight,)),
        Mistake("no_sqrt", "忘了开方",
                "除以的是均方根（root mean square）：均方 mean(x²) 再开方，和 x 同一个单位。"
                "只除以均方，x 放大 10 倍，结果反而缩小 10 倍。",
                "分母写 np.sqrt(ms + eps)。",
                (lambda x, weight, eps: x / ((x * x).mean(axis=-1, keepdims=True) + eps) * weight,)),
        Mistake("wrong_axis", "均方沿错了方向",
                "每个词（每一行）单独归一化：均值沿最后一维 D 取。你沿第 0 维（或整个数组）取了均值，"
                "一维输入看不出来，二维就错了。",
                "(x * x).mean(axis=-1, keepdims=True)。",
                (lambda x, weight, eps: x / np.sqrt((x * x).mean(axis=0, keepdims=True) + eps) * weight,
                 lambda x, weight, eps: x / np.sqrt((x * x).mean() + eps) * weight)),
        Mistake("forgot_weight", "忘了乘 weight",
                "归一化以后每一维还要乘上学到的缩放 w（SmolLM2 的 blk.N.attn_norm.weight）；w 全是 1 时看不出来。",
                "最后 * weight。",
                (lambda x, weight, eps: x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps),)),
    ),
    hints=(
        "RMSNorm(x) = w ⊙ x / √(mean(x²) + ε)：和 LayerNorm 比，少了减均值 μ，也少了 β。",
        "“每一行”就是最后一维：ms = (x * x).mean(axis=-1, keepdims=True)，形状 (..., 1)，能和 x 对齐相除。",
        "return x / np.sqrt(ms + eps) * weight：ε 在根号里面；weight 的形状 (D,) 自动广播到每一行。",
    ),
)


# ---------------------------------------------------------------- apply_rope


def apply_rope(x, position, base):
    d = x.shape[-1]
    omega = base ** (-np.arange(0, d, 2) / d)             # (d/2,) 角速度 ω_i = base^(−2i/d)
    theta = position * omega                              # (d/2,) 第 i 对转 position · ω_i
    even, odd = x[0::2], x[1::2]                          # (d/2,) 每一对相邻的两个数 (x_2i, x_2i+1)
    out = np.empty(x.shape)                               # (d,) 新数组，不改动 x
    out[0::2] = even * np.cos(theta) - odd * np.sin(theta)
    out[1::2] = even * np.sin(theta) + odd * np.cos(theta)
    return out


def _rope_one(x, position, base, *, pairs="adjacent", sign=1.0, step=2):
    d = x.shape[-1]
    theta = sign * position * base ** (-np.arange(0, d // 2) * step / d)
    if pairs == "adjacent":
        first, second = np.arange(0, d, 2), np.arange(1, d, 2)
    else:
        first, second = np.arange(d // 2), np.arange(d // 2, d)
    out = np.empty(x.shape)
    out[first] = x[first] * np.cos(theta) - x[second] * np.sin(theta)
    out[second] = x[first] * np.sin(theta) + x[second] * np.cos(theta)
    return out


def _apply_rope_cases(rng: np.random.Generator) -> list[Case]:
    return [
        Case("手算的例子：x = (1, 0) 放在位置 1（转 1 弧度 → (cos 1, sin 1)）", (np.array([1.0, 0.0]), 1, 10000.0)),
        Case("手算的例子：x = (1, 0, 1, 0)，位置 2，base = 10000（ω = [1, 0.01]）",
             (np.array([1.0, 0.0, 1.0, 0.0]), 2, 10000.0)),
        Case("位置 0：不转，原样输出", (rng.normal(size=8), 0, 100000.0)),
        Case("第 6 章的底数：d = 8，位置 5，base = 10000", (rng.normal(size=8), 5, 10000.0)),
        Case("SmolLM2 的一个头：d = 64，位置 7，base = 100000", (rng.normal(size=64), 7, 100000.0)),
        Case("上下文的最后一个位置：d = 64，位置 8191，base = 100000", (rng.normal(size=64), 8191, 100000.0),
             atol=1e-9),
        Case("float32 的输入：d = 16，位置 3", (rng.normal(size=16).astype(np.float32), 3, 100000.0),
             rtol=2e-5, atol=1e-6),
    ]


APPLY_ROPE = Exercise(
    name="apply_rope",
    chapter=12,
    signature="apply_rope(x, position, base)",
    task="把 RoPE 用到一个向量上：x 的形状 (d,)（一个头的查询或键，d 为偶数），放在位置 position。"
         "每一对相邻的 (x_2i, x_2i+1) 逆时针转 position · ω_i，ω_i = base^(−2i/d)（SmolLM2 的 base = 100000）。"
         "返回同样形状的新数组。",
    solution=apply_rope,
    cases=_apply_rope_cases,
    mistakes=(
        Mistake("rotates_backwards", "转反了方向",
                "逆时针转 θ：x'_2i = x_2i·cos θ − x_2i+1·sin θ，x'_2i+1 = x_2i·sin θ + x_2i+1·cos θ。"
                "你把 sin 前面的正负号对调了，每个位置都往回转；拿按这个方向训练的权重来用，分数就错了。",
                "第一行减去 odd * sin，第二行加上 even * sin。",
                (lambda x, position, base: _rope_one(x, position, base, sign=-1.0),)),
        Mistake("halves_not_interleaved", "配对成了 (i, i + d/2)",
                "你把前一半和后一半配成一对（Hugging Face 的 rotate_half 写法）。SmolLM2 的 GGUF 权重被 llama.cpp "
                "重排过行，要用相邻的 (2i, 2i+1) 配对（第 6 章的写法）；两种配对用错一种，注意力分数就对不上了。"
                "d = 2 时两种配对是同一对，看不出来。",
                "用 x[0::2] 和 x[1::2] 取出每一对，转完放回偶数位和奇数位。",
                (lambda x, position, base: _rope_one(x, position, base, pairs="halves"),)),
        Mistake("exponent_uses_pair_index", "指数里用了第几对 i，而不是 2i",
                "ω_i = base^(−2i/d)：指数里是这一对的第一维的下标 2i。写成 base^(−i/d)，后面几对转得太快，"
                "最慢的一对也转不慢，远处的位置就分不清了。",
                "omega = base ** (-np.arange(0, d, 2) / d)：np.arange(0, d, 2) 正是 0, 2, 4, …。",
                (lambda x, position, base: _rope_one(x, position, base, step=1),)),
        Mistake("base_ignored", "没有用参数 base（总是 10000）",
                "第 6 章用的是论文的 10000；SmolLM2 训练时用 base = 100000（GGUF 里的 llama.rope.freq_base），"
                "慢的那几对转得更慢，长上下文里的远处位置还分得开。底数写死，用真模型的权重就对不上了。",
                "omega = base ** (-np.arange(0, d, 2) / d)，用传进来的 base。",
                (lambda x, position, base: _rope_one(x, position, 10000.0),)),
    ),
    hints=(
        "先算 d/2 个角速度 omega = base ** (-np.arange(0, d, 2) / d)，再算转角 theta = position * omega。",
        "每一对是 even = x[0::2] 和 odd = x[1::2]；位置 0 的转角是 0，结果应该等于 x。转完长度不变（只是旋转）。",
        "新的偶数位 = even·cos θ − odd·sin θ，新的奇数位 = even·sin θ + odd·cos θ；"
        "先 out = np.empty(x.shape)，再写进 out[0::2] 和 out[1::2]（不要改 x 本身）。",
    ),
)

EXERCISES = (RMS_NORM, APPLY_ROPE)
