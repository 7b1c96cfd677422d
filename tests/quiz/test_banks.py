"""全书自测的题目（每章一个题库 ``quiz/bank_chNN.py``）和汇总（``quiz/__init__.py`` 的
``questions``、``self_test``）：每个数值答案用独立的代码（纯 Python 的 math，不用工具包）重算一遍；每道题内容通顺；
至少 24 道、章节表里的每一章都有题、素材里的八道都在；链接回去的小节在那一章里真的存在。"""

from __future__ import annotations

import importlib
import math
import re

import nbformat
import numpy as np
import pytest

import transformer_lab as tl
from transformer_lab import chapters, quiz
from transformer_lab.quiz import bank_ch04
from transformer_lab.quiz.bank_ch01 import rnn_signal_left
from transformer_lab.quiz.bank_ch04 import scaled_score, softmax_cake
from transformer_lab.quiz.bank_ch05 import parameter_count
from transformer_lab.quiz.bank_ch06 import order_blind, rope_scores
from transformer_lab.quiz.question import KINDS, Question

from helpers.errors import check_error, error_table_test
from tools.site import LATIN_WORD, ROOT, book_words

BANK = quiz.questions()
BY_ID = {q.qid: q for q in BANK}
LAST = chapters.CHAPTERS[-1].number
VE, TE = ValueError, TypeError


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
    "ch9-softmax": _softmax([3, 1.5, 0, -0.5, -2])[0],
    "ch9-top-k": math.exp(3) / (math.exp(3) + math.exp(1.5)),
    "ch9-top-p": 0.5 / (0.5 + 0.3 + 0.15),
    "ch9-perplexity": math.e ** 4,                                      # 困惑度 = e^损失
    "ch11-utf8": len("注意力".encode("utf-8")),                          # 每个常用汉字 3 个字节
    "ch11-pairs": sum(a == b == "a" for a, b in zip("aaaa", "aaaa"[1:])),  # 相邻的位置数
    "ch11-three-merges": len("XdXac"),                                  # 手算：aa → Z，Za → Y，Yb → X
    "ch11-embedding": 4096 * 64,
    "ch12-gqa-cache": 2 * 30 * 3 * 64 * 4,                              # k 和 v × 层 × 键值头 × d_k × 4 字节
    "ch12-rmsnorm": 3 / math.sqrt((9 + 16) / 2 + 1e-5),
    "ch12-tied": 49152 * 576,                                           # 词表 × D
    "ch13-mask": len("每个词挂出来的标签：我是什么。") + 1,                 # 答案的字 + 结尾的换行
    "ch13-lora": 8 * 64 + 8 * 64,                                       # A 是 64 × 8，B 是 8 × 64
    "ch13-dpo-start": math.log(2),                                      # z = 0：-log σ(0)
}
SEEDS = {"seed-forget", "seed-hops", "seed-parallel", "seed-qkv-origin", "seed-sqrt-dk", "seed-heads",
         "seed-position", "seed-it-animal"}


def test_bank_size_and_coverage():
    assert len(BANK) >= 24
    assert {q.chapter for q in BANK} == set(chapters.numbers())
    assert {q.qid for q in BANK if q.from_seed} == SEEDS
    assert [q.qid for q in BANK[:8]] == ["seed-forget", "seed-hops", "seed-parallel", "seed-qkv-origin",
                                         "seed-sqrt-dk", "seed-heads", "seed-it-animal", "seed-position"]
    assert [q.group for q in BANK[:8]] == ["地基题"] * 3 + ["机制题"] * 3 + ["易错题"] * 2
    assert len({q.qid for q in BANK}) == len(BANK)
    assert {q.kind for q in BANK} == set(KINDS)
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


def test_predict_reveals_show_computed_values():
    """“先猜后看”的题提交后显示的计算：数字和独立算出的一致，而且正确的预测确实是计算的结论。"""
    rev = {q.qid: "\n".join(q.reveal) for q in BANK if q.kind == "predict"}
    assert str([round(p, 3) for p in _softmax([10, 4, 0])]) in rev["ch4-sharper"]
    assert rev["ch4-shift"].count(str([round(p, 3) for p in _softmax([5, 2, 0])])) == 2
    assert "点积 33，余弦 0.984" in rev["ch3-longer-key"] and "点积 11，余弦 0.984" in rev["ch3-longer-key"]
    a, b = re.findall(r"= (-?\d+\.\d+)", rev["ch6-rope"])
    assert a == b
    assert rev["seed-position"].count("True") == 2


def test_symmetry_reveal_is_the_chapters_computation():
    """``ch5-symmetry`` 揭晓的是一段真的计算：完全相同的两个头训练 400 步后之差仍恰好是 0，只差百万分之一的两个头
    分开了；两种的损失和第 5 章表格里第 400 步那一行一字不差（题库和章节各算各的）。"""
    reveal = BY_ID["ch5-symmetry"].reveal
    assert reveal[0].startswith("相同：两头之差 0.0e+00 → 训练 400 步后 0.0e+00")
    start, end = (float(v) for v in re.findall(r"(\d\.\de[+-]\d\d)", reveal[1]))
    assert start < 1e-5 and end > 0.1
    book = nbformat.read(ROOT / "notebooks" / "05_multi_head.ipynb", as_version=4)
    printed = "".join(o.get("text", "") for c in book.cells if c.cell_type == "code" for o in c.get("outputs", []))
    row = next(line for line in printed.splitlines() if line.split()[:1] == ["400"])
    losses = re.findall(r"损失 (\d\.\d{4})", "\n".join(reveal))
    assert len(losses) == 2 and all(loss in row for loss in losses), (losses, row)


def test_helpers_against_independent_references():
    np.testing.assert_allclose(softmax_cake(), _softmax([5, 2, 0]))
    assert rnn_signal_left(0.8, 5) == pytest.approx(0.8 ** 5)
    assert scaled_score(9.0, 16) == 9 / 4
    assert parameter_count(8, 32, ("w_1", "b_1")) == 8 * 32 + 32
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
    nb = nbformat.read(ROOT / chapters.chapter(chapter).notebook, as_version=4)
    lines = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown").splitlines()
    return {line.lstrip("#").strip() for line in lines if line.startswith("#")}


def test_links_point_at_existing_sections():
    """每道题链接回去的小节，在那一章的 notebook 里有一字不差的标题（网站构建时也会再查一遍）。"""
    for q in BANK:
        assert (ROOT / chapters.chapter(q.chapter).notebook).exists(), q.qid
        if q.section is not None:
            assert q.section in _headings(q.chapter), (q.qid, q.section)


def test_latin_words_are_the_books_own():
    """题面和反馈里的英文词都是本书正文里用过的词（网站测试不许出现界面以外的陌生英文）。"""
    text = " ".join(" ".join([q.prompt, *q.choices, *q.why, q.explain, *q.reveal, q.unit]) for q in BANK)
    assert not set(LATIN_WORD.findall(text)) - book_words()


def test_notebook_self_test_uses_the_same_bank():
    full, ch4 = tl.self_test(), tl.self_test(4)
    assert full._repr_html_().count('class="tlq-q"') == len(BANK)
    assert ch4.html.count('class="tlq-q"') == sum(q.chapter == 4 for q in BANK)
    assert 'href="04_four_steps.ipynb#' in ch4.html
    assert repr(ch4) == f"自测：{sum(q.chapter == 4 for q in BANK)} 道题（在 JupyterLab 里显示为可以作答的小部件）"
    ids = re.findall(r'<div class="tlq" id="([^"]+)"', full.html + ch4.html)
    assert len(set(ids)) == 2  # 同一个 notebook 里显示全书和第 4 章，id 不冲突
    assert tl.self_test(4).html == ch4.html  # 同样的题，同样的 HTML（不依赖之前显示过几次）
    for c in chapters.CHAPTERS:
        assert tl.self_test(c.number).count == sum(q.chapter == c.number for q in BANK) > 0


def test_questions_refuses_a_repeated_qid(monkeypatch):
    """两个题库里出现同一个 qid（网页上的 id 会撞）：汇总时报错，说出是哪个。"""
    own = bank_ch04.questions()
    twice = Question("ch3-dot", 4, None, "计算题", "number", "p", answer=1.0, explain="e")
    monkeypatch.setattr(bank_ch04, "questions", lambda: [*own, twice])
    check_error(quiz.questions, VE, r"题库里有重复的 qid：\['ch3-dot'\]")


def test_questions_names_a_missing_bank(monkeypatch):
    """章节表里加了一章、还没写它的题库：汇总时报错，说出缺的是哪个文件（题库按名字找，不用在别处登记）。"""
    new = chapters.Chapter(LAST + 1, f"{LAST + 1:02d}_new", "新的一章", "新的一章")
    monkeypatch.setattr(chapters, "CHAPTERS", (*chapters.CHAPTERS, new))
    check_error(quiz.questions, VE, rf"第 {LAST + 1} 章没有题库：找不到 transformer_lab/quiz/bank_ch{LAST + 1:02d}\.py")


def test_a_bank_that_fails_to_import_is_not_reported_as_missing(monkeypatch):
    """反证：题库自己导入的东西找不到时，报的是那个东西（原来的 ModuleNotFoundError），不是“没有题库”。"""
    def broken(name):
        raise ModuleNotFoundError("No module named 'no_such_dependency'", name="no_such_dependency")

    monkeypatch.setattr(importlib, "import_module", broken)
    with pytest.raises(ModuleNotFoundError, match="no_such_dependency"):
        quiz.questions()


def test_order_is_seeds_by_group_then_each_chapters_bank_in_order():
    """汇总的顺序：素材里的八道按组（地基、机制、易错）在前；其余的题按章，同一章里按它题库里的顺序。"""
    banks = {c.number: importlib.import_module(f"transformer_lab.quiz.{c.bank_module}").questions()
             for c in chapters.CHAPTERS}
    seeds = [q for c in chapters.CHAPTERS for q in banks[c.number] if q.from_seed]
    assert list(BANK[:8]) == sorted(seeds, key=lambda q: quiz.GROUPS.index(q.group))
    assert list(BANK[8:]) == [q for c in chapters.CHAPTERS for q in banks[c.number] if not q.from_seed]


def test_the_page_inserts_the_bank_instead_of_copying_it():
    """book/self_test.md 用 ```{self-test}``` 指令插入题库，不手写题目。"""
    page = (ROOT / "book" / "self_test.md").read_text(encoding="utf-8")
    assert "```{self-test}" in page and "tl.self_test()" in page
    assert not any(q.prompt[:12] in page for q in BANK)


ERROR_CASES = [
    ("self_test-past-the-end", lambda: tl.self_test(LAST + 1), VE, rf"chapter 必须是本书的章号 1 到 {LAST} 之一，收到 {LAST + 1}"),
    ("self_test-zero", lambda: tl.self_test(0), VE, r"chapter 必须是正整数"),
    ("self_test-str", lambda: tl.self_test("4"), TE, r"chapter 必须是正整数.*'4'"),
    ("quiz-self_test-str", lambda: quiz.self_test(4.0), TE, r"chapter 必须是正整数.*4\.0"),
]
test_documented_errors = error_table_test(ERROR_CASES)
