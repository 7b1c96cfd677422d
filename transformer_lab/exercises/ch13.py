"""第 13 章的练习：只在回答上算的交叉熵（损失掩码），以及 LoRA 的前向 x W + (α/r) x A B。

每个常见错误都附一份（或几份）“错误的写法”，检查时在同样的输入上重算，读者的结果和它处处一样就报告这个错误。
测试输入的设计：掩码里有 True 也有 False（求平均的分母、掩码取反才看得出来），有很大的打分（不减最大值就溢出）；
LoRA 的 α/r 不是 1、r 不是 1（忘了缩放、只乘 α 才看得出来），d_in、d_out、r 各不相同（r 取错了轴才看得出来）。
原地改动 W（W += …）由检查器自己认出（``mutates_input``）。
"""

from __future__ import annotations

import numpy as np

from .checker import Case, Exercise, Mistake

__all__ = ["EXERCISES"]


# ---------------------------------------------------------------- masked_cross_entropy


def masked_cross_entropy(logits, targets, loss_mask):
    shifted = logits - logits.max(axis=-1, keepdims=True)                # (T, V) 减最大值，e^x 不溢出
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))   # (T, V) log softmax
    picked = log_probs[np.arange(len(targets)), targets]                 # (T,) 每个位置正确答案的 log 概率
    return float(-picked[loss_mask].mean())                              # 只对掩码为 True 的位置（回答）求平均


def _mce(logits, targets, loss_mask, how="right"):
    """带掩码的交叉熵的各种写法（包括写错的）。"""
    rows = np.arange(len(targets))
    if how == "overflow":
        e = np.exp(logits)
        return float(-np.log(e[rows, targets] / e.sum(axis=-1))[loss_mask].mean())
    shifted = logits - logits.max(axis=-1, keepdims=True)
    losses = -(shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True)))[rows, targets]  # (T,)
    if how == "all_positions":
        return float(np.where(loss_mask, losses, 0.0).sum() / len(targets))
    if how == "no_mask":
        return float(losses.mean())
    if how == "inverted":
        return float(losses[~loss_mask].mean())
    if how == "no_minus":
        return float(-losses[loss_mask].mean())
    return float(losses[loss_mask].mean())


def _mce_cases(rng: np.random.Generator) -> list[Case]:
    def answer_after(T: int, q: int) -> np.ndarray:  # 前 q 个位置是问题，后面是回答
        return np.arange(T) >= q

    return [
        Case("手算的例子：打分全是 0，V = 4，只算后两个位置（答案 log 4）",
             (np.zeros((3, 4)), np.array([0, 1, 2]), np.array([False, True, True]))),
        Case("手算的例子：问题两格、回答两格",
             (np.array([[2.0, 1.0, 0.5], [0.5, 3.0, 1.0], [1.0, 1.0, 1.0], [0.0, 2.0, 0.0]]), np.array([0, 2, 1, 1]),
              answer_after(4, 2))),
        Case("随机：T = 8，V = 10，前 3 格是问题", (rng.normal(size=(8, 10)), rng.integers(0, 10, size=8), answer_after(8, 3))),
        Case("掩码不连续：两段回答", (rng.normal(scale=2.0, size=(7, 6)), rng.integers(0, 6, size=7),
                                    np.array([False, True, True, False, False, True, False]))),
        Case("只有一个位置算损失", (rng.normal(size=(5, 4)), rng.integers(0, 4, size=5), answer_after(5, 4))),
        Case("很大的打分：[1000, 1001, 999]",
             (np.array([[1000.0, 1001.0, 999.0], [1000.0, 990.0, 1002.0], [998.0, 1000.0, 1003.0]]), np.array([1, 0, 2]),
              answer_after(3, 1))),
        Case("float32 的打分：T = 6，V = 7", (rng.normal(scale=3.0, size=(6, 7)).astype(np.float32),
                                             rng.integers(0, 7, size=6), answer_after(6, 2)), rtol=2e-6, atol=1e-6),
    ]


MASKED_CROSS_ENTROPY = Exercise(
    name="masked_cross_entropy",
    chapter=13,
    signature="masked_cross_entropy(logits, targets, loss_mask)",
    task="指令微调的损失：logits 的形状 (T, V)，targets 是 (T,) 的整数（每个位置正确的下一个词），loss_mask 是 (T,) 的布尔数组，"
         "True 的位置是回答、False 的位置是问题。每个位置先算交叉熵 −log softmax(logits[t])[targets[t]]，"
         "再只对 loss_mask 为 True 的位置求平均，返回一个数 (float)。打分很大（比如 1000）时也不能溢出。",
    solution=masked_cross_entropy,
    cases=_mce_cases,
    mistakes=(
        Mistake("averages_over_all_positions", "把问题位置当成 0 算进了平均（除以 T）",
                "问题位置的损失被掩成 0 没错，但分母还是全部 T 个位置：回答越短，损失看起来越小，"
                "一批里长短不同的样本也就没法公平地比。要除以回答的位置数 loss_mask.sum()。",
                "picked[loss_mask].mean()；或者 (losses * loss_mask).sum() / loss_mask.sum()。",
                (lambda logits, targets, loss_mask: _mce(logits, targets, loss_mask, "all_positions"),)),
        Mistake("mask_ignored", "没有用掩码（问题位置也算了损失）",
                "你对全部 T 个位置求了平均，和第 9 章的交叉熵一样。这样模型也在学“背出问题”，"
                "而指令微调要它学的只是“怎么回答”。",
                "只取 loss_mask 为 True 的位置：picked[loss_mask]。",
                (lambda logits, targets, loss_mask: _mce(logits, targets, loss_mask, "no_mask"),)),
        Mistake("mask_inverted", "掩码用反了（损失算在问题上，没算在回答上）",
                "loss_mask 为 True 的是回答。你取了 ~loss_mask（或 loss_mask == False）的位置：模型在学背问题，"
                "回答的部分一点也没学。",
                "用 picked[loss_mask]，不要取反。",
                (lambda logits, targets, loss_mask: _mce(logits, targets, loss_mask, "inverted"),)),
        Mistake("overflow", "没有减最大值，打分大时溢出",
                "e^1000 超出了 float64 的范围（约 1.8e308），变成 inf，inf/inf = nan。"
                "减去每行的最大值 m，log softmax(z) = (z − m) − log Σ e^(z − m)，结果不变，也不会溢出。",
                "先 shifted = logits - logits.max(axis=-1, keepdims=True)，再用 shifted 算 log softmax。",
                (lambda logits, targets, loss_mask: _mce(logits, targets, loss_mask, "overflow"),)),
        Mistake("no_minus", "忘了负号",
                "log 概率不大于 0；损失是 −log p，猜得越准越接近 0。你的结果是负数，"
                "训练时“让损失变小”就成了“让正确回答的概率变小”。",
                "最后取负号：-picked[loss_mask].mean()。",
                (lambda logits, targets, loss_mask: _mce(logits, targets, loss_mask, "no_minus"),)),
    ),
    hints=(
        "先像第 9 章那样算出每个位置的损失 losses（形状 (T,)），再只留下回答的位置：losses[loss_mask]。",
        "平均的分母是回答有几个位置（loss_mask.sum()），不是 T。",
        "不溢出的 log softmax：shifted = logits - logits.max(axis=-1, keepdims=True)，"
        "log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))；"
        "picked = log_probs[np.arange(T), targets]，return float(-picked[loss_mask].mean())。",
    ),
)


# ---------------------------------------------------------------- lora_forward


def lora_forward(x, W, A, B, alpha):
    r = A.shape[1]                                        # 秩 r：A 的形状 (d_in, r)
    return x @ W + (alpha / r) * (x @ A @ B)              # (T, d_out) 原来的输出 + 缩放过的低秩修正


def _lora(x, W, A, B, alpha, scale=None):
    """LoRA 前向的各种写法：``scale`` 是乘在低秩那一项上的数（None 就是 α/r）。"""
    s = alpha / A.shape[1] if scale is None else scale
    return x @ W + s * (x @ A @ B)


def _lora_cases(rng: np.random.Generator) -> list[Case]:
    r = lambda *shape: rng.normal(size=shape)  # noqa: E731
    return [
        Case("手算的例子：x = [1, 2]，W = I，r = 1，α = 2（答案 [3, 4]）",
             (np.array([[1.0, 2.0]]), np.eye(2), np.array([[1.0], [0.0]]), np.array([[1.0, 1.0]]), 2.0)),
        Case("手算的例子：d_in = 3，d_out = 4，r = 2，α = 4（α/r = 2）",
             (np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]), np.ones((3, 4)), np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
              np.array([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0]]), 4.0)),
        Case("随机：T = 5，d_in = 8，d_out = 6，r = 2，α = 16", (r(5, 8), r(8, 6), r(8, 2), r(2, 6), 16.0)),
        Case("刚开始训练：B 全是 0，输出就是 x W", (r(4, 6), r(6, 5), r(6, 3), np.zeros((3, 5)), 8.0)),
        Case("α 是整数，r = 3，α = 1", (r(3, 7), r(7, 4), r(7, 3), r(3, 4), 1)),
        Case("α = r：缩放正好是 1（r = 4）", (r(2, 5), r(5, 9), r(5, 4), r(4, 9), 4.0)),
        Case("float32 的输入：r = 2，α = 8", tuple(a.astype(np.float32) for a in (r(3, 6), r(6, 5), r(6, 2), r(2, 5)))
             + (8.0,), rtol=2e-5, atol=1e-5),
    ]


LORA_FORWARD = Exercise(
    name="lora_forward",
    chapter=13,
    signature="lora_forward(x, W, A, B, alpha)",
    task="LoRA 线性层的前向：x 的形状 (T, d_in)，冻结的权重 W (d_in, d_out)，两个小矩阵 A (d_in, r)、B (r, d_out)，"
         "秩 r 从 A 的形状读出。返回 x W + (alpha / r) · x A B，形状 (T, d_out)。不要改动 W（它是冻结的预训练权重）。",
    solution=lora_forward,
    cases=_lora_cases,
    mistakes=(
        Mistake("forgot_scale", "忘了乘缩放 α/r",
                "低秩那一项要乘 α/r：这样换一个秩 r 时，同样的 α 给出差不多大的修正，学习率不必跟着重调。"
                "α = r 时看不出来，其他时候修正的大小就错了。",
                "return x @ W + (alpha / r) * (x @ A @ B)。",
                (lambda x, W, A, B, alpha: _lora(x, W, A, B, alpha, scale=1.0),)),
        Mistake("scale_alpha_not_over_r", "只乘了 α，没有除以 r",
                "缩放是 α/r，不是 α。r = 1 时两者一样，r 大时修正被放大了 r 倍。",
                "先 r = A.shape[1]，再乘 alpha / r。",
                (lambda x, W, A, B, alpha: _lora(x, W, A, B, alpha, scale=alpha),)),
        Mistake("rank_from_wrong_axis", "秩 r 从错的轴读出",
                "A 的形状是 (d_in, r)，B 是 (r, d_out)：r 是 A 的第二维（也是 B 的第一维）。"
                "你用了 A.shape[0]（d_in）或 B.shape[1]（d_out），缩放 α/r 就错了。",
                "r = A.shape[1]（或 B.shape[0]）。",
                (lambda x, W, A, B, alpha: _lora(x, W, A, B, alpha, scale=alpha / A.shape[0]),
                 lambda x, W, A, B, alpha: _lora(x, W, A, B, alpha, scale=alpha / B.shape[1]))),
        Mistake("forgot_frozen_weight", "只返回了低秩那一项（忘了 x W）",
                "LoRA 不是换掉 W，而是在冻结的 W 旁边加一条小路：输出 = 原来的 x W + 修正 (α/r) x A B。"
                "B 全是 0（刚开始训练）时，输出应该正好等于原来的 x W。",
                "return x @ W + (alpha / r) * (x @ A @ B)。",
                (lambda x, W, A, B, alpha: (alpha / A.shape[1]) * (x @ A @ B),)),
    ),
    hints=(
        "先读出秩：r = A.shape[1]。x @ A 的形状是 (T, r)，再 @ B 是 (T, d_out)，和 x @ W 一样。",
        "两项相加：原来的 x @ W，加上低秩修正 (alpha / r) * (x @ A @ B)。",
        "不要写 W += …（那会改掉冻结的权重）：直接 return x @ W + (alpha / r) * (x @ A @ B)。",
    ),
)

EXERCISES = (MASKED_CROSS_ENTROPY, LORA_FORWARD)
