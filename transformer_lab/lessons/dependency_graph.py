"""第 1 章的依赖图 (dependency graph)：谁必须等谁算完——RNN 要排 T 轮队，注意力只要 1 轮。

图用字典表示：每个节点名 → 它直接依赖的节点名。``x3`` 是第 3 个输入，``h3`` 是 RNN 第 3 步的隐状态，
``y3`` 是注意力第 3 个位置的输出。RNN 的雅可比矩阵在 ``core/rnn.py``，乘加次数在 ``costs.py``。
本模块只用标准库。
"""

from __future__ import annotations

from collections import deque

from .. import _validation as check

__all__ = ["rnn_dependencies", "attention_dependencies", "sequential_steps", "path_length"]


# ---------------------------------------------------------------- 依赖图：谁要等谁


MAX_T, MAX_T_ATTENTION = 100_000, 2_000  # 依赖图的大小上限（结点数、T² 条边）


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
        ``T`` 不是正整数或超过 100000。

    Examples
    --------
    >>> rnn_dependencies(3)
    {'h1': ('x1',), 'h2': ('x2', 'h1'), 'h3': ('x3', 'h2')}
    """
    T = check.at_most(check.positive_int(T, "T"), "T", MAX_T, "图里每个词一个结点")
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
        ``T`` 不是正整数或超过 2000（T² 条边）；``causal`` 不是 bool。

    Examples
    --------
    >>> attention_dependencies(2)
    {'y1': ('x1', 'x2'), 'y2': ('x1', 'x2')}
    >>> attention_dependencies(2, causal=True)
    {'y1': ('x1',), 'y2': ('x1', 'x2')}
    """
    T = check.at_most(check.positive_int(T, "T"), "T", MAX_T_ATTENTION, "注意力的依赖图有 T² 条边")
    causal = check.boolean(causal, "causal")
    return {f"y{t}": tuple(f"x{s}" for s in range(1, (t if causal else T) + 1)) for t in range(1, T + 1)}


def _topological_order(graph: object) -> list[str]:
    """检查依赖图并按"先算谁"排好计算结点（Kahn 算法，不用递归，上万个结点也行）；有环时报错。"""
    if not isinstance(graph, dict):
        raise TypeError(f"graph 必须是 dict（结点 → 它用到的结点），收到的是 {type(graph).__name__}。")
    for node, parents in graph.items():
        names_ok = isinstance(parents, (tuple, list)) and all(isinstance(p, str) for p in parents)
        if not isinstance(node, str) or not names_ok:
            raise TypeError(f"graph 的每一项必须是 结点名 → 它用到的结点名的元组，例如 'h2': ('x2', 'h1')；"
                            f"收到的是 {node!r}: {parents!r}。")
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
        ``graph`` 不是 dict，或某一项不是 结点名 → 结点名的元组。
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
    for name, node in (("source", source), ("target", target)):
        if not isinstance(node, str):
            raise TypeError(f"{name} 必须是结点名（字符串，例如 'x1'），收到的是 {check.describe(node)}。")
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
