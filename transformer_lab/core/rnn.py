"""最简单的循环神经网络 (recurrent neural network, RNN)：Elman RNN。

    h_t = tanh(x_t W_xh + h_{t-1} W_hh + b_h)

第 t 步必须等第 t-1 步算完——这就是"传话游戏"。本模块还有第 1 章用来量"记忆衰减"的工具：
随机正交循环权重、每个输入对每一步隐状态的雅可比矩阵 (Jacobian)，以及第 1 章正文和图共用的那个随机 RNN。
本模块只依赖 NumPy。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check

__all__ = ["rnn_forward", "orthogonal_recurrent_weights", "input_jacobians", "random_rnn"]


def _check_rnn(x, w_xh, w_hh, b_h, h0):
    """检查 RNN 的输入与权重，返回转换后的 (x, w_xh, w_hh, b_h, h0)；b_h、h0 缺省时补成全 0。"""
    x = check.as_real_array(x, "x", min_ndim=2)
    check.check_shape(x, "x", (None, None), "（x 是一条序列：T 行，每行一个 d_in 维输入）")
    w_xh = check.as_real_array(w_xh, "w_xh")
    check.check_shape(w_xh, "w_xh", (x.shape[1], None), f"（第一维要等于 x 的 d_in={x.shape[1]}）")
    d_h = w_xh.shape[1]
    w_hh = check.as_real_array(w_hh, "w_hh")
    check.check_shape(w_hh, "w_hh", (d_h, d_h), f"（循环权重是 d_h × d_h 的方阵，d_h={d_h}）")
    dtype = np.result_type(x, w_xh, w_hh)
    b_h = np.zeros(d_h, dtype) if b_h is None else check.as_real_array(b_h, "b_h")
    check.check_shape(b_h, "b_h", (d_h,))
    h0 = np.zeros(d_h, dtype) if h0 is None else check.as_real_array(h0, "h0")
    check.check_shape(h0, "h0", (d_h,))
    return x, w_xh, w_hh, b_h, h0


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
        形状不匹配、数组为空或含 NaN/inf；输入有限但某一步进 tanh 之前的 x_t @ w_xh + h @ w_hh + b_h 溢出。

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1.0], [0.0]])            # (T=2, d_in=1)
    >>> h = rnn_forward(x, np.array([[1.0]]), np.array([[0.5]]))
    >>> h.round(4)                              # h1 = tanh(1), h2 = tanh(0.5 · tanh(1))
    array([[0.7616],
           [0.3634]])
    """
    x, w_xh, w_hh, b_h, h = _check_rnn(x, w_xh, w_hh, b_h, h0)
    d_h, dtype = w_hh.shape[0], np.result_type(x, w_xh, w_hh, b_h, h)
    states = np.empty((x.shape[0], d_h), dtype=dtype)  # (T, d_h)
    for t in range(x.shape[0]):  # 只能一步一步来：h_t 依赖 h_{t-1}
        with np.errstate(over="ignore", invalid="ignore"):
            z = x[t] @ w_xh + h @ w_hh + b_h  # (d_h,) 进 tanh 之前
        # 溢出成 ±inf 时连符号都不可信（部分和先冲到 +inf，真值却可能是负的），tanh(inf) = 1 会是自信的错答案：报错
        check.finite_result(z, f"RNN 第 {t} 步进 tanh 之前的 x_t @ w_xh + h @ w_hh + b_h", check.OVERFLOW_HINT)
        h = np.tanh(z)  # (d_h,)
        states[t] = h
    return states


def orthogonal_recurrent_weights(d_h: int, gain: float, rng: np.random.Generator) -> np.ndarray:
    """随机循环权重 W_hh = gain · Q，Q 是随机正交矩阵 (orthogonal matrix)。

    正交矩阵只转方向、不改长度，所以 ``v @ W_hh`` 的长度正好是 ``|v|`` 的 ``gain`` 倍：
    每传一步，信号乘一次 ``gain``（不算 tanh）。同一个 rng 状态下，不同 gain 得到同一个 Q。

    Parameters
    ----------
    d_h : int
        隐状态的长度。
    gain : float
        每一步的放大倍数（正实数）。
    rng : np.random.Generator

    Returns
    -------
    ndarray of shape (d_h, d_h)
        所有奇异值都等于 ``gain``。

    Raises
    ------
    TypeError, ValueError
        ``d_h`` 不是正整数（或 d_h² 超过 1e8）、``gain`` 不是有限正实数，或 ``rng`` 不是 Generator。

    Examples
    --------
    >>> w = orthogonal_recurrent_weights(4, 0.9, np.random.default_rng(0))
    >>> np.linalg.svd(w, compute_uv=False).round(6)
    array([0.9, 0.9, 0.9, 0.9])
    """
    d_h = check.positive_int(d_h, "d_h")
    check.at_most(d_h * d_h, "d_h × d_h", check.MAX_ELEMENTS, "W_hh 有 d_h² 个元素")
    gain = check.positive_real(gain, "gain")
    q, r = np.linalg.qr(check.generator(rng).standard_normal((d_h, d_h)))  # (d_h, d_h)
    signs = np.where(np.diag(r) < 0, -1.0, 1.0)  # 修正符号，让 Q 在所有正交矩阵里均匀分布
    return gain * q * signs  # (d_h, d_h)


def _linear_rnn(x, w_xh, w_hh, b_h, h0):
    """去掉 tanh 的 RNN：h_t = x_t W_xh + h_{t-1} W_hh + b_h（输入已检查过）。"""
    h = h0  # (d_h,)
    states = np.empty((x.shape[0], w_hh.shape[0]), dtype=np.result_type(x, w_xh, w_hh, b_h, h0))  # (T, d_h)
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(x.shape[0]):
            h = x[t] @ w_xh + h @ w_hh + b_h  # (d_h,)
            states[t] = h
    return check.finite_result(states, "去掉 tanh 的 RNN 隐状态（linear=True）", check.OVERFLOW_HINT)


def input_jacobians(x: np.ndarray, w_xh: np.ndarray, w_hh: np.ndarray, b_h: np.ndarray | None = None,
                    h0: np.ndarray | None = None, linear: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """运行 Elman RNN，并用链式法则算出每个输入对每一步隐状态的雅可比矩阵 ∂h_t/∂x_s。

    行向量约定：∂h_t/∂x_t = diag(1 − h_t²) W_xhᵀ，∂h_t/∂h_{t-1} = diag(1 − h_t²) W_hhᵀ，
    所以 t > s 时 ∂h_t/∂x_s = diag(1 − h_t²) W_hhᵀ · ∂h_{t-1}/∂x_s；t < s 时为 0（后面的词影响不了前面）。

    Parameters
    ----------
    x : ndarray of shape (T, d_in)
    w_xh : ndarray of shape (d_in, d_h)
    w_hh : ndarray of shape (d_h, d_h)
    b_h, h0 : ndarray of shape (d_h,), optional
        偏置与初始隐状态，默认全 0。
    linear : bool, default False
        True 时去掉 tanh（"线性化"的 RNN），斜率 1 − h_t² 换成 1。

    Returns
    -------
    states : ndarray of shape (T, d_h)
        每一步的隐状态（``linear=False`` 时就是 ``tl.rnn_forward`` 的结果）。
    jacobians : ndarray of shape (T, T, d_h, d_in)
        ``jacobians[t, s]`` = ∂h_{t+1}/∂x_{s+1}（下标从 0 数）。

    Raises
    ------
    TypeError, ValueError
        与 ``tl.rnn_forward`` 相同（输入类型、形状、NaN/inf）；``linear`` 不是 bool；
        输入有限但隐状态或雅可比矩阵溢出（例如 ``linear=True`` 且 w_hh 很大、序列很长）。

    Examples
    --------
    >>> x = np.array([[1.0], [0.0]])                     # (T=2, d_in=1)
    >>> h, J = input_jacobians(x, np.array([[1.0]]), np.array([[0.5]]))
    >>> J[1, 0].round(4)        # ∂h_2/∂x_1 = (1 − h_2²) · 0.5 · (1 − h_1²) · 1
    array([[0.1823]])
    >>> J[0, 1]                 # 第 2 个词影响不了第 1 步
    array([[0.]])
    """
    x, w_xh, w_hh, b_h, h0 = _check_rnn(x, w_xh, w_hh, b_h, h0)
    linear = check.boolean(linear, "linear")
    T, d_h, d_in = x.shape[0], w_hh.shape[0], w_xh.shape[0]
    check.at_most(T * T * d_h * d_in, "T² × d_h × d_in", check.MAX_ELEMENTS, "雅可比矩阵有这么多个元素")
    run = _linear_rnn if linear else rnn_forward
    states = run(x, w_xh, w_hh, b_h, h0)  # (T, d_h)
    slope = np.ones_like(states) if linear else 1.0 - states**2  # (T, d_h)，tanh 的斜率
    jac = np.zeros((T, T, d_h, d_in))  # (T, T, d_h, d_in)
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(T):
            if t > 0:  # 旧词的影响：先乘 W_hhᵀ 传过来，再乘 tanh 的斜率
                jac[t, :t] = slope[t][:, None] * (w_hh.T @ jac[t - 1, :t])  # (t, d_h, d_in)
            jac[t, t] = slope[t][:, None] * w_xh.T  # (d_h, d_in)
    return states, check.finite_result(jac, "雅可比矩阵 ∂h_t/∂x_s（每步乘一次 w_hh）", check.OVERFLOW_HINT)


def random_rnn(T: int, d_in: int, d_h: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """一个随机的 RNN（第 1 章的正文和图都用它）：返回 (正交矩阵 Q, W_xh, 标准正态输入 x)。

    用法：循环权重 W_hh = g · Q，真正的输入 = 输入强度 · x。先抽 Q，再抽 W_xh（除以 √d_in，
    让 x_t W_xh 的每一维方差约为 1），最后抽 x。正文、图和测试都调用它，所以讲的是同一个 RNN。

    Parameters
    ----------
    T, d_in, d_h : int
        序列长度、输入长度、隐状态长度。
    rng : np.random.Generator

    Returns
    -------
    q : ndarray of shape (d_h, d_h)
    w_xh : ndarray of shape (d_in, d_h)
    x : ndarray of shape (T, d_in)

    Raises
    ------
    TypeError, ValueError
        参数不是正整数、数组超过 1e8 个元素（内存），或 ``rng`` 不是 Generator。

    Examples
    --------
    >>> q, w_xh, x = random_rnn(5, 4, 16, np.random.default_rng(1))
    >>> q.shape, w_xh.shape, x.shape
    ((16, 16), (4, 16), (5, 4))
    >>> np.allclose(q @ q.T, np.eye(16))
    True
    """
    T, d_in, d_h = check.positive_int(T, "T"), check.positive_int(d_in, "d_in"), check.positive_int(d_h, "d_h")
    check.at_most(max(d_h * d_h, d_in * d_h, T * d_in), "最大的数组", check.MAX_ELEMENTS, "Q、W_xh 或 x 的元素个数")
    rng = check.generator(rng)
    q = orthogonal_recurrent_weights(d_h, 1.0, rng)  # (d_h, d_h)
    w_xh = rng.standard_normal((d_in, d_h)) / np.sqrt(d_in)  # (d_in, d_h)
    x = rng.standard_normal((T, d_in))  # (T, d_in)
    return q, w_xh, x
