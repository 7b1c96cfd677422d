"""字节数：一张注意力分数表、KV 缓存各占多少内存，每个数占几个字节——只是数数，不分配任何数组。

第 7 章的计算器（分数表随 n² 长，KV 缓存随 n 长）和第 10 章的真模型（权重、KV 缓存的字节数，见 ``costs.encoder_costs``）
都用这里的数；乘加次数和参数个数在 ``costs.py``。``tl.costs`` 也导出这里的两个函数（``tl.costs.kv_cache_bytes``），
notebook 里所有的数数都从一个名字找得到。

字节数的 ``dtype`` 统一写法：``"float32"`` 这样的名字或 ``np.float32`` 这样的 NumPy 类型都行。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check

__all__ = ["itemsize", "score_matrix_bytes", "kv_cache_bytes", "FLOATS", "MAX_N"]

MAX_N = 2**20  # 计算器接受的序列长度：n 到约一百万个词
FLOATS = ("float64", "float32", "float16")


def itemsize(dtype: object) -> int:
    """每个数占几个字节：``dtype`` 是 "float16"/"float32"/"float64" 或对应的 NumPy 类型。

    Raises
    ------
    ValueError
        ``dtype`` 不是这三种浮点数之一（整数类型、别的名字、bool 或数字都不行）。

    Examples
    --------
    >>> itemsize("float32"), itemsize(np.float16), itemsize(np.dtype("float64"))
    (4, 2, 8)
    """
    try:
        name = np.dtype(dtype).name if not isinstance(dtype, (bool, int, float)) else None
    except TypeError:
        name = None
    if name not in FLOATS:
        raise ValueError(f"dtype 必须是 {'、'.join(FLOATS)} 之一（名字或 NumPy 类型都行），收到的是 {dtype!r}。")
    return np.dtype(name).itemsize


def score_matrix_bytes(n: int, dtype: object = "float32", heads: int = 1) -> int:
    """一张 n × n 注意力分数表占的字节数：n² × 每个数的字节数 × 头数 (heads)。

    Parameters
    ----------
    n : int
        序列长度，1 到 ``MAX_N``。
    dtype : {"float64", "float32", "float16"} or the NumPy type
    heads : int, default 1

    Returns
    -------
    int

    Raises
    ------
    TypeError, ValueError
        ``n``、``heads`` 不是正整数或超出范围，或 ``dtype`` 不是三种浮点数之一。

    Examples
    --------
    >>> score_matrix_bytes(1024, "float32")    # 1024 × 1024 × 4 = 4 MiB
    4194304
    """
    n = check.int_in_range(n, "n", 1, MAX_N)
    heads = check.positive_int(heads, "heads")
    return n * n * itemsize(dtype) * heads


def kv_cache_bytes(n: int, d_model: int, num_layers: int = 1, dtype: object = "float32") -> int:
    """KV 缓存占的内存：2 (k 和 v) × 层数 × 词数 n × d_model × 每个数的字节数。

    Parameters
    ----------
    n : int
        缓存的词数（上下文长度）。
    d_model : int
        每层的 k（或 v）一个词的长度之和（多头时 = H × d_k）。
    num_layers : int, default 1
    dtype : {"float64", "float32", "float16"} or the NumPy type, default "float32"

    Returns
    -------
    int
        字节数。

    Raises
    ------
    TypeError
        参数不是整数。
    ValueError
        参数不是正数，或 dtype 不是 float16/float32/float64。

    Examples
    --------
    >>> kv_cache_bytes(1024, 256, num_layers=2, dtype="float32")    # 2 × 2 × 1024 × 256 × 4
    4194304
    >>> import numpy as np
    >>> kv_cache_bytes(1024, 256, num_layers=2, dtype=np.float16)   # 半精度：减半（NumPy 类型也行）
    2097152
    """
    n = check.positive_int(n, "n")
    d_model = check.positive_int(d_model, "d_model")
    num_layers = check.positive_int(num_layers, "num_layers")
    return 2 * num_layers * n * d_model * itemsize(dtype)
