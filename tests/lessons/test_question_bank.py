"""全书自测的题库：每个数值答案用独立的代码（纯 Python 的 math，不用工具包）重算一遍；每道题格式正确；
至少 24 道、覆盖第 1–8 章、素材里的八道都在；链接回去的小节在那一章里真的存在；小部件的 HTML 结构正确。"""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import transformer_lab as tl
from transformer_lab.lessons import question_bank as qb
from transformer_lab.lessons.questions_basics import rnn_signal_left, softmax_cake
from transformer_lab.lessons.questions_layers import order_blind, rope_scores
from transformer_lab.widgets.self_test import SELF_TEST_JS, render_html

from site_tools import LATIN_WORD, ROOT, book_words
from helpers.html_scripts import scripts

BANK = qb.questions()
BY_ID = {q.qid: q for q in BANK}


def _softmax(xs):
    exps = [math.exp(x - max(xs)) for x in xs]
    return [e / sum(exps) for e in exps]


# 每个数值答案的独立算法（手算的公式，只用 math）
INDEPENDENT = {
    "seed-hops": 1,                                                     # 自注意力：任意两词直连
    "ch1-decay": 0.5 ** 10,                                             # 每步乘 0.5，共 10 步
    "ch2-weighted": 0.7 * 10 + 0.2 * 0 + 0.1 * 5,
    "ch3-dot": 3 * 1 + 4 * 2,
    "ch3-cosine": 11 / (5 * math.sqrt(5)),
    "ch4-softmax": _softmax([5, 2, 0])[0],
    "ch4-scale": 16 / math.sqrt(64),
    "ch5-dk": 512 // 8,
    "ch5-params": 4 * 512 * 512,
    "ch6-pe-value": math.sin(1.0),
    "ch7-double": (2 * 2048 ** 2 * 64) / (2 * 1024 ** 2 * 64),
    "ch7-bytes": 4096 * 4096 * 4 / 2 ** 20,
    "ch7-causal": sum(range(1, 5)),
    "ch8-layernorm": (1 - 2.5) / math.sqrt(1.25 + 1e-5),
    "ch8-ffn": 512 * 2048 + 2048 + 2048 * 512 + 512,
}
SEEDS = {"seed-forget", "seed-hops", "seed-parallel", "seed-qkv-origin", "seed-sqrt-dk", "seed-heads",
         "seed-position", "seed-it-animal"}


def test_bank_size_and_coverage():
    assert len(BANK) >= 24
    assert {q.chapter for q in BANK} == set(range(1, 9))
    assert {q.qid for q in BANK if q.from_seed} == SEEDS
    assert [q.qid for q in BANK[:8]] == ["seed-forget", "seed-hops", "seed-parallel", "seed-qkv-origin",
                                         "seed-sqrt-dk", "seed-heads", "seed-it-animal", "seed-position"]
    assert [q.group for q in BANK[:8]] == ["地基题"] * 3 + ["机制题"] * 3 + ["易错题"] * 2
    assert len({q.qid for q in BANK}) == len(BANK)
    assert {q.kind for q in BANK} == set(qb.KINDS)
    assert sum(q.kind != "choice" for q in BANK) >= 16  # 算的题和先猜后看的题占一多半


def test_every_numeric_answer_matches_independent_code():
    numeric = {q.qid for q in BANK if q.kind == "number"}
    assert numeric == set(INDEPENDENT), "每道数值题都要有一个独立的算法"
    for qid, expected in INDEPENDENT.items():
        q = BY_ID[qid]
        assert q.answer == pytest.approx(expected, rel=1e-9, abs=1e-12), qid
        assert q.accepts(expected), qid
        wrong = expected + max(10 * q.tolerance, 1e-3 * abs(expected), 1.0)
        assert not q.accepts(wrong), qid


DIGITS = {"保留三位小数": 3, "保留到小数点后六位": 6}


@pytest.mark.parametrize("q", [q for q in BANK if q.kind == "number"], ids=lambda q: q.qid)
def test_rounded_answers_are_accepted_but_not_sloppy_ones(q):
    """题面说“保留几位小数”的，按那么多位四舍五入的答案算对，差出末位两个单位就算错；没说的答案本身是整数或一位小数，必须精确。"""
    digits = [d for phrase, d in DIGITS.items() if phrase in q.prompt]
    if not digits:
        assert q.tolerance <= 1e-6 and q.answer == round(q.answer, 1), q.qid  # 整数或一位小数，精确作答
        return
    step = 10.0 ** -digits[0]
    assert q.accepts(round(q.answer, digits[0]))
    assert not q.accepts(q.answer + 2 * step) and not q.accepts(q.answer - 2 * step)


@given(st.floats(-1e6, 1e6, allow_nan=False))
def test_accepts_is_exactly_the_tolerance_band(x):
    q = BY_ID["ch3-cosine"]
    assert q.accepts(x) == (abs(x - q.answer) <= q.tolerance)


def test_predict_reveals_show_computed_values():
    """“先猜后看”的题提交后显示的计算：数字和独立算出的一致，而且正确的预测确实是计算的结论。"""
    rev = {q.qid: "\n".join(q.reveal) for q in BANK if q.kind == "predict"}
    assert str([round(p, 3) for p in _softmax([10, 4, 0])]) in rev["ch4-sharper"]
    assert rev["ch4-shift"].count(str([round(p, 3) for p in _softmax([5, 2, 0])])) == 2
    assert "点积 33，余弦 0.984" in rev["ch3-longer-key"] and "点积 11，余弦 0.984" in rev["ch3-longer-key"]
    a, b = re.findall(r"= (-?\d+\.\d+)", rev["ch6-rope"])
    assert a == b
    assert rev["seed-position"].count("True") == 2


def test_helpers_against_independent_references():
    np.testing.assert_allclose(softmax_cake(), _softmax([5, 2, 0]))
    assert rnn_signal_left(0.8, 5) == pytest.approx(0.8 ** 5)
    assert order_blind() == (True, True)
    # 独立的注意力（逐行 softmax 的纯 NumPy 写法）：倒序输入的输出 = 原输出倒序
    x = np.random.default_rng(3).normal(size=(4, 2))

    def attend(z):
        s = z @ z.T / math.sqrt(z.shape[1])
        w = np.exp(s - s.max(1, keepdims=True))
        return (w / w.sum(1, keepdims=True)) @ z

    np.testing.assert_allclose(attend(x[::-1]), attend(x)[::-1])
    scores = rope_scores()
    for m, n in [(5, 2), (11, 8), (7, 4)]:
        assert scores[m, n] == pytest.approx(scores[3, 0])
    assert scores[5, 1] != pytest.approx(scores[3, 0])  # 相隔不同，分数就不同：上面的比较不是碰巧


@pytest.mark.parametrize("q", BANK, ids=lambda q: q.qid)
def test_every_question_is_well_formed(q):
    assert q.prompt.strip() and q.qid.isascii()
    if q.kind == "number":
        assert q.explain and not q.choices and math.isfinite(q.answer)
    else:
        assert len(set(q.choices)) == len(q.choices) >= 2 and all(c.strip() for c in q.choices)
        assert len(q.why) == len(q.choices) and all(w.strip() for w in q.why)
        # 对的选项的反馈以“对”开头（或“猜对了”），错的选项不说“对。”
        for i, w in enumerate(q.why):
            right = w.startswith(("对。", "猜对了"))
            assert right == (i == q.correct), (q.qid, i, w)
    if q.kind == "predict":
        assert q.reveal and q.prompt.startswith("先猜")


def _headings(chapter: int) -> set[str]:
    nb = nbformat.read(ROOT / "notebooks" / f"{qb.CHAPTERS[chapter][0]}.ipynb", as_version=4)
    lines = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown").splitlines()
    return {line.lstrip("#").strip() for line in lines if line.startswith("#")}


def test_links_point_at_existing_sections():
    """每道题链接回去的小节，在那一章的 notebook 里有一字不差的标题（网站构建时也会再查一遍）。"""
    for q in BANK:
        assert (ROOT / "notebooks" / f"{qb.CHAPTERS[q.chapter][0]}.ipynb").exists(), q.qid
        if q.section is not None:
            assert q.section in _headings(q.chapter), (q.qid, q.section)


def test_latin_words_are_the_books_own():
    """题面和反馈里的英文词都是本书正文里用过的词（网站测试不许出现界面以外的陌生英文）。"""
    text = " ".join(" ".join([q.prompt, *q.choices, *q.why, q.explain, *q.reveal, q.unit]) for q in BANK)
    assert not set(LATIN_WORD.findall(text)) - book_words()


def test_widget_html_structure():
    data = qb.as_dicts(BANK, qb.notebook_href)
    page = render_html(data, prefix="t")
    assert page.count('class="tlq-q"') == len(BANK)
    assert page.count('class="tlq-feedback" aria-live="polite"') == len(BANK)
    assert f'data-total="{len(BANK)}"' in page and "得分：0 / " in page
    for q in data:
        block = page.split(f'id="t-{q["qid"]}"', 1)[1].split('<div class="tlq-q"', 1)[0]
        assert html.escape(q["prompt"], quote=True) in block
        assert f'href="{html.escape(q["href"], quote=True)}"' in block
        if q["kind"] == "number":
            assert f'data-answer="{q["answer"]!r}"' in block and f'<label for="t-{q["qid"]}-in">' in block
        else:
            assert block.count('type="radio"') == len(q["choices"]) == block.count("<label for=")
            assert f'data-correct="{q["correct"]}"' in block
    ((tag, body),) = [s for s in scripts(page) if SELF_TEST_JS.strip()[:40] in s[1]]
    assert body == SELF_TEST_JS


def test_widget_escapes_nasty_text():
    """题面里即使有 "</script>" 或 "<!--"，也关不掉脚本、插不进标签。"""
    nasty = dict(qb.as_dicts(BANK[:1], qb.notebook_href)[0], prompt='</script><!--<script>"x"&', href='a"b')
    page = render_html([nasty], prefix="n")
    assert "</script><!--" not in page.split("<script>", 1)[0]
    assert len(scripts(page)) == 1 and scripts(page)[0][1] == SELF_TEST_JS
    assert 'href="a&quot;b"' in page


def test_notebook_self_test_uses_the_same_bank():
    full, ch4 = tl.self_test(), tl.self_test(4)
    assert full._repr_html_().count('class="tlq-q"') == len(BANK)
    assert ch4.html.count('class="tlq-q"') == sum(q.chapter == 4 for q in BANK)
    assert 'href="04_four_steps.ipynb#' in ch4.html
    assert repr(ch4) == f"自测：{sum(q.chapter == 4 for q in BANK)} 道题（在 JupyterLab 里显示为可以作答的小部件）"
    ids = re.findall(r'<div class="tlq" id="([^"]+)"', full.html + ch4.html)
    assert len(set(ids)) == 2  # 同一个 notebook 里显示两次，id 不冲突


def test_as_dicts_numbers_questions_in_order():
    data = qb.as_dicts(BANK, lambda c, s: f"{c}|{s}")
    assert [d["number"] for d in data] == list(range(1, len(BANK) + 1))
    assert all(d["href"] == f"{d['chapter']}|{BY_ID[d['qid']].section}" for d in data)
    json.dumps(data, ensure_ascii=False)  # 纯数据，能写成 JSON


def test_bank_is_valid_json_data_for_the_page():
    """book/self_test.md 用 ```{self-test}``` 指令插入题库，不手写题目。"""
    page = (ROOT / "book" / "self_test.md").read_text(encoding="utf-8")
    assert "```{self-test}" in page and "tl.self_test()" in page
    assert not any(q.prompt[:12] in page for q in BANK)
