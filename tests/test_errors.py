"""坏输入一张表：每行 = (id, 调用, 期望的异常类型, 中文报错必须匹配的正则)。

正则要求报错信息写出参数名 (q、mask、num_heads ...) 和收到的值 (通常是 shape)。
"""

import re

import numpy as np
import pytest

import transformer_lab as tl
from transformer_lab import scaling, similarity

Q, K, V = np.ones((3, 4)), np.ones((5, 4)), np.ones((5, 2))  # (T, d_k), (S, d_k), (S, d_v)
X, W, B = np.ones((3, 4)), np.eye(4), np.zeros(4)  # (T, D), (D, D), (D,)


def sdpa(**kw):
    args = dict(q=Q, k=K, v=V) | kw
    return lambda: tl.scaled_dot_product_attention(**args)


def mha(**kw):
    args = dict(x=X, w_q=W, w_k=W, w_v=W, w_o=W, num_heads=2) | kw
    return lambda: tl.multi_head_attention(**args)


def rnn(**kw):
    args = dict(x=np.ones((4, 2)), w_xh=np.ones((2, 3)), w_hh=np.eye(3)) | kw
    return lambda: tl.rnn_forward(**args)


def call(fn, *a, **kw):
    return lambda: fn(*a, **kw)


NAN, INF = np.array([[1.0, np.nan, 0, 0]] * 3), np.array([[1.0, np.inf, 0, 0]] * 5)
ROW1_FALSE = np.array([[True] * 5, [False] * 5, [True] * 5])
VE, TE = ValueError, TypeError

CASES = [
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
    ("rnn-w_hh-not-square", rnn(w_hh=np.ones((3, 2))), VE, r"w_hh 的形状应为 \(3, 3\).*\(3, 2\)"),
    ("rnn-x-1d", rnn(x=np.ones(2)), VE, r"x 至少要有 2 维.*shape=\(2,\)"),
    ("rnn-x-3d", rnn(x=np.ones((1, 4, 2))), VE, r"x 的形状应为 \(任意, 任意\).*\(1, 4, 2\)"),
    ("rnn-w_xh-rows", rnn(w_xh=np.ones((3, 3))), VE, r"w_xh 的形状应为 \(2, 任意\).*\(3, 3\).*d_in=2"),
    ("rnn-h0-length", rnn(h0=np.zeros(2)), VE, r"h0 的形状应为 \(3,?\).*\(2,\)"),
    ("rnn-b_h-length", rnn(b_h=np.zeros(4)), VE, r"b_h 的形状应为 \(3,?\).*\(4,\)"),
    ("rnn-b_h-expected-shape-is-a-tuple", rnn(b_h=np.zeros(4)), VE, r"b_h 的形状应为 \(3,\)"),
    # ---- similarity / scaling
    ("dot-length-mismatch", call(similarity.dot, np.ones(2), np.ones(3)), VE, r"a\.shape=\(2,\).*b\.shape=\(3,\)"),
    ("dot-list", call(similarity.dot, [3, 4], np.ones(2)), TE, r"a 必须是 NumPy 数组.*list"),
    ("cosine-zero-vector", call(similarity.cosine_similarity, np.ones(2), np.zeros(2)), VE, r"b 在位置 .* 是长度为 0 的向量.*零向量"),
    ("jacobian-negative", call(scaling.softmax_jacobian, np.array([1.5, -0.5])), VE, r"p 必须是一组概率"),
    ("jacobian-shows-received-sum", call(scaling.softmax_jacobian, np.array([0.5, 0.2])), VE, r"p 必须是一组概率.*0\.7"),
    ("variance-rng-int", call(scaling.dot_product_variance, 4, 10, 0), TE, r"rng 必须是 np\.random\.Generator.*int"),
    ("variance-num_samples-1", call(scaling.dot_product_variance, 4, 1, np.random.default_rng(0)), VE,
     r"num_samples 至少为 2.*1"),
    ("saturation-d_k-0", call(scaling.saturation_demo, 0, 8, np.random.default_rng(0)), VE, r"d_k 必须是正整数.*0"),
]


PARAMS = [pytest.param(*c, id=c[0]) for c in CASES]


@pytest.mark.parametrize("case_id, fn, exc, pattern", PARAMS)
def test_bad_input_raises_clear_chinese_error(case_id, fn, exc, pattern):
    with pytest.raises(exc, match=pattern) as info:
        fn()
    assert type(info.value) is exc  # 恰好是这个类型（例如不是 numpy 内部抛出的 AxisError 之类的子类）


def test_every_error_message_is_chinese():
    for case_id, fn, exc, _ in CASES:
        with pytest.raises(exc) as info:
            fn()
        assert re.search(r"[\u4e00-\u9fff]", str(info.value)), f"{case_id}: {info.value}"
