"""正弦位置编码 (sinusoidal positional encoding)：给每个位置发一个"座位号"向量。

    PE[p, 2i]   = sin(p / base^(2i / d_model))
    PE[p, 2i+1] = cos(p / base^(2i / d_model))      (Vaswani et al., 2017, 3.5 节)

本模块只依赖 NumPy。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check

__all__ = ["sinusoidal_positional_encoding"]


def sinusoidal_positional_encoding(num_positions: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """《Attention Is All You Need》里的正弦/余弦位置编码。

    偶数维用 sin，奇数维用 cos；维度越靠后，波长越长（从 2π 到 base·2π）。

    Parameters
    ----------
    num_positions : int
        位置个数（位置 p = 0, 1, ..., num_positions-1）。
    d_model : int
        编码向量的长度，必须是正偶数（sin 和 cos 成对出现）。
    base : float, default 10000.0
        波长的底数，必须是正数。

    Returns
    -------
    ndarray of shape (num_positions, d_model), float64

    Raises
    ------
    TypeError
        ``num_positions`` 或 ``d_model`` 不是整数，``base`` 不是实数。
    ValueError
        尺寸不是正数、``d_model`` 为奇数，或 ``base`` 不是有限正数。

    Examples
    --------
    >>> pe = sinusoidal_positional_encoding(3, 4)
    >>> pe[0]                                  # 位置 0：sin 0 = 0，cos 0 = 1
    array([0., 1., 0., 1.])
    >>> pe[1].round(5)                         # 位置 1：sin 1, cos 1, sin 0.01, cos 0.01
    array([0.84147, 0.5403 , 0.01   , 0.99995])
    """
    num_positions = check.positive_int(num_positions, "num_positions")
    d_model = check.positive_int(d_model, "d_model")
    base = check.positive_real(base, "base")
    if d_model % 2:
        raise ValueError(f"d_model 必须是偶数（sin 和 cos 各占一半的维度），收到的是 d_model={d_model}。")
    p = np.arange(num_positions)[:, None]  # (P, 1)
    two_i = np.arange(0, d_model, 2)[None, :]  # (1, D/2)
    angles = p / base ** (two_i / d_model)  # (P, D/2)
    pe = np.empty((num_positions, d_model))
    pe[:, 0::2] = np.sin(angles)  # 只写新建的数组，不改任何输入
    pe[:, 1::2] = np.cos(angles)
    return pe  # (P, D)
