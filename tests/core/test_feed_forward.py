"""core/feed_forward.py：逐位置前馈网络 feed_forward 与它的反向 feed_forward_backward。

参考实现 ref_feed_forward（tests/helpers/reference.py）逐元素求和；反向与中心差分比较（float64，相对误差 ≤ 1e-6）；
以及文档里写明的报错（含有限输入的溢出）。
"""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import transformer_lab as tl
from transformer_lab.core.feed_forward import feed_forward, feed_forward_backward

from helpers.errors import call, error_table_test
from helpers.gradcheck import assert_gradients_close, numeric_gradient
from helpers.reference import ref_feed_forward

shapes = st.tuples(st.lists(st.integers(1, 3), min_size=0, max_size=2), st.integers(2, 7))


def test_feed_forward_by_hand():
    # x W_1 + b_1 = [1 + 0.5, -2 + 0.5] = [1.5, -1.5] → ReLU [1.5, 0] → 1.5 · [2, 0] + [0, 1] = [3, 1]
    out = feed_forward(np.array([[1.0, -2.0]]), np.eye(2), np.full(2, 0.5), np.array([[2.0, 0.0], [3.0, 1.0]]),
                       np.array([0.0, 1.0]))
    np.testing.assert_allclose(out, [[3.0, 1.0]])


@given(shapes, st.integers(0, 10**6))
def test_feed_forward_matches_loop_and_acts_per_position(shape, seed):
    lead, D = shape
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(*lead, D))
    w_1, b_1, w_2, b_2 = rng.normal(size=(D, 3)), rng.normal(size=3), rng.normal(size=(3, D)), rng.normal(size=D)
    out = feed_forward(x, w_1, b_1, w_2, b_2)
    np.testing.assert_allclose(out, ref_feed_forward(x, w_1, b_1, w_2, b_2), rtol=1e-10, atol=1e-12)
    if lead:  # 逐位置：只喂第一个位置，结果相同
        first = (0,) * len(lead)
        np.testing.assert_allclose(feed_forward(x[first], w_1, b_1, w_2, b_2), out[first])


@given(shapes, st.integers(1, 6), st.integers(0, 10**6))
def test_feed_forward_backward_matches_finite_differences(shape, d_ff, seed):
    lead, D = shape
    rng = np.random.default_rng(seed)
    args = {"x": rng.normal(size=(*lead, D)), "w_1": rng.normal(size=(D, d_ff)), "b_1": rng.normal(size=d_ff),
            "w_2": rng.normal(size=(d_ff, D)), "b_2": rng.normal(size=D)}
    g = rng.normal(size=(*lead, D))
    grads = feed_forward_backward(**args, grad_out=g)
    assert set(grads) == set(args)
    for name, value in args.items():
        f = lambda a, name=name: np.sum(feed_forward(**(args | {name: a})) * g)  # noqa: E731
        assert grads[name].shape == value.shape
        assert_gradients_close(grads[name], numeric_gradient(f, value), name=name)


def test_float32_is_preserved():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 4, 8)).astype(np.float32)
    ffn = [rng.normal(size=s).astype(np.float32) for s in [(8, 12), 12, (12, 8), 8]]
    results = [feed_forward(x, *ffn), *feed_forward_backward(x, *ffn, x).values()]
    assert [r.dtype for r in results] == [np.float32] * len(results)


def test_inputs_are_not_modified():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(4, 8))
    ffn = [rng.normal(size=s) for s in [(8, 12), 12, (12, 8), 8]]
    saved = [a.copy() for a in (x, *ffn)]
    feed_forward(x, *ffn)
    feed_forward_backward(x, *ffn, x)
    for a, b in zip((x, *ffn), saved):
        np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------- 坏输入

X = np.ones((3, 4))
W_1, B_1, W_2, B_2 = np.ones((4, 8)), np.zeros(8), np.ones((8, 4)), np.zeros(4)  # D = 4, d_ff = 8
VE = ValueError
ERROR_CASES = [
    ("ffn-w_1-rows", call(feed_forward, X, np.ones((3, 8)), np.zeros(8), np.ones((8, 4)), np.zeros(4)), VE,
     r"w_1 的形状应为 \(4, 任意\)，收到的是 \(3, 8\)"),
    ("ffn-b_1-length", call(feed_forward, X, np.ones((4, 8)), np.zeros(4), np.ones((8, 4)), np.zeros(4)), VE,
     r"b_1 的形状应为 \(8,\)，收到的是 \(4,\).*d_ff=8"),
    ("ffn-overflow", call(tl.feed_forward, np.full((1, 2), 1e200), np.full((2, 2), 1e200), np.zeros(2), np.eye(2),
                          np.zeros(2)), VE, r"前馈网络的隐藏层 x W_1 \+ b_1 溢出"),
    ("ffn-out-overflow", call(tl.feed_forward, np.ones((1, 2)), np.eye(2), np.zeros(2), np.full((2, 2), 1e308),
                              np.zeros(2)), VE, r"前馈网络的输出.*溢出"),
    ("ffn-backward-grad_out-shape", call(feed_forward_backward, X, W_1, B_1, W_2, B_2, np.ones((2, 4))), VE,
     r"grad_out 的形状应为 \(3, 4\)，收到的是 \(2, 4\)"),
    ("ffn_bw-grad-overflow", call(feed_forward_backward, X, np.ones((4, 8)), np.zeros(8), np.full((8, 4), 1e200), np.zeros(4),
                                  np.full((3, 4), 1e200)), VE, r"feed_forward_backward 的梯度 .* 溢出"),
]
test_documented_errors = error_table_test(ERROR_CASES)
