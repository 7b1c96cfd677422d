"""core/linear.py：线性层 y = x @ w + b 的反向 linear_backward——对中心差分、dtype，以及文档里写明的报错。"""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import transformer_lab as tl
from transformer_lab.core.linear import linear_backward

from helpers.errors import call, error_table_test
from helpers.gradcheck import assert_gradients_close, numeric_gradient


@given(st.integers(1, 4), st.integers(1, 4), st.lists(st.integers(1, 3), max_size=2), st.integers(0, 2**32 - 1))
def test_linear_backward_matches_finite_differences(d_in, d_out, lead, seed):
    rng = np.random.default_rng(seed)
    arrays = dict(x=rng.normal(size=(*lead, d_in)), w=rng.normal(size=(d_in, d_out)), b=rng.normal(size=d_out))
    R = rng.normal(size=(*lead, d_out))

    def loss(x, w, b):
        return float(np.sum((x @ w + b) * R))

    grads = linear_backward(arrays["x"], arrays["w"], R)
    for name, g in zip(("x", "w", "b"), grads):
        numeric = numeric_gradient(lambda a, name=name: loss(**(arrays | {name: a})), arrays[name], h=1e-5)
        assert_gradients_close(g, numeric, floor=1e-2, name=name)


def test_float32_preserved():
    rng = np.random.default_rng(4)
    x, w, G = (rng.normal(size=s).astype(np.float32) for s in [(3, 4), (4, 4), (3, 4)])
    assert all(g.dtype == np.float32 for g in linear_backward(x, w, G))


X, W = np.ones((3, 4)), np.eye(4)  # (T, D_in), (D_in, D_out)
NAN = np.array([[1.0, np.nan, 0, 0]] * 3)
VE = ValueError
ERROR_CASES = [
    ("linear_bw-w-rows", call(linear_backward, X, np.ones((3, 2)), np.ones((3, 2))), VE,
     r"w 的形状应为 \(4, 任意\).*\(3, 2\)"),
    ("linear_bw-grad_y-shape", call(linear_backward, X, np.ones((4, 2)), np.ones((3, 4))), VE,
     r"grad_y 的形状应为 \(3, 2\).*\(3, 4\)"),
    ("linear_bw-x-nan", call(linear_backward, NAN, W, X), VE, r"x 含有 NaN"),
    ("linear_bw-overflow", call(tl.linear_backward, np.full((2, 2), 1e200), np.full((2, 2), 1e200),
                                np.full((2, 2), 1e200)), VE, r"梯度 grad_x 溢出"),
]
test_documented_errors = error_table_test(ERROR_CASES)
