"""眼镜是练出来的：梯度对照中心差分；训练后注意力与设计的目标一致；学到的分数与设计的只差每行一个常数。"""

import numpy as np
import pytest

import transformer_lab as tl
from transformer_lab.lessons.learned_glasses import _loss_and_grads, chapter3_example, learn_query_key

from helpers.errors import error_table_test
from helpers.gradcheck import numeric_gradient


def test_example_matches_chapter3_numbers():
    ex = chapter3_example()
    _, weights = tl.scaled_dot_product_attention(ex["x"] @ ex["w_q"], ex["x"] @ ex["w_k"], ex["x"])
    np.testing.assert_allclose(ex["target"], weights)
    assert round(float(ex["target"][1, 0]), 3) == 0.768  # 第 3 章正文："吃"把 0.768 的注意力给了小猫


def test_gradient_matches_finite_differences():
    ex = chapter3_example()
    rng = np.random.default_rng(3)
    params = {"w_q": rng.normal(size=(3, 2)), "w_k": rng.normal(size=(3, 2))}
    _, grads = _loss_and_grads(params, ex["x"], ex["target"])
    for name in params:
        numeric = numeric_gradient(lambda a, name=name: _loss_and_grads(params | {name: a}, ex["x"], ex["target"])[0],
                                   params[name])
        np.testing.assert_allclose(grads[name], numeric, rtol=0, atol=1e-7)  # 每个元素差不到 1e-7


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_learned_attention_matches_design(seed):
    ex = chapter3_example()
    run = learn_query_key(ex["x"], ex["target"], np.random.default_rng(seed))
    assert np.abs(run["weights"][0] - 1 / 3).max() < 0.05  # 随机的小眼镜：几乎平均分
    np.testing.assert_allclose(run["weights"][-1], ex["target"], atol=0.01)  # 150 步后每格差不到 0.01
    entropy = -np.sum(ex["target"] * np.log(ex["target"])) / 3  # 交叉熵的最低点 = 目标的熵
    assert run["losses"][-1] == pytest.approx(entropy, abs=1e-3)
    learned = ex["x"] @ run["checkpoints"][-1]["w_q"] @ (ex["x"] @ run["checkpoints"][-1]["w_k"]).T
    designed = ex["x"] @ ex["w_q"] @ (ex["x"] @ ex["w_k"]).T
    centre = lambda s: s - s.mean(axis=1, keepdims=True)  # noqa: E731  softmax 不在乎每行加的常数
    np.testing.assert_allclose(centre(learned), centre(designed), atol=0.15)
    assert np.abs(run["checkpoints"][-1]["w_q"] - ex["w_q"]).max() > 0.1  # 眼镜本身和设计的不一样


ERROR_CASES = [
    ("target-shape", lambda: learn_query_key(np.eye(3), np.full((2, 2), 0.5), np.random.default_rng(0)),
     ValueError, "target"),
    ("target-zero", lambda: learn_query_key(np.eye(2), np.array([[1.0, 0.0], [0.5, 0.5]]), np.random.default_rng(0)),
     ValueError, "target 的每个元素必须 > 0"),
    ("x-ndim", lambda: learn_query_key(np.ones((2, 2, 2)), np.full((2, 2), 0.5), np.random.default_rng(0)),
     ValueError, "2 维"),
    ("lr", lambda: learn_query_key(np.eye(2), np.full((2, 2), 0.5), np.random.default_rng(0), lr=-1.0),
     ValueError, "lr"),
    ("diverge", lambda: learn_query_key(np.eye(2) * 30, np.array([[0.01, 0.99], [0.99, 0.01]]),
                                        np.random.default_rng(0), lr=1e4), ValueError, "训练发散"),
]

test_documented_errors = error_table_test(ERROR_CASES)
