"""第 2 章的练习：自注意力的权重表（每个词给每个词打分、变成百分比），以及按权重把内容混合起来（加权平均）。

每个常见错误都附一份“错误的写法”，检查时在同样的输入上重算，读者的结果和它处处一样就报告这个错误。
"""

from __future__ import annotations

import numpy as np

from ..core.softmax import softmax_unchecked  # 错误写法里的 softmax 借用 core 的（参考答案自己写）
from .checker import Case, Exercise, Mistake

__all__ = ["EXERCISES"]


# ---------------------------------------------------------------- self_attention_weights：整张权重表


def self_attention_weights(x, w_q, w_k):
    q = x @ w_q                                   # (T, d_k) 每个词的查询：我在找什么
    k = x @ w_k                                   # (T, d_k) 每个词的键：我是什么
    d_k = q.shape[-1]
    scores = q @ k.T / np.sqrt(d_k)               # (T, T) 第 i 行：词 i 对每个词的分数
    scores = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=-1, keepdims=True)      # (T, T) 每一行加起来是 1


def _weights(x, w_q, w_k, scale, axis=-1, transposed=False):
    q, k = x @ w_q, x @ w_k
    scores = (k @ q.T if transposed else q @ k.T) * scale
    return softmax_unchecked(scores, axis)


def _sqrt_d_k(w_q):
    return 1.0 / np.sqrt(w_q.shape[1])


def _weight_cases(rng: np.random.Generator) -> list[Case]:
    x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])       # 三个词，各 2 个特征
    w_q = np.array([[0.0, 2.0], [0.0, 0.0]])                  # 有第 1 个特征的词去找第 2 个特征
    w_k = np.array([[1.0, 0.0], [0.0, 3.0]])
    r = lambda *shape: rng.normal(size=shape)  # noqa: E731
    f32 = lambda *shape: rng.normal(size=shape).astype(np.float32)  # noqa: E731
    return [
        Case("手算的例子：三个词，D = d_k = 2", (x, w_q, w_k)),
        Case("随机：T = 4，D = 6，d_k = 3", (r(4, 6), r(6, 3), r(6, 3))),
        Case("随机：T = 5，D = 4，d_k = 8", (r(5, 4), r(4, 8), r(4, 8))),
        Case("只有一个词：T = 1", (r(1, 3), r(3, 2), r(3, 2))),
        Case("分数很大", (r(3, 4) * 20, r(4, 4) * 3, r(4, 4) * 3)),
        Case("查询全是 0：每个词平均地听", (r(4, 3), np.zeros((3, 2)), r(3, 2))),
        Case("float32 的输入", (f32(4, 5), f32(5, 3), f32(5, 3)), rtol=2e-5, atol=1e-6),
    ]


SELF_ATTENTION_WEIGHTS = Exercise(
    name="self_attention_weights",
    chapter=2,
    signature="self_attention_weights(x, w_q, w_k)",
    task="算一轮自注意力的权重表：q = x W_Q，k = x W_K，分数 q kᵀ / √d_k，每一行做 softmax。"
         "x 的形状 (T, D)，w_q 和 w_k (D, d_k)；返回 (T, T)，第 i 行是第 i 个词分给每个词的权重，加起来是 1。",
    solution=self_attention_weights,
    cases=_weight_cases,
    mistakes=(
        Mistake("no_scale", "忘了除以 √d_k",
                "分数要先除以 √d_k（d_k 是 q、k 的长度）再做 softmax；不除的话，维度一多，权重就变得“赢家通吃”"
                "（第 4 章用实验讲为什么）。",
                "scores = q @ k.T / np.sqrt(d_k)，d_k = q.shape[-1]。",
                (lambda x, w_q, w_k: _weights(x, w_q, w_k, 1.0),)),
        Mistake("scale_by_d_model", "除以了 √D，而不是 √d_k",
                "要除的是 q、k 的长度 d_k（w_q 的列数），不是词向量的长度 D（x 的列数）。本章的例子里两者都是 12，"
                "看不出区别；d_k ≠ D 时就错了。",
                "d_k = q.shape[-1]（或 w_q.shape[1]），不是 x.shape[-1]。",
                (lambda x, w_q, w_k: _weights(x, w_q, w_k, 1.0 / np.sqrt(x.shape[1])),)),
        Mistake("scores_transposed", "查询和键用反了（k @ q.T）",
                "第 i 行应该是词 i 拿自己的查询 q_i 去和每个词的键比（q @ k.T）；写成 k @ q.T，第 i 行变成了"
                "“词 i 的键被每个查询看中的程度”，整张表像是转置了一遍。",
                "分数写成 q @ k.T：行是提问的词，列是被看的词。",
                (lambda x, w_q, w_k: _weights(x, w_q, w_k, _sqrt_d_k(w_q), transposed=True),)),
        Mistake("softmax_wrong_axis", "softmax 沿错了方向",
                "每个词（每一行）分出去的权重要加起来是 1；你的是每一列加起来是 1。",
                "softmax 的求和与求最大值都写 axis=-1, keepdims=True。",
                (lambda x, w_q, w_k: _weights(x, w_q, w_k, _sqrt_d_k(w_q), axis=0),)),
    ),
    hints=(
        "三步：q = x @ w_q、k = x @ w_k；分数 = q @ k.T / √d_k；每一行做 softmax。",
        "d_k 是 q 的列数：q.shape[-1]。分数表的形状是 (T, T)：第 i 行第 j 列是 q_i · k_j / √d_k。",
        "softmax 沿最后一维：先减去每行的最大值，再 np.exp，再除以 e.sum(axis=-1, keepdims=True)。",
    ),
)


# ---------------------------------------------------------------- weighted_average：按权重混合


def weighted_average(alpha, v):
    # 注意力_i = Σ_j α_ij v_j：每个词的值 v_j 乘上它的权重，再对 j 加起来
    return alpha @ v                              # (..., S) @ (S, d_v) → (..., d_v)


def _plain_mean(alpha, v):
    return np.zeros(alpha.shape[:-1] + (1,)) + v.mean(axis=0)   # 不看权重：每个词一样重


def _average_cases(rng: np.random.Generator) -> list[Case]:
    def rows(t, s):
        e = np.exp(rng.normal(size=(t, s)))
        return e / e.sum(axis=-1, keepdims=True)
    r = lambda *shape: rng.normal(size=shape)  # noqa: E731
    return [
        Case("手算的例子：期末总评", (np.array([0.2, 0.3, 0.5]), np.array([[90.0], [80.0], [70.0]]))),
        Case("手算的例子：调饮料", (np.array([0.6, 0.1, 0.3]), np.array([[8.0, 2.0], [1.0, 9.0], [0.0, 0.0]]))),
        Case("手算的例子：小测验第 2 题", (np.array([0.5, 0.3, 0.2]),
                                         np.array([[10.0, 0.0], [0.0, 10.0], [10.0, 10.0]]))),
        Case("整张权重表：T = 4，S = 5，d_v = 3", (rows(4, 5), r(5, 3))),
        Case("整张权重表：T = 3，S = 2，d_v = 6", (rows(3, 2), r(2, 6))),
        Case("一行全给一个词（one-hot）", (np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]), r(3, 2))),
        Case("float32 的输入", (rows(3, 4).astype(np.float32), r(4, 3).astype(np.float32)),
             rtol=1e-5, atol=1e-6),
    ]


WEIGHTED_AVERAGE = Exercise(
    name="weighted_average",
    chapter=2,
    signature="weighted_average(alpha, v)",
    task="按权重把每个词交出的内容混合起来：注意力_i = Σ_j α_ij v_j。alpha 的形状 (S,)（一个词的权重）"
         "或 (T, S)（整张权重表，每行加起来是 1），v 的形状 (S, d_v)；返回 (d_v,) 或 (T, d_v)。",
    solution=weighted_average,
    cases=_average_cases,
    mistakes=(
        Mistake("plain_mean", "没有用权重，直接取了平均",
                "每个词的内容都算一样重，权重白算了；只有权重刚好平均时才碰巧对。",
                "每个 v_j 先乘上自己的权重 α_j 再相加：alpha @ v。",
                (lambda alpha, v: v.mean(axis=0), _plain_mean)),
        Mistake("forgot_to_sum", "只乘了权重，没有加起来",
                "alpha[..., None] * v 只把每个词的内容按权重缩放了，形状还是 (…, S, d_v)；"
                "加权平均还要把 S 个词的结果加成一个。",
                "对词的那一维求和：(alpha[..., None] * v).sum(axis=-2)，或者直接 alpha @ v。",
                (lambda alpha, v: alpha[..., None] * v,)),
        Mistake("summed_wrong_axis", "加错了方向：把一个词的各个特征加在了一起",
                "要加的是不同的词（S 那一维），每个特征各自混合；你把同一个词的 d_v 个特征加成了一个数，"
                "结果的形状变成了 (…, S)。",
                "sum(axis=-2)（词的那一维），或者直接 alpha @ v。",
                (lambda alpha, v: (alpha[..., None] * v).sum(axis=-1),)),
    ),
    hints=(
        "一个词的输出 = Σ_j α_j v_j：第 j 个词的内容 v_j 乘上它的权重 α_j，所有词加起来。",
        "可以写循环：sum(alpha[j] * v[j] for j in range(len(v)))；也可以一次算完。",
        "矩阵乘法正好就是“乘了再加”：alpha @ v，(S,) @ (S, d_v) → (d_v,)，(T, S) @ (S, d_v) → (T, d_v)。",
    ),
)

EXERCISES = (SELF_ATTENTION_WEIGHTS, WEIGHTED_AVERAGE)
