"""网站测试：构建（零警告）、离线（不请求任何外部地址）、控制台无报错、界面全是中文、axe-core 无障碍检查
零违规、电脑上图里的字够大、滑块用键盘和鼠标都能拖、只用键盘就能走到每个滑块和小测验。中文搜索的测试在
test_search.py，手机上的在 test_phone.py。

浏览器测试用 Playwright 驱动系统里的 Chromium（不下载浏览器）；找不到 Chromium 时跳过并说明怎么装。
构建和浏览器的 fixture 在 conftest.py（一次测试运行只构建一次）。每一页在电脑宽度上只打开一次
（``laptop``：一次把离线、报错、界面文字、axe、图的字号、键盘和鼠标、公式都记下来），各个测试再分别检查
记下的东西——以前每个测试各自把十八页打开一遍。
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tools.site import (
    HTML,
    LAPTOP,
    LATIN_WORD,
    MATH_REPORT_JS,
    MEASURE_JS,
    ROOT,
    TYPESET_JS,
    UI_TEXT_JS,
    assert_clean,
    book_words,
    figure_problems,
    frame_names,
    open_tab,
    pages,
)


def all_pages(site_dir: Path = HTML) -> list[Path]:
    """读者能打开的每一页：正文页，加上搜索页和索引页（index.html 只是跳转页）。"""
    return pages(site_dir) + [site_dir / "search.html", site_dir / "genindex.html"]


def test_every_toc_entry_has_a_page(site):
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    for entry in re.findall(r"(?:root|file):\s*(\S+)", toc):
        assert (site / f"{Path(entry).with_suffix('')}.html").exists(), entry


def test_no_third_party_urls_in_html(site):
    """页面里任何会被浏览器加载的资源（script/link/img/iframe）都必须来自本站。"""
    pattern = re.compile(r"<(script|link|img|iframe|source)\b[^>]*\b(src|href)=\"((?:https?:)?//[^\"]+)\"", re.I)
    bad = {str(p.relative_to(site)): m.group(3) for p in site.rglob("*.html")
           for m in pattern.finditer(p.read_text(encoding="utf-8"))}
    assert not bad, f"页面引用了外部资源：{bad}"


def test_explorable_frames_are_served_as_site_files(site):
    """网站上的帧是 _static/tlx/ 下的文件：页面里不再有 base64 帧，每个网址都指向存在的 PNG。"""
    count = 0
    for path in pages(site):
        text = path.read_text(encoding="utf-8")
        for blob in re.findall(r'<script type="application/json" class="tlx-data">(.*?)</script>', text, re.S):
            data = json.loads(blob)
            assert "frames" not in data and set(data["urls"]) == {"wide", "narrow"}  # 两种版式，各一套帧
            assert all(len(data["urls"][layout]) == len(data["alts"]) for layout in data["urls"])
            for url in data["urls"]["wide"] + data["urls"]["narrow"]:
                frame = (path.parent / url).resolve()
                assert frame.is_file() and frame.read_bytes().startswith(b"\x89PNG"), url
            count += 1
        assert not re.search(r"data:image/png;base64,[A-Za-z0-9+/]{20}", text)  # 页面里一帧 base64 的图也不剩
    assert count > 0


# ---------------------------------------------------------------- 电脑上每一页只打开一次

def _open(page, site, path: Path) -> None:
    """打开一页，等它加载完、网络静下来、公式排完；搜索页带上一个查询，让结果列表和摘要也在页面上。"""
    query = "?q=%E6%B3%A8%E6%84%8F%E5%8A%9B" if path.name == "search.html" else ""  # 注意力
    page.goto(f"{page.base}/{path.relative_to(site).as_posix()}{query}")
    page.wait_for_load_state("networkidle")
    page.evaluate(TYPESET_JS)
    if query:
        page.wait_for_function("() => (document.querySelector('#search-results p.search-summary') || {}).innerText")


# axe 的颜色对比检查（color-contrast）逐个元素算背景和字色，代码块里每个高亮的词都是一个元素：一章上千个，占了
# axe 八成的时间，查的却是同几十种高亮颜色。所以各页的对比检查跳过代码块（.highlight），代码的每一种高亮颜色
# 由 ``test_every_code_colour_has_enough_contrast_in_both_colour_modes`` 在浅色、深色两种模式下各查一遍——
# 样式表里出现的每一种，不只是某一页碰巧用到的。axe 的其余规则照样查代码块。
# 跳过的办法是改 color-contrast 这一条规则的选择器（axe.configure 的公开用法），不是给整次检查加 exclude：
# 这样每页只跑一次 axe（每跑一次，axe 都要把整页重新扫成它自己的节点树），和分两次跑（其余规则查全页、
# 对比规则排除代码块）查到的节点完全一样，laptop 一共省下约三分之一的 axe 时间。
AXE_CONTRAST = {"resultTypes": ["violations"], "runOnly": ["color-contrast"]}
CONTRAST_OUTSIDE_CODE = {"rules": [{"id": "color-contrast", "selector": "*:not(.highlight *)"}]}
AXE_RUN_JS = """([config, options]) => { axe.configure(config); return axe.run(document, options)
  .then(r => r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.html)}))); }"""


def _axe_tab(browser, server, site: Path):
    """电脑宽度的新标签页，准备好跑整页的 axe：axe 为检查样式表会重新取一遍 CSS，却把主题 theme.css 里的
    @import "../basic.css" 按页面的地址而不是样式表的地址解析（浏览器自己解析得对），于是请求一个不存在的
    /basic.css。把这个请求交给真正的文件。"""
    page = open_tab(browser, server, viewport=LAPTOP)
    basic_css = (site / "_static" / "basic.css").read_text(encoding="utf-8")
    page.route(re.compile(r".*/basic\.css$"), lambda r: r.continue_() if "/_static/basic.css" in r.request.url
               else r.fulfill(status=200, content_type="text/css", body=basic_css))
    return page


def _axe_violations(axe, page) -> list[dict]:
    """axe-core 在这一页上的全部违规（颜色对比不查代码块，见上）：注入 axe-playwright-python 自带的 axe.min.js，
    改好对比规则的选择器，跑一次全部规则。"""
    page.evaluate(axe.axe_script)
    return page.evaluate(AXE_RUN_JS, [CONTRAST_OUTSIDE_CODE, {"resultTypes": ["violations"]}])


@dataclass
class Visit:
    """在电脑上打开一页时记下的东西。"""

    headings: int = 0
    ui_text: list = field(default_factory=list)  # UI_TEXT_JS：[出处, 文字]
    violations: list = field(default_factory=list)  # axe 的每条违规，一句话
    figures: dict = field(default_factory=dict)  # MEASURE_JS
    math: dict = field(default_factory=dict)  # MATH_REPORT_JS（点开了全部折叠块之后）
    controls: dict = field(default_factory=dict)  # 正文页：键盘和鼠标试过的 {"slider": 个数, "quiz": 个数}
    control_problems: list = field(default_factory=list)  # 试的时候发现的问题，一条一句
    requested: list = field(default_factory=list)  # 这一页请求过的网址
    errors: list = field(default_factory=list)  # 控制台报错、页面异常
    external: list = field(default_factory=list)  # 试图访问的外部地址


@pytest.fixture(scope="module")
def laptop(site, browser, server) -> dict[str, Visit]:
    """1280 px 宽的电脑上把每一页（正文、搜索页、索引页）打开一次：等加载完、公式排完，记下标题个数、界面文字、
    axe-core 的检查结果（axe-playwright-python 自带的 axe.min.js，不联网），再把每张图滚进视野、量它的字号，
    然后在正文页上只用键盘、再用鼠标试每个滑块和小测验（``_keyboard_and_mouse``：从合着的小测验开始，所以在
    量图之后、点开折叠块之前），最后点开每个折叠块、数一数公式有没有都排好。"""
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    page = _axe_tab(browser, server, site)
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    visits, chapters = {}, set(pages(site))
    for path in all_pages(site):
        requested.clear()
        _open(page, site, path)
        visit = Visit(headings=page.locator("h1").count(), ui_text=page.evaluate(UI_TEXT_JS))
        for v in _axe_violations(axe, page):
            nodes = [html[:120] for html in v["nodes"][:3]]
            visit.violations.append(f"{v['id']} ({v['impact']}): {v['help']} {nodes}")
        visit.figures = page.evaluate(MEASURE_JS)
        if path in chapters:
            visit.controls, visit.control_problems = _keyboard_and_mouse(page, path.name)
        visit.math = page.evaluate(MATH_REPORT_JS)  # 最后做：它点开每个折叠块
        page.wait_for_load_state("networkidle")
        visit.requested, visit.errors, visit.external = list(requested), list(page.errors), list(page.external)
        page.errors.clear()
        page.external.clear()
        visits[path.name] = visit
    page.context.close()
    return visits


def test_every_page_loads_offline_without_console_errors(laptop):
    assert len(laptop) == len(all_pages())
    assert not {name: v.external for name, v in laptop.items() if v.external}, "页面试图访问外部地址"
    assert not {name: v.errors for name, v in laptop.items() if v.errors}, "浏览器控制台报错"
    assert all(v.headings >= 1 for v in laptop.values()), {name: v.headings for name, v in laptop.items()}


def test_the_offline_check_catches_an_outside_request(site, browser, server):
    """反证：页面要取外部地址（CDN、谷歌字体）时，浏览器不放行（``CHROMIUM_ARGS`` 里的 ``--host-resolver-rules``），
    ``open_tab`` 记下它；本站的文件照常取到。"""
    page = open_tab(browser, server)
    page.goto(f"{server}/notebooks/03_qkv.html")
    fetched = page.evaluate("""async () => Promise.all(["https://cdn.jsdelivr.net/npm/x.js", "//fonts.googleapis.com/css",
        "../_static/book.css"].map(u => fetch(u).then(r => r.status, () => "blocked")))""")
    external = list(page.external)
    page.context.close()
    assert fetched == ["blocked", "blocked", 200], fetched
    assert external == ["https://cdn.jsdelivr.net/npm/x.js", "http://fonts.googleapis.com/css"], external


def test_no_page_shows_an_english_ui_string(laptop):
    """页面上（文字和 title / aria-label / alt / placeholder 等属性，包括隐藏的菜单和提示）出现的英文词，
    都必须是本书自己用到的词（RNN、Transformer、softmax、代码里的名字……）；主题和扩展的界面字符串
    必须是中文（大陆用语）。"""
    allowed = book_words()
    english = {}
    for name, visit in laptop.items():
        for where, text in visit.ui_text:
            words = sorted(set(LATIN_WORD.findall(text)) - allowed)
            if words:
                english.setdefault(name, []).append(f"{where} {text[:60]!r}: {words}")
    assert sum(len(v.ui_text) for v in laptop.values()) > 1000  # 真的收集到了界面文字
    assert not english, "页面上有英文界面字符串：\n" + "\n".join(f"{k}: {v}" for k, v in english.items())


def test_axe_finds_no_accessibility_violations_on_any_page(laptop):
    """任何级别的违规都不允许。"""
    violations = {name: v.violations for name, v in laptop.items() if v.violations}
    assert not violations, "axe 报告了无障碍问题：\n" + "\n".join(f"{k}: {v}" for k, v in violations.items())


# 代码高亮的样品：样式表里每一条 ".highlight .X" 规则的 X（高亮行 .hll 也在其中）各写一个词，再加一段不带类名的
# 普通文字，放在正文最前面的一个代码块里；``mode`` 是颜色模式（浅色 light / 深色 dark，主题看 <html data-theme>）。
CODE_SAMPLE_JS = """mode => {
  document.documentElement.dataset.theme = mode;
  const classes = new Set();
  const visit = rules => { for (const r of rules) {
    if (r.cssRules) visit(r.cssRules);
    for (const m of (r.selectorText || '').matchAll(/\\.highlight\\s+\\.([A-Za-z0-9_-]+)/g)) classes.add(m[1]);
  } };
  for (const sheet of document.styleSheets) visit(sheet.cssRules);
  document.getElementById('tl-code-sample')?.remove();
  const box = document.createElement('div'), pre = document.createElement('pre');
  box.id = 'tl-code-sample'; box.className = 'highlight';
  box.appendChild(pre).append('plain text\\n');
  for (const c of [...classes].sort()) {
    const span = pre.appendChild(document.createElement('span'));
    span.className = c; span.textContent = `${c} token`; pre.append('\\n');
  }
  document.querySelector('main').prepend(box);
  return [...classes].sort();
}"""


def test_every_code_colour_has_enough_contrast_in_both_colour_modes(site, browser, server):
    """代码块里的每一种高亮颜色（样式表里的每一条 ``.highlight .X``）在浅色、深色模式下都过 axe 的对比检查；
    反证：把关键字 (.k) 改成浅灰，检查就报它。"""
    from axe_playwright_python.sync_playwright import Axe

    axe, page = Axe(), _axe_tab(browser, server, site)
    page.goto(f"{server}/notebooks/03_qkv.html")
    sample = {"include": [["#tl-code-sample"]]}
    for mode in ("light", "dark"):
        classes = page.evaluate(CODE_SAMPLE_JS, mode)
        result = axe.run(page, context=sample, options={**AXE_CONTRAST, "resultTypes": ["violations", "passes"]}).response
        bad = [n["target"] for v in result["violations"] for n in v["nodes"]]
        passed = sum(len(v["nodes"]) for v in result["passes"])
        assert not bad, f"{mode} 模式下这些代码颜色对比不够：{bad}"
        assert len(classes) > 30 and {"k", "s", "c", "mi"} <= set(classes) and passed > len(classes), (mode, classes)
    page.add_style_tag(content="html[data-theme] .highlight .k { color: #dddddd !important; }")
    page.evaluate(CODE_SAMPLE_JS, "light")
    result = axe.run(page, context=sample, options=AXE_CONTRAST).response
    assert [n["target"] for v in result["violations"] for n in v["nodes"]] == [["#tl-code-sample > pre > .k"]], result["violations"]
    # 各页那一次 axe（_axe_violations）：代码块里浅灰的 .k 不归它管，代码块外浅灰的一段字照样报出来
    page.evaluate("""() => { const p = document.createElement('p'); p.id = 'tl-pale'; p.style.color = '#dddddd';
                             p.textContent = '浅灰的正文'; document.querySelector('main').append(p); }""")
    found = [(v["id"], html) for v in _axe_violations(axe, page) for html in v["nodes"]]
    assert found == [("color-contrast", '<p id="tl-pale" style="color: rgb(221, 221, 221);">浅灰的正文</p>')], found
    assert_clean(page)
    page.context.close()


def test_every_figure_reads_on_a_laptop(laptop):
    """1280 px 宽的电脑上每张图显示宽版、最小的字 ≥ 12 px（怎么量见 test_phone.py 开头；手机上的检查在那里）。"""
    problems = [p for name, v in laptop.items() for p in figure_problems(v.figures, LAPTOP["width"], name)]
    assert sum(len(v.figures["figures"]) for v in laptop.values()) > 20
    assert not problems, "\n".join(problems)


def test_math_renders_everywhere_including_opened_quiz_answers(laptop):
    """每个公式都被 MathJax 排成了 mjx-container，点开的折叠块（小测验答案、"深入一点"）里的公式也看得见。
    静态的那一层检查（网页文字里没有 ``$…$`` 之类的原始写法）在 test_rendered_markup.py。"""
    checked_math = checked_drop_math = 0
    for name, visit in laptop.items():
        report = visit.math
        checked_math += report["math"]
        assert not report["bare"], f"{name} 上这些公式没有被 MathJax 排版：{report['bare']}"
        assert report["inDrops"] == report["renderedInDrops"], (name, report)
        for n_math, n_visible in zip(report["inDrops"], report["visible"]):
            assert n_visible >= n_math, f"{name}：点开折叠块后公式看不见：{report}"
        checked_drop_math += sum(report["inDrops"])
    assert checked_math > 100, f"加起来只有 {checked_math} 个公式：这个检查几乎什么也没查到"
    assert checked_drop_math > 0, "没有一个折叠块（小测验答案）里有公式：这个检查什么也没查到"


def test_a_laptop_downloads_only_wide_frames(site, laptop):
    """电脑上看过每一页、每张图都滚进视野之后，请求过的帧没有一张只属于窄版（手机版）。"""
    wide, narrow = frame_names(site)
    seen = {url.split("/")[-1] for v in laptop.values() for url in v.requested if "/_static/tlx/" in url}
    assert seen and seen <= wide and not seen & (narrow - wide), sorted(seen & (narrow - wide))[:5]


# ---------------------------------------------------------------- 中文界面

def test_every_page_declares_simplified_chinese(site):
    for path in all_pages(site):
        head = path.read_text(encoding="utf-8")[:1000]
        assert re.search(r'<html\b[^>]*\blang="zh-CN"', head), f"{path.name} 的 <html> 没有 lang=\"zh-CN\""


def test_ui_word_list_does_not_excuse_theme_strings():
    """“本书自己的词”里不能混进主题界面的英文词，否则上面的检查就形同虚设。"""
    ui_words = {"Toggle", "Link", "Color", "Settings", "Search", "Print", "Copy", "Download", "Fullscreen",
                "Contents", "Skip", "Back", "Click", "Show", "Hide", "Main", "Page", "previous", "next"}
    assert not ui_words & book_words()


def test_theme_strings_use_mainland_wording(site):
    """主题自带的 zh_CN 译文里的台湾用语被本书的目录盖掉了。"""
    text = (site / "notebooks" / "03_qkv.html").read_text(encoding="utf-8")
    for wrong, right in (("列印", "打印成 PDF"), ("Toggle primary sidebar", "切换侧边栏"), ("Color mode", "颜色模式"),
                         ("Link to this heading", "链接到此标题"), ("System Settings", "跟随系统设置")):
        assert wrong not in text and right in text, (wrong, right)


# ---------------------------------------------------------------- 只用键盘、用鼠标

MARK_TARGETS_JS = """() => {
  const targets = [...document.querySelectorAll(".tlx input.tlx-range, details > summary")];
  targets.forEach((el, i) => el.dataset.kbd = String(i));
  return targets.length;
}"""
# 正的 tabindex 会把元素插到 Tab 顺序的最前面，让键盘顺序和正文顺序对不上
POSITIVE_TABINDEX_JS = """() => [...document.querySelectorAll("[tabindex]")].some(e => e.tabIndex > 0)"""
# 焦点在不在带 data-kbd 的第 i 个目标上（一次往返读完）；FOCUS_JS 先把焦点放上去再看
FOCUSED_JS = """i => { const a = document.activeElement; return !!a && a.dataset.kbd === String(i); }"""
FOCUS_JS = """i => { document.querySelector(`[data-kbd="${i}"]`).focus(); return document.activeElement.dataset.kbd === String(i); }"""


def _tab_reaches(page, i: int) -> bool:
    """第 i 个目标在 Tab 键的顺序里：先把焦点放在它上面，按 Shift+Tab 退到它前面那个能拿焦点的元素，
    再按一次 Tab，焦点必须回到它身上。Tab 的顺序是一个环，环上的每一个元素从页面开头一路按 Tab 都走得到，
    所以这和从头按到尾是同一个结论；不在顺序里（tabindex=-1、被禁用、看不见）的控件回不来。
    不必从头按几百次 Tab：整页走一遍是键盘测试最慢的一段。"""
    if not page.evaluate(FOCUS_JS, i):
        return False
    page.keyboard.press("Shift+Tab")
    if page.evaluate(FOCUSED_JS, i):
        return False
    page.keyboard.press("Tab")
    return page.evaluate(FOCUSED_JS, i)


# 一个滑块所在的图此刻的样子：帧号、图片、替代文字、这个滑块显示的数值，以及滑块的值（一次往返读完）
STATE_JS = """slider => {
  const root = slider.closest(".tlx"), img = root.querySelector("img");
  const j = [...root.querySelectorAll("input.tlx-range")].indexOf(slider);
  return [root.getAttribute("data-frame"), img.getAttribute("src"), img.getAttribute("alt"),
          root.querySelectorAll("output")[j].innerText, slider.value];
}"""


# 一道题此刻的样子：答案展开了没有，答案的第一块看不看得见
QUIZ_JS = """s => { const d = s.parentElement, a = d.querySelector(":scope > :not(summary)");
  return [d.open, !!a && a.checkVisibility()]; }"""


def _check_quiz(page, summary, where: str) -> None:
    """Enter 展开答案（看得见），再按一次 Enter 合上。``summary`` 是元素句柄。"""
    assert summary.evaluate(QUIZ_JS) == [False, False], f"{where}：小测验一开始就是展开的"
    page.keyboard.press("Enter")
    assert summary.evaluate(QUIZ_JS) == [True, True], f"{where}：Enter 打不开小测验的答案"
    page.keyboard.press("Enter")
    assert summary.evaluate(QUIZ_JS) == [False, False], f"{where}：再按 Enter 合不上小测验的答案"


def _check_slider(page, slider, where: str) -> None:
    """键盘：Home 到最小值、→ 走一步、End 到最大值、← 退一步，图、替代文字和显示的数值都跟着变；
    鼠标：按住手柄拖到最左端、再拖到最右端，回到 Home、End 时的那两帧。``slider`` 是元素句柄（每次读状态只一个往返）。"""
    state = lambda: tuple(slider.evaluate(STATE_JS))  # noqa: E731
    low, n = slider.evaluate("s => [s.min, +s.max]")
    assert low == "0", f"{where}：滑块的最小值是 {low}"
    page.keyboard.press("Home")
    lo = state()
    page.keyboard.press("ArrowRight")
    step = state()
    page.keyboard.press("End")
    hi = state()
    assert (lo[4], step[4], hi[4]) == ("0", "1", str(n)), f"{where}：Home / → / End 之后滑块的值 {lo[4]}, {step[4]}, {hi[4]}"
    assert len({lo[:4], step[:4], hi[:4]}) == min(n + 1, 3), f"{where}：键盘操作没有换帧：{lo[0]}, {step[0]}, {hi[0]}"
    assert lo[2] != hi[2] and lo[3] != hi[3], f"{where}：替代文字和显示的数值都要随滑块变化"
    page.keyboard.press("ArrowLeft")
    assert state()[4] == str(n - 1)
    slider.scroll_into_view_if_needed()
    box = slider.bounding_box()
    y = box["y"] + box["height"] / 2
    # 手柄先在 n - 1 处（上面的 ←），拖到最左端之后在 0 处
    for at, target, expected in ((n - 1, box["x"] - 20, lo), (0, box["x"] + box["width"] + 20, hi)):
        thumb_x = box["x"] + box["width"] * at / n
        page.mouse.move(min(max(thumb_x, box["x"] + 4), box["x"] + box["width"] - 4), y)
        page.mouse.down()
        page.mouse.move(target, y, steps=2)
        page.mouse.up()
        assert state() == expected, f"{where}：鼠标拖动无效"


def _keyboard_and_mouse(page, name: str) -> tuple[dict, list[str]]:
    """在已经打开的正文页上：每个滑块和每道小测验都能用 Tab 走到；滑块用 Home / End / ← → 换帧、用鼠标拖到两端，
    题目用 Enter 展开答案。返回（试过的滑块、题目各几个，发现的问题）。"""
    count = page.evaluate(MARK_TARGETS_JS)
    if page.evaluate(POSITIVE_TABINDEX_JS):
        return {}, [f"{name}：有元素用了正的 tabindex，Tab 的顺序不再跟着正文走"]
    tried, problems = {"slider": 0, "quiz": 0}, []
    for i in range(count):
        if not _tab_reaches(page, i):
            problems.append(f"{name}：Tab 走不到第 {i} 个控件")
            continue
        target = page.locator(f'[data-kbd="{i}"]').element_handle()  # 解析一次，后面每次读状态只一个往返
        try:
            if target.evaluate("e => e.tagName") == "SUMMARY":
                tried["quiz"] += 1
                _check_quiz(page, target, name)
            else:
                tried["slider"] += 1
                _check_slider(page, target, f"{name} 第 {i} 个控件")
        except AssertionError as err:
            problems.append(str(err))
    return tried, problems


def test_the_tab_check_catches_a_control_outside_the_tab_order(browser, server):
    """反证：``_tab_reaches`` 认得出 Tab 走不到的控件（tabindex=-1、被禁用、藏起来的），放过走得到的；
    ``_keyboard_and_mouse`` 报出正的 tabindex。"""
    page = open_tab(browser, server)
    page.set_content("""<a href="#a">前</a><details><summary>题</summary>答</details>
      <div class="tlx"><input class="tlx-range" type="range" min="0" max="3"></div>
      <div class="tlx"><input class="tlx-range" type="range" min="0" max="3" tabindex="-1"></div>
      <div class="tlx"><input class="tlx-range" type="range" min="0" max="3" disabled></div>
      <div class="tlx" style="display:none"><input class="tlx-range" type="range" min="0" max="3"></div>
      <a href="#b">后</a>""")
    count = page.evaluate(MARK_TARGETS_JS)
    kinds = page.evaluate("() => [...document.querySelectorAll('[data-kbd]')].map(e => e.tagName)")
    reached = [_tab_reaches(page, i) for i in range(count)]
    page.evaluate("() => document.querySelector('a').tabIndex = 2")
    _, problems = _keyboard_and_mouse(page, "反证页")
    page.context.close()
    assert kinds == ["SUMMARY", "INPUT", "INPUT", "INPUT", "INPUT"], kinds
    assert reached == [True, True, False, False, False], reached
    assert problems == ["反证页：有元素用了正的 tabindex，Tab 的顺序不再跟着正文走"], problems


def test_every_slider_and_quiz_works_with_the_keyboard_and_the_mouse(laptop):
    """不用鼠标：每个滑块和每道小测验都能用 Tab 走到；滑块用 Home / End / ← → 换帧，题目用 Enter 展开答案。
    用鼠标：每个滑块都能拖到两端。在 ``laptop`` 打开每一页时试过（``_keyboard_and_mouse``）。"""
    problems = [p for v in laptop.values() for p in v.control_problems]
    assert not problems, "\n".join(problems)
    sliders = sum(v.controls.get("slider", 0) for v in laptop.values())
    quizzes = sum(v.controls.get("quiz", 0) for v in laptop.values())
    assert sliders > 30 and quizzes > 30, (sliders, quizzes)
