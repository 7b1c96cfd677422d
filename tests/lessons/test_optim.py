"""lessons/optim.py：全书唯一的训练循环与两种走法——梯度下降的闭式解、Adam 的第一步、不改输入、发散时的报错。"""

import numpy as np

import transformer_lab as tl
from transformer_lab.lessons.optim import adam, gradient_descent, sgd, train_loop

from helpers.errors import check_error, error_table_test


def test_gradient_descent_quadratic_closed_form():
    # (w − 3)²，lr = 0.1：w_k − 3 = (1 − 0.2)^k (w_0 − 3)
    run = gradient_descent({"w": np.array([0.0])}, lambda p: (float((p["w"][0] - 3) ** 2), {"w": 2 * (p["w"] - 3)}),
                           lr=0.1, steps=10, checkpoint_every=5)
    assert run["checkpoint_steps"].tolist() == [0, 5, 10]
    np.testing.assert_allclose(run["checkpoints"][-1]["w"], 3 - 3 * 0.8**10)
    np.testing.assert_allclose(run["losses"], (3 * 0.8 ** np.arange(11)) ** 2)


def test_gradient_descent_does_not_modify_input():
    start = {"w": np.array([1.0])}
    gradient_descent(start, lambda p: (float(p["w"][0] ** 2), {"w": 2 * p["w"]}), lr=0.1, steps=3)
    assert start["w"].tolist() == [1.0]


def test_divergence_raises_chinese_message():
    # lr = 1.5：w ← w − 3w = −2w，损失每步乘 4，很快超过初始的 1000 倍
    check_error(lambda: gradient_descent({"w": np.array([1.0])}, lambda p: (float(p["w"][0] ** 2), {"w": 2 * p["w"]}),
                                         lr=1.5, steps=50), ValueError, "训练发散.*lr")


def test_first_adam_step_moves_every_weight_by_lr_against_the_gradient_sign():
    params, grads = {"w": np.array([1.0, 2.0, 3.0])}, {"w": np.array([0.5, -1e-3, 20.0])}
    new, state = tl.optim.adam(params, grads, {}, lr=0.1)
    np.testing.assert_allclose(new["w"], [0.9, 2.1, 2.9], rtol=1e-4)  # m̂/√v̂ = g/|g|：梯度大小不影响第一步（ε 带来 1e-5 级的差）
    assert state["t"] == 1 and params["w"].tolist() == [1.0, 2.0, 3.0]  # 不改动传入的参数


def test_train_loop_with_sgd_is_gradient_descent():
    quadratic = lambda p: (float((p["w"][0] - 3) ** 2), {"w": 2 * (p["w"] - 3)})  # noqa: E731
    a = train_loop({"w": np.array([0.0])}, quadratic, sgd(0.1), steps=10, checkpoint_every=5)
    b = gradient_descent({"w": np.array([0.0])}, quadratic, lr=0.1, steps=10, checkpoint_every=5)
    np.testing.assert_array_equal(a["losses"], b["losses"])
    assert a["checkpoint_steps"].tolist() == b["checkpoint_steps"].tolist() == [0, 5, 10]


# ---------------------------------------------------------------- 坏输入

B = np.zeros(4)
VE, TE = ValueError, TypeError
ZERO_LOSS = lambda p: (0.0, p)  # noqa: E731
ERROR_CASES = [
    ("gd-lr-zero", lambda: gradient_descent({"w": np.zeros(1)}, ZERO_LOSS, lr=0.0, steps=1), ValueError, "lr"),
    ("gd-lr-nan", lambda: gradient_descent({"w": np.zeros(1)}, ZERO_LOSS, lr=float("nan"), steps=1),
     ValueError, "lr"),
    ("gd-steps", lambda: gradient_descent({"w": np.zeros(1)}, ZERO_LOSS, lr=0.1, steps=0), ValueError, "steps"),
    ("gd-steps-float", lambda: gradient_descent({"w": np.zeros(1)}, ZERO_LOSS, lr=0.1, steps=2.5),
     TypeError, "steps"),
    ("adam-keys", lambda: tl.optim.adam({"w": B}, {"v": B}, {}, 0.1), VE, r"grads 的键必须与 params 相同"),
    ("adam-lr", lambda: adam({"w": B}, {"w": B}, {}, lr=-1.0), VE, r"lr 必须是有限的正实数.*-1\.0"),
    ("train_loop-steps-zero", lambda: train_loop({"w": B}, ZERO_LOSS, sgd(0.1), steps=0), VE, r"steps 必须是正整数.*0"),
    ("train_loop-every-float", lambda: train_loop({"w": B}, ZERO_LOSS, sgd(0.1), steps=2, checkpoint_every=1.5), TE,
     r"checkpoint_every 必须是正整数.*1\.5"),
    ("train_loop-diverges", lambda: train_loop({"w": np.ones(1)}, lambda p: (float(p["w"][0] ** 2), {"w": 2 * p["w"]}),
                                               sgd(1.5), steps=50), VE, r"训练发散了.*lr=1\.5"),
    ("adam-beta1-one", lambda: adam({"w": B}, {"w": B}, {}, lr=0.1, beta1=1.0), VE, r"beta1 必须在 \[0, 1\) 之内.*1\.0"),
    ("adam-beta2-one", lambda: adam({"w": B}, {"w": B}, {}, lr=0.1, beta2=1), VE, r"beta2 必须在 \[0, 1\) 之内.*NaN"),
    ("adam-beta1-negative", lambda: adam({"w": B}, {"w": B}, {}, lr=0.1, beta1=-0.1), VE, r"beta1 必须在 \[0, 1\)"),
    ("adam-beta2-string", lambda: adam({"w": B}, {"w": B}, {}, lr=0.1, beta2="0.999"), TE, r"beta2 必须是.*字符串"),
    ("adam-eps-zero", lambda: adam({"w": B}, {"w": B}, {}, lr=0.1, eps=0.0), VE, r"eps 必须是有限的正实数.*0\.0"),
    ("adam_step-beta2-one", lambda: tl.optim.adam_step(0.1, beta2=1.0), VE, r"beta2 必须在 \[0, 1\) 之内"),
    ("adam_step-eps-negative", lambda: tl.optim.adam_step(0.1, eps=-1e-8), VE, r"eps 必须是有限的正实数"),
    ("train_loop-params-list", lambda: train_loop([B], ZERO_LOSS, sgd(0.1), steps=1), TE, r"params 必须是非空的字典.*list"),
    ("train_loop-params-empty", lambda: train_loop({}, ZERO_LOSS, sgd(0.1), steps=1), TE, r"params 必须是非空的字典"),
    ("train_loop-param-nan", lambda: train_loop({"w": np.array([np.nan])}, ZERO_LOSS, sgd(0.1), steps=1), VE,
     r"params\['w'\] 含有 NaN"),
    ("train_loop-loss-not-callable", lambda: train_loop({"w": B}, 0.5, sgd(0.1), steps=1), TE,
     r"loss_and_grads 必须是函数.*float 0\.5"),
    ("train_loop-step-not-callable", lambda: train_loop({"w": B}, ZERO_LOSS, 0.1, steps=1), TE,
     r"step 必须是函数.*sgd\(lr\)"),
    ("train_loop-steps-huge", lambda: train_loop({"w": B}, ZERO_LOSS, sgd(0.1), steps=10**12), VE,
     r"steps=1000000000000 太大.*上限是 100000"),
    ("train_loop-checkpoints-memory", lambda: train_loop({"w": np.zeros(10**4)}, ZERO_LOSS, sgd(0.1), steps=10**5), VE,
     r"100002 份检查点（每 1 步存一份参数） 要占 7\.45 GiB"),
    ("train_loop-returns-one-value", lambda: train_loop({"w": B}, lambda p: 0.0, sgd(0.1), steps=1), TE,
     r"loss_and_grads 必须返回 \(损失, 梯度字典\) 两个值.*float 0\.0"),
    ("train_loop-grads-keys", lambda: train_loop({"w": B}, lambda p: (0.0, {}), sgd(0.1), steps=1), VE,
     r"梯度必须与 params 同键.*params 有 \['w'\]，第 0 步的梯度是 \[\]"),
    ("train_loop-grads-shape", lambda: train_loop({"w": B}, lambda p: (0.0, {"w": np.ones(3)}), sgd(0.1), steps=1), VE,
     r"grads\['w'\] 的形状应为 \(4,\)，收到的是 \(3,\)"),
    ("train_loop-grads-nan", lambda: train_loop({"w": B}, lambda p: (1.0, {"w": np.full(2, np.nan)}), sgd(0.1), steps=1),
     VE, r"第 0 步的梯度 grads\['w'\] 含有 NaN"),
    ("train_loop-loss-string", lambda: train_loop({"w": B}, lambda p: ("x", {"w": B}), sgd(0.1), steps=1), TE,
     r"损失 loss 必须是一个实数.*第 0 步收到的是 字符串 'x'"),
    ("check_not_diverged-loss-string", lambda: tl.optim.check_not_diverged("x", [1.0], 1, 0.1), TE, r"损失 loss 必须是一个实数"),
    ("adam-state-none", lambda: adam({"w": B}, {"w": B}, None, lr=0.1), TE, r"state 必须是字典.*NoneType.*第一步传空字典"),
    ("adam-grad-square-overflow", lambda: adam({"w": B}, {"w": np.full(2, 1e308)}, {}, lr=0.1), VE,
     r"Adam 的梯度平方 v\['w'\] 溢出"),
]
test_documented_errors = error_table_test(ERROR_CASES)
