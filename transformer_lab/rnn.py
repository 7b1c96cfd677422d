"""最简单的循环神经网络 (recurrent neural network, RNN)：Elman RNN。

    h_t = tanh(x_t W_xh + h_{t-1} W_hh + b_h)

第 t 步必须等第 t-1 步算完——这就是"传话游戏"。本模块只依赖 NumPy。
"""

from __future__ import annotations

import numpy as np

from . import _validation as val

__all__ = ["rnn_forward"]


def rnn_forward(
    x: np.ndarray,
    w_xh: np.ndarray,
    w_hh: np.ndarray,
    b_h: np.ndarray | None = None,
    h0: np.ndarray | None = None,
) -> np.ndarray:
    """逐步运行 Elman RNN，返回每一步的隐状态 (hidden state)。

    Parameters
    ----------
    x : ndarray of shape (T, d_in)
        输入序列，每行一个时间步。
    w_xh : ndarray of shape (d_in, d_h)
        输入到隐状态的权重。
    w_hh : ndarray of shape (d_h, d_h)
        隐状态到隐状态的循环权重。
    b_h : ndarray of shape (d_h,), optional
        偏置，默认全 0。
    h0 : ndarray of shape (d_h,), optional
        初始隐状态，默认全 0。

    Returns
    -------
    ndarray of shape (T, d_h)
        第 t 行是 h_t（读完第 t 个输入之后的"笔记"）。

    Raises
    ------
    TypeError
        输入不是实数 NumPy 数组。
    ValueError
        形状不匹配、数组为空或含 NaN/inf。

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1.0], [0.0]])            # (T=2, d_in=1)
    >>> h = rnn_forward(x, np.array([[1.0]]), np.array([[0.5]]))
    >>> h.round(4)                              # h1 = tanh(1), h2 = tanh(0.5 · tanh(1))
    array([[0.7616],
           [0.3634]])
    """
    x = val.as_real_array(x, "x", min_ndim=2)
    val.check_shape(x, "x", (None, None), "（x 是一条序列：T 行，每行一个 d_in 维输入）")
    w_xh = val.as_real_array(w_xh, "w_xh")
    val.check_shape(w_xh, "w_xh", (x.shape[1], None), f"（第一维要等于 x 的 d_in={x.shape[1]}）")
    d_h = w_xh.shape[1]
    w_hh = val.as_real_array(w_hh, "w_hh")
    val.check_shape(w_hh, "w_hh", (d_h, d_h), f"（循环权重是 d_h × d_h 的方阵，d_h={d_h}）")
    dtype = np.result_type(x, w_xh, w_hh)
    b_h = np.zeros(d_h, dtype) if b_h is None else val.as_real_array(b_h, "b_h")
    val.check_shape(b_h, "b_h", (d_h,))
    h = np.zeros(d_h, dtype) if h0 is None else val.as_real_array(h0, "h0")
    val.check_shape(h, "h0", (d_h,))
    dtype = np.result_type(x, w_xh, w_hh, b_h, h)
    states = np.empty((x.shape[0], d_h), dtype=dtype)  # (T, d_h)
    for t in range(x.shape[0]):  # 只能一步一步来：h_t 依赖 h_{t-1}
        h = np.tanh(x[t] @ w_xh + h @ w_hh + b_h)  # (d_h,)
        states[t] = h
    return states
