"""词嵌入 (embedding)：按编号到表里取行；以及它的反向。

    前向：out[p] = table[token_ids[p]]
    反向：grad_table[i] = Σ_{位置 p: token_ids[p] = i} grad_out[p]      （同一个词出现几次就加几次）

本模块只依赖 NumPy。形状字母：V 词表大小，D = d_model。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from .guard import guarded_backward

__all__ = ["embed", "embedding_backward"]


def embed(token_ids: np.ndarray, table: np.ndarray) -> np.ndarray:
    """词嵌入 (embedding)：按编号到表里取行，``table[token_ids]``。

    Parameters
    ----------
    token_ids : ndarray of int, shape (...)
        每个值在 [0, V) 之内。
    table : ndarray of shape (V, D)
        嵌入表，第 i 行是第 i 个词的向量。

    Returns
    -------
    ndarray of shape (..., D)

    Raises
    ------
    TypeError
        ``token_ids`` 不是整数数组，或 ``table`` 不是实数数组。
    ValueError
        ``table`` 不是 2 维、编号越界、数组为空或含 NaN/inf。

    Examples
    --------
    >>> import numpy as np
    >>> table = np.array([[0.0, 0.0], [1.0, 2.0], [3.0, 4.0]])   # (V=3, D=2)
    >>> embed(np.array([2, 1, 2]), table)                         # 同一个编号取到同一行
    array([[3., 4.],
           [1., 2.],
           [3., 4.]])
    """
    table = check.as_real_array(table, "table")
    check.check_shape(table, "table", (None, None), "（嵌入表是 (V, D) 的矩阵：每个词一行）")
    token_ids = check.token_ids(token_ids, "token_ids", table.shape[0])
    return table[token_ids]  # (..., D)


def embedding_backward(token_ids: np.ndarray, grad_out: np.ndarray, vocab_size: int) -> np.ndarray:
    """``embed`` 的反向传播：把每个位置的梯度加回它取的那一行；同一个词出现几次就加几次。

    Parameters
    ----------
    token_ids : ndarray of int, shape (...)
        前向用的编号，每个值在 [0, vocab_size) 之内。
    grad_out : ndarray of shape (..., D)
        损失对 ``embed(token_ids, table)`` 的梯度。
    vocab_size : int
        V，嵌入表的行数。

    Returns
    -------
    ndarray of shape (V, D)
        损失对嵌入表的梯度；没出现过的词那一行是 0。

    Raises
    ------
    TypeError
        ``token_ids`` 不是整数数组、``grad_out`` 不是实数数组、``vocab_size`` 不是整数。
    ValueError
        编号越界、``grad_out`` 形状不是 ``token_ids.shape + (D,)``、数组为空或含 NaN/inf；
        (V, D) 的梯度表超过 2 GiB 内存；
        同一个词的梯度之和超出浮点数的范围（溢出）。

    Examples
    --------
    >>> import numpy as np
    >>> embedding_backward(np.array([1, 1, 2]), np.ones((3, 2)), vocab_size=4)   # 词 1 出现两次
    array([[0., 0.],
           [2., 2.],
           [1., 1.],
           [0., 0.]])
    """
    vocab_size = check.positive_int(vocab_size, "vocab_size")
    token_ids = check.token_ids(token_ids, "token_ids", vocab_size)
    grad_out = check.as_real_array(grad_out, "grad_out", min_ndim=1)
    check.grad_like(grad_out, token_ids.shape + (grad_out.shape[-1],))
    check.memory_budget(vocab_size * grad_out.shape[-1], grad_out.dtype.itemsize, f"嵌入表的梯度 (V={vocab_size}, D)")

    def scatter(g):
        grad_table = np.zeros((vocab_size, g.shape[-1]), dtype=g.dtype)  # (V, D)
        np.add.at(grad_table, token_ids, g)  # 不用 grad_table[ids] += ...：那样重复的编号只算一次
        return grad_table  # (V, D)

    return guarded_backward(scatter, grad_out, "embedding_backward")
