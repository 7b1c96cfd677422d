"""自测小部件的 HTML（``transformer_lab/quiz/html.py`` + ``quiz.js`` + ``quiz.css``）：结构、转义、样式和脚本原样来自
文件、元素 id 由内容决定（不依赖之前画过几次），以及同一页上放两份一模一样的自测时，浏览器里两份互不干扰。"""

from __future__ import annotations

import fnmatch
import html
import re
from pathlib import Path

import pytest

from transformer_lab import quiz
from transformer_lab.quiz import html as quiz_html
from transformer_lab.quiz.html import QUIZ_CSS, QUIZ_JS, default_prefix, render_html
from transformer_lab.quiz.question import as_dicts, notebook_href

from helpers.errors import error_table_test
from helpers.html_scripts import Page, scripts
from tools.site import ROOT

BANK = quiz.questions()
DATA = as_dicts(BANK, notebook_href)
QUIZ_DIR = Path(quiz_html.__file__).parent
VE, TE = ValueError, TypeError


def test_widget_html_structure():
    page = render_html(DATA, prefix="t")
    assert page.count('class="tlq-q"') == len(BANK)
    assert page.count('class="tlq-feedback" aria-live="polite"') == len(BANK)
    assert f'data-total="{len(BANK)}"' in page and "得分：0 / " in page
    for q in DATA:
        block = page.split(f'id="t-{q["qid"]}"', 1)[1].split('<div class="tlq-q"', 1)[0]
        assert html.escape(q["prompt"], quote=True) in block
        assert f'href="{html.escape(q["href"], quote=True)}"' in block
        if q["kind"] == "number":
            assert f'data-answer="{q["answer"]!r}"' in block and f'<label for="t-{q["qid"]}-in">' in block
        else:
            assert block.count('type="radio"') == len(q["choices"]) == block.count("<label for=")
            assert f'data-correct="{q["correct"]}"' in block
    ((tag, body),) = [s for s in scripts(page) if QUIZ_JS.strip()[:40] in s[1]]
    assert body == QUIZ_JS


def test_assets_are_the_files_verbatim():
    """样式和脚本都是文件（和 widgets/player.js 一样用 Path.read_text 读进来），原样写进 HTML，各一次。"""
    assert QUIZ_JS == (QUIZ_DIR / "quiz.js").read_text(encoding="utf-8")
    assert QUIZ_CSS == (QUIZ_DIR / "quiz.css").read_text(encoding="utf-8")
    page = render_html(DATA[:2], prefix="t")
    assert page.count("<style>") == 1 and f"<style>{QUIZ_CSS}</style>" in page
    assert ".tlq-feedback.tlq-right" in QUIZ_CSS and "</" not in QUIZ_CSS  # 样式里不会提前关掉 <style>


def test_assets_are_package_data():
    """装成包（不是可编辑安装）时，js 和 css 也要在包里：pyproject.toml 的 package-data 要覆盖 quiz/ 下的每个资源文件。"""
    tomllib = pytest.importorskip("tomllib")
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"]["transformer_lab"]
    assets = [p.relative_to(ROOT / "transformer_lab").as_posix() for p in QUIZ_DIR.iterdir()
              if p.is_file() and p.suffix not in {".py", ".pyc"}]
    assert sorted(assets) == ["quiz/quiz.css", "quiz/quiz.js"]
    for asset in assets:
        assert any(fnmatch.fnmatch(asset, pattern) for pattern in patterns), asset


def test_fields_are_what_as_dicts_gives():
    """render_html 检查的字段表就是 as_dicts 给出的字段，一个不多、一个不少。"""
    assert set(quiz_html.FIELDS) == set(DATA[0]) and len(quiz_html.FIELDS) == len(DATA[0])


def test_widget_escapes_nasty_text():
    """题面里即使有 "</script>" 或 "<!--"，也关不掉脚本、插不进标签。"""
    nasty = dict(DATA[0], prompt='</script><!--<script>"x"&', href='a"b')
    page = render_html([nasty], prefix="n")
    assert "</script><!--" not in page.split("<script>", 1)[0]
    assert len(scripts(page)) == 1 and scripts(page)[0][1] == QUIZ_JS
    assert 'href="a&quot;b"' in page


def test_default_prefix_comes_from_the_content():
    """默认的 id 前缀由题目内容算出：同样的题每次得到一模一样的 HTML（不像进程里的计数器那样依赖之前画过几次），
    不同的题得到不同的前缀。"""
    first = render_html(DATA)
    render_html(DATA[:3])
    assert render_html(DATA) == first
    prefix = default_prefix(DATA)
    assert re.fullmatch(r"tlq-[0-9a-f]{8}", prefix) and f'<div class="tlq" id="{prefix}"' in first
    assert len({default_prefix(DATA), default_prefix(DATA[:3]), default_prefix(DATA[1:]),
                default_prefix([dict(DATA[0], prompt="改了一个字")])}) == 4
    assert render_html(DATA, prefix="tlq").startswith('<div class="tlq" id="tlq" ')  # 网站上的自测页用固定前缀


# ---------------------------------------------------------------- 浏览器里：同一页上两份一模一样的自测

def test_two_identical_copies_on_one_page_do_not_interfere(browser):
    """两份同样的自测（比如两个 notebook 都显示了 ``tl.self_test(4)``）前缀相同；脚本给后一份换前缀，
    于是 id 不重复、每个标签指向自己这份的选项、两份的单选组和得分各管各的。"""
    widget = quiz.self_test(4).html
    choice = next(q for q in BANK if q.chapter == 4 and q.kind != "number")
    context = browser.new_context()
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_content(f"<!doctype html><html lang='zh-CN'><body>{widget}{widget}</body></html>")
    page.wait_for_function("() => document.querySelectorAll('.tlq[data-ready]').length === 2")
    ids = page.evaluate("() => [...document.querySelectorAll('[id]')].map(e => e.id)")
    assert len(ids) == len(set(ids)), "id 重复"
    prefix = default_prefix(as_dicts(tuple(q for q in BANK if q.chapter == 4), notebook_href))
    roots = page.locator(".tlq")
    assert [roots.nth(i).get_attribute("id") for i in range(2)] == [prefix, f"{prefix}-2"]
    # 每个标签指向自己这一份里的输入框
    assert page.evaluate("""() => [...document.querySelectorAll('.tlq label[for]')].every(
        l => l.closest('.tlq').contains(document.getElementById(l.htmlFor)))""")
    first, second = (roots.nth(i).locator(f'[data-qid="{choice.qid}"] input[type=radio]') for i in range(2))
    first.nth(choice.correct).check()
    second.nth((choice.correct + 1) % len(choice.choices)).check()
    assert first.nth(choice.correct).is_checked(), "后一份的单选把前一份的选项取消了：两份的单选组连在一起了"
    roots.nth(1).locator(f'[data-qid="{choice.qid}"] .tlq-submit').click()
    assert roots.nth(1).locator(".tlq-score").inner_text().startswith("得分：0 / ")
    assert roots.nth(0).locator(".tlq-score").inner_text().endswith("（已答 0 题）")
    roots.nth(0).locator(f'[data-qid="{choice.qid}"] .tlq-submit').click()
    assert roots.nth(0).locator(".tlq-score").inner_text().startswith("得分：1 / ")
    assert not errors, errors
    context.close()


def test_the_duplicate_check_can_fail():
    """反证：脚本运行之前，两份一模一样的自测确实有重复的 id——上面的测试查到的“不重复”是脚本做到的，不是碰巧。"""
    widget = quiz.self_test(4).html
    ids = re.findall(r' id="([^"]+)"', widget + widget)
    assert len(ids) == 2 * len(set(ids))


ERROR_CASES = [
    ("empty", lambda: render_html([]), TE, r"questions 必须是非空的 dict 列表.*收到 list"),
    ("not-a-list", lambda: render_html(tuple(DATA)), TE, r"questions 必须是非空的 dict 列表.*收到 tuple"),
    ("not-dicts", lambda: render_html(["q"]), TE, r"questions 必须是非空的 dict 列表"),
    ("prefix-space", lambda: render_html([{}], prefix="a b"), VE, r"prefix 只能含.*'a b'"),
    ("prefix-chinese", lambda: render_html([{}], prefix="自测"), VE, r"prefix 只能含.*'自测'"),
    # 手写的题目数据缺字段、kind 写错、列表写成字符串：中文报错写明第几道题、哪个字段（修复前是 KeyError 'qid'、
    # KeyError 'essay'、TypeError: 'NoneType' object is not iterable，或者把字符串拆成一个个字显示出来）
    ("missing-field", lambda: render_html([{k: v for k, v in DATA[0].items() if k != "qid"}]), VE,
     r"questions\[0\] 缺少字段 \['qid'\]"),
    ("kind", lambda: render_html([DATA[0], dict(DATA[1], kind="essay")]), VE, r"questions\[1\]\['kind'\]='essay' 不存在"),
    ("choices-none", lambda: render_html([dict(DATA[0], choices=None)]), TE,
     r"questions\[0\]\['choices'\] 必须是字符串的列表.*NoneType"),
    ("reveal-str", lambda: render_html([dict(DATA[0], reveal="1 + 1")]), TE,
     r"questions\[0\]\['reveal'\] 必须是字符串的列表.*'1 \+ 1'"),
]
test_documented_errors = error_table_test(ERROR_CASES)


# ---------------------------------------------------------------- 每个字段都放敌意文字：读回来，结构一个不多

HOSTILE = "\"><script>alert(1)</script><img src=x onerror=alert(2)>' & <b x=\"y\">&amp;"


def _question_data(kind: str, text: str) -> dict:
    """一道题，每个文字字段都是 ``text``（href 也是：它是相对地址）。"""
    q = {"qid": text, "number": text, "group": text, "kind": kind, "prompt": text, "choices": [text, text],
         "why": [text, text], "correct": 1, "answer": 2.5, "tolerance": 0.1, "unit": text, "explain": text,
         "reveal": [text, text], "chapter": text, "where": text, "href": text}
    if kind == "number":
        q.update(choices=[], why=[], correct=None)
    return q


def _shape(page: str) -> tuple[list, list]:
    """读回的结构：每个开始标签 (名字, 属性名) 的顺序，和所有属性值。"""
    tags = Page(page).tags
    return [(tag, sorted(attrs)) for tag, attrs in tags], [v for _, attrs in tags for _, v in sorted(attrs.items())]


@pytest.mark.parametrize("kind", ["choice", "number", "predict"])
def test_hostile_text_in_every_field_adds_no_element_or_attribute(kind):
    """题库的每个字段（包括题号 qid：它写进 id、for、name、data-qid）都放 "><script>、引号、&、<：
    用 html.parser 读回来，标签和属性和放普通文字时一模一样（一个 <script>、<img> 也没多），每个属性值原样读回。
    修复前，填数题的 ``<label for=...>`` 没有转义：qid 里的 "> 关掉属性、造出 <script> 和 <img onerror>。"""
    plain, hostile = (render_html([_question_data(kind, t)], prefix="p") for t in ("ZZ", HOSTILE))
    (plain_tags, plain_values), (hostile_tags, hostile_values) = _shape(plain), _shape(hostile)
    assert hostile_tags == plain_tags
    assert hostile_values == [v and v.replace("ZZ", HOSTILE) for v in plain_values]
    assert [body for _, body in scripts(hostile)] == [QUIZ_JS]
    assert "ZZ" in "".join(v or "" for v in plain_values)  # 普通文字确实进了属性（否则上面的比较什么也没查）


def test_the_parse_check_finds_an_unescaped_attribute():
    """反证：像修复前那样把 qid 直接写进 for=，读回来就多出 <script>、<img> 和 onerror——上面的比较能发现它。"""
    raw = '<label for="p-{}-in">x</label>'
    plain, hostile = _shape(raw.format("ZZ")), _shape(raw.format(HOSTILE))
    assert hostile[0] != plain[0]
    assert ("script", []) in hostile[0] and ("img", ["onerror", "src"]) in hostile[0]


def test_attributes_are_written_in_one_place():
    """属性值只在 ``_tag`` 里写进 HTML：模块里别处没有 ``="{`` 这样直接插值的属性。"""
    source = Path(quiz_html.__file__).read_text(encoding="utf-8")
    assert re.findall(r'=\"\{', source) == ['="{'] and "def _tag" in source
