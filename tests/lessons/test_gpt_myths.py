"""lessons/gpt_myths.py：第 9 章四个常见误区的计算——贪心打转（find_loop）、温度不改打分（temperature_effect）、
改后面的字前面不变（future_influence）、与原文的重合（ngram_overlap、longest_copy）。"""

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.lessons import gpt_myths as myths
from transformer_lab.lessons import tiny_gpt as gpt

from helpers.errors import check_error


def model(seed=0, V=12, context=40, D=16, L=2):
    config = gpt.GPTConfig(V, d_model=D, num_layers=L, num_heads=4, d_ff=2 * D, context=context)
    return gpt.init_gpt(config, np.random.default_rng(seed))


P = model()

ERROR_CASES = [
    ("loop-type", lambda: myths.find_loop([1, 1, 1]), TypeError, "seq 必须是字符串或一维整数数组"),
    ("loop-repeats", lambda: myths.find_loop("aaa", min_repeats=1), ValueError, "min_repeats 必须是不小于 2 的整数"),
    ("temperatures", lambda: myths.temperature_effect(np.zeros(3), []), ValueError, "temperatures 必须是非空"),
    ("temperatures-negative", lambda: myths.temperature_effect(np.zeros(3), [1.0, -0.5]), ValueError,
     r"temperatures\[1\] 必须是有限的非负实数.*-0\.5"),
    ("temperatures-huge-int", lambda: myths.temperature_effect(np.zeros(3), [10**400]), ValueError,
     r"temperatures\[0\] 太大了，超出 float64 的范围"),
    ("temperatures-logits-list", lambda: myths.temperature_effect([1.0, 2.0], [1.0]), TypeError,
     "logits 必须是 NumPy 数组"),
    ("future-position", lambda: myths.future_influence(P, np.array([1, 2]), 2, 0), ValueError,
     r"position=2 越界"),
    ("future-replacement", lambda: myths.future_influence(P, np.array([1, 2]), 1, 12), ValueError,
     r"replacement=12 越界"),
    ("ngram-short", lambda: myths.ngram_overlap("注意", "注意力", 3), ValueError, "比 n=3 短"),
    ("ngram-type", lambda: myths.ngram_overlap("注意", None, 1), TypeError, "reference 必须是非空字符串"),
    ("copy-empty", lambda: myths.longest_copy("", "注意力"), ValueError, "text 必须是非空字符串，收到的是空字符串"),
    # 随长度的平方增长的查找：动手之前先查长度（修复前：找圈算上几秒到几小时，n-gram 存上 GB 的切片，或 MemoryError）
    ("loop-too-long", lambda: myths.find_loop("的" * (myths.MAX_LOOP_LENGTH + 1)), ValueError,
     rf"seq 太长：收到 {myths.MAX_LOOP_LENGTH + 1} 个字，上限是 MAX_LOOP_LENGTH = {myths.MAX_LOOP_LENGTH}.*平方"),
    ("loop-too-long-ids", lambda: myths.find_loop(np.zeros(myths.MAX_LOOP_LENGTH + 1, dtype=int)), ValueError,
     r"seq 太长.*提示：只看结尾的一段"),
    ("loop-repeats-float", lambda: myths.find_loop("aaa", min_repeats=2.0), TypeError, r"min_repeats 必须是.*float 2\.0"),
    ("loop-repeats-bool", lambda: myths.find_loop("aaa", min_repeats=True), TypeError, r"min_repeats 必须是.*bool True"),
    ("loop-repeats-huge", lambda: myths.find_loop("aaa", min_repeats=10**30), ValueError, r"min_repeats 必须在 \[2, 1000000\] 之内"),
    ("ngram-n-zero", lambda: myths.ngram_overlap("注意", "注意力", 0), ValueError, r"n 必须是正整数（>= 1），收到的是 0"),
    ("ngram-n-float", lambda: myths.ngram_overlap("注意", "注意力", 2.0), TypeError, r"n 必须是正整数，收到的是 float 2\.0"),
    ("ngram-n-bool", lambda: myths.ngram_overlap("注意", "注意力", True), TypeError, r"n 必须是正整数，收到的是 bool True"),
    ("ngram-memory", lambda: myths.ngram_overlap("甲" * 1000, "乙" * 60_000, 1000), ValueError,
     r"reference 的全部 1000-gram 一共 59001 × 1000 = 59,001,000 个字（要放进内存），超过上限 50,000,000.*n 取小一些"),
    ("copy-pairs", lambda: myths.longest_copy("甲" * 40_000, "乙" * 30_000), ValueError,
     r"text 有 40000 个字、reference 有 30000 个字.*= 1,200,000,000 次比较，超过上限 1,000,000,000"),
    ("temperatures-memory", lambda: myths.temperature_effect(np.zeros(100_000), [1.0] * 3000), ValueError,
     r"probs（3000 个温度 × logits 的 100000 个数） 要占 2\.24 GiB 内存.*超过了本书的预算 2 GiB。提示：少换几个温度"),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors(case):
    _, fn, exc, pattern = case
    check_error(fn, exc, pattern)


# ---------------------------------------------------------------- 误区 1：贪心会原地打转

def test_find_loop_by_hand():
    assert myths.find_loop("开头每个词的，每个词的，每个词的，") == {"period": 5, "start": 2}
    assert myths.find_loop("的的的的") == {"period": 1, "start": 0}
    assert myths.find_loop(np.array([5, 1, 2, 1, 2, 1, 2])) == {"period": 2, "start": 1}
    assert myths.find_loop("ab" * 2 + "c") is None  # 结尾不在转圈
    assert myths.find_loop("abab", min_repeats=3) is None and myths.find_loop("abab") is None
    assert myths.find_loop("xabab", min_repeats=2) == {"period": 2, "start": 1}
    assert myths.find_loop("己丁丁丁" * 3) == {"period": 4, "start": 0}  # 不是只看结尾的"丁丁丁"


@given(st.text(alphabet="甲乙丙", max_size=8), st.text(alphabet="丁戊己", min_size=1, max_size=4), st.integers(3, 6))
def test_find_loop_finds_a_planted_loop(head, unit, repeats):
    found = myths.find_loop(head + unit * repeats)
    assert found is not None and found["start"] <= len(head)  # 种下的圈从 len(head) 开始转：不会更晚
    s = head + unit * repeats
    assert all(s[i] == s[i + found["period"]] for i in range(found["start"], len(s) - found["period"]))


# ---------------------------------------------------------------- 误区 2：温度改了模型知道的东西？

@given(st.lists(st.integers(-32, 32), min_size=2, max_size=10, unique=True))
def test_temperature_changes_the_probabilities_not_the_ranking(values):
    logits = np.array(values) / 4  # 打分至少差 0.25：概率不会因为舍入而并列
    before = logits.copy()
    out = myths.temperature_effect(logits, [0.3, 0.7, 1.0, 2.0, 5.0])
    assert all(row.tolist() == out["ranking"][0].tolist() for row in out["ranking"])  # 名次不变
    assert np.all(np.diff(out["entropy"]) > -1e-12)  # 越热越犹豫
    np.testing.assert_array_equal(logits, before)  # 打分（模型知道的东西）一点没变


# ---------------------------------------------------------------- 误区 3：生成时模型能看到后面的字？

def test_changing_a_later_character_does_not_change_earlier_outputs():
    p = model(4, context=12)
    tokens = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3])
    for position in (0, 4, 9):
        change = myths.future_influence(p, tokens, position, replacement=(tokens[position] + 1) % 12)
        assert np.all(change[:position] == 0)  # 恰好是 0：一点都看不到
        assert np.all(change[position:] > 1e-6)


def test_without_the_causal_mask_earlier_outputs_would_change():
    from transformer_lab.core.encoder import encoder_layer

    p = model(4, context=12)
    tokens = np.array([3, 1, 4, 1, 5])
    changed = np.array([3, 1, 4, 1, 6])
    layer = gpt.layer_params(p, 0)
    a, _ = encoder_layer(gpt.embed_positions(p, tokens), layer, 4, norm_first=True)  # 没有掩码：编码器的用法
    b, _ = encoder_layer(gpt.embed_positions(p, changed), layer, 4, norm_first=True)
    assert np.abs(a[0] - b[0]).max() > 1e-6


# ---------------------------------------------------------------- 误区 4：模型记住了原文？

def test_ngram_overlap_and_longest_copy_by_hand():
    ref = "注意力就是加权平均"
    assert myths.ngram_overlap("注意力权重", ref, 2) == 0.5  # 注意 意力 ✓，力权 权重 ✗
    assert myths.ngram_overlap("加权平均", ref, 4) == 1.0 and myths.ngram_overlap("猫猫", ref, 1) == 0.0
    assert myths.longest_copy("他说注意力就是", ref) == "注意力就是"
    assert myths.longest_copy("猫", ref) == ""


def test_sizes_at_the_limits_are_accepted():
    """上限本身可以：一万个字编号找圈（不转圈的很快）、正好到上限的 n-gram 和比较次数。"""
    assert myths.find_loop(np.arange(myths.MAX_LOOP_LENGTH)) is None
    assert myths.find_loop("甲乙" * (myths.MAX_LOOP_LENGTH // 4) + "丙" * 3) == {"period": 1, "start": myths.MAX_LOOP_LENGTH // 2}
    n = 1000
    reference = "乙" * (myths.MAX_GRAM_CHARS // n + n - 1)  # 正好 MAX_GRAM_CHARS // n 个 n-gram
    assert myths.ngram_overlap("乙" * n, reference, n) == 1.0
    assert myths.longest_copy("甲" * 1000, "甲" * (myths.MAX_COPY_PAIRS // 1000)) == "甲" * 1000


@given(st.one_of(st.integers(max_value=0), st.floats(allow_nan=True), st.booleans(), st.just(None), st.text(max_size=2),
                 st.integers(min_value=2**63)))
def test_any_bad_size_gets_a_chinese_error_before_any_work(n):
    """n 是负数、0、浮点数、bool、None、字符串或大得离谱：都是中文的 TypeError/ValueError，写明 n 和收到的值。"""
    for fn in (lambda: myths.ngram_overlap("注意力", "注意力", n), lambda: myths.find_loop("注意力", min_repeats=n)):
        with pytest.raises((TypeError, ValueError)) as info:
            fn()
        assert type(info.value) in (TypeError, ValueError) and re.search(r"[\u4e00-\u9fff]", str(info.value))
        assert re.search(r"\b(n|min_repeats)\b|比 n=", str(info.value)), str(info.value)


def ngram_reference(text, reference, n):
    """逐个片段用 str.find 在原文里找（另一种写法）。"""
    grams = [text[i:i + n] for i in range(len(text) - n + 1)]
    return sum(reference.find(g) >= 0 for g in grams) / len(grams)


@given(st.text(alphabet="甲乙丙丁", min_size=4, max_size=30), st.text(alphabet="甲乙丙丁戊", min_size=1, max_size=40),
       st.integers(1, 4))
def test_overlap_and_copy_agree_with_brute_force(text, reference, n):
    assert myths.ngram_overlap(text, reference, n) == pytest.approx(ngram_reference(text, reference, n))
    best = max((text[i:j] for i in range(len(text)) for j in range(i + 1, len(text) + 1) if text[i:j] in reference),
               key=len, default="")
    assert len(myths.longest_copy(text, reference)) == len(best)
    assert myths.longest_copy(text, reference) in reference


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_temperature_effect_at_a_temperature_below_the_dtype(dtype):
    """issue 41 根因 1：float32 的打分配 1e-46 的温度，修之前概率和熵都是 NaN。现在是 τ → 0 的极限（名次不变）。"""
    out = myths.temperature_effect(np.array([2.0, 1.0, 0.0], dtype=dtype), [1e-46, 1.0])
    np.testing.assert_array_equal(out["probs"][0], [1.0, 0.0, 0.0])
    assert np.all(np.isfinite(out["entropy"])) and out["entropy"][0] == 0
    assert out["ranking"].tolist() == [[0, 1, 2], [0, 1, 2]]
