"""自测题库，第 5 章：多头注意力。数值答案都由本包当场算出。

素材里的八道自测题有一道在这里（``from_seed=True``）。
``parameter_count`` 第 8 章的题库也用（数前馈网络的参数）。
本模块只导入 ``question``（题的格式），以及算答案要用的 core、lessons。
"""

from __future__ import annotations

import functools

import numpy as np

from ..core.encoder import init_encoder_params
from ..lessons.head_training import head_gap, init_head_weights, train_heads, two_relation_task
from .question import Question

__all__ = ["questions", "parameter_count", "twin_heads"]


@functools.lru_cache(maxsize=32)
def parameter_count(d_model: int, d_ff: int, keys: tuple[str, ...]) -> int:
    """一层编码器里 ``keys`` 这几个参数一共有多少个数（由 ``init_encoder_params`` 实际生成后数出来；
    同样的参数在一个进程里只生成一次）。

    >>> parameter_count(512, 2048, ("w_q", "w_k", "w_v", "w_o"))
    1048576
    """
    params = init_encoder_params(d_model, d_ff, np.random.default_rng(0))
    return int(sum(params[k].size for k in keys))


def twin_heads(steps: int = 400) -> dict[str, tuple[float, float, float]]:
    """第 5 章的对称性实验，缩短到 ``steps`` 步：两个头从完全相同的权重出发（``"相同"``），
    或者只差约百万分之一（``"只差一点点"``）。每种返回 (起点的两头之差, 训练后的两头之差, 训练后的损失)。

    同样的 ``steps`` 在一个进程里只训练一次（每次汇总题库都要用到它，见 ``_twin_heads``），返回的是一份新字典。

    >>> gaps = twin_heads(steps=20)
    >>> gaps["相同"][:2]
    (0.0, 0.0)
    """
    return dict(_twin_heads(steps))


@functools.lru_cache(maxsize=4)
def _twin_heads(steps: int) -> tuple[tuple[str, tuple[float, float, float]], ...]:
    task = two_relation_task(48, np.random.default_rng(0))
    same = init_head_weights(16, 2, np.random.default_rng(1), identical=True)
    noise = np.random.default_rng(2)
    starts = {"相同": same, "只差一点点": {n: w + 1e-6 * noise.normal(size=w.shape) for n, w in same.items()}}
    result = {}
    for name, start in starts.items():
        run = train_heads(task, start, steps=steps, checkpoint_every=steps)
        result[name] = (head_gap(run["checkpoints"][0], 2), head_gap(run["checkpoints"][-1], 2), float(run["losses"][-1]))
    return tuple(result.items())


def questions() -> list[Question]:
    """第 5 章的题：素材里的一道，加上本书自己的题。

    >>> qs = questions()
    >>> sorted({q.chapter for q in qs}), sum(q.from_seed for q in qs)
    ([5], 1)
    """
    mha = parameter_count(512, 2048, ("w_q", "w_k", "w_v", "w_o"))
    twins = twin_heads()
    return [
        Question(
            "seed-heads", 5, "动手算：头是练出来的", "机制题", "choice",
            "多头注意力里的 8 个头，是把同一个注意力重复算了 8 遍吗？",
            choices=("是，8 个头算的是同一件事，取平均更稳",
                     "不是。每个头有自己的 W_Q、W_K、W_V，在 d_k = D/H 维的子空间里看；训练把它们推向不同的关系，最后拼起来再乘 W_O",
                     "不是。8 个头分别处理句子的 8 段"),
            why=("不对。完全相同的头永远相同，相当于只有一个头——第 5 章的对称性实验里，这样的两个头损失最差。",
                 "对。起点的随机差别被梯度下降放大成分工：一个头看前一个词，一个头看搭档。"
                 "这有点像卷积网络里的多个输出通道，各自识别不同的模式。",
                 "不对。每个头都看整句话的所有词，分的是向量的维度（子空间），不是句子。"),
            correct=1, from_seed=True),
        Question(
            "ch5-dk", 5, "切头：先 reshape，再 transpose", "计算题", "number",
            "D = 512，H = 8 个头。每个头的 d_k 是多少？",
            answer=512 / 8, tolerance=0.0,
            explain=f"d_k = D / H = 512 / 8 = {512 // 8}。像把一根 512 节的香肠切成 8 段；"
                    "不过每一段都是各头自己的投影矩阵投出来的，不是把原来的词向量直接切开。"),
        Question(
            "ch5-params", 5, "代价：多几个头，不多花力气", "计算题", "number",
            "D = 512 时，多头注意力的四个投影矩阵 W_Q、W_K、W_V、W_O 一共有多少个参数（不算偏置）？",
            answer=float(mha), tolerance=0.0, unit="个",
            explain=f"每个矩阵 512 × 512，四个一共 4 × 512² = {mha}。和头数无关：头多了，每个头分到的维数就少了。"),
        Question(
            "ch5-symmetry", 5, "对称性实验：一模一样的两个头", "易错题", "predict",
            "先猜：两个头从完全相同的权重出发，一起训练很多步，它们会怎样？",
            choices=("永远一模一样", "慢慢分化出不同的分工", "其中一个变成 0"),
            why=("猜对了。相同的头得到相同的梯度，更新后还相同——对称性要靠随机的起点来打破。"
                 "就像几个人蒙着眼下山找宝藏：从同一个点出发、每步都往同一个方向走，永远走在一起。",
                 "没猜对。分化要靠起点不同；起点完全一样，梯度也完全一样。",
                 "没猜对。两个头的更新完全相同，谁也不会单独变成 0。"),
            correct=0,
            reveal=tuple(f"{name}：两头之差 {start:.1e} → 训练 400 步后 {end:.1e}，损失 {loss:.4f}"
                         for name, (start, end, loss) in twins.items())),
        Question(
            "ch5-wo", 5, "W_O 在哪里，做什么", "机制题", "choice",
            "各头的输出拼接起来以后，为什么还要再乘一个 W_O？",
            choices=("为了把形状从 (T, D) 变回 (T, D)", "让输出的每一维都能用上所有头的发现，把各头的结果混合起来",
                     "为了做 softmax"),
            why=("不对。拼接之后形状已经是 (T, D) 了，W_O 的作用不在形状。",
                 "对。拼接只是首尾相接，每一段仍只属于一个头；W_O 是把各头结论综合起来的“组长”。",
                 "不对。softmax 在每个头内部、乘 V 之前就做完了。"),
            correct=1),
    ]
