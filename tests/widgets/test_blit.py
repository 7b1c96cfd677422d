"""``widgets/blit.py``：图只建一次；局部重画出的帧与整张重画逐像素相同；拖动时重画哪些图元、按什么顺序；PNG 编码。

检查函数（``helpers/blit_checks.py``）和书里每张图用的是同一份，这里再证明它们能失败。
"""

from __future__ import annotations

import io

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image

from transformer_lab.widgets import blit
from transformer_lab.widgets.blit import blit_order, encode_png
from transformer_lab.widgets.explorable import Explorable, Slider

from helpers.blit_checks import artist_changes, blit_vs_full, pixels
from helpers.tiny_view import Line, tiny


class _Covered:
    """会变的线（zorder 2）从一条粗的不变线（zorder 3）下面穿过；下面还有一条不变线（zorder 1）。"""

    def __init__(self, fig, axes, layout):
        ax = axes[0]
        self.below, = ax.plot([0, 1], [0.5, 0.5], lw=6, color="tab:green", zorder=1)
        self.moving, = ax.plot([0, 1], [0, 0], lw=3, color="tab:blue", zorder=2)
        self.above, = ax.plot([0.5, 0.5], [0, 3], lw=8, color="tab:red", zorder=3)
        ax.set_ylim(0, 3)
        self.artists = [self.moving]

    def update(self, a):
        self.moving.set_ydata([0, a])
        return {"y": np.array([0.0, a])}


def _covered() -> Explorable:
    return Explorable(_Covered, [Slider("a", (1, 2, 3))], title="t", alt="{a}", size=(2.0, 1.5))


def test_blitted_frame_equals_full_redraw_at_every_grid_point():
    for ex in (tiny(), _covered()):
        assert [blit_vs_full(ex, p) for p in ex.grid()] == [0, 0, 0]


def test_static_artists_drawn_above_a_changing_one_are_redrawn_with_it():
    ex = _covered()
    below, moving, above = ex.figure.axes[0].lines
    assert above in ex.artists and below not in ex.artists
    assert ex.artists.index(moving) < ex.artists.index(above)  # 整张重画时的先后


def test_the_blit_check_can_fail(monkeypatch):
    """反证：只重画列出的图元（不补上面那条不变线），局部重画就会盖住它，同一个检查必须看出差别。"""
    monkeypatch.setattr(blit, "blit_order", lambda fig, listed: tuple(listed))
    ex = _covered()
    assert ex.artists == (ex.figure.axes[0].lines[1],)
    assert blit_vs_full(ex, {"a": 3}) > 0


class _Forgetful(Line):
    """忘了把第二条线列进 artists 的 view。这条线画在列出的线下面 (zorder 1 < 2)：
    引擎只会替 view 补上画在会变图元**上面**的图元，下面的这条会停在旧样子。"""

    def __init__(self, fig, axes, layout, top):
        super().__init__(fig, axes, layout, top)
        self.other, = axes[0].plot([0, 1], [1, 1], zorder=1)

    def update(self, a):
        self.other.set_ydata([a, a])
        return super().update(a)


def test_every_changing_artist_of_the_tiny_view_is_listed():
    assert artist_changes(tiny()) == (True, [])


def test_the_stale_artist_check_can_fail():
    """反证：一个会变的图元不在 artists 里，同一个检查函数必须把它找出来。"""
    ex = Explorable(_Forgetful, [Slider("a", (1, 2, 3))], title="t", alt="{a}", data={"top": 3}, size=(2.0, 1.5))
    same_set, stale = artist_changes(ex)
    assert same_set and len(stale) == 1 and list(stale[0].get_ydata()) == [3, 3]


# ---------------------------------------------------------------- blit_order：和 matplotlib 画子图的顺序一致


def _axes():
    fig = Figure(figsize=(2, 2))
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


def test_blit_order_follows_zorder_then_insertion_from_the_first_listed_artist():
    fig, ax = _axes()
    low, = ax.plot([0, 1], zorder=1)
    early, = ax.plot([0, 1], zorder=2)   # 同 zorder、先加入：画在会变的线下面
    moving, = ax.plot([0, 1], zorder=2)
    late, = ax.plot([0, 1], zorder=2)    # 同 zorder、后加入：画在上面
    top, = ax.plot([0, 1], zorder=4)
    hidden, = ax.plot([0, 1], zorder=5, visible=False)
    order = blit_order(fig, (moving,))
    assert order[0] is moving
    assert low not in order and early not in order and hidden not in order
    assert order.index(late) < order.index(top)
    assert ax.xaxis not in order and ax.yaxis not in order  # 没有网格线：刻度画在子图外面，不必重画


def test_blit_order_keeps_gridded_axes_listed_hidden_artists_and_figure_artists_last():
    fig, ax = _axes()
    ax.grid(True)
    moving, = ax.plot([0, 1], zorder=1)
    later, = ax.plot([0, 1], zorder=3, visible=False)  # 列出来了：此刻隐藏，拖动时可能出现
    title = fig.suptitle("总标题")
    order = blit_order(fig, (title, moving, later))
    assert ax.xaxis in order and ax.yaxis in order  # 网格线画在子图里面，会被会变的线盖住
    assert later in order and order[-1] is title
    assert blit_order(fig, ()) == ()


# ---------------------------------------------------------------- 建一次图；PNG


class _Counted(Line):
    built = 0

    def __init__(self, fig, axes, layout, top):
        type(self).built += 1
        super().__init__(fig, axes, layout, top)


def test_the_figure_is_built_once_for_every_frame():
    ex = Explorable(_Counted, [Slider("a", (1, 2, 3))], title="t", alt="{a}", data={"top": 3}, size=(2.0, 1.5))
    fig = ex.figure
    pngs = [ex.png(p) for p in ex.grid()]
    assert _Counted.built == 1 and ex.figure is fig and len(set(pngs)) == 3


class _Whole(Line):
    """没有 artists：每一帧整张重画。"""

    def __init__(self, fig, axes, layout, top):
        super().__init__(fig, axes, layout, top)
        del self.artists


def test_a_view_without_artists_is_redrawn_whole():
    ex = Explorable(_Whole, [Slider("a", (1, 2, 3))], title="t", alt="{a}", data={"top": 3}, size=(2.0, 1.5))
    assert ex.artists == ()
    assert [blit_vs_full(ex, p) for p in ex.grid()] == [0, 0, 0] and ex.png({"a": 1}) != ex.png({"a": 3})


def test_png_is_the_canvas_lossless_or_in_256_colours():
    ex = tiny()
    ex.render(a=3)
    canvas_rgb = pixels(ex.figure)[..., :3]
    plain = Image.open(io.BytesIO(encode_png(ex.figure.canvas)))
    assert plain.mode == "RGB" and np.array_equal(np.asarray(plain), canvas_rgb)
    small = Image.open(io.BytesIO(encode_png(ex.figure.canvas, palette=True)))
    assert small.mode == "P" and small.size == plain.size and small.getcolors(256) is not None
    assert ex.png({"a": 3}) == encode_png(ex.figure.canvas)  # Explorable.png 画完这一帧再编码
