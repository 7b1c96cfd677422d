"""自测题库，第 5–8 章：多头注意力、位置编码、复杂度、一层 Transformer。数值答案都由本包当场算出。

素材里的八道自测题有两道在这里（多头、位置编码，``from_seed=True``）。
本模块只导入 ``question``（题的格式），以及算答案要用的 core、lessons。
"""

from __future__ import annotations

import functools

import numpy as np

from ..core.attention import causal_mask, scaled_dot_product_attention
from ..core.encoder import init_encoder_params
from ..core.layer_norm import layer_norm
from ..core.positional import rope, sinusoidal_positional_encoding
from ..lessons import costs
from ..lessons.head_training import head_gap, init_head_weights, train_heads, two_relation_task
from .question import Question

__all__ = ["questions", "parameter_count", "order_blind", "rope_scores", "twin_heads"]


@functools.lru_cache(maxsize=32)
def parameter_count(d_model: int, d_ff: int, keys: tuple[str, ...]) -> int:
    """一层编码器里 ``keys`` 这几个参数一共有多少个数（由 ``init_encoder_params`` 实际生成后数出来；
    同样的参数在一个进程里只生成一次）。

    >>> parameter_count(512, 2048, ("w_q", "w_k", "w_v", "w_o"))
    1048576
    """
    params = init_encoder_params(d_model, d_ff, np.random.default_rng(0))
    return int(sum(params[k].size for k in keys))


def order_blind(T: int = 5, d: int = 4) -> tuple[bool, bool]:
    """不加位置编码时把词序倒过来：(输出是否只是跟着倒过来, 所有词输出的平均是否完全相同)。

    >>> order_blind()
    (True, True)
    """
    x = np.random.default_rng(0).normal(size=(T, d))                  # (T, D)
    out, _ = scaled_dot_product_attention(x, x, x)                    # (T, D)
    out_rev, _ = scaled_dot_product_attention(x[::-1], x[::-1], x[::-1])
    return bool(np.allclose(out_rev, out[::-1])), bool(np.allclose(out_rev.mean(0), out.mean(0)))


def rope_scores(T: int = 12, d: int = 8) -> np.ndarray:
    """同一对 q、k 放在每个位置上，RoPE 之后的分数表 scores[m, n] = rope(q)_m · rope(k)_n。"""
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, d))
    qs, ks = rope(np.tile(q, (T, 1))), rope(np.tile(k, (T, 1)))      # (T, d)
    return qs @ ks.T                                                 # (T, T)


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


def _chapter5() -> list[Question]:
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


def _chapter6() -> list[Question]:
    same_order, same_mean = order_blind()
    pe = sinusoidal_positional_encoding(2, 4)
    scores = rope_scores()
    return [
        Question(
            "seed-position", 6, "动手算：注意力到底“瞎”在哪里", "易错题", "predict",
            "先猜：不加位置编码，把一句话的词序整个倒过来（比如“猫追狗”和“狗追猫”，“我打你”和“你打我”），自注意力的输出会怎样？",
            choices=("每个词的输出内容完全不变，只是跟着换了位置——两种词序分不出来", "输出完全变了", "会报错"),
            why=("猜对了。自注意力本身不看先后（置换等变），所以要给每个词发一个座位号：位置编码。",
                 "没猜对。每个词的分数只取决于词的内容，换了位置内容不变，输出也不变。",
                 "没猜对。注意力对任何顺序都照算不误——问题恰恰在于它算出来一样。"),
            correct=0, from_seed=True,
            reveal=(f"倒序后的输出 == 原输出倒过来：{same_order}",
                    f"所有词输出的平均完全相同：{same_mean}")),
        Question(
            "ch6-pe-value", 6, "动手算：论文里的公式，一个下标一个下标地看", "计算题", "number",
            "D = 4 的正弦位置编码：位置 p = 1 的第 0 列 PE(1, 0) 是多少？（保留三位小数）",
            answer=float(pe[1, 0]), tolerance=6e-4,
            explain=f"第 0 列是 sin(p·ω₀)，ω₀ = 1，所以 PE(1, 0) = sin 1 ≈ {pe[1, 0]:.3f}。位置 0 的整行是 "
                    f"{pe[0].tolist()}：sin 0 = 0，cos 0 = 1。"),
        Question(
            "ch6-index-i", 6, "动手算：论文里的公式，一个下标一个下标地看", "易错题", "choice",
            "正弦位置编码的公式里，sin(p·ω_i) 中的 i 是什么？",
            choices=("第几个词", "第几对维度（第几根转速不同的指针），只和 D 有关", "句子的长度"),
            why=("不对。第几个词是 p。", "对。D = 4 时 i 只有 0 和 1，不管句子多长。", "不对。公式里没有句子长度。"),
            correct=1),
        Question(
            "ch6-rope", 6, "RoPE 尝鲜：不是“加”一个座位号，而是“转”一下", "机制题", "predict",
            "先猜：用 RoPE 时，同一对 q、k，“位置 10 的查询对位置 7 的键”和“位置 3 的查询对位置 0 的键”，分数相比如何？",
            choices=("完全相同", "前者更大", "后者更大"),
            why=("猜对了。RoPE 的分数只看两个位置相隔多远（p − p′），这里都是 3。",
                 "没猜对。位置的绝对值不影响分数，只有相隔多远才影响。", "没猜对。两对都相隔 3 个位置。"),
            correct=0,
            reveal=(f"scores[10, 7] = {scores[10, 7]:.4f}", f"scores[3, 0]  = {scores[3, 0]:.4f}")),
    ]


def _chapter7() -> list[Question]:
    ratio = costs.attention_multiply_adds(2048, 64) / costs.attention_multiply_adds(1024, 64)
    mib = costs.score_matrix_bytes(4096, "float32") / 2**20
    allowed = int(causal_mask(4).sum())
    return [
        Question(
            "ch7-double", 7, "动手算：一层要做多少次乘加", "计算题", "number",
            "d_k 不变，上下文从 1024 个词加到 2048 个词。注意力里打分和加权求和的乘加次数变成原来的几倍？",
            answer=float(ratio), tolerance=0.0, unit="倍",
            explain=f"2·T²·d：T 翻倍，T² 变成 {ratio:g} 倍。圆桌上人数翻倍，握手次数翻四倍。"),
        Question(
            "ch7-bytes", 7, "动手算：一层要做多少次乘加", "计算题", "number",
            "n = 4096 个词，一张 n × n 的注意力分数表用 float32（每个数 4 字节）存，要多少 MiB？（1 MiB = 2²⁰ 字节）",
            answer=float(mib), tolerance=0.0, unit="MiB",
            explain=f"4096² × 4 字节 = {costs.score_matrix_bytes(4096, 'float32')} 字节 = {mib:g} MiB；这还只是一个头、一层。"),
        Question(
            "ch7-kv-cache", 7, "动手算：KV 缓存，生成时不重算", "机制题", "choice",
            "一个字一个字生成时，KV 缓存存的是什么？",
            choices=("之前每个词的 K 和 V：新词只算自己的 q，再和缓存里的 K、V 算一行注意力",
                     "之前每个词的 Q", "整张 n × n 的注意力权重表"),
            why=("对。旧词的 K、V 不会变，存下来就不必重算；分数表只新增最后一行。",
                 "不对。旧词的查询以后再也用不到——新的一行只需要新词自己的 q。",
                 "不对。缓存的是 K、V，不是整张表；权重表每次只新增一行，用完就可以丢。"),
            correct=0),
        Question(
            "ch7-online", 7, "动手算：在线 softmax，不存整张表也能算对", "易错题", "choice",
            "分块注意力（tiled attention）一块一块地读键和值，不存整张分数表。它的结果和普通注意力相比如何？",
            choices=("只是近似，块越小越不准", "完全一样（只差浮点舍入）：在线 softmax 边走边把旧的部分和“打折换算”",
                     "只有因果掩码时才一样"),
            why=("不对。分块注意力是精确算法，不是近似。", "对。它省的是内存，不是精度。",
                 "不对。有没有掩码，结果都和普通注意力一样。"),
            correct=1),
        Question(
            "ch7-causal", 7, "动手算：KV 缓存，生成时不重算", "计算题", "number",
            "4 个词的因果掩码（每个词只能看自己和前面的词）里，一共有多少格是“允许看”的？",
            answer=float(allowed), tolerance=0.0, unit="格",
            explain=f"1 + 2 + 3 + 4 = {allowed}：下三角连同对角线。对角线以上的格子在 softmax 之前被设成 −∞，权重为 0。"),
    ]


def _chapter8() -> list[Question]:
    x = np.array([1.0, 2.0, 3.0, 4.0])
    normed = layer_norm(x, np.ones(4), np.zeros(4))
    ffn = parameter_count(512, 2048, ("w_1", "b_1", "w_2", "b_2"))
    return [
        Question(
            "ch8-residual", 8, "零件三：残差连接——在原来的笔记上添", "机制题", "choice",
            "残差连接把子层写成 x + 子层(x)。它最直接的好处是什么？",
            choices=("原来的信息 x 原样保留，子层只需学“要补充什么”；梯度也能沿着这条直路传回前面的层",
                     "让计算量减半", "代替位置编码"),
            why=("对。就像在笔记上添批注而不是擦掉重写；很深的堆叠也能训练。",
                 "不对。残差多了一次加法，计算量几乎不变。", "不对。残差不带任何位置信息。"),
            correct=0),
        Question(
            "ch8-layernorm", 8, "零件一：层归一化，一个向量手算", "计算题", "number",
            "对向量 [1, 2, 3, 4] 做层归一化（γ 全为 1，β 全为 0，ε = 10⁻⁵）。第一个数变成多少？（保留三位小数）",
            answer=float(normed[0]), tolerance=6e-4,
            explain=f"均值 2.5，方差 1.25：(1 − 2.5) ÷ √1.25 ≈ {normed[0]:.3f}。整行变成 {np.round(normed, 3).tolist()}，"
                    "均值 0、方差 1。"),
        Question(
            "ch8-ffn", 8, "零件二：前馈网络——每个词各自“自习”", "计算题", "number",
            "前馈网络 FFN(x) = max(0, x W_1 + b_1) W_2 + b_2，d_model = 512，d_ff = 2048。一层 FFN 有多少个参数（连偏置）？",
            answer=float(ffn), tolerance=0.0, unit="个",
            explain=f"W_1 是 512 × 2048，b_1 有 2048 个，W_2 是 2048 × 512，b_2 有 512 个：一共 {ffn}，"
                    f"大约是多头注意力四个投影矩阵的两倍。"),
        Question(
            "ch8-pre-ln", 8, "组装：一层编码器，每一步的形状", "易错题", "choice",
            "论文原版（post-LN）和今天常用的 pre-LN，区别在哪里？",
            choices=("post-LN 在残差相加之后做层归一化：LN(x + 子层(x))；pre-LN 先归一化再进子层：x + 子层(LN(x))",
                     "pre-LN 不用残差连接", "两者只是名字不同"),
            why=("对。pre-LN 让残差这条直路上没有归一化挡着，深的模型更容易训练。",
                 "不对。两种写法都有残差，差别只在 LayerNorm 放在哪里。", "不对。两者算出来不一样。"),
            correct=0),
        Question(
            "ch8-reverse", 8, "故意弄坏：去掉位置编码", "易错题", "choice",
            "第 8 章训练一个小 Transformer 把符号序列倒过来。去掉位置编码以后，它为什么学不会？",
            choices=("模型太小", "没有位置，第 t 个输出不知道自己该去找哪个位置的词——注意力对词序是“瞎”的",
                     "倒序任务需要 RNN"),
            why=("不对。同样大小的模型加上位置编码就能学会。",
                 "对。倒序要求第 t 个输出去看倒数第 t 个输入；不知道谁在第几位，就只能瞎猜。",
                 "不对。注意力加上位置编码，就能把注意力图学成一条反对角线。"),
            correct=1),
    ]


def questions() -> list[Question]:
    """第 5–8 章的题：素材里的两道，加上本书自己的题。

    >>> qs = questions()
    >>> sorted({q.chapter for q in qs}), sum(q.from_seed for q in qs)
    ([5, 6, 7, 8], 2)
    """
    return _chapter5() + _chapter6() + _chapter7() + _chapter8()
