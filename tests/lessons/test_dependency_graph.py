"""lessons/dependency_graph.py：RNN 要排 T 轮队、注意力一轮算完——依赖图的手算例子、参考实现、性质。"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.lessons import dependency_graph as rec

from helpers.errors import call, error_table_test

# ---------------------------------------------------------------- 依赖图：手算


def test_rnn_dependencies_by_hand():
    assert rec.rnn_dependencies(3) == {"h1": ("x1",), "h2": ("x2", "h1"), "h3": ("x3", "h2")}


def test_attention_dependencies_by_hand():
    assert rec.attention_dependencies(3) == {f"y{t}": ("x1", "x2", "x3") for t in (1, 2, 3)}
    assert rec.attention_dependencies(3, causal=True) == {
        "y1": ("x1",), "y2": ("x1", "x2"), "y3": ("x1", "x2", "x3")}


# 稠密的注意力图有 T² 条边：到 1024 为止已经说明问题；"不受递归深度限制"只对 RNN 的长链有意义，单独查到 3000。
@pytest.mark.parametrize("T", [1, 2, 5, 64, 1024])
def test_rnn_needs_T_rounds_and_T_hops_attention_needs_one(T):
    g_rnn, g_att = rec.rnn_dependencies(T), rec.attention_dependencies(T)
    g_causal = rec.attention_dependencies(T, causal=True)
    assert rec.sequential_steps(g_rnn) == T
    assert rec.sequential_steps(g_att) == rec.sequential_steps(g_causal) == 1
    assert rec.path_length(g_rnn, "x1", f"h{T}") == T
    assert rec.path_length(g_att, "x1", f"y{T}") == rec.path_length(g_causal, "x1", f"y{T}") == 1


def test_long_rnn_chain_has_no_recursion_limit():
    g = rec.rnn_dependencies(3000)  # 比 Python 默认的递归深度 1000 长得多
    assert rec.sequential_steps(g) == 3000 and rec.path_length(g, "x1", "h3000") == 3000


def test_small_graphs_by_hand():
    diamond = {"a": ("x",), "b": ("x",), "c": ("a", "b"), "d": ("c", "x")}
    assert rec.sequential_steps(diamond) == 3  # a 和 b 可以同一轮；c 第 2 轮；d 第 3 轮
    assert rec.path_length(diamond, "x", "d") == 1  # d 直接用到 x
    assert rec.path_length(diamond, "a", "d") == 2
    assert rec.path_length(diamond, "d", "d") == 0
    # 一个 RNN 的 h2 经过 h1 间接用到 x1：2 跳
    assert rec.path_length(rec.rnn_dependencies(4), "x1", "h2") == 2
    assert rec.path_length(rec.rnn_dependencies(4), "x3", "h4") == 2


def _ref_longest(graph):
    """参考实现：带记忆的递归（只用于小图）。"""
    memo = {}

    def depth(node):
        if node not in graph:
            return 0
        if node not in memo:
            memo[node] = 1 + max((depth(p) for p in graph[node]), default=0)
        return memo[node]

    return max(depth(n) for n in graph)


def _ref_hops(graph, source, target):
    """参考实现：把所有边放进距离矩阵，跑 Floyd–Warshall。"""
    nodes = sorted(set(graph) | {p for ps in graph.values() for p in ps} | {source})
    idx = {n: i for i, n in enumerate(nodes)}
    dist = np.full((len(nodes), len(nodes)), np.inf)
    np.fill_diagonal(dist, 0)
    for node, parents in graph.items():
        for p in parents:
            dist[idx[p], idx[node]] = 1
    for k in range(len(nodes)):
        dist = np.minimum(dist, dist[:, [k]] + dist[[k], :])
    return dist[idx[source], idx[target]]


@st.composite
def dags(draw):
    """随机无环图：结点 n0 … n{k-1}，只允许编号小的指向编号大的；n0、n1 是输入。"""
    k = draw(st.integers(3, 9))
    graph = {}
    for j in range(2, k):
        parents = draw(st.lists(st.integers(0, j - 1), unique=True, max_size=j))
        graph[f"n{j}"] = tuple(f"n{i}" for i in parents)
    return graph


@given(dags(), st.data())
def test_graph_functions_match_references(graph, data):
    assert rec.sequential_steps(graph) == _ref_longest(graph)
    target = data.draw(st.sampled_from(sorted(graph)))
    source = data.draw(st.sampled_from(["n0", "n1", *sorted(graph)]))
    expected = _ref_hops(graph, source, target)
    if np.isinf(expected):
        with pytest.raises(ValueError, match="到不了"):
            rec.path_length(graph, source, target)
    else:
        assert rec.path_length(graph, source, target) == expected


# ---------------------------------------------------------------- 坏输入

CYCLE = {"a": ("b",), "b": ("a",), "c": ("x",)}
VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("rnn-deps-0", lambda: rec.rnn_dependencies(0), ValueError, r"T 必须是正整数.*0"),
    ("rnn-deps-str", lambda: rec.rnn_dependencies("3"), TypeError, r"T 必须是正整数.*'3'"),
    ("att-deps-neg", lambda: rec.attention_dependencies(-2), ValueError, r"T 必须是正整数.*-2"),
    ("att-deps-float", lambda: rec.attention_dependencies(2.0), TypeError, r"T 必须是正整数.*float 2\.0"),
    ("steps-not-dict", lambda: rec.sequential_steps([("a", "x")]), TypeError, r"graph 必须是 dict.*list"),
    ("steps-empty", lambda: rec.sequential_steps({}), ValueError, r"graph 是空的"),
    ("steps-cycle", lambda: rec.sequential_steps(CYCLE), ValueError, r"graph 里有环.*\['a', 'b'\]"),
    ("hops-not-dict", lambda: rec.path_length("h1", "x1", "h1"), TypeError, r"graph 必须是 dict.*str"),
    ("hops-cycle", lambda: rec.path_length(CYCLE, "x", "c"), ValueError, r"graph 里有环"),
    ("hops-target-input", lambda: rec.path_length(rec.rnn_dependencies(3), "x1", "x3"), ValueError,
     r"target='x3' 不是 graph 里的计算结点.*'h1'"),
    ("hops-unreachable", lambda: rec.path_length(rec.rnn_dependencies(3), "x3", "h2"), ValueError,
     r"从 source='x3' 到不了 target='h2'"),
    ("graph-parents-str", call(rec.sequential_steps, {"a": "b"}), TE, r"graph 的每一项必须是.*'a': 'b'"),
    ("graph-rnn-T-huge", call(rec.rnn_dependencies, 10**9), VE, r"T=1000000000 太大.*100000"),
    ("graph-attention-T-huge", call(rec.attention_dependencies, 10**6), VE, r"T=1000000 太大.*T² 条边"),
    ("graph-causal-str", call(rec.attention_dependencies, 3, causal="no"), TE, r"causal 必须是 bool.*'no'"),
    ("graph-source-int", call(rec.path_length, rec.rnn_dependencies(3), 1, "h3"), TE, r"source 必须是结点名.*int 1"),
]
test_documented_errors = error_table_test(ERROR_CASES)
