"""第 7 章的练习：因果掩码，以及 KV 缓存要占多少字节。

每个常见错误都附一份（或几份）“错误的写法”，检查时在同样的输入上重算，读者的结果和它处处一样就报告这个错误。
两道题的输入都只是整数（和一个 dtype），读者不必检查坏输入：测试只传合法的值。
"""

from __future__ import annotations

import numpy as np

from .checker import Case, Exercise, Mistake

__all__ = ["EXERCISES"]


# ---------------------------------------------------------------- causal_mask


def causal_mask(T):
    i = np.arange(T)[:, None]                 # (T, 1) 查询的位置：第几行
    j = np.arange(T)[None, :]                 # (1, T) 键的位置：第几列
    return j <= i                             # (T, T) 布尔：只看自己和前面，True = 可以看


def _causal_cases(rng: np.random.Generator) -> list[Case]:
    return [Case("手算的例子：T = 3", (3,)),
            Case("常见的长度：T = 4", (4,)),
            Case("奇数长度：T = 5", (5,)),
            Case("只有一个词：T = 1", (1,)),
            Case("两个词：T = 2", (2,)),
            Case("长一点：T = 300", (300,))]


CAUSAL_MASK = Exercise(
    name="causal_mask",
    chapter=7,
    signature="causal_mask(T)",
    task="因果掩码：返回 (T, T) 的布尔数组，第 i 行第 j 列为 True 当且仅当 j ≤ i（第 i 个词只看自己和前面的词）。",
    solution=causal_mask,
    cases=_causal_cases,
    mistakes=(
        Mistake("inverted", "掩码反了：True 在对角线上方",
                "本书约定 True = 可以看。你的 True 正好落在“未来”（j > i）的位置，自己和前文反而都看不见："
                "生成时模型会偷看答案，而且最后一行一个 True 也没有，softmax 会变成 0/0。",
                "True 的位置是 j <= i：np.tril(np.ones((T, T), dtype=bool))。",
                (lambda T: np.triu(np.ones((T, T), dtype=bool), k=1),)),
        Mistake("diagonal_excluded", "把对角线也挡住了",
                "每个词要能看见自己：第 i 行第 i 列必须是 True。你只留下了 j < i，第 0 个词一个能看的位置都没有，"
                "这一行 softmax 成了 0/0（nan），其余每个词也丢了它自己的信息。",
                "条件写 j <= i（np.tril 的默认 k=0），不是 j < i（k=-1）。",
                (lambda T: np.tril(np.ones((T, T), dtype=bool), k=-1),)),
        Mistake("upper_triangle", "用了上三角：看自己和后面",
                "np.triu 留下的是对角线及其上方（j ≥ i）：每个词看自己和未来，看不见过去，方向反了。",
                "用下三角 np.tril：行号 i 是查询，列号 j 是键，j <= i 才是“前面”。",
                (lambda T: np.triu(np.ones((T, T), dtype=bool)),)),
        Mistake("additive_mask", "返回了加法掩码（0 和 -inf），不是布尔数组",
                "有的框架（比如 PyTorch 的 generate_square_subsequent_mask）用的掩码是加到分数上的：可以看的地方 0，"
                "不许看的地方 -inf。本书的掩码是布尔数组，由 np.where(mask, scores, -np.inf) 使用，"
                "0 会被当成 False，你的掩码在这里正好反了。",
                "直接返回比较的结果 j <= i，它本身就是布尔数组。",
                (lambda T: np.where(np.tril(np.ones((T, T), dtype=bool)), 0.0, -np.inf),
                 lambda T: np.triu(np.full((T, T), -np.inf), k=1),
                 lambda T: np.where(np.tril(np.ones((T, T), dtype=bool)), 0.0, -1e9))),
    ),
    hints=(
        "第 i 行是第 i 个词（查询），第 j 列是第 j 个词（键）；能看的条件是 j <= i。",
        "行号排成一列、列号排成一行：i = np.arange(T)[:, None]，j = np.arange(T)[None, :]，比较时广播成 (T, T)。",
        "return j <= i（或 np.tril(np.ones((T, T), dtype=bool))）：比较的结果本身就是布尔数组。",
    ),
)


# ---------------------------------------------------------------- kv_cache_bytes


def kv_cache_bytes(n, d, num_layers, dtype):
    bytes_per_number = np.dtype(dtype).itemsize   # float16 占 2 个字节，float32 占 4 个
    per_layer = 2 * n * d * bytes_per_number      # 每一层：k 和 v 两份，每份 n 个词 × d 个数
    return per_layer * num_layers                 # 每一层都有自己的一份缓存


def _kv_cases(rng: np.random.Generator) -> list[Case]:
    f16, f32, f64 = np.dtype("float16"), np.dtype("float32"), np.dtype("float64")
    return [
        Case("手算的例子：n = 6, d = 8, 1 层, float64", (6, 8, 1, f64)),
        Case("第 7 章的例子：n = 8192, d = 4096, 32 层, float16（4.0 GiB）", (8192, 4096, 32, f16)),
        Case("第 7 章的例子：n = 131072, d = 4096, 32 层, float16（64.0 GiB）", (131072, 4096, 32, f16)),
        Case("小模型：n = 1024, d = 256, 4 层, float32", (1024, 256, 4, f32)),
        Case("只有一个词：n = 1, d = 512, 6 层, float32", (1, 512, 6, f32)),
    ]


KV_CACHE_BYTES = Exercise(
    name="kv_cache_bytes",
    chapter=7,
    signature="kv_cache_bytes(n, d, num_layers, dtype)",
    task="KV 缓存要占多少字节：n 个词、每层宽 d、共 num_layers 层，每个数的类型是 dtype（比如 np.dtype('float16')）。"
         "每层存每个词的 k 和 v。返回一个整数。",
    solution=kv_cache_bytes,
    cases=_kv_cases,
    mistakes=(
        Mistake("only_k", "只算了 k，忘了 v",
                "注意力既要用键 k 打分，也要用值 v 加权求和，两样都得存：每层每个词 2 × d 个数，不是 d 个。",
                "乘上 2：2 * n * d * 每个数的字节 * num_layers。",
                (lambda n, d, num_layers, dtype: n * d * np.dtype(dtype).itemsize * num_layers,)),
        Mistake("no_layers", "忘了乘层数",
                "每一层的注意力都有自己的 k、v（由这一层自己的 W_K、W_V 算出来），各存一份。32 层就是 32 份。",
                "最后乘上 num_layers。",
                (lambda n, d, num_layers, dtype: 2 * n * d * np.dtype(dtype).itemsize,)),
        Mistake("bits_not_bytes", "用了位数 (bit)，不是字节数 (byte)",
                "float16 里的 16 是位数：一个数 16 位 = 2 个字节（1 字节 = 8 位）。按 16 乘，结果大了 8 倍。",
                "每个数的字节数是 np.dtype(dtype).itemsize（float16 是 2，float32 是 4）。",
                (lambda n, d, num_layers, dtype: 2 * n * d * np.dtype(dtype).itemsize * 8 * num_layers,)),
    ),
    hints=(
        "先数每一层存多少个数：每个词一个 k、一个 v，各 d 个数，n 个词一共 2 × n × d 个。",
        "每个数占几个字节：np.dtype(dtype).itemsize（float16 是 2）。",
        "每一层各有一份缓存：再乘 num_layers。第 7 章的例子 n = 8192, d = 4096, 32 层, float16 是 4 GiB（2**32 字节）。",
    ),
)

EXERCISES = (CAUSAL_MASK, KV_CACHE_BYTES)
