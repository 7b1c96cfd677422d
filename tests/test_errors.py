"""坏输入一张表（einops 风格）：每行 = (id, 调用, 期望的异常类型, 中文报错必须匹配的正则)。

包里每个公开函数文档里写明的报错都在这里，全部经过 conftest.py 的 ``check_error``：
恰好是这个异常类型（不是 numpy 内部的子类）、信息匹配正则、而且是中文。
正则要求报错信息写出参数名 (q、mask、num_heads ...) 和收到的值 (通常是 shape)。
"""

import numpy as np
import pytest
from conftest import check_error

import transformer_lab as tl
from transformer_lab.core import qkv, rnn
from transformer_lab.core import similarity as core_similarity
from transformer_lab.figures import ch02_self_attention as ch02
from transformer_lab.lessons import costs, geometry, library, saturation, show, timing
from transformer_lab.lessons import dependency_graph as graph
from transformer_lab.lessons import toy_sentences as toy
from transformer_lab.widgets.explorable import Slider
from transformer_lab.lessons import deep_stack, layer_story, tiny_transformer

Q, K, V = np.ones((3, 4)), np.ones((5, 4)), np.ones((5, 2))  # (T, d_k), (S, d_k), (S, d_v)
X, W, B = np.ones((3, 4)), np.eye(4), np.zeros(4)  # (T, D), (D, D), (D,)
D = len(toy.FEATURES)
RNG = np.random.default_rng(0)
JX, WX, WH = np.ones((3, 2)), np.ones((2, 4)), np.eye(4)  # 第 1 章雅可比矩阵的 W_xh (d_in=2, d_h=4)、W_hh
CYCLE = {"a": ("b",), "b": ("a",), "c": ("x",)}
# 第 3 章的手算例子：D = 3 → d_k = 2
QX = np.array([[2.0, 0.0, 1.0], [0.0, 1.0, 2.0], [1.0, 2.0, 0.0]])
QW_Q = np.array([[0.0, 1.0], [0.0, 0.0], [1.0, 0.0]])
QW_K = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
QW_V = np.array([[1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])


def sdpa(**kw):
    args = dict(q=Q, k=K, v=V) | kw
    return lambda: tl.scaled_dot_product_attention(**args)


def mha(**kw):
    args = dict(x=X, w_q=W, w_k=W, w_v=W, w_o=W, num_heads=2) | kw
    return lambda: tl.multi_head_attention(**args)


def rnn_fw(**kw):
    args = dict(x=np.ones((4, 2)), w_xh=np.ones((2, 3)), w_hh=np.eye(3)) | kw
    return lambda: tl.rnn_forward(**args)


def call(fn, *a, **kw):
    return lambda: fn(*a, **kw)


NAN, INF = np.array([[1.0, np.nan, 0, 0]] * 3), np.array([[1.0, np.inf, 0, 0]] * 5)
ROW1_FALSE = np.array([[True] * 5, [False] * 5, [True] * 5])
VE, TE, AE = ValueError, TypeError, AttributeError

ERROR_CASES = [
    # ================================================================ core
    # ---- scaled_dot_product_attention：形状
    ("sdpa-d_k-mismatch", sdpa(k=np.ones((5, 3))), VE, r"d_k.*q\.shape=\(3, 4\).*k\.shape=\(5, 3\)"),
    ("sdpa-S-mismatch", sdpa(v=np.ones((6, 2))), VE, r"k 与 v.*\(S.*k\.shape=\(5, 4\).*v\.shape=\(6, 2\)"),
    ("sdpa-q-1d", sdpa(q=np.ones(4)), VE, r"q 至少要有 2 维.*1 维.*shape=\(4,\)"),
    ("sdpa-q-empty", sdpa(q=np.ones((0, 4))), VE, r"q 不能是空数组.*shape=\(0, 4\)"),
    ("sdpa-batch-not-broadcastable", sdpa(q=np.ones((2, 3, 4)), k=np.ones((3, 5, 4))), VE,
     r"批维度.*q 的批维度 \(2,\).*k 的批维度 \(3,\)"),
    # ---- 类型与取值
    ("sdpa-q-list", sdpa(q=[[1.0] * 4] * 3), TE, r"q 必须是 NumPy 数组.*list.*np\.asarray"),
    ("sdpa-q-python-scalar", sdpa(q=1.0), TE, r"q 必须是 NumPy 数组.*float 1\.0"),
    ("sdpa-k-complex", sdpa(k=np.ones((5, 4), complex)), TE, r"k 的 dtype.*complex128.*复数"),
    ("sdpa-v-object", sdpa(v=np.ones((5, 2), object)), TE, r"v 的 dtype.*object"),
    ("sdpa-q-string", sdpa(q=np.full((3, 4), "a")), TE, r"q 的 dtype.*<U1.*字符串"),
    ("sdpa-q-bool", sdpa(q=np.ones((3, 4), bool)), TE, r"q 的 dtype.*bool.*布尔"),
    ("sdpa-q-nan", sdpa(q=NAN), VE, r"q 含有 NaN"),
    ("sdpa-k-inf", sdpa(k=INF), VE, r"k 含有 inf"),
    # ---- mask
    ("sdpa-mask-int", sdpa(mask=np.ones((3, 5), int)), TE, r"mask 的 dtype 必须是 bool.*dtype=int64.*astype\(bool\)"),
    ("sdpa-mask-list", sdpa(mask=[[True] * 5] * 3), TE, r"mask 必须是 bool.*list"),
    ("sdpa-mask-shape", sdpa(mask=np.ones((2, 2), bool)), VE, r"mask 的形状 \(2, 2\) 无法广播.*\(3, 5\)"),
    ("sdpa-mask-row-all-false", sdpa(mask=ROW1_FALSE), VE, r"mask 在位置 \(1,\) 的一整行都是 False"),
    # ---- scale
    ("sdpa-scale-negative", sdpa(scale=-1.0), VE, r"scale 必须是有限的正实数.*-1\.0"),
    ("sdpa-scale-zero", sdpa(scale=0), VE, r"scale 必须是有限的正实数.*收到的是 0"),
    ("sdpa-scale-nan", sdpa(scale=float("nan")), VE, r"scale 必须是有限的正实数.*nan"),
    ("sdpa-scale-string", sdpa(scale="0.5"), TE, r"scale 必须是正实数.*'0\.5'"),
    ("sdpa-scale-bool", sdpa(scale=True), TE, r"scale 必须是正实数.*bool True"),
    # ---- softmax
    ("softmax-list", call(tl.softmax, [1.0, 2.0]), TE, r"x 必须是 NumPy 数组.*list"),
    ("softmax-axis-out-of-range", call(tl.softmax, np.ones((2, 3)), axis=2), VE, r"axis=2 越界.*2 维.*\[-2, 1\]"),
    ("softmax-axis-float", call(tl.softmax, np.ones(3), axis=0.0), TE, r"axis 必须是整数.*float 0\.0"),
    ("softmax-row-all-neginf", call(tl.softmax, np.array([[0.0, 1.0], [-np.inf, -np.inf]])), VE,
     r"x 沿 axis=-1 有一整行都是 -inf"),
    ("softmax-pos-inf", call(tl.softmax, np.array([0.0, np.inf])), VE, r"x 含有 inf"),
    ("softmax-nan", call(tl.softmax, np.array([0.0, np.nan])), VE, r"x 含有 NaN"),
    ("softmax-bool", call(tl.softmax, np.array([True, False])), TE, r"x 的 dtype.*bool"),
    ("softmax-empty", call(tl.softmax, np.ones((2, 0))), VE, r"x 不能是空数组.*\(2, 0\)"),
    # ---- causal_mask
    ("causal_mask-0", call(tl.causal_mask, 0), VE, r"T 必须是正整数.*>= 1.*收到的是 0"),
    ("causal_mask-float", call(tl.causal_mask, 2.5), TE, r"T 必须是正整数.*float 2\.5"),
    ("causal_mask-bool", call(tl.causal_mask, True), TE, r"T 必须是正整数.*bool True"),
    ("causal_mask-string", call(tl.causal_mask, "3"), TE, r"T 必须是正整数.*'3'"),
    # ---- split_heads / merge_heads
    ("split-not-divisible", call(tl.split_heads, np.ones((3, 5)), 2), VE, r"d_model=5.*num_heads=2.*整除"),
    ("split-num_heads-0", call(tl.split_heads, X, 0), VE, r"num_heads 必须是正整数.*收到的是 0"),
    ("split-num_heads-float", call(tl.split_heads, X, 2.0), TE, r"num_heads 必须是正整数.*float 2\.0"),
    ("split-x-1d", call(tl.split_heads, np.ones(4), 2), VE, r"x 至少要有 2 维.*shape=\(4,\)"),
    ("merge-2d", call(tl.merge_heads, X), VE, r"x 至少要有 3 维.*2 维.*shape=\(3, 4\)"),
    # ---- multi_head_attention
    ("mha-w_q-shape", mha(w_q=np.ones((4, 3))), VE, r"w_q 的形状应为 \(4, 4\).*\(4, 3\).*d_model=4"),
    ("mha-w_o-shape", mha(w_o=np.ones((3, 4))), VE, r"w_o 的形状应为 \(4, 4\).*\(3, 4\)"),
    ("mha-b_k-shape", mha(b_k=np.ones(3)), VE, r"b_k 的形状应为 \(4,?\).*\(3,\)"),
    ("mha-b_o-2d", mha(b_o=np.ones((1, 4))), VE, r"b_o 的形状应为 \(4,?\).*\(1, 4\)"),
    ("mha-kv-wrong-D", mha(kv=np.ones((5, 6))), VE, r"kv .*d_model=4.*x\.shape=\(3, 4\).*kv\.shape=\(5, 6\)"),
    ("mha-not-divisible", mha(num_heads=3), VE, r"d_model=4.*num_heads=3"),
    ("mha-num_heads-0", mha(num_heads=0), VE, r"num_heads 必须是正整数.*0"),
    ("mha-mask-shape", mha(mask=np.ones((3, 4), bool)), VE, r"mask 的形状 \(3, 4\).*\(2, 3, 3\)"),
    ("mha-mask-int", mha(mask=tl.causal_mask(3).astype(int)), TE, r"mask 的 dtype 必须是 bool"),
    ("mha-x-list", mha(x=X.tolist()), TE, r"x 必须是 NumPy 数组.*list"),
    ("mha-w_v-nan", mha(w_v=np.where(W == 1, np.nan, 0)), VE, r"w_v 含有 NaN"),
    # ---- 位置编码
    ("pe-odd-d_model", call(tl.sinusoidal_positional_encoding, 4, 5), VE, r"d_model 必须是偶数.*d_model=5"),
    ("pe-num_positions-0", call(tl.sinusoidal_positional_encoding, 0, 4), VE, r"num_positions 必须是正整数.*0"),
    ("pe-base-negative", call(tl.sinusoidal_positional_encoding, 4, 4, base=-1), VE, r"base 必须是有限的正实数.*-1"),
    ("pe-base-inf", call(tl.sinusoidal_positional_encoding, 4, 4, base=np.inf), VE, r"base .*inf"),
    ("pe-base-string", call(tl.sinusoidal_positional_encoding, 4, 4, base="1e4"), TE, r"base 必须是正实数.*'1e4'"),
    ("pe-d_model-float", call(tl.sinusoidal_positional_encoding, 4, 4.0), TE, r"d_model 必须是正整数.*float 4\.0"),
    # ---- RNN
    ("rnn-w_hh-not-square", rnn_fw(w_hh=np.ones((3, 2))), VE, r"w_hh 的形状应为 \(3, 3\).*\(3, 2\)"),
    ("rnn-x-1d", rnn_fw(x=np.ones(2)), VE, r"x 至少要有 2 维.*shape=\(2,\)"),
    ("rnn-x-3d", rnn_fw(x=np.ones((1, 4, 2))), VE, r"x 的形状应为 \(任意, 任意\).*\(1, 4, 2\)"),
    ("rnn-w_xh-rows", rnn_fw(w_xh=np.ones((3, 3))), VE, r"w_xh 的形状应为 \(2, 任意\).*\(3, 3\).*d_in=2"),
    ("rnn-h0-length", rnn_fw(h0=np.zeros(2)), VE, r"h0 的形状应为 \(3,?\).*\(2,\)"),
    ("rnn-b_h-length", rnn_fw(b_h=np.zeros(4)), VE, r"b_h 的形状应为 \(3,?\).*\(4,\)"),
    ("rnn-b_h-expected-shape-is-a-tuple", rnn_fw(b_h=np.zeros(4)), VE, r"b_h 的形状应为 \(3,\)"),
    # ---- similarity / saturation
    ("dot-length-mismatch", call(core_similarity.dot, np.ones(2), np.ones(3)), VE, r"a\.shape=\(2,\).*b\.shape=\(3,\)"),
    ("dot-list", call(core_similarity.dot, [3, 4], np.ones(2)), TE, r"a 必须是 NumPy 数组.*list"),
    ("cosine-zero-vector", call(core_similarity.cosine_similarity, np.ones(2), np.zeros(2)), VE, r"b 在位置 .* 是长度为 0 的向量.*零向量"),
    ("jacobian-negative", call(saturation.softmax_jacobian, np.array([1.5, -0.5])), VE, r"p 必须是一组概率"),
    ("jacobian-shows-received-sum", call(saturation.softmax_jacobian, np.array([0.5, 0.2])), VE, r"p 必须是一组概率.*0\.7"),
    ("variance-rng-int", call(saturation.dot_product_variance, 4, 10, 0), TE, r"rng 必须是 np\.random\.Generator.*int"),
    ("variance-num_samples-1", call(saturation.dot_product_variance, 4, 1, np.random.default_rng(0)), VE,
     r"num_samples 至少为 2.*1"),
    ("saturation-d_k-0", call(saturation.saturation_demo, 0, 8, np.random.default_rng(0)), VE, r"d_k 必须是正整数.*0"),

    # ---- core/rnn：正交权重、雅可比矩阵、第 1 章的 RNN（其余 RNN 的行在上面）
    ("rnn-deps-0", lambda: graph.rnn_dependencies(0), ValueError, r"T 必须是正整数.*0"),
    ("rnn-deps-str", lambda: graph.rnn_dependencies("3"), TypeError, r"T 必须是正整数.*'3'"),
    ("att-deps-neg", lambda: graph.attention_dependencies(-2), ValueError, r"T 必须是正整数.*-2"),
    ("att-deps-float", lambda: graph.attention_dependencies(2.0), TypeError, r"T 必须是正整数.*float 2\.0"),
    ("steps-not-dict", lambda: graph.sequential_steps([("a", "x")]), TypeError, r"graph 必须是 dict.*list"),
    ("steps-empty", lambda: graph.sequential_steps({}), ValueError, r"graph 是空的"),
    ("steps-cycle", lambda: graph.sequential_steps(CYCLE), ValueError, r"graph 里有环.*\['a', 'b'\]"),
    ("hops-not-dict", lambda: graph.path_length("h1", "x1", "h1"), TypeError, r"graph 必须是 dict.*str"),
    ("hops-cycle", lambda: graph.path_length(CYCLE, "x", "c"), ValueError, r"graph 里有环"),
    ("hops-target-input", lambda: graph.path_length(graph.rnn_dependencies(3), "x1", "x3"), ValueError,
     r"target='x3' 不是 graph 里的计算结点.*'h1'"),
    ("hops-unreachable", lambda: graph.path_length(graph.rnn_dependencies(3), "x3", "h2"), ValueError,
     r"从 source='x3' 到不了 target='h2'"),
    ("orth-d_h-0", lambda: rnn.orthogonal_recurrent_weights(0, 1.0, RNG), ValueError, r"d_h 必须是正整数.*0"),
    ("orth-gain-0", lambda: rnn.orthogonal_recurrent_weights(3, 0.0, RNG), ValueError, r"gain 必须是有限的正实数.*0\.0"),
    ("orth-gain-inf", lambda: rnn.orthogonal_recurrent_weights(3, np.inf, RNG), ValueError, r"gain .*inf"),
    ("orth-gain-str", lambda: rnn.orthogonal_recurrent_weights(3, "1", RNG), TypeError, r"gain 必须是正实数.*'1'"),
    ("orth-rng-int", lambda: rnn.orthogonal_recurrent_weights(3, 1.0, 0), TypeError,
     r"rng 必须是 np\.random\.Generator.*int"),
    ("jac-x-list", lambda: rnn.input_jacobians(JX.tolist(), WX, WH), TypeError, r"x 必须是 NumPy 数组.*list"),
    ("jac-w_hh-shape", lambda: rnn.input_jacobians(JX, WX, np.ones((4, 3))), ValueError,
     r"w_hh 的形状应为 \(4, 4\).*\(4, 3\)"),
    ("jac-w_xh-rows", lambda: rnn.input_jacobians(JX, np.ones((3, 4)), WH), ValueError, r"w_xh 的形状应为 \(2, 任意\)"),
    ("jac-x-nan", lambda: rnn.input_jacobians(np.full((3, 2), np.nan), WX, WH), ValueError, r"x 含有 NaN"),
    ("jac-h0-linear", lambda: rnn.input_jacobians(JX, WX, WH, h0=np.zeros(3), linear=True), ValueError,
     r"h0 的形状应为"),
    ("macs-rnn-0", lambda: costs.rnn_multiply_adds(0, 2, 2), ValueError, r"T 必须是正整数.*0"),
    ("macs-rnn-d_h-float", lambda: costs.rnn_multiply_adds(2, 2, 2.5), TypeError, r"d_h 必须是正整数.*2\.5"),
    ("macs-att-S-0", lambda: costs.attention_multiply_adds(2, 4, S=0), ValueError, r"S 必须是正整数.*0"),
    ("macs-att-d_v-bool", lambda: costs.attention_multiply_adds(2, 4, d_v=True), TypeError, r"d_v 必须是正整数.*bool"),
    ("time-empty", lambda: timing.time_rnn_vs_attention((), 4, RNG), ValueError, r"lengths 必须是非空的元组或列表.*\(\)"),
    ("time-str", lambda: timing.time_rnn_vs_attention("16", 4, RNG), ValueError, r"lengths 必须是非空的元组或列表.*'16'"),
    ("time-T-0", lambda: timing.time_rnn_vs_attention((8, 0), 4, RNG), ValueError, r"lengths 里的每个 T 必须是正整数.*0"),
    ("time-d-0", lambda: timing.time_rnn_vs_attention((8,), 0, RNG), ValueError, r"d 必须是正整数.*0"),
    ("time-repeat-0", lambda: timing.time_rnn_vs_attention((8,), 4, RNG, repeat=0), ValueError, r"repeat 必须是正整数"),
    ("time-rng", lambda: timing.time_rnn_vs_attention((8,), 4, 42), TypeError, r"rng 必须是 np\.random\.Generator"),

    ("random_rnn-T-0", call(tl.random_rnn, 0, 4, 16, RNG), VE, r"T 必须是正整数.*0"),
    ("random_rnn-d_h-float", call(tl.random_rnn, 3, 4, 16.0, RNG), TE, r"d_h 必须是正整数.*float 16\.0"),
    ("random_rnn-rng-int", call(tl.random_rnn, 3, 4, 16, 1), TE, r"rng 必须是 np\.random\.Generator.*int"),
    # ---- core/qkv 与 lessons/geometry、lessons/library（第 3 章）
    ("qkv-x-list", lambda: qkv.qkv_projections([[1.0, 2.0, 3.0]], QW_Q, QW_K, QW_V), TypeError, r"x 必须是 NumPy 数组.*list"),
    ("qkv-x-1d", lambda: qkv.qkv_projections(np.ones(3), QW_Q, QW_K, QW_V), ValueError, r"x 至少要有 2 维.*shape=\(3,\)"),
    ("qkv-x-nan", lambda: qkv.qkv_projections(np.full((2, 3), np.nan), QW_Q, QW_K, QW_V), ValueError, r"x 含有 NaN"),
    ("qkv-w_q-rows", lambda: qkv.qkv_projections(QX, np.ones((4, 2)), QW_K, QW_V), ValueError,
     r"w_q 的形状应为 \(D, 输出维数\) = \(3, 任意\).*\(4, 2\).*D=3"),
    ("qkv-w_v-1d", lambda: qkv.qkv_projections(QX, QW_Q, QW_K, np.ones(3)), ValueError, r"w_v 的形状应为.*\(3,\)"),
    ("qkv-w_k-bool", lambda: qkv.qkv_projections(QX, QW_Q, np.ones((3, 2), bool), QW_V), TypeError, r"w_k 的 dtype.*bool"),
    ("qkv-d_k-mismatch", lambda: qkv.qkv_projections(QX, QW_Q, np.ones((3, 4)), QW_V), ValueError,
     r"w_q 与 w_k 的列数 \(d_k\) 必须相等.*w_q\.shape=\(3, 2\).*w_k\.shape=\(3, 4\)"),
    ("init-d_model-zero", lambda: qkv.init_qkv_weights(0, 2, np.random.default_rng()), ValueError, r"d_model 必须是正整数.*0"),
    ("init-d_k-float", lambda: qkv.init_qkv_weights(4, 2.0, np.random.default_rng()), TypeError, r"d_k 必须是正整数.*float"),
    ("init-d_v-negative", lambda: qkv.init_qkv_weights(4, 2, np.random.default_rng(), d_v=-1), ValueError,
     r"d_v 必须是正整数.*-1"),
    ("init-rng-int", lambda: qkv.init_qkv_weights(4, 2, 0), TypeError, r"rng 必须是 np\.random\.Generator.*int"),
    ("vec-length-negative", lambda: geometry.vector_2d(-1.0, 0), ValueError, r"length 不能是负数.*-1\.0"),
    ("vec-length-bool", lambda: geometry.vector_2d(True, 0), TypeError, r"length 必须是实数.*bool"),
    ("vec-angle-str", lambda: geometry.vector_2d(1.0, "30"), TypeError, r"angle_deg 必须是实数.*字符串 '30'"),
    ("vec-angle-inf", lambda: geometry.vector_2d(1.0, float("inf")), ValueError, r"angle_deg 必须是有限实数.*inf"),
    ("key-k-1d", lambda: geometry.with_key_length(np.ones(3), 0, 1.0), ValueError, r"k 至少要有 2 维"),
    ("key-k-3d", lambda: geometry.with_key_length(np.ones((2, 2, 2)), 0, 1.0), ValueError,
     r"k 的形状应为 \(任意, 任意\).*\(2, 2, 2\)"),
    ("key-index-float", lambda: geometry.with_key_length(np.ones((2, 2)), 1.0, 1.0), TypeError, r"index 必须是整数.*float"),
    ("key-index-range", lambda: geometry.with_key_length(np.ones((2, 2)), 2, 1.0), ValueError, r"index=2 越界.*S=2.*\[0, 1\]"),
    ("key-index-negative", lambda: geometry.with_key_length(np.ones((2, 2)), -1, 1.0), ValueError, r"index=-1 越界"),
    ("key-zero-row", lambda: geometry.with_key_length(np.array([[0.0, 0.0], [1.0, 0.0]]), 0, 1.0), ValueError,
     r"第 0 个键是零向量"),
    ("key-length-zero", lambda: geometry.with_key_length(np.ones((2, 2)), 0, 0.0), ValueError, r"length 必须是有限的正实数.*0\.0"),
    ("key-length-str", lambda: geometry.with_key_length(np.ones((2, 2)), 0, "2"), TypeError, r"length 必须是正实数.*字符串"),
    ("readout-features-1d", lambda: library.linear_readout(np.ones(4), np.arange(4.0)), ValueError,
     r"features 的形状应为 \(任意, 任意\).*\(4,\)"),
    ("readout-target-length", lambda: library.linear_readout(np.ones((4, 1)), np.arange(3.0)), ValueError,
     r"target 的形状应为 \(4,?\).*\(3,\)"),
    ("readout-one-sample", lambda: library.linear_readout(np.ones((1, 1)), np.ones(1)), ValueError, r"至少要有 2 个样本.*N=1"),
    ("readout-constant-target", lambda: library.linear_readout(np.eye(3), np.ones(3)), ValueError, r"target 的所有值都相同"),
    ("readout-target-list", lambda: library.linear_readout(np.eye(3), [1.0, 2.0, 3.0]), TypeError, r"target 必须是 NumPy 数组"),
    ("lib-one-shelf", lambda: library.library_experiment(1, 4, np.random.default_rng()), ValueError, r"num_shelves 至少为 2.*1"),
    ("lib-books-zero", lambda: library.library_experiment(10, 0, np.random.default_rng()), ValueError, r"num_books 必须是正整数"),
    ("lib-sharpness", lambda: library.library_experiment(10, 4, np.random.default_rng(), sharpness=-1.0), ValueError,
     r"sharpness 必须是有限的正实数.*-1\.0"),
    ("lib-rng", lambda: library.library_experiment(10, 4, np.random.RandomState(0)), TypeError, r"rng 必须是.*RandomState"),

    # ================================================================ lessons
    # ---- toy_sentences（第 2 章）
    ("toy-name-unknown", lambda: toy.toy_sentence("cat"), ValueError, r"name='cat' 不存在.*'animal'、'apple'"),
    ("toy-name-int", lambda: toy.toy_sentence(3), TypeError, r"name 必须是字符串.*int 3.*'animal'"),
    ("toy-variant-unknown", lambda: toy.toy_sentence("animal", "sleepy"), ValueError,
     r"variant='sleepy' 不存在.*'tired'、'hungry'、'wide'、'crowded'"),
    ("toy-variant-other-sentence", lambda: toy.toy_sentence("apple", "tired"), ValueError, r"variant='tired' 不存在.*'她饿了'"),
    ("toy-variant_names-unknown", lambda: toy.variant_names("dog"), ValueError, r"name='dog' 不存在"),
    ("toy-embed-unknown-word", lambda: toy.embed(["the", "cat"]), ValueError, r"tokens 里的词='cat' 不存在.*'animal'"),
    ("toy-embed-empty", lambda: toy.embed([]), ValueError, r"tokens 不能为空"),
    ("toy-embed-string", lambda: toy.embed("the animal"), TypeError, r"tokens 必须是字符串的列表或元组.*字符串 'the animal'"),
    ("toy-embed-non-string", lambda: toy.embed(["the", 1]), TypeError, r"tokens 必须是字符串的列表或元组.*list"),
    ("toy-turn-3", lambda: toy.turn_weights(3), ValueError, r"turn 只能是 1（找线索）或 2（找指代），收到的是 3"),
    ("toy-turn-0", lambda: toy.turn_weights(0), ValueError, r"turn 必须是正整数.*0"),
    ("toy-turn-string", lambda: toy.turn_weights("1"), TypeError, r"turn 必须是正整数.*'1'"),
    ("toy-turn-bool", lambda: toy.turn_weights(True), TypeError, r"turn 必须是正整数.*bool"),
    ("toy-round-x-shape", lambda: toy.attention_turn(np.ones((3, 5)), 1), ValueError, r"x 的形状应为 \(任意, 12\).*\(3, 5\)"),
    ("toy-round-x-list", lambda: toy.attention_turn([[0.0] * D], 1), TypeError, r"x 必须是 NumPy 数组.*list"),
    ("toy-discuss-nan", lambda: toy.discuss(np.full((2, D), np.nan)), ValueError, r"x 含有 NaN"),
    ("toy-explain-shape", lambda: toy.explain_matrix(np.eye(3)), ValueError, r"w 的形状应为 \(12, 12\).*\(3, 3\)"),
    ("toy-explorer-unknown", lambda: ch02.attention_explorer("cat"), ValueError, r"sentence='cat' 不存在"),
    ("toy-feature-heatmap-shape", lambda: ch02.feature_heatmap(np.ones((2, 3)), ["a", "b"]), ValueError, r"^x 的形状 \(2, 3\).*\(2, 12\)"),
    # ---- saturation（其余的行在上面 similarity / saturation 一节）
    ("variance-d_k-0", call(saturation.dot_product_variance, 0, 10, RNG), VE, r"d_k 必须是正整数.*0"),
    ("saturation-num_keys-0", call(saturation.saturation_demo, 4, 0, RNG), VE, r"num_keys 必须是正整数.*0"),
    ("saturation-rng", call(saturation.saturation_demo, 4, 8, 0), TE, r"rng 必须是 np\.random\.Generator.*int"),
    # ---- show
    ("labelled-length", call(show.labelled, ["a"], np.ones(2)), VE, r"values 的形状应为 \(1,?\).*\(2,\)"),
    ("labelled-list", call(show.labelled, ["a"], [1.0]), TE, r"values 必须是 NumPy 数组.*list"),
    # ================================================================ figures（可交互图的参数）
    ("memory-T-0", call(lambda: tl.explore.rnn_memory_decay(T=0)), VE, r"T 必须是正整数.*0"),
    ("queue-T_max-0", call(lambda: tl.explore.queue_vs_direct(T_max=0)), VE, r"^T_max 必须是正整数.*0"),
    ("pronoun_shift-unknown", call(lambda: tl.explore.pronoun_shift("cat")), VE, r"sentence='cat' 不存在"),
    ("scaling_saturation-num_keys-0", call(lambda: tl.explore.scaling_saturation(num_keys=0)), VE,
     r"num_keys 必须是正整数.*0"),
    ("scaling_saturation-num_keys-float", call(lambda: tl.explore.scaling_saturation(num_keys=2.5)), TE,
     r"num_keys 必须是正整数.*float"),
    ("scaling_saturation-seed-negative", call(lambda: tl.explore.scaling_saturation(seed=-1)), VE,
     r"seed 必须是非负整数.*-1"),
    ("scaling_saturation-seed-string", call(lambda: tl.explore.scaling_saturation(seed="a")), TE,
     r"seed 必须是非负整数.*字符串"),
    ("readout_scatter-length", call(lambda: tl.explore.readout_scatter(np.ones(3), {"a": np.ones(2)}, {"a": 0.1}, "t")),
     VE, r"target 与 prediction 必须是同样长的一维数组.*\(3,\).*\(2,\)"),
    # ================================================================ widgets：滑块的网格
    ("slider-one-value", call(Slider, "d_k", (1,)), VE, r"滑块 d_k 至少要有 2 个取值"),
    ("slider-no-values", call(Slider, "d_k", ()), VE, r"滑块 d_k 至少要有 2 个取值"),
    ("slider-default-not-in-grid", call(Slider, "d_k", (1, 2, 4), default=3), VE, r"默认值 3 不在网格"),
    # ================================================================ 改了名的旧模块：报错指出新家
    ("renamed-chapter_rnn", lambda: tl.chapter_rnn, AE, r"tl\.chapter_rnn 已经改名或搬家.*tl\.random_rnn"),
    ("renamed-decode", lambda: tl.decode_multiply_adds, AE, r"tl\.decode_multiply_adds 已经改名或搬家.*tl\.costs\.decode_multiply_adds"),
    ("renamed-kv-bytes", lambda: tl.kv_cache_bytes, AE, r"tl\.kv_cache_bytes 已经改名或搬家.*tl\.costs\.kv_cache_bytes"),
    ("unknown-attribute", lambda: tl.no_such_thing, AE, r"transformer_lab 没有属性 'no_such_thing'"),
    # ================================================================ issue 8：有限输入的溢出、子类、滑块取值
    ("sdpa-overflow-1e200", sdpa(q=np.full((1, 2), 1e200), k=np.full((1, 2), 1e200), v=np.ones((1, 1))), VE,
     r"注意力分数 q·kᵀ × scale 溢出.*inf"),
    ("sdpa-overflow-float32", sdpa(q=np.full((1, 2), 1e20, np.float32), k=np.full((1, 2), 1e20, np.float32),
                                   v=np.ones((1, 1), np.float32)), VE, r"q·kᵀ × scale 溢出.*float32"),
    ("mha-overflow-1e160", mha(x=np.full((2, 4), 1e160)), VE, r"\(x @ w_q\)·\(x @ w_k\)ᵀ × scale 溢出"),
    ("mha-projection-overflow", mha(x=np.full((2, 4), 1e300), w_q=np.full((4, 4), 1e10)), VE, r"查询投影 x @ w_q 溢出"),
    ("sdpa-masked-array", sdpa(q=np.ma.array(np.ones((2, 4)))), TE, r"q 是掩码数组.*q\.filled"),
    ("mask-masked-array", sdpa(mask=np.ma.array(np.ones((3, 5), bool))), TE, r"mask 是掩码数组.*mask\.filled"),
    ("softmax-masked-array", call(tl.softmax, np.ma.array([1.0, 2.0])), TE, r"x 是掩码数组.*x\.filled"),
    ("dot-overflow", call(core_similarity.dot, np.full(3, 1e200), np.full(3, 1e200)), VE, r"点积 a·b 溢出"),
    ("qkv-overflow", call(qkv.qkv_projections, np.full((1, 3), 1e300), np.full((3, 2), 1e10), np.eye(3)[:, :2],
                          np.eye(3)), VE, r"x @ w_q 溢出"),
    ("rnn-linear-overflow", call(rnn.input_jacobians, np.ones((40, 1)), np.ones((1, 1)), np.full((1, 1), 1e10),
                                 linear=True), VE, r"linear=True.*溢出"),
    ("rnn-linear-not-bool", call(rnn.input_jacobians, JX, WX, WH, linear="no"), TE, r"linear 必须是 bool.*'no'"),
    # ---- 可交互图：滑块取值由 Explorable 统一检查
    ("queue-T-65", call(lambda: tl.explore.queue_vs_direct().update(T=65)), VE, r"滑块 T=65 超出范围.*\[4, 64\]"),
    ("queue-T_max-2", call(lambda: tl.explore.queue_vs_direct(T_max=2)), VE, r"^T_max 必须在 \[8, 256\] 之内.*2"),
    ("queue-gain-huge", call(lambda: tl.explore.queue_vs_direct(gain=1e6)), VE, r"^gain 必须在 \(0, 4\] 之内"),
    ("queue-seed-negative", call(lambda: tl.explore.queue_vs_direct(seed=-1)), VE, r"^seed 必须是非负整数.*-1"),
    ("rnn-decay-gain-1e6", call(lambda: tl.explore.rnn_memory_decay().update(gain=1e6, input_scale=0.5)), VE,
     r"滑块 gain=1000000\.0 超出范围.*\[0\.5, 2\.0\]"),
    ("rnn-decay-T-huge", call(lambda: tl.explore.rnn_memory_decay(T=10**6)), VE, r"^T 必须在 \[2, 256\] 之内"),
    ("rnn-decay-seed-str", call(lambda: tl.explore.rnn_memory_decay(seed="a")), TE, r"^seed 必须是非负整数.*'a'"),
    ("scaling-d_k-float", call(lambda: tl.explore.scaling_saturation().update(d_k=2.7)), TE, r"滑块 d_k 只取整数.*2\.7"),
    ("scaling-d_k-above-range", call(lambda: tl.explore.scaling_saturation().update(d_k=1024)), VE,
     r"滑块 d_k=1024 超出范围.*\[1, 512\]"),
    ("scaling-d_k-bool", call(lambda: tl.explore.scaling_saturation().update(d_k=True)), TE, r"滑块 d_k 只取整数.*True"),
    ("explorer-query-unknown", call(lambda: tl.explore.attention_explorer().update(query="nope", turn="第 1 轮")), VE,
     r"滑块 query='nope' 不在它的取值里"),
    ("explorer-missing-slider", call(lambda: tl.explore.attention_explorer().update(query="it")), TE, r"缺少 turn"),
    ("explorer-extra-slider", call(lambda: tl.explore.dot_vs_cosine().update(angle=60, length=1.5, d=1)), TE,
     r"没有名为 d 的滑块"),
    ("dot-cosine-angle-nan", call(lambda: tl.explore.dot_vs_cosine().update(angle=float("nan"), length=1.5)), TE,
     r"滑块 angle 只取整数.*nan"),
    ("dot-cosine-length-nan", call(lambda: tl.explore.dot_vs_cosine().update(angle=60, length=float("nan"))), VE,
     r"滑块 length=nan 超出范围"),
    ("dot-cosine-length-str", call(lambda: tl.explore.dot_vs_cosine().update(angle=60, length="1")), TE,
     r"滑块 length 只取实数.*'1'"),
    ("explorer-turn-int", call(lambda: tl.explore.attention_explorer().update(query="it", turn=1)), VE,
     r"滑块 turn=1 不在它的取值里"),
    ("explorer-sentence-bogus", call(lambda: tl.explore.attention_explorer(sentence="bogus")), VE,
     r"^sentence='bogus' 不存在"),
    ("feature-heatmap-names-x", call(lambda: tl.explore.feature_heatmap(np.ones((2, 3)), ["a", "b"])), VE, r"^x 的形状"),
    # ---- toy_sentences.sentence_text
    ("sentence_text-ints", call(toy.sentence_text, [1, 2]), TE, r"tokens 必须是字符串的列表或元组"),
    ("sentence_text-empty", call(toy.sentence_text, ()), VE, r"tokens 不能为空"),
    ("sentence_text-str", call(toy.sentence_text, "abc"), TE, r"tokens 必须是字符串的列表或元组.*'abc'"),
    # ---- 画图
    ("line_plot-length", call(lambda: tl.plotting.line_plot(np.ones(3), {"a": np.ones(2)})), VE,
     r"ys\['a'\] 的长度 2 与 x 的长度 3 不符"),
    ("line_plot-nan", call(lambda: tl.plotting.line_plot(np.arange(3.0), {"a": np.array([1, np.nan, 2])})), VE,
     r"ys\['a'\] 含有 NaN"),
    ("line_plot-log-zero", call(lambda: tl.plotting.line_plot(np.arange(3.0), {"a": np.ones(3)}, xscale="log")), VE,
     r"xscale='log' 时数值必须都 > 0"),
    ("line_plot-ys-list", call(lambda: tl.plotting.line_plot(np.arange(3.0), [np.ones(3)])), TE, r"ys 必须是非空的字典"),
    ("weight_bars-nan", call(lambda: tl.plotting.weight_bars(np.array([0.5, np.nan]), ["a", "b"])), VE,
     r"values 含有 NaN"),
    ("weight_bars-label-int", call(lambda: tl.plotting.weight_bars(np.ones(2), ["a", 2])), TE, r"labels\[1\] 必须是字符串"),
    ("heatmap-inf", call(lambda: tl.plotting.attention_heatmap(np.array([[np.inf]]), ["a"])), VE, r"weights 含有 inf"),
    ("heatmap-vmax-0", call(lambda: tl.plotting.attention_heatmap(np.ones((1, 1)), ["a"], vmax=0)), VE,
     r"vmax 必须是有限的正实数"),
    ("scatter-nan", call(lambda: tl.plotting.scatter_vs_target(np.ones(2), np.array([1.0, np.nan]))), VE,
     r"prediction 含有 NaN"),
    # ---- lessons：大小上限、开关、名字（issue 8 之外自己找到的）
    ("key-length-f32-overflow", call(geometry.with_key_length, np.ones((2, 2), np.float32), 0, 1e39), VE,
     r"新的键 k\[0\] = 方向 × length 溢出"),
    ("library-too-many-books", call(library.library_experiment, 10**9, 10**9, RNG), VE,
     r"num_shelves × num_books=1000000000000000000 太大.*上限是 25000000"),
    ("variance-too-many-samples", call(saturation.dot_product_variance, 10**6, 10**6, RNG), VE,
     r"num_samples × d_k=1000000000000 太大"),
    ("saturation-demo-too-big", call(saturation.saturation_demo, 10**12, 8, RNG), VE, r"num_keys × d_k=8000000000000 太大"),
    ("labelled-digits-negative", call(show.labelled, ["a"], np.ones(1), digits=-1), VE, r"digits 必须是非负整数.*-1"),
    ("labelled-digits-huge", call(show.labelled, ["a"], np.ones(1), digits=100), VE, r"digits=100 太大"),
    ("labelled-labels-str", call(show.labelled, "a", np.ones(1)), TE, r"labels 必须是字符串的列表或元组.*'a'"),
    ("labelled-skip-zeros-str", call(show.labelled, ["a"], np.ones(1), skip_zeros="no"), TE, r"skip_zeros 必须是 bool"),
    ("graph-parents-str", call(graph.sequential_steps, {"a": "b"}), TE, r"graph 的每一项必须是.*'a': 'b'"),
    ("graph-rnn-T-huge", call(graph.rnn_dependencies, 10**9), VE, r"T=1000000000 太大.*100000"),
    ("graph-attention-T-huge", call(graph.attention_dependencies, 10**6), VE, r"T=1000000 太大.*T² 条边"),
    ("graph-causal-str", call(graph.attention_dependencies, 3, causal="no"), TE, r"causal 必须是 bool.*'no'"),
    ("graph-source-int", call(graph.path_length, graph.rnn_dependencies(3), 1, "h3"), TE, r"source 必须是结点名.*int 1"),
    # ---- 大小上限：耗尽内存之前给出中文报错
    ("causal-mask-too-big", call(tl.causal_mask, 10**6), VE, r"T × T=1000000000000 太大.*T² 个元素"),
    ("init-qkv-too-big", call(qkv.init_qkv_weights, 10**5, 10**5, RNG), VE, r"d_model × max\(d_k, d_v\)=10000000000 太大"),
    ("orthogonal-too-big", call(rnn.orthogonal_recurrent_weights, 10**5, 1.0, RNG), VE, r"d_h × d_h=10000000000 太大"),
    ("random-rnn-too-big", call(rnn.random_rnn, 10**9, 4, 16, RNG), VE, r"最大的数组=4000000000 太大"),
    ("jacobians-too-big", call(rnn.input_jacobians, np.ones((3000, 4)), np.ones((4, 16)), np.eye(16)), VE,
     r"T² × d_h × d_in=576000000 太大"),
    ("scaling-num-keys-huge", call(lambda: tl.explore.scaling_saturation(num_keys=10**4)), VE, r"num_keys=10000 太大"),
    # ---- 引擎：滑块与替代文字模板在构造时检查
    ("slider-continuous-strings", call(Slider, "a", ("x", "y"), continuous=True), TE, r"连续滑块 a 的取值必须都是数"),
    ("slider-name-not-identifier", call(Slider, "a b", (1, 2)), TE, r"滑块的名字必须是合法的参数名.*'a b'"),
    ("readout-errors-missing", call(lambda: tl.explore.readout_scatter(np.ones(3), {"a": np.ones(3)}, {}, "t")), VE,
     r"errors 里没有 'a'"),
    ("readout-predictions-list", call(lambda: tl.explore.readout_scatter(np.ones(3), [np.ones(3)], {}, "t")), TE,
     r"predictions 必须是有 1 到 6 项的字典"),
    ("readout-nan", call(lambda: tl.explore.readout_scatter(np.ones(3), {"a": np.array([1, np.nan, 1])}, {"a": 0.1},
                                                            "t")), VE, r"prediction 含有 NaN"),
    ("four-steps-shapes-tokens", call(lambda: tl.explore.four_steps_shapes(Q, K, V, ["a"], list("abcde"))), VE,
     r"query_tokens 有 1 个词，应该等于 q 的行数 T = 3"),
    ("four-steps-shapes-3d", call(lambda: tl.explore.four_steps_shapes(Q[None], K, V, list("abc"), list("abcde"))), VE,
     r"q 必须是二维数组.*shape=\(1, 3, 4\)"),
    ("four-steps-shapes-too-big", call(lambda: tl.explore.four_steps_shapes(np.ones((13, 4)), K, V, ["a"] * 13,
                                                                            list("abcde"))), VE, r"q 的每一维最多 12.*\(13, 4\)"),
    # ---------------------------------------------------------------- 第 5、7、8 章的 core 函数：溢出也要有话直说
    ("tiled-overflow-1e200", call(tl.tiled_attention, np.full((2, 2), 1e200), np.full((2, 2), 1e200), np.ones((2, 1))),
     VE, r"分块注意力的输出.*溢出"),
    ("linear_bw-overflow", call(tl.linear_backward, np.full((2, 2), 1e200), np.full((2, 2), 1e200),
                                np.full((2, 2), 1e200)), VE, r"梯度 grad_x 溢出"),
    ("ffn-overflow", call(tl.feed_forward, np.full((1, 2), 1e200), np.full((2, 2), 1e200), np.zeros(2), np.eye(2),
                          np.zeros(2)), VE, r"前馈网络的隐藏层 x W_1 \+ b_1 溢出"),
    ("ffn-out-overflow", call(tl.feed_forward, np.ones((1, 2)), np.eye(2), np.zeros(2), np.full((2, 2), 1e308),
                              np.zeros(2)), VE, r"前馈网络的输出.*溢出"),
    ("ce-overflow", call(tl.cross_entropy, np.array([[1e308, -1e308]]), np.array([1])), VE, r"交叉熵损失 溢出.*低了超过"),
    # 全书自测（题的格式、tl.self_test、小部件）的报错在 tests/quiz/ 各自的 ERROR_CASES 里
    # ================================================================ 第 8 章
    ("encoder_backward-grad_out-shape", call(tl.encoder_layer_backward, X, tl.init_encoder_params(4, 8, RNG), np.ones((3, 5)), 2),
     VE, r"grad_out 的形状应为 \(3, 4\)，收到的是 \(3, 5\)"),
    ("encoder_backward-missing-key", call(tl.encoder_layer_backward, X, {"w_q": W}, X, 2), VE, r"params 的键不对：缺少 w_k"),
    ("reversal-vocab-too-big", call(tiny_transformer.reversal_task, 3, RNG, vocab_size=9), VE, r"vocab_size=9 太大.*上限是 8"),
    ("reversal-train-lr", call(tiny_transformer.train, RNG, lr=-1.0), VE, r"lr 必须是有限的正实数.*-1\.0"),
    ("reversal-train-diverges", call(tiny_transformer.train, np.random.default_rng(0), steps=30, lr=10.0), VE,
     r"训练发散了.*lr=10\.0"),
    ("reversal-params-keys", call(tiny_transformer.forward, {"embed": W}, np.array([[0, 1]])), VE,
     r"params 必须是恰好含这 19 个键的字典.*init_model"),
    ("adam-keys", call(tl.optim.adam, {"w": B}, {"v": B}, {}, 0.1), VE, r"grads 的键必须与 params 相同"),
    ("deep_stack-mode", call(deep_stack.stack_profile, 2, "residual", RNG), VE, r"mode='residual' 不存在.*pre-LN"),
    ("deep_stack-heads", call(deep_stack.stack_profile, 2, "pre-LN", RNG, d_model=15), VE, r"d_model=15 必须能被 num_heads=2 整除"),
    ("layer_story-variant", call(layer_story.story_steps, "她很甜"), VE, r"variant='她很甜' 不存在.*她饿了"),
]


@pytest.mark.parametrize("fn, exc_type, pattern", [c[1:] for c in ERROR_CASES], ids=[c[0] for c in ERROR_CASES])
def test_documented_error(fn, exc_type, pattern):
    check_error(fn, exc_type, pattern)


def test_case_ids_are_unique():
    ids = [c[0] for c in ERROR_CASES]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


def test_check_error_can_fail():
    """反证：英文信息、错的类型、子类、不匹配的正则，check_error 都必须判为失败。"""
    def raise_(exc):
        def fn():
            raise exc
        return fn

    for fn, exc_type, pattern in [
        (raise_(ValueError("x must be positive")), ValueError, r"x"),  # 不是中文
        (raise_(TypeError("x 必须是正整数")), ValueError, r"x"),  # 类型不对
        (raise_(np.exceptions.AxisError("axis 越界")), ValueError, r"axis"),  # 子类也不行
        (raise_(ValueError("x 必须是正整数")), ValueError, r"y 必须"),  # 正则不匹配
        (lambda: None, ValueError, r"x"),  # 根本没报错
    ]:
        with pytest.raises((AssertionError, pytest.fail.Exception, TypeError, ValueError)):
            check_error(fn, exc_type, pattern)
