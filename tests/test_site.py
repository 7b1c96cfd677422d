"""网站测试：构建（零警告）、离线（不请求任何外部地址）、控制台无报错、滑块能拖、界面全是中文、
axe-core 无障碍检查零违规、只用键盘就能操作每个滑块和小测验。中文搜索的测试在 test_search.py。

浏览器测试用 Playwright 驱动系统里的 Chromium（不下载浏览器）；找不到 Chromium 时跳过并说明怎么装。
构建和浏览器的 fixture 在 conftest.py（两个测试文件共用，一次测试运行只构建一次）。
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from site_tools import HTML, LATIN_WORD, ROOT, UI_TEXT_JS, book_words, pages


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


# ---------------------------------------------------------------- 浏览器测试

def test_every_page_loads_offline_without_console_errors(site, page):
    for path in pages(site):
        page.goto(f"{page.base}/{path.relative_to(site).as_posix()}")
        page.wait_for_load_state("networkidle")
        assert page.locator("h1").count() >= 1, path


def _state(root, j):
    """当前帧号、图片内容、替代文字和第 j 个滑块显示的数值。"""
    img = root.locator("img")
    return (root.get_attribute("data-frame"), img.get_attribute("src"), img.get_attribute("alt"),
            root.locator("output").nth(j).inner_text())


def test_every_explorable_responds_to_keyboard_and_mouse(site, page):
    found = 0
    for path in pages(site):
        page.goto(f"{page.base}/{path.relative_to(site).as_posix()}")
        roots = page.locator(".tlx")
        for i in range(roots.count()):
            root = roots.nth(i)
            sliders = root.locator("input.tlx-range")
            for j in range(sliders.count()):
                found += 1
                slider = sliders.nth(j)
                slider.scroll_into_view_if_needed()
                n = int(slider.get_attribute("max"))
                # 键盘：← 按到最小值，→ 走一步，→ 按到最大值；每次图和显示的数值都要变
                slider.focus()
                for _ in range(n):
                    page.keyboard.press("ArrowLeft")
                lo = _state(root, j)
                assert slider.input_value() == "0"
                page.keyboard.press("ArrowRight")
                step = _state(root, j)
                for _ in range(n):
                    page.keyboard.press("ArrowRight")
                hi = _state(root, j)
                assert slider.input_value() == str(n)
                assert len({lo, step, hi}) == min(n + 1, 3), f"{path} 第 {i} 张图的键盘操作没有换帧：{lo[0]}, {step[0]}, {hi[0]}"
                assert lo[2] != hi[2] and lo[3] != hi[3], "替代文字和显示的数值都要随滑块变化"
                # 鼠标：按住滑块拖到最左端，再拖到最右端
                box = slider.bounding_box()
                y = box["y"] + box["height"] / 2
                for target, value, state in ((box["x"] - 20, "0", lo), (box["x"] + box["width"] + 20, str(n), hi)):
                    thumb_x = box["x"] + box["width"] * int(slider.input_value()) / n
                    page.mouse.move(min(max(thumb_x, box["x"] + 4), box["x"] + box["width"] - 4), y)
                    page.mouse.down()
                    page.mouse.move(target, y, steps=8)
                    page.mouse.up()
                    assert slider.input_value() == value and _state(root, j) == state, f"{path} 鼠标拖动无效"
    assert found > 0, "网站上一个可交互图也没有找到"


# ---------------------------------------------------------------- 中文界面、无障碍、只用键盘

def _open(page, site, path: Path) -> None:
    """打开一页并等它加载完；搜索页带上一个查询，让结果列表和摘要也在页面上。"""
    query = "?q=%E6%B3%A8%E6%84%8F%E5%8A%9B" if path.name == "search.html" else ""  # 注意力
    page.goto(f"{page.base}/{path.relative_to(site).as_posix()}{query}")
    page.wait_for_load_state("networkidle")
    if query:
        page.wait_for_function("() => (document.querySelector('#search-results p.search-summary') || {}).innerText")


def test_every_page_declares_simplified_chinese(site):
    for path in all_pages(site):
        head = path.read_text(encoding="utf-8")[:1000]
        assert re.search(r'<html\b[^>]*\blang="zh-CN"', head), f"{path.name} 的 <html> 没有 lang=\"zh-CN\""


def test_ui_word_list_does_not_excuse_theme_strings():
    """“本书自己的词”里不能混进主题界面的英文词，否则下面的检查就形同虚设。"""
    ui_words = {"Toggle", "Link", "Color", "Settings", "Search", "Print", "Copy", "Download", "Fullscreen",
                "Contents", "Skip", "Back", "Click", "Show", "Hide", "Main", "Page", "previous", "next"}
    assert not ui_words & book_words()


def test_no_page_shows_an_english_ui_string(site, page):
    """页面上（文字和 title / aria-label / alt / placeholder 等属性，包括隐藏的菜单和提示）出现的英文词，
    都必须是本书自己用到的词（RNN、Transformer、softmax、代码里的名字……）；主题和扩展的界面字符串
    必须是中文（大陆用语）。"""
    allowed = book_words()
    english = {}
    for path in all_pages(site):
        _open(page, site, path)
        for where, text in page.evaluate(UI_TEXT_JS):
            words = sorted(set(LATIN_WORD.findall(text)) - allowed)
            if words:
                english.setdefault(path.name, []).append(f"{where} {text[:60]!r}: {words}")
    assert not english, "页面上有英文界面字符串：\n" + "\n".join(f"{k}: {v}" for k, v in english.items())


def test_theme_strings_use_mainland_wording(site):
    """主题自带的 zh_CN 译文里的台湾用语被本书的目录盖掉了。"""
    text = (site / "notebooks" / "03_qkv.html").read_text(encoding="utf-8")
    for wrong, right in (("列印", "打印成 PDF"), ("Toggle primary sidebar", "切换侧边栏"), ("Color mode", "颜色模式"),
                         ("Link to this heading", "链接到此标题"), ("System Settings", "跟随系统设置")):
        assert wrong not in text and right in text, (wrong, right)


def test_axe_finds_no_accessibility_violations_on_any_page(site, page):
    """axe-core（axe-playwright-python 自带的 axe.min.js，不联网）检查每一页：任何级别的违规都不允许。"""
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    # axe 为检查样式表会重新取一遍 CSS，却把主题 theme.css 里的 @import "../basic.css" 按页面的地址而不是
    # 样式表的地址解析（浏览器自己解析得对），于是请求一个不存在的 /basic.css。把这个请求交给真正的文件。
    basic_css = (site / "_static" / "basic.css").read_text(encoding="utf-8")
    page.route(re.compile(r".*/basic\.css$"), lambda r: r.continue_() if "/_static/basic.css" in r.request.url
               else r.fulfill(status=200, content_type="text/css", body=basic_css))
    violations = {}
    for path in all_pages(site):
        _open(page, site, path)
        for v in axe.run(page).response["violations"]:
            nodes = [n["html"][:120] for n in v["nodes"][:3]]
            violations.setdefault(path.name, []).append(f"{v['id']} ({v['impact']}): {v['help']} {nodes}")
    assert not violations, "axe 报告了无障碍问题：\n" + "\n".join(f"{k}: {v}" for k, v in violations.items())


MARK_TARGETS_JS = """() => {
  const targets = [...document.querySelectorAll(".tlx input.tlx-range, details > summary")];
  targets.forEach((el, i) => el.dataset.kbd = String(i));
  return targets.length;
}"""


def _tab_through(page, count: int, limit: int = 1500) -> list[int]:
    """从页面开头一直按 Tab，记下依次拿到焦点的目标（滑块、小测验的题目）的编号，直到全部经过或焦点回到开头。"""
    page.evaluate("() => { document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0); }")
    order, first = [], None
    for _ in range(limit):
        page.keyboard.press("Tab")
        here = page.evaluate("() => { const e = document.activeElement; "
                             "return [e ? e.outerHTML.slice(0, 80) : '', e && e.dataset.kbd !== undefined ? +e.dataset.kbd : -1]; }")
        if first is None:
            first = here[0]
        elif here[0] == first:
            break
        if here[1] >= 0 and here[1] not in order:
            order.append(here[1])
            if len(order) == count:
                break
    return order


def test_every_slider_and_quiz_works_with_the_keyboard_alone(site, page):
    """不用鼠标：每个滑块和每道小测验都能用 Tab 走到；滑块用 Home / End / ← → 换帧，题目用 Enter 展开答案。"""
    sliders = quizzes = 0
    for path in pages(site):
        _open(page, site, path)
        count = page.evaluate(MARK_TARGETS_JS)
        reached = _tab_through(page, count)
        assert sorted(reached) == list(range(count)), f"{path.name}：Tab 走不到第 {sorted(set(range(count)) - set(reached))} 个控件"
        for i in reached:
            target = page.locator(f'[data-kbd="{i}"]')
            target.focus()  # 回到这个控件（上面的 Tab 已证明它在键盘顺序里）
            if target.evaluate("e => e.tagName") == "SUMMARY":
                quizzes += 1
                details = target.locator("xpath=..")
                assert not details.evaluate("d => d.open")
                page.keyboard.press("Enter")
                assert details.evaluate("d => d.open"), f"{path.name}：Enter 打不开小测验的答案"
                assert details.locator("> :not(summary)").first.is_visible()
                page.keyboard.press("Enter")
                assert not details.evaluate("d => d.open")
                continue
            sliders += 1
            root = target.locator("xpath=ancestor::*[contains(concat(' ', @class, ' '), ' tlx ')][1]")
            top = target.get_attribute("max")
            frame = lambda: (root.get_attribute("data-frame"), root.locator("img").get_attribute("src"))  # noqa: E731
            page.keyboard.press("Home")
            low = frame()
            assert target.input_value() == target.get_attribute("min")
            page.keyboard.press("End")
            high = frame()
            assert target.input_value() == top and high != low, f"{path.name}：Home / End 没有换帧"
            page.keyboard.press("ArrowLeft")
            assert int(target.input_value()) == int(top) - 1
    assert sliders > 0 and quizzes > 0, (sliders, quizzes)
