"""第 2 章的图讲的事实：it → animal（换成 wide 就 → street），她 → 小红；权重是手工设计的，图上写明。

只用 ``ex.update``（算数据，不画图）；画图的约定在 tests/test_explorables.py 里对所有图统一检查。
"""

import warnings

import numpy as np
import pytest
from conftest import call, error_table_test

import transformer_lab as tl
from transformer_lab.figures import ch02_self_attention as ch02
from transformer_lab.lessons import toy_sentences as toy
from transformer_lab.plot import new_figure

SENTENCES = toy.sentence_names()


@pytest.fixture(scope="module", params=SENTENCES)
def explorer(request):
    return request.param, ch02.attention_explorer(request.param)


def test_explorer_starts_on_the_pronoun_in_round_two(explorer):
    name, ex = explorer
    s = toy.toy_sentence(name)
    assert ex.start == {"query": s.tokens[s.pronoun], "turn": "第 2 轮"}


def test_explorer_rows_are_the_discussion_weights(explorer):
    name, ex = explorer
    s = toy.toy_sentence(name)
    _, weights = toy.discuss(s.x)
    for i, tok in enumerate(s.tokens):
        for t, turn in enumerate(ch02.TURNS):
            drawn = ex.update(query=tok, turn=turn)
            np.testing.assert_array_equal(drawn["row"], weights[t][i])
            np.testing.assert_array_equal(drawn["weights"], weights[t])


def test_the_pronoun_finds_its_referent_in_round_two(explorer):
    name, ex = explorer
    s = toy.toy_sentence(name)
    row = ex.update(**ex.start)["row"]
    assert s.tokens[int(row.argmax())] == s.referent  # it → animal，她 → 小红


@pytest.mark.parametrize("name", SENTENCES)
def test_shift_moves_to_the_referent(name):
    ex = ch02.pronoun_shift(name)
    for variant in toy.variant_names(name):
        s = toy.toy_sentence(name, variant)
        drawn = ex.update(variant=variant)
        assert int(drawn["turn1"].argmax()) == s.predicate  # 第 1 轮：找到换掉的那个描述词
        assert s.tokens[int(drawn["turn2"].argmax())] == s.referent  # 第 2 轮：指向人读出的对象


def test_figures_say_the_weights_are_hand_designed(rendered):
    for name in ("attention_explorer", "pronoun_shift"):
        ex = rendered(name).ex
        assert ch02.ILLUSTRATIVE_NOTE in ex.figure.get_suptitle()
        assert all(ch02.ILLUSTRATIVE_NOTE in ex.alt_text(**p) for p in ex.grid())


@pytest.mark.parametrize("factory", [ch02.attention_explorer, ch02.pronoun_shift])
def test_chinese_sentence_draws_without_missing_glyphs(factory):
    """目录里的图默认是英文句子；中文句子的初始帧也要画得出来（缺字会发出警告）。"""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ex = factory("apple")
        assert ex.png(ex.start).startswith(b"\x89PNG")


def test_feature_heatmap_draws_every_nonzero_value():
    s = toy.toy_sentence("apple")
    fig, (ax,) = new_figure(7, 5)
    heat = ch02.feature_heatmap(s.x, list(s.tokens), ax=ax, title="t")
    np.testing.assert_array_equal(heat.image.get_array(), s.x)
    assert len(heat.texts) == int(np.count_nonzero(s.x))
    assert [t.get_text() for t in ax.get_xticklabels()] == list(toy.FEATURES)


# ---------------------------------------------------------------- 工厂的参数（滑块取值的检查属于可交互图引擎 widgets/，不在这里）

VE = ValueError
ERROR_CASES = [
    ("toy-explorer-unknown", lambda: ch02.attention_explorer("cat"), ValueError, r"sentence='cat' 不存在"),
    ("explorer-sentence-bogus", call(lambda: tl.explore.attention_explorer(sentence="bogus")), VE,
     r"^sentence='bogus' 不存在"),
    ("pronoun_shift-unknown", call(lambda: tl.explore.pronoun_shift("cat")), VE, r"sentence='cat' 不存在"),
    ("toy-feature-heatmap-shape", lambda: ch02.feature_heatmap(np.ones((2, 3)), ["a", "b"]), ValueError,
     r"^x 的形状 \(2, 3\).*\(2, 12\)"),
    ("feature-heatmap-names-x", call(lambda: tl.explore.feature_heatmap(np.ones((2, 3)), ["a", "b"])), VE, r"^x 的形状"),
]
test_documented_errors = error_table_test(ERROR_CASES)
