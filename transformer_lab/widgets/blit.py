"""局部重画 (blitting) 的引擎：图只建一次，拖动滑块时只重画会变的图元，再把画布编码成 PNG。

``Explorable`` 第一次要画时建一个 ``BlitFigure``，之后每一帧都画在同一张图上：

1. 建图：按版式 (``Layout``：大小、子图怎么排、dpi) ``new_figure`` → ``view(fig, axes, layout=版式, **data)``
   → ``update(**初始取值)`` → 排版一次（之后不再排版）；
2. 拖动时要重画的图元 = view 的 ``artists``，再加上同一个子图里画在它们**上面**的不变图元（``blit_order``）；
   把它们设为 animated，画一次不含它们的背景并缓存；
3. 每一帧：``update`` 改数据 → 贴回背景 → 按整张重画时的顺序重画那些图元（``BlitFigure.draw``）；
4. 输出：画布的像素 → PNG 字节（``encode_png``）。

本模块不检查滑块取值（``Explorable.check_params`` 先检查过），也不知道 HTML 和 ipywidgets。
"""

from __future__ import annotations

import io
from typing import Any, Mapping

from matplotlib.axis import Axis
from PIL import Image

from ..plot.figure import Layout, TextItem, new_figure, text_items

__all__ = ["BlitFigure", "blit_order", "encode_png"]


class BlitFigure:
    """一张建好的图：view 已画到 ``start``，不变的背景缓存着，``draw`` 只重画会变的图元。

    Parameters
    ----------
    view : type
        画图对象的类，``view(fig, axes, layout=layout, **data)`` 建图。
    data : mapping
        传给 view 构造函数的固定数据。
    start : mapping
        打开图时各滑块的取值（已检查过）。
    layout : Layout
        版式：图的大小、子图怎么排、dpi（宽版或窄版，见 ``plot.figure``）。
    """

    def __init__(self, view: type, data: Mapping[str, Any], start: Mapping[str, Any], layout: Layout):
        fig, axes = new_figure(*layout.size, nrows=layout.nrows, ncols=layout.ncols, dpi=layout.dpi)
        self.layout = layout
        self.view = view(fig, axes, layout=layout, **data)
        self.view.update(**start)
        fig.draw_without_rendering()  # 排版只算一次（不必真的画出像素）：之后拖动滑块只改数据，不再重新排版
        fig.set_layout_engine("none")
        self.artists = blit_order(fig, tuple(getattr(self.view, "artists", ())))
        for artist in self.artists:
            artist.set_animated(True)  # 背景里不画它们
        fig.canvas.draw()
        self.fig = fig
        self.background = fig.canvas.copy_from_bbox(fig.bbox) if self.artists else None

    def draw(self, params: Mapping[str, Any]) -> dict:
        """把图更新到 ``params`` 并画到画布上：有 ``artists`` 时只重画它们，否则整张重画；返回 view 画出的数组。"""
        drawn = self.view.update(**params)
        if self.artists:
            self.fig.canvas.restore_region(self.background)
            for artist in self.artists:
                self.fig.draw_artist(artist)
        else:
            self.fig.canvas.draw()
        return drawn

    def png(self, palette: bool = False) -> bytes:
        """画布上此刻的样子，编码成 PNG（见 ``encode_png``）。"""
        return encode_png(self.fig.canvas, palette=palette)

    def texts(self) -> list[TextItem]:
        """此刻画在图上的每一段字（字号、外框），见 ``plot.figure.text_items``。"""
        return text_items(self.fig)


def encode_png(canvas, palette: bool = False) -> bytes:
    """把 Agg 画布的像素编码成 PNG 字节。

    ``palette=False``：活滑块用，压缩得快；``palette=True``：静态网页的帧，压成 256 色调色板，
    体积约为普通 PNG 的 2/5，肉眼看不出差别。
    """
    image = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba()).convert("RGB")
    if palette:
        image = image.quantize(colors=256)
    buf = io.BytesIO()
    image.save(buf, format="PNG", compress_level=6 if palette else 1, optimize=palette)
    return buf.getvalue()


def blit_order(fig, listed: tuple) -> tuple:
    """拖动时要重画的图元，按整张重画时的先后顺序排好。

    除了 view 列出的会变的图元，同一个子图里画在它们**上面**的不变图元（坐标轴边框、静态曲线、图例……）
    也要跟着重画：否则会变的图元会盖住它们，局部重画出的帧就和整张重画的不一样。
    matplotlib 在子图里按 zorder 从小到大画（zorder 相同时按加入的先后），这里用同样的规则。
    不在任何子图里的图元（总标题）排在最后。
    """
    if not listed:
        return ()
    chosen = {id(a) for a in listed}
    order = []
    for ax in fig.axes:
        children = [a for a in ax.get_children()  # 列出的图元一律算上（可能此刻隐藏、之后才显示）
                    if a is not ax.patch and (id(a) in chosen or (a.get_visible() and not _outside(a)))]
        children = sorted(children, key=lambda a: a.get_zorder())  # sorted 是稳定的：同 zorder 保持加入顺序
        first = next((i for i, a in enumerate(children) if id(a) in chosen), None)
        if first is not None:
            order += children[first:]
    inside = {id(a) for a in order}
    return (*order, *(a for a in listed if id(a) not in inside))  # 图级别的图元（总标题）画在最后


def _outside(artist) -> bool:
    """没有网格线的坐标轴 (Axis)：刻度和刻度标签都画在子图外面，会变的图元盖不到它，不必每次重画（重画刻度文字最费时）。"""
    return isinstance(artist, Axis) and not any(line.get_visible() for line in artist.get_gridlines())
