"""第 6 章的练习：论文的正弦位置编码，以及 RoPE（按位置把每一对维度转一个角度）。

每个常见错误都附一份（或几份）“错误的写法”，检查时在同样的输入上重算，读者的结果和它处处一样就报告这个错误。
"""

from __future__ import annotations

import numpy as np

from .checker import Case, Exercise, Mistake

__all__ = ["EXERCISES"]


# ---------------------------------------------------------------- positional_encoding


def positional_encoding(num_positions, d_model):
    p = np.arange(num_positions)[:, None]                 # (T, 1) 位置 p = 0, 1, 2, ...
    two_i = np.arange(0, d_model, 2)                      # (D/2,) 每一对的偶数列下标 2i
    omega = 1 / 10000 ** (two_i / d_model)                # (D/2,) 角速度 ω_i = 1 / 10000^(2i/D)
    angles = p * omega                                    # (T, D/2) 第 p 行第 i 列 = p·ω_i
    pe = np.zeros((num_positions, d_model))               # (T, D)
    pe[:, 0::2] = np.sin(angles)                          # 偶数列 2i：sin
    pe[:, 1::2] = np.cos(angles)                          # 奇数列 2i+1：cos
    return pe


def _angles(num_positions, d_model, exponents):
    return np.arange(num_positions)[:, None] / 10000 ** (np.asarray(exponents) / d_model)


def _pe_swapped(num_positions, d_model):
    pe = positional_encoding(num_positions, d_model)
    return pe[:, [j + 1 if j % 2 == 0 else j - 1 for j in range(d_model)]]


def _pe_by_column(num_positions, d_model, factor):
    angles = _angles(num_positions, d_model, factor * np.arange(d_model))   # (T, D) 每一列自己的角速度
    odd = np.arange(d_model) % 2 == 1
    return np.where(odd, np.cos(angles), np.sin(angles))


def _pe_halves(num_positions, d_model):
    angles = _angles(num_positions, d_model, np.arange(0, d_model, 2))
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)


def _pe_cases(rng: np.random.Generator) -> list[Case]:
    return [
        Case("手算的例子：num_positions = 2, d_model = 4（ω = [1, 0.01]）", (2, 4)),
        Case("手算的例子：num_positions = 3, d_model = 6（小测验第 2 题）", (3, 6)),
        Case("常见的尺寸：num_positions = 10, d_model = 8", (10, 8)),
        Case("只有一对：d_model = 2", (5, 2)),
        Case("只有位置 0：num_positions = 1", (1, 8)),
        Case("位置多于维度：num_positions = 50, d_model = 16", (50, 16)),
        Case("很长的句子：num_positions = 2048, d_model = 64", (2048, 64), atol=1e-9),
        Case("论文的宽度：num_positions = 20, d_model = 512", (20, 512)),
    ]


POSITIONAL_ENCODING = Exercise(
    name="positional_encoding",
    chapter=6,
    signature="positional_encoding(num_positions, d_model)",
    task="论文的正弦位置编码：返回 (num_positions, d_model) 的表，第 p 行第 2i 列是 sin(p·ω_i)、第 2i+1 列是 "
         "cos(p·ω_i)，ω_i = 1/10000^(2i/d_model)。",
    solution=positional_encoding,
    cases=_pe_cases,
    mistakes=(
        Mistake("sin_cos_swapped", "sin 和 cos 放反了",
                "论文是偶数列 2i 放 sin、奇数列 2i+1 放 cos。放反以后位置 0 的座位号是 [1, 0, 1, 0, …]，"
                "而不是 [0, 1, 0, 1, …]。单独用时信息一样多，可和论文的表、和按论文训练的权重就对不上了。",
                "pe[:, 0::2] = np.sin(angles)，pe[:, 1::2] = np.cos(angles)：0::2 是偶数列。",
                (_pe_swapped,)),
        Mistake("exponent_uses_column", "指数里用了列号 j，而不是这一对的 2i",
                "同一对的两列（2i 和 2i+1）必须用同一个角速度 ω_i = 1/10000^(2i/D)，sin 和 cos 才是同一根指针的"
                "两个坐标。你让每一列按自己的列号 j 算指数（10000^(j/D)，或把列号当成 i 写成 10000^(2j/D)），"
                "cos 那一列就和它旁边的 sin 转得不一样快了。",
                "角速度只有 D/2 个：omega = 1 / 10000 ** (np.arange(0, D, 2) / D)，sin 和 cos 共用它。",
                (lambda num_positions, d_model: _pe_by_column(num_positions, d_model, 1),
                 lambda num_positions, d_model: _pe_by_column(num_positions, d_model, 2))),
        Mistake("halves_not_interleaved", "sin 放前一半、cos 放后一半",
                "这是“拼接排列”（tensor2tensor 等代码库的写法），和论文的“交错排列”只差一次列重排，"
                "点积完全一样；但本题要的是论文的写法：sin、cos、sin、cos……交错。两种排列混用会让权重对不上。",
                "不要 np.concatenate([sin, cos])，而是 pe[:, 0::2] = sin，pe[:, 1::2] = cos。",
                (_pe_halves,)),
    ),
    hints=(
        "先算 D/2 个角速度：omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)，第 i 个对应第 i 对维度。",
        "位置排成一列、角速度排成一行，相乘时广播成角度表：np.arange(num_positions)[:, None] * omega，形状 (T, D/2)。",
        "新建 pe = np.zeros((num_positions, d_model))，偶数列 pe[:, 0::2] = np.sin(angles)，"
        "奇数列 pe[:, 1::2] = np.cos(angles)。",
    ),
)


# ---------------------------------------------------------------- rope


def rope(x):
    T, d = x.shape
    omega = 1 / 10000 ** (np.arange(0, d, 2) / d)         # (d/2,) 和正弦位置编码一样的角速度 ω_i
    angles = np.arange(T)[:, None] * omega                # (T, d/2) 第 p 行的第 i 对转 p·ω_i
    cos, sin = np.cos(angles), np.sin(angles)
    even, odd = x[:, 0::2], x[:, 1::2]                    # (T, d/2) 每一对的两个数 (x_2i, x_2i+1)
    out = np.empty(x.shape)                               # (T, d) 新数组，不改动 x
    out[:, 0::2] = even * cos - odd * sin                 # 行向量乘旋转块：逆时针转 p·ω_i
    out[:, 1::2] = even * sin + odd * cos
    return out


def _rotate(x, pairs, sign=1.0, first=0):
    """把 pairs 指定的每一对 (a, b) 列转 (first + p)·ω_i；sign = -1 时反着转。"""
    T, d = x.shape
    angles = (first + np.arange(T))[:, None] * (1 / 10000 ** (np.arange(0, d, 2) / d)) * sign
    a, b = x[:, pairs[0]], x[:, pairs[1]]
    out = np.empty(x.shape)
    out[:, pairs[0]] = a * np.cos(angles) - b * np.sin(angles)
    out[:, pairs[1]] = a * np.sin(angles) + b * np.cos(angles)
    return out


def _interleaved(d):
    return np.arange(0, d, 2), np.arange(1, d, 2)


def _halves(d):
    return np.arange(d // 2), np.arange(d // 2, d)


def _rope_cases(rng: np.random.Generator) -> list[Case]:
    r = lambda *shape: rng.normal(size=shape)  # noqa: E731
    return [
        Case("手算的例子：同一个向量 (1, 0, 1, 0) 放在位置 0、1、2（ω = [1, 0.01]）", (np.tile([1.0, 0.0, 1.0, 0.0], (3, 1)),)),
        Case("手算的例子：x = [[1, 0], [1, 0]]（位置 1 转 1 弧度）", (np.array([[1.0, 0.0], [1.0, 0.0]]),)),
        Case("随机：T = 5, d = 8", (r(5, 8),)),
        Case("随机：T = 16, d = 6", (r(16, 6),)),
        Case("只有位置 0：T = 1", (r(1, 8),)),
        Case("很多位置：T = 512, d = 16", (r(512, 16),), atol=1e-9),
        Case("很大的数：乘以 1e6", (r(4, 8) * 1e6,)),
        Case("float32 的输入", (r(6, 8).astype(np.float32),), rtol=2e-5, atol=1e-6),
    ]


ROPE = Exercise(
    name="rope",
    chapter=6,
    signature="rope(x)",
    task="旋转位置编码 RoPE：x 的形状 (T, d)，第 p 行是位置 p。把每一对 (x_2i, x_2i+1) 逆时针转 p·ω_i "
         "（ω_i 和正弦位置编码一样），返回同样形状的新数组。",
    solution=rope,
    cases=_rope_cases,
    mistakes=(
        Mistake("rotates_backwards", "转反了方向",
                "本书（和 RoPE 论文）的旋转是 x'_2i = x_2i·cos − x_2i+1·sin，x'_2i+1 = x_2i·sin + x_2i+1·cos，"
                "即逆时针转 p·ω_i。你把 sin 前面的正负号对调了，每个位置都往回转。分数仍只看相隔多远，"
                "可“前面第 2 个词”和“后面第 2 个词”对调了，拿按论文训练的权重来用就错了。",
                "第一行减去 odd * sin，第二行加上 even * sin。",
                (lambda x: _rotate(x, _interleaved(x.shape[1]), sign=-1.0),)),
        Mistake("halves_not_interleaved", "配对成了 (i, i + d/2)",
                "你把前一半和后一半配成一对（GPT-NeoX、Hugging Face 的 rotate_half 写法）。本章的配对是相邻的两维 "
                "(2i, 2i+1)，和正弦位置编码一样。两种写法都能让分数只看相隔多远，但列的意义不同，权重不能混用。",
                "用 x[:, 0::2] 和 x[:, 1::2] 取出每一对，转完再放回偶数列和奇数列。",
                (lambda x: _rotate(x, _halves(x.shape[1])),)),
        Mistake("positions_from_one", "位置从 1 开始数",
                "位置 p 是行号，从 0 数起：第 0 行不转（转角 0·ω_i = 0），原样输出。你让第 0 行也转了 ω_i。",
                "角度用 np.arange(T)[:, None] * omega，不要 np.arange(1, T + 1)。",
                (lambda x: _rotate(x, _interleaved(x.shape[1]), first=1),)),
    ),
    hints=(
        "先算 d/2 个角速度 omega = 1 / 10000 ** (np.arange(0, d, 2) / d)，再算角度表 np.arange(T)[:, None] * omega，"
        "形状 (T, d/2)。",
        "每一对是 even = x[:, 0::2] 和 odd = x[:, 1::2]（都是 (T, d/2)）；位置 0 的转角是 0，那一行应该原样不变。",
        "转一个角度 θ：新的偶数列 = even·cos θ − odd·sin θ，新的奇数列 = even·sin θ + odd·cos θ。"
        "先 out = np.empty(x.shape)，再分别写进 out[:, 0::2] 和 out[:, 1::2]（不要改 x 本身）。",
    ),
)

EXERCISES = (POSITIONAL_ENCODING, ROPE)
