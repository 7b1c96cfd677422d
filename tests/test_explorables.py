"""全书每一张可交互图都必须满足的约定（对 ``tl.explore.CATALOG`` 里的每一张图逐一检查）。

每张图的全部帧在整个测试运行中只画一次：``conftest.rendered(name)`` 缓存了建好的图和它的静态 HTML，
这里的每个测试都用它（建第 5、8 章的图要先训练模型）。HTML 的格式由 ``widgets.static`` 独自拥有：播放器的数据用
``read_player`` 读回，元素和属性用标准库的 ``html.parser`` 读（``helpers/html_scripts.py``）。
引擎本身（滑块、模型、局部重画、HTML 格式、活滑块）用测试专用的小图在 ``tests/widgets/`` 里测；
各章图的"事实"（例如 it → animal）在 ``tests/figures/`` 里。
"""

from __future__ import annotations

import base64
import importlib
import inspect
import pkgutil
import sys
import typing
import warnings
from dataclasses import replace

import numpy as np
import pytest

import transformer_lab as tl
from transformer_lab import explore, figures
from transformer_lab.plot.figure import NARROW_WIDTH, SCREEN_DPI, WIDE_WIDTH
from transformer_lab.widgets import explorable
from transformer_lab.widgets.explorable import FRAME_CAP, Explorable, Slider
from transformer_lab.widgets.static import LAYOUTS

from helpers.blit_checks import artist_changes, blit_vs_full
from helpers.errors import check_error
from helpers.html_scripts import Page
from helpers.tiny_view import Titled

PNG = b"\x89PNG\r\n\x1a\n"
NAMES = list(explore.catalog())


@pytest.fixture(params=NAMES)
def r(request, rendered):
    return rendered(request.param)


# ---------------------------------------------------------------- 目录与帧数上限


def test_every_explorable_keeps_its_frame_limit(r):
    """帧数上限只有一个默认值 ``FRAME_CAP``；网格更大的图自己写明 ``max_frames``。不单独建图：用的是缓存里的那张。

    ``static.render_html`` 在画第一帧之前也检查这一条（见 tests/widgets/test_static.py），这里给出更直接的报错。
    """
    assert r.ex.frame_count == len(r.ex.grid()), "frame_count 应等于网格的大小"
    assert r.ex.frame_count <= r.ex.max_frames, (f"「{r.ex.title}」有 {r.ex.frame_count} 帧，超过上限 {r.ex.max_frames}"
                                                f"（默认 FRAME_CAP = {FRAME_CAP}）")


def unregistered_explorables(package, catalog) -> list[str]:
    """``package`` 的每个模块里，返回类型标注为 ``Explorable`` 的公开函数中，不在 ``catalog`` 里的那些。"""
    registered = set(catalog)
    missing = []
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for name, fn in inspect.getmembers(module, inspect.isfunction):
            if name.startswith("_") or fn.__module__ != module.__name__:
                continue
            if typing.get_type_hints(fn).get("return") is Explorable and fn not in registered:
                missing.append(f"{module.__name__}.{name}")
    return missing


def test_every_explorable_in_figures_is_in_the_catalog():
    assert unregistered_explorables(figures, explore.CATALOG + explore.FIGURES) == []  # 静态图也是 Explorable（没有滑块）


def test_every_public_figure_function_is_exported():
    """figures 里其余的公开函数（静态图）在 ``explore.FIGURES`` 里，全部都能用 ``tl.explore.名字`` 取到。"""
    public = set()
    for info in pkgutil.iter_modules(figures.__path__):
        module = importlib.import_module(f"{figures.__name__}.{info.name}")
        public |= {fn for name, fn in inspect.getmembers(module, inspect.isfunction)
                   if not name.startswith("_") and fn.__module__ == module.__name__}
    assert public == set(explore.CATALOG) | set(explore.FIGURES)
    assert all(getattr(tl.explore, fn.__name__) is fn for fn in public)


def test_the_registry_check_catches_a_forgotten_explorable(tmp_path, monkeypatch):
    """反证：往 figures 里加一个没登记的模块，同一个检查函数必须把它找出来。"""
    (tmp_path / "ch99_forgotten.py").write_text(
        "from __future__ import annotations\n"
        "from transformer_lab.widgets.explorable import Explorable\n"
        "def forgotten() -> Explorable:\n"
        "    raise NotImplementedError\n"
        "def _private() -> Explorable:\n"
        "    raise NotImplementedError\n",
        encoding="utf-8")
    monkeypatch.setattr(figures, "__path__", [*figures.__path__, str(tmp_path)])
    try:
        assert unregistered_explorables(figures, explore.CATALOG + explore.FIGURES) == [
            "transformer_lab.figures.ch99_forgotten.forgotten"]
    finally:
        sys.modules.pop("transformer_lab.figures.ch99_forgotten", None)


# ---------------------------------------------------------------- 静态网页：全部帧（每张图只画一次）


def test_static_html_frames_and_controls(r):
    ex, data, page = r.ex, r.player, Page(r.html)
    grid = ex.grid()
    n = len(grid)
    for layout in LAYOUTS:
        assert len(data["frames"][layout]) == len(data["alts"]) == n
        assert len(set(data["frames"][layout])) == n, f"{layout}：不同的参数组合画出了一模一样的帧"
        assert all(base64.b64decode(f).startswith(PNG) for f in data["frames"][layout])
    assert data["alts"] == [ex.alt_text(**p) for p in grid]
    assert len(set(data["alts"])) == n, "每一帧的替代文字都应不同"
    assert [s["values"] for s in data["sliders"]] == [[str(v) for v in s.values] for s in ex.sliders]
    assert [s["label"] for s in data["sliders"]] == [s.shown for s in ex.sliders]
    inputs = page.all("input")
    assert len(inputs) == len(ex.sliders)
    for inp, s in zip(inputs, ex.sliders):
        assert (inp["type"], inp["min"], inp["max"]) == ("range", "0", str(len(s.values) - 1))
        assert inp["value"] == str(s.values.index(s.start))
    (img,) = page.all("img")
    start = grid.index(ex.start)
    (root,) = [a for a in page.all("div") if a.get("class") == "tlx"]
    assert root["data-frame"] == str(start) and root["aria-label"] == ex.title
    assert img["src"] == "data:image/png;base64," + data["frames"]["wide"][start] and img["alt"] == data["alts"][start]
    (source,) = page.all("source")
    assert source["srcset"] == "data:image/png;base64," + data["frames"]["narrow"][start]
    assert ex.title in ex.describe() and all(s.shown in ex.describe() for s in ex.sliders)


def test_static_html_works_offline(r):
    page = Page(r.html)
    assert "http:" not in r.html and "https:" not in r.html  # base64 里没有冒号，不会误伤
    assert all(a["src"].startswith("data:") for a in page.all("img") + page.all("script") if "src" in a)


def test_while_building_every_explorable_gives_its_first_frame_as_png_and_no_widget(r, monkeypatch):
    """建书的内核里（``BOOK_BUILD_ENV``）：每张图都附上 image/png（将来的 LaTeX/PDF 用它），就是网站上打开时那一帧
    （宽版）；不建活滑块。"""
    monkeypatch.setattr(explorable, "_has_kernel", lambda: True)
    monkeypatch.setenv(explorable.BOOK_BUILD_ENV, "1")
    monkeypatch.setattr(Explorable, "widget", lambda self: pytest.fail("建书时建了活滑块"))
    r.player  # 全部帧先按平常的路子画好（整个测试运行只画一次）
    bundle, _ = r.ex._repr_mimebundle_()
    start = r.ex.grid().index(r.ex.start)
    assert base64.b64decode(bundle["image/png"]).startswith(PNG)
    assert bundle["image/png"] == r.player["frames"]["wide"][start]
    assert explorable.WIDGET_MIME not in bundle


# ---------------------------------------------------------------- 手机和电脑上都读得清

# 图在屏幕上有多宽（CSS px）：390 px 宽的手机上正文约 358 px，1280 px 宽的电脑上正文栏约 688 px。
# 这里按这两个宽度估算；网站测试（tests/site/test_site.py）在浏览器里量真实的宽度。
PHONE_COLUMN, LAPTOP_COLUMN = 358, 688
PHONE_MIN_PX, LAPTOP_MIN_PX = 11, 12


def on_screen_px(text_px: float, png_width: int, shown_width: int, column: float) -> float:
    """PNG 上 ``text_px`` 像素高的字，在网页上显示出来有几个 CSS px：图按 ``shown_width``（1 英寸 100 px）显示，
    比正文栏 ``column`` 宽时再整体缩小。"""
    return text_px * min(shown_width, column) / png_width


def test_the_reading_check_can_fail():
    """反证：改版前的图（11 英寸宽、100 dpi、8 pt 的字，按 PNG 的像素显示）在手机上只剩约 3.6 px，在电脑上约 6.9 px。"""
    old_px, old_width = 8 * 100 / 72, 1100
    assert on_screen_px(old_px, old_width, old_width, PHONE_COLUMN) < PHONE_MIN_PX
    assert on_screen_px(old_px, old_width, old_width, LAPTOP_COLUMN) < LAPTOP_MIN_PX
    assert on_screen_px(9 * 150 / 72, round(WIDE_WIDTH * 150), round(WIDE_WIDTH * 100), LAPTOP_COLUMN) >= LAPTOP_MIN_PX


def test_every_explorable_reads_on_a_phone_and_a_laptop(r):
    """每张图两种版式的宽度都在上限之内，最小的字在手机上 ≥ 11 px、在电脑上 ≥ 12 px（按正文宽度估算）。"""
    ex, data = r.ex, r.player
    wide, narrow = ex.layout("wide"), ex.layout("narrow")
    assert wide.size[0] <= WIDE_WIDTH + 1e-9, f"「{ex.title}」的宽版 {wide.size[0]} 英寸，超过 {WIDE_WIDTH}"
    assert narrow.size[0] <= NARROW_WIDTH + 1e-9, f"「{ex.title}」的窄版 {narrow.size[0]} 英寸，超过 {NARROW_WIDTH}"
    laptop, phone = (on_screen_px(data["text_px"][name], ex.figure_pixels(name, ex.frame_dpi)[0],
                                  ex.figure_pixels(name, SCREEN_DPI)[0], column)
                     for name, column in (("wide", LAPTOP_COLUMN), ("narrow", PHONE_COLUMN)))
    assert laptop >= LAPTOP_MIN_PX and phone >= PHONE_MIN_PX, (
        f"「{ex.title}」最小的字：电脑上约 {laptop:.1f} px（要 ≥ {LAPTOP_MIN_PX}），手机上约 {phone:.1f} px（要 ≥ {PHONE_MIN_PX}）")


def frames_shown_upscaled(ex) -> list[str]:
    """哪种版式的帧在网页上会被放大显示：帧有 ``figure_pixels(版式, frame_dpi)`` 宽，网页按 ``SCREEN_DPI``
    显示（``<img width>``，见 ``widgets/static.py``），栏更窄时再缩小到栏宽。帧比显示的宽度窄，浏览器就得把它放大，
    字和线都会发虚。每条是一句中文；空列表 = 两种版式都不放大。"""
    problems = []
    for layout, column, where in (("narrow", PHONE_COLUMN, "手机（390 px）"), ("wide", LAPTOP_COLUMN, "电脑（1280 px）")):
        natural = ex.figure_pixels(layout, ex.frame_dpi)[0]
        shown = min(ex.figure_pixels(layout, SCREEN_DPI)[0], column)
        if natural < shown:
            problems.append(f"「{ex.title}」在{where}上：帧宽 {natural} px（{ex.frame_dpi} dpi），显示成 {shown} px，被放大了")
    return problems


def test_every_explorable_frame_is_at_least_as_wide_as_it_is_shown(r):
    """帧从不放大显示（issue 40）：两种版式的帧宽都不小于它在手机和电脑上显示的 CSS 宽度。
    网站测试 tests/site/test_frames.py 在浏览器里量同一件事（naturalWidth ≥ clientWidth）。"""
    assert not frames_shown_upscaled(r.ex), frames_shown_upscaled(r.ex)


def test_the_upscaling_check_can_fail():
    """反证：第 10 章改之前的中文热力图那样，6 英寸宽、72 dpi 的帧（432 px）在电脑上显示成 600 px，
    手机上 3.6 英寸的窄版（259 px）显示成 358 px：两种版式都报出来。100 dpi 时正好不放大。"""
    old = Explorable(Titled, [Slider("a", (1, 2))], title="旧图", alt="{a}", data={"title": "t"},
                     size=(6.0, 4.9), narrow_size=(3.6, 4.4), frame_dpi=72)
    problems = frames_shown_upscaled(old)
    assert len(problems) == 2 and "432 px" in problems[1] and "259 px" in problems[0], problems
    assert frames_shown_upscaled(replace(old, frame_dpi=100)) == []


def test_every_grid_point_gives_finite_data(r):
    for params in r.ex.grid():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            drawn = r.ex.update(**params)
        for key, value in drawn.items():
            assert np.all(np.isfinite(value)), f"{params}: {key}"


# ---------------------------------------------------------------- 局部重画 (blitting)：检查本身的反证在 tests/widgets/test_blit.py


def test_update_neither_adds_nor_removes_artists_and_every_changing_one_is_listed(r):
    same_set, stale = artist_changes(r.ex)
    assert same_set, "update 不应新增或删除图元"
    assert not stale, f"这些图元会随滑块变化，却不在 artists 里（局部重画时会停在旧样子）：{stale}"


def test_blitted_frame_equals_full_redraw(r):
    ex = r.ex
    differ = {str(p): blit_vs_full(ex, p) for p in (ex.start, ex.grid()[-1])}
    assert not any(differ.values()), f"局部重画与整张重画不同的像素数：{differ}"


# ---------------------------------------------------------------- 活滑块（有内核时）


def test_live_widget_redraws_on_every_slider_and_syncs_alt_text(r):
    ex = r.ex
    image, *controls = ex.widget().children
    assert len(controls) == len(ex.sliders)
    assert image.get_state()["tooltip"] == ex.alt_text(**ex.start)  # 浏览器收到的替代文字
    for control, slider in zip(controls, ex.sliders):
        assert control.value == slider.start and control.description == slider.shown
        if slider.continuous:  # 活滑块可以取网格之间的任意值
            assert (control.min, control.max) == (min(slider.values), max(slider.values))
    for control, slider in zip(controls, ex.sliders):
        before = bytes(image.value)
        control.value = slider.values[0] if control.value != slider.values[0] else slider.values[-1]
        assert bytes(image.value) != before and bytes(image.value).startswith(PNG), f"拖动 {slider.name} 后图没有变"
    now = {s.name: c.value for s, c in zip(ex.sliders, controls)}
    assert image.get_state()["tooltip"] == ex.alt_text(**now)


# ---------------------------------------------------------------- 滑块取值由引擎检查（issue 8）


def test_engine_rejects_every_slider_value_outside_the_grid_or_range(r):
    """每张图：网格里的值都能通过；网格外（离散）或范围外（连续）的值、整数滑块收到的小数，都是写明滑块名的中文报错。"""
    ex = r.ex
    for params in ex.grid():
        assert ex.check_params(params) == params
    for s in ex.sliders:
        bad = dict(ex.start)
        numeric = all(isinstance(v, (int, float)) for v in s.values)
        bad[s.name] = max(s.values) + 1 if numeric else "不在网格里的值"
        check_error(lambda: ex.update(**bad), ValueError, rf"滑块 {s.name}=.*(超出范围|不在它的取值里)")
        if s.integral:
            bad[s.name] = min(s.values) + 0.5
            check_error(lambda: ex.update(**bad), TypeError, rf"滑块 {s.name} 只取整数")


# ---------------------------------------------------------------- 随机种子：每张带 seed 的图都经过同一个检查（check.seed）

SEEDED = [f for f in explore.CATALOG if "seed" in inspect.signature(f).parameters]
BAD_SEEDS = [(-1, ValueError, r"^seed 必须是非负整数.*-1"), (2**70, ValueError, r"^seed 必须是非负整数且不超过 2³² − 1"),
             (1.5, TypeError, r"^seed 必须是非负整数.*float 1\.5"), ("x", TypeError, r"^seed 必须是非负整数.*字符串 'x'"),
             (True, TypeError, r"^seed 必须是非负整数.*bool"), (None, TypeError, r"^seed 必须是非负整数.*NoneType"),
             (np.float64(2.0), TypeError, r"^seed 必须是非负整数.*float64")]


def test_the_seeded_explorables_are_found():
    names = {f.__name__ for f in SEEDED}
    assert {"head_shape_tracer", "head_specialisation", "head_symmetry", "rope_scores", "depth_gradients",
            "reversal_training", "rnn_memory_decay", "learned_glasses"} <= names


@pytest.mark.parametrize("fn", SEEDED, ids=[f.__name__ for f in SEEDED])
@pytest.mark.parametrize("seed, exc, pattern", BAD_SEEDS, ids=[repr(s[0]) for s in BAD_SEEDS])
def test_every_seeded_explorable_checks_its_seed_first(fn, seed, exc, pattern, monkeypatch):
    # 种子在任何训练或作图之前就检查：把训练换成"一调用就失败"，坏种子仍得到中文报错，而不是先训练几分钟
    from transformer_lab.lessons import runs

    def no_training(*args, **kwargs):
        raise AssertionError("坏种子应在训练之前就被拒绝")

    for name in {run.__name__ for run, _ in runs.CHAPTER_RUNS}:
        monkeypatch.setattr(runs, name, no_training)
    check_error(lambda: fn(seed=seed), exc, pattern)
