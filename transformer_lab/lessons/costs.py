"""代价：数一数乘加次数 (multiply-adds) 和参数个数；占多少字节在 ``memory.py``（从这里也找得到）。

每层的计算量：RNN 是 T·d²，注意力是 T²·d；多头注意力的乘加和参数个数（与头数无关）；第 7 章的计算器：
前馈层 (feed-forward) 的乘加次数、逐词生成时用不用 KV 缓存的乘加，以及把一层的乘加和分数表的字节一次算齐的
``layer_costs``；第 10 章的真模型：整个 BERT 式编码器的参数个数 ``encoder_parameters`` 和 ``encoder_costs``
（参数、权重字节、每个词元的乘加、KV 缓存）；第 12 章的 Llama 式解码器（SmolLM2）：``decoder_parameters``
（分组查询注意力、SwiGLU、RMSNorm、共用的输出矩阵）。只是数数，不运行任何计算；真正量用时在 ``timing.py``。

占多少内存（一张 n × n 分数表、KV 缓存）在 ``memory.py``：``score_matrix_bytes``、``kv_cache_bytes`` 和 ``MAX_N``
也从这里导出，``tl.costs.kv_cache_bytes`` 这样的写法照样能用。
"""

from __future__ import annotations

from .. import _validation as check
from .memory import MAX_N, itemsize, kv_cache_bytes, score_matrix_bytes

__all__ = ["rnn_multiply_adds", "attention_multiply_adds", "feedforward_multiply_adds", "score_matrix_bytes",
           "layer_costs", "multi_head_multiply_adds", "multi_head_parameters", "decode_multiply_adds",
           "kv_cache_bytes", "encoder_parameters", "encoder_costs", "decoder_parameters", "MAX_N", "MAX_D"]

MAX_D = 2**16  # 计算器接受的宽度：d 到 65536（序列长度 n 的上限 MAX_N 在 memory.py）


def rnn_multiply_adds(T: int, d_in: int, d_h: int) -> int:
    """Elman RNN 读完 T 个词的乘加次数：每步 ``x_t @ W_xh`` 要 d_in·d_h 次，``h @ W_hh`` 要 d_h² 次。

    共 T·(d_in·d_h + d_h²)；d_in = d_h = d 时是 2·T·d²，即 O(n·d²)。tanh、偏置只有 T·d_h 次，不计。

    Parameters
    ----------
    T, d_in, d_h : int
        序列长度、输入长度、隐状态长度。

    Returns
    -------
    int

    Raises
    ------
    TypeError, ValueError
        任一参数不是正整数。

    Examples
    --------
    >>> rnn_multiply_adds(3, 2, 4)      # 3 × (2×4 + 4×4)
    72
    """
    T, d_in, d_h = (check.positive_int(n, name) for n, name in ((T, "T"), (d_in, "d_in"), (d_h, "d_h")))
    return T * (d_in * d_h + d_h * d_h)


def attention_multiply_adds(T: int, d_k: int, d_v: int | None = None, S: int | None = None) -> int:
    """缩放点积注意力的乘加次数：打分 ``q @ kᵀ`` 要 T·S·d_k 次，加权求和 ``weights @ v`` 要 T·S·d_v 次。

    S = T、d_k = d_v = d 时是 2·T²·d，即 O(n²·d)；softmax 的 T·S 次指数不计。算 Q、K、V 的投影另要
    3·T·d² 次，但每个词各算各的，不用排队。

    Parameters
    ----------
    T : int
        查询个数。
    d_k : int
        查询/键的长度。
    d_v : int, optional
        值的长度，默认等于 ``d_k``。
    S : int, optional
        键/值的个数，默认等于 ``T``（自注意力）；生成新词时 T = 1、S = 已有词数。

    Returns
    -------
    int

    Raises
    ------
    TypeError, ValueError
        任一参数不是正整数。

    Examples
    --------
    >>> attention_multiply_adds(3, 4)            # 3×3×4 + 3×3×4
    72
    >>> attention_multiply_adds(1, 4, S=100)     # 生成第 101 个词：1 个查询对 100 个键
    800
    """
    T, d_k = check.positive_int(T, "T"), check.positive_int(d_k, "d_k")
    d_v = d_k if d_v is None else check.positive_int(d_v, "d_v")
    S = T if S is None else check.positive_int(S, "S")
    return T * S * d_k + T * S * d_v


def feedforward_multiply_adds(T: int, d_model: int, d_ff: int | None = None) -> int:
    """前馈层 (feed-forward) 的乘加次数：每个词先乘 (d_model × d_ff)，再乘 (d_ff × d_model)，共 2·T·d_model·d_ff。

    原论文 d_ff = 4·d_model，于是是 8·T·d²：和 RNN 一样随 n 线性增长、随 d 平方增长。

    Parameters
    ----------
    T, d_model : int
        词数、模型宽度。
    d_ff : int, optional
        中间层宽度，默认 ``4 * d_model``。

    Returns
    -------
    int

    Raises
    ------
    TypeError, ValueError
        任一参数不是正整数。

    Examples
    --------
    >>> feedforward_multiply_adds(3, 2)        # 3 × (2×8 + 8×2)
    96
    """
    T, d_model = check.positive_int(T, "T"), check.positive_int(d_model, "d_model")
    d_ff = 4 * d_model if d_ff is None else check.positive_int(d_ff, "d_ff")
    return 2 * T * d_model * d_ff


def layer_costs(n: int, d: int) -> dict[str, int]:
    """第 7 章计算器：序列长度 n、宽度 d 时，一层里各部分的乘加次数与一张分数表的字节数。

    Parameters
    ----------
    n : int
        序列长度，1 到 ``MAX_N``。
    d : int
        宽度 (d_model = d_k = d_v = d_h)，1 到 ``MAX_D``。

    Returns
    -------
    dict of int
        ``attention`` 2n²d（打分 + 加权求和）；``projections`` 4nd²（算 Q、K、V，再加输出投影 W_O）；
        ``feedforward`` 8nd²（d_ff = 4d）；
        ``rnn`` 2nd²；``scores_float32`` / ``scores_float16`` n × n 分数表的字节数（一个头）。

    Raises
    ------
    TypeError, ValueError
        ``n`` 或 ``d`` 不是正整数，或超出计算器的范围。

    Examples
    --------
    >>> c = layer_costs(512, 512)
    >>> c["attention"] == c["rnn"]             # n = d 时一样多
    True
    """
    n, d = check.int_in_range(n, "n", 1, MAX_N), check.int_in_range(d, "d", 1, MAX_D)
    return {"attention": attention_multiply_adds(n, d), "projections": 4 * n * d * d,
            "feedforward": feedforward_multiply_adds(n, d), "rnn": rnn_multiply_adds(n, d, d),
            "scores_float32": score_matrix_bytes(n, "float32"), "scores_float16": score_matrix_bytes(n, "float16")}


def multi_head_multiply_adds(T: int, D: int, num_heads: int) -> dict[str, int]:
    """多头自注意力一层的乘加次数，分项数。

    投影 Q、K、V 与 W_O：4·T·D²；每个头的注意力（打分 + 加权求和）：2·T²·d_k，H 个头共 2·T²·D。
    两项都与 H 无关——切成更多头，只是把同样多的乘法分成了更小的几份。

    Returns
    -------
    dict
        ``projections``、``attention``、``total``。

    Raises
    ------
    TypeError, ValueError
        参数不是正整数，或 D 不能被 num_heads 整除。

    Examples
    --------
    >>> multi_head_multiply_adds(4, 8, 1) == multi_head_multiply_adds(4, 8, 8)
    True
    >>> multi_head_multiply_adds(4, 8, 2)["attention"]     # 2 个头 × 2 × 4² × 4
    256
    """
    T, D, H = (check.positive_int(n, name) for n, name in ((T, "T"), (D, "D"), (num_heads, "num_heads")))
    check.heads_divide(D, H, source="", name="D")
    projections = 4 * T * D * D
    attention = H * attention_multiply_adds(T, D // H)
    return {"projections": projections, "attention": attention, "total": projections + attention}


def multi_head_parameters(D: int, num_heads: int, bias: bool = False) -> int:
    """多头注意力的参数个数：W_Q、W_K、W_V、W_O 各 D × D（有偏置再加 4·D），与头数 H 无关。

    Raises
    ------
    TypeError, ValueError
        参数不是正整数，或 D 不能被 num_heads 整除。

    Examples
    --------
    >>> multi_head_parameters(512, 8), multi_head_parameters(512, 1)
    (1048576, 1048576)
    """
    D, H = check.positive_int(D, "D"), check.positive_int(num_heads, "num_heads")
    check.heads_divide(D, H, source="", name="D")
    return 4 * D * D + (4 * D if check.boolean(bias, "bias") else 0)


def decode_multiply_adds(T: int, d: int, cached: bool) -> int:
    """逐词生成 T 个词要做的乘加 (multiply-add) 次数：用 / 不用 KV 缓存。

    模型：一层注意力，宽 d（d_model = d_k = d_v = d；多头时 H 个头的 d_k 加起来也是 d，次数相同）。
    第 t 步 (t = 1, ..., T) 时前文有 t 个词：

    - 不用缓存：把 t 个词全部重新投影成 q、k、v（3·t·d² 次），再算完整的 t × t 注意力
      （分数 t·t·d 次，加权求和 t·t·d 次）。第 t 步共 3td² + 2t²d。
    - 用缓存：只投影新词（3d² 次），新词的 q 与 t 个键点积（t·d 次），加权求和（t·d 次）。第 t 步共 3d² + 2td。

    求和 (Σ t = T(T+1)/2，Σ t² = T(T+1)(2T+1)/6)：

    - 不用缓存：3d²·T(T+1)/2 + 2d·T(T+1)(2T+1)/6 —— 随 T³ 增长；
    - 用缓存：3d²·T + d·T(T+1) —— 随 T² 增长。

    Parameters
    ----------
    T : int
        生成的词数，正整数。
    d : int
        模型宽度，正整数。
    cached : bool
        是否用 KV 缓存。

    Returns
    -------
    int
        乘加次数（精确整数）。

    Raises
    ------
    TypeError
        ``T``、``d`` 不是整数，或 ``cached`` 不是 bool。
    ValueError
        ``T`` 或 ``d`` 不是正数。

    Examples
    --------
    T = 2, d = 1：不用缓存第 1 步 3 + 2 = 5，第 2 步 6 + 8 = 14；用缓存第 2 步只要 3 + 4 = 7。

    >>> decode_multiply_adds(2, 1, cached=False), decode_multiply_adds(2, 1, cached=True)
    (19, 12)
    """
    T = check.positive_int(T, "T")
    d = check.positive_int(d, "d")
    cached = check.boolean(cached, "cached")
    if cached:
        return 3 * d * d * T + d * T * (T + 1)
    return 3 * d * d * T * (T + 1) // 2 + 2 * d * (T * (T + 1) * (2 * T + 1) // 6)


def encoder_parameters(vocab_size: int, d_model: int, num_layers: int, d_ff: int, max_positions: int = 512,
                       type_vocab_size: int = 2, pooler: bool = False) -> dict[str, int]:
    """一个 BERT 式编码器（第 10 章的真模型）有多少个参数，分项数。

    - 嵌入 ``embeddings``：词表 V 行 + 位置 P 行 + 句子类型若干行，每行 D 个数；再加嵌入层 LayerNorm 的 γ、β（2D）。
    - 每层注意力 ``attention``：W_Q、W_K、W_V、W_O 各 D × D，加 4 个偏置，即 ``multi_head_parameters(D, H, bias=True)``。
    - 每层前馈 ``feed_forward``：W_1 (D × d_ff)、W_2 (d_ff × D) 和两个偏置。
    - 每层两个 LayerNorm ``layer_norms``：4D。
    - ``pooler=True`` 时再加 BERT 的 pooler（D × D + D）：检查点里常带着它，但句向量用平均池化，用不到。

    Parameters
    ----------
    vocab_size, d_model, num_layers, d_ff : int
        V、D、L、d_ff。
    max_positions, type_vocab_size : int
        位置嵌入的行数、句子类型的个数。
    pooler : bool, default False

    Returns
    -------
    dict of int
        ``embeddings``、``attention``、``feed_forward``、``layer_norms``（后三项是 L 层的合计）、``pooler``、``total``。

    Raises
    ------
    TypeError, ValueError
        尺寸不是正整数，或 ``pooler`` 不是 bool。

    Examples
    --------
    all-MiniLM-L6-v2（V = 30522，D = 384，L = 6，d_ff = 1536，带 pooler）：

    >>> p = encoder_parameters(30522, 384, 6, 1536, pooler=True)
    >>> p["embeddings"], p["total"]          # 一半以上的参数是词嵌入表
    (11918592, 22713216)
    """
    V, D, L, d_ff, P, types = (check.positive_int(n, name) for n, name in (
        (vocab_size, "vocab_size"), (d_model, "d_model"), (num_layers, "num_layers"), (d_ff, "d_ff"),
        (max_positions, "max_positions"), (type_vocab_size, "type_vocab_size")))
    parts = {"embeddings": (V + P + types) * D + 2 * D,
             "attention": L * multi_head_parameters(D, 1, bias=True),
             "feed_forward": L * (2 * D * d_ff + d_ff + D),
             "layer_norms": L * 4 * D,
             "pooler": D * D + D if check.boolean(pooler, "pooler") else 0}
    return parts | {"total": sum(parts.values())}


def encoder_costs(T: int, vocab_size: int, d_model: int, num_layers: int, num_heads: int, d_ff: int,
                  max_positions: int = 512, type_vocab_size: int = 2, dtype: object = "float32") -> dict:
    """第 7 章的计算器用在真模型上：一句 T 个词元的话过一遍 L 层编码器，要多少参数、字节和乘加。

    尺寸参数的名字与 ``model.config.sizes()`` 相同，所以可以写 ``encoder_costs(32, **model.config.sizes())``。

    Parameters
    ----------
    T : int
        词元数（含句首句尾的特殊词元）。
    vocab_size, d_model, num_layers, num_heads, d_ff, max_positions, type_vocab_size : int
        模型的尺寸（V、D、L、H、d_ff、位置数、句子类型数）。
    dtype : {"float64", "float32", "float16"} or the NumPy type, default "float32"
        权重和 KV 缓存每个数的类型（4 位量化的模型请按它的文件大小另算）。

    Returns
    -------
    dict
        ``parameters``：``encoder_parameters`` 的分项（不含 pooler）；``weight_bytes``：参数个数 × 每个数的字节数；
        ``multiply_adds``：L × (多头注意力 4TD² + 2T²D + 前馈 2TD·d_ff)；``multiply_adds_per_token``：它除以 T；
        ``kv_cache_bytes``：把这 T 个词元的 k、v 都存下来要多少字节（``kv_cache_bytes``，编码器用不到缓存，
        只是和第 7 章的生成式模型比一比量级）。

    Raises
    ------
    TypeError, ValueError
        参数不是正整数、D 不能被 H 整除，或 ``dtype`` 不是三种浮点数之一。

    Examples
    --------
    >>> c = encoder_costs(32, 30522, 384, 6, 12, 1536)
    >>> c["multiply_adds_per_token"]          # 6 × (4·384² + 2·384·1536 + 2·32·384)
    10764288
    >>> c["kv_cache_bytes"]                   # 2 × 6 层 × 32 个词元 × 384 × 4 字节
    589824
    """
    T = check.positive_int(T, "T")
    L, D = check.positive_int(num_layers, "num_layers"), check.positive_int(d_model, "d_model")
    params = encoder_parameters(vocab_size, D, L, d_ff, max_positions, type_vocab_size)
    per_layer = multi_head_multiply_adds(T, D, num_heads)["total"] + feedforward_multiply_adds(T, D, d_ff)
    return {"parameters": params, "weight_bytes": params["total"] * itemsize(dtype),
            "multiply_adds": L * per_layer, "multiply_adds_per_token": L * per_layer // T,
            "kv_cache_bytes": kv_cache_bytes(T, D, L, dtype)}


def decoder_parameters(vocab_size: int, d_model: int, num_layers: int, num_heads: int, num_kv_heads: int, d_ff: int,
                       tied: bool = True) -> dict[str, int]:
    """一个 Llama 式解码器（第 12 章的 SmolLM2）有多少个参数，分项数。没有偏置，也没有位置嵌入表（RoPE 不用参数）。

    - 词嵌入 ``embeddings``：V × D；``tied=False`` 时输出矩阵再算一份 V × D（``output``），共用时是 0。
    - 每层注意力 ``attention``：W_q、W_o 各 D × D；W_k、W_v 各 D × (H_kv · d_k)，d_k = D / H——分组查询注意力
      (GQA) 只有 H_kv 个键/值头，这两个矩阵是多头时的 H_kv / H。
    - 每层前馈 ``feed_forward``：SwiGLU 有三个矩阵（门、上、下），3 · D · d_ff。
    - ``norms``：每层两个 RMSNorm 的 w（2D），最后再一个（D）；RMSNorm 没有 β。

    Parameters
    ----------
    vocab_size, d_model, num_layers, num_heads, num_kv_heads, d_ff : int
        V、D、L、H、H_kv、d_ff。D 要能被 H 整除，H 要能被 H_kv 整除。
    tied : bool, default True
        输出矩阵是否与词嵌入表共用。

    Returns
    -------
    dict of int
        ``embeddings``、``output``、``attention``、``feed_forward``、``norms``（后三项是 L 层的合计）、``total``。

    Raises
    ------
    TypeError, ValueError
        尺寸不是正整数、D 不能被 H 整除、H 不能被 H_kv 整除，或 ``tied`` 不是 bool。

    Examples
    --------
    SmolLM2-135M（V = 49152，D = 576，L = 30，H = 9，H_kv = 3，d_ff = 1536）：

    >>> p = decoder_parameters(49152, 576, 30, 9, 3, 1536)
    >>> p["embeddings"], p["attention"], p["feed_forward"], p["total"]
    (28311552, 26542080, 79626240, 134515008)
    >>> decoder_parameters(49152, 576, 30, 9, 9, 1536)["attention"]   # 9 个键/值头：多 30 × 2 × 576 × 384
    39813120
    """
    V, D, L, H, H_kv, d_ff = (check.positive_int(n, name) for n, name in (
        (vocab_size, "vocab_size"), (d_model, "d_model"), (num_layers, "num_layers"), (num_heads, "num_heads"),
        (num_kv_heads, "num_kv_heads"), (d_ff, "d_ff")))
    check.heads_divide(D, H, source="", name="d_model")
    if H % H_kv:
        raise ValueError(f"num_heads={H} 必须能被 num_kv_heads={H_kv} 整除（每个键/值头由同样多个查询头共用，"
                         f"例如 9 = 3 × 3）。")
    kv_width = H_kv * (D // H)
    parts = {"embeddings": V * D,
             "output": 0 if check.boolean(tied, "tied") else V * D,
             "attention": L * (2 * D * D + 2 * D * kv_width),
             "feed_forward": L * 3 * D * d_ff,
             "norms": L * 2 * D + D}
    return parts | {"total": sum(parts.values())}
