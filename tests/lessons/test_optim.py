"""lessons/optim.py：全书唯一的训练循环与两种走法——梯度下降的闭式解、Adam 的第一步、不改输入、发散时的报错。"""

import copy
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

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


def test_second_adam_step_by_hand():
    """两步 Adam，β₁ = 0.5、β₂ = 0.75 手算：g₁ = 2 → m = 1、v = 1、m̂ = 2、v̂ = 4，走 lr·2/2 = lr；
    g₂ = 0 → m = 0.5、v = 0.75、m̂ = 0.5/0.75 = 2/3、v̂ = 0.75/0.4375 = 12/7，走 lr·(2/3)/√(12/7)。"""
    p0 = {"w": np.array([1.0])}
    p1, s1 = adam(p0, {"w": np.array([2.0])}, {}, lr=0.1, beta1=0.5, beta2=0.75, eps=1e-12)
    p2, s2 = adam(p1, {"w": np.array([0.0])}, s1, lr=0.1, beta1=0.5, beta2=0.75, eps=1e-12)
    np.testing.assert_allclose(p1["w"], [0.9], rtol=1e-10)
    assert s2["t"] == 2 and s2["m"]["w"].tolist() == [0.5] and s2["v"]["w"].tolist() == [0.75]
    np.testing.assert_allclose(p2["w"], [0.9 - 0.1 * (2 / 3) / np.sqrt(12 / 7)], rtol=1e-10)


def _reference_adam(ws, gs, lr, b1, b2, eps):
    """独立的参照：逐个数、用 Python 的 float 照公式走完 len(gs) 步。"""
    ws, out = [float(w) for w in ws], []
    m, v = [0.0] * len(ws), [0.0] * len(ws)
    for t, g in enumerate(gs, start=1):
        for i, gi in enumerate(g):
            m[i] = b1 * m[i] + (1 - b1) * float(gi)
            v[i] = b2 * v[i] + (1 - b2) * float(gi) ** 2
            ws[i] -= lr * (m[i] / (1 - b1**t)) / ((v[i] / (1 - b2**t)) ** 0.5 + eps)
        out.append(list(ws))
    return out


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n=st.integers(1, 4), steps=st.integers(1, 4), b1=st.floats(0, 0.99), b2=st.floats(0, 0.999))
def test_adam_matches_a_per_number_reference_and_never_mutates(data, n, steps, b1, b2):
    """任意几步、任意 β：和逐个数的参照一致；传入的参数、梯度、状态一个数也不变（深拷贝比较）。"""
    finite = st.floats(-100, 100, allow_nan=False)
    w = data.draw(hnp.arrays(np.float64, (n,), elements=finite))
    gs = [data.draw(hnp.arrays(np.float64, (n,), elements=finite)) for _ in range(steps)]
    params, state, got = {"w": w}, {}, []
    for g in gs:
        before = copy.deepcopy((params, state, g))
        new, new_state = adam(params, {"w": g}, state, lr=0.01, beta1=b1, beta2=b2, eps=1e-8)
        after = (params, state, g)
        assert repr(after) == repr(before)  # 不改动输入
        params, state = new, new_state
        got.append(params["w"].tolist())
    np.testing.assert_allclose(got, _reference_adam(w, gs, 0.01, b1, b2, 1e-8), rtol=1e-9, atol=1e-12)
    assert state["t"] == steps


@settings(max_examples=40, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=4), data=st.data())
def test_adam_refuses_every_moment_that_would_broadcast(shape, data):
    """m 或 v 的形状只要和参数不同——哪怕能广播（(1,)、多一维、少一维）——就报错并写出两个形状，不悄悄广播。"""
    params, grads = {"w": np.ones(shape)}, {"w": np.ones(shape)}
    _, state = adam(params, grads, {}, lr=0.1)
    other = data.draw(st.sampled_from([(1,), (1, *shape), shape[1:] or (1, 1), (*shape[:-1], 1)]).filter(
        lambda s: s != shape))
    key = data.draw(st.sampled_from(["m", "v"]))
    bad = dict(state, **{key: {"w": np.ones(other)}})
    check_error(lambda: adam(params, grads, bad, lr=0.1), ValueError,
                rf"state\['{key}'\]\['w'\] 的形状应为 .*收到的是 \{re.escape(str(other))[1:]}.*不能广播")


@pytest.mark.parametrize("bad", [
    {"t": -1},                                   # 负的步数：1 − β^t 变成负数，参数往梯度的方向走
    {"v": {"w": np.array([-4.0, 1.0, 1.0, 1.0])}},  # 负的 v：√ 得到 NaN
    {"m": {"w": np.array([1.0])}},               # 形状 (1,)：以前悄悄广播到 (4,)
    {"m": {"w": np.array([np.inf, 0, 0, 0])}},
])
def test_adam_refuses_a_state_it_cannot_trust(bad):
    """手写的反例：修复前每一个都悄悄给出 NaN 或错的参数，现在都报中文错，说出是 state 的哪一项。"""
    params, grads = {"w": np.ones(4)}, {"w": np.ones(4)}
    _, state = adam(params, grads, {}, lr=0.1)
    with pytest.raises(ValueError, match=r"state\['(t|m|v)'\]"):
        adam(params, grads, dict(state, **bad), lr=0.1)


def test_adam_names_the_parameter_that_leaves_the_float_range():
    """w = 1e308、g = −1、lr = 1e308：第一步走 +lr，1e308 + 1e308 超出 float64，修复前返回 inf。"""
    check_error(lambda: adam({"a": np.ones(1), "b": np.array([1e308])}, {"a": np.ones(1), "b": -np.ones(1)}, {},
                             lr=1e308), ValueError, r"Adam 走一步之后的参数 params\['b'\] 溢出.*lr=1e\+308")


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
    ("adam-grad-square-overflow", lambda: adam({"w": B}, {"w": np.full(4, 1e308)}, {}, lr=0.1), VE,
     r"Adam 的梯度平方 v\['w'\] 溢出"),
]
S1 = adam({"w": B}, {"w": np.ones(4)}, {}, lr=0.1)[1]  # 走过一步的合法状态
ERROR_CASES += [
    ("adam-state-t-negative", lambda: adam({"w": B}, {"w": B}, dict(S1, t=-1), lr=0.1), VE,
     r"state\['t'\] 必须是非负整数（>= 0），收到的是 -1"),
    ("adam-state-t-float", lambda: adam({"w": B}, {"w": B}, dict(S1, t=1.5), lr=0.1), TE, r"state\['t'\] 必须是非负整数.*1\.5"),
    ("adam-state-t-bool", lambda: adam({"w": B}, {"w": B}, dict(S1, t=True), lr=0.1), TE, r"state\['t'\] 必须是非负整数"),
    ("adam-state-keys", lambda: adam({"w": B}, {"w": B}, {"t": 1}, lr=0.1), VE,
     r"state 必须是空字典（第一步）或上一步返回的.*收到的键是 \['t'\]"),
    ("adam-state-m-keys", lambda: adam({"w": B}, {"w": B}, dict(S1, m={"x": B}), lr=0.1), VE,
     r"state\['m'\] 必须是与 params 同键的字典.*params 有 \['w'\]，收到的是 \['x'\]"),
    ("adam-state-v-not-dict", lambda: adam({"w": B}, {"w": B}, dict(S1, v=B), lr=0.1), VE,
     r"state\['v'\] 必须是与 params 同键的字典.*ndarray"),
    ("adam-state-m-shape", lambda: adam({"w": B}, {"w": B}, dict(S1, m={"w": np.zeros(1)}), lr=0.1), VE,
     r"state\['m'\]\['w'\] 的形状应为 \(4,\)，收到的是 \(1,\).*不能广播"),
    ("adam-state-v-negative", lambda: adam({"w": B}, {"w": B}, dict(S1, v={"w": -np.ones(4)}), lr=0.1), VE,
     r"state\['v'\]\['w'\] 不能有负数.*-1\.0"),
    ("adam-state-m-nan", lambda: adam({"w": B}, {"w": B}, dict(S1, m={"w": np.full(4, np.nan)}), lr=0.1), VE,
     r"state\['m'\]\['w'\] 含有 NaN"),
    ("adam-state-v-list", lambda: adam({"w": B}, {"w": B}, dict(S1, v={"w": [0.0] * 4}), lr=0.1), TE,
     r"state\['v'\]\['w'\] 必须是 NumPy 数组"),
    ("adam-grad-shape", lambda: adam({"w": B}, {"w": np.ones(1)}, {}, lr=0.1), VE,
     r"grads\['w'\] 的形状应为 \(4,\)，收到的是 \(1,\).*必须与 params\['w'\] 同形状"),
    ("adam-param-nan", lambda: adam({"w": np.full(2, np.nan)}, {"w": np.ones(2)}, {}, lr=0.1), VE,
     r"params\['w'\] 含有 NaN"),
    ("adam-new-params-overflow", lambda: adam({"w": np.array([1e308])}, {"w": -np.ones(1)}, {}, lr=1e308), VE,
     r"Adam 走一步之后的参数 params\['w'\] 溢出"),
]
test_documented_errors = error_table_test(ERROR_CASES)
