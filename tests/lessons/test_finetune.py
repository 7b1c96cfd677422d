"""lessons/finetune.py：在一个很小的 GPT 上，三种训练的梯度都和中心差分一致（只调用前向），全 True 的掩码就是第 9 章
的损失，LoRA 冻住了预训练的参数、合并后就是 W + (α/r)·A B，一段回答的对数概率等于逐字相加，DPO 的起点损失是 log 2。"""

import math

import numpy as np
import pytest

from transformer_lab.lessons import finetune, instructions, tiny_gpt
from transformer_lab.lessons.tiny_gpt import GPTConfig, TinyGPT, init_gpt

from helpers.errors import call, error_table_test
from helpers.gradcheck import assert_gradients_close, numeric_gradient

CHARS = "\nAB？问什么是答："
PAIRS = [("A", "B"), ("B", "AB"), ("A", "BBA")]


@pytest.fixture(scope="module")
def model():
    return init_gpt(GPTConfig(len(CHARS), d_model=8, num_layers=1, num_heads=2, d_ff=8, context=16),
                    np.random.default_rng(0))


def _with(model, name, value):
    return TinyGPT(model.config, model.params | {name: value})


def test_sft_gradient_matches_finite_differences(model):
    batch = instructions.sft_batch(PAIRS, CHARS)
    loss, grads = finetune.sft_loss_and_grads(model, *batch)
    for name in ("w_out", "layer0.w_q", "layer0.ln1_gamma", "tok_embed"):
        numeric = numeric_gradient(lambda w: finetune.sft_loss_and_grads(_with(model, name, w), *batch)[0],
                                   model.params[name], h=1e-5)
        assert_gradients_close(grads[name], numeric, rtol=1e-6, floor=1e-8, name=name)


def test_question_tokens_get_no_loss(model):
    """掩掉的位置不算分：把问题里要猜的字换掉，损失不变；换掉答案里的字，损失就变（反证）。"""
    tokens, targets, mask = instructions.sft_batch(PAIRS, CHARS)
    other = (targets + 1) % len(CHARS)
    loss = finetune.sft_loss_and_grads(model, tokens, targets, mask)[0]
    assert finetune.sft_loss_and_grads(model, tokens, np.where(mask, targets, other), mask)[0] == loss
    assert finetune.sft_loss_and_grads(model, tokens, np.where(mask, other, targets), mask)[0] != loss


def test_all_true_mask_is_chapter_9_loss(model):
    tokens, targets, _ = instructions.sft_batch(PAIRS, CHARS)
    ones = np.ones(tokens.shape, bool)
    loss, grads = finetune.sft_loss_and_grads(model, tokens, targets, ones)
    loss9, grads9 = tiny_gpt.loss_and_grads(model, tokens, targets)
    assert loss == pytest.approx(loss9, rel=1e-12)
    for k in grads9:
        np.testing.assert_allclose(grads[k], grads9[k], rtol=1e-10, atol=1e-14)


def test_lora_gradient_matches_finite_differences_and_w_is_frozen(model):
    lora = finetune.init_lora(model, 2, np.random.default_rng(1))
    lora = lora | {k: np.random.default_rng(2).normal(size=v.shape) * 0.3 for k, v in lora.items() if k.endswith(".b")}
    batch = instructions.sft_batch(PAIRS, CHARS)
    loss, grads = finetune.lora_loss_and_grads(model, lora, 4.0, *batch)
    assert set(grads) == set(lora)  # 只有 A、B 有梯度
    for name in ("layer0.w_q.a", "layer0.w_v.b", "layer0.w_o.a"):
        numeric = numeric_gradient(
            lambda v: finetune.lora_loss_and_grads(model, lora | {name: v}, 4.0, *batch)[0], lora[name], h=1e-5)
        assert_gradients_close(grads[name], numeric, rtol=1e-6, name=name)


def test_merge_lora_is_w_plus_scaled_ab(model):
    rng = np.random.default_rng(3)
    lora = {k: rng.normal(size=v.shape) for k, v in finetune.init_lora(model, 2, rng).items()}
    merged = finetune.merge_lora(model, lora, 6.0)
    for k in model.params:
        if k.split(".")[-1] in finetune.LORA_TARGETS:
            a, b = lora[f"{k}.a"], lora[f"{k}.b"]
            expected = model.params[k] + 3.0 * np.einsum("ir,rj->ij", a, b)  # α/r = 6/2
            np.testing.assert_allclose(merged.params[k], expected, rtol=1e-12)
        else:
            assert merged.params[k] is model.params[k] or np.array_equal(merged.params[k], model.params[k])
    start = finetune.merge_lora(model, finetune.init_lora(model, 2, rng), 6.0)  # B = 0：和原模型一模一样
    assert all(np.array_equal(start.params[k], model.params[k]) for k in model.params)


def test_lora_finetune_trains_only_a_and_b(model):
    run = finetune.finetune(model, CHARS, PAIRS, np.random.default_rng(0), steps=3, lr=0.05, batch_size=2,
                            checkpoint_every=1, rank=2, alpha=4.0, lora_rng=np.random.default_rng(1))
    D, L = model.config.d_model, model.config.num_layers
    assert run["trainable"] == L * len(finetune.LORA_TARGETS) * 2 * D * 2
    assert set(run["checkpoints"][-1]) == set(finetune.init_lora(model, 2, np.random.default_rng(1)))
    full = finetune.finetune(model, CHARS, PAIRS, np.random.default_rng(0), steps=3, lr=0.05, batch_size=2)
    assert full["trainable"] == sum(w.size for w in model.params.values())
    assert full["losses"][0] == run["losses"][0]  # 同一个种子：第一批是同样的题，起点（B = 0）也相同


def test_sequence_logp_is_a_sum_over_answer_characters(model):
    tokens, targets, mask = instructions.sft_batch(PAIRS, CHARS)
    logp, back = finetune.sequence_logp_vjp(model, tokens, targets, mask)
    logits = tiny_gpt.forward(model, tokens)[0]
    for i in range(len(PAIRS)):  # float64 的逐字循环
        expected = sum(logits[i, t, targets[i, t]] - math.log(np.exp(logits[i, t]).sum())
                       for t in range(tokens.shape[1]) if mask[i, t])
        assert logp[i] == pytest.approx(expected, rel=1e-12)
    g = np.array([1.0, -2.0, 0.5])
    grads = back(g)
    numeric = numeric_gradient(
        lambda w: float(g @ finetune.sequence_logp_vjp(_with(model, "w_out", w), tokens, targets, mask)[0]),
        model.params["w_out"], h=1e-5)
    assert_gradients_close(grads["w_out"], numeric, rtol=1e-6)


def test_dpo_starts_at_log_2_and_pushes_the_margin(model):
    prefs = [{"term": "A", "chosen": "B", "rejected": "AB"}, {"term": "B", "chosen": "BA", "rejected": "A"}]
    run = finetune.dpo_train(model, CHARS, prefs, beta=0.5, steps=5, lr=0.01, checkpoint_every=5)
    assert run["losses"][0] == pytest.approx(math.log(2))  # 起点：策略就是参照模型
    np.testing.assert_allclose(run["margins"][0], run["ref_margins"], rtol=1e-12)
    assert np.all(run["margins"][-1] > run["ref_margins"])  # 每一对的差都拉开了
    assert run["losses"][-1] < run["losses"][0]


def test_kl_is_zero_for_the_same_model_and_positive_otherwise(model):
    tokens, _, mask = instructions.sft_batch(PAIRS, CHARS)
    assert finetune.kl_from(model, model, tokens, mask) == 0.0
    other = _with(model, "b_out", model.params["b_out"] + np.linspace(0, 1, len(CHARS)))
    assert finetune.kl_from(other, model, tokens, mask) > 1e-3


VE, TE = ValueError, TypeError
_M = init_gpt(GPTConfig(len(CHARS), d_model=8, num_layers=1, num_heads=2, d_ff=8, context=16), np.random.default_rng(0))
ERROR_CASES = [
    ("ft-rank-too-big", call(finetune.init_lora, _M, 9, np.random.default_rng(0)), VE, r"rank"),
    ("ft-lora-not-dict", call(finetune.merge_lora, _M, [1], 1.0), TE, r"lora 必须是 init_lora 给出的字典"),
    ("ft-lora-missing", call(finetune.merge_lora, _M, {}, 1.0), VE, r"lora 缺少 layer0.w_q.a"),
    ("ft-no-lora-rng", call(finetune.finetune, _M, CHARS, PAIRS, np.random.default_rng(0), 2, 0.01, 2, 1, 2), VE,
     r"lora_rng"),
    ("ft-batch-too-big", call(finetune.finetune, _M, CHARS, PAIRS, np.random.default_rng(0), 2, 0.01, 4), VE,
     r"batch_size"),
    ("ft-model-dict", call(finetune.sft_loss_and_grads, {}, np.zeros((1, 2), int), np.zeros((1, 2), int),
                           np.ones((1, 2), bool)), TE, r"model 必须是小 GPT"),
    ("ft-lora-model", call(finetune.lora_loss_and_grads, None, {}, 1.0, None, None, None), TE, r"model 必须是小 GPT"),
    ("ft-logp-model", call(finetune.sequence_logp_vjp, None, None, None, None), TE, r"model 必须是小 GPT"),
    ("ft-kl-model", call(finetune.kl_from, None, _M, np.zeros((1, 2), int), np.ones((1, 2), bool)), TE,
     r"model 必须是小 GPT"),
    ("ft-dpo-beta", call(finetune.dpo_train, _M, CHARS, [{"term": "A", "chosen": "B", "rejected": "A"}], 0.0, 2, 0.01),
     VE, r"beta"),
]
test_documented_errors = error_table_test(ERROR_CASES)
