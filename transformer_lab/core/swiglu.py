"""SwiGLU 前馈网络：第 8 章的前馈网络把 ReLU 换成“带门的 SiLU”（Shazeer, 2020；Llama、SmolLM2 都用它）。

    SiLU(z)   = z · σ(z) = z / (1 + e^{−z})                 （也叫 Swish：像 ReLU，但在 0 附近是光滑的）
    SwiGLU(x) = (SiLU(x W_gate) ⊙ (x W_up)) W_down           （没有偏置）
    第 8 章：  FFN(x) = ReLU(x W_1 + b_1) W_2 + b_2

多出来的是“门” (gate)：x 先投影两次，一份过 SiLU 当作每一维的开关（0 附近 = 关），乘在另一份上，再投影回 D 维。
三个矩阵都是 (in, out) 的摆法（行向量约定 ``x @ w``）；SmolLM2 的 GGUF 里它们是 (out, in)，传 ``.T``（转置视图，不复制）。
本模块只依赖 NumPy。形状字母：D = d_model，d_ff 前馈隐藏层宽度（SmolLM2：576 和 1536）。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from .linear import linear

__all__ = ["silu", "swiglu", "swiglu_unchecked"]


def silu(z: np.ndarray) -> np.ndarray:
    """SiLU(z) = z · σ(z) = z / (1 + e^{−z})，dtype 与 ``z`` 相同（计算核，不做检查）。

    z 很负时 e^{−z} 溢出成 inf，z / inf = −0：正是极限值，所以不发警告。

    Examples
    --------
    >>> silu(np.array([-1.0, 0.0, 1.0, -1000.0])).round(4)     # ±1 / (1 + e^{∓1})：1 / 1.3679 = 0.7311
    array([-0.2689,  0.    ,  0.7311, -0.    ])
    """
    with np.errstate(over="ignore"):
        return z / (1 + np.exp(-z))  # (...)


def swiglu_unchecked(x: np.ndarray, w_gate: np.ndarray, w_up: np.ndarray, w_down: np.ndarray) -> np.ndarray:
    """``swiglu`` 的计算本身（形状已检查过）。"""
    gate = silu(linear(x, w_gate, None, "门投影 x @ w_gate"))  # (..., d_ff) 每一维的开关
    up = linear(x, w_up, None, "上投影 x @ w_up")  # (..., d_ff)
    return linear(gate * up, w_down, None, "下投影 @ w_down")  # (..., D)


def swiglu(x: np.ndarray, w_gate: np.ndarray, w_up: np.ndarray, w_down: np.ndarray) -> np.ndarray:
    """SwiGLU 前馈网络：(SiLU(x W_gate) ⊙ (x W_up)) W_down，每个位置各算各的。

    Parameters
    ----------
    x : ndarray of shape (..., D)
    w_gate, w_up : ndarray of shape (D, d_ff)
        门投影和上投影。
    w_down : ndarray of shape (d_ff, D)
        下投影。

    Returns
    -------
    ndarray of shape (..., D)

    Raises
    ------
    TypeError
        输入不是实数数组。
    ValueError
        形状对不上、含 NaN/inf，或输入有限但某个投影溢出。

    Examples
    --------
    D = 1，d_ff = 2：x = 1，门 = [1, −1]，上 = [2, 3]，下 = [[1], [1]]：
    SiLU(1) · 2 + SiLU(−1) · 3 = 0.73106 × 2 − 0.26894 × 3 = 1.46212 − 0.80682 = 0.6553。

    >>> x = np.array([[1.0]])
    >>> swiglu(x, np.array([[1.0, -1.0]]), np.array([[2.0, 3.0]]), np.array([[1.0], [1.0]])).round(4)
    array([[0.6553]])
    """
    x = check.as_real_array(x, "x", min_ndim=1)
    D = x.shape[-1]
    w_gate = check.as_real_array(w_gate, "w_gate")
    check.check_shape(w_gate, "w_gate", (D, None), f"（w_gate 的行数必须等于 x 的最后一维 D={D}）")
    d_ff = w_gate.shape[1]
    w_up = check.as_real_array(w_up, "w_up")
    check.check_shape(w_up, "w_up", (D, d_ff), "（w_up 与 w_gate 同形状 (D, d_ff)）")
    w_down = check.as_real_array(w_down, "w_down")
    check.check_shape(w_down, "w_down", (d_ff, D), "（w_down 把 d_ff 维投影回 D 维）")
    return swiglu_unchecked(x, w_gate, w_up, w_down)  # (..., D)
