"""第 4 章的练习：softmax，以及完整的缩放点积注意力（四步加掩码）。

每个常见错误都附一份“错误的写法”，检查时在同样的输入上重算，读者的结果和它处处一样就报告这个错误。
"""

from __future__ import annotations

import numpy as np

from ..core.softmax import softmax_unchecked  # 错误写法里的 softmax 借用 core 的（参考答案自己写）
from .checker import Case, Exercise, Mistake

__all__ = ["EXERCISES"]


# ---------------------------------------------------------------- softmax


def softmax(z):
    z = np.asarray(z)
    shifted = z - z.max(axis=-1, keepdims=True)   # 先减去每行的最大值：e^x 不会溢出，结果不变
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)      # 每行（最后一维）单独归一化


def _softmax_cases(rng: np.random.Generator) -> list[Case]:
    return [
        Case("手算的例子：z = [1, 2, 3]", (np.array([1.0, 2.0, 3.0]),)),
        Case("手算的例子：z = [5, 2, 0]", (np.array([5.0, 2.0, 0.0]),)),
        Case("二维（每一行单独归一化）", (rng.normal(size=(3, 4)),)),
        Case("三维随机", (rng.normal(scale=3.0, size=(2, 3, 5)),)),
        Case("一行全相同", (np.array([[2.0, 2.0, 2.0, 2.0], [0.0, 1.0, 2.0, 3.0]]),)),
        Case("很大的数：z = [1000, 1001]", (np.array([1000.0, 1001.0]),)),
        Case("很小的数：z = [-1000, -1002, -1001]", (np.array([-1000.0, -1002.0, -1001.0]),)),
        Case("float32 的输入", (rng.normal(size=(4, 6)).astype(np.float32),), rtol=2e-6, atol=1e-7),
    ]


SOFTMAX = Exercise(
    name="softmax",
    chapter=4,
    signature="softmax(z)",
    task="沿最后一维做 softmax：每一行变成加起来等于 1 的正数；z 可以是任意形状；很大的数也不能溢出。",
    solution=softmax,
    cases=_softmax_cases,
    mistakes=(
        Mistake("wrong_axis", "归一化错了方向",
                "softmax 要让每一行（最后一维）加起来是 1；你的结果是每一列（或整个数组）加起来是 1。"
                "一维输入看不出来，二维就错了。",
                "求和和求最大值都写 axis=-1, keepdims=True。",
                (lambda z: softmax_unchecked(z, 0),
                 lambda z: np.exp(z) / np.exp(z).sum(axis=0, keepdims=True),
                 lambda z: np.exp(z - z.max()) / np.exp(z - z.max()).sum())),
        Mistake("no_max_shift", "没有先减去最大值",
                "e^1000 超出了 float64 能表示的范围（约 1.8e308），变成 inf，inf/inf 得到 nan。"
                "数学上 softmax(z) = softmax(z − c)，减去最大值后最大的指数是 e^0 = 1，不会溢出。",
                "先算 z - z.max(axis=-1, keepdims=True)，再取 exp。",
                (lambda z: np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True),)),
        Mistake("no_exp", "忘了取指数",
                "直接用 z 除以 z 的和，负数会变成负的“概率”，和为 0 时还会除以 0；softmax 先用 e^z 把每个数变成正数。",
                "先 np.exp，再除以和。",
                (lambda z: z / z.sum(axis=-1, keepdims=True),
                 lambda z: (z - z.max(axis=-1, keepdims=True)) / (z - z.max(axis=-1, keepdims=True)).sum(
                     axis=-1, keepdims=True))),
        Mistake("not_normalised", "忘了除以总和",
                "e^z 都是正数，但加起来不等于 1，还不是“百分比”。",
                "最后除以 e.sum(axis=-1, keepdims=True)。",
                (lambda z: np.exp(z - z.max(axis=-1, keepdims=True)), np.exp)),
    ),
    hints=(
        "softmax(z)_i = e^{z_i} / Σ_j e^{z_j}：先取指数，再除以这一行的和。",
        "“每一行”就是最后一维：z.sum(axis=-1, keepdims=True) 的形状能和 z 对齐相除。",
        "很大的数会让 np.exp 溢出：先减去每行的最大值 z.max(axis=-1, keepdims=True)，结果不变。",
    ),
)


# ---------------------------------------------------------------- attention


def attention(q, k, v, mask=None):
    d_k = q.shape[-1]
    scores = q @ k.T / d_k ** 0.5                      # (T, S) 第 1、2 步：点积，除以 √d_k
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)       # 不许看的位置打 -inf 分，softmax 后正好是 0
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)   # (T, S) 第 3 步：每一行是一组百分比
    return weights @ v, weights                        # (T, d_v) 第 4 步：加权求和


def _attend(q, k, v, mask, scale, axis=-1, mask_mode="before"):
    scores = q @ k.T * scale
    if mask is not None and mask_mode == "before":
        scores = np.where(mask, scores, -np.inf)
    if mask is not None and mask_mode == "inverted":
        scores = np.where(mask, -np.inf, scores)
    weights = softmax_unchecked(scores, axis)
    if mask is not None and mask_mode == "after":
        weights = np.where(mask, weights, 0.0)
    return weights @ v, weights


def _random_mask(rng: np.random.Generator, t: int, s: int) -> np.ndarray:
    mask = rng.random((t, s)) < 0.6
    mask[np.arange(t), rng.integers(0, s, size=t)] = True   # 每一行至少能看一个位置
    return mask


def _attention_cases(rng: np.random.Generator) -> list[Case]:
    q = np.array([[1.0, 0.0], [0.0, 1.0]])
    k = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    v = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    causal = np.tril(np.ones((4, 4), dtype=bool))
    r = lambda *shape: rng.normal(size=shape)  # noqa: E731
    return [
        Case("手算的例子：T = 2, S = 3, d_k = 2", (q, k, v)),
        Case("随机：T = 3, S = 5, d_k = 8, d_v = 4", (r(3, 8), r(5, 8), r(5, 4))),
        Case("随机加掩码（True = 可以看）", (r(4, 8), r(6, 8), r(6, 3)), {"mask": _random_mask(rng, 4, 6)}),
        Case("因果掩码：T = S = 4", (r(4, 16), r(4, 16), r(4, 2)), {"mask": causal}),
        Case("手算的例子加掩码：第 1 个词不许看第 3 个", (q, k, v),
             {"mask": np.array([[True, True, False], [True, True, True]])}),
        Case("分数很大", (r(2, 4) * 30, r(3, 4) * 30, r(3, 2))),
        Case("float32 的输入", (r(3, 8).astype(np.float32), r(4, 8).astype(np.float32),
                                r(4, 5).astype(np.float32)), rtol=2e-5, atol=1e-6),
    ]


def _scale(q):
    return 1.0 / q.shape[-1] ** 0.5


ATTENTION = Exercise(
    name="attention",
    chapter=4,
    signature="attention(q, k, v, mask=None)",
    task="缩放点积注意力：返回 (输出, 注意力权重)。q 的形状 (T, d_k)，k (S, d_k)，v (S, d_v)；"
         "mask 是 (T, S) 的布尔数组，True 表示可以看。",
    solution=attention,
    cases=_attention_cases,
    returns=("output", "weights"),
    mistakes=(
        Mistake("no_scale", "忘了除以 √d_k",
                "d_k 越大，点积的波动越大，softmax 会变得“赢家通吃”，梯度几乎为 0（第 4 章的实验三）。",
                "分数写成 q @ k.T / np.sqrt(d_k)。",
                (lambda q, k, v, mask=None: _attend(q, k, v, mask, 1.0),)),
        Mistake("scale_by_d_k", "除以了 d_k，而不是 √d_k",
                "点积的标准差随 √d_k 增长，除以 √d_k 正好把它拉回 1；除以 d_k 缩得太多，分数挤在 0 附近，"
                "注意力变得过于平均。",
                "用 np.sqrt(d_k)（或 d_k ** 0.5），不是 d_k。",
                (lambda q, k, v, mask=None: _attend(q, k, v, mask, 1.0 / q.shape[-1]),)),
        Mistake("softmax_wrong_axis", "softmax 沿错了方向",
                "每个查询（每一行）对所有键的权重要加起来是 1；你的权重是每一列（每个键）加起来是 1。",
                "softmax 沿最后一维：axis=-1。",
                (lambda q, k, v, mask=None: _attend(q, k, v, mask, _scale(q), axis=0),)),
        Mistake("mask_ignored", "没有用上掩码",
                "mask 为 False 的位置（比如未来的词）不许看，它们的权重必须是 0；你的函数对 mask 视而不见。",
                "在 softmax 之前写 scores = np.where(mask, scores, -np.inf)（mask 不是 None 时）。",
                (lambda q, k, v, mask=None: _attend(q, k, v, None, _scale(q)),)),
        Mistake("mask_after_softmax", "softmax 之后才把不许看的位置清零",
                "清零以后，每一行的权重加起来就小于 1 了（没有重新归一化），输出被悄悄缩小。",
                "掩码要在 softmax 之前用：不许看的分数设成 -inf，softmax 自然给出 0，剩下的自动加起来是 1。",
                (lambda q, k, v, mask=None: _attend(q, k, v, mask, _scale(q), mask_mode="after"),)),
        Mistake("mask_inverted", "把掩码用反了",
                "本书约定 True = 可以看；你把 True 的位置挡住了，只看本该挡住的位置。",
                "np.where(mask, scores, -np.inf)：mask 为 True 时保留分数。",
                (lambda q, k, v, mask=None: _attend(q, k, v, mask, _scale(q), mask_mode="inverted"),)),
    ),
    hints=(
        "四步：分数 = q @ k.T；除以 √d_k；softmax 沿最后一维；输出 = 权重 @ v。别忘了把权重也返回。",
        "掩码在 softmax 之前：np.where(mask, scores, -np.inf)。e^(-inf) = 0，被挡住的位置权重正好为 0。",
        "softmax 前减去每行的最大值（-inf 不影响最大值，只要每行至少有一个 True）；"
        "最后 return weights @ v, weights。",
    ),
)

EXERCISES = (SOFTMAX, ATTENTION)
