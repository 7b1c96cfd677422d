"""画布、版式与中文字体：本书所有的图都从 ``new_figure`` 开始。

导入本模块时调用一次 ``setup_fonts()``：它改动 matplotlib 的全局设置 ``rcParams``，把中文字体
(Noto Sans CJK SC) 放在字体列表最前面。这是有意的全局状态——本书每张图都要中文字体。

**两种版式**（``Layout``）：同一张图画两次，宽版给电脑、窄版给手机，网页按屏幕宽度挑一张。
字在屏幕上有多大，只取决于"图的 1 英寸在屏幕上占多少 CSS 像素"（与 dpi 无关：dpi 越高图越清楚，
可也会被缩得越小）。电脑上正文栏约 688 px 宽，宽版图宽 ``WIDE_WIDTH`` = 6.8 英寸，1 英寸约 100 px；
390 px 宽的手机上图约 358 px 宽，窄版图宽 ``NARROW_WIDTH`` = 3.6 英寸，1 英寸约 99 px。于是 9 pt 的字
（``MIN_FONT_PT``）在两处都约 12.4 px：手机上 ≥ 11 px、电脑上 ≥ 12 px，网站测试逐张图量过。
``text_items`` 列出一张图里画出来的每一段字（字号、在画布上的位置），供检查"字够不够大、有没有出界"。

本模块只依赖 matplotlib 与 NumPy，不导入本包的任何数学模块。
"""

from __future__ import annotations

import importlib.util
import io
import warnings
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib import font_manager
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

__all__ = ["CJK_FONT", "CMAP", "setup_fonts", "BookFigure", "new_figure", "Layout", "WIDE", "NARROW", "WIDE_WIDTH",
           "NARROW_WIDTH", "MIN_FONT_PT", "SCREEN_DPI", "TextItem", "text_items"]

WIDE_WIDTH, NARROW_WIDTH = 6.8, 3.6  # 英寸：宽版（电脑，正文栏约 688 px）、窄版（手机，图约 358 px）
MIN_FONT_PT = 9.0  # 图里最小的字：两种版式上都约 12.4 CSS px
SCREEN_DPI = 100  # 图的 1 英寸在屏幕上显示成 100 CSS px（网页和 JupyterLab 都按这个比例；栏窄时再整体缩小）
WIDE, NARROW = "wide", "narrow"
CJK_FONT = "Noto Sans CJK SC"
CMAP = "viridis"  # 感知均匀，灰度打印也能分出深浅


@dataclass(frozen=True)
class Layout:
    """一种版式：图的大小（英寸）、子图怎么排（nrows × ncols）、分辨率 dpi。

    ``name`` 是 ``"wide"``（电脑）或 ``"narrow"``（手机）。画图对象按它决定标题写长写短、刻度放几个。

    Examples
    --------
    >>> Layout(NARROW, (3.6, 5.0), nrows=2).narrow, Layout(WIDE, (6.8, 3.0), ncols=2).pixels
    (True, (680, 300))
    """

    name: str
    size: tuple[float, float]
    nrows: int = 1
    ncols: int = 1
    dpi: int = 100

    def __post_init__(self):
        if self.name not in (WIDE, NARROW):
            raise ValueError(f"版式 name 必须是 {WIDE!r} 或 {NARROW!r}，收到的是 {self.name!r}。")
        if not all(isinstance(v, (int, float)) and v > 0 for v in self.size) or len(self.size) != 2:
            raise ValueError(f"版式 size 必须是两个正数（宽、高，英寸），收到的是 {self.size!r}。")

    @property
    def narrow(self) -> bool:
        return self.name == NARROW

    @property
    def pixels(self) -> tuple[int, int]:
        """画出来的 PNG 有多少像素（宽、高）。"""
        return round(self.size[0] * self.dpi), round(self.size[1] * self.dpi)


@dataclass(frozen=True)
class TextItem:
    """图里画出来的一段字：内容、字号 (pt)、在画布上的外框（像素：x0, y0, x1, y1，原点在左下角）。"""

    text: str
    size_pt: float
    box: tuple[float, float, float, float]

    def outside(self, width: float, height: float, tolerance: float = 1.0) -> bool:
        """这段字有没有伸出画布（伸出去的部分画不出来，读者看到的是半截字）。"""
        x0, y0, x1, y1 = self.box
        return x0 < -tolerance or y0 < -tolerance or x1 > width + tolerance or y1 > height + tolerance


def text_items(fig: Figure) -> list[TextItem]:
    """图里此刻会画出来的每一段字（看得见、非空），带字号和外框。先调用 ``fig.canvas.draw()``。

    关掉的坐标轴（``set_axis_off``）上的刻度字和轴名不会画出来，不算；刻度落在视野之外的刻度字也不算。

    Examples
    --------
    >>> fig, (ax,) = new_figure(2.0, 1.0)
    >>> _ = ax.set_title("标题", fontsize=9)
    >>> ax.set_axis_off()
    >>> fig.canvas.draw()
    >>> [(t.text, t.size_pt) for t in text_items(fig)]
    [('标题', 9.0)]
    """
    renderer = fig.canvas.get_renderer()
    hidden = _undrawn_axis_texts(fig)
    items = []
    for artist in fig.findobj(Text):
        text = artist.get_text()
        if id(artist) in hidden or not text.strip() or not artist.get_visible():
            continue
        box = artist.get_window_extent(renderer)
        items.append(TextItem(text, float(artist.get_fontsize()), (box.x0, box.y0, box.x1, box.y1)))
    return items


def _undrawn_axis_texts(fig: Figure) -> set[int]:
    """坐标轴上不会画出来的字（的 id）：关掉的坐标轴的全部字，以及视野之外的刻度的刻度字。"""
    hidden: set[int] = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if not (ax.get_visible() and ax.axison and axis.get_visible()):
                hidden.update(id(t) for t in axis.findobj(Text))
                continue
            lo, hi = sorted(axis.get_view_interval())
            span = (hi - lo) * 1e-9 + 1e-12
            for tick in (*axis.get_major_ticks(), *axis.get_minor_ticks()):
                if not lo - span <= tick.get_loc() <= hi + span:
                    hidden.update((id(tick.label1), id(tick.label2)))
    return hidden



def _bundled_font() -> Path | None:
    """mplfonts 包里自带的思源黑体 (Noto Sans CJK SC) 字体文件；没装 mplfonts 时返回 None。"""
    spec = importlib.util.find_spec("mplfonts")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "fonts" / "NotoSansCJKsc-Regular.otf"
    return path if path.exists() else None


def setup_fonts() -> str | None:
    """让 matplotlib 用中文字体：先用 mplfonts 自带的 Noto Sans CJK SC，找不到再用系统里的。

    中文字体放在字体列表最前面，DejaVu Sans 兜底西文和数学符号。

    Returns
    -------
    str or None
        用上的中文字体名；一个也没找到时返回 None 并发出警告。
    """
    path = _bundled_font()
    if path is not None:
        font_manager.fontManager.addfont(str(path))
    names = {f.name for f in font_manager.fontManager.ttflist}
    found = next((n for n in (CJK_FONT, "Noto Sans SC", "Source Han Sans SC", "WenQuanYi Zen Hei") if n in names), None)
    if found is None:
        warnings.warn(
            "没有找到中文字体，图中的汉字会显示成方框。请运行 pip install mplfonts，"
            "或安装系统字体（Debian/Ubuntu：sudo apt install fonts-noto-cjk）。",
            stacklevel=2,
        )
        return None
    matplotlib.rcParams["font.family"] = ["sans-serif"]
    matplotlib.rcParams["font.sans-serif"] = [found, "DejaVu Sans"]
    matplotlib.rcParams["axes.unicode_minus"] = False
    matplotlib.rcParams["mathtext.fontset"] = "dejavusans"
    return found


setup_fonts()


class BookFigure(Figure):
    """不经过 pyplot 的图：不会被 Jupyter 自动重复显示；作为单元格最后一个值时显示成 PNG。"""

    def to_png(self) -> bytes:
        """输出 PNG 字节（去掉版本号元数据，同样的图得到同样的字节）。

        先排一次版（不画像素）让 constrained 排版稳定下来：第一次画时文字（例如色条的刻度）的大小还不知道，
        直接保存的话，第一次和第二次得到的字节不同。
        """
        self.draw_without_rendering()
        buf = io.BytesIO()
        self.savefig(buf, format="png", metadata={"Software": None})
        return buf.getvalue()

    def _repr_png_(self) -> bytes:
        return self.to_png()


def new_figure(width: float = 7.0, height: float = 3.6, ncols: int = 1, dpi: int = 100,
               nrows: int = 1) -> tuple[BookFigure, list[Axes]]:
    """新建一张图和 ``nrows × ncols`` 个子图（按行排成一个列表）。

    不经过 pyplot，所以反复更新也不会在 Jupyter 里多出一张图；需要显示时，把 ``fig`` 放在单元格最后一行。
    """
    fig = BookFigure(figsize=(width, height), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, list(np.atleast_1d(fig.subplots(nrows, ncols)).ravel())
