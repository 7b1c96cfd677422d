"""``widgets/static.py``：没有内核时的 HTML 格式——两种版式的帧、滑块、id、样式、转义、帧数上限、字号与出界、
没有滑块的静态图、把帧搬成文件。

用 ``helpers/tiny_view.py`` 的小图（很便宜）；书里每张图的静态 HTML 在 tests/test_explorables.py 里检查。
<script> 按 HTML 标准的分词规则切分（``helpers/html_scripts.py``），不只信 ``html.parser``。
"""

from __future__ import annotations

import base64
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import transformer_lab as tl
from transformer_lab import _cache
from transformer_lab._cache import KEEP_VERSIONS
from transformer_lab.plot.figure import CJK_FONT, NARROW_WIDTH
from transformer_lab.widgets import static
from transformer_lab.widgets.explorable import FRAME_CAP, Explorable, Slider
from transformer_lab.widgets.static import (
    FRAME_PARTS,
    FRAME_SOURCES_JS,
    LAYOUTS,
    NARROW_MEDIA,
    PLAYER_JS,
    STYLES,
    externalize_frames,
    read_player,
    render_html,
)

from helpers.damage import draw_damage
from helpers.errors import call, check_error, error_table_test
from helpers.html_scripts import Page, script_end, scripts
from helpers.tiny_view import NASTY, Exploding, Labels, Line, Titled, tiny

PNG = b"\x89PNG\r\n\x1a\n"


# ---------------------------------------------------------------- 预览与全部帧


def test_default_frame_preview_has_no_script_and_no_inputs():
    ex = tiny()
    text = ex.static_html(all_frames=False)
    page = Page(text)
    assert page.all("script") == [] and page.all("input") == [] and read_player(text) == []
    (img,) = page.all("img")
    assert img["alt"] == "斜率 2" and base64.b64decode(img["src"].split(",", 1)[1]).startswith(PNG)
    assert "静态预览：运行这个单元格后可以拖动滑块（a）。" in text


def test_all_frames_player_data_follows_the_grid():
    ex = Explorable(Labels, [Slider("a", ("x", "yy", "zzz"), label="字", default="zzz")], title="t", alt="{a}",
                    size=(2.0, 1.5))
    text = ex.static_html()
    (data,) = read_player(text)
    assert data["sliders"] == [{"label": "字", "values": ["x", "yy", "zzz"]}] and data["alts"] == ["x", "yy", "zzz"]
    for layout in LAYOUTS:  # 每一帧两种版式，按网格的顺序
        assert [base64.b64decode(f) for f in data["frames"][layout]] == [
            ex.png(p, palette=True, layout=layout, dpi=ex.frame_dpi) for p in ex.grid()]
    assert data["media"] == NARROW_MEDIA and set(data["text_px"]) == set(LAYOUTS)
    page = Page(text)
    (root,) = [a for a in page.all("div") if a.get("class") == "tlx"]
    (inp,) = page.all("input")
    assert root["data-frame"] == "2" and (inp["min"], inp["max"], inp["value"]) == ("0", "2", "2")
    assert inp["aria-valuetext"] == "字 = zzz"


# ---------------------------------------------------------------- 帧数上限（画第一帧之前检查）


def test_a_grid_above_the_cap_is_refused_before_any_frame_is_drawn():
    ex = Explorable(Exploding, [Slider("a", tuple(range(FRAME_CAP + 1)))], title="太多帧的图", alt="{a}")
    check_error(ex.static_html, ValueError,  # 报的是帧数，不是 Exploding 的 RuntimeError：一帧都没画
                r"「太多帧的图」要预先画 43 帧（a 的 43 个取值），超过了上限 max_frames=42.*max_frames=")


def test_max_frames_moves_the_limit_both_ways():
    check_error(lambda: tiny(max_frames=2).static_html(), ValueError,
                r"「直线」要预先画 3 帧（a 的 3 个取值），超过了上限 max_frames=2")
    (data,) = read_player(tiny(max_frames=3).static_html())
    assert len(data["frames"]["wide"]) == len(data["frames"]["narrow"]) == 3
    two = Explorable(Exploding, [Slider("a", tuple(range(7))), Slider("b", tuple(range(7)))], title="两维", alt="{a}{b}")
    check_error(two.static_html, ValueError, r"「两维」要预先画 49 帧（a 的 7 个取值 × b 的 7 个取值）")
    assert "静态预览" in tiny(max_frames=2).static_html(all_frames=False)  # 预览只画一帧，不受上限影响


# ---------------------------------------------------------------- 元素 id


def _ids(text: str) -> list[str]:
    return [a["id"] for _, a in Page(text).tags if "id" in a]


def test_same_explorable_twice_on_one_page_has_unique_ids():
    ex = tiny()
    page = Page(ex.static_html() + ex.static_html())
    ids = [a["id"] for _, a in page.tags if "id" in a]
    assert len(ids) == 4 and len(set(ids)) == len(ids), ids  # 两个播放器 + 两个滑块
    targets = [a["for"] for a in page.all("label")] + [a["for"] for a in page.all("output")]
    assert len(targets) == 4 and set(targets) <= set(ids)


def test_ids_of_one_figure_do_not_depend_on_other_figures():
    """id 的序号按标题分开数：中间画了别的图，这张图的下一个 id 照样只加 1。"""
    first = _ids(tiny(title="甲").static_html())[0]
    tiny(title="乙").static_html()
    tiny(title="乙").static_html()
    second = _ids(tiny(title="甲").static_html())[0]
    prefix, n = first.rsplit("-", 1)
    assert re.fullmatch(r"tlx-[0-9a-f]{8}", prefix) and second == f"{prefix}-{int(n) + 1}"


# ---------------------------------------------------------------- 样式：player.css 写进 style 属性


def test_every_rule_of_player_css_lands_on_its_element():
    """浏览器（和 JupyterLab 的净化器）看到的是 style 属性，没有 <style> 元素；player.css 的每条规则都用上了。"""
    full = Page(Explorable(Labels, [Slider("a", ("x", "完全相同"))], title="t", alt="{a}", size=(2.0, 1.5))
                .static_html())
    preview = Page(tiny().static_html(all_frames=False))
    assert full.all("style") == preview.all("style") == []
    found = {
        ".tlx-zoom": full.all("a")[0]["style"],
        ".tlx img": full.all("img")[0]["style"],
        ".tlx-control": [a for a in full.all("div") if a.get("class") == "tlx-control"][0]["style"],
        ".tlx-control label": full.all("label")[0]["style"],
        ".tlx-control output": full.all("output")[0]["style"].removesuffix(";min-width:8ch"),  # 最长的取值：4 个汉字
        ".tlx-range": full.all("input")[0]["style"],
        ".tlx-preview img": preview.all("img")[0]["style"],
        ".tlx-preview p": preview.all("p")[0]["style"],
    }
    assert found == STYLES
    assert STYLES[".tlx-range"] == "flex:1 1 12em;max-width:24em;height:44px;margin:0"  # 声明照原文，去掉空格


def test_value_width_fits_the_widest_value():
    """<output> 按最长的取值留足宽度（汉字占 2 个 ch）：数值变长时，滑块不会往右挪。"""
    widths = [re.search(r"min-width:(\d+)ch", Page(tiny(values=v).static_html()).all("output")[0]["style"]).group(1)
              for v in ((1, 2, 3), (1, 10, 100))]
    assert widths == ["1", "3"]


# ---------------------------------------------------------------- 转义：标签文字关不掉 <script>


def test_the_reference_tokenizer_catches_the_double_escape_trap():
    """反证：不转义的 JSON 里有 <!--<script>，按标准，紧接着的 </script> 关不掉脚本。"""
    raw = '<script type="application/json">{"label": "<!--<script>"}</script><script>go()</script><p>后文</p>'
    ((tag, body),) = scripts(raw.replace("<p>后文</p>", "--></script>"))
    assert "go()" in body  # 只剩一个脚本：换帧脚本被吞进了数据里
    with pytest.raises(AssertionError, match="没有关上"):
        scripts(raw)
    assert [b for _, b in scripts("<script>a</script ><script>b</SCRIPT>")] == ["a", "b"]
    assert [b for _, b in scripts("<script>x = '</scripty>'</script>")] == ["x = '</scripty>'"]


def test_player_script_itself_has_no_escape_sequences():
    assert script_end(PLAYER_JS + "</script>", 0) == len(PLAYER_JS)


def test_json_in_the_page_cannot_close_its_script():
    ex = tiny(label=NASTY, title=NASTY)
    text = ex.static_html()
    page = Page(text)
    data_scripts = [body for attrs, body in page.scripts if attrs.get("class") == "tlx-data"]
    assert len(data_scripts) == 1 and len(page.scripts) == 2  # 数据 + 播放脚本，没有被标签文字拆开
    (data,) = read_player(text)
    assert data["sliders"][0]["label"] == NASTY
    assert "</script" not in data_scripts[0] and "<!--" not in data_scripts[0] and "&" not in data_scripts[0]
    (root,) = [a for a in page.all("div") if a.get("class") == "tlx"]
    assert root["aria-label"] == NASTY


@pytest.mark.parametrize("nasty", [NASTY, "<!--<script>", "<!--<SCRIPT ", "--><script>", "&lt;script&gt; & <b>"])
def test_every_player_has_exactly_its_two_scripts_even_with_nasty_text(nasty):
    ex = tiny(label=nasty, title=nasty, alt=nasty + " {a}")
    page = "<main>" + ex.static_html() + ex.static_html() + "<p>页尾</p></main>"
    found = scripts(page)
    assert len(found) == 4, [t for t, _ in found]  # 两个播放器 × (数据 + 换帧脚本)
    data = [json.loads(body) for tag, body in found if 'class="tlx-data"' in tag]
    assert len(data) == 2 and all(d["sliders"][0]["label"] == nasty for d in data)
    assert all(body == PLAYER_JS for tag, body in found if "tlx-data" not in tag)
    assert page.endswith("<p>页尾</p></main>")


def test_nasty_slider_values_survive_too():
    nasty = ("<!--<script>", "&amp;", "b")  # 只出现一次（替代文字不含取值）：不转义的话，换帧脚本会被吞掉
    ex = Explorable(Labels, [Slider("a", nasty)], title="t", alt="一帧", size=(2.0, 1.5))
    found = scripts(ex.static_html())
    assert len(found) == 2 and json.loads(found[0][1])["sliders"][0]["values"] == list(nasty)


# ---------------------------------------------------------------- 敌意文字：读回的元素树和放普通文字时一模一样

HOSTILE_TEXTS = ['<script>alert(1)</script>', 'say "hi"', "it's", "a & b &amp; c &lt;", "</div></div><p>", "]]>",
                 "<!--", "--><b>", '"><img src=x onerror=alert(2)>' + "'" + "</label></output>"]


PLAIN = "占位"  # 普通文字：不会出现在 base64 的帧里（base64 只有 ASCII）


class Still:
    """不随滑块变化的图：两份 HTML 的帧完全相同，比较时只剩文字的差别。"""

    def __init__(self, fig, axes, layout):
        axes[0].plot([0, 1], [0, 1])
        self.artists = []

    def update(self, a):
        return {}


class Events(HTMLParser):
    """标准库 html.parser 读出的全部事件：开始标签（含属性）、结束标签、文字、注释、声明。脚本里的原文记成一个记号
    （JSON 另外用 read_player 读回比较）。"""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.events, self._script = [], False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.events.append(("start", tag, tuple(attrs)))
        self._script = tag == "script"

    def handle_endtag(self, tag):
        self.events.append(("end", tag))
        self._script = False

    def handle_data(self, data):
        self.events.append(("script",) if self._script else ("data", data))

    def handle_comment(self, data):
        self.events.append(("comment", data))

    def handle_decl(self, decl):
        self.events.append(("decl", decl))

    def unknown_decl(self, data):
        self.events.append(("cdata", data))


def _player(text: str, all_frames: bool = True) -> str:
    """标题、滑块名字、滑块取值、替代文字里都放 ``text``；元素 id 和取值宽度（随文字变）换成记号。"""
    ex = Explorable(Still, [Slider("a", (text + "1", text + "2"), label=text + "标签", default=text + "2")],
                    title=text + "图名", alt=text + "说明：{a}", size=(2.0, 1.5))
    page = ex.static_html(all_frames)
    return re.sub(r"min-width:\d+ch", "min-width:Nch", re.sub(r"tlx-[0-9a-f]{8}-\d+", "tlx-ID", page))


def _with(events: list, text: str) -> list:
    """把放普通文字 PLAIN 时读出的事件里的 PLAIN 换成 ``text``：敌意文字应当读回的样子。"""
    def swap(value):
        return value.replace(PLAIN, text) if isinstance(value, str) else value
    return [(e[0], e[1], tuple((k, swap(v)) for k, v in e[2])) if e[0] == "start" else
            (e[0], swap(e[1])) if e[0] == "data" else e for e in events]


@pytest.mark.parametrize("all_frames", [True, False], ids=["player", "preview"])
@pytest.mark.parametrize("text", [*HOSTILE_TEXTS, "".join(HOSTILE_TEXTS)])
def test_hostile_text_in_every_field_reads_back_as_the_same_tree(text, all_frames):
    """标题 (aria-label)、滑块名字 (<label>、aria-valuetext、预览的说明)、滑块取值 (<output>、aria-valuetext)、
    替代文字 (alt) 都放 <script>、引号、&、</div>、]]>、<!--：html.parser 读回的元素、属性、文字和放普通文字 PLAIN 时
    一模一样，只是 PLAIN 换成了原样的敌意文字（转义后又读回原文，没有多出、少掉或断开任何标签和属性）；
    照 HTML 标准切分，仍然只有数据和换帧脚本两段，数据读回原文。"""
    plain, hostile = _player(PLAIN, all_frames), _player(text, all_frames)
    expected = _with(Events(plain).events, text)
    assert Events(hostile).events == expected
    assert sum(e[0] == "data" and text in e[1] for e in expected) >= (2 if all_frames else 1)  # 文字真的在文字节点里（<label>、<output>；预览的说明）
    if all_frames:
        assert len(scripts(hostile)) == 2
        (data,) = read_player(hostile)
        assert data["sliders"] == [{"label": text + "标签", "values": [text + "1", text + "2"]}]
        assert data["alts"] == [f"{text}说明：{text}1", f"{text}说明：{text}2"]
    else:
        assert scripts(hostile) == []


def test_the_tree_comparison_can_fail():
    """反证：把敌意文字不经转义塞进属性和文字（修复 quiz 的 for= 之前那种漏洞），读回的事件就和预期不同。"""
    plain = _player(PLAIN)
    text = '"><script>alert(1)</script>'
    assert Events(plain.replace(PLAIN, text)).events != _with(Events(plain).events, text)
    assert Events(plain.replace(PLAIN, "&amp;")).events != _with(Events(plain).events, "&amp;")  # 少转义一层也看得出


# ---------------------------------------------------------------- 建网站时：帧搬成文件


def test_externalize_frames_moves_every_frame_into_files(tmp_path):
    ex = tiny()
    text = ex.static_html()
    (before,) = read_player(text)
    out = externalize_frames(text, tmp_path, "_frames/")
    (after,) = read_player(out)
    assert "frames" not in after and 'src="data:' not in out and 'srcset="data:' not in out
    for layout in LAYOUTS:
        assert [(tmp_path / u.removeprefix("_frames/")).read_bytes() for u in after["urls"][layout]] == [
            base64.b64decode(f) for f in before["frames"][layout]]
    idx = ex.grid().index(ex.start)
    page = Page(out)
    (img,), (source,), (zoom,) = page.all("img"), page.all("source"), page.all("a")
    assert img["src"] == after["urls"]["wide"][idx] and source["srcset"] == after["urls"]["narrow"][idx]
    assert source["media"] == NARROW_MEDIA and zoom["href"] == img["src"]  # 帧成了文件：点图能打开大图
    assert "href" not in Page(text).all("a")[0]  # 帧还是 base64 时不是链接（浏览器不让新标签页打开 data: 地址）
    assert externalize_frames(out, tmp_path, "_frames/") == out  # 第二次构建（没加 --all）会再经过已换好的页


def test_frame_sources_js_reads_both_forms_and_both_layouts_in_a_browser(browser, tmp_path):
    """``FRAME_SOURCES_JS``（基准脚本在页面里用它）在真的浏览器里读出每一帧：base64 的和搬成文件的，
    指定版式时读那一种，不指定时读这块屏幕正在显示的那一种（宽屏宽版、窄屏窄版）。"""
    text = tiny().static_html()
    (data,) = read_player(text)
    moved = externalize_frames(text, tmp_path, "_frames/")
    inline = {name: ["data:image/png;base64," + f for f in data["frames"][name]] for name in LAYOUTS}
    files = read_player(moved)[0]["urls"]
    for width, shown in ((1280, "wide"), (390, "narrow")):
        page = browser.new_page(viewport={"width": width, "height": 800})
        try:
            for html_, expected in ((text, inline), (moved, files)):
                page.set_content(html_)
                root = page.locator(".tlx")
                assert root.evaluate(f"r => ({FRAME_SOURCES_JS})(r)") == expected[shown]
                assert root.evaluate(f"r => ({FRAME_SOURCES_JS})(r, 'narrow')") == expected["narrow"]
        finally:
            page.close()


# ---------------------------------------------------------------- 两种版式：大小、字号、出界


def test_the_narrow_layout_stacks_the_panels_in_a_narrower_figure():
    ex = Explorable(Titled, [Slider("a", (1, 2))], title="两块", alt="{a}", data={"title": "短"}, size=(6.0, 2.0),
                    ncols=2)
    wide, narrow = ex.layout("wide", 100), ex.layout("narrow", 100)
    assert (wide.nrows, wide.ncols, wide.size) == (1, 2, (6.0, 2.0))
    assert (narrow.nrows, narrow.ncols, narrow.size) == (2, 1, (NARROW_WIDTH, 4.8))  # 每块保持 3:2，两块竖着排
    assert ex.figure_pixels("narrow", 100) == (360, 480)
    custom = Explorable(Titled, [Slider("a", (1, 2))], title="t", alt="{a}", data={"title": "短"}, size=(6.0, 2.0),
                        ncols=2, narrow_size=(3.0, 5.0))
    assert custom.layout("narrow").size == (3.0, 5.0)


def test_text_px_is_the_smallest_text_on_the_png():
    """``text_px`` = 最小的字号 (pt) × dpi / 72：这里最小的是 9 pt 的刻度字（标题 14 pt）。"""
    ex = Explorable(Titled, [Slider("a", (1, 2))], title="t", alt="{a}", data={"title": "标题", "tick_pt": 9},
                    size=(3.0, 2.0))
    (data,) = read_player(ex.static_html())
    assert data["text_px"] == {"wide": round(9 * ex.frame_dpi / 72, 2), "narrow": round(9 * ex.frame_dpi / 72, 2)}


def test_text_that_does_not_fit_the_narrow_figure_fails_the_build_naming_figure_and_text():
    long_title = "一个在电脑上放得下、在手机上却放不下的很长很长很长很长的标题"
    ex = Explorable(Titled, [Slider("a", (1, 2))], title="太长的标题", alt="{a}", data={"title": long_title},
                    size=(6.8, 2.0))
    check_error(ex.static_html, ValueError, rf"「太长的标题」的窄版（手机）里，文字「{long_title}」伸出了图外"
                                            r"（a=1 这一帧；图 540×\d+ 像素")
    ok = Explorable(Titled, [Slider("a", (1, 2))], title="t", alt="{a}", data={"title": long_title,
                    "narrow_title": "短标题"}, size=(6.8, 2.0))
    assert len(read_player(ok.static_html())[0]["frames"]["narrow"]) == 2  # 窄版换成短标题就画得出来


def test_a_figure_without_sliders_is_a_static_picture_in_both_layouts():
    ex = Explorable(Titled, [], title="静态图", alt="一张图", data={"title": "标题"}, size=(3.0, 2.0))
    assert ex.grid() == [{}] and ex.frame_count == 1 and ex.describe() == "图「静态图」"
    text = ex.static_html()
    page = Page(text)
    assert page.all("input") == [] and len(page.all("source")) == 1 and page.all("img")[0]["alt"] == "一张图"
    (data,) = read_player(text)
    assert data["sliders"] == [] and [len(data["frames"][k]) for k in LAYOUTS] == [1, 1]
    bundle, metadata = ex._repr_mimebundle_()
    assert base64.b64decode(bundle["image/png"]).startswith(PNG) and "text/html" in bundle  # 没有内核：两种都给
    assert metadata == {"image/png": {"width": 300}}  # 150 dpi 画的 PNG 按 1 英寸 100 px 显示：3 英寸宽 300 px


ERROR_CASES = [
    ("render-too-many-frames", call(lambda: render_html(tiny(max_frames=2), all_frames=True)), ValueError,
     r"「直线」要预先画 3 帧（a 的 3 个取值），超过了上限 max_frames=2"),
]
test_documented_errors = error_table_test(ERROR_CASES)


# ---------------------------------------------------------------- 帧的硬盘缓存


def same_ids(text: str) -> str:
    """每次写出的 HTML 里元素 id 的序号不同（同一页上的两张图不能同 id）；比较内容时把序号抹掉。"""
    return re.sub(r"tlx-[0-9a-f]{8}-\d+", "tlx-id", text)


def test_frames_drawn_once_are_read_back_from_the_disk_cache(tmp_path, monkeypatch):
    """同一张图第二次写成 HTML 时一帧都不再画，读回的 HTML 逐字相同；缓存关掉时每次都画。"""
    monkeypatch.setenv("TRANSFORMER_LAB_CACHE", str(tmp_path))
    drawn = []

    def counted():
        ex = tiny()
        ex.cache_key = lambda: "直线-测试"  # 测试里的画图类不在包里，默认不缓存；这里只测缓存本身
        original = ex.png
        ex.png = lambda *a, **k: drawn.append(1) or original(*a, **k)
        return ex

    first = same_ids(counted().static_html())
    assert len(drawn) == 6 and len(list(tmp_path.glob("frames_*.json"))) == 1  # 3 帧 × 2 种版式
    assert same_ids(counted().static_html()) == first and len(drawn) == 6
    monkeypatch.setenv("TRANSFORMER_LAB_CACHE", "off")
    assert same_ids(counted().static_html()) == first and len(drawn) == 12


def test_the_preview_is_taken_from_the_cached_frames_without_drawing(tmp_path, monkeypatch):
    """notebook 里的预览（初始那一帧的宽版）：全部帧已在缓存里时直接取出，一帧都不画，字节和当场画的一样；
    缓存里没有时只画这一帧（宽版），不为它把全部帧画一遍、也不写缓存。"""
    monkeypatch.setenv("TRANSFORMER_LAB_CACHE", str(tmp_path))
    drawn = []

    def counted(start: int = 2):
        ex = Explorable(Line, [Slider("a", (1, 2, 3), default=start)], title="直线", alt="斜率 {a}", data={"top": 3},
                        size=(2.0, 1.5))
        ex.cache_key = lambda: f"直线-预览-{start}"  # 测试里的画图类不在包里，默认不缓存；这里只测缓存本身
        original = ex.png
        ex.png = lambda params, *a, **k: drawn.append(params) or original(params, *a, **k)
        return ex

    cold = counted().static_html(all_frames=False)
    assert drawn == [{"a": 2}] and not list(tmp_path.glob("frames_*.json"))  # 只画了初始那一帧
    counted().static_html(all_frames=True)  # 建网站：全部帧写进缓存
    drawn.clear()
    warm = counted().static_html(all_frames=False)
    assert drawn == [] and warm == cold
    other = read_player(counted(start=3).static_html())[0]["frames"]["wide"]  # 初始值是 3 的那张图，全部帧进缓存
    drawn.clear()
    assert static.first_frame_b64(counted(start=3)) == other[2] != other[1] and drawn == []  # 取的是对应的那一帧


def test_a_broken_cache_file_is_redrawn(tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSFORMER_LAB_CACHE", str(tmp_path))
    ex = tiny()
    ex.cache_key = lambda: "坏文件"
    first = same_ids(ex.static_html())
    (path,) = tmp_path.glob("frames_*.json")
    path.write_text('{"frames": {"wide": ["x"]}}', encoding="utf-8")  # 帧数对不上
    again = tiny()
    again.cache_key = lambda: "坏文件"
    assert same_ids(again.static_html()) == first


def test_writing_one_modules_frames_does_not_evict_another_modules(tmp_path, monkeypatch):
    """每个画图模块的帧自成一种（``frames_kind``）：另一个模块连写几个新版本，这个模块的帧还在缓存里，
    再写 HTML 时一帧都不用画。（十章共用一种时，只留最近 3 个版本会把别的章的帧删掉。）"""
    monkeypatch.setenv("TRANSFORMER_LAB_CACHE", str(tmp_path))
    real_version = static._cache.code_version
    drawn = []

    def figure(module: str, key: str):
        ex = tiny()
        ex.view = type("View", (ex.view,), {"__module__": module})
        ex.cache_key = lambda: key
        original = ex.png
        ex.png = lambda *a, **k: drawn.append(module) or original(*a, **k)
        return ex

    figure("elsewhere.alpha", "甲").static_html()
    for i in range(KEEP_VERSIONS + 2):  # beta 的代码改了好几次
        monkeypatch.setattr(static._cache, "code_version", lambda *a, i=i, **k: f"{i:012x}")
        figure("elsewhere.beta", f"乙{i}").static_html()
    monkeypatch.setattr(static._cache, "code_version", real_version)
    assert len(list(tmp_path.glob("frames_beta-*.json"))) == KEEP_VERSIONS  # beta 自己只留最近的几个版本
    before = len(drawn)
    figure("elsewhere.alpha", "甲").static_html()
    assert len(drawn) == before, "alpha 的帧被 beta 的新版本挤掉了"


def test_drawing_and_writing_a_modules_frames_holds_that_modules_lock(tmp_path, monkeypatch):
    """查缓存、画帧、写缓存都在这个画图模块的文件锁里（``_cache.exclusive``，两个进程排队的机制由
    tests/lessons/test_stored.py 的双进程测试证明）：另一个进程画同一张图时，等它写完再读，而不是一起画。"""
    import contextlib

    monkeypatch.setenv("TRANSFORMER_LAB_CACHE", str(tmp_path))
    events = []

    @contextlib.contextmanager
    def recording(lock):
        events.append(("锁上", lock.name))
        yield
        events.append(("解开", lock.name))

    monkeypatch.setattr(static._cache, "exclusive", recording)
    ex = tiny()
    ex.cache_key = lambda: "上锁"
    original = ex.png
    ex.png = lambda *a, **k: events.append(("画",)) or original(*a, **k)
    ex.static_html()
    assert events[0] == ("锁上", "frames_tiny_view.lock") and events[-1] == ("解开", "frames_tiny_view.lock")
    assert events.count(("画",)) == 6 and len(events) == 8  # 3 帧 × 2 种版式，都在锁里


def test_only_figures_drawn_by_the_package_with_known_data_are_cached():
    assert tiny().cache_key() is None  # 画图类在测试里：它的代码改了，包的代码版本看不出来
    ex = tl.explore.scaling_saturation()
    assert ex.cache_key() == tl.explore.scaling_saturation().cache_key()
    assert ex.cache_key() != tl.explore.scaling_saturation(seed=1).cache_key()
    assert ex.cache_key() != tl.explore.scaling_saturation(num_keys=9).cache_key()
    odd = Explorable(ex.view, ex.sliders, title=ex.title, alt=ex.alt, data={**ex.data, "seed": object()})
    assert odd.cache_key() is None  # 认不出内容的对象：不缓存


def test_the_frame_key_covers_pillow_and_the_font_file(tmp_path, monkeypatch):
    """帧缓存的钥匙里有 matplotlib、Pillow 的版本和中文字体文件的内容：Pillow 升级、字体文件换了（哪怕名字不变），
    缓存文件名都变，旧帧不再被读出来；字体文件只是换了个地方、内容不变，钥匙不变。"""
    monkeypatch.setenv("TRANSFORMER_LAB_CACHE", str(tmp_path))
    ex = tl.explore.scaling_saturation()
    before = static._frames_file(ex)
    assert before is not None and static.drawing_stack()[:2] == (
        f"matplotlib {static.matplotlib.__version__}", f"Pillow {static.PIL.__version__}")

    monkeypatch.setattr(static.PIL, "__version__", "0.0.1")
    assert static._frames_file(ex) != before
    monkeypatch.undo()
    monkeypatch.setenv("TRANSFORMER_LAB_CACHE", str(tmp_path))
    assert static._frames_file(ex) == before  # 版本改回来，钥匙也回来：钥匙只由这些东西决定

    real = static.font_manager.findfont(static.font_manager.FontProperties(family=CJK_FONT))
    fonts = {name: tmp_path / name for name in ("same.otf", "moved.otf", "other.otf")}
    fonts["same.otf"].write_bytes(Path(real).read_bytes())
    fonts["moved.otf"].write_bytes(Path(real).read_bytes())
    fonts["other.otf"].write_bytes(Path(real).read_bytes() + b"\0")  # 同名字体的另一个版本
    keys = {}
    for name, path in fonts.items():
        monkeypatch.setattr(static.font_manager, "findfont", lambda *a, path=path, **k: str(path))
        keys[name] = static._frames_file(ex)
    assert keys["same.otf"] == keys["moved.otf"] == before != keys["other.otf"]


def test_frames_of_one_chapter_do_not_depend_on_other_chapters_figures():
    """帧的代码版本只看它自己那一章的图模块和下面的各层：改第 5 章的图，第 6 章的帧照旧可用；改 plot/ 就都重画。"""
    from transformer_lab import _cache
    from transformer_lab.widgets.static import frame_parts

    ch05, ch06 = frame_parts("transformer_lab.figures.ch05_multi_head"), frame_parts(
        "transformer_lab.figures.ch06_positional_encoding")
    assert "figures/ch05_multi_head.py" in ch05 and "figures/ch05_multi_head.py" not in ch06
    assert "plot" in ch05 and "plot" in ch06 and "quiz" not in ch05
    assert _cache.code_version(parts=ch05) != _cache.code_version(parts=ch06)
    assert frame_parts("helpers.tiny_view") == FRAME_PARTS  # 测试里的画图类：只有共用的各层


# ---------------------------------------------------------------- 坏掉的、冒名的、旧格式的帧缓存（issue 41 第 9 条）

HOSTILE_FRAME = 'x" onerror="alert(1)'


def cached_line(top: int = 3, key: str = "直线-缓存"):
    """一张进缓存的小图（``top`` 不同，帧就不同），数着画了几帧（``ex.drawn``）。"""
    ex = tiny(values=(1, 2, top))
    ex.cache_key = lambda: key  # 测试里的画图类不在包里，默认不缓存；这里只测缓存本身
    ex.drawn = []
    original = ex.png
    ex.png = lambda *a, **k: ex.drawn.append(1) or original(*a, **k)
    return ex


@pytest.fixture
def fresh_line(tmp_path, monkeypatch):
    """缓存关掉时当场画出的 HTML 和初始帧（"重新计算"），然后把缓存指向 ``tmp_path``。"""
    monkeypatch.setenv("TRANSFORMER_LAB_CACHE", "off")
    ex = cached_line()
    page, first = same_ids(ex.static_html()), static.first_frame_b64(ex)
    monkeypatch.setenv("TRANSFORMER_LAB_CACHE", str(tmp_path))
    return page, first


def frame_file(tmp_path) -> Path:
    """``cached_line()`` 的帧在缓存里的文件：清空缓存，画一遍，找到它（之后再画别的图）。"""
    for old in tmp_path.glob("frames_*.json"):
        old.unlink()
    cached_line().static_html()
    (path,) = tmp_path.glob("frames_*.json")
    return path


def seal_frames(path, saved) -> None:
    """把 ``saved`` 当作 ``cached_line()`` 的帧写进缓存，封条（钥匙、代码版本、校验和）都对：只有内容本身能被拒绝。"""
    ex = cached_line()
    version = _cache.code_version(*static.drawing_stack(), parts=static.frame_parts(ex.view.__module__))
    _cache.write_sealed(path, ex.cache_key(), version, json.dumps(saved).encode("utf-8"))


def unsealed(good: bytes) -> bytes:
    """封好的帧文件里的内容：修复之前的代码写下的整个文件就是这样的 JSON。"""
    return good[good.index(b"\n", len(_cache.SEAL)) + 1:]


def assert_fresh(fresh_line, drawn_at_most: int = 6):
    page, first = fresh_line
    ex = cached_line()
    written = ex.static_html()
    assert same_ids(written) == page and static.first_frame_b64(cached_line()) == first
    assert len(ex.drawn) <= drawn_at_most and HOSTILE_FRAME not in written
    return ex


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_truncation_or_flipped_byte_of_the_frame_file_gives_fresh_frames(tmp_path, fresh_line, data):
    """帧缓存文件截断在任意位置、任意一个字节改成别的值：写出的 HTML 和预览帧总是与当场画的相同，没有异常漏出来。"""
    good_copy, name = tmp_path / "good.bin", tmp_path / "name.txt"
    if not good_copy.exists():
        path = frame_file(tmp_path)
        good_copy.write_bytes(path.read_bytes())
        name.write_text(path.name, encoding="utf-8")
    good = good_copy.read_bytes()
    bad = draw_damage(data, good)
    (tmp_path / name.read_text(encoding="utf-8")).write_bytes(bad)
    assert_fresh(fresh_line)


@pytest.mark.parametrize("cut", ["空文件", "格式行里", "封条里", "只有封条", "帧里", "差最后一个字节"])
def test_a_truncated_frame_file_is_redrawn_and_overwritten(tmp_path, fresh_line, cut):
    path = frame_file(tmp_path)
    good = path.read_bytes()
    line_end = good.index(b"\n", len(_cache.SEAL)) + 1
    at = {"空文件": 0, "格式行里": 5, "封条里": line_end - 10, "只有封条": line_end, "帧里": (line_end + len(good)) // 2,
          "差最后一个字节": len(good) - 1}[cut]
    path.write_bytes(good[:at])
    assert len(assert_fresh(fresh_line).drawn) == 6 and path.read_bytes() == good  # 重画了，也覆盖了坏文件
    assert not assert_fresh(fresh_line, drawn_at_most=0).drawn  # 覆盖之后直接读


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frame=st.one_of(st.just(HOSTILE_FRAME), st.text(max_size=40),
                       st.binary(max_size=40).filter(lambda b: not b.startswith(b"\x89PNG\r\n\x1a\n"))
                       .map(lambda b: base64.b64encode(b).decode("ascii")),
                       st.just(base64.b64encode(b"GIF89a" + bytes(20)).decode("ascii")),
                       st.just(base64.b64encode(b"\x89PNG\r\n\x1a\n").decode("ascii") + '"')),
       index=st.integers(0, 5))
def test_a_sealed_file_with_a_frame_that_is_not_png_data_is_redrawn(tmp_path, fresh_line, frame, index):
    """封条都对、某一帧却不是 base64 写的 PNG（``"x\\" onerror=…"``、任意文字、别的格式）：整张图重画，
    那段文字进不了 ``src``/``srcset``。"""
    path = frame_file(tmp_path)
    good = path.read_bytes()
    saved = json.loads(unsealed(good))
    layout, at = LAYOUTS[index % 2], index // 2
    saved["frames"][layout][at] = frame
    seal_frames(path, saved)
    assert assert_fresh(fresh_line).drawn and path.read_bytes() == good


def test_a_sealed_file_with_wrong_shapes_or_types_is_redrawn(tmp_path, fresh_line):
    path = frame_file(tmp_path)
    good = path.read_bytes()
    saved = json.loads(unsealed(good))
    frames, text_px = saved["frames"], saved["text_px"]
    for bad in ([], {"frames": frames}, {"frames": {"wide": frames["wide"]}, "text_px": text_px},
                {"frames": {**frames, "narrow": frames["narrow"][:2]}, "text_px": text_px},
                {"frames": {**frames, "wide": [*frames["wide"], frames["wide"][0]]}, "text_px": text_px},
                {"frames": {**frames, "wide": [7, *frames["wide"][1:]]}, "text_px": text_px},
                {"frames": frames, "text_px": {"wide": "9", "narrow": 9.0}},
                {"frames": frames, "text_px": {"wide": True, "narrow": 9.0}},
                {"frames": frames, "text_px": {"wide": 9.0}}):
        seal_frames(path, bad)
        assert_fresh(fresh_line)
        assert path.read_bytes() == good
    path.write_bytes(good[:len(_cache.SEAL) + 1] + b"[" * 100_000 + b"\n")  # 深嵌套的封条：不是 RecursionError
    assert_fresh(fresh_line)


def test_another_figures_valid_frame_file_is_not_served_as_this_figure(tmp_path, fresh_line):
    """另一张图（别的钥匙）完好的帧文件被复制成这张图的文件名：写出的是这张图当场画的帧。"""
    mine = frame_file(tmp_path)
    cached_line(top=5, key="别的图").static_html()
    (theirs,) = set(tmp_path.glob("frames_*.json")) - {mine}
    mine.write_bytes(theirs.read_bytes())
    assert len(assert_fresh(fresh_line).drawn) == 6


def test_an_old_unsealed_frame_file_is_treated_as_stale(tmp_path, fresh_line):
    """修复之前写下的帧文件（只有 JSON，没有封条），而且帧是别的图的：当作过期，重画并覆盖。"""
    mine = frame_file(tmp_path)
    cached_line(top=5, key="别的图").static_html()
    (theirs,) = set(tmp_path.glob("frames_*.json")) - {mine}
    mine.write_bytes(unsealed(theirs.read_bytes()))  # 今天的代码写的样子：{"frames": …, "text_px": …}
    assert len(assert_fresh(fresh_line).drawn) == 6 and mine.read_bytes().startswith(_cache.SEAL)


def test_an_unsealed_file_with_a_hostile_frame_never_reaches_src(tmp_path, fresh_line):
    """修复之前的格式（只有 JSON）里一帧被改写成 ``"x\" onerror=…"``：不写进 ``src``/``srcset``，重画。"""
    path = frame_file(tmp_path)
    saved = json.loads(unsealed(path.read_bytes()))
    saved["frames"]["wide"][2] = saved["frames"]["narrow"][2] = HOSTILE_FRAME  # 初始那一帧
    path.write_text(json.dumps(saved), encoding="utf-8")
    assert len(assert_fresh(fresh_line).drawn) == 6


def test_a_good_frame_file_is_still_used_without_drawing(tmp_path, fresh_line):
    """反面：完好的帧文件照样直接读，一帧都不画（数 ``png`` 的调用次数）。"""
    assert len(assert_fresh(fresh_line).drawn) == 6
    for _ in range(2):
        assert assert_fresh(fresh_line, drawn_at_most=0).drawn == []
