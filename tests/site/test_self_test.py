"""浏览器里的全书自测（book/self_test.md）：没有内核、只用键盘，把每道题先答错、再答对，
检查每次的反馈（对错、为什么、回看链接）和得分；链接回去的小节在目标页面上真的存在。"""

from __future__ import annotations

import io
import os
import re
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from transformer_lab import chapters, quiz

from tools.site import assert_clean, open_tab

BANK = quiz.questions()
PAGE = "book/self_test.html"


@pytest.fixture(scope="module")
def tab(browser, server):
    """本文件的测试共用一个标签页：每个测试重新打开自测页（``_open``），页面的状态（答过的题、得分）就是新的；
    共用的只是浏览器缓存，不必每个测试都把样式、脚本、公式字体重新下载一遍。"""
    shared = open_tab(browser, server)
    yield shared
    shared.context.close()


@pytest.fixture
def page(tab):
    """覆盖 conftest.py 的 ``page``：同样在测试结束时断言没有外部请求、没有控制台报错，只是用共享的标签页。"""
    tab.errors.clear()
    tab.external.clear()
    yield tab
    assert_clean(tab)


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


# 答完一题后页面上的反馈、得分和回看链接（文字、地址），一次往返读完
ANSWERED_JS = """id => {
  const box = document.getElementById(id), link = box.querySelector('.tlq-feedback a');
  return [box.querySelector('.tlq-feedback').innerText, document.querySelector('.tlq-score').innerText,
          link ? link.innerText : null, link ? link.getAttribute('href') : null];
}"""


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
        text, score, _, _ = page.evaluate(ANSWERED_JS, f"tlq-{q.qid}")
        assert text.startswith("✘ 还不对"), (q.qid, text)
        if q.kind != "number":
            assert q.why[(q.correct + 1) % len(q.choices)] in text
        assert score == f"得分：{n - 1} / {total}（已答 {n} 题）"
        # 再答对
        if q.kind == "number":
            _type(page, q, _right_number(q))
        else:
            _pick(page, q, q.correct)
        text, score, link, targets[q.qid] = page.evaluate(ANSWERED_JS, f"tlq-{q.qid}")
        assert text.startswith("✔ 答对了"), (q.qid, text)
        assert (q.why[q.correct] if q.kind != "number" else q.explain) in text
        for line in q.reveal:
            assert line.strip() in text
        assert score == f"得分：{n} / {total}（已答 {n} 题）"
        assert f"第 {q.chapter} 章" in link
    # 回看链接：指向那一章的页面，小节的锚点在那一页上真的存在
    for q in BANK:
        url = urlsplit(targets[q.qid])
        path = (site / Path(PAGE).parent / url.path).resolve()
        assert path.name == f"{chapters.chapter(q.chapter).stem}.html" and path.is_file(), (q.qid, targets[q.qid])
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


def test_the_explanation_waits_for_a_right_answer_or_a_second_try(site, page):
    """第一次答错只说错了、给回看链接，不给讲解（讲解里有答案）；第二次提交后才显示。先猜后看的题猜完就揭晓。"""
    _open(page)
    q = next(x for x in BANK if x.qid == "ch3-dot")
    _type(page, q, "12")
    text = _feedback(page, q)
    assert text.startswith("✘ 还不对") and q.explain not in text and "第二次提交后会显示讲解" in text
    assert f"第 {q.chapter} 章" in page.locator(f"#tlq-{q.qid} .tlq-feedback a").inner_text()
    _type(page, q, "13")
    text = _feedback(page, q)
    assert text.startswith("✘ 还不对") and q.explain in text and "第二次提交" not in text
    guess = next(x for x in BANK if x.kind == "predict")
    _pick(page, guess, (guess.correct + 1) % len(guess.choices))
    assert all(line.strip() in _feedback(page, guess) for line in guess.reveal)


@pytest.mark.parametrize("typed", ["11,0", "0,984", "1,1e1"])
def test_a_comma_decimal_is_not_guessed(site, page, typed):
    """逗号只当千位分隔符（1,048,576）；“11,0”这种逗号小数不替读者猜，请他改写（以前会读成 110）。"""
    _open(page)
    _type(page, next(x for x in BANK if x.qid == "ch3-dot"), typed)
    assert _feedback(page, next(x for x in BANK if x.qid == "ch3-dot")).startswith("请先在框里填一个数"), typed


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
    import self_test_page
    from docutils import nodes


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


def test_the_page_is_reread_when_the_package_changes_and_only_then(tmp_path, monkeypatch):
    """题目在 Python 包里：自测页用 ``env.note_dependency`` 登记包里的文件，其中一个变了，Sphinx 就重读这一页；
    什么都没变时不重读（以前每次构建都强制重读）。在一个只有一页的小网站上建三次，几秒钟，不用建整本书。"""
    import self_test_page
    from sphinx.application import Sphinx


    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "conf.py").write_text("extensions = ['self_test_page']\n", encoding="utf-8")
    (src / "index.rst").write_text("自测\n====\n\n.. self-test::\n", encoding="utf-8")
    bank = tmp_path / "bank_stand_in.py"  # 代替包里的一个题库文件（不去改仓库里真文件的时间戳）
    bank.write_text("# 题库\n", encoding="utf-8")
    real = self_test_page.dependencies
    monkeypatch.setattr(self_test_page, "dependencies", lambda srcdir: [*real(srcdir), bank])

    def build() -> tuple[str, Sphinx]:
        status = io.StringIO()
        app = Sphinx(str(src), str(src), str(out), str(out / ".doctrees"), "html", status=status,
                     warning=io.StringIO(), freshenv=False)
        app.build()
        return status.getvalue(), app

    log, app = build()
    deps = {Path(d).name for d in app.env.dependencies["index"]}
    assert {"question.py", "bank_ch01.py", "bank_ch08.py", "html.py", "quiz.js", "quiz.css", "chapters.py",
            "bank_stand_in.py"} <= deps
    page = (out / "index.html").read_text(encoding="utf-8")
    assert page.count('class="tlq-q"') == len(BANK)
    log, _ = build()
    assert "0 added, 0 changed, 0 removed" in log, log  # 什么都没变：不重读
    later = time.time() + 10
    os.utime(bank, (later, later))
    log, _ = build()
    assert "0 added, 1 changed, 0 removed" in log, log  # 题库变了：重读自测页


def _mini_book(tmp_path, with_section) -> tuple[str, str, Path]:
    """一本小书：自测页只有 ```{exercise-links}```，每一章一页（有练习的章带不带“动手写”一节由 with_section 定）。
    返回 (日志, 警告, 输出文件夹)。几秒钟，不用建整本书。"""
    from sphinx.application import Sphinx

    from transformer_lab import exercises

    src, out = tmp_path / "src", tmp_path / "out"
    (src / "notebooks").mkdir(parents=True)
    (src / "conf.py").write_text("extensions = ['self_test_page']\n", encoding="utf-8")
    (src / "index.rst").write_text("自测\n====\n\n.. exercise-links::\n", encoding="utf-8")
    for c in chapters.CHAPTERS:
        body = f"第 {c.number} 章\n========\n\n学习目标\n--------\n\n正文。\n"
        if exercises.for_chapter(c.number) and with_section(c.number):
            body += "\n动手写\n------\n\n练习。\n"
        (src / "notebooks" / f"{c.stem}.rst").write_text(body, encoding="utf-8")
    status, warning = io.StringIO(), io.StringIO()
    Sphinx(str(src), str(src), str(out), str(out / ".doctrees"), "html", status=status, warning=warning,
           freshenv=True).build()
    return status.getvalue(), warning.getvalue(), out


def test_exercise_links_point_to_each_chapters_section(tmp_path):
    """自测页的“动手写”清单：每一章有练习的，一条链接指向那一章“动手写”一节的锚点（锚点在那一页上真的存在），
    链接后面是这一章的练习名；没有练习的章不列。"""
    from transformer_lab import exercises

    _, warnings, out = _mini_book(tmp_path, lambda n: True)
    assert "动手写" not in warnings, warnings
    page = (out / "index.html").read_text(encoding="utf-8")
    listed = [c for c in chapters.CHAPTERS if exercises.for_chapter(c.number)]
    assert listed and page.count('<li><p><a class="reference internal"') == len(listed)
    for c in listed:
        href = re.search(rf'href="(notebooks/{c.stem}\.html)#([^"]+)">第 {c.number} 章 ', page)
        assert href, c.stem
        target = (out / href[1]).read_text(encoding="utf-8")
        assert re.search(rf'<section id="{href[2]}">\s*<h2>动手写', target), c.stem
        for name in exercises.for_chapter(c.number):
            assert f'<span class="pre">{name}</span>' in page


def test_exercise_links_warn_when_a_chapter_lost_its_section(tmp_path):
    """反证：有练习的一章没有“动手写”一节（标题改了），建书时警告（-W 下失败），链接不会悄悄指向页首。"""
    from transformer_lab import exercises

    first = next(c.number for c in chapters.CHAPTERS if exercises.for_chapter(c.number))
    _, warnings, _ = _mini_book(tmp_path, lambda n: n != first)
    assert "“动手写”" in warnings and chapters.chapter(first).stem in warnings, warnings
