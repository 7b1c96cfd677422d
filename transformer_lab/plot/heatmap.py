"""热力图：矩阵的每个格子一个颜色，两条轴都标上名字（词或特征）。"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib
import numpy as np
from matplotlib.axes import Axes

from . import checks
from .figure import CMAP, MIN_FONT_PT, new_figure

__all__ = ["text_color", "Heatmap", "labelled_heatmap", "attention_heatmap", "colorbar_below", "column_pointer"]


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

    def set_values(self, weights: np.ndarray) -> None:
        """换一组同形状的数值，只改像素和数字（要求画的时候每个格子都写了数）。"""
        weights = checks.values(weights, "weights", 2)
        if weights.shape != self.image.get_array().shape:
            raise ValueError(f"weights 的形状 {weights.shape} 与画好的热力图 {self.image.get_array().shape} 不符。")
        self.image.set_data(weights)
        vmax = self.image.norm.vmax
        for text, value in zip(self.texts, weights.ravel()):
            text.set_text(f"{value:.2f}")
            text.set_color(text_color(value, vmax))


def labelled_heatmap(
    matrix: np.ndarray,
    row_labels: list[str] | tuple[str, ...],
    col_labels: list[str] | tuple[str, ...],
    ax: Axes | None = None,
    title: str = "",
    vmax: float = 1.0,
    annotate: bool = True,
    skip_zeros: bool = False,
    aspect: str = "equal",
) -> Heatmap:
    """带名字的热力图：第 i 行第 j 列的格子颜色 = ``matrix[i, j]``，两条轴都标上名字。

    Parameters
    ----------
    matrix : ndarray of shape (R, C)
    row_labels : list of str, length R
    col_labels : list of str, length C
        名字较长（超过 3 个字符）时斜着写，免得挤在一起。
    ax : Axes, optional
    title : str
    vmax : float
        颜色上限（下限是 0），固定下来，几张图的颜色才可比。
    annotate : bool
        是否在每个格子里写上数值。
    skip_zeros : bool
        为 True 时值为 0 的格子不写数（只看非零的特征）。
    aspect : str
        ``"equal"`` 格子是正方形；``"auto"`` 格子随图拉伸。

    Returns
    -------
    Heatmap

    Raises
    ------
    TypeError, ValueError
        ``matrix`` 不是二维实数数组、含 NaN/inf、形状与名字个数不符；名字不是字符串；``vmax`` 不是正数。
        名字和标题里的 ``$`` 若不是合法公式，按普通字符显示。
    """
    return _heatmap(matrix, ("matrix", "row_labels", "col_labels"), row_labels, col_labels, ax, title, vmax,
                    annotate, skip_zeros, aspect)


def _heatmap(matrix, names, row_labels, col_labels, ax, title, vmax, annotate, skip_zeros, aspect) -> Heatmap:
    """``labelled_heatmap`` 的实现；``names`` 是报错时用的三个参数名（用户传的名字）。"""
    matrix = checks.values(matrix, names[0], 2)
    row_labels = checks.labels(row_labels, names[1])
    col_labels = checks.labels(col_labels, names[2])
    if matrix.shape != (len(row_labels), len(col_labels)):
        raise ValueError(
            f"{names[0]} 的形状 {matrix.shape} 与名字个数不符：期望 ({len(row_labels)}, {len(col_labels)})"
            f"（{names[1]} 有 {len(row_labels)} 个，{names[2]} 有 {len(col_labels)} 个）。"
        )
    vmax, title = checks.positive(vmax, "vmax"), checks.text(title, "title")
    if ax is None:
        ax = new_figure(max(4.5, 0.5 * len(col_labels) + 2.0), 0.4 * len(row_labels) + 2.2)[1][0]
    image = ax.imshow(matrix, cmap=CMAP, vmin=0.0, vmax=vmax, aspect=aspect)
    if max(map(len, col_labels)) > 3:
        ax.set_xticks(range(len(col_labels)), col_labels, rotation=45, ha="right", rotation_mode="anchor")
    else:
        ax.set_xticks(range(len(col_labels)), col_labels)
    ax.set_yticks(range(len(row_labels)), row_labels)
    ax.set_title(title)
    texts = []
    if annotate:
        for (i, j), value in np.ndenumerate(matrix):
            if value != 0 or not skip_zeros:
                texts.append(ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=MIN_FONT_PT,
                                     color=text_color(value, vmax)))
    ax.figure.colorbar(image, ax=ax, shrink=0.8)
    return Heatmap(image, texts)


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

    Raises
    ------
    TypeError, ValueError
        ``weights`` 不是二维实数数组、含 NaN/inf，或形状与词数不符；词不是字符串；``vmax`` 不是正数。
    """
    col_tokens, names = (row_tokens, "row_tokens") if col_tokens is None else (col_tokens, "col_tokens")
    heat = _heatmap(weights, ("weights", "row_tokens", names), row_tokens, col_tokens, ax, title, vmax, annotate,
                    False, "equal")
    heat.image.axes.set_xlabel("被关注的词（键 Key）")
    heat.image.axes.set_ylabel("提问的词（查询 Query）")
    return heat


def colorbar_below(heat: Heatmap) -> None:
    """把热力图的色条从右边挪到下面（手机上图窄，格子才留得宽）。"""
    image = heat.image
    image.colorbar.remove()
    image.figure.colorbar(image, ax=image.axes, location="bottom", shrink=0.8, aspect=30)


def column_pointer(ax: Axes, text: str, col: float, xytext: tuple[float, float], ha: str, zorder: float):
    """一段说明和一支从它指向热力图第 ``col`` 列顶端的箭头，返回这个 ``Annotation``（之后可以改字、挪位置）。

    说明写在数据坐标 ``xytext`` 处，放在表上方留出的空白带里（纵轴的上限要比 -0.5 更小），与热力图不重叠；
    箭头从文字底边靠 ``ha`` 那一角出发（左对齐从左下角，右对齐从右下角）。
    """
    return ax.annotate(text, xy=(col, -0.5), xytext=xytext, fontsize=9, ha=ha, va="bottom", zorder=zorder,
                       arrowprops=dict(arrowstyle="->", color="0.2", lw=1, shrinkA=0, shrinkB=0, patchA=None,
                                       relpos=(1.0 if ha == "right" else 0.0, 0.0)))
