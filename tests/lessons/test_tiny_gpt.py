"""lessons/tiny_gpt.py：小 GPT 的前向、梯度（对中心差分）、整段平均损失（对逐位置的参考写法）、训练的确定性与报错。
训练好的那一次（runs.gpt）在 tests/lessons/test_gpt_run.py 里。"""

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

SMALL = dict(d_model=4, num_layers=2, d_ff=4, context=5)


def small_model(seed=0, V=5):
    return gpt.init_gpt(V, np.random.default_rng(seed), **SMALL)


def test_forward_is_the_chapter_8_layer_stacked_with_a_causal_mask():
    p = gpt.init_gpt(7, np.random.default_rng(1), d_model=8, num_layers=3, d_ff=16, context=6)
    tokens = np.array([[1, 4, 2, 6], [0, 0, 3, 5]])
    x = p["tok_embed"][tokens] + p["pos_embed"][:4]  # 写法不同的参考：逐层调用公开的 encoder_layer
    for layer in range(3):
        x, _ = encoder_layer(x, gpt.layer_params(p, layer), 4, mask=causal_mask(4), norm_first=True)
    want = layer_norm(x, p["lnf_gamma"], p["lnf_beta"]) @ p["w_out"] + p["b_out"]
    logits, weights = gpt.forward(p, tokens)
    np.testing.assert_allclose(logits, want, rtol=0, atol=1e-12)
    assert weights.shape == (3, 2, 4, 4, 4) and np.all(np.triu(weights, 1) == 0)  # (L, N, H, T, T)，后文是 0


def test_initial_loss_is_close_to_uniform_guessing():
    p = gpt.init_gpt(50, np.random.default_rng(0), d_model=16, num_layers=1, d_ff=16, context=8)
    ids = np.random.default_rng(1).integers(0, 50, size=200)
    assert abs(gpt.mean_loss(p, ids) - math.log(50)) < 0.05  # w_out 很小：每个字差不多 1/V


def _numeric(f, a, h=1e-6):
    out = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        bump = np.zeros_like(a)
        bump[i] = h
        out[i] = (f(a + bump) - f(a - bump)) / (2 * h)
    return out


@pytest.mark.parametrize("name", ["tok_embed", "pos_embed", "layer0.w_q", "layer1.w_2", "layer1.ln1_gamma",
                                  "lnf_gamma", "lnf_beta", "w_out", "b_out"])
def test_gradients_match_finite_differences(name):
    p = small_model()
    tokens, targets = np.array([[1, 2, 3, 0], [4, 4, 1, 2]]), np.array([[2, 3, 0, 1], [4, 1, 2, 3]])
    loss, grads = gpt.loss_and_grads(p, tokens, targets, num_heads=2)
    assert set(grads) == set(p) and all(grads[k].shape == p[k].shape for k in p)
    num = _numeric(lambda a: gpt.loss_and_grads(p | {name: a}, tokens, targets, num_heads=2)[0], p[name])
    assert np.linalg.norm(grads[name] - num) <= 1e-6 * (np.linalg.norm(grads[name]) + np.linalg.norm(num)) + 1e-10
    if name == "pos_embed":
        assert np.all(grads[name][4:] == 0)  # 只用了 4 个位置：第 5 个位置的嵌入梯度是 0


def test_the_gradient_check_can_fail():
    p = small_model()
    tokens, targets = np.array([[1, 2, 3]]), np.array([[2, 3, 0]])
    _, grads = gpt.loss_and_grads(p, tokens, targets, num_heads=2)
    num = _numeric(lambda a: gpt.loss_and_grads(p | {"w_out": a}, tokens, targets, num_heads=2)[0], p["w_out"])
    assert np.linalg.norm(2 * grads["w_out"] - num) > 1e-3 * np.linalg.norm(num)


def test_mean_loss_equals_a_per_position_reference():
    p = small_model(2, V=6)
    ids = np.random.default_rng(3).integers(0, 6, size=13)
    total, count = 0.0, 0
    for start in range(0, 12, 5):  # 每段 5 个字（context），首尾相接；逐个位置手算 -log p
        chunk = ids[start:start + 6]
        logits, _ = gpt.forward(p, chunk[:-1], num_heads=2)
        for t, target in enumerate(chunk[1:]):
            row = logits[t]
            total += -(row[target] - row.max() - math.log(np.exp(row - row.max()).sum()))
            count += 1
    assert count == 12
    assert gpt.mean_loss(p, ids, num_heads=2) == pytest.approx(total / count, rel=1e-12)


def test_windows_targets_are_the_next_characters():
    ids = np.arange(100) * 3
    tokens, targets = gpt.windows(ids, 7, 5, np.random.default_rng(0))
    assert tokens.shape == targets.shape == (5, 7)
    np.testing.assert_array_equal(targets, tokens + 3)  # 每个目标是它后面那个字


TEXT = "第 1 章 甲乙丙丁。甲乙丙丁。甲乙丙丁。\n\n第 2 章 丙丁甲乙。丙丁甲乙。丙丁甲乙。"


def test_training_is_deterministic_and_learns_a_tiny_text():
    kw = dict(text=TEXT, steps=40, batch_size=8, context=8, lr=1e-2, checkpoint_every=20, d_model=16, num_layers=1,
              d_ff=16, num_heads=2)
    a, b = gpt.train(np.random.default_rng(7), **kw), gpt.train(np.random.default_rng(7), **kw)
    np.testing.assert_array_equal(a["losses"], b["losses"])
    assert a["checkpoint_steps"].tolist() == [0, 20, 40] and a["test_loss"].shape == a["train_loss"].shape == (3,)
    assert a["chars"] == tl.corpus.vocabulary(TEXT) and a["num_heads"] == 2
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
    ("params-type", lambda: gpt.forward([1, 2], np.array([1])), TypeError, "params 必须是参数字典"),
    ("params-missing", lambda: gpt.forward({k: v for k, v in P.items() if k != "w_out"}, np.array([1])), ValueError,
     "params 缺少 w_out"),
    ("params-extra-layer-key", lambda: gpt.forward(P | {"layer0.extra": np.ones(4)}, np.array([1])), ValueError,
     r"params 的键不对.*多出 \['layer0.extra'\]"),
    ("params-missing-layer-key", lambda: gpt.forward({k: v for k, v in P.items() if k != "layer1.b_2"}, np.array([1])),
     ValueError, r"缺少 \['layer1.b_2'\]"),
    ("params-nan", lambda: gpt.forward(P | {"tok_embed": np.full((5, 4), np.nan)}, np.array([1])), ValueError,
     r"params\['tok_embed'\] 含有 NaN"),
    ("tokens-range", lambda: gpt.forward(P, np.array([5])), ValueError, r"tokens 越界.*V=5"),
    ("tokens-too-long", lambda: gpt.forward(P, np.arange(6) % 5), ValueError, "上下文长度 context=5"),
    ("tokens-float", lambda: gpt.forward(P, np.array([1.0])), TypeError, "dtype 必须是整数"),
    ("heads", lambda: gpt.forward(P, np.array([1]), num_heads=3), ValueError, "必须能被 num_heads=3 整除"),
    ("targets-shape", lambda: gpt.loss_and_grads(P, np.array([[1, 2]]), np.array([[1]])), ValueError, "targets 的形状"),
    ("start", lambda: gpt.embed_positions(P, np.array([1, 2]), start=4), ValueError, r"从第 4 个位置起"),
    ("windows-short", lambda: gpt.windows(np.arange(3), 3, 2, np.random.default_rng(0)), ValueError, "至少 length"),
    ("init-rng", lambda: gpt.init_gpt(5, 0), TypeError, "rng 必须是 np.random.Generator"),
    ("h-shape", lambda: gpt.output_logits(P, np.ones((2, 3))), ValueError, "h 的形状"),
    ("mean-loss-short", lambda: gpt.mean_loss(P, np.array([1])), ValueError, "至少 2 个编号"),
    ("sizes-not-a-dict", call(gpt.sizes, [P]), TypeError,
     r"params 必须是参数字典（键是字符串），收到的是 list。提示：用 init_gpt 生成一份"),
    ("sizes-missing", call(gpt.sizes, {"tok_embed": P["tok_embed"]}), ValueError,
     r"params 缺少 pos_embed, lnf_gamma, lnf_beta, w_out, b_out：这不是小 GPT 的参数"),
    ("sizes-no-layers", call(gpt.sizes, {k: v for k, v in P.items() if not k.startswith("layer")}), ValueError,
     r"params 的键不对：.*（共 6 个，这里 L=0 层），多出 无、缺少 无"),
    ("sizes-extra-key", call(gpt.sizes, P | {"layer1.extra": np.ones(4)}), ValueError,
     r"params 的键不对：.*（共 38 个，这里 L=2 层），多出 \['layer1.extra'\]、缺少 无"),
    ("sizes-shapes", call(gpt.sizes, P | {"w_out": np.ones((3, 5))}), ValueError,
     r"params 的形状对不上：tok_embed \(5, 4\)、pos_embed \(5, 4\)、w_out \(3, 5\)（应为 \(V, D\)、\(context, D\)、\(D, V\)）"),
    ("train-diverges", lambda: gpt.train(np.random.default_rng(0), text=TEXT, steps=30, batch_size=4, context=8,
                                         lr=50.0, d_model=8, num_layers=1, d_ff=8, num_heads=2), ValueError,
     r"训练发散了：第 \d+ 步的损失是 [0-9.]+（初始损失 [0-9.]+）。学习率 lr=50\.0 太大"),
    ("train-short-text", lambda: gpt.train(np.random.default_rng(0), text="甲乙", context=8), ValueError,
     r"ids 必须是至少 length \+ 1 = 9 个编号的一维数组"),
    ("init-vocab-memory", call(gpt.init_gpt, 10**9, np.random.default_rng(0)), ValueError,
     r"小 GPT 的参数（V=1000000000, D=64, 2 层, d_ff=256, context=256） 要占 .* GiB"),
    ("init-layers-memory", call(gpt.init_gpt, 10, np.random.default_rng(0), num_layers=10**6), ValueError, r"1000000 层.* 要占"),
    ("init-context-memory", call(gpt.init_gpt, 10, np.random.default_rng(0), context=10**9), ValueError, r"context=1000000000\） 要占"),
    ("windows-memory", call(gpt.windows, np.arange(10), 2, 10**12, np.random.default_rng(0)), ValueError,
     r"1000000000000 段 × 2 个字的训练窗口"),
    ("layer-out-of-range", call(gpt.layer_params, P, 5), ValueError, r"layer=5 越界：模型有 \d+ 层"),
    ("layer-negative", call(gpt.layer_params, P, -1), ValueError, r"layer=-1 越界"),
    ("layer-float", call(gpt.layer_params, P, 1.0), TypeError, r"layer 必须是整数.*float 1\.0"),
    ("layer-params-list", call(gpt.layer_params, [1], 0), TypeError, r"params 必须是参数字典.*list"),
]
test_documented_errors = error_table_test(ERROR_CASES)
