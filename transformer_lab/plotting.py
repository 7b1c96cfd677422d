"""画图：中文字体设置与本书的图形函数。

依赖方向：本模块导入数学模块和 matplotlib，不导入 ipywidgets。
每个图形函数接收数组和可选的 ``ax``，返回它画出的对象，从不调用 ``plt.show()``。
需要随滑块变化的图，返回一个带 ``update(...)`` 方法的小对象：只改数据，不重建图。
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

__all__ = ["CJK_FONT", "setup_fonts", "BookFigure", "new_figure", "attention_heatmap", "Heatmap", "weight_bars", "Bars", "line_plot"]

CJK_FONT = "Noto Sans CJK SC"
_CMAP = "viridis"  # 感知均匀，灰度打印也能分出深浅


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
        """输出 PNG 字节（去掉版本号元数据，同样的图得到同样的字节）。"""
        buf = io.BytesIO()
        self.savefig(buf, format="png", metadata={"Software": None})
        return buf.getvalue()

    def _repr_png_(self) -> bytes:
        return self.to_png()


def new_figure(width: float = 7.0, height: float = 3.6, ncols: int = 1, dpi: int = 100) -> tuple[BookFigure, list[Axes]]:
    """新建一张图和 ``ncols`` 个横排的子图。

    不经过 pyplot，所以反复更新也不会在 Jupyter 里多出一张图；需要显示时，把 ``fig`` 放在单元格最后一行。
    """
    fig = BookFigure(figsize=(width, height), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, list(np.atleast_1d(fig.subplots(1, ncols)))


def text_color(value: float, vmax: float) -> str:
    """格子里数字的颜色：viridis 亮处用黑字，暗处用白字。"""
    return "black" if value > 0.6 * vmax else "white"


@dataclass
class Heatmap:
    """``attention_heatmap`` 画出的东西：图像和格子里的数字，可用 ``update`` 换数据。"""

    image: matplotlib.image.AxesImage
    texts: list

    @property
    def artists(self) -> list:
        """随数据变化的图元（给可交互图的局部重画用）。"""
        return [self.image, *self.texts]

    def update(self, weights: np.ndarray) -> None:
        """换一组同形状的权重，只改像素和数字。"""
        weights = np.asarray(weights)
        self.image.set_data(weights)
        vmax = self.image.norm.vmax
        for text, value in zip(self.texts, weights.ravel()):
            text.set_text(f"{value:.2f}")
            text.set_color(text_color(value, vmax))


def attention_heatmap(
    weights: np.ndarray,
    row_tokens: list[str],
    col_tokens: list[str] | None = None,
    ax: Axes | None = None,
    title: str = "注意力权重",
    annotate: bool = True,
    vmax: float = 1.0,
) -> Heatmap:
    """注意力权重热力图：行 = 查询词 (query)，列 = 键词 (key)，两条轴都标上词。

    Parameters
    ----------
    weights : ndarray of shape (T, S)
    row_tokens : list of str, length T
    col_tokens : list of str, length S, optional
        默认与 ``row_tokens`` 相同（自注意力）。
    ax : Axes, optional
    title : str
    annotate : bool
        是否在每个格子里写上数值。
    vmax : float
        颜色上限，默认 1（权重的最大可能值），这样不同图之间颜色可比。

    Returns
    -------
    Heatmap
    """
    weights = np.asarray(weights)
    col_tokens = row_tokens if col_tokens is None else col_tokens
    if weights.shape != (len(row_tokens), len(col_tokens)):
        raise ValueError(
            f"weights 的形状 {weights.shape} 与词数不符：期望 ({len(row_tokens)}, {len(col_tokens)})。"
        )
    if ax is None:
        ax = new_figure(4.5, 4.0)[1][0]
    image = ax.imshow(weights, cmap=_CMAP, vmin=0.0, vmax=vmax)
    ax.set_xticks(range(len(col_tokens)), col_tokens, rotation=45 if max(map(len, col_tokens)) > 3 else 0)
    ax.set_yticks(range(len(row_tokens)), row_tokens)
    ax.set_xlabel("被关注的词（键 Key）")
    ax.set_ylabel("提问的词（查询 Query）")
    ax.set_title(title)
    texts = []
    if annotate:
        for (i, j), value in np.ndenumerate(weights):
            texts.append(ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=8,
                                 color=text_color(value, vmax)))
    ax.figure.colorbar(image, ax=ax, shrink=0.8)
    return Heatmap(image, texts)


@dataclass
class Bars:
    """``weight_bars`` 画出的柱子和柱顶数字，可用 ``update`` 换数据。"""

    bars: matplotlib.container.BarContainer
    texts: list

    @property
    def artists(self) -> list:
        """随数据变化的图元（给可交互图的局部重画用）。"""
        return [*self.bars, *self.texts]

    def update(self, values: np.ndarray) -> None:
        """换一组同长度的数值，只改柱高和数字。"""
        for bar, text, value in zip(self.bars, self.texts, np.asarray(values)):
            bar.set_height(value)
            text.set_y(value)
            text.set_text(f"{value:.2f}")


def weight_bars(
    values: np.ndarray,
    labels: list[str],
    ax: Axes | None = None,
    title: str = "",
    ylim: tuple[float, float] = (0.0, 1.0),
    color: str = "#31688e",
) -> Bars:
    """一组权重（或分数）的柱状图，柱顶写数值。

    Parameters
    ----------
    values : ndarray of shape (S,)
    labels : list of str, length S
    ax : Axes, optional
    title : str
    ylim : (float, float)
        纵轴范围，固定下来，滑块移动时柱子的高低才可比。
    color : str

    Returns
    -------
    Bars
    """
    values = np.asarray(values)
    if values.shape != (len(labels),):
        raise ValueError(f"values 的形状 {values.shape} 与标签数 {len(labels)} 不符。")
    if ax is None:
        ax = new_figure(4.5, 3.0)[1][0]
    bars = ax.bar(range(len(labels)), values, color=color)
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylim(*ylim)
    ax.set_title(title)
    texts = [ax.text(i, v, f"{v:.2f}", ha="center", va="bottom", fontsize=8) for i, v in enumerate(values)]
    return Bars(bars, texts)


def line_plot(
    x: np.ndarray,
    ys: dict[str, np.ndarray],
    ax: Axes | None = None,
    title: str = "",
    xlabel: str = "",
    ylabel: str = "",
    log: bool = False,
) -> list:
    """几条曲线画在一张图上（带图例），``log=True`` 时两条轴都用对数刻度。

    Parameters
    ----------
    x : ndarray of shape (N,)
    ys : dict of label -> ndarray of shape (N,)
    ax : Axes, optional
    title, xlabel, ylabel : str
    log : bool

    Returns
    -------
    list of Line2D
    """
    if ax is None:
        ax = new_figure(5.5, 3.4)[1][0]
    styles = ["o-", "s--", "^:", "d-."]
    lines = [ax.plot(x, y, styles[i % len(styles)], label=label)[0] for i, (label, y) in enumerate(ys.items())]
    if log:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend()
    return lines
