"""第 1 章：RNN 与注意力，数一数、算一算。

* 依赖图 (dependency graph)：谁必须等谁算完——RNN 要排 T 轮队，注意力只要 1 轮；
* 雅可比矩阵 (Jacobian) ∂h_t/∂x_s：第 s 个词还能把第 t 步的"笔记"推动多少；
（乘加次数和计时在 ``costs.py``。）

约定行向量：h_t = tanh(x_t W_xh + h_{t-1} W_hh + b_h)，与 ``tl.rnn_forward`` 相同。
本模块只依赖 NumPy。
"""

from __future__ import annotations

from collections import deque

import numpy as np

from . import _validation as val
from .rnn import rnn_forward

__all__ = ["rnn_dependencies", "attention_dependencies", "sequential_steps", "path_length",
           "orthogonal_recurrent_weights", "input_jacobians"]


# ---------------------------------------------------------------- 依赖图：谁要等谁


def rnn_dependencies(T: int) -> dict[str, tuple[str, ...]]:
    """RNN 的依赖图：计算结点 ``h_t`` → 它直接用到的 ``x_t`` 和上一步的笔记 ``h_{t-1}``。

    Parameters
    ----------
    T : int
        序列长度（词数）。

    Returns
    -------
    dict
        ``h1 … hT`` → 它们直接用到的结点；``x1 … xT`` 是输入（一开始就有）。

    Raises
    ------
    TypeError, ValueError
        ``T`` 不是正整数。

    Examples
    --------
    >>> rnn_dependencies(3)
    {'h1': ('x1',), 'h2': ('x2', 'h1'), 'h3': ('x3', 'h2')}
    """
    T = val.positive_int(T, "T")
    return {f"h{t}": (f"x{t}",) if t == 1 else (f"x{t}", f"h{t - 1}") for t in range(1, T + 1)}


def attention_dependencies(T: int, causal: bool = False) -> dict[str, tuple[str, ...]]:
    """自注意力的依赖图：每个输出 ``y_t`` 直接用到所有输入。

    Parameters
    ----------
    T : int
        序列长度。
    causal : bool, default False
        True 时第 t 个输出只用到 ``x_1 … x_t``（因果掩码，生成文字时用）。

    Returns
    -------
    dict
        ``y1 … yT`` → 它们直接用到的输入结点。

    Raises
    ------
    TypeError, ValueError
        ``T`` 不是正整数。

    Examples
    --------
    >>> attention_dependencies(2)
    {'y1': ('x1', 'x2'), 'y2': ('x1', 'x2')}
    >>> attention_dependencies(2, causal=True)
    {'y1': ('x1',), 'y2': ('x1', 'x2')}
    """
    T = val.positive_int(T, "T")
    return {f"y{t}": tuple(f"x{s}" for s in range(1, (t if causal else T) + 1)) for t in range(1, T + 1)}


def _topological_order(graph: object) -> list[str]:
    """检查依赖图并按"先算谁"排好计算结点（Kahn 算法，不用递归，上万个结点也行）；有环时报错。"""
    if not isinstance(graph, dict):
        raise TypeError(f"graph 必须是 dict（结点 → 它用到的结点），收到的是 {type(graph).__name__}。")
    waiting = {node: sum(p in graph for p in parents) for node, parents in graph.items()}
    users: dict[str, list[str]] = {}
    for node, parents in graph.items():
        for p in parents:
            users.setdefault(p, []).append(node)
    ready, order = deque(n for n, k in waiting.items() if k == 0), []
    while ready:
        node = ready.popleft()
        order.append(node)
        for user in users.get(node, []):
            waiting[user] -= 1
            if waiting[user] == 0:
                ready.append(user)
    if len(order) < len(graph):
        stuck = sorted(set(graph) - set(order))[:3]
        raise ValueError(f"graph 里有环：结点 {stuck} 互相等待，永远算不出来。依赖图必须无环。")
    return order


def sequential_steps(graph: dict[str, tuple[str, ...]]) -> int:
    """最长的"你等我、我等他"的计算链有几轮——就算有无数个计算核心，也得一轮一轮走完。

    不在 ``graph`` 键里的结点算输入（第 0 轮就有）；计算结点的轮次 = 它用到的结点的最大轮次 + 1。

    Parameters
    ----------
    graph : dict
        计算结点 → 它直接用到的结点，例如 ``rnn_dependencies(T)``。

    Returns
    -------
    int

    Raises
    ------
    TypeError
        ``graph`` 不是 dict。
    ValueError
        ``graph`` 为空或有环。

    Examples
    --------
    >>> sequential_steps(rnn_dependencies(5)), sequential_steps(attention_dependencies(5))
    (5, 1)
    """
    order = _topological_order(graph)
    if not order:
        raise ValueError("graph 是空的：至少要有一个计算结点。")
    rounds: dict[str, int] = {}
    for node in order:
        rounds[node] = 1 + max((rounds.get(p, 0) for p in graph[node]), default=0)
    return max(rounds.values())


def path_length(graph: dict[str, tuple[str, ...]], source: str, target: str) -> int:
    """信息从 ``source``（例如第 1 个词 ``"x1"``）传到计算结点 ``target`` 最少要走几跳。

    Parameters
    ----------
    graph : dict
        计算结点 → 它直接用到的结点。
    source, target : str
        起点与终点；终点必须是计算结点。

    Returns
    -------
    int
        依赖图里最短路径的边数。

    Raises
    ------
    TypeError
        ``graph`` 不是 dict。
    ValueError
        ``graph`` 有环、``target`` 不是计算结点，或从 ``source`` 到不了 ``target``。

    Examples
    --------
    >>> path_length(rnn_dependencies(5), "x1", "h5"), path_length(attention_dependencies(5), "x1", "y5")
    (5, 1)
    """
    _topological_order(graph)
    if target not in graph:
        raise ValueError(f"target={target!r} 不是 graph 里的计算结点；可选的有 {sorted(graph)[:5]} 等。")
    dist, frontier = {target: 0}, deque([target])
    while frontier:  # 从终点往回找：它用到了谁，谁又用到了谁……
        node = frontier.popleft()
        if node == source:
            return dist[node]
        for p in graph.get(node, ()):
            if p not in dist:
                dist[p] = dist[node] + 1
                frontier.append(p)
    raise ValueError(f"从 source={source!r} 到不了 target={target!r}：{target} 的计算完全没有用到 {source}。")


# ---------------------------------------------------------------- 第 1 个词还剩多少影响


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
        ``d_h`` 不是正整数、``gain`` 不是有限正实数，或 ``rng`` 不是 Generator。

    Examples
    --------
    >>> w = orthogonal_recurrent_weights(4, 0.9, np.random.default_rng(0))
    >>> np.linalg.svd(w, compute_uv=False).round(6)
    array([0.9, 0.9, 0.9, 0.9])
    """
    d_h = val.positive_int(d_h, "d_h")
    gain = val.positive_real(gain, "gain")
    q, r = np.linalg.qr(val.generator(rng).standard_normal((d_h, d_h)))  # (d_h, d_h)
    signs = np.where(np.diag(r) < 0, -1.0, 1.0)  # 修正符号，让 Q 在所有正交矩阵里均匀分布
    return gain * q * signs  # (d_h, d_h)


def _linear_rnn(x, w_xh, w_hh, b_h, h0):
    """去掉 tanh 的 RNN：h_t = x_t W_xh + h_{t-1} W_hh + b_h。"""
    d_h = w_hh.shape[0]
    h = np.zeros(d_h) if h0 is None else np.asarray(h0, dtype=float)  # (d_h,)
    b_h = np.zeros(d_h) if b_h is None else np.asarray(b_h, dtype=float)
    states = np.empty((x.shape[0], d_h))  # (T, d_h)
    for t in range(x.shape[0]):
        h = x[t] @ w_xh + h @ w_hh + b_h  # (d_h,)
        states[t] = h
    return states


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
        与 ``tl.rnn_forward`` 相同（输入类型、形状、NaN/inf）。

    Examples
    --------
    >>> x = np.array([[1.0], [0.0]])                     # (T=2, d_in=1)
    >>> h, J = input_jacobians(x, np.array([[1.0]]), np.array([[0.5]]))
    >>> J[1, 0].round(4)        # ∂h_2/∂x_1 = (1 − h_2²) · 0.5 · (1 − h_1²) · 1
    array([[0.1823]])
    >>> J[0, 1]                 # 第 2 个词影响不了第 1 步
    array([[0.]])
    """
    states = rnn_forward(x, w_xh, w_hh, b_h=b_h, h0=h0)  # (T, d_h)；顺便检查了所有输入
    w_xh, w_hh = np.asarray(w_xh, dtype=float), np.asarray(w_hh, dtype=float)
    if linear:
        states = _linear_rnn(np.asarray(x, dtype=float), w_xh, w_hh, b_h, h0)  # (T, d_h)
    slope = np.ones_like(states) if linear else 1.0 - states**2  # (T, d_h)，tanh 的斜率
    T, d_h, d_in = states.shape[0], states.shape[1], w_xh.shape[0]
    jac = np.zeros((T, T, d_h, d_in))  # (T, T, d_h, d_in)
    for t in range(T):
        if t > 0:  # 旧词的影响：先乘 W_hhᵀ 传过来，再乘 tanh 的斜率
            jac[t, :t] = slope[t][:, None] * (w_hh.T @ jac[t - 1, :t])  # (t, d_h, d_in)
        jac[t, t] = slope[t][:, None] * w_xh.T  # (d_h, d_in)
    return states, jac
