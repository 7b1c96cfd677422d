"""``widgets/static.py``：没有内核时的 HTML 格式——帧、滑块、id、样式、转义、帧数上限、把帧搬成文件。

用 ``helpers/tiny_view.py`` 的小图（很便宜）；书里每张图的静态 HTML 在 tests/test_explorables.py 里检查。
<script> 按 HTML 标准的分词规则切分（``helpers/html_scripts.py``），不只信 ``html.parser``。
"""

from __future__ import annotations

import base64
import json
import re

import pytest
from conftest import call, check_error, error_table_test
from helpers.html_scripts import Page, script_end, scripts
from helpers.tiny_view import NASTY, Exploding, Labels, tiny
from site_tools import CHROMIUM_ARGS, NO_CHROMIUM, chromium_path

from transformer_lab.widgets.explorable import FRAME_CAP, Explorable, Slider
from transformer_lab.widgets.static import (ALL_FRAMES_ENV, FRAME_SOURCES_JS, PLAYER_JS, STYLES, externalize_frames,
                                            read_player, render_html, wants_all_frames)

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
    assert [base64.b64decode(f) for f in data["frames"]] == [ex.png(p, palette=True) for p in ex.grid()]
    page = Page(text)
    (root,) = [a for a in page.all("div") if a.get("class") == "tlx"]
    (inp,) = page.all("input")
    assert root["data-frame"] == "2" and (inp["min"], inp["max"], inp["value"]) == ("0", "2", "2")
    assert inp["aria-valuetext"] == "字 = zzz"


@pytest.mark.parametrize("live, env, expected", [(False, None, True), (True, None, False), (True, "1", True)],
                         ids=["no-kernel", "kernel", "kernel-building-the-book"])
def test_all_frames_only_without_a_kernel_or_when_building_the_book(live, env, expected, monkeypatch):
    monkeypatch.delenv(ALL_FRAMES_ENV, raising=False)
    if env is not None:
        monkeypatch.setenv(ALL_FRAMES_ENV, env)
    assert wants_all_frames(live) is expected


# ---------------------------------------------------------------- 帧数上限（画第一帧之前检查）


def test_a_grid_above_the_cap_is_refused_before_any_frame_is_drawn():
    ex = Explorable(Exploding, [Slider("a", tuple(range(FRAME_CAP + 1)))], title="太多帧的图", alt="{a}")
    check_error(ex.static_html, ValueError,  # 报的是帧数，不是 Exploding 的 RuntimeError：一帧都没画
                rf"「太多帧的图」要预先画 43 帧（a 的 43 个取值），超过了上限 max_frames=42.*max_frames=")


def test_max_frames_moves_the_limit_both_ways():
    check_error(lambda: tiny(max_frames=2).static_html(), ValueError,
                r"「直线」要预先画 3 帧（a 的 3 个取值），超过了上限 max_frames=2")
    (data,) = read_player(tiny(max_frames=3).static_html())
    assert len(data["frames"]) == 3
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
        ".tlx img": full.all("img")[0]["style"],
        ".tlx-control": [a for a in full.all("div") if a.get("class") == "tlx-control"][0]["style"],
        ".tlx-control label": full.all("label")[0]["style"],
        ".tlx-control output": full.all("output")[0]["style"].removesuffix(";min-width:8ch"),  # 最长的取值：4 个汉字
        ".tlx-range": full.all("input")[0]["style"],
        ".tlx-preview img": preview.all("img")[0]["style"],
        ".tlx-preview p": preview.all("p")[0]["style"],
    }
    assert found == STYLES
    assert STYLES[".tlx-control"] == "display:flex;align-items:center;gap:0.8em;margin:0.3em 0"  # 声明照原文，去掉空格


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


# ---------------------------------------------------------------- 建网站时：帧搬成文件


def test_externalize_frames_moves_every_frame_into_files(tmp_path):
    ex = tiny()
    text = ex.static_html()
    (before,) = read_player(text)
    out = externalize_frames(text, tmp_path, "_frames/")
    (after,) = read_player(out)
    assert "frames" not in after and not any(a["src"].startswith("data:") for a in Page(out).all("img"))
    assert [(tmp_path / u.removeprefix("_frames/")).read_bytes() for u in after["urls"]] == [
        base64.b64decode(f) for f in before["frames"]]
    (img,) = Page(out).all("img")
    assert img["src"] == after["urls"][ex.grid().index(ex.start)]
    assert externalize_frames(out, tmp_path, "_frames/") == out  # 第二次构建（没加 --all）会再经过已换好的页


def test_frame_sources_js_reads_both_forms_of_the_player_in_a_browser(tmp_path):
    """``FRAME_SOURCES_JS``（基准脚本在页面里用它）在真的浏览器里读出每一帧：base64 的和搬成文件的。"""
    path = chromium_path()
    if path is None:
        pytest.skip(NO_CHROMIUM + "这个浏览器测试已跳过。")
    from playwright.sync_api import sync_playwright

    text = tiny().static_html()
    (data,) = read_player(text)
    moved = externalize_frames(text, tmp_path, "_frames/")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            got = []
            for html in (text, moved):
                page.set_content(html)
                got.append(page.locator(".tlx").evaluate(FRAME_SOURCES_JS))
        finally:
            browser.close()
    assert got == [["data:image/png;base64," + f for f in data["frames"]], read_player(moved)[0]["urls"]]


ERROR_CASES = [
    ("render-too-many-frames", call(lambda: render_html(tiny(max_frames=2), all_frames=True)), ValueError,
     r"「直线」要预先画 3 帧（a 的 3 个取值），超过了上限 max_frames=2"),
]
test_documented_errors = error_table_test(ERROR_CASES)
