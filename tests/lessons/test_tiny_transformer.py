"""倒序任务的小 Transformer：数据、梯度（对中心差分）、Adam 的第一步、训练的确定性与发散时的报错。
训练到 ≥ 99% 的断言在 tests/figures/test_ch08_transformer_layer.py 里（读本章那一次存下来的训练）。"""

import numpy as np
import pytest
from conftest import check_error
from hypothesis import given
from hypothesis import strategies as st

import transformer_lab as tl
from transformer_lab.lessons import tiny_transformer as tt


@given(st.integers(1, 5), st.integers(1, 8), st.integers(1, 8), st.integers(0, 10**6))
def test_targets_are_the_tokens_reversed(N, T, V, seed):
    data = tt.reversal_task(N, np.random.default_rng(seed), length=T, vocab_size=V)
    assert data["tokens"].shape == (N, T) and data["tokens"].max() < V
    for row, target in zip(data["tokens"], data["targets"]):
        assert target.tolist() == list(reversed(row.tolist()))


def _numeric(f, a, h=1e-6):
    flat = a.ravel()
    out = np.zeros_like(flat)
    for i in range(flat.size):
        bump = np.zeros_like(flat)
        bump[i] = h
        out[i] = (f((flat + bump).reshape(a.shape)) - f((flat - bump).reshape(a.shape))) / (2 * h)
    return out.reshape(a.shape)


@pytest.mark.parametrize("use_pe", [True, False])
def test_loss_and_grads_match_finite_differences(use_pe):
    rng = np.random.default_rng(1)
    p = tt.init_model(rng, vocab_size=3, d_model=4, d_ff=4)
    data = tt.reversal_task(2, rng, length=3, vocab_size=3)
    loss, grads = tt.loss_and_grads(p, data["tokens"], data["targets"], use_pe=use_pe)
    assert set(grads) == set(p)
    for name in ("embed", "w_out", "b_out", "w_q", "ln1_gamma", "w_1"):
        f = lambda a, name=name: tt.loss_and_grads(p | {name: a}, data["tokens"], data["targets"], use_pe=use_pe)[0]  # noqa: E731
        num = _numeric(f, p[name])
        assert np.linalg.norm(grads[name] - num) <= 1e-6 * (np.linalg.norm(grads[name]) + np.linalg.norm(num))


def test_first_adam_step_moves_every_weight_by_lr_against_the_gradient_sign():
    params, grads = {"w": np.array([1.0, 2.0, 3.0])}, {"w": np.array([0.5, -1e-3, 20.0])}
    new, state = tl.optim.adam(params, grads, {}, lr=0.1)
    np.testing.assert_allclose(new["w"], [0.9, 2.1, 2.9], rtol=1e-4)  # m̂/√v̂ = g/|g|：梯度大小不影响第一步（ε 带来 1e-5 级的差）
    assert state["t"] == 1 and params["w"].tolist() == [1.0, 2.0, 3.0]  # 不改动传入的参数


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
