"""第 8 章的练习：层归一化 (LayerNorm)，以及逐位置的前馈网络 (FFN)。

每个常见错误都附一份（或几份）“错误的写法”，检查时在同样的输入上重算，读者的结果和它处处一样就报告这个错误。
测试输入的设计：二维输入（沿错了轴才看得出来）、一行全相同（不加 ε 就是 0/0）、方差不是 1（除以方差和除以标准差
才不一样）、γ ≠ 1 且 β ≠ 0（γ、β 交换才看得出来）；前馈网络的 b_1 有正有负（ReLU 放在加偏置之前才看得出来）。
"""

from __future__ import annotations

import numpy as np

from .checker import Case, Exercise, Mistake

__all__ = ["EXERCISES"]


# ---------------------------------------------------------------- layer_norm


def layer_norm(x, gamma, beta, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)                  # (..., 1) 每一行（一个词的向量）的均值 μ
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)   # (..., 1) 方差 σ²（除以 D）
    x_hat = (x - mu) / np.sqrt(var + eps)                # (..., D) 标准化：均值 0、方差 1
    return gamma * x_hat + beta                          # (..., D) 再乘 γ、加 β


def _ln(x, gamma, beta, eps, axis=-1, ddof=0, divide="sqrt", swap=False):
    """层归一化的各种写法（包括写错的）：沿哪一轴、方差除以 D 还是 D-1、除以什么、γ 和 β 换没换。"""
    mu = x.mean(axis=axis, keepdims=True)
    var = x.var(axis=axis, keepdims=True, ddof=ddof)
    centered = x - mu
    if divide == "sqrt":
        x_hat = centered / np.sqrt(var + eps)
    elif divide == "no_eps":
        x_hat = centered / np.sqrt(var)
    elif divide == "var":
        x_hat = centered / (var + eps)
    else:  # "var_no_eps"
        x_hat = centered / var
    return x_hat * beta + gamma if swap else x_hat * gamma + beta


def _layer_norm_cases(rng: np.random.Generator) -> list[Case]:
    v = np.array([2.0, 4.0, 6.0, 8.0])
    gamma, beta = np.array([1.0, 2.0, 0.5, 1.0]), np.array([0.0, 0.0, 1.0, -1.0])
    r = lambda *shape: rng.normal(size=shape)  # noqa: E731
    return [
        Case("手算的例子：x = [2, 4, 6, 8]，γ = 1，β = 0", (v, np.ones(4), np.zeros(4))),
        Case("手算的例子：x = [2, 4, 6, 8]，γ = [1, 2, 0.5, 1]，β = [0, 0, 1, -1]", (v, gamma, beta)),
        Case("二维：每个词一行，各自归一化（T = 3，D = 5）", (r(3, 5) * 2 + 1, r(5), r(5))),
        Case("三维：随机，形状 (2, 3, 4)", (r(2, 3, 4) * 3, r(4), r(4))),
        Case("一行全相同：方差是 0", (np.array([[3.0, 3.0, 3.0, 3.0], [1.0, 2.0, 3.0, 4.0]]), gamma, beta)),
        Case("方差很小：ε 不能忽略", (np.array([[1.0, 1.002, 0.999, 1.001]]), gamma, beta)),
        Case("很大的数：[2, 4, 6, 8] 放大一百万倍", (v * 1e6, gamma, beta)),
        Case("自己给 eps：eps = 0.5", (np.array([[1.0, 2.0, 3.0, 6.0], [0.0, 1.0, 0.0, 1.0]]), gamma, beta),
             {"eps": 0.5}),
        Case("float32 的输入：T = 4，D = 8", (r(4, 8).astype(np.float32), r(8).astype(np.float32), r(8).astype(np.float32)),
             rtol=2e-5, atol=2e-6),
    ]


LAYER_NORM = Exercise(
    name="layer_norm",
    chapter=8,
    signature="layer_norm(x, gamma, beta, eps=1e-5)",
    task="层归一化：x 的每一行（最后一维，一个词的 D 维向量）减去自己的均值、除以 √(方差 + eps)，再乘 gamma、加 beta。"
         "x 的形状 (..., D)，gamma、beta 的形状 (D,)；返回和 x 同形状的数组。",
    solution=layer_norm,
    cases=_layer_norm_cases,
    mistakes=(
        Mistake("wrong_axis", "沿错了方向归一化",
                "层归一化只看一个词自己的向量（一行，最后一维）；你的均值和方差是按列（跨不同的词）或整个数组算的。"
                "一维输入看不出来，二维就错了。",
                "均值和方差都写 axis=-1, keepdims=True。",
                (lambda x, gamma, beta, eps=1e-5: _ln(x, gamma, beta, eps, axis=0),
                 lambda x, gamma, beta, eps=1e-5: _ln(x, gamma, beta, eps, axis=None))),
        Mistake("divides_by_variance", "除以了方差，而不是标准差",
                "标准化要除以标准差 √σ²：这样结果的方差才是 1。除以方差 σ² 时，方差是 1/σ²，数的尺度没有统一。",
                "分母写 np.sqrt(var + eps)。",
                (lambda x, gamma, beta, eps=1e-5: _ln(x, gamma, beta, eps, divide="var"),
                 lambda x, gamma, beta, eps=1e-5: _ln(x, gamma, beta, eps, divide="var_no_eps"))),
        Mistake("no_eps", "分母里没有加 ε",
                "一行的数全都一样时方差是 0，除以 √0 得到 0/0 = nan；ε 是为了防止除以 0。"
                "方差很小时，加不加 ε 的结果也差得很多。",
                "分母写 np.sqrt(var + eps)，eps 用传进来的参数。",
                (lambda x, gamma, beta, eps=1e-5: _ln(x, gamma, beta, eps, divide="no_eps"),)),
        Mistake("gamma_beta_swapped", "γ 和 β 用反了",
                "γ 是缩放（乘），β 是平移（加）：LN(x) = γ ⊙ x̂ + β。你乘的是 β、加的是 γ。",
                "最后一步写 gamma * x_hat + beta。",
                (lambda x, gamma, beta, eps=1e-5: _ln(x, gamma, beta, eps, swap=True),)),
        Mistake("unbiased_variance", "方差除以了 D − 1",
                "层归一化的方差是“有偏”的：平方和除以 D（第 8 章的 [2, 4, 6, 8]，方差是 20 / 4 = 5）。"
                "np.std(..., ddof=1)、pandas 的 .std() 除以的是 D − 1。",
                "用 ((x - mu) ** 2).mean(axis=-1, keepdims=True)，或 x.var(axis=-1, keepdims=True)（默认 ddof=0）。",
                (lambda x, gamma, beta, eps=1e-5: _ln(x, gamma, beta, eps, ddof=1),)),
    ),
    hints=(
        "三步：每一行求均值 μ 和方差 σ²；x̂ = (x − μ) / √(σ² + ε)；返回 γ ⊙ x̂ + β（NumPy 里就是 *）。",
        "“每一行”是最后一维：x.mean(axis=-1, keepdims=True) 的形状是 (..., 1)，能和 x 对齐相减。",
        "方差除以 D（不是 D − 1）：((x - mu) ** 2).mean(axis=-1, keepdims=True)；ε 加在根号里面，用参数 eps。",
    ),
)


# ---------------------------------------------------------------- feed_forward


def feed_forward(x, w_1, b_1, w_2, b_2):
    hidden = np.maximum(x @ w_1 + b_1, 0)   # (T, d_ff) 升维，加偏置，再过 ReLU：负数变 0
    return hidden @ w_2 + b_2               # (T, D)    降回 D 维


def _ffn(x, w_1, b_1, w_2, b_2, relu="hidden", residual=False):
    """前馈网络的各种写法（包括写错的）：ReLU 放在哪里、有没有多加残差。"""
    z = x @ w_1 + b_1
    if relu == "hidden":
        z = np.maximum(z, 0)
    elif relu == "before_bias":
        z = np.maximum(x @ w_1, 0) + b_1
    out = z @ w_2 + b_2
    if relu == "output":
        out = np.maximum(out, 0)
    if relu == "both":
        out = np.maximum(np.maximum(z, 0) @ w_2 + b_2, 0)
    return x + out if residual else out


def _ffn_cases(rng: np.random.Generator) -> list[Case]:
    r = lambda *shape: rng.normal(size=shape)  # noqa: E731
    w_1 = np.array([[1.0, -1.0, 0.5], [0.0, 1.0, -1.0]])
    w_2 = np.array([[1.0, 0.0], [2.0, -1.0], [0.0, 3.0]])
    return [
        Case("手算的例子：x = [[1, -2]]，W_1 = I，b_1 = 0", (np.array([[1.0, -2.0]]), np.eye(2), np.zeros(2),
                                                        np.array([[2.0, 0.0], [3.0, 1.0]]), np.full(2, 0.5))),
        Case("手算的例子：D = 2，d_ff = 3，偏置有正有负", (np.array([[1.0, 2.0], [-1.0, 1.0]]), w_1,
                                                     np.array([0.5, -2.0, 1.0]), w_2, np.array([-1.0, 0.0]))),
        Case("随机：T = 5，D = 8，d_ff = 32（第 8 章的尺寸）", (r(5, 8), r(8, 32) / 3, r(32), r(32, 8) / 5, r(8))),
        Case("只有一个词：T = 1，D = 4，d_ff = 16", (r(1, 4), r(4, 16), r(16), r(16, 4), r(4))),
        Case("ReLU 全关：b_1 很负，隐藏层全是 0", (r(3, 4), r(4, 6) * 0.1, np.full(6, -10.0), r(6, 4), r(4))),
        Case("很大的数：x 和偏置约是 1000", (r(3, 4) * 1e3, r(4, 8), r(8) * 1e3, r(8, 4), r(4) * 1e3)),
        Case("float32 的输入：T = 4，D = 6，d_ff = 12", tuple(a.astype(np.float32) for a in (r(4, 6), r(6, 12), r(12), r(12, 6), r(6))),
             rtol=2e-5, atol=2e-5),
    ]


FEED_FORWARD = Exercise(
    name="feed_forward",
    chapter=8,
    signature="feed_forward(x, w_1, b_1, w_2, b_2)",
    task="逐位置的前馈网络 FFN(x) = max(0, x W_1 + b_1) W_2 + b_2：升到 d_ff 维、过 ReLU、再降回 D 维。"
         "x 的形状 (T, D)，w_1 (D, d_ff)，b_1 (d_ff,)，w_2 (d_ff, D)，b_2 (D,)；返回 (T, D)。"
         "只写前馈网络本身，残差连接不在这里加。",
    solution=feed_forward,
    cases=_ffn_cases,
    mistakes=(
        Mistake("no_relu", "忘了 ReLU",
                "没有 ReLU，两次矩阵乘法合起来还是一次矩阵乘法 (W_1 W_2)：升维白升了，前馈网络学不到任何非线性的规则。",
                "隐藏层写 np.maximum(x @ w_1 + b_1, 0)。",
                (lambda x, w_1, b_1, w_2, b_2: _ffn(x, w_1, b_1, w_2, b_2, relu="none"),)),
        Mistake("relu_on_output", "ReLU 放在了最后",
                "ReLU 只在隐藏层（升维之后）用一次；输出还要加回残差、再做层归一化，它可以是负数。"
                "你把输出里的负数也切成了 0。",
                "最后一步 hidden @ w_2 + b_2 之后不要再 np.maximum。",
                (lambda x, w_1, b_1, w_2, b_2: _ffn(x, w_1, b_1, w_2, b_2, relu="output"),
                 lambda x, w_1, b_1, w_2, b_2: _ffn(x, w_1, b_1, w_2, b_2, relu="both"))),
        Mistake("relu_before_bias", "先过 ReLU 再加偏置 b_1",
                "公式是 max(0, x W_1 + b_1)：偏置在 ReLU 里面，它决定这个隐藏单元“多大才打开”。"
                "先 ReLU 再加 b_1，隐藏层会出现负数，门槛也没有了。",
                "先加 b_1，再 np.maximum(..., 0)。",
                (lambda x, w_1, b_1, w_2, b_2: _ffn(x, w_1, b_1, w_2, b_2, relu="before_bias"),)),
        Mistake("adds_residual", "把残差也加进了前馈网络",
                "残差连接 x + FFN(x) 是在这一层里、前馈网络外面加的（第 8 章的组装）；这道题只要 FFN(x) 本身。",
                "返回 hidden @ w_2 + b_2，不要再加 x。",
                (lambda x, w_1, b_1, w_2, b_2: _ffn(x, w_1, b_1, w_2, b_2, residual=True),)),
    ),
    hints=(
        "两步：hidden = max(0, x W_1 + b_1)，形状 (T, d_ff)；输出 = hidden W_2 + b_2，形状 (T, D)。",
        "矩阵乘法用 @；逐个元素和 0 比取大的用 np.maximum(..., 0)（不是 np.max，np.max 会求整个数组的最大值）。",
        "偏置 b_1 在 ReLU 里面，ReLU 只用一次（在隐藏层）；残差 x + ... 不在这道题里。",
    ),
)

EXERCISES = (LAYER_NORM, FEED_FORWARD)
