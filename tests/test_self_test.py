"""浏览器里的全书自测（book/self_test.md）：没有内核、只用键盘，把每道题先答错、再答对，
检查每次的反馈（对错、为什么、回看链接）和得分；链接回去的小节在目标页面上真的存在。"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from transformer_lab.lessons import question_bank as qb

BANK = qb.questions()
PAGE = "book/self_test.html"


def _open(page):
    page.goto(f"{page.base}/{PAGE}")
    page.wait_for_selector(".tlq[data-ready]")


def _score(page) -> str:
    return page.locator(".tlq-score").inner_text()


def _pick(page, q, choice: int) -> None:
    """只用键盘选第 choice 个选项：焦点放到第一个选项，空格选中，再按 ↓ 移到第 choice 个。"""
    page.locator(f"#tlq-{q.qid}-c0").focus()
    page.keyboard.press("Space")
    for _ in range(choice):
        page.keyboard.press("ArrowDown")
    assert page.locator(f"#tlq-{q.qid}-c{choice}").is_checked()
    page.keyboard.press("Tab")  # 离开这组选项，下一个就是“提交”按钮
    assert page.evaluate("() => document.activeElement.className") == "tlq-submit"
    page.keyboard.press("Enter")


def _type(page, q, text: str) -> None:
    box = page.locator(f"#tlq-{q.qid}-in")
    box.focus()
    page.keyboard.press("Control+A")
    page.keyboard.press("Backspace")
    page.keyboard.type(text)
    page.keyboard.press("Enter")  # 在框里按 Enter 就提交


def _feedback(page, q) -> str:
    return page.locator(f"#tlq-{q.qid} .tlq-feedback").inner_text()


def _wrong_number(q) -> str:
    return repr(q.answer + max(1.0, abs(q.answer)))


def _right_number(q) -> str:
    if q.answer >= 10000 and q.answer == int(q.answer):
        return f"{int(q.answer):,}"  # 带千位分隔符的写法也认
    return repr(q.answer)


def test_answer_every_question_wrong_then_right_with_the_keyboard(site, page):
    _open(page)
    total = len(BANK)
    assert page.locator(".tlq-q").count() == total
    assert _score(page) == f"得分：0 / {total}（已答 0 题）"
    targets = {}
    for n, q in enumerate(BANK, start=1):
        # 先答错
        if q.kind == "number":
            _type(page, q, _wrong_number(q))
        else:
            _pick(page, q, (q.correct + 1) % len(q.choices))
        text = _feedback(page, q)
        assert text.startswith("✘ 还不对"), (q.qid, text)
        if q.kind != "number":
            assert q.why[(q.correct + 1) % len(q.choices)] in text
        assert _score(page) == f"得分：{n - 1} / {total}（已答 {n} 题）"
        # 再答对
        if q.kind == "number":
            _type(page, q, _right_number(q))
        else:
            _pick(page, q, q.correct)
        text = _feedback(page, q)
        assert text.startswith("✔ 答对了"), (q.qid, text)
        assert (q.why[q.correct] if q.kind != "number" else q.explain) in text
        for line in q.reveal:
            assert line.strip() in text
        assert _score(page) == f"得分：{n} / {total}（已答 {n} 题）"
        link = page.locator(f"#tlq-{q.qid} .tlq-feedback a")
        assert f"第 {q.chapter} 章" in link.inner_text()
        targets[q.qid] = link.get_attribute("href")
    # 回看链接：指向那一章的页面，小节的锚点在那一页上真的存在
    for q in BANK:
        url = urlsplit(targets[q.qid])
        path = (site / Path(PAGE).parent / url.path).resolve()
        assert path.name == f"{qb.CHAPTERS[q.chapter][0]}.html" and path.is_file(), (q.qid, targets[q.qid])
        if q.section:
            assert url.fragment and f'id="{unquote(url.fragment)}"' in path.read_text(encoding="utf-8"), q.qid
    # 全部清空
    page.locator(".tlq-reset").focus()
    page.keyboard.press("Enter")
    assert _score(page) == f"得分：0 / {total}（已答 0 题）"
    assert page.locator(".tlq-feedback:not(:empty)").count() == 0


def test_empty_answers_are_not_judged(site, page):
    _open(page)
    choice = next(q for q in BANK if q.kind == "choice")
    number = next(q for q in BANK if q.kind == "number")
    page.locator(f"#tlq-{choice.qid} .tlq-submit").focus()
    page.keyboard.press("Enter")
    assert _feedback(page, choice) == "请先选一个选项。"
    _type(page, number, "大约一半")
    assert _feedback(page, number).startswith("请先在框里填一个数")
    assert _score(page).endswith("（已答 0 题）")


@pytest.mark.parametrize("typed", ["１１", " 11 ", "11.0", "1.1e1"])
def test_number_input_accepts_common_spellings(site, page, typed):
    _open(page)
    q = next(x for x in BANK if x.qid == "ch3-dot")
    _type(page, q, typed)
    assert _feedback(page, q).startswith("✔ 答对了"), typed


def test_controls_show_focus_and_feedback_is_announced(site, page):
    _open(page)
    button = page.locator(".tlq-submit").first
    button.focus()
    assert page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle") != "none"
    assert page.locator(".tlq-feedback[aria-live=polite]").count() == len(BANK)
    assert page.locator(".tlq-score[role=status]").count() == 1
    # 每个输入框和选项都有自己的标签
    for box in page.locator(".tlq input").all():
        assert page.locator(f'label[for="{box.get_attribute("id")}"]').count() == 1


def test_build_step_finds_section_anchors_and_warns_on_missing_ones(monkeypatch):
    """建网站时，“回去看”的锚点按小节标题在那一章的 doctree 里找；找不到要发警告（-W 下构建失败），不能悄悄失效。"""
    import sys

    from docutils import nodes

    from site_tools import ROOT

    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    import self_test_page

    doctree = nodes.document(None, None)
    for title, ident in [("学习目标", "id1"), ("动手算：softmax 分蛋糕", "softmax")]:
        section = nodes.section(ids=[ident])
        section += nodes.title(text=title)
        doctree += section

    class Env:
        def get_doctree(self, docname):
            return doctree

    warnings = []
    monkeypatch.setattr(self_test_page.logger, "warning", lambda msg, **kw: warnings.append(msg))
    assert self_test_page._section_anchor(Env(), "notebooks/04_four_steps", "动手算：softmax 分蛋糕", None) == "softmax"
    assert not warnings
    assert self_test_page._section_anchor(Env(), "notebooks/04_four_steps", "改过名的小节", None) == ""
    assert len(warnings) == 1 and "改过名的小节" in warnings[0]
