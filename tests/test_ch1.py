"""第 1 章：transformer_lab.recurrence 与两张可交互图。

四类测试：书里的手算数字、独立的参考实现（有限差分、反向传播、逐个数乘加、递归求最长链）、
Hypothesis 性质测试、每一种文档里写明的报错。
"""

import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import transformer_lab as tl
from transformer_lab import costs
from transformer_lab import recurrence as rec
from transformer_lab.figures import recurrence as fig_rec

ROOT = Path(__file__).resolve().parents[1]

# ---------------------------------------------------------------- 依赖图：手算


def test_rnn_dependencies_by_hand():
    assert rec.rnn_dependencies(3) == {"h1": ("x1",), "h2": ("x2", "h1"), "h3": ("x3", "h2")}


def test_attention_dependencies_by_hand():
    assert rec.attention_dependencies(3) == {f"y{t}": ("x1", "x2", "x3") for t in (1, 2, 3)}
    assert rec.attention_dependencies(3, causal=True) == {
        "y1": ("x1",), "y2": ("x1", "x2"), "y3": ("x1", "x2", "x3")}


@pytest.mark.parametrize("T", [1, 2, 5, 64, 1024, 3000])
def test_rnn_needs_T_rounds_and_T_hops_attention_needs_one(T):
    g_rnn, g_att = rec.rnn_dependencies(T), rec.attention_dependencies(T)
    g_causal = rec.attention_dependencies(T, causal=True)
    assert rec.sequential_steps(g_rnn) == T  # 不受 Python 递归深度限制
    assert rec.sequential_steps(g_att) == rec.sequential_steps(g_causal) == 1
    assert rec.path_length(g_rnn, "x1", f"h{T}") == T
    assert rec.path_length(g_att, "x1", f"y{T}") == rec.path_length(g_causal, "x1", f"y{T}") == 1


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


# ---------------------------------------------------------------- 雅可比矩阵：手算


def test_jacobians_of_the_four_word_example_by_hand():
    x = np.array([[1.0], [0.0], [0.0], [0.0]])  # (T=4, d_in=1)
    states, jac = rec.input_jacobians(x, np.array([[1.0]]), np.array([[0.5]]))
    h = [math.tanh(1.0)]
    for _ in range(3):
        h.append(math.tanh(0.5 * h[-1]))
    np.testing.assert_allclose(states.ravel(), h, rtol=1e-15)
    expected, d = [], (1 - h[0] ** 2) * 1.0  # ∂h_1/∂x_1
    expected.append(d)
    for t in range(1, 4):
        d = (1 - h[t] ** 2) * 0.5 * d  # 每传一步：tanh 的斜率 × W_hh
        expected.append(d)
    np.testing.assert_allclose(jac[:, 0, 0, 0], expected, rtol=1e-14)
    np.testing.assert_allclose(jac[:, 0, 0, 0].round(4), [0.42, 0.1823, 0.0882, 0.0437])  # 书里印的数
    assert jac.shape == (4, 4, 1, 1)
    np.testing.assert_array_equal(jac[0, 1:], 0.0)  # 后面的词影响不了第 1 步


def _random_rnn(seed, T, d_in, d_h, with_b=False, with_h0=False, scale=1.0):
    rng = np.random.default_rng(seed)
    x = scale * rng.standard_normal((T, d_in))
    w_xh, w_hh = rng.standard_normal((d_in, d_h)) / 2, rng.standard_normal((d_h, d_h)) / 2
    b_h = rng.standard_normal(d_h) if with_b else None
    h0 = rng.standard_normal(d_h) if with_h0 else None
    return x, w_xh, w_hh, b_h, h0


def _linear_reference(x, w_xh, w_hh, b_h, h0):
    h = np.zeros(w_hh.shape[0]) if h0 is None else h0
    b_h = np.zeros(w_hh.shape[0]) if b_h is None else b_h
    out = []
    for x_t in x:
        h = x_t @ w_xh + h @ w_hh + b_h
        out.append(h)
    return np.array(out)


CASES = [(5, 1, 1, False, False), (6, 3, 4, True, False), (4, 2, 5, False, True), (7, 4, 3, True, True)]


@pytest.mark.parametrize("T, d_in, d_h, with_b, with_h0", CASES, ids=str)
@pytest.mark.parametrize("linear", [False, True], ids=["tanh", "linear"])
def test_jacobians_match_finite_differences(T, d_in, d_h, with_b, with_h0, linear):
    x, w_xh, w_hh, b_h, h0 = _random_rnn(T * 10 + d_h, T, d_in, d_h, with_b, with_h0)
    forward = _linear_reference if linear else (lambda *a: tl.rnn_forward(*a))
    states, jac = rec.input_jacobians(x, w_xh, w_hh, b_h=b_h, h0=h0, linear=linear)
    np.testing.assert_allclose(states, forward(x, w_xh, w_hh, b_h, h0), rtol=1e-12, atol=1e-14)
    eps = 1e-6
    for s in range(T):
        for a in range(d_in):
            nudge = np.zeros_like(x)
            nudge[s, a] = eps
            fd = (forward(x + nudge, w_xh, w_hh, b_h, h0) - forward(x - nudge, w_xh, w_hh, b_h, h0)) / (2 * eps)
            np.testing.assert_allclose(jac[:, s, :, a], fd, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("T, d_in, d_h, with_b, with_h0", CASES, ids=str)
def test_jacobians_match_backpropagation(T, d_in, d_h, with_b, with_h0):
    """独立算法：从最后一步往回乘（反向传播），得到 ∂h_T/∂x_s 对所有 s。"""
    x, w_xh, w_hh, b_h, h0 = _random_rnn(T + 7 * d_in, T, d_in, d_h, with_b, with_h0)
    states, jac = rec.input_jacobians(x, w_xh, w_hh, b_h=b_h, h0=h0)
    g = np.eye(d_h)  # ∂h_T/∂h_t，从 t = T 开始
    for t in range(T - 1, -1, -1):
        local = g * (1 - states[t] ** 2)  # ∂h_T/∂(第 t 步 tanh 之前的值)
        np.testing.assert_allclose(jac[T - 1, t], local @ w_xh.T, rtol=1e-10, atol=1e-14)
        g = local @ w_hh.T


@given(st.integers(1, 8), st.integers(1, 4), st.integers(1, 6), st.floats(0.1, 3.0), st.floats(0.0, 3.0),
       st.integers(0, 2**32 - 1))
def test_tanh_influence_is_bounded_by_gain_power_and_linear_is_exact(T, d_in, d_h, gain, scale, seed):
    rng = np.random.default_rng(seed)
    w_hh = rec.orthogonal_recurrent_weights(d_h, gain, rng)
    w_xh = rng.standard_normal((d_in, d_h))
    x = scale * rng.standard_normal((T, d_in))
    _, jac = rec.input_jacobians(x, w_xh, w_hh)
    _, jac_lin = rec.input_jacobians(x, w_xh, w_hh, linear=True)
    first = np.linalg.norm(w_xh, 2)
    powers = first * gain ** np.arange(T)  # ‖W_xh‖ · g^(t-1)
    norms = np.linalg.norm(jac[:, 0], ord=2, axis=(-2, -1))
    norms_lin = np.linalg.norm(jac_lin[:, 0], ord=2, axis=(-2, -1))
    np.testing.assert_allclose(norms_lin, powers, rtol=1e-9)  # 正交矩阵：去掉 tanh 时正好是 g 的幂
    assert np.all(norms <= powers * (1 + 1e-9))  # tanh 的斜率 <= 1，只会更小


@given(st.integers(1, 6), st.integers(1, 3), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_jacobians_are_causal_and_inputs_untouched(T, d_in, d_h, seed):
    x, w_xh, w_hh, b_h, h0 = _random_rnn(seed, T, d_in, d_h, True, True)
    before = [a.copy() for a in (x, w_xh, w_hh, b_h, h0)]
    for linear in (False, True):
        _, jac = rec.input_jacobians(x, w_xh, w_hh, b_h=b_h, h0=h0, linear=linear)
        upper = np.triu(np.ones((T, T), bool), k=1)  # t < s 的位置
        np.testing.assert_array_equal(jac[upper], 0.0)
    for a, b in zip((x, w_xh, w_hh, b_h, h0), before):
        np.testing.assert_array_equal(a, b)


@given(st.integers(1, 12), st.floats(0.01, 10.0), st.integers(0, 2**32 - 1))
def test_orthogonal_weights_scale_every_vector_by_gain(d_h, gain, seed):
    w = rec.orthogonal_recurrent_weights(d_h, gain, np.random.default_rng(seed))
    assert w.shape == (d_h, d_h)
    np.testing.assert_allclose(w @ w.T, gain**2 * np.eye(d_h), atol=1e-10 * max(1.0, gain**2))
    v = np.random.default_rng(seed + 1).standard_normal(d_h)
    np.testing.assert_allclose(np.linalg.norm(v @ w), gain * np.linalg.norm(v), rtol=1e-10)


def test_orthogonal_weights_same_seed_same_matrix_and_gain_only_scales():
    a = rec.orthogonal_recurrent_weights(5, 0.9, np.random.default_rng(3))
    b = rec.orthogonal_recurrent_weights(5, 1.0, np.random.default_rng(3))
    np.testing.assert_allclose(a, 0.9 * b, rtol=1e-15)


def test_chapter_rnn_decays_and_matches_explorable():
    """正文的 16 维 RNN（g = 0.9，输入强度 0.5）与图里的是同一个；第 60 步的影响力远小于第 1 步。"""
    rng = np.random.default_rng(1)
    q = rec.orthogonal_recurrent_weights(16, 1.0, rng)
    w_xh = rng.standard_normal((4, 16)) / 2
    x = 0.5 * rng.standard_normal((60, 4))
    _, jac = rec.input_jacobians(x, w_xh, 0.9 * q)
    influence = np.linalg.norm(jac[:, 0], ord=2, axis=(-2, -1))
    drawn = tl.explore.rnn_memory_decay().update(gain=0.9, input_scale=0.5)
    np.testing.assert_allclose(drawn["influence"], influence)
    assert influence[-1] < 1e-6 * influence[0]
    per_step = (influence[-1] / influence[0]) ** (1 / 59)
    assert per_step < 0.9  # tanh 的斜率让它比 g 还小


# ---------------------------------------------------------------- 乘加次数


def _count_rnn(T, d_in, d_h):
    return sum(d_in + d_h for _ in range(T) for _ in range(d_h))


def _count_attention(T, S, d_k, d_v):
    return sum(d_k + d_v for _ in range(T) for _ in range(S))


def test_multiply_adds_by_hand():
    assert costs.rnn_multiply_adds(3, 4, 4) == 96  # 3 × (16 + 16)
    assert costs.rnn_multiply_adds(3, 2, 4) == 72  # 3 × (8 + 16)
    assert costs.attention_multiply_adds(3, 4) == 72  # 9 × (4 + 4)
    assert costs.attention_multiply_adds(1, 4, S=100) == 800
    assert costs.attention_multiply_adds(2, 3, d_v=5, S=7) == 2 * 7 * 8


@given(st.integers(1, 12), st.integers(1, 12), st.integers(1, 12), st.integers(1, 12), st.integers(1, 12))
def test_multiply_adds_match_counting_loops(T, S, d_in, d_h, d_v):
    assert costs.rnn_multiply_adds(T, d_in, d_h) == _count_rnn(T, d_in, d_h)
    assert costs.attention_multiply_adds(T, d_h, d_v=d_v, S=S) == _count_attention(T, S, d_h, d_v)
    assert costs.attention_multiply_adds(T, d_h) == _count_attention(T, T, d_h, d_h)


@given(st.integers(1, 10_000), st.integers(1, 2048))
def test_costs_scale_as_n_d2_and_n2_d(T, d):
    r, a = costs.rnn_multiply_adds(T, d, d), costs.attention_multiply_adds(T, d)
    assert r == 2 * T * d * d and a == 2 * T * T * d
    assert costs.rnn_multiply_adds(2 * T, d, d) == 2 * r  # 句子翻倍：RNN 翻倍
    assert costs.attention_multiply_adds(2 * T, d) == 4 * a  # 注意力变 4 倍
    assert (a > r) == (T > d)  # T = d 时正好一样多


def test_matrix_multiplication_really_does_that_many_multiply_adds():
    """数乘加的约定与 NumPy 的矩阵乘法一致：把每个元素都换成 1，结果就是每个输出元素用到的乘加次数。"""
    T, d = 5, 3
    ones = np.ones((T, d))
    assert (ones @ ones.T).sum() == T * T * d  # q kᵀ：T·S 个分数，每个 d 次乘加
    assert (np.ones((T, T)) @ ones).sum() == T * T * d  # weights v


# ---------------------------------------------------------------- 计时（不断言用时长短）


def test_time_rnn_vs_attention_returns_positive_times():
    out = costs.time_rnn_vs_attention((4, 16), 8, np.random.default_rng(0), repeat=2)
    assert sorted(out) == ["T", "attention", "rnn", "rnn_batched"]
    np.testing.assert_array_equal(out["T"], [4, 16])
    for key in ("rnn", "attention", "rnn_batched"):
        assert out[key].shape == (2,) and np.all(np.isfinite(out[key])) and np.all(out[key] > 0)


def test_time_rnn_vs_attention_accepts_a_list():
    out = costs.time_rnn_vs_attention([3], 2, np.random.default_rng(0), repeat=1)
    assert out["rnn"].shape == (1,)


# ---------------------------------------------------------------- 报错

RNG = np.random.default_rng(0)
X, WX, WH = np.ones((3, 2)), np.ones((2, 4)), np.eye(4)
CYCLE = {"a": ("b",), "b": ("a",), "c": ("x",)}

ERRORS = [
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
    ("orth-d_h-0", lambda: rec.orthogonal_recurrent_weights(0, 1.0, RNG), ValueError, r"d_h 必须是正整数.*0"),
    ("orth-gain-0", lambda: rec.orthogonal_recurrent_weights(3, 0.0, RNG), ValueError, r"gain 必须是有限的正实数.*0\.0"),
    ("orth-gain-inf", lambda: rec.orthogonal_recurrent_weights(3, np.inf, RNG), ValueError, r"gain .*inf"),
    ("orth-gain-str", lambda: rec.orthogonal_recurrent_weights(3, "1", RNG), TypeError, r"gain 必须是正实数.*'1'"),
    ("orth-rng-int", lambda: rec.orthogonal_recurrent_weights(3, 1.0, 0), TypeError,
     r"rng 必须是 np\.random\.Generator.*int"),
    ("jac-x-list", lambda: rec.input_jacobians(X.tolist(), WX, WH), TypeError, r"x 必须是 NumPy 数组.*list"),
    ("jac-w_hh-shape", lambda: rec.input_jacobians(X, WX, np.ones((4, 3))), ValueError,
     r"w_hh 的形状应为 \(4, 4\).*\(4, 3\)"),
    ("jac-w_xh-rows", lambda: rec.input_jacobians(X, np.ones((3, 4)), WH), ValueError, r"w_xh 的形状应为 \(2, 任意\)"),
    ("jac-x-nan", lambda: rec.input_jacobians(np.full((3, 2), np.nan), WX, WH), ValueError, r"x 含有 NaN"),
    ("jac-h0-linear", lambda: rec.input_jacobians(X, WX, WH, h0=np.zeros(3), linear=True), ValueError,
     r"h0 的形状应为"),
    ("macs-rnn-0", lambda: costs.rnn_multiply_adds(0, 2, 2), ValueError, r"T 必须是正整数.*0"),
    ("macs-rnn-d_h-float", lambda: costs.rnn_multiply_adds(2, 2, 2.5), TypeError, r"d_h 必须是正整数.*2\.5"),
    ("macs-att-S-0", lambda: costs.attention_multiply_adds(2, 4, S=0), ValueError, r"S 必须是正整数.*0"),
    ("macs-att-d_v-bool", lambda: costs.attention_multiply_adds(2, 4, d_v=True), TypeError, r"d_v 必须是正整数.*bool"),
    ("time-empty", lambda: costs.time_rnn_vs_attention((), 4, RNG), ValueError, r"lengths 必须是非空的整数元组.*\(\)"),
    ("time-str", lambda: costs.time_rnn_vs_attention("16", 4, RNG), ValueError, r"lengths 必须是非空的整数元组.*'16'"),
    ("time-T-0", lambda: costs.time_rnn_vs_attention((8, 0), 4, RNG), ValueError, r"lengths 里的每个 T 必须是正整数.*0"),
    ("time-d-0", lambda: costs.time_rnn_vs_attention((8,), 0, RNG), ValueError, r"d 必须是正整数.*0"),
    ("time-repeat-0", lambda: costs.time_rnn_vs_attention((8,), 4, RNG, repeat=0), ValueError, r"repeat 必须是正整数"),
    ("time-rng", lambda: costs.time_rnn_vs_attention((8,), 4, 42), TypeError, r"rng 必须是 np\.random\.Generator"),
]


@pytest.mark.parametrize("case_id, fn, exc, pattern", ERRORS, ids=[e[0] for e in ERRORS])
def test_bad_input_raises_clear_chinese_error(case_id, fn, exc, pattern):
    with pytest.raises(exc, match=pattern) as info:
        fn()
    assert type(info.value) is exc
    assert any("\u4e00" <= ch <= "\u9fff" for ch in str(info.value))


# ---------------------------------------------------------------- 可交互图


@pytest.fixture(scope="module")
def memory():
    return tl.explore.rnn_memory_decay()


@pytest.fixture(scope="module")
def queue():
    return tl.explore.queue_vs_direct()


def test_explorables_are_exported_and_stay_within_frame_budget(memory, queue):
    assert {"rnn_memory_decay", "queue_vs_direct"} <= set(tl.explore.catalog())
    assert len(memory.grid()) == 18 and len(queue.grid()) == 6
    assert len(memory.grid()) + len(queue.grid()) <= 60
    assert [s.name for s in memory.sliders] == ["gain", "input_scale"]
    assert memory.sliders[0].start == 0.9 and memory.sliders[1].start == 0.5
    assert queue.sliders[0].start == 16


def test_memory_view_facts_on_every_frame(memory):
    for params in memory.grid():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            drawn = memory.update(**params)
        g = params["gain"]
        lin = drawn["influence_linear"]
        np.testing.assert_allclose(lin, lin[0] * g ** np.arange(60), rtol=1e-9)
        assert np.all(drawn["influence"] <= lin * (1 + 1e-9))  # tanh 只会让影响力更小
        assert np.all(drawn["size"] <= 4.0)  # ‖h‖ <= √d_h
        assert 0 < float(drawn["mean_slope"]) <= 1
    weak, strong = memory.update(gain=1.5, input_scale=0.1), memory.update(gain=1.5, input_scale=1.0)
    assert weak["influence"][-1] > 1 > strong["influence"][-1]  # 同样 g > 1：输入强弱决定涨落
    assert memory.update(gain=2.0, input_scale=0.1)["size_linear"][-1] > 1e10  # 去掉 tanh：笔记也爆炸


def test_memory_view_updates_data_without_rebuilding(memory):
    fig, _ = memory._view()
    before = [(id(ax), len(ax.lines), len(ax.texts)) for ax in fig.axes]
    memory.update(gain=0.5, input_scale=1.0)
    memory.update(gain=2.0, input_scale=0.1)
    assert [(id(ax), len(ax.lines), len(ax.texts)) for ax in fig.axes] == before
    assert "g = 2" in fig._suptitle.get_text()


def test_queue_view_facts(queue):
    for params in queue.grid():
        T = params["T"]
        drawn = queue.update(**params)
        assert drawn["rnn_rounds"].max() == T and drawn["attention_rounds"].max() == 1
        assert drawn["rnn"].shape == drawn["attention"].shape == (T,)
        np.testing.assert_allclose(drawn["attention"].sum(), 1.0)
        assert drawn["attention"].argmax() == 0  # 最后一个词最看重第 1 个词（手工设计）
    short, long = queue.update(T=4), queue.update(T=64)
    assert long["rnn"][0] < 1e-6 * long["rnn"][-1] and long["attention"][0] > 0.5
    assert long["rnn"][0] < short["rnn"][0]  # 句子变长，RNN 里第 1 个词的影响变小


def test_queue_rnn_is_the_chapter_rnn(queue):
    q, w_xh, x = fig_rec.demo_rnn(64, 4, 16, 1)
    _, jac = rec.input_jacobians(0.5 * x[:32], w_xh, 0.9 * q)  # 只读前 32 个词
    expected = np.linalg.norm(jac[31], ord=2, axis=(-2, -1))
    np.testing.assert_allclose(queue.update(T=32)["rnn"], expected, rtol=1e-12)


def test_alt_texts_describe_each_frame(memory, queue):
    for ex, key in ((memory, "gain"), (queue, "T")):
        alts = [ex.alt_text(p) for p in ex.grid()]
        assert len(set(alts)) == len(alts)
        assert all(str(p[key]) in alt for p, alt in zip(ex.grid(), alts))


def test_live_sliders_are_continuous(memory):
    widget = memory.widget()
    image, gain, strength = widget.children
    assert (gain.min, gain.max, gain.value) == (0.5, 2.0, 0.9)
    assert (strength.min, strength.max, strength.value) == (0.1, 1.0, 0.5)
    gain.value = 1.25  # 网格以外的值也能当场算
    assert "g = 1.25" in image.description


# ---------------------------------------------------------------- 依赖方向


def test_importing_recurrence_does_not_load_matplotlib():
    code = ("import sys, numpy as np, transformer_lab.recurrence as r;"
            "r.input_jacobians(np.ones((2, 1)), np.ones((1, 2)), np.eye(2));"
            "print('matplotlib' in sys.modules, 'ipywidgets' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False"]



def test_time_rnn_vs_attention_reports_a_failing_subprocess(monkeypatch):
    failed = subprocess.CompletedProcess(args=[], returncode=1, stdout="", stderr="Traceback ...\nboom")
    monkeypatch.setattr(costs.subprocess, "run", lambda *args, **kwargs: failed)
    with pytest.raises(RuntimeError, match=r"(?s)计时子进程出错（返回码 1）.*boom"):
        costs.time_rnn_vs_attention((4,), 2, np.random.default_rng(0), repeat=1)


def test_timing_subprocess_is_single_threaded(monkeypatch):
    seen = {}

    def fake_run(cmd, env, **kwargs):
        seen.update(env)
        return subprocess.CompletedProcess(cmd, 0, '{"rnn": [1.0], "attention": [2.0], "rnn_batched": [0.5]}\n', "")

    monkeypatch.setattr(costs.subprocess, "run", fake_run)
    out = costs.time_rnn_vs_attention((4,), 2, np.random.default_rng(0))
    assert seen["OPENBLAS_NUM_THREADS"] == seen["OMP_NUM_THREADS"] == seen["MKL_NUM_THREADS"] == "1"
    assert str(ROOT) in seen["PYTHONPATH"].split(os.pathsep)
    np.testing.assert_array_equal(out["attention"], [2.0])
