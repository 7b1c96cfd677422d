"""``widgets/explorable.py``：view 的约定、网格与帧数、取值检查、相等性、在 Jupyter 里的显示。

用 ``helpers/tiny_view.py`` 的小图；书里每张图的约定在 tests/test_explorables.py。
"""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from PIL import Image

import transformer_lab as tl
from transformer_lab.plot.figure import WIDE
from transformer_lab.widgets import explorable
from transformer_lab.widgets.explorable import BOOK_BUILD_ENV, FRAME_CAP, WIDGET_MIME, Explorable, Slider, building_book
from transformer_lab.widgets.static import read_player

from helpers.errors import call, check_error, error_table_test
from helpers.tiny_view import Exploding, Line, Titled, tiny

# ---------------------------------------------------------------- view 的约定（构造时检查）


class _Mismatched:
    def __init__(self, fig, axes, layout):
        pass

    def update(self, a, b):
        return {}


class _Any:
    """``update(self, **params)``：不必和滑块一一对应，引擎把检查过的全部滑块传进来（记在 ``seen`` 里）。"""

    def __init__(self, fig, axes, layout, seen):
        self.seen = seen

    def update(self, **params):
        self.seen.append(params)
        return {}


class _StepAndRest:
    def __init__(self, fig, axes, layout):
        pass

    def update(self, step, **params):
        return {}


@pytest.mark.parametrize("view, sliders, exc_type, pattern", [
    (_Mismatched, [Slider("a", (1, 2))], ValueError, r"_Mismatched\.update 的参数 \(a, b\) 与滑块 \(a\) 不一致"),
    (_Mismatched, [Slider("a", (1, 2)), Slider("c", (1, 2))], ValueError, r"update 的参数 \(a, b\) 与滑块 \(a, c\)"),
    (_StepAndRest, [Slider("a", (1, 2))], ValueError, r"_StepAndRest\.update 的具名参数 \(step\) 不是滑块的名字"),
    (_Mismatched(None, None, None), [Slider("a", (1, 2))], TypeError, r"view 必须是一个带 update 方法的类"),
    (lambda fig, axes: None, [Slider("a", (1, 2))], TypeError, r"view 必须是一个带 update 方法的类"),
], ids=["missing-slider", "wrong-name", "named-beside-kwargs", "instance-not-class", "function"])
def test_view_must_match_its_sliders(view, sliders, exc_type, pattern):
    check_error(lambda: Explorable(view, sliders, title="t", alt="x"), exc_type, pattern)


def test_update_with_params_takes_any_sliders_and_the_engine_still_checks_them():
    seen = []
    ex = Explorable(_Any, [Slider("step", (0, 10, 20)), Slider("start", ("甲", "乙"))], title="t", alt="{start}{step}",
                    data={"seen": seen}, size=(2.0, 1.5))
    ex.update(step=20, start="甲")
    assert seen == [{"step": 10, "start": "乙"}, {"step": 20, "start": "甲"}]  # 建图时的第一次 update（初始值）+ 这一次
    check_error(lambda: ex.update(step=15, start="乙"), ValueError, r"滑块 step=15 不在它的取值里")
    check_error(lambda: ex.update(step=10, start="乙", extra=1), TypeError, r"没有名为 extra 的滑块")
    Explorable(_StepAndRest, [Slider("step", (0, 1)), Slider("start", ("甲", "乙"))], title="t", alt="x")  # 具名的是滑块


def test_engine_calls_update_itself():
    ex = tiny()
    np.testing.assert_array_equal(ex.artists[0].get_ydata(), [0, 2])  # 初始值 a = 2（网格正中），view 自己没调用


def test_alt_template_is_checked_when_the_explorable_is_made():
    check_error(lambda: Explorable(Line, [Slider("a", (1, 2, 3))], title="t", alt="斜率 {b}", data={"top": 3}),
                ValueError, r"alt 模板 '斜率 \{b\}' 用了滑块里没有的占位符.*\{a\}")


# ---------------------------------------------------------------- 网格、帧数、文字：都不建图


def _two_sliders(**options) -> Explorable:
    return Explorable(Exploding, [Slider("a", (1, 2, 3)), Slider("b", ("x", "y"), default="y")], title="两个滑块",
                      alt="a = {a}, b = {b}", **options)


def test_grid_runs_first_slider_slowest_without_building_the_view():
    ex = _two_sliders()  # Exploding：一建图就报错，所以下面这些都没有建图
    assert ex.grid() == [{"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 2, "b": "x"}, {"a": 2, "b": "y"},
                         {"a": 3, "b": "x"}, {"a": 3, "b": "y"}]
    assert ex.frame_count == 6 and ex.start == {"a": 2, "b": "y"}
    assert ex.alt_text(a=3, b="x") == "a = 3, b = x"
    assert ex.describe() == "可交互图「两个滑块」：a ∈ {1, 2, 3}；b ∈ {x, y}"
    assert ex.check_params({"b": "x", "a": 1}) == {"a": 1, "b": "x"}
    with pytest.raises(RuntimeError, match="不该被建出来"):  # 反证：真要画的时候才建图
        ex.update(a=1, b="x")


def test_max_frames_defaults_to_the_cap_and_is_checked():
    assert _two_sliders().max_frames == FRAME_CAP == 42
    assert _two_sliders(max_frames=100).max_frames == 100
    check_error(lambda: _two_sliders(max_frames=0), ValueError, r"max_frames 必须 ≥ 1.*收到的是 0")
    check_error(lambda: _two_sliders(max_frames=2.5), TypeError, r"max_frames 必须是整数.*float 2\.5")
    check_error(lambda: _two_sliders(max_frames=True), TypeError, r"max_frames 必须是整数.*bool True")


def test_check_params_names_missing_and_extra_sliders():
    ex = _two_sliders()
    check_error(lambda: ex.check_params({"a": 1}), TypeError, r"「两个滑块」的滑块是 a, b：缺少 b；")
    check_error(lambda: ex.check_params({"a": 1, "b": "x", "c": 0}), TypeError, r"没有名为 c 的滑块")


# ---------------------------------------------------------------- 相等性：只有同一个对象才相等


def test_explorables_compare_by_identity_even_with_arrays_in_data():
    """``@dataclass(eq=False)``：以前按字段比较，data 里的数组让 ``==`` 抛 ValueError。"""
    a, b = tl.explore.pe_table(), tl.explore.pe_table()
    assert (a == b) is False and (a == a) is True and a != b
    assert len({a, b, a}) == 2  # 能放进集合：按对象哈希
    x = Explorable(Line, [Slider("a", (1, 2))], title="t", alt="x", data={"top": np.arange(3)})
    y = Explorable(Line, [Slider("a", (1, 2))], title="t", alt="x", data={"top": np.arange(3)})
    assert x != y


# ---------------------------------------------------------------- 在 Jupyter 里显示


def _png_frame(bundle) -> bytes:
    """bundle 里的 image/png：base64 解得开，Pillow 读得出是一张 PNG。"""
    raw = base64.b64decode(bundle["image/png"], validate=True)
    with Image.open(io.BytesIO(raw)) as image:
        assert image.format == "PNG" and image.size[0] > 0
    return raw


def _static_figure() -> Explorable:
    return Explorable(Titled, [], title="静态图", alt="一张图", data={"title": "标题"}, size=(2.0, 1.5))


@pytest.fixture
def in_a_kernel(monkeypatch):
    """一个有内核的进程；默认不是建书（``BOOK_BUILD_ENV`` 没设），测试自己再设。"""
    monkeypatch.setattr(explorable, "_has_kernel", lambda: True)
    monkeypatch.delenv(BOOK_BUILD_ENV, raising=False)


def _first_frame(ex) -> bytes:
    """初始帧的宽版，当场画：网站播放器和 notebook 预览里的那一张（256 色，frame_dpi）。"""
    return ex.png(ex.start, palette=True, layout=WIDE, dpi=ex.frame_dpi)


@pytest.mark.parametrize("env, building", [(None, False), ("1", True), ("0", False), ("", False)],
                         ids=["unset", "building", "zero", "empty"])
def test_building_book_is_the_environment_switch_set_by_the_book_build(env, building, monkeypatch):
    monkeypatch.delenv(BOOK_BUILD_ENV, raising=False)
    if env is not None:
        monkeypatch.setenv(BOOK_BUILD_ENV, env)
    assert building_book() is building


def test_describe_and_mime_bundle_outside_a_kernel():
    ex = tiny()
    bundle, metadata = ex._repr_mimebundle_()
    assert bundle["text/plain"] == ex.describe() == "可交互图「直线」：a ∈ {1, 2, 3}"
    (player,) = read_player(bundle["text/html"])  # 没有内核：全部帧（这是读者唯一能拖的滑块）
    assert WIDGET_MIME not in bundle
    # 附上初始帧的 PNG（LaTeX/PDF 用）：就是播放器里宽版的那一帧，也等于当场画的
    assert _png_frame(bundle) == base64.b64decode(player["frames"]["wide"][ex.grid().index(ex.start)]) == _first_frame(ex)
    assert metadata == {"image/png": {"width": 200}}  # 2 英寸宽，按 1 英寸 100 px 显示


def test_mime_bundle_for_a_reader_in_a_kernel_has_a_preview_and_the_live_widget(in_a_kernel):
    ex = tiny()
    bundle, metadata = ex._repr_mimebundle_()
    assert 'class="tlx-preview"' in bundle["text/html"] and read_player(bundle["text/html"]) == []
    assert "静态预览：运行这个单元格后可以拖动滑块" in bundle["text/html"]
    assert set(bundle[WIDGET_MIME]) >= {"model_id", "version_major"}
    # 不附 PNG：存档里的预览已经带着这一帧（再存一份，notebook 就大一截），JupyterLab 也不会显示它
    assert "image/png" not in bundle and metadata == {}


def test_mime_bundle_while_building_the_book_has_every_frame_and_a_png_but_no_widget(in_a_kernel, monkeypatch):
    """建书的内核：不建活滑块（建了也是白画一张图，它的状态还要从页面里删掉），给播放器和初始帧的 PNG。"""
    monkeypatch.setenv(BOOK_BUILD_ENV, "1")
    monkeypatch.setattr(Explorable, "widget", lambda self: pytest.fail("建书时建了活滑块"))
    ex = tiny()
    bundle, metadata = ex._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", "image/png"}
    (player,) = read_player(bundle["text/html"])
    assert len(player["frames"]["wide"]) == 3
    assert _png_frame(bundle) == base64.b64decode(player["frames"]["wide"][ex.grid().index(ex.start)]) == _first_frame(ex)
    assert metadata == {"image/png": {"width": 200}}


@pytest.mark.parametrize("building", [False, True], ids=["reader", "building"])
def test_a_figure_without_sliders_is_a_png_in_a_kernel_and_also_html_while_building(building, in_a_kernel,
                                                                                      monkeypatch):
    if building:
        monkeypatch.setenv(BOOK_BUILD_ENV, "1")
    ex = _static_figure()
    bundle, metadata = ex._repr_mimebundle_()
    assert _png_frame(bundle) == _first_frame(ex) and metadata == {"image/png": {"width": 200}}
    assert WIDGET_MIME not in bundle
    if building:  # 网站按屏幕宽度挑两种版式之一：HTML 里两种都有
        (player,) = read_player(bundle["text/html"])
        assert base64.b64decode(player["frames"]["wide"][0]) == _first_frame(ex)
    else:
        assert "text/html" not in bundle


VE, TE = ValueError, TypeError

# 引擎统一检查的滑块取值与构造参数
ERROR_CASES = [
    ("queue-T-65", call(lambda: tl.explore.queue_vs_direct().update(T=65)), VE, r"滑块 T=65 超出范围.*\[4, 64\]"),
    ("rnn-decay-gain-1e6", call(lambda: tl.explore.rnn_memory_decay().update(gain=1e6, input_scale=0.5)), VE,
     r"滑块 gain=1000000\.0 超出范围.*\[0\.5, 2\.0\]"),
    ("scaling-d_k-float", call(lambda: tl.explore.scaling_saturation().update(d_k=2.7)), TE, r"滑块 d_k 只取整数.*2\.7"),
    ("scaling-d_k-above-range", call(lambda: tl.explore.scaling_saturation().update(d_k=1024)), VE,
     r"滑块 d_k=1024 超出范围.*\[1, 512\]"),
    ("scaling-d_k-bool", call(lambda: tl.explore.scaling_saturation().update(d_k=True)), TE, r"滑块 d_k 只取整数.*True"),
    ("explorer-query-unknown", call(lambda: tl.explore.attention_explorer().update(query="nope", turn="第 1 轮")), VE,
     r"滑块 query='nope' 不在它的取值里"),
    ("explorer-missing-slider", call(lambda: tl.explore.attention_explorer().update(query="it")), TE, r"缺少 turn"),
    ("explorer-extra-slider", call(lambda: tl.explore.dot_vs_cosine().update(angle=60, length=1.5, d=1)), TE,
     r"没有名为 d 的滑块"),
    ("dot-cosine-angle-nan", call(lambda: tl.explore.dot_vs_cosine().update(angle=float("nan"), length=1.5)), TE,
     r"滑块 angle 只取整数.*nan"),
    ("dot-cosine-length-nan", call(lambda: tl.explore.dot_vs_cosine().update(angle=60, length=float("nan"))), VE,
     r"滑块 length=nan 超出范围"),
    ("dot-cosine-length-str", call(lambda: tl.explore.dot_vs_cosine().update(angle=60, length="1")), TE,
     r"滑块 length 只取实数.*'1'"),
    ("explorer-turn-int", call(lambda: tl.explore.attention_explorer().update(query="it", turn=1)), VE,
     r"滑块 turn=1 不在它的取值里"),
    ("explorable-view-not-a-class", call(Explorable, object(), [Slider("a", (1, 2))], title="t", alt="x"), TE,
     r"view 必须是一个带 update 方法的类"),
    ("explorable-title-none", call(Explorable, Line, [], title=None, alt="a"), TE, r"title 必须是非空的字符串.*NoneType"),
    ("explorable-title-empty", call(Explorable, Line, [], title=" ", alt="a"), TE, r"title 必须是非空的字符串"),
    ("explorable-alt-number", call(Explorable, Line, [], title="t", alt=3), TE, r"alt 必须是非空的字符串.*int 3"),
    ("explorable-sliders-none", call(Explorable, Line, None, title="t", alt="a"), TE, r"sliders 必须是 Slider 的列表"),
    ("explorable-sliders-tuples", call(Explorable, Line, [("a", (1, 2))], title="t", alt="a"), TE,
     r"sliders 必须是 Slider 的列表"),
    ("explorable-ncols-zero", call(Explorable, Line, [], title="t", alt="a", ncols=0), VE, r"ncols 必须是正整数.*0"),
    ("slider-label-number", call(Slider, "a", (1, 2), label=3), TE, r"滑块 a 的 label 必须是字符串.*int 3"),
    ("explorable-ncols-huge", call(Explorable, Line, [], title="t", alt="a", ncols=10**6), VE, r"ncols=1000000 太大.*上限是 12"),
    ("explorable-size-none", call(Explorable, Line, [], title="t", alt="a", size=None), TE, r"size 必须是 \(宽, 高\) 两个数.*NoneType"),
    ("explorable-size-zero", call(Explorable, Line, [], title="t", alt="a", size=(0, 1)), VE, r"size 的宽 必须是有限的正实数.*0"),
    ("explorable-size-nan", call(Explorable, Line, [], title="t", alt="a", size=(float("nan"), 2)), VE, r"size 的宽 必须是有限的正实数.*nan"),
    ("explorable-size-strings", call(Explorable, Line, [], title="t", alt="a", size=("a", "b")), TE, r"size 的宽 必须是正实数.*'a'"),
    ("explorable-size-huge", call(Explorable, Line, [], title="t", alt="a", size=(1e9, 1e9)), VE, r"size 的宽 1000000000\.0 英寸太大.*40 英寸"),
    ("explorable-narrow-size-string", call(Explorable, Line, [], title="t", alt="a", narrow_size="x"), TE, r"narrow_size 必须是 \(宽, 高\)"),
    ("explorable-narrow-size-negative", call(Explorable, Line, [], title="t", alt="a", narrow_size=(3.6, -1)), VE, r"narrow_size 的高 必须是有限的正实数"),
    ("explorable-data-none", call(Explorable, Line, [], title="t", alt="a", data=None), TE, r"data 必须是字典.*NoneType"),
    ("explorable-frame-dpi-zero", call(Explorable, Line, [], title="t", alt="a", frame_dpi=0), VE, r"frame_dpi 必须是正整数.*0"),
    ("explorable-frame-dpi-string", call(Explorable, Line, [], title="t", alt="a", frame_dpi="x"), TE, r"frame_dpi 必须是正整数.*'x'"),
    ("explorable-frame-dpi-huge", call(Explorable, Line, [], title="t", alt="a", frame_dpi=10**6), VE, r"frame_dpi 必须在 \[1, 600\] 之内"),
]
test_documented_errors = error_table_test(ERROR_CASES)
