"""lessons/toy_sentences.py（+ toy_lexicon.py 的数据表）：第 2 章的玩具句子与两轮"讨论"。

四类测试：书里手算的数、独立的参考实现（纯 Python 循环）、Hypothesis 性质、这一章的结论逐条检验。
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import transformer_lab as tl
from transformer_lab.lessons import toy_lexicon
from transformer_lab.lessons import toy_sentences as toy

from helpers.errors import call, error_table_test

D = len(toy.FEATURES)
ALL_VARIANTS = [(name, v) for name in toy.sentence_names() for v in toy.variant_names(name)]


def col(feature):
    return toy.FEATURES.index(feature)


# ---------------------------------------------------------------- 1. 书里手算的数


def test_features_and_sentences_are_the_books():
    assert D == 12 and len(set(toy.FEATURES)) == D
    s = toy.toy_sentence("animal")
    assert " ".join(s.tokens) == "The animal didn't cross the street because it was too tired ."
    assert (s.tokens[s.pronoun], s.tokens[s.predicate], s.referent) == ("it", "tired", "animal")
    z = toy.toy_sentence("apple")
    assert "".join(z.tokens) == "小明把苹果递给小红，因为她饿了"
    assert (z.tokens[z.pronoun], z.tokens[z.predicate], z.referent) == ("她", "饿了", "小红")
    assert toy.variant_names("apple") == ("她饿了", "它很甜", "他很大方")


def test_round_one_it_finds_tired_by_hand():
    # q_it = 4 on 三个描述维；k_tired = 3 on 描述活物 → q·k = 12，÷√12 = √12；其余 11 个分数是 0
    s = toy.toy_sentence("animal")
    _, w1 = toy.attention_turn(s.x, 1)
    expected = math.exp(math.sqrt(12)) / (math.exp(math.sqrt(12)) + 11)
    assert w1[s.pronoun, s.predicate] == pytest.approx(expected, rel=1e-12)
    assert round(expected, 3) == 0.744
    others = np.delete(w1[s.pronoun], s.predicate)
    np.testing.assert_allclose(others, 1 / (math.exp(math.sqrt(12)) + 11), rtol=1e-12)


def test_round_two_it_finds_animal_by_hand():
    s = toy.toy_sentence("animal")
    states, (w1, w2) = toy.discuss(s.x)
    a = w1[s.pronoun, s.predicate]
    assert states[1][s.pronoun, col("描述活物")] == pytest.approx(a)  # 听到的线索 = 0.744 份"描述活物"
    score = 4 * a * 4 / math.sqrt(12)  # q_it = 4a on 是动物；k_animal = 4 on 是动物
    expected = math.exp(score) / (math.exp(score) + 11)
    assert w2[s.pronoun, 1] == pytest.approx(expected, rel=1e-12)
    assert round(expected, 3) == 0.738


def test_she_prefers_xiaohong_by_hand():
    z = toy.toy_sentence("apple")
    _, (w1, w2) = toy.discuss(z.x)
    a = w1[z.pronoun, z.predicate]
    assert a == pytest.approx(math.exp(math.sqrt(12)) / (math.exp(math.sqrt(12)) + 8))
    s_ming = 4 * a * 4 / math.sqrt(12)  # 只有"是人"对上
    s_hong = (4 * a * 4 + 2 * 4) / math.sqrt(12)  # "是人" + "是女性" 都对上
    total = math.exp(s_hong) + math.exp(s_ming) + 7
    assert w2[z.pronoun, 4] == pytest.approx(math.exp(s_hong) / total)
    assert w2[z.pronoun, 0] == pytest.approx(math.exp(s_ming) / total)


def test_words_without_a_question_listen_evenly():
    s = toy.toy_sentence("animal")
    _, w1 = toy.attention_turn(s.x, 1)
    np.testing.assert_allclose(w1[0], np.full(12, 1 / 12))  # "The" 的查询全是 0 → 平均


def test_explain_matrix_reads_the_rules():
    w_q2 = toy.turn_weights(2)[0]
    assert toy.explain_matrix(w_q2).splitlines() == [
        "指女性 → 是女性 ×2", "指男性 → 是男性 ×2", "描述活物 → 是动物 ×4, 是人 ×4",
        "描述地点 → 是地点 ×4", "描述食物 → 是食物 ×4"]
    assert toy.explain_matrix(np.zeros((D, D))) == "（全是 0）"


# ---------------------------------------------------------------- 2. 参考实现：纯 Python 循环


def ref_round(x, w_q, w_k, w_v):
    """逐个元素算 q、k、v、分数、softmax、加权和，再加上原来的 x。"""
    T = len(x)
    mat = lambda a, w: [[sum(a[i][f] * w[f][g] for f in range(D)) for g in range(D)] for i in range(T)]  # noqa
    q, k, v = mat(x, w_q), mat(x, w_k), mat(x, w_v)
    weights, new_x = [], []
    for i in range(T):
        scores = [sum(q[i][c] * k[j][c] for c in range(D)) / math.sqrt(D) for j in range(T)]
        m = max(scores)
        e = [math.exp(s - m) for s in scores]
        row = [ej / sum(e) for ej in e]
        weights.append(row)
        new_x.append([x[i][g] + sum(row[j] * v[j][g] for j in range(T)) for g in range(D)])
    return new_x, weights


@pytest.mark.parametrize("name, variant", ALL_VARIANTS)
def test_two_rounds_match_a_plain_loop(name, variant):
    s = toy.toy_sentence(name, variant)
    states, weights = toy.discuss(s.x)
    x = s.x.tolist()
    for turn in (1, 2):
        x, w = ref_round(x, *(m.tolist() for m in toy.turn_weights(turn)))
        np.testing.assert_allclose(weights[turn - 1], w, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(states[turn], x, rtol=1e-12, atol=1e-15)


def test_round_uses_the_package_attention():
    s = toy.toy_sentence("apple", "它很甜")
    w_q, w_k, w_v = toy.turn_weights(2)
    out, w = tl.scaled_dot_product_attention(s.x @ w_q, s.x @ w_k, s.x @ w_v)
    x_new, w_round = toy.attention_turn(s.x, 2)
    np.testing.assert_array_equal(w_round, w)
    np.testing.assert_array_equal(x_new, s.x + out)


# ---------------------------------------------------------------- 3. 这一章的结论，逐条检验


@pytest.mark.parametrize("name, variant", ALL_VARIANTS)
def test_pronoun_points_clearly_to_the_referent(name, variant):
    s = toy.toy_sentence(name, variant)
    _, (w1, w2) = toy.discuss(s.x)
    assert int(w1[s.pronoun].argmax()) == s.predicate  # 第 1 轮：找到线索
    row = w2[s.pronoun]
    best, runner_up = np.sort(row)[::-1][:2]
    assert s.tokens[int(row.argmax())] == s.referent and best > 0.7 and best > 8 * runner_up


def test_changing_one_word_moves_the_pronoun():
    rows = {v: toy.discuss(toy.toy_sentence("animal", v).x)[1][1][7] for v in ("tired", "wide")}
    assert rows["tired"][1] > 0.7 and rows["wide"][5] > 0.7  # animal 列、street 列
    assert rows["tired"][5] < 0.05 and rows["wide"][1] < 0.05


def test_one_round_cannot_tell_animal_from_street():
    # 只做第 2 轮（跳过找线索）：it 的查询是 0，animal 和 street 平分
    for v in ("tired", "wide"):
        _, w = toy.attention_turn(toy.toy_sentence("animal", v).x, 2)
        assert w[7, 1] == pytest.approx(w[7, 5])


def test_spoken_ta_cannot_choose_between_the_two_people():
    tokens = list(toy.toy_sentence("apple").tokens)
    tokens[7] = "tā"
    _, (_, w2) = toy.discuss(toy.embed(tokens))
    assert w2[7, 0] == pytest.approx(w2[7, 4]) and w2[7, 0] > 0.4


def test_every_word_is_updated():
    s = toy.toy_sentence("animal")
    states, weights = toy.discuss(s.x)
    assert np.all(np.linalg.norm(states[2] - states[0], axis=1) > 0)
    for w in weights:
        np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=1e-12)


def test_returned_arrays_are_fresh_copies():
    w_q = toy.turn_weights(1)[0]
    w_q[:] = 99.0
    assert toy.turn_weights(1)[0].max() == 4.0
    s = toy.toy_sentence("animal")
    s.x[:] = 7.0
    assert toy.toy_sentence("animal").x.max() == 1.0
    x = toy.toy_sentence("apple").x
    before = x.copy()
    toy.discuss(x)
    np.testing.assert_array_equal(x, before)  # 不改输入


def test_module_tables_are_read_only():
    with pytest.raises(TypeError):
        toy_lexicon.LEXICON["cat"] = ("是动物",)
    with pytest.raises(TypeError):
        toy_lexicon.SENTENCES["dog"] = None


# ---------------------------------------------------------------- Hypothesis 性质

WEIGHTS = hnp.arrays(np.float64, (D, D), elements=st.floats(-3, 3))
ROWS = hnp.arrays(np.float64, (D,), elements=st.floats(-2, 2))


@given(WEIGHTS, WEIGHTS, ROWS)
def test_one_round_keeps_the_animal_street_ratio(w_q, w_k, new_predicate):
    """任何一组 W_Q、W_K：一轮之内，换掉描述词不改变 it 对 animal 与 street 的权重之比。"""
    s = toy.toy_sentence("animal")
    x2 = np.vstack([s.x[:s.predicate], new_predicate[None], s.x[s.predicate + 1:]])
    ratios = []
    for x in (s.x, x2):
        _, w = tl.scaled_dot_product_attention(x @ w_q, x @ w_k, x)
        ratios.append(math.log(w[s.pronoun, 1]) - math.log(w[s.pronoun, 5]))
    assert ratios[0] == pytest.approx(ratios[1], abs=1e-9)


@given(st.sampled_from(ALL_VARIANTS), st.randoms(use_true_random=False))
def test_discuss_is_permutation_equivariant(case, random):
    """没有位置信息：打乱词序，权重矩阵跟着同样打乱。"""
    x = toy.toy_sentence(*case).x
    perm = np.array(random.sample(range(len(x)), len(x)))
    (states, weights), (states_p, weights_p) = toy.discuss(x), toy.discuss(x[perm])
    np.testing.assert_allclose(weights_p[1], weights[1][perm][:, perm], atol=1e-12)
    np.testing.assert_allclose(states_p[2], states[2][perm], atol=1e-12)


@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=1, max_side=1).map(lambda s: (s[0] + 1, D)),
                  elements=st.floats(-5, 5)))
def test_rounds_give_probability_rows(x):
    states, weights = toy.discuss(x)
    for w in weights:
        assert np.all(w >= 0) and np.allclose(w.sum(axis=1), 1.0)
    assert all(np.all(np.isfinite(s)) for s in states)


@pytest.mark.parametrize("tokens, text", [
    (toy.toy_sentence("animal").tokens, "The animal didn't cross the street because it was too tired."),
    (toy.toy_sentence("apple", "它很甜").tokens, "小明把苹果递给小红，因为它很甜"),
])
def test_sentence_text(tokens, text):
    assert toy.sentence_text(tokens) == text


def test_top_level_alias():
    assert tl.toy_sentences is toy


# ---------------------------------------------------------------- 坏输入

VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("toy-name-unknown", lambda: toy.toy_sentence("cat"), ValueError, r"name='cat' 不存在.*'animal'、'apple'"),
    ("toy-name-int", lambda: toy.toy_sentence(3), TypeError, r"name 必须是字符串.*int 3.*'animal'"),
    ("toy-variant-unknown", lambda: toy.toy_sentence("animal", "sleepy"), ValueError,
     r"variant='sleepy' 不存在.*'tired'、'hungry'、'wide'、'crowded'"),
    ("toy-variant-other-sentence", lambda: toy.toy_sentence("apple", "tired"), ValueError, r"variant='tired' 不存在.*'她饿了'"),
    ("toy-variant_names-unknown", lambda: toy.variant_names("dog"), ValueError, r"name='dog' 不存在"),
    ("toy-embed-unknown-word", lambda: toy.embed(["the", "cat"]), ValueError, r"tokens 里的词='cat' 不存在.*'animal'"),
    ("toy-embed-empty", lambda: toy.embed([]), ValueError, r"tokens 不能为空"),
    ("toy-embed-string", lambda: toy.embed("the animal"), TypeError, r"tokens 必须是字符串的列表或元组.*字符串 'the animal'"),
    ("toy-embed-non-string", lambda: toy.embed(["the", 1]), TypeError, r"tokens 必须是字符串的列表或元组.*list"),
    ("toy-turn-3", lambda: toy.turn_weights(3), ValueError, r"turn 只能是 1（找线索）或 2（找指代），收到的是 3"),
    ("toy-turn-0", lambda: toy.turn_weights(0), ValueError, r"turn 必须是正整数.*0"),
    ("toy-turn-string", lambda: toy.turn_weights("1"), TypeError, r"turn 必须是正整数.*'1'"),
    ("toy-turn-bool", lambda: toy.turn_weights(True), TypeError, r"turn 必须是正整数.*bool"),
    ("toy-round-x-shape", lambda: toy.attention_turn(np.ones((3, 5)), 1), ValueError, r"x 的形状应为 \(任意, 12\).*\(3, 5\)"),
    ("toy-round-x-list", lambda: toy.attention_turn([[0.0] * D], 1), TypeError, r"x 必须是 NumPy 数组.*list"),
    ("toy-discuss-nan", lambda: toy.discuss(np.full((2, D), np.nan)), ValueError, r"x 含有 NaN"),
    ("toy-explain-shape", lambda: toy.explain_matrix(np.eye(3)), ValueError, r"w 的形状应为 \(12, 12\).*\(3, 3\)"),
    ("sentence_text-ints", call(toy.sentence_text, [1, 2]), TE, r"tokens 必须是字符串的列表或元组"),
    ("sentence_text-empty", call(toy.sentence_text, ()), VE, r"tokens 不能为空"),
    ("sentence_text-str", call(toy.sentence_text, "abc"), TE, r"tokens 必须是字符串的列表或元组.*'abc'"),
]
test_documented_errors = error_table_test(ERROR_CASES)
