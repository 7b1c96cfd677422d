"""pretrained/measures.py：先在手造的注意力上验证每个测量（答案是设计出来的），再在真模型上与逐头的循环对照。"""

import numpy as np
import pytest

from transformer_lab.pretrained import measures, sentences

from helpers.errors import error_table_test

TOKENS = ["[CLS]", "the", "animal", "saw", "the", "street", ",", "it", "was", "tired", ".", "[SEP]"]


def fake_result(attentions, tokens=TOKENS):
    return {"tokens": tokens, "attentions": np.asarray(attentions, dtype=np.float32)}


def test_find_word_and_kinds():
    assert measures.find_word(TOKENS, "the") == [1] and measures.find_word(TOKENS, "the", occurrence=1) == [4]
    assert measures.find_word(["[CLS]", "play", "##ing", "[SEP]"], "Playing") == [1, 2]
    assert measures.find_word(["<s>", "▁The", "▁animal", "</s>"], "animal") == [2]
    assert measures.token_kinds(TOKENS) == ["cls", "word", "word", "word", "word", "word", "punct", "word", "word",
                                            "word", "punct", "sep"]
    assert measures.token_kinds(["<s>", "▁", "。", "▁,", "</s>"]) == ["cls", "word", "punct", "punct", "sep"]


def designed_pair():
    """2 层 × 2 个头。头 (1, 0) 在第一句看 animal、第二句看 street（指对了两句）；头 (0, 1) 两句都只看 animal。"""
    T, it, animal, street = len(TOKENS), 7, 2, 5
    a = np.full((2, 2, 2, T, T), 1.0 / T)  # (句, L, H, T, T)：默认平均
    for n, target in enumerate((animal, street)):
        a[n, 1, 0, it] = np.eye(T)[target] * 0.8 + 0.2 / T
    a[:, 0, 1, it] = np.eye(T)[animal]
    return [fake_result(a[0]), fake_result(a[1])]


def test_pronoun_table_on_designed_heads():
    table = measures.pronoun_table(designed_pair(), ["animal", "street"], "it", ("animal", "street"))
    assert table.weights.shape == (2, 2, 2, 2)
    np.testing.assert_allclose(table.weights[0, 0, 1, 0], 0.8 + 0.2 / 12, rtol=1e-6)  # 头 (1, 0) 第一句给 animal
    np.testing.assert_allclose(table.share[:, 0, 0], 0.5)  # 平均的头：一样多
    assert table.share[0, 0, 1] == 1.0 and table.share[1, 0, 1] == 1.0  # 只看 animal 的头
    assert table.resolving_heads() == [(1, 0)]
    s = table.summary()
    assert s["heads"] == 4 and s["correct_per_sentence"] == [2, 1] and s["resolving"] == 1 and s["best_head"] == (1, 0)
    assert s["best_worst_share"] == pytest.approx((0.8 + 0.2 / 12) / (0.8 + 0.4 / 12))
    np.testing.assert_allclose(table.mass[:, 1, 0], 0.8 + 0.4 / 12, rtol=1e-6)  # 两个候选词一共分到的
    np.testing.assert_allclose(table.mass[:, 0, 0], 2 / 12, rtol=1e-6)  # 平均的头：每个词 1/12
    assert table.resolving_heads(min_mass=0.9) == [] and s["resolving_attentive"] == 1
    assert s["best_mass"] == pytest.approx(0.8 + 0.4 / 12, rel=1e-6)


def test_the_resolving_check_can_fail():
    """反证：把第二句“实际所指”写成 animal，原来指对的头 (1, 0) 就不算了，只看 animal 的头 (0, 1) 反而算。"""
    table = measures.pronoun_table(designed_pair(), ["animal", "animal"], "it", ("animal", "street"))
    assert table.resolving_heads() == [(0, 1)]


def designed_control_pair():
    """designed_pair 再加一个反着变的头 (0, 0)：第一句看 street、第二句看 animal（两句都指错），给两词的总量 7/12。"""
    results = designed_pair()
    T, it, animal, street = len(TOKENS), 7, 2, 5
    for r, target in zip(results, (street, animal)):
        a = r["attentions"].astype(np.float64)
        a[0, 0, it] = np.eye(T)[target] * 0.5 + 0.5 / T
        r["attentions"] = a.astype(np.float32)
    return results


def test_wrong_way_heads_are_the_mirror_control():
    """手算：头 (0, 0) 第一句给 street 0.5 + 0.5/12、给 animal 0.5/12，总量 0.5 + 1/12 = 7/12，
    实际所指 (animal) 的份额 (1/24) / (7/12) = 1/14 < 0.5；第二句正好反过来（实际所指是 street，它却看 animal），
    所以两句都指错。"""
    table = measures.pronoun_table(designed_control_pair(), ["animal", "street"], "it", ("animal", "street"))
    np.testing.assert_allclose(table.right_share[:, 0, 0], 1 / 14, rtol=1e-5)
    np.testing.assert_allclose(table.mass[:, 0, 0], 0.5 + 1 / 12, rtol=1e-5)
    assert table.resolving_heads() == [(1, 0)] and table.wrong_way_heads() == [(0, 0)]
    assert table.wrong_way_heads(min_mass=0.6) == [] and table.wrong_way_heads(min_mass=0.5) == [(0, 0)]
    s = table.summary(min_mass=0.5)
    assert (s["resolving"], s["wrong_way"], s["resolving_attentive"], s["wrong_way_attentive"]) == (1, 1, 1, 1)
    # 只看 animal 的头 (0, 1) 两边都不算：它一对一错
    assert (0, 1) not in table.resolving_heads() + table.wrong_way_heads()
    # 反证：把两句的“实际所指”对调，对和错正好互换
    swapped = measures.pronoun_table(designed_control_pair(), ["street", "animal"], "it", ("animal", "street"))
    assert swapped.resolving_heads() == [(0, 0)] and swapped.wrong_way_heads() == [(1, 0)]


def test_minimal_pairs_on_designed_tables():
    """两组：第一组是上面的表（头 (1, 0) 指对、头 (0, 0) 指错），第二组把实际所指对调（两个头的角色互换）。
    手算：每个头都只在一组里指对、一组里指错；组组都对、组组都错的都是 0 个；4 句，抛硬币的机会 2^-4。"""
    results = designed_control_pair()
    first = measures.pronoun_table(results, ["animal", "street"], "it", ("animal", "street"))
    second = measures.pronoun_table(results, ["street", "animal"], "it", ("animal", "street"))
    r = measures.minimal_pairs([first, second])
    assert (r["pairs"], r["sentences"], r["right_per_pair"], r["wrong_per_pair"]) == (2, 4, [1, 1], [1, 1])
    np.testing.assert_array_equal(r["right_count"], [[1, 0], [1, 0]])
    np.testing.assert_array_equal(r["wrong_count"], [[1, 0], [1, 0]])
    assert (r["right_on_all"], r["wrong_on_all"], r["chance_all"]) == (0, 0, 1 / 16)
    same = measures.minimal_pairs([first, first])  # 同一组算两次：头 (1, 0) 组组都对、头 (0, 0) 组组都错
    assert (same["right_on_all"], same["wrong_on_all"]) == (1, 1)
    assert measures.minimal_pairs([first], min_mass=0.7)["right_on_all"] == 1  # 头 (1, 0) 每句给两词 0.83
    assert measures.minimal_pairs([first], min_mass=0.9)["right_on_all"] == 0


def test_kinds_and_positional_heads_on_designed_attention():
    T = len(TOKENS)
    a = np.zeros((1, 3, T, T))
    a[0, 0, :, -1] = 1.0  # 头 0：全看 [SEP]
    a[0, 1] = np.eye(T, k=-1)
    a[0, 1, 0, 0] = 1.0  # 头 1：看前一个（第一个词元只能看自己）
    a[0, 2] = np.eye(T, k=1)
    a[0, 2, -1, -1] = 1.0  # 头 2：看后一个
    results = [fake_result(a)]
    by_kind = measures.attention_by_kind(results)
    np.testing.assert_allclose(sum(by_kind.values()), 1.0)
    assert by_kind["sep"][0, 0] == 1.0 and measures.sink_heads(by_kind) == {"cls": 0, "sep": 1, "punct": 0, "word": 2}
    np.testing.assert_allclose(by_kind["punct"][0, 1], 2 / T)  # 前一个是标点的查询有两个（"it" 和 "[SEP]"）
    np.testing.assert_allclose(measures.offset_attention(results, -1)[0], [0, 1, 0])
    assert measures.positional_heads(results) == {"before": [(0, 1)], "after": [(0, 2)]}


def test_a_share_of_nothing_is_half_not_nan():
    """0/0 的约定：头 0 在第一句给两个候选词的注意力都是 0（float32 下溢），份额定为 0.5（两不沾）：
    不算指对也不算指错，summary 里没有 NaN。头 1 两句都指对，是唯一的 resolving 头，也是 best_head。"""
    w = np.array([[[[0.0, 0.6]], [[0.0, 0.2]]],      # 第一句：头 0 两个都是 0；头 1 给 x 0.6、y 0.2
                  [[[0.3, 0.1]], [[0.1, 0.5]]]])     # 第二句：头 0 偏 x（指错），头 1 偏 y（指对）
    t = measures.PronounTable(("a", "b"), ("x", "y"), ("x", "y"), w)  # (2 句, 2 个候选, 1 层, 2 个头)
    assert t.share[0, 0, 0] == 0.5 and t.right_share[0, 0, 0] == 0.5  # 0/0 → 0.5，正好
    np.testing.assert_allclose(t.share[:, 0], [[0.5, 0.75], [0.75, 1 / 6]], rtol=1e-12)
    assert t.resolving_heads() == [(0, 1)] and t.wrong_way_heads() == []  # 头 0：一句两不沾、一句指错
    s = t.summary(min_mass=0.0)
    assert s["correct_per_sentence"] == [1, 1] and s["best_head"] == (0, 1)
    assert s["best_worst_share"] == pytest.approx(0.75) and s["best_mass"] == pytest.approx(0.6)
    assert all(np.isfinite(v) for v in (s["best_worst_share"], s["best_mass"]))
    # 反证：直接相除（修之前的写法）在这一格得到 NaN
    with np.errstate(invalid="ignore"):
        assert np.isnan(w[0, 0, 0, 0] / (w[0, 0, 0, 0] + w[0, 1, 0, 0]))


def test_a_bare_string_is_not_a_sequence_of_tokens():
    """一个字符串不能当词元列表：修之前 candidates="xy" 被当成两个候选词 x、y，expected="xy" 被当成两句的答案。"""
    results = designed_pair()
    for kwargs in ({"candidates": "as"}, {"expected": "as"}):
        args = {"expected": ["animal", "street"], "candidates": ("animal", "street")} | kwargs
        with pytest.raises(TypeError, match=r"必须是字符串的列表或元组，收到的是 字符串"):
            measures.pronoun_table(results, args["expected"], "it", args["candidates"])
    with pytest.raises(TypeError, match=r"tokens 必须是字符串的列表或元组"):
        measures.token_kinds("[CLS] hi [SEP]")


# ---------------------------------------------------------------- 真模型：与逐头循环对照


def test_pronoun_table_on_minilm_equals_a_plain_loop(minilm):
    results = [minilm.run(t) for t, _ in sentences.PRONOUN_CASES_EN]
    table = measures.pronoun_table(results, [e for _, e in sentences.PRONOUN_CASES_EN], "it", ("animal", "street"))
    it, animal, street = (results[0]["tokens"].index(w) for w in ("it", "animal", "street"))
    resolving = []
    for layer in range(6):
        for head in range(12):
            tired, wide = (r["attentions"][layer, head, it] for r in results)
            if tired[animal] > tired[street] and wide[street] > wide[animal]:
                resolving.append((layer, head))
    assert table.resolving_heads() == resolving
    s = table.summary()
    print(f"it → animal/street：每句指对的头 {s['correct_per_sentence']} / {s['heads']}，两句都对 {s['resolving']} 个，"
          f"其中每句都给两个候选词 ≥ 10% 注意力的 {s['resolving_attentive']} 个；"
          f"最稳的 {s['best_head']}（最差一句 {s['best_worst_share']:.2f}，只给两词 {s['best_mass']:.3f}）")
    assert s["heads"] == 72 and 0 <= s["resolving"] <= 72


def test_every_minimal_pair_lines_up_and_the_counts_equal_a_plain_loop(minilm):
    """独立参照：每组两句只差一个词元（位置一一对上）；每个头在每组里“都指对 / 都指错”用逐头的循环直接比
    两个候选词的注意力（不经过份额），再和 ``minimal_pairs`` 的每一个数对照。"""
    tables, right, wrong = [], np.zeros((6, 12), int), np.zeros((6, 12), int)
    for pronoun, candidates, pair in sentences.MINIMAL_PAIRS_EN:
        results = [minilm.run(text) for text, _ in pair]
        a, b = (r["tokens"] for r in results)
        assert len(a) == len(b) and sum(x != y for x, y in zip(a, b)) == 1, (a, b)
        tables.append(measures.pronoun_table(results, [w for _, w in pair], pronoun, candidates))
        q = a.index(pronoun)
        cols = [[i for i, t in enumerate(a) if t == c] for c in candidates]  # 候选词在这几句里都是一个词元
        assert all(len(c) == 1 for c in cols), cols
        for layer in range(6):
            for head in range(12):
                says = []
                for r, (_, who) in zip(results, pair):
                    row = r["attentions"][layer, head, q]
                    first_more = row[cols[0][0]] > row[cols[1][0]]
                    says.append(first_more == (who == candidates[0]))
                right[layer, head] += all(says)
                wrong[layer, head] += not any(says)
    r = measures.minimal_pairs(tables)
    np.testing.assert_array_equal(r["right_count"], right)
    np.testing.assert_array_equal(r["wrong_count"], wrong)
    assert r["right_on_all"] == int((right == len(tables)).sum()) and r["sentences"] == 2 * len(tables)
    print(f"{len(tables)} 组最小对照：每组都指对 {r['right_per_pair']}，都指错 {r['wrong_per_pair']}；"
          f"组组都对 {r['right_on_all']} 个，组组都错 {r['wrong_on_all']} 个")


def test_first_layer_share_cannot_see_the_last_word(minilm):
    """第 1 层里 it 的查询、animal 和 street 的键都只由词本身和位置决定，与句末的 tired / wide 无关，
    所以 softmax 里两者之比 e^{s_animal} / e^{s_street} 也无关：两句的比例完全一样。从第 2 层起上下文才流进来。"""
    results = [minilm.run(t) for t, _ in sentences.PRONOUN_CASES_EN]
    table = measures.pronoun_table(results, [e for _, e in sentences.PRONOUN_CASES_EN], "it", ("animal", "street"))
    change = np.abs(table.share[0] - table.share[1])  # (L, H)
    assert change[0].max() < 1e-5  # 第 1 层：只差 float32 的舍入
    assert change[1:].max() > 0.1  # 之后的层：真的变了


def test_sinks_and_positional_heads_on_minilm_equal_a_plain_loop(minilm):
    results = [minilm.run(t) for t in sentences.PROBE_EN]
    by_kind = measures.attention_by_kind(results)
    previous = measures.offset_attention(results, -1)
    for layer, head in [(0, 0), (2, 5), (5, 11)]:
        cls_mass = np.mean([r["attentions"][layer, head, :, 0].mean() for r in results])
        prev = np.mean([np.mean([r["attentions"][layer, head, t, t - 1] for t in range(1, len(r["tokens"]))])
                        for r in results])
        assert by_kind["cls"][layer, head] == pytest.approx(cls_mass, rel=1e-6)
        assert previous[layer, head] == pytest.approx(prev, rel=1e-6)
    counts = measures.sink_heads(by_kind)
    print(f"MiniLM 汇点头（≥ 一半注意力）：{counts}；看前/后一个词的头：{measures.positional_heads(results)}")


def test_chinese_pronoun_table_runs_on_e5(e5):
    results = [e5.run(t) for t, _ in sentences.PRONOUN_CASES_ZH]
    table = measures.pronoun_table(results, [x for _, x in sentences.PRONOUN_CASES_ZH], "它", ("动物", "马路"))
    assert table.weights.shape == (2, 2, 12, 12)
    np.testing.assert_array_less(0, table.weights)  # 每个头都多少看一点


ERROR_CASES = [
    ("word-missing", lambda: measures.find_word(TOKENS, "dog"), ValueError,
     r"word='dog' 在这句话的词元里找不到第 1 处（找到 0 处）。词元是：\[CLS\] the animal"),
    ("word-occurrence", lambda: measures.find_word(TOKENS, "the", occurrence=2), ValueError, r"找不到第 3 处（找到 2 处）"),
    ("three-candidates", lambda: measures.pronoun_table(designed_pair(), ["a", "b"], "it", ("a", "b", "c")), ValueError,
     r"candidates 必须恰好是两个候选词，收到 3 个"),
    ("expected-not-candidate", lambda: measures.pronoun_table(designed_pair(), ["animal", "dog"], "it",
                                                              ("animal", "street")), ValueError,
     r"expected 要给每一句写明.*收到 2 句、\['animal', 'dog'\]"),
    ("pairs-empty", lambda: measures.minimal_pairs([]), TypeError, r"tables 必须是 pronoun_table\(\.\.\.\) 返回的 PronounTable 的非空列表"),
    ("pairs-not-tables", lambda: measures.minimal_pairs([np.zeros(3)]), TypeError, r"PronounTable 的非空列表（每组对照句一张），收到的是 list"),
    ("pairs-two-models", lambda: measures.minimal_pairs([
        measures.PronounTable(("a", "b"), ("x", "y"), ("x", "y"), np.ones((2, 2, 1, 1))),
        measures.PronounTable(("a", "b"), ("x", "y"), ("x", "y"), np.ones((2, 2, 2, 1)))]), ValueError,
     r"tables 必须来自同一个模型（层数、头数相同），收到的 \(L, H\) 有 \[\(1, 1\), \(2, 1\)\]"),
    ("word-tokens-none", lambda: measures.find_word(None, "the"), TypeError, r"tokens 必须是字符串的列表或元组.*NoneType"),
    ("word-empty", lambda: measures.find_word(TOKENS, ""), TypeError, r"word 必须是非空的字符串"),
    ("word-occurrence-negative", lambda: measures.find_word(TOKENS, "the", occurrence=-1), ValueError, r"occurrence 必须是非负整数"),
    ("results-empty", lambda: measures.offset_attention([], 1), TypeError, r"results 必须是非空的列表"),
    ("results-none", lambda: measures.positional_heads(None), TypeError, r"results 必须是非空的列表.*NoneType"),
    ("results-no-attentions", lambda: measures.attention_by_kind([{"tokens": ["a"]}]), TypeError,
     r"results\[0\] 必须是 model\.run\(句子\) 的结果（含 tokens、attentions）"),
    ("results-shape", lambda: measures.offset_attention([{"tokens": ["a", "b"], "attentions": np.ones((1, 1, 3, 3))}], 1),
     ValueError, r"results\[0\]\['attentions'\] 的形状应为 \(任意, 任意, 2, 2\)"),
    ("offset-zero", lambda: measures.offset_attention([{"tokens": ["a"], "attentions": np.ones((1, 1, 1, 1))}], 0), TypeError,
     r"offset 必须是非零整数"),
    ("offset-no-neighbour", lambda: measures.offset_attention([{"tokens": ["a"], "attentions": np.ones((1, 1, 1, 1))}], 1),
     ValueError, r"offset=1：每句话都不到 2 个词元.*0/0"),
    ("check-results-tokens-not-str", lambda: measures.check_results([{"tokens": [1], "attentions": np.ones((1, 1, 1, 1))}]),
     TypeError, r"results\[0\]\['tokens'\] 必须是字符串的列表或元组"),
]
ZERO = measures.PronounTable(("a",), ("x",), ("x", "y"), np.zeros((1, 2, 1, 1)))
ONE_RESULT = [fake_result(np.full((1, 1, len(TOKENS), len(TOKENS)), 1 / len(TOKENS)))]
ERROR_CASES += [
    ("candidates-bare-string", lambda: measures.pronoun_table(designed_pair(), ["a", "s"], "it", "as"), TypeError,
     r"candidates 必须是字符串的列表或元组，收到的是 字符串 'as'"),
    ("expected-bare-string", lambda: measures.pronoun_table(designed_pair(), "as", "it", ("a", "s")), TypeError,
     r"expected 必须是字符串的列表或元组，收到的是 字符串 'as'"),
    ("pronoun-empty", lambda: measures.pronoun_table(designed_pair(), ["animal", "street"], "", ("animal", "street")),
     TypeError, r"pronoun 必须是非空的字符串"),
    ("pronoun-results-none", lambda: measures.pronoun_table(None, [], "it", ("a", "b")), TypeError,
     r"results 必须是非空的列表"),
    ("kinds-bare-string", lambda: measures.token_kinds("[CLS] hi"), TypeError,
     r"tokens 必须是字符串的列表或元组，收到的是 字符串 '\[CLS\] hi'"),
    ("kinds-empty", lambda: measures.token_kinds([]), ValueError, r"tokens 不能为空"),
    ("token-text-type", lambda: measures.token_text(None), TypeError, r"token 必须是字符串（一个词元），收到的是 NoneType"),
    ("table-weights-nan", lambda: measures.PronounTable(("a",), ("x",), ("x", "y"), np.full((1, 2, 1, 1), np.nan)),
     ValueError, r"weights 含有 NaN"),
    ("table-weights-negative", lambda: measures.PronounTable(("a",), ("x",), ("x", "y"), -np.ones((1, 2, 1, 1))),
     ValueError, r"weights 是注意力权重，不能是负数"),
    ("table-weights-shape", lambda: measures.PronounTable(("a",), ("x",), ("x", "y"), np.ones((1, 3, 1, 1))),
     ValueError, r"weights 的形状应为 \(任意, 2, 任意, 任意\)"),
    ("table-weights-list", lambda: measures.PronounTable(("a",), ("x",), ("x", "y"), [[[[1.0]], [[1.0]]]]),
     TypeError, r"weights 必须是 NumPy 数组"),
    ("table-sentence-count", lambda: measures.PronounTable(("a", "b"), ("x",), ("x", "y"), np.ones((1, 2, 1, 1))),
     ValueError, r"sentences、expected、weights 的句数必须相同，收到 2、1、1"),
    ("min-mass-nan", lambda: ZERO.resolving_heads(min_mass=float("nan")), ValueError, r"min_mass 必须是有限实数，收到的是 nan"),
    ("min-mass-str", lambda: ZERO.wrong_way_heads(min_mass="0.1"), TypeError, r"min_mass 必须是实数，收到的是 字符串 '0.1'"),
    ("min-mass-bool", lambda: ZERO.summary(min_mass=True), TypeError, r"min_mass 必须是实数，收到的是 bool"),
    ("min-mass-above-one", lambda: ZERO.summary(min_mass=1.5), ValueError, r"min_mass 是注意力的份量，必须在 0 到 1 之间，收到的是 1.5"),
    ("pairs-min-mass-nan", lambda: measures.minimal_pairs([ZERO], min_mass=np.nan), ValueError, r"min_mass 必须是有限实数"),
    ("pairs-min-mass-negative", lambda: measures.minimal_pairs([ZERO], min_mass=-0.1), ValueError, r"min_mass .*0 到 1 之间"),
    ("sink-threshold-nan", lambda: measures.sink_heads({"cls": np.zeros((1, 1))}, threshold=np.nan), ValueError,
     r"threshold 必须是有限实数"),
    ("sink-threshold-str", lambda: measures.sink_heads({"cls": np.zeros((1, 1))}, threshold="0.5"), TypeError,
     r"threshold 必须是实数，收到的是 字符串 '0.5'"),
    ("sink-by-kind-list", lambda: measures.sink_heads([np.zeros((1, 1))]), TypeError,
     r"by_kind 必须是 attention_by_kind\(\.\.\.\) 返回的"),
    ("positional-threshold-nan", lambda: measures.positional_heads(ONE_RESULT, threshold=float("nan")), ValueError,
     r"threshold 必须是有限实数"),
    ("positional-threshold-above-one", lambda: measures.positional_heads(ONE_RESULT, threshold=2), ValueError,
     r"threshold 是注意力的份量，必须在 0 到 1 之间，收到的是 2.0"),
]
test_documented_errors = error_table_test(ERROR_CASES)
