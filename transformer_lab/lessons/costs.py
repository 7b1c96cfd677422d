"""代价：数一数乘加次数 (multiply-adds)——每层的计算量，RNN 是 T·d²，注意力是 T²·d。

只是数数，不运行任何计算；真正量用时在 ``timing.py``。第 7 章的计算器也在这里：前馈层 (feed-forward)
的乘加次数、n × n 分数表占多少内存、以及把它们一次算齐的 ``layer_costs``。本模块只用标准库。
"""

from __future__ import annotations

from .. import _validation as check

__all__ = ["rnn_multiply_adds", "attention_multiply_adds", "feedforward_multiply_adds", "score_matrix_bytes",
           "layer_costs", "MAX_N", "MAX_D"]

MAX_N, MAX_D = 2**20, 2**16  # 计算器接受的范围：n 到约一百万个词，d 到 65536
_BYTES = {"float64": 8, "float32": 4, "float16": 2}


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


def _in_range(x: object, name: str, high: int) -> int:
    x = check.positive_int(x, name)
    if x > high:
        raise ValueError(f"{name} 必须在 [1, {high}] 之内（计算器的范围），收到的是 {x}。")
    return x


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


def score_matrix_bytes(n: int, dtype: str = "float32", heads: int = 1) -> int:
    """一张 n × n 注意力分数表占的字节数：n² × 每个数的字节数 × 头数 (heads)。

    Parameters
    ----------
    n : int
        序列长度，1 到 ``MAX_N``。
    dtype : {"float64", "float32", "float16"}
    heads : int, default 1

    Returns
    -------
    int

    Raises
    ------
    TypeError, ValueError
        ``n``、``heads`` 不是正整数或超出范围，或 ``dtype`` 不是三者之一。

    Examples
    --------
    >>> score_matrix_bytes(1024, "float32")    # 1024 × 1024 × 4 = 4 MiB
    4194304
    """
    n = _in_range(n, "n", MAX_N)
    heads = check.positive_int(heads, "heads")
    dtype = check.one_of(dtype, "dtype", tuple(_BYTES))
    return n * n * _BYTES[dtype] * heads


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
    n, d = _in_range(n, "n", MAX_N), _in_range(d, "d", MAX_D)
    return {"attention": attention_multiply_adds(n, d), "projections": 4 * n * d * d,
            "feedforward": feedforward_multiply_adds(n, d), "rnn": rnn_multiply_adds(n, d, d),
            "scores_float32": score_matrix_bytes(n, "float32"), "scores_float16": score_matrix_bytes(n, "float16")}
