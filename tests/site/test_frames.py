"""网站上没有一帧被放大显示（issue 40）：手机（390 px）和电脑（1280 px）上，每一章每张可交互图的 ``<img>``，
PNG 本身的宽度（``naturalWidth``）都不小于它在页面上显示的宽度（``clientWidth``）。帧比显示的窄，浏览器就得把它
放大，字和细线都会发虚（改之前第 10 章的中文热力图：432 px 的帧显示成 600 px）。

``tests/test_explorables.py`` 用 ``figure_pixels`` 算同一件事（不开浏览器）；这里在浏览器里量，栏宽、CSS 缩放都算在内。
``test_the_frame_check_fails_on_an_upscaled_figure`` 证明这个量法能失败。
"""

from __future__ import annotations

from transformer_lab.widgets.explorable import Explorable, Slider

from helpers.tiny_view import Titled
from tools.site import LAPTOP, PHONE, open_tab, pages

# 每张图：滚到它、等初始帧载入，记下帧的像素宽和显示宽（都是 CSS px；像素比 1）
FRAME_WIDTHS_JS = """async () => {
  const out = [];
  for (const root of document.querySelectorAll('.tlx')) {
    const img = root.querySelector('img');
    root.scrollIntoView();
    if (!img.complete) await new Promise(r => img.addEventListener('load', r, {once: true}));
    out.push({title: root.getAttribute('aria-label'), natural: img.naturalWidth, shown: img.clientWidth});
  }
  return out;
}"""


def upscaled(figures: list[dict], where: str) -> list[str]:
    """``FRAME_WIDTHS_JS`` 量到的图里，帧比显示宽度窄（被放大）的那些，每条一句中文。"""
    return [f"{where}「{f['title']}」：帧宽 {f['natural']} px，显示成 {f['shown']} px" for f in figures
            if f["natural"] < f["shown"]]


def test_no_explorable_frame_is_shown_upscaled(site, browser, server):
    problems, seen = [], 0
    for viewport, phone in ((PHONE, True), (LAPTOP, False)):
        page = open_tab(browser, server, viewport=viewport, is_mobile=phone, has_touch=phone)
        for path in pages(site):
            rel = path.relative_to(site).as_posix()
            page.goto(f"{server}/{rel}", wait_until="networkidle")
            figures = page.evaluate(FRAME_WIDTHS_JS)
            seen += len(figures)
            problems += upscaled(figures, f"{viewport['width']} px 宽，{rel}")
        page.context.close()
    assert seen > 40, f"只量到 {seen} 张图"
    assert not problems, "这些帧被放大显示了：\n" + "\n".join(problems)


def test_the_frame_check_fails_on_an_upscaled_figure(browser):
    """反证：改之前第 10 章中文热力图的尺寸和分辨率（6 英寸宽、72 dpi；窄版 3.6 英寸），放进手机和电脑的正文宽度，
    同一个量法都报放大；改成 100 dpi 就不报。"""
    for dpi, expect_upscaled in ((72, True), (100, False)):
        ex = Explorable(Titled, [Slider("a", (1, 2))], title="旧图", alt="{a}", data={"title": "t"},
                        size=(6.0, 4.9), narrow_size=(3.6, 4.4), frame_dpi=dpi)
        html = ex.static_html()
        for viewport, column in ((PHONE, 358), (LAPTOP, 688)):
            page = browser.new_page(viewport=viewport)
            page.set_content(f'<main style="width:{column}px">{html}</main>')
            (fig,) = page.evaluate(FRAME_WIDTHS_JS)
            page.close()
            assert bool(upscaled([fig], "")) == expect_upscaled, (dpi, viewport, fig)
