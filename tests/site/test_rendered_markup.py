"""网站上不许出现没渲染的标记：读者看到的文字里不能有 ``$…$``、``\\(``、``{term}``、``{dropdown}``、``:::`` 这类原始写法。

两层检查：
1. 静态：用 ``html.parser`` 读每一页构建出来的 HTML，去掉脚本、样式、数学公式的容器（交给 MathJax 的
   ``span.math`` / ``div.math``，以及 ``mjx-container``）和代码（``pre``、``code``：代码里本来就可以有 ``$``），
   剩下的就是读者看到的文字，在里面找原始标记。
2. 浏览器：打开每一页，点开每个折叠块（小测验的答案、"深入一点"），断言每个公式都被 MathJax 排成了
   ``mjx-container``——答案里的公式也要真的显示成公式。这一层在 ``test_site.py`` 的
   ``test_math_renders_everywhere_including_opened_quiz_answers``：电脑上每一页只打开一次，顺便数公式
   （``tools.site.MATH_REPORT_JS``）。

``test_the_detector_flags_the_old_chapter_1_quiz`` 证明检查能失败：旧的第 1 章把公式写在 ``<summary>`` 里，
网页上显示成了 ``$T$``（``tests/fixtures/old_ch01_quiz.html`` 是从当时构建出的网页里截下来的）。
"""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parents[1] / "fixtures"

# 这些元素里的文字不是"正文"：脚本、样式、公式的源码（MathJax 会把它排好）、代码。
_SKIP_TAGS = {"script", "style", "pre", "code", "mjx-container", "math", "svg", "template", "noscript"}
_SKIP_CLASSES = {"math", "MathJax", "MathJax_Preview"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

# 读者不该看到的原始标记。
RAW_MARKUP = {
    "行内公式 $…$": re.compile(r"\$\$?[^$\n]{1,200}?\$\$?"),
    "LaTeX 定界符 \\( \\) \\[ \\]": re.compile(r"\\[()\[\]]"),
    "MyST 角色或指令 {名字}": re.compile(  # 角色：{名字}`…`；指令：常见的名字（公式里的 W_{hh} 不算）
        r"\{[a-z][a-z0-9_-]*(?::[a-z0-9_-]+)*\}`"
        r"|\{(?:term|glue|dropdown|admonition|note|tip|hint|warning|caution|important|seealso|glossary|figure"
        r"|image|math|ref|doc|numref|eq|code-cell|toctree|card|tab-set|tab-item)(?::[a-z]+)?\}"),
    "glue": re.compile(r"\{glue"),
    "代码围栏 ```": re.compile(r"```"),
    "没生效的加粗 **": re.compile(r"\*\*"),  # 例如 的**{term}`…`**：紧贴标点的 ** 按 CommonMark 规则不算加粗
    "冒号围栏 :::": re.compile(r":::"),
    "指令选项 :class: 之类": re.compile(r"(?m)^\s*:(?:class|open|name|label|color|icon|animate):"),
}


class _ReaderText(HTMLParser):
    """收集读者看得到的文字（跳过 _SKIP_TAGS 和带 _SKIP_CLASSES 的元素及其全部内容）。"""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[bool] = []  # 每个打开的元素：它（或祖先）是不是被跳过的
        self.chunks: list[str] = []

    def _skipping(self) -> bool:
        return bool(self.stack) and self.stack[-1]

    def handle_starttag(self, tag, attrs):
        if tag in _VOID:
            return
        classes = set((dict(attrs).get("class") or "").split())
        self.stack.append(self._skipping() or tag in _SKIP_TAGS or bool(classes & _SKIP_CLASSES))

    def handle_startendtag(self, tag, attrs):
        pass

    def handle_endtag(self, tag):
        if tag not in _VOID and self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if not self._skipping():
            self.chunks.append(data)


def reader_text(html: str) -> str:
    parser = _ReaderText()
    parser.feed(html)
    parser.close()
    return "".join(parser.chunks)


def raw_markup(html: str) -> list[tuple[str, str]]:
    """读者文字里的每处原始标记：(哪一类, 前后各 20 个字的上下文)。"""
    text = reader_text(html)
    found = []
    for kind, pattern in RAW_MARKUP.items():
        for m in pattern.finditer(text):
            found.append((kind, text[max(0, m.start() - 20): m.end() + 20].replace("\n", " ")))
    return found


# ---------------------------------------------------------------- 检查本身能失败


def test_the_detector_flags_the_old_chapter_1_quiz():
    html = (FIXTURES / "old_ch01_quiz.html").read_text(encoding="utf-8")
    found = raw_markup(html)
    kinds = {kind for kind, _ in found}
    assert kinds == {"行内公式 $…$"}, found
    snippets = " ".join(context for _, context in found)
    for literal in ("$T$", r"$\tanh$", r"$W_{hh}=g\,Q$"):
        assert literal in snippets, f"没查出 {literal}：{found}"
    # 答案正文里的公式在 span.math 里，交给 MathJax，不算原始标记：
    assert r"\mathrm{diag}" not in snippets


@pytest.mark.parametrize("snippet, kind", [
    ("<p>权重 {term}`softmax` 的和</p>", "MyST 角色或指令 {名字}"),
    ("<p>```{dropdown} 答案</p>", "代码围栏 ```"),
    ("<p>{dropdown} 答案</p>", "MyST 角色或指令 {名字}"),
    ("<p>:::{note}</p>", "冒号围栏 :::"),
    ("<p>数是 {glue:text}`x`</p>", "glue"),
    (r"<p>公式 \(x^2\) 没排版</p>", "LaTeX 定界符 \\( \\) \\[ \\]"),
    ("<details><summary>长度 $T$ 翻倍</summary></details>", "行内公式 $…$"),
    ("<p>:class: dropdown</p>", "指令选项 :class: 之类"),
    ('<p>叫**<a href="#">注意力权重</a>**</p>', "没生效的加粗 **"),
])
def test_each_kind_of_raw_markup_is_flagged(snippet, kind):
    assert kind in {k for k, _ in raw_markup(snippet)}


@pytest.mark.parametrize("snippet", [
    r'<p>长度 <span class="math notranslate nohighlight">\(T\)</span> 翻倍</p>',
    r'<div class="math notranslate nohighlight">\[h_t = \tanh(x)\]</div>',
    '<div class="cell_input"><pre>print(f"{x:.2f} 是 $5")</pre></div>',
    "<p>行内代码 <code>{term}</code> 是在讲写法</p>",
    "<script>var a = '$x$';</script><style>a{}</style>",
    "<p>集合 {0.5, 0.8} 和价格 5 元</p>",
])
def test_math_containers_code_and_plain_text_are_not_flagged(snippet):
    assert raw_markup(snippet) == []


# ---------------------------------------------------------------- 整个网站


# 已登记、待各章作者修的（页面 -> {哪一类: 几处}）。修好了就从这里删掉：多了少了测试都会失败。
# 紧贴中文标点的 **…** 按 CommonMark 的规则不算加粗，读者看到的是两个星号（例如 就是**{term}`位置编码`**）。
KNOWN_RAW_MARKUP: dict[str, dict[str, int]] = {}


def test_no_page_shows_raw_markup(site):
    everything = sorted(p for p in site.rglob("*.html") if "_static" not in p.parts)
    assert len(everything) >= 8, f"构建出的页面太少：{everything}"
    problems, where = {}, {}
    for path in everything:
        found = raw_markup(path.read_text(encoding="utf-8"))
        if found:
            name = path.relative_to(site).as_posix()
            problems[name] = dict(Counter(kind for kind, _ in found))
            where[name] = [context for _, context in found]
    assert problems == KNOWN_RAW_MARKUP, (
        f"网页上有没渲染的标记：{where}（已登记待修的：{KNOWN_RAW_MARKUP}；修好了就从 KNOWN_RAW_MARKUP 里删掉）")
