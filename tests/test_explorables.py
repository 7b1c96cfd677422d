"""全书每一张可交互图都必须满足的约定（对 ``tl.explore.CATALOG`` 里的每一张图逐一检查）。

每张图的全部帧在整个测试运行中只画一次：``conftest.rendered(name)`` 缓存了建好的图和它的静态 HTML。
HTML 的格式由 ``widgets.static`` 独自拥有：播放器的数据用 ``read_player`` 读回，元素和属性用标准库的
``html.parser`` 读，不用自己写的正则。各章图的"事实"（例如 it → animal）在 ``tests/figures/`` 里。
"""

from __future__ import annotations

import base64
import importlib
import inspect
import pkgutil
import sys
import typing
import warnings
from html.parser import HTMLParser

import numpy as np
import pytest
from conftest import check_error

import transformer_lab as tl
from transformer_lab import explore, figures
from transformer_lab.widgets.explorable import Explorable, Slider
from transformer_lab.widgets.static import read_player

PNG = b"\x89PNG\r\n\x1a\n"
NAMES = list(explore.catalog())

# 每张图最多预先画多少帧（静态网页的体积和建书时间）。新图必须在这里登记自己的预算。
FRAME_BUDGET = {
    "rnn_memory_decay": 24,
    "queue_vs_direct": 8,
    "attention_explorer": 24,
    "pronoun_shift": 6,
    "dot_vs_cosine": 42,
    "key_length_attention": 12,
    "scaling_saturation": 12,
    "learned_glasses": 11,
    "head_shape_tracer": 16,
    "head_specialisation": 31,
    "head_symmetry": 32,
    "pe_table": 36,
    "clock_hands": 32,
    "relative_dot": 20,
    "rope_scores": 35,
    "cost_calculator": 40,
    "memory_calculator": 40,
    "layer_norm_steps": 27,
    "layer_walkthrough": 7,
    "depth_gradients": 15,
    "reversal_training": 42,
}



@pytest.fixture(params=NAMES)
def r(request, rendered):
    return rendered(request.param)


class Page(HTMLParser):
    """读一段 HTML：所有开始标签 (tag, 属性 dict)，以及每个 <script> 里的原文。"""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags, self.scripts, self._in = [], [], None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in = dict(attrs)
            self.scripts.append([self._in, ""])

    def handle_data(self, data):
        if self._in is not None:
            self.scripts[-1][1] += data

    def handle_endtag(self, tag):
        if tag == "script":
            self._in = None

    def all(self, tag):
        return [attrs for t, attrs in self.tags if t == tag]


# ---------------------------------------------------------------- 一张只用于测试的小图


class _Line:
    def __init__(self, fig, axes, top):
        self.line, = axes[0].plot([0, 1], [0, 0])
        axes[0].set_ylim(0, top)
        self.artists = [self.line]

    def update(self, a):
        self.line.set_ydata([0, a])
        return {"y": np.array([0.0, a])}


NASTY = 'a & b </script><!--<script> "c"'  # 标签文字里有能关掉 <script> 的字符串


def _tiny(label="a", title="直线"):
    return Explorable(_Line, [Slider("a", (1, 2, 3), label=label)], title=title, alt="斜率 {a}", data={"top": 3},
                      size=(2.0, 1.5))


# ---------------------------------------------------------------- 目录与预算


def test_every_explorable_has_a_frame_budget_and_keeps_it():
    assert set(FRAME_BUDGET) == set(NAMES), "每张可交互图都要在 FRAME_BUDGET 里登记最多画多少帧"
    over = {name: len(explore.catalog()[name]().grid()) for name in NAMES}
    over = {name: n for name, n in over.items() if n > FRAME_BUDGET[name]}
    assert not over, f"这些图的帧数超出预算：{over}"


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
    assert unregistered_explorables(figures, explore.CATALOG) == []


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
        assert unregistered_explorables(figures, explore.CATALOG) == ["transformer_lab.figures.ch99_forgotten.forgotten"]
    finally:
        sys.modules.pop("transformer_lab.figures.ch99_forgotten", None)


# ---------------------------------------------------------------- view 的约定（构造时检查）


class _Mismatched:
    def __init__(self, fig, axes):
        pass

    def update(self, a, b):
        return {}


@pytest.mark.parametrize("view, sliders, exc_type, pattern", [
    (_Mismatched, [Slider("a", (1, 2))], ValueError, r"_Mismatched\.update 的参数 \(a, b\) 与滑块 \(a\) 不一致"),
    (_Mismatched, [Slider("a", (1, 2)), Slider("c", (1, 2))], ValueError, r"update 的参数 \(a, b\) 与滑块 \(a, c\)"),
    (_Mismatched(None, None), [Slider("a", (1, 2))], TypeError, r"view 必须是一个带 update 方法的类"),
    (lambda fig, axes: None, [Slider("a", (1, 2))], TypeError, r"view 必须是一个带 update 方法的类"),
], ids=["missing-slider", "wrong-name", "instance-not-class", "function"])
def test_view_must_match_its_sliders(view, sliders, exc_type, pattern):
    check_error(lambda: Explorable(view, sliders, title="t", alt="x"), exc_type, pattern)


def test_engine_calls_update_itself():
    ex = _tiny()
    np.testing.assert_array_equal(ex.artists[0].get_ydata(), [0, 2])  # 初始值 a = 2（网格正中），view 自己没调用


# ---------------------------------------------------------------- 静态网页：全部帧（每张图只画一次）


def test_static_html_frames_and_controls(r):
    ex, data, page = r.ex, r.player, Page(r.html)
    grid = ex.grid()
    n = len(grid)
    assert len(data["frames"]) == len(data["alts"]) == n
    assert len(set(data["frames"])) == n, "不同的参数组合画出了一模一样的帧"
    assert data["alts"] == [ex.alt_text(**p) for p in grid]
    assert len(set(data["alts"])) == n, "每一帧的替代文字都应不同"
    assert [s["values"] for s in data["sliders"]] == [[str(v) for v in s.values] for s in ex.sliders]
    assert [s["label"] for s in data["sliders"]] == [s.shown for s in ex.sliders]
    assert all(base64.b64decode(f).startswith(PNG) for f in data["frames"])
    inputs = page.all("input")
    assert len(inputs) == len(ex.sliders)
    for inp, s in zip(inputs, ex.sliders):
        assert (inp["type"], inp["min"], inp["max"]) == ("range", "0", str(len(s.values) - 1))
        assert inp["value"] == str(s.values.index(s.start))
    (img,) = page.all("img")
    start = grid.index(ex.start)
    (root,) = [a for a in page.all("div") if a.get("class") == "tlx"]
    assert root["data-frame"] == str(start) and root["aria-label"] == ex.title
    assert img["src"] == "data:image/png;base64," + data["frames"][start] and img["alt"] == data["alts"][start]
    assert ex.title in ex.describe() and all(s.shown in ex.describe() for s in ex.sliders)


def test_static_html_works_offline(r):
    page = Page(r.html)
    assert "http:" not in r.html and "https:" not in r.html  # base64 里没有冒号，不会误伤
    assert all(a["src"].startswith("data:") for a in page.all("img") + page.all("script") if "src" in a)


def test_every_grid_point_gives_finite_data(r):
    for params in r.ex.grid():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            drawn = r.ex.update(**params)
        for key, value in drawn.items():
            assert np.all(np.isfinite(value)), f"{params}: {key}"


# ---------------------------------------------------------------- 局部重画 (blitting) 的约定


def _state(a):
    """一个图元里会随滑块变化的东西（重画时会不同的部分）。"""
    import matplotlib.image as mi
    import matplotlib.lines as ml
    import matplotlib.patches as mp
    import matplotlib.text as mt

    if isinstance(a, mt.Annotation):
        return (a.get_text(), tuple(np.ravel(a.xy)))
    if isinstance(a, mt.Text):
        return (a.get_text(), tuple(a.get_position()), str(a.get_color()))
    if isinstance(a, ml.Line2D):
        return np.asarray(a.get_xydata(), float).round(9).tobytes()
    if isinstance(a, mp.Rectangle):
        return (a.get_xy(), a.get_width(), a.get_height(), tuple(a.get_facecolor()))
    if isinstance(a, mi.AxesImage):
        return np.asarray(a.get_array()).tobytes()
    return None


def artist_changes(ex) -> tuple[bool, list]:
    """在网格的首、中、尾三点调用 ``update``：(图元集合是否始终不变, 会变却不在 ``ex.artists`` 里的图元)。"""
    fig, listed, grid = ex.figure, set(map(id, ex.artists)), ex.grid()
    snaps = []
    for p in (grid[0], grid[len(grid) // 2], grid[-1]):
        ex.update(**p)
        snaps.append({id(a): (a, _state(a)) for a in fig.findobj()})
    same_set = all(s.keys() == snaps[0].keys() for s in snaps)
    stale = [a for k, (a, s) in snaps[0].items()
             if k not in listed and any(k in o and o[k][1] != s for o in snaps[1:])]
    return same_set, stale


def test_update_neither_adds_nor_removes_artists_and_every_changing_one_is_listed(r):
    same_set, stale = artist_changes(r.ex)
    assert same_set, "update 不应新增或删除图元"
    assert not stale, f"这些图元会随滑块变化，却不在 artists 里（局部重画时会停在旧样子）：{stale}"


class _Forgetful(_Line):
    """忘了把第二条线列进 artists 的 view。这条线画在列出的线下面 (zorder 1 < 2)：
    引擎只会替 view 补上画在会变图元**上面**的图元，下面的这条会停在旧样子。"""

    def __init__(self, fig, axes, top):
        super().__init__(fig, axes, top)
        self.other, = axes[0].plot([0, 1], [1, 1], zorder=1)

    def update(self, a):
        self.other.set_ydata([a, a])
        return super().update(a)


def test_the_stale_artist_check_can_fail():
    """反证：一个会变的图元不在 artists 里，同一个检查函数必须把它找出来。"""
    ex = Explorable(_Forgetful, [Slider("a", (1, 2, 3))], title="t", alt="{a}", data={"top": 3}, size=(2.0, 1.5))
    same_set, stale = artist_changes(ex)
    assert same_set and len(stale) == 1 and list(stale[0].get_ydata()) == [3, 3]


def _pixels(fig) -> np.ndarray:
    return np.asarray(fig.canvas.buffer_rgba()).copy()


def blit_vs_full(ex, params) -> int:
    """同一组参数：局部重画 (render) 与整张重画 (canvas.draw) 相差多少个像素。"""
    ex.render(**params)
    blitted = _pixels(ex.figure)
    artists = ex.artists
    for a in artists:
        a.set_animated(False)
    try:
        ex.figure.canvas.draw()
        full = _pixels(ex.figure)
    finally:
        for a in artists:
            a.set_animated(True)
    return int(np.any(blitted != full, axis=-1).sum())


@pytest.mark.parametrize("name", NAMES)
def test_blitted_frame_equals_full_redraw(name, rendered):
    ex = rendered(name).ex
    grid = ex.grid()
    differ = {str(p): blit_vs_full(ex, p) for p in (ex.start, grid[-1])}
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


# ---------------------------------------------------------------- HTML 格式的细节（用测试专用的小图，很便宜）


def test_default_frame_preview_has_no_script_and_no_inputs():
    ex = _tiny()
    page = Page(ex.static_html(all_frames=False))
    assert page.all("script") == [] and page.all("input") == [] and read_player(ex.static_html(all_frames=False)) == []
    (img,) = page.all("img")
    assert img["alt"] == ex.alt_text(**ex.start) and base64.b64decode(img["src"].split(",", 1)[1]).startswith(PNG)


def test_same_explorable_twice_on_one_page_has_unique_ids():
    ex = _tiny()
    page = Page(ex.static_html() + ex.static_html())
    ids = [a["id"] for _, a in page.tags if "id" in a]
    assert len(ids) == 4 and len(set(ids)) == len(ids), ids  # 两个播放器 + 两个滑块
    targets = [a["for"] for a in page.all("label")]
    assert len(targets) == 2 and set(targets) <= set(ids)


def test_json_in_the_page_cannot_close_its_script():
    ex = _tiny(label=NASTY, title=NASTY)
    text = ex.static_html()
    page = Page(text)
    data_scripts = [body for attrs, body in page.scripts if attrs.get("class") == "tlx-data"]
    assert len(data_scripts) == 1 and len(page.scripts) == 2  # 数据 + 播放脚本，没有被标签文字拆开
    (data,) = read_player(text)
    assert data["sliders"][0]["label"] == NASTY
    assert "</script" not in data_scripts[0] and "<!--" not in data_scripts[0] and "&" not in data_scripts[0]
    (root,) = [a for a in page.all("div") if a.get("class") == "tlx"]
    assert root["aria-label"] == NASTY


def test_slider_starts_at_its_default_or_the_middle():
    assert Slider("n", (1, 2, 3, 4, 5)).start == 3
    assert Slider("n", (1, 2, 3), default=1).start == 1


def test_live_widget_shows_the_same_png_as_the_engine():
    ex = _tiny()
    image, control = ex.widget().children
    assert bytes(image.value) == ex.png(ex.start)
    control.value = 3
    assert bytes(image.value) == ex.png({"a": 3}) and image.get_state()["tooltip"] == "斜率 3"


def test_describe_and_mime_bundle_outside_a_kernel():
    ex = _tiny()
    bundle = ex._repr_mimebundle_()
    assert bundle["text/plain"] == ex.describe() and "直线" in ex.describe() and "a ∈ {1, 2, 3}" in ex.describe()
    assert len(read_player(bundle["text/html"])) == 1  # 没有内核：全部帧（这是读者唯一能拖的滑块）
    assert "application/vnd.jupyter.widget-view+json" not in bundle


def test_externalize_frames_moves_every_frame_into_files(tmp_path):
    from transformer_lab.widgets.static import externalize_frames

    ex = _tiny()
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


@pytest.mark.parametrize("live, env, expected", [(False, None, True), (True, None, False), (True, "1", True)],
                         ids=["no-kernel", "kernel", "kernel-building-the-book"])
def test_all_frames_only_without_a_kernel_or_when_building_the_book(live, env, expected, monkeypatch):
    from transformer_lab.widgets.static import ALL_FRAMES_ENV, wants_all_frames

    monkeypatch.delenv(ALL_FRAMES_ENV, raising=False)
    if env is not None:
        monkeypatch.setenv(ALL_FRAMES_ENV, env)
    assert wants_all_frames(live) is expected


# ---------------------------------------------------------------- 滑块取值由引擎检查（issue 8）


@pytest.mark.parametrize("name", NAMES)
def test_engine_rejects_every_slider_value_outside_the_grid_or_range(name):
    """每张图：网格里的值都能通过；网格外（离散）或范围外（连续）的值、整数滑块收到的小数，都是写明滑块名的中文报错。"""
    ex = explore.catalog()[name]()
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


def test_slider_check_keeps_ints_and_float_values():
    assert Slider("n", (1, 4), continuous=True).check(np.int64(3)) == 3
    assert type(Slider("n", (1, 4), continuous=True).check(np.int64(3))) is int
    assert Slider("g", (0.5, 2.0), continuous=True).check(1) == 1  # 浮点滑块收整数：在范围内就行
    assert Slider("w", ("a", "b")).check("b") == "b"
    check_error(lambda: Slider("n", (1, 2, 4)).check(3), ValueError, r"滑块 n=3 不在它的取值里")
    check_error(lambda: Slider("n", (1, 4), continuous=True).check(True), TypeError, r"滑块 n 只取整数.*True")
    check_error(lambda: Slider("w", ("1", "2")).check(1), ValueError, r"滑块 w=1 不在它的取值里")


def test_alt_template_is_checked_when_the_explorable_is_made():
    check_error(lambda: Explorable(_Line, [Slider("a", (1, 2, 3))], title="t", alt="斜率 {b}", data={"top": 3}),
                ValueError, r"alt 模板 '斜率 \{b\}' 用了滑块里没有的占位符.*\{a\}")
