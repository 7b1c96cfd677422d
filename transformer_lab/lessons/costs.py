"""代价：数一数乘加次数 (multiply-adds)——每层的计算量，RNN 是 T·d²，注意力是 T²·d。

只是数数，不运行任何计算；真正量用时在 ``timing.py``。本模块只用标准库。
"""

from __future__ import annotations

from .. import _validation as check

__all__ = ["rnn_multiply_adds", "attention_multiply_adds"]


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
