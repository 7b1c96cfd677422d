"""倒序任务的小 Transformer：数据、梯度（对中心差分）、训练的确定性与发散时的报错（Adam 本身在 test_optim.py）。
训练到 ≥ 99% 的断言在 tests/figures/test_ch08_transformer_layer.py 里（读本章那一次存下来的训练）。"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.lessons import tiny_transformer as tt

from helpers.errors import call, check_error, error_table_test
from helpers.gradcheck import numeric_gradient


@given(st.integers(1, 5), st.integers(1, 8), st.integers(1, 8), st.integers(0, 10**6))
def test_targets_are_the_tokens_reversed(N, T, V, seed):
    data = tt.reversal_task(N, np.random.default_rng(seed), length=T, vocab_size=V)
    assert data["tokens"].shape == (N, T) and data["tokens"].max() < V
    for row, target in zip(data["tokens"], data["targets"]):
        assert target.tolist() == list(reversed(row.tolist()))


@pytest.mark.parametrize("use_pe", [True, False])
def test_loss_and_grads_match_finite_differences(use_pe):
    rng = np.random.default_rng(1)
    p = tt.init_model(rng, vocab_size=3, d_model=4, d_ff=4)
    data = tt.reversal_task(2, rng, length=3, vocab_size=3)
    loss, grads = tt.loss_and_grads(p, data["tokens"], data["targets"], use_pe=use_pe)
    assert set(grads) == set(p)
    for name in ("embed", "w_out", "b_out", "w_q", "ln1_gamma", "w_1"):
        f = lambda a, name=name: tt.loss_and_grads(p | {name: a}, data["tokens"], data["targets"], use_pe=use_pe)[0]  # noqa: E731
        num = numeric_gradient(f, p[name])
        assert np.linalg.norm(grads[name] - num) <= 1e-6 * (np.linalg.norm(grads[name]) + np.linalg.norm(num))


def test_training_is_deterministic_and_exam_is_never_trained_on():
    a = tt.train(np.random.default_rng(7), steps=10, checkpoint_every=5)
    b = tt.train(np.random.default_rng(7), steps=10, checkpoint_every=5)
    np.testing.assert_array_equal(a["losses"], b["losses"])
    exam = set(map(tuple, a["test"]["tokens"].tolist()))
    rng = np.random.default_rng(3)
    batch = tt._fresh_batch(4096, rng, 6, a["test"]["tokens"])
    assert not exam & set(map(tuple, batch["tokens"].tolist()))


def test_divergence_stops_with_a_chinese_message_and_no_nan_checkpoint():
    check_error(lambda: tt.train(np.random.default_rng(0), steps=30, lr=10.0), ValueError, r"训练发散了.*lr=10\.0.*调小")


def test_accuracy_counts_tokens_and_whole_sequences():
    p = tt.init_model(np.random.default_rng(0))
    data = tt.reversal_task(50, np.random.default_rng(1))
    token_acc, seq_acc = tt.accuracy(p, data["tokens"], data["targets"])
    pred = tt.forward(p, data["tokens"])[0].argmax(-1)
    assert token_acc == np.mean(pred == data["targets"]) and seq_acc == np.mean((pred == data["targets"]).all(-1))


RNG = np.random.default_rng(0)
VE, TE = ValueError, TypeError
PARAMS = tt.init_model(np.random.default_rng(0))
TOKENS = tt.reversal_task(2, np.random.default_rng(1))["tokens"]  # (2, 6)
ERROR_CASES = [
    ("reversal-vocab-too-big", call(tt.reversal_task, 3, RNG, vocab_size=9), VE, r"vocab_size=9 太大.*上限是 8"),
    ("reversal-train-lr", call(tt.train, RNG, lr=-1.0), VE, r"lr 必须是有限的正实数.*-1\.0"),
    ("reversal-train-diverges", call(tt.train, np.random.default_rng(0), steps=30, lr=10.0), VE,
     r"训练发散了.*lr=10\.0"),
    ("reversal-params-keys", call(tt.forward, {"embed": np.eye(4)}, np.array([[0, 1]])), VE,
     r"params 必须是恰好含这 19 个键的字典.*init_model"),
    ("reversal-use_pe-string", call(tt.forward, PARAMS, TOKENS, use_pe="no"), TE, r"use_pe 必须是 bool.*字符串 'no'"),
    ("reversal-loss-use_pe-int", call(tt.loss_and_grads, PARAMS, TOKENS, TOKENS, use_pe=0), TE, r"use_pe 必须是 bool.*int 0"),
    ("reversal-train-use_pe-string", call(tt.train, RNG, steps=1, use_pe="False"), TE, r"use_pe 必须是 bool.*'False'"),
    ("reversal-accuracy-targets-float", call(tt.accuracy, PARAMS, TOKENS, TOKENS * 1.0), TE, r"targets.*dtype 必须是整数"),
    ("reversal-accuracy-targets-shape", call(tt.accuracy, PARAMS, TOKENS, TOKENS[:, :3]), VE,
     r"targets 的形状应为 \(2, 6\)，收到的是 \(2, 3\)"),
    ("reversal-accuracy-targets-range", call(tt.accuracy, PARAMS, TOKENS, TOKENS + 8), VE, r"targets 越界.*V=8"),
    ("reversal-accuracy-targets-list", call(tt.accuracy, PARAMS, TOKENS, TOKENS.tolist()), TE, r"targets 必须是整数 NumPy 数组"),
    ("reversal-task-memory", call(tt.reversal_task, 10**9, RNG), VE, r"1000000000 串 × 6 个符号的倒序任务 要占"),
    ("init-model-memory", call(tt.init_model, RNG, vocab_size=10**9), VE, r"词嵌入和输出层（vocab_size=1000000000, d_model=32） 要占"),
]
test_documented_errors = error_table_test(ERROR_CASES)
