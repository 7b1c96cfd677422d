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

MAX_STEPS = 100_000  # RNN 写法最多走多少步（每一步是一次 Python 循环）

__all__ = ["sliding_window_mask", "feature_map", "log_feature_map", "dimension_weights", "linear_attention", "linear_attention_recurrent"]


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
    check.memory_budget(T * T, 8, f"T × T 的掩码（T={T}）")  # 中间的 gap 表是 8 字节的整数
    gap = np.arange(T)[:, None] - np.arange(T)[None, :]  # (T, T) i - j
    return (gap >= 0) & (gap < window)  # (T, T)


def feature_map(x: np.ndarray) -> np.ndarray:
    """线性注意力的特征 φ(x) = elu(x) + 1：x > 0 时是 x + 1，x <= 0 时是 e^x。处处为正，所以点积为正。

    x 很负时 e^x 会下溢成 0，两个很大的 φ 相乘会上溢成 inf；线性注意力本身因此改用 ``log_feature_map``。

    >>> feature_map(np.array([-1.0, 0.0, 2.0])).round(4)
    array([0.3679, 1.    , 3.    ])
    """
    x = check.as_real_array(x, "x")
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))  # 与 x 同形


def log_feature_map(x: np.ndarray) -> np.ndarray:
    """log φ(x)：x > 0 时是 log(1 + x)，x <= 0 时就是 x。任何有限的 x 都给出有限的值（φ 本身可能上溢或下溢成 0）。

    >>> log_feature_map(np.array([-1000.0, 0.0, 1e308])).round(2)
    array([-1000. ,     0. ,   709.2])
    """
    x = check.as_real_array(x, "x")
    return np.where(x > 0, np.log1p(np.maximum(x, 0.0)), x)  # 与 x 同形


def _check_qkv(q, k, v):
    q, k, v = (check.as_real_array(x, name, min_ndim=2) for x, name in ((q, "q"), (k, "k"), (v, "v")))
    if q.ndim != 2 or k.shape != q.shape or v.ndim != 2 or v.shape[0] != q.shape[0]:
        raise ValueError(f"q、k、v 必须是二维 (T, d)，q 与 k 形状相同，v 的词数 T 也相同：q.shape={q.shape}, k.shape={k.shape}, "
                         f"v.shape={v.shape}。")
    dtype = np.result_type(q, k, v)
    return q.astype(dtype, copy=False), k.astype(dtype, copy=False), v.astype(dtype, copy=False)


def _scaled_values(v):
    """v 先除以它的最大绝对值（输出是 v 的加权平均，最后再乘回去）：1e308 量级的 v 相加时也不会上溢。"""
    s = np.max(np.abs(v))
    return v / (s if s > 0 else 1), s if s > 0 else 1


def dimension_weights(log_q: np.ndarray, log_c: np.ndarray) -> np.ndarray:
    """读笔记时每一维的分量 exp(log φ(q_d) + c_d − 最大的那个)，沿最后一维；最大的那一维恰为 1。

    先各自减去最大那一维的值再相加：1e300 量级的 log φ(q) 加上 690 量级的刻度 c 时，那 690 不会被舍入吃掉。

    >>> dimension_weights(np.array([-1e300, -1e300]), np.array([0.0, -1.0])).round(4)
    array([1.    , 0.3679])
    """
    with np.errstate(over="ignore", invalid="ignore"):
        ref = np.argmax(log_q + log_c, axis=-1)[..., None]  # (..., 1) 最大的那一维（舍入可能选错，见下）
        for _ in range(log_q.shape[-1]):
            delta = ((log_q - np.take_along_axis(log_q, ref, axis=-1))
                     + (log_c - np.take_along_axis(log_c, ref, axis=-1)))  # (..., d_k) 相对第 ref 维
            if np.all(delta <= 0):  # ref 确实最大：与它相差不多的维，差值都算得准
                break
            ref = np.argmax(delta, axis=-1)[..., None]  # 换成更大的那一维再减一次
    return np.exp(delta - delta.max(axis=-1, keepdims=True))  # (..., d_k)


def linear_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """因果线性注意力，"批量"写法：权重 w_ij = φ(q_i)·φ(k_j)（j <= i），每行除以行和。

    为了和 ``linear_attention_recurrent`` 对照，这里把 T × T 的权重表造了出来（代价仍是 T²）。
    数值上稳妥的算法（结果不变，和 RNN 写法的笔记同一种记法）：第 i 行、第 d 维的刻度 c_id = max_{j<=i} log φ(k_jd)，
    w_ij ∝ Σ_d a_id · exp(log φ(k_jd) − c_id)，a_id = ``dimension_weights``：每一行里最大的那一项是 1，行和至少是 1。
    输入很负（φ 下溢成 0，直接算会得到 0/0）或很大（φ 的乘积上溢成 inf）时也能算对。

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
        不是二维实数数组，或形状不一致；T × T × d_k 的中间表超过内存预算（2 GiB）。

    Examples
    --------
    >>> q = k = np.array([[-1000.0], [-1000.0]])        # φ = e^-1000 下溢成 0：直接算是 0/0
    >>> linear_attention(q, k, np.array([[1.0], [3.0]]))  # 两个键一样像：第 2 行是平均
    array([[1.],
           [2.]])
    """
    q, k, v = _check_qkv(q, k, v)
    T, d_k = q.shape
    check.memory_budget(T * T * d_k, q.itemsize, f"线性注意力的 T × T × d_k 中间表（T={T}, d_k={d_k}）")
    lq, lk = log_feature_map(q), log_feature_map(k)  # (T, d_k) log φ
    c = np.maximum.accumulate(lk, axis=0)  # (T, d_k) c_id：前 i 个键里每一维最大的 log φ
    causal = np.tril(np.ones((T, T), dtype=bool))[..., None]  # (T, T, 1) 只看自己和前面
    with np.errstate(over="ignore", invalid="ignore"):
        b = np.where(causal, np.exp(lk[None, :, :] - c[:, None, :]), 0.0)  # (T, T, d_k) 都在 [0, 1] 里
    w = np.einsum("id,ijd->ij", dimension_weights(lq, c), b)  # (T, T) 每行最大的一项 >= 1
    vs, s = _scaled_values(v)
    with np.errstate(over="ignore", invalid="ignore"):
        out = (w @ vs) / w.sum(axis=-1, keepdims=True) * s  # (T, d_v)
    return check.finite_result(out, "线性注意力的输出", check.OVERFLOW_HINT)


def linear_attention_recurrent(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """因果线性注意力，"RNN"写法：一页固定大小的笔记，一个词一个词地更新。

    state = Σ_{j<=t} φ(k_j)ᵀ v_j  (d_k × d_v)，norm = Σ_{j<=t} φ(k_j)  (d_k,)；
    out_t = φ(q_t) state / (φ(q_t) · norm)。每一步的代价是 O(d_k·d_v)，与 t 无关。

    数值上稳妥的记法（结果不变）：笔记的第 d 行存成 "刻度 exp(c_d) × 小数"，c_d = 到目前为止最大的 log φ(k_jd)，
    新词让刻度变大时，旧的小数乘上 exp(旧刻度 − 新刻度)（和分块注意力的在线 softmax 一样）；读的时候
    每一维的分量 = ``dimension_weights``，最大的那一维是 1，所以分母至少是 1，不会 0/0。

    Parameters, Returns：同 ``linear_attention``。

    Raises
    ------
    TypeError, ValueError
        不是二维实数数组，或形状不一致；T 超过 10 万（一步一步地算要很久）。

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> q, k, v = rng.normal(size=(5, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    >>> bool(np.allclose(linear_attention_recurrent(q, k, v), linear_attention(q, k, v)))
    True
    """
    q, k, v = _check_qkv(q, k, v)
    check.at_most(q.shape[0], "T", MAX_STEPS, "RNN 写法是一个词一步的 Python 循环，这么长要算很久（批量写法受内存预算限制）")
    lq, lk = log_feature_map(q), log_feature_map(k)  # (T, d_k) log φ
    vs, s = _scaled_values(v)
    scale = np.full(q.shape[1], -np.inf)  # (d_k,) 每一行笔记的刻度 c_d（对数）
    state = np.zeros((q.shape[1], v.shape[1]), dtype=vs.dtype)  # (d_k, d_v) 固定大小的笔记（小数部分）
    norm = np.zeros(q.shape[1], dtype=vs.dtype)  # (d_k,)
    out = []
    for t in range(q.shape[0]):  # 一步接一步，像 RNN
        new = np.maximum(scale, lk[t])  # (d_k,) 新刻度
        keep, add = np.exp(scale - new), np.exp(lk[t] - new)  # (d_k,) 旧笔记缩小多少、新词的分量
        state = keep[:, None] * state + np.outer(add, vs[t])  # (d_k, d_v)
        norm = keep * norm + add  # (d_k,)，最大刻度那一维 >= 1
        scale = new
        a = dimension_weights(lq[t], scale)  # (d_k,) 最大的一维是 1
        out.append(a @ state / (a @ norm))  # (d_v,)
    with np.errstate(over="ignore", invalid="ignore"):
        result = np.array(out) * s  # (T, d_v)
    return check.finite_result(result, "线性注意力的输出", check.OVERFLOW_HINT)
