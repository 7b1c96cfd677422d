"""包能写出的每一种 HTML，字段里塞进敌意的内容，也造不出脚本：没有多出来的 <script>、没有 on* 事件属性、
没有 javascript: 链接。用标准库 html.parser 把 HTML 读回来检查（``find_script_injection``），附反证。

覆盖的 HTML：自测 (``quiz.html.render_html``，每个字段：qid、kind、correct、answer、tolerance、href、where、
prompt、选项……)、可交互图的静态版 (``widgets.static.render_html``：标题、滑块标签、替代文字)、建网站时把帧搬成文件
(``externalize_frames`` 的 prefix)。
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_lab import quiz
from transformer_lab.quiz.html import QUIZ_JS, render_html
from transformer_lab.quiz.question import as_dicts, notebook_href
from transformer_lab.widgets.static import PLAYER_JS, externalize_frames

from helpers.errors import call, error_table_test
from helpers.html_scripts import Page, scripts
from helpers.tiny_view import tiny

HOSTILE = [
    '"><script>alert(1)</script>',
    "' onmouseover='alert(1)",
    '" onfocus="alert(1)" autofocus x="',
    "javascript:alert(1)",
    "<img src=x onerror=alert(1)>",
    "</div><svg onload=alert(1)>",
    "--><script>alert(1)</script><!--",
]
BAD_LINKS = ["javascript:alert(1)", "JaVaScRiPt:alert(1)", " java\tscript:alert(1)", "data:text/html,<script>x</script>",
             "vbscript:msgbox(1)"]
OWN_SCRIPTS = {QUIZ_JS, PLAYER_JS}
# 脚本协议（浏览器会丢掉其中的空白和控制字符）；data: 只许本包自己的 PNG 帧
JS_URL = re.compile(r"^\s*(j\s*a\s*v\s*a\s*s\s*c\s*r\s*i\s*p\s*t|vbscript|data(?!:image/png;base64,))\s*:", re.I)


def find_script_injection(text: str) -> list[str]:
    """读回 HTML，列出所有可疑之处：不是本包自己的 <script>（或数据脚本之外多出来的）、on* 属性、脚本协议的链接。"""
    problems = []
    page = Page(text)
    for tag, attrs in page.tags:
        for name, value in attrs.items():
            if name.lower().startswith("on"):
                problems.append(f"<{tag}> 有事件属性 {name}")
            if name.lower() in ("href", "src", "srcset", "action", "formaction", "xlink:href") and JS_URL.match(value or ""):
                problems.append(f"<{tag} {name}> 是脚本链接 {value!r}")
        if tag in ("svg", "iframe", "object", "embed"):
            problems.append(f"多出了 <{tag}>")
    for open_tag, body in scripts(text):
        if body not in OWN_SCRIPTS and 'class="tlx-data"' not in open_tag and 'type="application/json"' not in open_tag:
            problems.append(f"多出了一段脚本 {open_tag}{body[:40]!r}")
    return problems


def hostile_question(value: str, field: str) -> dict:
    base = as_dicts(quiz.questions(), notebook_href)
    number = next(q for q in base if q["kind"] == "number")
    choice = next(q for q in base if q["kind"] != "number")
    q = dict(number if field in ("answer", "tolerance", "unit") else choice)
    q[field] = value
    return q


TEXT_FIELDS = ["qid", "correct", "prompt", "where", "explain", "group", "chapter", "number", "answer", "tolerance", "unit"]


@pytest.mark.parametrize("field", TEXT_FIELDS)
@pytest.mark.parametrize("value", HOSTILE)
def test_quiz_fields_cannot_inject_script(field, value):
    page = render_html([hostile_question(value, field)], prefix="t")
    assert find_script_injection(page) == []


@settings(max_examples=40)
@given(st.sampled_from(TEXT_FIELDS), st.text(alphabet=st.sampled_from(list("<>\"'&=/ :onscriptaler()!-x")), max_size=40))
def test_quiz_fields_cannot_inject_script_property(field, value):
    """任意由危险字符拼成的字段值：读回的 HTML 里找不到注入。"""
    assert find_script_injection(render_html([hostile_question(value, field)], prefix="t")) == []


@pytest.mark.parametrize("link", BAD_LINKS)
def test_quiz_refuses_script_links(link):
    with pytest.raises(ValueError, match="href 只能是相对地址或 http"):
        render_html([hostile_question(link, "href")], prefix="t")


@pytest.mark.parametrize("link", ["03_qkv.ipynb#q", "../book/glossary.md", "https://arxiv.org/abs/1706.03762",
                                  "http://example.org/a?b=1&c=2", "#top"])
def test_quiz_keeps_relative_and_http_links(link):
    page = render_html([hostile_question(link, "href")], prefix="t")
    assert any(attrs.get("href") == link for tag, attrs in Page(page).tags if tag == "a")


@pytest.mark.parametrize("value", HOSTILE)
def test_static_explorable_fields_cannot_inject_script(value):
    text = tiny(label=value, title=value, alt=value + " {a}").static_html()
    assert find_script_injection(text) == []


@pytest.mark.parametrize("prefix", ['_frames/"><script>alert(1)</script>', "_frames/' onerror='alert(1)", "a&b/"])
def test_externalize_frames_escapes_its_prefix(prefix, tmp_path):
    out = externalize_frames(tiny().static_html(), tmp_path, prefix)
    assert find_script_injection(out) == []
    (img,) = Page(out).all("img")
    assert img["src"].startswith(prefix)  # 转义后浏览器读回来的正是原来的 prefix


@pytest.mark.parametrize("prefix", BAD_LINKS)
def test_externalize_frames_refuses_script_prefixes(prefix, tmp_path):
    with pytest.raises(ValueError, match="prefix 只能是相对地址或 http"):
        externalize_frames(tiny().static_html(), tmp_path, prefix)


def test_the_checker_can_fail():
    """反证：没转义的字段、事件属性、脚本链接、多出来的脚本，find_script_injection 都能发现。"""
    for bad in ['<div data-qid="x"><script>alert(1)</script>">', '<div id="a" onmouseover="alert(1)">',
                '<a href="javascript:alert(1)">x</a>', '<a href=" JaVaScript:alert(1)">x</a>',
                '<img src="x" onerror="alert(1)">', "<svg onload=alert(1)>", '<a href="data:text/html,x">x</a>']:
        assert find_script_injection(bad), bad
    assert find_script_injection(render_html([hostile_question("x", "qid")], prefix="t")) == []


ERROR_CASES = [
    ("quiz-href-javascript", call(render_html, [hostile_question("javascript:alert(1)", "href")], prefix="t"), ValueError,
     r"href 只能是相对地址或 http\(s\) 网址.*'javascript'"),
    ("quiz-href-not-string", call(render_html, [hostile_question(None, "href")], prefix="t"), TypeError,
     r"href 必须是字符串.*NoneType"),
    ("externalize-prefix-javascript", lambda: externalize_frames("<p></p>", None, "javascript:x/"), ValueError,
     r"prefix 只能是相对地址或 http\(s\) 网址"),
    ("externalize-prefix-not-string", lambda: externalize_frames("<p></p>", None, 3), TypeError, r"prefix 必须是字符串.*int 3"),
]
test_documented_errors = error_table_test(ERROR_CASES)
