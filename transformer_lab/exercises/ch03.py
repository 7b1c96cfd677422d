"""第 3 章的练习：同一个词戴上三副眼镜（Q、K、V 三个投影），以及只看方向的余弦相似度。

每个常见错误都附一份“错误的写法”，检查时在同样的输入上重算，读者的结果和它处处一样就报告这个错误。
"""

from __future__ import annotations

import numpy as np

from .checker import Case, Exercise, Mistake

__all__ = ["EXERCISES"]


# ---------------------------------------------------------------- qkv_projections：三副眼镜


def qkv_projections(x, w_q, w_k, w_v):
    q = x @ w_q                                   # (T, D) @ (D, d_k) → (T, d_k) 我在找什么
    k = x @ w_k                                   # (T, d_k)                     我身上贴着什么标签
    v = x @ w_v                                   # (T, d_v)                     我能交出什么内容
    return q, k, v


def _projection_cases(rng: np.random.Generator) -> list[Case]:
    x = np.array([[2.0, 0.0, 1.0], [0.0, 1.0, 2.0], [1.0, 2.0, 0.0]])   # 小猫 / 吃 / 鱼
    w_q = np.array([[0.0, 1.0], [0.0, 0.0], [1.0, 0.0]])
    w_k = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    w_v = np.array([[1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    r = lambda *shape: rng.normal(size=shape)  # noqa: E731
    f32 = lambda *shape: rng.normal(size=shape).astype(np.float32)  # noqa: E731
    return [
        Case("手算的例子：小猫 / 吃 / 鱼", (x, w_q, w_k, w_v)),
        Case("随机：T = 5，D = 8，d_k = 4，d_v = 3", (r(5, 8), r(8, 4), r(8, 4), r(8, 3))),
        Case("随机：T = 4，D = 6，d_k = d_v = 4", (r(4, 6), r(6, 4), r(6, 4), r(6, 4))),
        Case("只有一个词：T = 1", (r(1, 5), r(5, 2), r(5, 2), r(5, 3))),
        Case("float32 的输入", (f32(3, 6), f32(6, 2), f32(6, 2), f32(6, 4)), rtol=1e-5, atol=1e-6),
    ]


QKV_PROJECTIONS = Exercise(
    name="qkv_projections",
    chapter=3,
    signature="qkv_projections(x, w_q, w_k, w_v)",
    task="同一个词向量戴上三副眼镜：Q = X W_Q，K = X W_K，V = X W_V。x 的形状 (T, D)，w_q 和 w_k (D, d_k)，"
         "w_v (D, d_v)；返回 (q, k, v)，形状 (T, d_k)、(T, d_k)、(T, d_v)。",
    solution=qkv_projections,
    cases=_projection_cases,
    returns=("q", "k", "v"),
    mistakes=(
        Mistake("v_equals_k", "拿键 K 当了值 V",
                "V 要用自己的眼镜 W_V：K 负责“被找到”，V 负责“交出内容”。V = K 时，注意力的输出只是标签的混合，"
                "标签里没有的内容永远拿不回来（本章图书馆实验里读出误差是 1.000）。",
                "v = x @ w_v，不是 x @ w_k。",
                (lambda x, w_q, w_k, w_v: (x @ w_q, x @ w_k, x @ w_k),)),
        Mistake("one_matrix_for_all", "三个分身用了同一副眼镜",
                "Q、K、V 是同一个 x 乘上三个不同的矩阵得到的；都用 w_q，三个分身就一模一样，"
                "“我找什么”“我是什么”“我交出什么”分不开了。",
                "q 用 w_q，k 用 w_k，v 用 w_v。",
                (lambda x, w_q, w_k, w_v: (x @ w_q, x @ w_q, x @ w_q),)),
        Mistake("column_convention", "按列向量的写法算成了转置（W @ x.T）",
                "本书的向量是行向量，一句话摞成 (T, D) 的 x，写成 x @ W；照搬列向量教科书里的 W x，"
                "得到的是 (d_k, T)：每个词占一列而不是一行。",
                "x 在左边：q = x @ w_q，形状 (T, d_k)。",
                (lambda x, w_q, w_k, w_v: (w_q.T @ x.T, w_k.T @ x.T, w_v.T @ x.T),)),
    ),
    hints=(
        "三行：q = x @ w_q，k = x @ w_k，v = x @ w_v，然后 return q, k, v。",
        "形状检查：(T, D) @ (D, d_k) → (T, d_k)。每个词是一行。",
    ),
)


# ---------------------------------------------------------------- cosine_similarity：只看方向


def cosine_similarity(a, b):
    dot = np.sum(a * b)                           # a · b：对应位置相乘再相加
    len_a = np.sqrt(np.sum(a * a))                # |a|：平方和再开根号
    len_b = np.sqrt(np.sum(b * b))                # |b|
    return float(dot / (len_a * len_b))           # cos θ = a·b / (|a| |b|)


def _cosine_cases(rng: np.random.Generator) -> list[Case]:
    a = rng.normal(size=6)
    return [
        Case("手算的例子：[3, 4] 和 [1, 2]", (np.array([3.0, 4.0]), np.array([1.0, 2.0]))),
        Case("手算的例子：互相垂直的 [2, 0] 和 [0, 5]", (np.array([2.0, 0.0]), np.array([0.0, 5.0]))),
        Case("同一方向：a 和 3a", (a, 3 * a)),
        Case("正好相反：a 和 -a", (a, -a)),
        Case("随机：d = 64", (rng.normal(size=64), rng.normal(size=64))),
        Case("很长的向量：每个数都是几千", (rng.normal(size=8) * 5000, rng.normal(size=8) * 3000)),
        Case("很短的向量：每个数都是千分之几", (rng.normal(size=5) * 1e-3, rng.normal(size=5) * 2e-3)),
        Case("整数向量：[1, 2, 2] 和 [2, 1, 2]", (np.array([1, 2, 2]), np.array([2, 1, 2]))),
        Case("float32 的输入", (rng.normal(size=16).astype(np.float32), rng.normal(size=16).astype(np.float32)),
             rtol=1e-5, atol=1e-6),
    ]


def _dot(a, b):
    return float(np.sum(a * b))


def _length(a):
    return float(np.sqrt(np.sum(a * a)))


COSINE_SIMILARITY = Exercise(
    name="cosine_similarity",
    chapter=3,
    signature="cosine_similarity(a, b)",
    task="两个一维向量的余弦相似度：cos θ = a·b / (|a| |b|)，只看方向、不管长度。"
         "a 和 b 的形状都是 (d,)；返回一个数（float），在 -1 和 1 之间。",
    solution=cosine_similarity,
    cases=_cosine_cases,
    mistakes=(
        Mistake("dot_not_cosine", "只算了点积，没有除以长度",
                "点积既看方向又看长度：把 a 拉长 3 倍，点积也变成 3 倍；余弦相似度要除以两个长度，"
                "才只剩方向（a 和 3a 的余弦是 1）。",
                "最后除以 np.linalg.norm(a) * np.linalg.norm(b)。",
                (lambda a, b: _dot(a, b), lambda a, b: np.dot(a, b))),
        Mistake("squared_norms", "除以了长度的平方",
                "长度 |a| 是平方和再开根号；a @ a 是长度的平方。除以 (a @ a)(b @ b) 缩得太多，"
                "[3, 4] 和 [1, 2] 得到 0.088 而不是 0.984。",
                "|a| = np.sqrt(a @ a)（或 np.linalg.norm(a)），别忘了开根号。",
                (lambda a, b: _dot(a, b) / (_dot(a, a) * _dot(b, b)),)),
        Mistake("divides_by_one_length", "只除以了一个向量的长度",
                "a·b / |a| 是 b 投在 a 方向上的“影子”长度（本章射箭打靶图里的绿线），还带着 b 的长度；"
                "余弦要两个长度都除掉。",
                "分母是 |a| × |b|：np.linalg.norm(a) * np.linalg.norm(b)。",
                (lambda a, b: _dot(a, b) / _length(a), lambda a, b: _dot(a, b) / _length(b))),
    ),
    hints=(
        "余弦相似度 = 点积 ÷ (a 的长度 × b 的长度)。",
        "点积：a @ b（或 np.sum(a * b)）；长度：平方和再开根号，np.sqrt(a @ a) 或 np.linalg.norm(a)。",
        "最后用 float(...) 把结果变成一个普通的数：return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))。",
    ),
)

EXERCISES = (QKV_PROJECTIONS, COSINE_SIMILARITY)
