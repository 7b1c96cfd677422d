"""长上下文的两种省钱办法（第 7 章）：滑动窗口掩码 (sliding-window mask) 与线性注意力 (linear attention)。

* 滑动窗口：每个词只看它自己和前面 ``window - 1`` 个词。掩码仍是 T × S 的表（这里为了讲解把它算出来），
  但每行只有 ``window`` 个 True，所以要算的分数从 T² 个降到约 T·window 个。
* 线性注意力：把 softmax(q·k) 换成两个非负"特征"的点积 φ(q)·φ(k)，φ(x) = elu(x) + 1。
  因果的版本可以写成一个 RNN：笔记是 d_k × d_v 的矩阵 ``state += φ(k_t)ᵀ v_t``，每个新词的代价与前文长短无关；
  也可以像注意力一样一次批量算完。两种写法结果相同——这就是第 1 章"Mamba、RWKV 想要两边的好处"的最小例子。

这些是为讲解写的小玩具（不是任何一个真实模型的实现）。本模块只依赖 NumPy。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check

__all__ = ["sliding_window_mask", "feature_map", "linear_attention", "linear_attention_recurrent"]


def sliding_window_mask(T: int, window: int) -> np.ndarray:
    """因果滑动窗口掩码：查询 i 可以看键 j，当且仅当 i - window < j <= i。

    Parameters
    ----------
    T : int
        序列长度。
    window : int
        每个词最多看几个词（含它自己），正整数；``window >= T`` 时就是普通的因果掩码。

    Returns
    -------
    mask : ndarray of bool, shape (T, T)
        True = 允许关注。

    Raises
    ------
    TypeError, ValueError
        ``T`` 或 ``window`` 不是正整数。

    Examples
    --------
    >>> sliding_window_mask(4, 2).astype(int)
    array([[1, 0, 0, 0],
           [1, 1, 0, 0],
           [0, 1, 1, 0],
           [0, 0, 1, 1]])
    """
    T, window = check.positive_int(T, "T"), check.positive_int(window, "window")
    gap = np.arange(T)[:, None] - np.arange(T)[None, :]  # (T, T) i - j
    return (gap >= 0) & (gap < window)  # (T, T)


def feature_map(x: np.ndarray) -> np.ndarray:
    """线性注意力的特征 φ(x) = elu(x) + 1：x > 0 时是 x + 1，x <= 0 时是 e^x。处处为正，所以点积为正。

    >>> feature_map(np.array([-1.0, 0.0, 2.0])).round(4)
    array([0.3679, 1.    , 3.    ])
    """
    x = check.as_real_array(x, "x")
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))  # 与 x 同形


def _check_qkv(q, k, v):
    q, k, v = (check.as_real_array(x, name, min_ndim=2) for x, name in ((q, "q"), (k, "k"), (v, "v")))
    if q.ndim != 2 or k.shape != q.shape or v.ndim != 2 or v.shape[0] != q.shape[0]:
        raise ValueError(f"q、k、v 必须是二维 (T, d)，q 与 k 形状相同，v 的词数 T 也相同：q.shape={q.shape}, k.shape={k.shape}, "
                         f"v.shape={v.shape}。")
    return q, k, v


def linear_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """因果线性注意力，"批量"写法：权重 w_ij = φ(q_i)·φ(k_j)（j <= i），每行除以行和。

    为了和 ``linear_attention_recurrent`` 对照，这里把 T × T 的权重表造了出来（代价仍是 T²）。

    Parameters
    ----------
    q, k : ndarray of shape (T, d_k)
    v : ndarray of shape (T, d_v)

    Returns
    -------
    out : ndarray of shape (T, d_v)

    Raises
    ------
    TypeError, ValueError
        不是二维实数数组，或形状不一致。
    """
    q, k, v = _check_qkv(q, k, v)
    w = feature_map(q) @ feature_map(k).T  # (T, T) 全为正
    w = np.tril(w)  # (T, T) 因果：只看自己和前面
    return (w @ v) / w.sum(axis=-1, keepdims=True)  # (T, d_v)


def linear_attention_recurrent(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """因果线性注意力，"RNN"写法：一页固定大小的笔记，一个词一个词地更新。

    state = Σ_{j<=t} φ(k_j)ᵀ v_j  (d_k × d_v)，norm = Σ_{j<=t} φ(k_j)  (d_k,)；
    out_t = φ(q_t) state / (φ(q_t) · norm)。每一步的代价是 O(d_k·d_v)，与 t 无关。

    Parameters, Returns, Raises：同 ``linear_attention``。

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> q, k, v = rng.normal(size=(5, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    >>> bool(np.allclose(linear_attention_recurrent(q, k, v), linear_attention(q, k, v)))
    True
    """
    q, k, v = _check_qkv(q, k, v)
    fq, fk = feature_map(q), feature_map(k)  # (T, d_k)
    state = np.zeros((q.shape[1], v.shape[1]))  # (d_k, d_v) 固定大小的笔记
    norm = np.zeros(q.shape[1])  # (d_k,)
    out = []
    for t in range(q.shape[0]):  # 一步接一步，像 RNN
        state = state + np.outer(fk[t], v[t])  # (d_k, d_v)
        norm = norm + fk[t]  # (d_k,)
        out.append(fq[t] @ state / (fq[t] @ norm))  # (d_v,)
    return np.array(out)  # (T, d_v)
