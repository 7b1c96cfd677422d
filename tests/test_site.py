"""网站测试：构建（零警告）、离线（不请求任何外部地址）、控制台无报错、滑块能拖、中文搜索能搜到。

浏览器测试用 Playwright 驱动系统里的 Chromium（不下载浏览器）；找不到 Chromium 时跳过并说明怎么装。
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from site_tools import CHROMIUM_ARGS, HTML, NO_CHROMIUM, ROOT, block_outside, chromium_path, pages, serve


@pytest.fixture(scope="session")
def site() -> Path:
    """用 README 里的命令构建一次网站（-W：任何警告都算失败），返回 HTML 目录。"""
    proc = subprocess.run([sys.executable, "dev.py", "book"], cwd=ROOT, capture_output=True, text=True)
    log = proc.stdout + proc.stderr
    warnings = [line for line in log.splitlines() if "WARNING:" in line]
    assert proc.returncode == 0 and not warnings, "网站构建失败或有警告：\n" + "\n".join(warnings or [log[-3000:]])
    return HTML


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
            assert "frames" not in data and len(data["urls"]) == len(data["alts"])
            for url in data["urls"]:
                frame = (path.parent / url).resolve()
                assert frame.is_file() and frame.read_bytes().startswith(b"\x89PNG"), url
            count += 1
        assert "data:image/png;base64" not in text.split('class="tlx"', 1)[-1].split("</div>", 1)[0]
    assert count > 0


# ---------------------------------------------------------------- 浏览器测试

@pytest.fixture(scope="session")
def server(site):
    with serve(site) as base:
        yield base


@pytest.fixture(scope="session")
def browser():
    path = chromium_path()
    if path is None:
        pytest.skip(NO_CHROMIUM + "浏览器测试已跳过。")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, server):
    """一个新标签页：拦截一切非本站请求并记下来，记录控制台报错。测试结束时断言两者都为空。"""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    pg.external, pg.errors = [], []
    block_outside(pg, server, pg.external)
    pg.on("console", lambda m: pg.errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    pg.base = server
    yield pg
    assert not pg.external, f"页面试图访问外部地址：{pg.external}"
    assert not pg.errors, f"浏览器控制台报错：{pg.errors}"
    context.close()


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


@pytest.mark.parametrize("word, expected_page", [
    ("注意力", "04_four_steps"),
    ("多头注意力", "04_four_steps"),
    ("位置编码", "preface"),
    ("查询", "04_four_steps"),
])
def test_chinese_search(site, page, word, expected_page):
    page.goto(f"{page.base}/search.html?q={word}")
    page.wait_for_selector("#search-results ul.search li", timeout=15000)
    hrefs = page.locator("#search-results ul.search li a").evaluate_all("els => els.map(e => e.href)")
    assert any(expected_page in h for h in hrefs), f"搜索 {word} 没有找到 {expected_page}：{hrefs}"
