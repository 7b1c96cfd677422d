"""notebook 里打印用的小工具：给一行数配上名字。本模块只依赖 NumPy。"""

from __future__ import annotations

import numpy as np

from .. import _validation as check

__all__ = ["labelled"]


def labelled(labels: list[str] | tuple[str, ...], values: np.ndarray, digits: int = 3,
             skip_zeros: bool = False) -> dict[str, float]:
    """给一行数配上名字（词或特征），方便打印：``{名字: 保留 digits 位小数的 float}``。

    Parameters
    ----------
    labels : list or tuple of str, length N
    values : ndarray of shape (N,)
    digits : int
        保留几位小数。
    skip_zeros : bool
        为 True 时略去值为 0 的项（例如只看一个词有哪些特征）。

    Raises
    ------
    TypeError, ValueError
        ``labels`` 不是字符串的列表或元组；``values`` 不是一维实数数组，或长度和 ``labels`` 不同；
        ``digits`` 不是 0 到 15 的整数；``skip_zeros`` 不是 bool。

    Examples
    --------
    >>> labelled(("animal", "street"), np.array([0.7384, 0.0238]))
    {'animal': 0.738, 'street': 0.024}
    >>> labelled(("是代词", "是人", "指女性"), np.array([1.0, 0.0, 1.0]), skip_zeros=True)
    {'是代词': 1.0, '指女性': 1.0}
    """
    labels = check.string_list(labels, "labels")
    values = check.as_real_array(values, "values")
    check.check_shape(values, "values", (len(labels),), "每个名字对应一个数。")
    digits = check.at_most(check.nonnegative_int(digits, "digits"), "digits", 15, "float64 只有约 15 位有效数字")
    skip_zeros = check.boolean(skip_zeros, "skip_zeros")
    return {str(name): round(float(v), digits) for name, v in zip(labels, values) if v != 0 or not skip_zeros}
