"""第 10 章的图：只检查本章的事实（通用的管道——帧数、两种版式的字号、局部重画——由 tests/test_explorables.py 检查）。

图里的每个数都要等于另一条路算出来的数：注意力直接从 ``model.run`` 取、句向量从最后一层手工平均，
“它指谁”的份额用 ``measures.pronoun_table``。真模型的 wheel 不在本机时跳过（CI 里失败），见 ``helpers/real_models.py``。
"""


import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from transformer_lab.figures import ch10_real_model
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


def test_chinese_heatmap_opens_on_a_sink_layer(e5):
    """图打开的那一帧和图注说的一样：第 4 层第 1 头，“它”那一行一大半给了句首的 <s>（0.58）；汇点头只在第 2–6 层
    （6 句中文上平均一半以上给 <s>）。反证：原来打开的第 12 层第 1 头没有这么亮的 <s>，第 12 层也没有汇点头。"""
    ex = real_attention_zh()
    assert ex.start == {"layer": 4, "head": 1}
    out = e5.run(sentences.PRONOUN_CASES_ZH[0][0])
    q = out["tokens"].index("它")
    assert round(float(ex.update(**ex.start)["weights"][q, 0]), 2) == 0.58
    assert float(ex.update(layer=12, head=1)["weights"][q, 0]) < 0.5
    by_layer = (measures.attention_by_kind([e5.run(t) for t in sentences.PROBE_ZH])["cls"] >= 0.5).sum(axis=1)
    assert set(np.flatnonzero(by_layer) + 1) == {2, 3, 4, 5, 6} and by_layer[ex.start["layer"] - 1] > 0


def test_static_pronoun_table(minilm):
    ex = pronoun_heads()
    assert ex.sliders == [] and ex.frame_count == 1
    share = ex.update()["right_share"]
    assert share.shape == (2, 6, 12)
    both = ((share > 0.5).all(axis=0))
    assert int(both.sum()) == len(ex.data["table"].resolving_heads())
    wrong = ((share < 0.5).all(axis=0))
    assert int(wrong.sum()) == len(ex.data["table"].wrong_way_heads()) > 0
    np.testing.assert_allclose(share[0] + ex.data["table"].share[0], 2 * share[0])  # 第一句 it = animal：份额就是 animal 的


def test_pronoun_heads_marks_both_controls_and_says_the_same_on_both_layouts(minilm):
    """红色实线框 = 两句都指对，浅蓝色虚线框 = 两句都指错；两种版式的图例、格子里的字都一样（手机上不换成 ✓）。"""
    ex = pronoun_heads()
    table = ex.data["table"]
    right, wrong = len(table.resolving_heads()), len(table.wrong_way_heads())
    for layout in ("wide", "narrow"):
        texts = [t.text for t in ex.texts(layout)]
        assert f"两句都指对：{right} 个头" in texts and f"两句都指错（对照）：{wrong} 个头" in texts, layout
        assert "✓" not in texts and texts.count("对") == int((table.right_share > 0.5).sum()), layout
    frames = [p for ax in ex.figure.axes for p in ax.patches]
    styles = {(tuple(p.get_edgecolor()[:3]), p.get_linestyle()) for p in frames}
    assert len(frames) == 2 * (right + wrong) and len(styles) == 2


def test_similarity_has_a_topic_key_and_always_visible_colours(minilm):
    """图下面有话题的色标；每句左边有一小块固定的色块（相似度接近 0 的横条看不见时，话题的颜色照样看得见）。"""
    ex = real_similarity()
    ex.update(pick=8)
    for layout in ("wide", "narrow"):
        texts = {t.text for t in ex.texts(layout)}
        assert {"话题：猫", "天气", "做饭", "金融"} <= texts, layout
    ax = ex.figure.axes[0]
    swatches = [b for b in ax.patches if b.get_x() < 0]
    assert len(swatches) == 12 and all(b.get_width() > 0.02 for b in swatches)


def test_narrow_layouts_fit_a_phone_and_drop_the_colorbar(heat, minilm):
    for ex in (heat, real_token_heads(), real_similarity(), pronoun_heads()):
        assert ex.layout("wide").size[0] <= 6.8 and ex.layout("narrow").size[0] <= 3.6
    heat.update(**heat.start)
    wide, narrow = ({t.text for t in heat.texts(layout)} for layout in ("wide", "narrow"))
    assert {"0.0", "1.0"} <= wide and not {"0.0", "1.0"} & narrow  # 手机上没有色条（刻度 0.0 … 1.0）
    assert "提问的词元（查询 Query）" in wide and "提问的词元（查询）" in narrow
    assert max(map(len, (t for t in narrow if "\n" in t)), default=0) > 0  # 窄版的标题分成几行


def test_static_frames_stay_small(heat):
    """72 帧（两种版式）：每帧的 PNG 不超过 60 KB（帧按 100 dpi 画，不比显示的宽度小）。"""
    for params in ({"layer": 1, "head": 3}, heat.start, {"layer": 6, "head": 12}):
        for layout in ("wide", "narrow"):
            assert len(heat.png(params, palette=True, layout=layout, dpi=heat.frame_dpi)) < 60_000


# ---------------------------------------------------------------- notebook 算好的结果交给图：图不重算，画的一样


@pytest.fixture
def no_model(monkeypatch):
    """工厂函数里一载入模型就失败：证明交给它的结果它没有重算。"""
    monkeypatch.setattr(ch10_real_model, "load", lambda *a, **k: pytest.fail("图又载入模型重算了"))


def _same_figure(given, default) -> None:
    """两张图画的是同一样东西：滑块、标题、替代文字、帧缓存的钥匙（含数据的内容）都相同，初始帧的数据也相同。"""
    assert (given.sliders, given.title, given.alt) == (default.sliders, default.title, default.alt)
    assert given.cache_key() == default.cache_key()
    for key, value in default.update(**default.start).items():
        np.testing.assert_array_equal(given.update(**given.start)[key], value)


def test_heatmaps_take_the_notebooks_run(minilm, e5, monkeypatch):  # noqa: F811
    en, zh = sentences.PRONOUN_CASES_EN[0][0], sentences.PRONOUN_CASES_ZH[0][0]
    defaults = real_attention(), real_token_heads(), real_attention_zh()
    out, out_zh = minilm.run(en), e5.run(zh)
    monkeypatch.setattr(ch10_real_model, "load", lambda *a, **k: pytest.fail("图又载入模型重算了"))
    given = real_attention(out), real_token_heads(out), real_attention_zh(result=out_zh)
    for g, d in zip(given, defaults):
        _same_figure(g, d)
        assert g.cache_key() is not None  # 钥匙里有数据的内容：同一份帧缓存，notebook 和网站都不必重画
    assert given[0].data["result"] is out  # 原样放进图里，不复制


def test_similarity_takes_the_notebooks_vectors(minilm, no_model):  # noqa: F811
    texts = list(sentences.SIMILARITY_EN)
    v = minilm.sentence_vectors(texts)
    before = v.copy()
    ex = real_similarity(vectors=v)
    np.testing.assert_allclose(ex.update(pick=1)["cosine"], v.astype(np.float64) @ v[0].astype(np.float64))
    np.testing.assert_array_equal(v, before)  # 没有改动交进来的数组
    small = real_similarity(texts[:3], vectors=v[:3])
    assert small.update(pick=2)["cosine"].shape == (3,)


def test_similarity_with_and_without_vectors_is_the_same_figure(minilm):  # noqa: F811
    given = real_similarity(vectors=minilm.sentence_vectors(list(sentences.SIMILARITY_EN)))
    _same_figure(given, real_similarity())
    assert given.cache_key() is not None


def test_pronoun_heads_takes_the_notebooks_table(minilm, monkeypatch):  # noqa: F811
    cases = sentences.PRONOUN_CASES_EN
    table = measures.pronoun_table([minilm.run(t) for t, _ in cases], [w for _, w in cases], "it", ("animal", "street"))
    default = pronoun_heads()
    monkeypatch.setattr(ch10_real_model, "load", lambda *a, **k: pytest.fail("图又载入模型重算了"))
    given = pronoun_heads(table)
    assert given.data["table"] is table
    _same_figure(given, default)


# 不必载入模型的假结果：词元照抄两个模型的分词，注意力是均匀的
EN_TOKENS = ["[CLS]", "the", "animal", "didn", "'", "t", "cross", "the", "street", "because", "it", "was", "too",
             "tired", ".", "[SEP]"]
WIDE_TOKENS = [*EN_TOKENS[:13], "wide", *EN_TOKENS[14:]]  # 同一对里的另一句
E5_TOKENS = ["<s>", "▁The", "▁animal", "▁didn", "'", "t", "▁cross", "▁the", "▁street", "▁because", "▁it", "▁was",
             "▁too", "▁tired", ".", "</s>"]  # 另一个模型读同一句


def fake_run(tokens, layers=6):
    T = len(tokens)
    return {"tokens": list(tokens), "attentions": np.full((layers, 12, T, T), 1 / T, dtype=np.float32)}


def fake_table(candidates=("animal", "street"), tokens=(EN_TOKENS, WIDE_TOKENS)):
    runs = [fake_run(t) for t in tokens]
    return measures.pronoun_table(runs, list(candidates), "it", candidates)


def test_fake_runs_pass_the_checks(no_model):
    """反证的底子是对的：这些假结果本身能画图（报错只来自各行改掉的那一处）。"""
    assert real_attention(fake_run(EN_TOKENS)).frame_count == 72
    assert real_token_heads(fake_run(EN_TOKENS)).frame_count == 6 * len(TOKEN_QUERIES)
    assert pronoun_heads(fake_table()).frame_count == 1
    unit = np.eye(12, 16)
    assert real_similarity(vectors=unit).update(pick=1)["best"].shape == (1,)


HOSTILE_SENTENCES = ["It costs $5 and $6 today.", r"A broken formula $\frac$ here.", r"Paths like C:\new_dir^2 and $x^2$."]


def _literal_width(text: str, size_pt: float) -> float:
    """这段字不当公式、原样排出来有多宽（像素，72 dpi）：和图里那段字的宽度比，就知道图里是不是原样画的。"""
    fig = Figure(dpi=72)
    renderer = FigureCanvasAgg(fig).get_renderer()
    return fig.text(0, 0, text, fontsize=size_pt, parse_math=False).get_window_extent(renderer).width


def test_similarity_draws_the_readers_sentences_literally(no_model):
    """读者自己的句子里有 $、\\、_、^：照原样画出来，不当 mathtext 解析（修复前 "$\\frac$" 让整张图抛 matplotlib 的
    ParseException，"$5 and $6" 被画成斜体的公式 "5and"）。每段字的宽度等于原样排版的宽度。"""
    ex = real_similarity(HOSTILE_SENTENCES, vectors=np.eye(3, 4))
    for layout in ("wide", "narrow"):
        ex.png({"pick": 1}, layout=layout, dpi=72)  # 画得出来，不抛 ParseException
        drawn = {t.text: t for t in ex.texts(layout, dpi=72)}
        for i, sentence in enumerate(HOSTILE_SENTENCES):
            item = drawn[f"{i + 1}. {sentence}"]
            width = item.box[2] - item.box[0]
            assert width == pytest.approx(_literal_width(item.text, item.size_pt), abs=1.0), (layout, sentence)


def test_the_literal_check_can_fail():
    """反证：同一句话当公式排（matplotlib 的默认），宽度和原样排不一样，上面的比较分得出来。"""
    fig = Figure(dpi=72)
    renderer = FigureCanvasAgg(fig).get_renderer()
    text = "1. It costs $5 and $6 today."
    as_math = fig.text(0, 0, text, fontsize=9).get_window_extent(renderer).width
    assert abs(as_math - _literal_width(text, 9)) > 5


VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("similarity-texts-str", call(lambda: real_similarity("A cat.")), TE, r"^texts 必须是字符串的列表或元组"),
    ("similarity-texts-numbers", call(lambda: real_similarity([1, 2, 3])), TE, r"^texts 必须是字符串的列表或元组"),
    ("similarity-texts-4", call(lambda: real_similarity(["a", "b", "c", "d"])), VE, r"^texts 必须有 3、6、9 或 12 句.*4 句"),
    ("similarity-texts-15", call(lambda: real_similarity(["a"] * 15)), VE, r"^texts 必须有 3、6、9 或 12 句.*15 句"),
    ("similarity-texts-empty", call(lambda: real_similarity(["a", " ", "c"])), VE, r"^texts 里的句子不能是空串：第 2 句"),
    ("similarity-vectors-list", call(lambda: real_similarity(vectors=[[1.0, 0.0]] * 12)), TE,
     r"^vectors 必须是 NumPy 数组"),
    ("similarity-vectors-rows", call(lambda: real_similarity(vectors=np.eye(3, 8))), VE,
     r"^vectors 的形状应为 \(12, 任意\)，收到的是 \(3, 8\)"),
    ("similarity-vectors-length", call(lambda: real_similarity(vectors=2 * np.eye(12, 16))), VE,
     r"^vectors 的每一行长度必须是 1.*收到的长度在 2 到 2 之间"),
    ("attention-result-str", call(lambda: real_attention("The animal…")), TE,
     r"^result 必须是 model\.run\(句子\) 返回的字典.*字符串"),
    ("attention-result-no-attentions", call(lambda: real_attention({"tokens": EN_TOKENS})), TE,
     r"^result 必须是 model\.run\(句子\) 返回的字典（含 tokens、attentions）"),
    ("attention-result-shape", call(lambda: real_attention({**fake_run(EN_TOKENS), "attentions": np.ones((6, 12, 5))})),
     VE, r"^result\['attentions'\] 的形状应为 \(任意, 任意, 16, 16\)"),
    ("attention-result-other-sentence", call(lambda: real_attention(fake_run(WIDE_TOKENS))), VE,
     r"^result 必须是 all-MiniLM-L6-v2 读本章那句话“The animal didn't cross the street because it was too tired\.”"
     r"的结果，收到的词元是：\[CLS\] the animal .* too wide \. \[SEP\]"),
    ("attention-result-other-model", call(lambda: real_attention(fake_run(E5_TOKENS, layers=12))), VE,
     r"^result 必须是 all-MiniLM-L6-v2 读本章那句话.*<s> ▁The"),
    ("token-heads-result-other-sentence", call(lambda: real_token_heads(fake_run(WIDE_TOKENS))), VE,
     r"^result 必须是 all-MiniLM-L6-v2 读本章那句话"),
    ("attention-zh-result-english", call(lambda: real_attention_zh(fake_run(E5_TOKENS, layers=12))), VE,
     r"^result 必须是 multilingual-e5-small 读本章那句话“那只动物没有过马路，它太累了。”的结果"),
    ("pronoun-table-runs", call(lambda: pronoun_heads([fake_run(EN_TOKENS)])), TE,
     r"^table 必须是 measures\.pronoun_table\(\.\.\.\) 返回的 PronounTable，收到的是 list"),
    ("pronoun-table-candidates", call(lambda: pronoun_heads(fake_table(("animal", "it")))), VE,
     r"^table 必须是本章两句话.*收到的候选词是 \('animal', 'it'\)"),
    ("pronoun-table-sentences", call(lambda: pronoun_heads(fake_table(tokens=(WIDE_TOKENS, EN_TOKENS)))), VE,
     r"^table 必须是 all-MiniLM-L6-v2 读本章那句话“The animal didn't cross the street because it was too tired\.”"),
]
test_documented_errors = error_table_test(ERROR_CASES)

