"""手机和电脑上读这本书：图里的字够大、页面不横着滚、滑块手指按得住、点图看大图、手机只下载窄版的帧、
帧按需预取、每章下载的字节有上限、页头只有一个搜索入口而且书名看得见。

字有多大，在浏览器里量：每张图的数据里写着它最小的字在 PNG 上有几个像素（``text_px``，由画图时每一段字的
字号和 dpi 算出，见 ``widgets/static.py``），乘上图在屏幕上实际的宽度 / PNG 的宽度，就是屏幕上的 CSS px。
390 px 宽的手机上要 ≥ 11 px，1280 px 宽的电脑上要 ≥ 12 px。正文里除了这种图，不许有别的 <img>。
``test_the_text_size_check_fails_on_an_old_style_figure`` 证明这个检查能失败：改版前那种 11 英寸宽、8 pt 字的图。
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

import pytest

from transformer_lab.widgets.explorable import Explorable, Slider

from helpers.tiny_view import Titled
from tools.site import (
    LAPTOP,
    MEASURE_JS,
    MIN_PX,
    PHONE,
    SCROLL_JS,
    figure_problems,
    frame_names,
    open_tab,
    pages,
    weigh,
)

# 手机打开一章（滚动之前）最多下载多少字节，滚完全页最多多少：issue 20 的目标，和 benchmarks/site_benchmarks.py
# 量的是同一件事（那里另给 gzip 后的传输量）。字节数由网站的文件决定，不随机器快慢变，所以可以在测试里断言。
FIRST_SCREEN_BYTES, WHOLE_PAGE_BYTES = 2_000_000, 6_000_000
SMALL_PHONE = {"width": 360, "height": 800}  # 小一号的手机：``phone`` 量完 390 px 后把同一页缩到这么宽再量一次
# 页面比屏幕宽时，是哪几个元素伸出了屏幕
WIDE_ELEMENTS_JS = """width => [...document.querySelectorAll('main *')]
    .filter(e => e.getBoundingClientRect().right > width + 1).slice(0, 3).map(e => e.tagName + '.' + e.className)"""
# 等浏览器画完两帧：改了屏幕宽度之后，样式和版面到那时都按新宽度重新算过了
TWO_FRAMES_JS = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"


@dataclass
class PhoneVisit:
    """在手机上打开一页、滚完全页时记下的东西。"""

    first: list  # 打开、公式排完、网络静下来时收到的每个回应 (网址, 内容)
    whole: list  # 不碰滑块从头滚到尾之后
    sideways: dict  # {屏幕宽度: (页面宽度, 伸出屏幕的元素)}：PHONE 宽，再缩到 SMALL_PHONE 宽之后（``_sideways``）
    figures: dict  # MEASURE_JS
    errors: list
    external: list


def _sideways(page, width: int) -> tuple[int, list]:
    """页面此刻有多宽，比屏幕宽 ``width`` 宽时再列出伸出去的元素。手机模拟下页面比屏幕宽时，浏览器会把布局视口
    撑宽，innerWidth 跟着变大：所以和屏幕的宽度比，不和 innerWidth 比。"""
    scroll = page.evaluate("() => document.documentElement.scrollWidth")
    return scroll, page.evaluate(WIDE_ELEMENTS_JS, width) if scroll > width else []


@pytest.fixture(scope="module")
def phone(site, browser, server) -> dict[str, PhoneVisit]:
    """390 px 宽的手机（触屏）上把每一页打开一次：每页一个新的浏览器环境（缓存是空的，下载的字节才算数），
    ``weigh`` 记下打开时和滚完后的下载，再量页面宽度和每张图的字号；最后把屏幕缩到 360 px 宽（``SMALL_PHONE``，
    页面照常按新宽度重新排版），再量一次页面宽度——不必为小一号的手机把每一页再下载、排版一遍。

    像素比用 1，不用真手机的 3：网站上没有按像素比挑选的资源（``test_no_download_depends_on_the_pixel_ratio``），
    下载的字节一样，字号按 CSS px 量也一样，浏览器却少画八成多的像素。benchmarks/site_benchmarks.py 用像素比 3。"""
    visits = {}
    for path in pages(site):
        rel = path.relative_to(site).as_posix()
        page = open_tab(browser, server, viewport=PHONE, is_mobile=True, has_touch=True)
        first, whole = weigh(page, f"{server}/{rel}")
        sideways = {PHONE["width"]: _sideways(page, PHONE["width"])}
        figures = page.evaluate(MEASURE_JS)
        page.set_viewport_size(SMALL_PHONE)
        page.evaluate(TWO_FRAMES_JS)  # 等按新宽度排好版
        sideways[SMALL_PHONE["width"]] = _sideways(page, SMALL_PHONE["width"])
        visits[rel] = PhoneVisit(first, whole, sideways, figures, list(page.errors), list(page.external))
        page.context.close()
    return visits


def test_no_download_depends_on_the_pixel_ratio(site):
    """页面和样式表里没有按屏幕像素比挑选的资源（srcset 的 2x / 3x、带 w 的宽度候选，image-set()，
    按 resolution / device-pixel-ratio 的媒体查询）：像素比 1 和 3 的手机下载同样的文件。"""
    density = re.compile(r'srcset="[^"]*(?:,|\s\d+(?:\.\d+)?[xw]\b)[^"]*"')
    by_ratio = re.compile(r"image-set\(|min-resolution|max-resolution|device-pixel-ratio", re.I)
    pages_with = [p.name for p in site.rglob("*.html") if density.search(p.read_text(encoding="utf-8"))]
    sheets_with = [c.name for c in site.rglob("*.css") if by_ratio.search(c.read_text(encoding="utf-8", errors="replace"))]
    assert not pages_with and not sheets_with, (pages_with, sheets_with)
    assert not density.search('<img srcset="a.png">') and density.search('<img srcset="a.png 1x, b.png 2x">')


def test_every_page_loads_offline_without_console_errors_on_a_phone(phone):
    assert not {name: v.external for name, v in phone.items() if v.external}, "页面试图访问外部地址"
    assert not {name: v.errors for name, v in phone.items() if v.errors}, "浏览器控制台报错"


def test_every_figure_reads_on_a_phone(phone):
    """390 px 宽的手机上每张图显示窄版（文件也是窄版的）、最小的字 ≥ 11 px；正文里没有别的 <img>。"""
    problems = [p for name, v in phone.items() for p in figure_problems(v.figures, PHONE["width"], name)]
    assert sum(len(v.figures["figures"]) for v in phone.values()) > 20
    assert not problems, f"{PHONE['width']} px 宽的手机上：\n" + "\n".join(problems)


def test_no_chapter_scrolls_sideways_on_a_phone(phone):
    """窄屏上页面本身不横着滚：宽的代码和表格在自己的框里横着滚。390 px 和 360 px（小一号的手机）都从 ``phone``
    的记录里看。"""
    assert len(phone) == len(pages())
    for width in (PHONE["width"], SMALL_PHONE["width"]):
        wide = {name: v.sideways[width] for name, v in phone.items() if v.sideways[width][0] > width}
        assert not wide, f"{width} px 宽时这些页面会横着滚：{wide}"


def test_a_phone_downloads_only_narrow_frames(site, phone):
    """手机上打开、滚完每一页，下载过的帧没有一张只属于宽版（电脑版）；电脑那边的检查在 test_site.py。"""
    wide, narrow = frame_names(site)
    seen = {url.split("/")[-1] for v in phone.values() for url, _ in v.whole if "/_static/tlx/" in url}
    assert seen and seen <= narrow and not seen & (wide - narrow), sorted(seen & (wide - narrow))[:5]


def test_a_phone_downloads_at_most_2_mb_per_chapter_before_scrolling_and_6_mb_in_all(phone):
    heavy, weighed = {}, 0
    for name, visit in phone.items():
        if not name.startswith("notebooks/"):  # 只管各章（前言、附录没有大图）
            continue
        weighed += 1
        first, whole = (sum(len(body) for _, body in bodies) for bodies in (visit.first, visit.whole))
        if first > FIRST_SCREEN_BYTES or whole > WHOLE_PAGE_BYTES:
            heavy[name] = (round(first / 1e6, 2), round(whole / 1e6, 2))
    assert weighed >= 10
    assert not heavy, f"这些章在手机上太重（打开时 MB，滚完 MB）：{heavy}"


def test_the_text_size_check_fails_on_an_old_style_figure(browser):
    """反证：改版前那种图——11 英寸宽、100 dpi、8 pt 的字——放进手机和电脑的正文宽度，同一个量法都报太小。"""
    old = Explorable(Titled, [Slider("a", (1, 2))], title="旧图", alt="{a}", data={"title": "t", "tick_pt": 8},
                     size=(11.0, 3.5), ncols=3, narrow_size=(11.0, 3.5), frame_dpi=100)
    html = old.static_html()
    for viewport, column in ((PHONE, 358), (LAPTOP, 688)):
        page = browser.new_page(viewport=viewport)
        page.set_content(f'<main style="width:{column}px">{html}</main>')
        (fig,) = page.evaluate(MEASURE_JS)["figures"]
        page.close()
        assert fig["css_px"] < MIN_PX[viewport["width"]], fig


def test_sliders_fit_a_thumb_and_a_tap_opens_the_figure_full_size(site, browser, server):
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    page = context.new_page()
    page.goto(f"{server}/notebooks/04_four_steps.html")
    page.wait_for_load_state("networkidle")
    heights = page.evaluate("() => [...document.querySelectorAll('input.tlx-range')].map(e => e.getBoundingClientRect().height)")
    assert heights and min(heights) >= 44, heights
    root = page.locator(".tlx").filter(has=page.locator("input.tlx-range")).first  # 第一张有滑块的图（静态图没有）
    zoom = root.locator("a.tlx-zoom")
    root.scroll_into_view_if_needed()
    first = zoom.get_attribute("href")
    assert first and re.search(r"_static/tlx/[0-9a-f]{16}\.png$", first)
    assert root.locator("img").evaluate("i => i.currentSrc").endswith(first.split("../")[-1])  # 打开的就是屏幕上这一帧
    slider = root.locator("input.tlx-range")
    slider.focus()
    page.keyboard.press("End")
    page.wait_for_function("r => r.querySelector('img').complete && r.querySelector('a.tlx-zoom').href.endsWith("
                           "r.querySelector('img').currentSrc.split('/').pop())", arg=root.element_handle())
    assert zoom.get_attribute("href") != first
    label = root.locator("output").first
    box, slider_box = label.bounding_box(), slider.bounding_box()
    assert box["y"] + box["height"] <= slider_box["y"] + 1 or box["x"] + box["width"] <= slider_box["x"] + 1  # 数值不在手指下
    context.close()


@pytest.mark.parametrize("viewport", [PHONE, LAPTOP], ids=["phone-390", "laptop-1280"])
def test_one_search_entry_and_the_book_title_is_visible(site, browser, server, viewport):
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    page.goto(f"{server}/notebooks/03_qkv.html")
    page.wait_for_load_state("networkidle")
    searches = page.evaluate("""() => [...document.querySelectorAll('.search-button, .search-button-field, #searchbox')]
        .filter(e => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);
                       return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'; })
        .map(e => e.className || e.id)""")
    assert len(searches) == 1, f"{viewport['width']} px：看得见的搜索入口有 {len(searches)} 个：{searches}"
    title = page.evaluate("""() => {
        const found = [...document.querySelectorAll('a, p, span, h1, div')]
          .filter(e => e.children.length === 0 && e.textContent.trim() === 'Transformer 实验室');
        const states = found.map(el => {
          const r = el.getBoundingClientRect();
          if (!r.width || r.right <= 0 || r.left >= innerWidth || r.bottom <= 0 || r.top >= innerHeight) return 'hidden';
          const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
          return top && (el.contains(top) || top.contains(el)) ? 'visible' : 'covered by ' + (top && top.className);
        });
        return states.includes('visible') ? 'visible' : states.join('; ') || 'missing'; }""")
    context.close()
    assert title == "visible", f"{viewport['width']} px：书名 {title}"


def test_only_the_search_page_downloads_the_search_index(site, browser, server):
    """搜索索引 searchindex.js（约 0.5 MB）只在 search.html 上加载（book/_templates/layout.html）：手机上打开一章
    不必等它。搜索本身照常能用，由 test_search.py 在 search.html 上检查。"""
    context = browser.new_context(viewport=PHONE)
    loaded = {}
    for rel in ("notebooks/03_qkv.html", "book/glossary.html", "search.html"):
        page, seen = context.new_page(), []
        page.on("request", lambda r: seen.append(r.url.split("?")[0].split("/")[-1]))
        page.goto(f"{server}/{rel}")
        page.wait_for_load_state("networkidle")
        loaded[rel] = {name for name in ("searchindex.js", "searchtools.js") if name in seen}
        page.close()
    context.close()
    assert loaded == {"notebooks/03_qkv.html": set(), "book/glossary.html": set(),
                      "search.html": {"searchindex.js", "searchtools.js"}}, loaded


def _frame_files(data: dict, layout: str, indices) -> set[str]:
    return {data["urls"][layout][i].split("/")[-1] for i in indices}


def _grid_position(sizes: list[int], index: int) -> list[int]:
    """帧号 → 每个滑块的格子（第一个滑块变化最慢，和 ``Explorable.grid()`` 一样）。"""
    position = []
    for size in reversed(sizes):
        index, p = divmod(index, size)
        position.insert(0, p)
    return position


def _grid_index(sizes: list[int], position: list[int]) -> int:
    """``_grid_position`` 的反过来：每个滑块的格子 → 帧号。"""
    return sum(p * math.prod(sizes[k + 1:]) for k, p in enumerate(position))


def test_frames_are_fetched_one_step_ahead_and_the_rest_after_a_touch(site, browser, server):
    """``player.js`` 的预取：打开并滚过一章，每张图只下载当前帧和每个滑块左右各一格的帧；聚焦一张图的滑块之后，
    这张图的其余帧才下载，而且离当前位置近的先发出请求。第 6 章的几张图帧多，又有两个滑块的。"""
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    page = context.new_page()
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url.split("/")[-1]) if "/_static/tlx/" in r.url else None)
    page.goto(f"{server}/notebooks/06_positional_encoding.html")
    page.wait_for_load_state("networkidle")
    page.evaluate(SCROLL_JS)
    page.wait_for_load_state("networkidle")
    roots = page.locator(".tlx")
    figures, expected = [], set()
    for i in range(roots.count()):
        data = json.loads(roots.nth(i).locator("script.tlx-data").text_content())
        position = [int(v) for v in roots.nth(i).locator("input.tlx-range").evaluate_all("es => es.map(e => e.value)")]
        sizes = [len(s["values"]) for s in data["sliders"]]
        near = [position]
        for k, p in enumerate(position):
            near += [position[:k] + [q] + position[k + 1:] for q in (p - 1, p + 1) if 0 <= q < sizes[k]]
        expected |= _frame_files(data, "narrow", [_grid_index(sizes, pos) for pos in near])
        figures.append((i, data, position))
    assert expected and set(seen) == expected, f"只滚不碰时多取或少取了帧：多 {set(seen) - expected}，少 {expected - set(seen)}"

    i, data, position = max(figures, key=lambda f: len(f[1]["urls"]["narrow"]))
    assert len(data["urls"]["narrow"]) > 20  # 真的是一张帧多的图：只滚不碰时大部分帧不下载
    before = len(seen)
    roots.nth(i).locator("input.tlx-range").first.focus()
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(500)
    everything = _frame_files(data, "narrow", range(len(data["urls"]["narrow"])))
    assert everything <= set(seen), f"聚焦滑块之后还有 {len(everything - set(seen))} 帧没有下载"
    names, sizes = data["urls"]["narrow"], [len(s["values"]) for s in data["sliders"]]
    distance = {}
    for index, url in enumerate(names):  # 同样的图可能出现在几格里：取最近的那一格
        d = sum(abs(a - b) for a, b in zip(_grid_position(sizes, index), position))
        name = url.split("/")[-1]
        distance[name] = min(d, distance.get(name, d))
    order = [distance[name] for name in seen[before:] if name in distance]
    assert order and order == sorted(order), f"预取没有按离当前位置的远近排队：{order[:20]}……"
    context.close()


def test_icons_come_from_the_small_icon_font(site, browser, server):
    """页头的图标（搜索、侧边栏、目录……）用建网站时取的图标子集（``postprocess.subset_icon_font``），不下载主题
    156 kB 的整个字体：页面上每个图标的码位都在子集的 ``unicode-range`` 里，主题那个整字体一直没有载入（缺了哪个
    图标，浏览器就会去载入它）。"""
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    fonts: list[str] = []
    page.on("request", lambda r: fonts.append(r.url.split("?")[0].split("/")[-1]) if "fontawesome" in r.url else None)
    page.goto(f"{server}/notebooks/05_multi_head.html")
    page.wait_for_load_state("networkidle")
    state = page.evaluate("""async () => {
        await document.fonts.ready;
        const faces = [...document.fonts].filter(f => f.family.includes('Font Awesome 6 Free') && f.weight === '900')
          .map(f => ({range: f.unicodeRange, status: f.status}));
        const icons = [...document.querySelectorAll('i.fa-solid, span.fa-solid')]
          .map(e => getComputedStyle(e, '::before').content.replace(/"/g, '').codePointAt(0));
        return {faces, icons}; }""")
    context.close()
    assert fonts == ["fa-solid-900.subset.woff"], fonts
    # 两个同名字体：主题的整个字体（不限码位，一直没用上）和子集（码位一个个列出，已经载入）
    full = [f for f in state["faces"] if f["range"].upper() == "U+0-10FFFF"]
    small = [f for f in state["faces"] if f["range"].upper() != "U+0-10FFFF"]
    assert [f["status"] for f in full] == ["unloaded"] and [f["status"] for f in small] == ["loaded"], state["faces"]
    covered = {int(r.strip()[2:], 16) for r in small[0]["range"].split(",")}
    assert len(state["icons"]) >= 5 and set(state["icons"]) <= covered, (state["icons"], sorted(covered))
