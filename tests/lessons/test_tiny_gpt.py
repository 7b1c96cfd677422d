"""lessons/tiny_gpt.py：小 GPT 的前向、梯度（对中心差分）、整段平均损失（对逐位置的参考写法）、训练的确定性与报错。
模型本身（GPTConfig、TinyGPT、init_gpt）在 tests/lessons/test_gpt_model.py；训练好的那一次（runs.gpt）在
tests/lessons/test_gpt_run.py 里。"""

import inspect
import math

import numpy as np
import pytest

import transformer_lab as tl
from transformer_lab.core.attention import causal_mask
from transformer_lab.core.encoder import encoder_layer
from transformer_lab.core.layer_norm import layer_norm
from transformer_lab.lessons import tiny_gpt as gpt

from helpers.errors import call, error_table_test
from helpers.gradcheck import assert_gradients_close, numeric_gradient

SMALL = dict(d_model=4, num_layers=2, num_heads=2, d_ff=4, context=5)


def small_model(seed=0, V=5):
    return gpt.init_gpt(gpt.GPTConfig(V, **SMALL), np.random.default_rng(seed))


def with_params(model, **changed):
    """同一个 config，换掉几个参数的新模型。"""
    return gpt.TinyGPT(model.config, model.params | changed)


def test_forward_is_the_chapter_8_layer_stacked_with_a_causal_mask():
    config = gpt.GPTConfig(7, d_model=8, num_layers=3, num_heads=4, d_ff=16, context=6)
    model = gpt.init_gpt(config, np.random.default_rng(1))
    p = model.params
    tokens = np.array([[1, 4, 2, 6], [0, 0, 3, 5]])
    x = p["tok_embed"][tokens] + p["pos_embed"][:4]  # 写法不同的参考：逐层调用公开的 encoder_layer
    for layer in range(3):
        x, _ = encoder_layer(x, gpt.layer_params(model, layer), 4, mask=causal_mask(4), norm_first=True)
    want = layer_norm(x, p["lnf_gamma"], p["lnf_beta"]) @ p["w_out"] + p["b_out"]
    logits, weights = gpt.forward(model, tokens)
    np.testing.assert_allclose(logits, want, rtol=0, atol=1e-12)
    assert weights.shape == (3, 2, 4, 4, 4) and np.all(np.triu(weights, 1) == 0)  # (L, N, H, T, T)，后文是 0


def test_the_heads_come_from_the_config():
    """同样的参数，config 里的头数不同，结果就不同：头数确实跟着模型走（而不是某个默认值）。"""
    two = gpt.init_gpt(gpt.GPTConfig(7, d_model=8, num_layers=1, num_heads=2, d_ff=16, context=6), np.random.default_rng(1))
    four = gpt.TinyGPT(gpt.GPTConfig(7, d_model=8, num_layers=1, num_heads=4, d_ff=16, context=6), two.params)
    tokens = np.array([1, 4, 2, 6])
    _, w2 = gpt.forward(two, tokens)
    _, w4 = gpt.forward(four, tokens)
    assert w2.shape == (1, 2, 4, 4) and w4.shape == (1, 4, 4, 4)
    x = gpt.embed_positions(two, tokens)
    _, want = encoder_layer(x, gpt.layer_params(two, 0), 2, mask=causal_mask(4), norm_first=True)
    np.testing.assert_allclose(w2[0], want, rtol=0, atol=1e-12)


def test_initial_loss_is_close_to_uniform_guessing():
    model = gpt.init_gpt(gpt.GPTConfig(50, d_model=16, num_layers=1, num_heads=4, d_ff=16, context=8),
                         np.random.default_rng(0))
    ids = np.random.default_rng(1).integers(0, 50, size=200)
    assert abs(gpt.mean_loss(model, ids) - math.log(50)) < 0.05  # w_out 很小：每个字差不多 1/V


TOKENS, TARGETS = np.array([[1, 2, 3, 0], [4, 4, 1, 2]]), np.array([[2, 3, 0, 1], [4, 1, 2, 3]])


@pytest.mark.parametrize("name", ["tok_embed", "pos_embed", "layer0.w_q", "layer1.w_2", "layer1.ln1_gamma",
                                  "lnf_gamma", "lnf_beta", "w_out", "b_out"])
def test_gradients_match_finite_differences(name):
    model = small_model()
    loss, grads = gpt.loss_and_grads(model, TOKENS, TARGETS)
    p = model.params
    assert set(grads) == set(p) and all(grads[k].shape == p[k].shape for k in p)
    num = numeric_gradient(lambda a: gpt.loss_and_grads(with_params(model, **{name: a}), TOKENS, TARGETS)[0], p[name])
    assert_gradients_close(grads[name], num, rtol=1e-6, floor=1e-4, name=name)
    if name == "pos_embed":
        assert np.all(grads[name][4:] == 0)  # 只用了 4 个位置：第 5 个位置的嵌入梯度是 0


def test_the_gradient_check_can_fail():
    model = small_model()
    _, grads = gpt.loss_and_grads(model, TOKENS[:1, :3], TARGETS[:1, :3])
    num = numeric_gradient(lambda a: gpt.loss_and_grads(with_params(model, w_out=a), TOKENS[:1, :3], TARGETS[:1, :3])[0],
                           model.params["w_out"])
    with pytest.raises(AssertionError, match="相对误差"):
        assert_gradients_close(2 * grads["w_out"], num, rtol=1e-6)


def test_mean_loss_equals_a_per_position_reference():
    model = small_model(2, V=6)
    ids = np.random.default_rng(3).integers(0, 6, size=13)
    total, count = 0.0, 0
    for start in range(0, 12, 5):  # 每段 5 个字（context），首尾相接；逐个位置手算 -log p
        chunk = ids[start:start + 6]
        logits, _ = gpt.forward(model, chunk[:-1])
        for t, target in enumerate(chunk[1:]):
            row = logits[t]
            total += -(row[target] - row.max() - math.log(np.exp(row - row.max()).sum()))
            count += 1
    assert count == 12
    assert gpt.mean_loss(model, ids) == pytest.approx(total / count, rel=1e-12)


def test_windows_targets_are_the_next_characters():
    ids = np.arange(100) * 3
    tokens, targets = gpt.windows(ids, 7, 5, np.random.default_rng(0))
    assert tokens.shape == targets.shape == (5, 7)
    np.testing.assert_array_equal(targets, tokens + 3)  # 每个目标是它后面那个字


# 两章，每章 12 段（一段一行，各不相同）：每章下标为 9 的那一段是考题
TEXT = "\n\n".join(f"第 {c} 章\n" + "\n".join(piece * k for k in range(1, 12)) for c, piece in ((1, "甲乙丙丁。"), (2, "丙丁甲乙。")))


def test_training_is_deterministic_and_learns_a_tiny_text():
    kw = dict(text=TEXT, steps=40, batch_size=8, context=8, lr=1e-2, checkpoint_every=20, d_model=16, num_layers=1,
              d_ff=16, num_heads=2)
    a, b = gpt.train(np.random.default_rng(7), **kw), gpt.train(np.random.default_rng(7), **kw)
    np.testing.assert_array_equal(a["losses"], b["losses"])
    assert a["checkpoint_steps"].tolist() == [0, 20, 40] and a["test_loss"].shape == a["train_loss"].shape == (3,)
    assert a["chars"] == tl.corpus.vocabulary(TEXT)
    assert a["config"] == gpt.GPTConfig(len(a["chars"]), d_model=16, num_layers=1, num_heads=2, d_ff=16, context=8)
    assert all(m.config is a["config"] for m in a["checkpoints"])  # 每个检查点都是模型：同一个 config，各自的参数
    assert not a["checkpoints"][0].params["w_out"].flags.writeable  # 训练结果只读
    assert a["train_loss"][-1] < a["train_loss"][0] - 1.0  # 训练文字上的损失明显下降
    assert gpt.sizes(a["checkpoints"][-1])["vocab_size"] == len(a["chars"])


def test_train_defaults_are_the_chapter_settings():
    defaults = {k: v.default for k, v in inspect.signature(gpt.train).parameters.items() if k not in ("rng", "text")}
    assert defaults == tl.runs.GPT  # tl.tiny_gpt.train(default_rng(0)) 就是 tl.runs.gpt() 的那次训练


def test_learning_rate_decays_linearly_to_a_tenth():
    step = gpt.decaying_adam(0.01, steps=100)
    assert [step.lr_at(t) for t in (0, 50, 100, 150)] == pytest.approx([0.01, 0.0055, 0.001, 0.001])
    new, state = step({"w": np.array([1.0])}, {"w": np.array([3.0])}, {})
    assert new["w"][0] == pytest.approx(0.99, abs=1e-6) and state["t"] == 1  # 第一步：走 lr，与梯度大小无关


P = small_model()

ERROR_CASES = [
    ("model-dict", lambda: gpt.forward(dict(P.params), np.array([1])), TypeError,
     r"model 必须是小 GPT 的模型 TinyGPT.*收到的是 dict.*run\['checkpoints'\]\[-1\] 就是模型.*不再单独传 num_heads"),
    ("model-list", lambda: gpt.hidden_states([1, 2], np.array([1])), TypeError, r"model 必须是小 GPT 的模型 TinyGPT.*list"),
    ("tokens-range", lambda: gpt.forward(P, np.array([5])), ValueError, r"tokens 越界.*V=5"),
    ("vjp-model-dict", lambda: gpt.logits_vjp(dict(P.params), np.array([1])), TypeError, r"model 必须是小 GPT 的模型 TinyGPT"),
    ("vjp-tokens-too-long", lambda: gpt.logits_vjp(P, np.arange(6) % 5), ValueError, "上下文长度 context=5"),
    ("tokens-too-long", lambda: gpt.forward(P, np.arange(6) % 5), ValueError, "上下文长度 context=5"),
    ("tokens-float", lambda: gpt.forward(P, np.array([1.0])), TypeError, "dtype 必须是整数"),
    ("hidden-too-long", lambda: gpt.hidden_states(P, np.arange(6) % 5), ValueError, "上下文长度 context=5"),
    ("targets-shape", lambda: gpt.loss_and_grads(P, np.array([[1, 2]]), np.array([[1]])), ValueError, "targets 的形状"),
    ("windows-short", lambda: gpt.windows(np.arange(3), 3, 2, np.random.default_rng(0)), ValueError, "至少 length"),
    ("mean-loss-short", lambda: gpt.mean_loss(P, np.array([1])), ValueError, "至少 2 个编号"),
    ("train-diverges", lambda: gpt.train(np.random.default_rng(0), text=TEXT, steps=30, batch_size=4, context=8,
                                         lr=50.0, d_model=8, num_layers=1, d_ff=8, num_heads=2), ValueError,
     r"训练发散了：第 \d+ 步的损失是 [0-9.]+（初始损失 [0-9.]+）。学习率 lr=50\.0 太大"),
    ("train-no-exam", lambda: gpt.train(np.random.default_rng(0), text="甲乙", context=8), ValueError,
     r"text 太短：每章每 10 段留 1 段作考题"),
    ("train-short-text", lambda: gpt.train(np.random.default_rng(0), text=TEXT, context=1000), ValueError,
     r"ids 必须是至少 length \+ 1 = 1001 个编号的一维数组"),
    ("train-heads", lambda: gpt.train(np.random.default_rng(0), text=TEXT, context=8, d_model=8, num_heads=3),
     ValueError, r"d_model=8 必须能被 num_heads=3 整除"),
    ("windows-memory", call(gpt.windows, np.arange(10), 2, 10**12, np.random.default_rng(0)), ValueError,
     r"1000000000000 段 × 2 个字的训练窗口"),
]
test_documented_errors = error_table_test(ERROR_CASES)


@pytest.mark.parametrize("name", ["NUM_HEADS", "check_gpt"])
def test_old_names_point_to_the_config(name):
    with pytest.raises(AttributeError, match=f"tiny_gpt.{name} 已经不用了，请改用"):
        getattr(gpt, name)
    with pytest.raises(AttributeError, match="没有属性"):
        gpt.no_such_name  # noqa: B018
