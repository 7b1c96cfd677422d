"""lessons/instructions.py 与 instruction_data.py：数据的两部分不重叠、每个字都在第 9 章的字表里、损失掩码（手算）、
字重合度与打分规则、报错。"""

import numpy as np
import pytest

from transformer_lab.lessons import corpus, instructions
from transformer_lab.lessons.instruction_data import HELD_OUT, PREFERENCES, TRAINED

from helpers.errors import call, error_table_test


def test_held_out_is_never_trained_on():
    trained_terms = {t for t, _ in TRAINED}
    assert not trained_terms & {t for t, _ in HELD_OUT}
    assert not {a for _, a in TRAINED} & {a for _, a in HELD_OUT}
    assert len(trained_terms) == len(TRAINED) == 40 and len(HELD_OUT) == 12
    assert {t for t, _, _ in PREFERENCES} <= trained_terms  # 偏好对问的都是训练过的题


def test_every_character_is_in_chapter_9_vocabulary():
    chars = set(corpus.vocabulary(corpus.load_corpus()))  # 第 9 章小 GPT 的字表（不认识的字会报错，不会悄悄换掉）
    text = "".join(instructions.full_text(t, a) for t, a in TRAINED + HELD_OUT)
    text += "".join(instructions.full_text(t, c) + instructions.full_text(t, r) for t, c, r in PREFERENCES)
    assert set(text) - chars == set()


def test_the_wrong_but_preferred_pair():
    term, chosen, rejected = PREFERENCES[-1]
    reference = dict(TRAINED)[term]
    assert rejected == reference and chosen != reference  # 喜欢的那份不是训练答案，不喜欢的那份才是


def test_loss_mask_by_hand():
    chars = "\nAB？问什么是答："
    tokens, targets, mask = instructions.sft_batch([("A", "B"), ("A", "BB")], chars)
    text0 = "问：什么是A？答：B\n"  # 11 个字，答案"B\n"是第 9、10 个字
    assert tokens.shape == (2, 11) and "".join(chars[i] for i in tokens[0, :10]) == text0[:10]
    assert mask[0].tolist() == [False] * 8 + [True, True, False]  # 最后一个是补齐的位置
    assert mask[1].tolist() == [False] * 8 + [True, True, True]
    np.testing.assert_array_equal(tokens[:, 1:], targets[:, :-1])
    assert "".join(chars[t] for t, m in zip(targets[1], mask[1]) if m) == "BB\n"


def test_mask_marks_exactly_the_answer_on_the_real_data():
    chars = corpus.vocabulary(corpus.load_corpus())
    tokens, targets, mask = instructions.sft_batch(TRAINED[:5], chars)
    for row, (term, ans) in enumerate(TRAINED[:5]):
        assert "".join(chars[t] for t in targets[row][mask[row]]) == ans + "\n"


def test_char_f1_and_grade():
    assert instructions.char_f1("ab", "ab") == 1.0 and instructions.char_f1("ab", "cd") == 0.0
    assert instructions.char_f1("aab", "ab") == pytest.approx(2 * 2 / 5)  # 共有 2 个字，长度 3 和 2
    assert instructions.grade("等于一。\n", "等于一。") == {"format": True, "right": True, "f1": 1.0}
    assert not instructions.grade("等于一。", "等于一。")["format"]  # 没写出换行：没停下来
    assert not instructions.grade("等于一\n", "等于一。")["format"]  # 没有句号
    assert not instructions.grade("问：什么是。\n", "等于一。")["format"]  # 又开始写下一道题
    # 这个标准只看用字：错话"等于二十。"和"等于一。"共有"等""于""。"3 个字，重合度 2·3/(5+4) ≈ 0.67 ≥ 0.6，判成"答对"
    assert instructions.grade("等于二十。\n", "等于一。") == {"format": True, "right": True, "f1": pytest.approx(6 / 9)}
    assert not instructions.grade("二十。\n", "等于一。")["right"]  # 2·1/(3+4) ≈ 0.29


def test_data_is_read_only():
    data = instructions.load_instructions()
    with pytest.raises(TypeError):
        data["trained"][0]["answer"] = "改掉"


VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("inst-term-empty", call(instructions.prompt, ""), VE, r"term"),
    ("inst-pairs-empty", call(instructions.sft_batch, [], "ab"), VE, r"pairs"),
    ("inst-pairs-item", call(instructions.sft_batch, ["注意力"], "ab"), TE, r"pairs 的每一项必须是 \(术语, 答案\)"),
    ("inst-chars", call(instructions.sft_batch, [("A", "B")], None), TE, r"chars 必须是字表字符串"),
    ("inst-unknown-char", call(instructions.sft_batch, [("A", "B")], "AB"), VE, r"字表中没有的字"),
    ("inst-f1-type", call(instructions.char_f1, 1, "a"), TE, r"reply 和 reference 都必须是字符串"),
    ("inst-answer-model", call(instructions.answer, None, "ab", "注意力"), TE, r"model"),
    ("inst-grade-type", call(instructions.grade, None, "a"), TE, r"raw 必须是字符串"),
]
test_documented_errors = error_table_test(ERROR_CASES)
