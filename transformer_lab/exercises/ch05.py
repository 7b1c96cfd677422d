"""第 5 章的练习：切头 (split_heads) 和它的逆运算拼接 (merge_heads)。

每个常见错误都附一份（或几份）“错误的写法”，检查时在同样的输入上重算，读者的结果和它处处一样就报告这个错误。
切头的错误只有内容错、形状对的时候最难发现，所以测试输入里有“数字 = 10 × 词号 + 维号”的手算例子：
一眼就能看出哪个数来自哪个词的哪一维。
"""

from __future__ import annotations

import numpy as np

from .checker import Case, Exercise, Mistake

__all__ = ["EXERCISES"]


def _labelled(t: int, d: int) -> np.ndarray:
    """第 t 个词的第 j 维写成 10t + j：十位是词号，个位是维号（第 5 章的做法）。"""
    return 10.0 * np.arange(t)[:, None] + np.arange(d)  # (T, D)


# ---------------------------------------------------------------- split_heads


def split_heads(x, num_heads):
    T, D = x.shape
    d_k = D // num_heads                          # 每个头分到的维数
    x = x.reshape(T, num_heads, d_k)              # (T, H, d_k) 每个词的 D 维切成 H 段，词的边界不乱
    return x.transpose(1, 0, 2)                   # (H, T, d_k) 把“头”换到最前面


def _split_cases(rng: np.random.Generator) -> list[Case]:
    r = lambda *shape: rng.normal(size=shape)  # noqa: E731
    return [
        Case("手算的例子：T = 4, D = 8, H = 2，数字 = 10 × 词号 + 维号", (_labelled(4, 8), 2)),
        Case("手算的例子：T = 2, D = 4, H = 2", (np.arange(8.0).reshape(2, 4), 2)),
        Case("随机：T = 5, D = 12, H = 3", (r(5, 12), 3)),
        Case("随机：T = 3, D = 12, H = 4", (r(3, 12), 4)),
        Case("论文的尺寸：T = 10, D = 512, H = 8", (r(10, 512), 8)),
        Case("只有一个头：H = 1", (r(3, 6), 1)),
        Case("每个头只有 1 维：H = D = 6", (r(3, 6), 6)),
        Case("只有一个词：T = 1", (r(1, 8), 4)),
        Case("很大的数：乘以 1e6", (r(6, 16) * 1e6, 4)),
        Case("float32 的输入", (r(4, 8).astype(np.float32), 2)),
    ]


SPLIT_HEADS = Exercise(
    name="split_heads",
    chapter=5,
    signature="split_heads(x, num_heads)",
    task="把 (T, D) 的 x 切成 num_heads 个头，返回 (H, T, D/H)：头 h 拿到每个词的第 h 段 d_k = D/H 维。",
    solution=split_heads,
    cases=_split_cases,
    mistakes=(
        Mistake("reshape_without_transpose", "只 reshape，没有转置",
                "数字在内存里一个词一个词地排着。一步 reshape(H, T, d_k) 只是把这一长串重新按 d_k 个一组分行，"
                "不管哪里是一个词的边界：头 0 的“第 1 个词”其实是词 0 的后半段。形状对，内容错，还不报错。"
                "（只写 reshape(T, H, d_k) 不转置，则连形状都是 (T, H, d_k)。）",
                "先 x.reshape(T, H, d_k)，再 .transpose(1, 0, 2) 把“头”这一维换到最前面。",
                (lambda x, num_heads: x.reshape(num_heads, x.shape[0], x.shape[1] // num_heads),
                 lambda x, num_heads: x.reshape(x.shape[0], num_heads, x.shape[1] // num_heads))),
        Mistake("heads_last", "把“头”放在了最后一个因子上",
                "reshape(T, d_k, H) 把 D 拆成 d_k × H，头号变成了跑得最快的那个下标：头 0 拿到第 0、H、2H…维，"
                "是隔 H 个取一个，而不是连续的一段。论文和本书的约定是前 d_k 维给头 0，接下来 d_k 维给头 1。",
                "拆成 (T, H, d_k)：头在前、d_k 在后，再 .transpose(1, 0, 2)。",
                (lambda x, num_heads: x.reshape(x.shape[0], x.shape[1] // num_heads, num_heads).transpose(2, 0, 1),
                 lambda x, num_heads: x.reshape(x.shape[0], x.shape[1] // num_heads, num_heads))),
    ),
    hints=(
        "先想清楚头 h 要什么：每个词的第 h 段，也就是 x[:, h*d_k:(h+1)*d_k]，其中 d_k = D // num_heads。",
        "x.reshape(T, H, d_k) 把每个词的 D 维切成 H 段，词与词的边界不会乱；这时形状是 (T, H, d_k)。",
        "最后把前两维对调：.transpose(1, 0, 2)，得到 (H, T, d_k)。只写 reshape(H, T, d_k) 形状也对，内容却错了。",
    ),
)


# ---------------------------------------------------------------- merge_heads


def merge_heads(x):
    H, T, d_k = x.shape
    x = x.transpose(1, 0, 2)                      # (T, H, d_k) 词换回最前面
    return x.reshape(T, H * d_k)                  # (T, D) 每个词的 H 段首尾相接 (concat)


def _merge_cases(rng: np.random.Generator) -> list[Case]:
    r = lambda *shape: rng.normal(size=shape)  # noqa: E731
    return [
        Case("手算的例子：把 10 × 词号 + 维号切成的 2 个头拼回去（T = 4, D = 8）",
             (split_heads(_labelled(4, 8), 2).copy(),)),
        Case("随机：H = 3, T = 5, d_k = 4", (r(3, 5, 4),)),
        Case("论文的尺寸：H = 8, T = 10, d_k = 64", (r(8, 10, 64),)),
        Case("只有一个头：H = 1", (r(1, 4, 6),)),
        Case("每个头只有 1 维：d_k = 1", (r(6, 3, 1),)),
        Case("只有一个词：T = 1", (r(4, 1, 3),)),
        Case("很大的数：乘以 1e6", (r(4, 6, 2) * 1e6,)),
        Case("float32 的输入", (r(2, 4, 4).astype(np.float32),), rtol=2e-6, atol=1e-7),
    ]


MERGE_HEADS = Exercise(
    name="merge_heads",
    chapter=5,
    signature="merge_heads(x)",
    task="split_heads 的逆运算：把 (H, T, d_k) 的各头输出拼回 (T, H·d_k)，每个词的 H 段按头的顺序首尾相接。",
    solution=merge_heads,
    cases=_merge_cases,
    mistakes=(
        Mistake("reshape_without_transpose", "只 reshape，没有先转置",
                "x 在内存里是一个头一个头地排着。直接 reshape(T, H·d_k) 会把头 0 的前几个词拼成“第 0 个词”，"
                "不同词的数字混在了一起。形状对，内容错。",
                "先 x.transpose(1, 0, 2) 变成 (T, H, d_k)，再 reshape(T, H * d_k)。",
                (lambda x: x.reshape(x.shape[1], x.shape[0] * x.shape[2]),)),
        Mistake("heads_last", "把“头”换到了最后一维再拼",
                "transpose(1, 2, 0) 得到 (T, d_k, H)，拼出来的每一行是“各头的第 0 维、各头的第 1 维……”交错排着，"
                "而不是头 0 的 d_k 维接着头 1 的 d_k 维。W_O 的每一行对应的是哪个头的哪一维就全乱了。",
                "只对调前两维：x.transpose(1, 0, 2)，形状 (T, H, d_k)，再 reshape。",
                (lambda x: x.transpose(1, 2, 0).reshape(x.shape[1], x.shape[0] * x.shape[2]),)),
        Mistake("summed_not_concatenated", "把各头加起来（或取平均），而不是拼接",
                "拼接是把各头的结果并排放，每个头的 d_k 维原样保留，合起来还是 D 维；加起来只剩 d_k 维，"
                "各头的发现挤进了同一批数里，再也分不开。混合各头是 W_O 的事，不是拼接的事。",
                "用拼接：x.transpose(1, 0, 2).reshape(T, H * d_k)（或 np.concatenate(list(x), axis=-1)）。",
                (lambda x: x.sum(axis=0), lambda x: x.mean(axis=0))),
    ),
    hints=(
        "拼接后第 t 行 = [头 0 的第 t 行, 头 1 的第 t 行, …] 首尾相接，一共 H·d_k = D 个数。",
        "先把“词”换到最前面：x.transpose(1, 0, 2) 的形状是 (T, H, d_k)。",
        "再 reshape(T, H * d_k)；也可以写 np.concatenate([x[h] for h in range(H)], axis=-1)。",
    ),
)

EXERCISES = (SPLIT_HEADS, MERGE_HEADS)
