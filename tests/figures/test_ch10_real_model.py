"""第 10 章的图：只检查本章的事实（通用的管道——帧数、两种版式的字号、局部重画——由 tests/test_explorables.py 检查）。

图里的每个数都要等于另一条路算出来的数：注意力直接从 ``model.run`` 取、句向量从最后一层手工平均，
“它指谁”的份额用 ``measures.pronoun_table``。真模型的 wheel 不在本机时跳过（CI 里失败），见 ``helpers/real_models.py``。
"""


import numpy as np
import pytest

from transformer_lab.figures.ch10_real_model import (
    TOKEN_QUERIES,
    pronoun_heads,
    real_attention,
    real_attention_zh,
    real_similarity,
    real_token_heads,
)
from transformer_lab.pretrained import measures, sentences

from helpers.errors import call, error_table_test


@pytest.fixture(scope="module")
def heat(minilm):
    return real_attention()


def test_e5_tokens_show_the_word_start_mark_as_an_underscore(e5):
    """“▁”（词的开头）在轴上写成 “_”：字体里不一定有 ▁；[CLS]、<s> 这些特殊词元原样保留。"""
    ex = real_attention_zh()
    ex.update(**ex.start)
    texts = {t.text for t in ex.texts("wide")}
    assert {"_", "<s>", "它", "马", "路"} <= texts and not any("▁" in t for t in texts)


def test_every_heatmap_frame_is_the_models_own_attention(heat, minilm):
    out = minilm.run(sentences.PRONOUN_CASES_EN[0][0])
    it, animal, street = (out["tokens"].index(w) for w in ("it", "animal", "street"))
    for layer, head in ((1, 1), (3, 7), (6, 12)):
        frame = heat.update(layer=layer, head=head)
        np.testing.assert_array_equal(frame["weights"], out["attentions"][layer - 1, head - 1])
        a = out["attentions"][layer - 1, head - 1, it]
        np.testing.assert_allclose(frame["candidates"], [a[animal], a[street]], rtol=1e-6)


def test_the_figure_opens_on_the_one_head_that_resolves_it_and_looks_at_both_nouns(heat, minilm):
    cases = sentences.PRONOUN_CASES_EN
    table = measures.pronoun_table([minilm.run(t) for t, _ in cases], [w for _, w in cases], "it", ("animal", "street"))
    start = (heat.start["layer"] - 1, heat.start["head"] - 1)
    assert table.resolving_heads(min_mass=0.1) == [start]
    # 反证：换一个头（第 5 层第 2 头）打开，它不在两句都指对的头里
    assert (4, 1) not in table.resolving_heads()


def test_heatmap_rows_are_distributions_and_heads_differ(heat):
    a, b = heat.update(layer=1, head=3)["weights"], heat.update(layer=1, head=4)["weights"]
    np.testing.assert_allclose(a.sum(axis=-1), 1, atol=1e-5)
    assert not np.allclose(a, b)
    # 第 1 层第 3 头是“看前一个词元”的头：除了 [CLS]，每一行最亮的是前一个位置
    assert np.all(a[2:].argmax(axis=-1) == np.arange(1, len(a) - 1))


def test_one_token_across_the_heads_of_a_layer(minilm):
    ex = real_token_heads()
    out = minilm.run(sentences.PRONOUN_CASES_EN[0][0])
    for word in TOKEN_QUERIES:
        frame = ex.update(layer=5, word=word)
        q = out["tokens"].index(word)
        np.testing.assert_array_equal(frame["rows"], out["attentions"][4, :, q])
        np.testing.assert_array_equal(frame["top"], out["attentions"][4, :, q].argmax(axis=-1))
    assert not np.allclose(ex.update(layer=5, word="it")["rows"], ex.update(layer=5, word="animal")["rows"])


def test_similarity_equals_a_hand_mean_pool(minilm):
    ex = real_similarity()
    texts = sentences.SIMILARITY_EN
    hand = []
    for t in texts:
        last = minilm.run(t)["hidden_states"][-1].astype(np.float64)  # (T, D)
        mean = last.mean(axis=0)
        hand.append(mean / np.linalg.norm(mean))
    hand = np.array(hand)  # (12, D)
    for pick in (1, 7, 12):
        frame = ex.update(pick=pick)
        np.testing.assert_allclose(frame["cosine"], hand @ hand[pick - 1], atol=1e-5)
        assert frame["cosine"][pick - 1] == pytest.approx(1.0, abs=1e-5)
        assert frame["best"][0] // 3 == (pick - 1) // 3  # 最像的另一句属于同一个话题
    assert minilm.similarity(texts[0], texts[1]) == pytest.approx(ex.update(pick=1)["cosine"][1], abs=1e-5)


def test_similarity_takes_its_own_sentences(minilm):
    ex = real_similarity(["A dog runs.", "A puppy is running.", "Stocks fell."])
    cos = ex.update(pick=1)["cosine"]
    assert cos.shape == (3,) and cos[1] > cos[2]


def test_chinese_heatmap_is_the_quantised_models_attention(e5):
    ex = real_attention_zh()
    assert "4 位" in ex.title and len(ex.sliders[0].values) == 12 == len(ex.sliders[1].values)
    out = e5.run(sentences.PRONOUN_CASES_ZH[0][0])
    assert "它" in out["tokens"]
    frame = ex.update(layer=12, head=1)
    np.testing.assert_array_equal(frame["weights"], out["attentions"][11, 0])
    np.testing.assert_allclose(frame["weights"].sum(axis=-1), 1, atol=1e-5)


def test_static_pronoun_table(minilm):
    ex = pronoun_heads()
    assert ex.sliders == [] and ex.frame_count == 1
    share = ex.update()["right_share"]
    assert share.shape == (2, 6, 12)
    both = ((share > 0.5).all(axis=0))
    assert int(both.sum()) == len(ex.data["table"].resolving_heads())
    np.testing.assert_allclose(share[0] + ex.data["table"].share[0], 2 * share[0])  # 第一句 it = animal：份额就是 animal 的


def test_narrow_layouts_fit_a_phone_and_drop_the_colorbar(heat, minilm):
    for ex in (heat, real_token_heads(), real_similarity(), pronoun_heads()):
        assert ex.layout("wide").size[0] <= 6.8 and ex.layout("narrow").size[0] <= 3.6
    heat.update(**heat.start)
    wide, narrow = ({t.text for t in heat.texts(layout)} for layout in ("wide", "narrow"))
    assert {"0.0", "1.0"} <= wide and not {"0.0", "1.0"} & narrow  # 手机上没有色条（刻度 0.0 … 1.0）
    assert "提问的词元（查询 Query）" in wide and "提问的词元（查询）" in narrow
    assert max(map(len, (t for t in narrow if "\n" in t)), default=0) > 0  # 窄版的标题分成几行


def test_static_frames_stay_small(heat):
    """72 帧（两种版式）：每帧的 PNG 不超过 60 KB，全章才能守住 8 MB。"""
    for params in ({"layer": 1, "head": 3}, heat.start, {"layer": 6, "head": 12}):
        for layout in ("wide", "narrow"):
            assert len(heat.png(params, palette=True, layout=layout, dpi=heat.frame_dpi)) < 60_000


VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("similarity-texts-str", call(lambda: real_similarity("A cat.")), TE, r"^texts 必须是字符串的列表或元组"),
    ("similarity-texts-numbers", call(lambda: real_similarity([1, 2, 3])), TE, r"^texts 必须是字符串的列表或元组"),
    ("similarity-texts-4", call(lambda: real_similarity(["a", "b", "c", "d"])), VE, r"^texts 必须有 3、6、9 或 12 句.*4 句"),
    ("similarity-texts-15", call(lambda: real_similarity(["a"] * 15)), VE, r"^texts 必须有 3、6、9 或 12 句.*15 句"),
    ("similarity-texts-empty", call(lambda: real_similarity(["a", " ", "c"])), VE, r"^texts 里的句子不能是空串：第 2 句"),
]
test_documented_errors = error_table_test(ERROR_CASES)

