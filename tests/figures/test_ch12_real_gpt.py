"""第 12 章的图：只检查本章的事实（通用的管道——帧数、两种版式的字号、局部重画——由 tests/test_explorables.py 检查）。

图里的每个数都要等于另一条路算出来的数：概率用 ``tl.next_token_probs`` 在 ``model.logits`` 上重算，生成用
``model.generate``（它自己的循环，不是图用的第 9 章的 ``lessons.generation.generate``），注意力用一次
``feed_unchecked``。真模型的 wheel 不在本机时跳过（CI 里失败），见 ``helpers/real_models.py``。
"""

import numpy as np
import pytest

from transformer_lab.core.decoding import next_token_probs
from transformer_lab.figures.ch12_real_gpt import (
    BAR_PROMPT,
    GEN_NEW,
    GEN_PROMPT,
    MAP_LAYERS,
    MAP_PROMPT,
    gpt_attention_map,
    gpt_generation_steps,
    gpt_next_token,
)
from transformer_lab.quiz.bank_ch12 import SMOLLM2

from helpers.errors import call, error_table_test


@pytest.fixture(scope="module")
def bars(smollm2):
    return gpt_next_token()


@pytest.fixture(scope="module")
def steps(smollm2):
    return gpt_generation_steps()


@pytest.fixture(scope="module")
def heat(smollm2):
    return gpt_attention_map()


def test_bars_are_the_models_own_probabilities(bars, smollm2):
    logits = smollm2.logits(smollm2.encode(BAR_PROMPT))[-1].astype(np.float64)
    for t, k, p in ((1.0, "不限", 1.0), (0.5, 5, 0.9), (2.0, 50, 0.5)):
        frame = bars.update(temperature=t, top_k=k, top_p=p)
        expected = next_token_probs(logits, t, None if k == "不限" else k, p)
        np.testing.assert_allclose(frame["probs"], expected, atol=1e-12)
        assert frame["kept"][0] == np.count_nonzero(expected)
    assert bars.data["labels"][:2] == ("␣girl", "␣town")  # 打分最高的两个（第 12 章正文引用）
    assert bars.update(temperature=0.0, top_k="不限", top_p=1.0)["kept"][0] == 1  # 贪心：只剩一个
    assert bars.update(temperature=1.0, top_k="不限", top_p=0.5)["kept"][0] == 2  # girl 和 town


def test_generation_steps_write_what_generate_writes(steps, smollm2):
    ids = smollm2.encode(GEN_PROMPT)
    greedy = smollm2.generate(ids, GEN_NEW)  # GPTModel 自己的循环
    assert "".join(steps.data["written"]) == smollm2.decode(greedy)
    lengths = [int(steps.update(step=s)["cache_length"][0]) for s in range(1, GEN_NEW + 1)]
    assert lengths == list(range(len(ids), len(ids) + GEN_NEW))  # 第 1 步缓存里是整段提示词，之后每步多 1 个
    per_token = 2 * 30 * 3 * 64 * 4  # k、v × 30 层 × 3 个键值头 × 64 × float32
    frame = steps.update(step=GEN_NEW)
    assert frame["cache_bytes"][0] == lengths[-1] * per_token
    n = lengths[-1]
    np.testing.assert_allclose(frame["weights"][:, :n].sum(axis=-1), 1, atol=1e-5)  # 每层（各头平均）和为 1
    assert not frame["weights"][:, n:].any()  # 还没写出来的位置是 0


def test_generation_step_attention_is_the_cached_forward(steps, smollm2):
    """第 1 步的注意力（各头平均）= 整段提示词一次前向时，最后一个位置的注意力。"""
    ids = smollm2.encode(GEN_PROMPT)
    _, weights = smollm2.feed_unchecked(np.array(ids), smollm2.new_caches(len(ids)))
    expected = np.stack([w[:, -1].mean(axis=0) for w in weights])  # (L, T)
    np.testing.assert_allclose(steps.update(step=1)["weights"][:, :len(ids)], expected, atol=1e-6)


def test_heatmap_frames_are_the_models_causal_attention(heat, smollm2):
    ids = smollm2.encode(MAP_PROMPT)
    _, weights = smollm2.feed_unchecked(np.array(ids), smollm2.new_caches(len(ids)))
    assert heat.frame_count == len(MAP_LAYERS) * 9 and heat.start == {"layer": 2, "head": 3}
    for layer, head in ((1, 1), (12, 5), (30, 9)):
        w = heat.update(layer=layer, head=head)["weights"]
        np.testing.assert_array_equal(w, weights[layer - 1][head - 1])
        assert np.triu(w, k=1).max() == 0.0  # 因果：后面的词元全是 0
        np.testing.assert_allclose(w.sum(axis=-1), 1, atol=1e-5)
    # 反证：两个头不一样
    assert not np.allclose(heat.update(layer=1, head=1)["weights"], heat.update(layer=1, head=2)["weights"])
    # 图注说的：打开的那一帧（第 2 层第 3 头）主要看前一个词元；第 24 层的 9 个头都是第一个词元的汇点
    opened = heat.update(**heat.start)["weights"]
    assert np.diagonal(opened, -1).mean() > 0.6 and (opened[1:].argmax(axis=-1) == np.arange(len(ids) - 1)).mean() > 0.7
    assert all(heat.update(layer=24, head=h)["first"][0] > 0.5 for h in range(1, 10))


def test_heatmap_marks_it_and_fits_a_phone(heat):
    for ex in (heat, gpt_next_token(), gpt_generation_steps()):
        assert ex.layout("wide").size[0] <= 6.8 and ex.layout("narrow").size[0] <= 3.6
    heat.update(**heat.start)
    texts = {t.text for t in heat.texts("wide")}
    assert {"it", "animal", "street"} <= texts


@pytest.mark.parametrize("name", ["bars", "steps", "heat"])
def test_static_frames_stay_small(name, request):
    """三张图一共 111 帧（两种版式）：每帧的 PNG 不超过 40 KB，整章的帧远在 8 MB 以内。"""
    ex = request.getfixturevalue(name)
    for layout in ("wide", "narrow"):
        assert len(ex.png(ex.start, palette=True, layout=layout, dpi=ex.frame_dpi)) < 40_000


def test_quiz_sizes_are_the_models(smollm2):
    c = smollm2.config
    assert SMOLLM2 == {"vocab_size": c.vocab_size, "d_model": c.d_model, "num_layers": c.num_layers,
                       "num_heads": c.num_heads, "num_kv_heads": c.num_kv_heads, "d_ff": c.d_ff}


TE, VE = TypeError, ValueError
ERROR_CASES = [
    ("bars-prompt-int", call(gpt_next_token, 3), TE, r"^prompt 必须是非空的字符串.*int"),
    ("bars-prompt-blank", call(gpt_next_token, "  "), TE, r"^prompt 必须是非空的字符串"),
    ("bars-prompt-too-long", call(gpt_next_token, "a " * 9000), VE, r"超过了模型的上下文长度 context=8192"),
    ("steps-prompt-list", call(gpt_generation_steps, ["Once"]), TE, r"^prompt 必须是非空的字符串.*list"),
    ("steps-num-new-float", call(gpt_generation_steps, GEN_PROMPT, 2.0), TE, r"^num_new 必须是"),
    ("steps-num-new-zero", call(gpt_generation_steps, GEN_PROMPT, 0), VE, r"^num_new"),
    ("steps-num-new-too-many", call(gpt_generation_steps, GEN_PROMPT, 43), VE, r"^num_new=43 太大.*上限是 42"),
    ("map-prompt-none", call(gpt_attention_map, None), TE, r"^prompt 必须是非空的字符串.*None"),
    ("map-prompt-too-long", call(gpt_attention_map, " word" * 41), VE, r"^prompt 切出的词元最多 40 个.*有 41 个"),
]

test_documented_errors = error_table_test(ERROR_CASES)
