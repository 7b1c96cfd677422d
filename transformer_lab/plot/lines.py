"""曲线与散点。"""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes

from .figure import new_figure

__all__ = ["line_plot", "scatter_vs_target"]


def line_plot(
    x: np.ndarray,
    ys: dict[str, np.ndarray],
    ax: Axes | None = None,
    title: str = "",
    xlabel: str = "",
    ylabel: str = "",
    xscale: str = "linear",
    yscale: str = "linear",
) -> list:
    """几条曲线画在一张图上（带图例）。

    Parameters
    ----------
    x : ndarray of shape (N,)
    ys : dict of label -> ndarray of shape (N,)
    ax : Axes, optional
    title, xlabel, ylabel : str
    xscale, yscale : str
        ``"linear"`` 或 ``"log"``（以 10 为底的对数刻度；想要别的底，拿返回的线的 ``axes`` 再设）。

    Returns
    -------
    list of Line2D
    """
    if ax is None:
        ax = new_figure(5.5, 3.4)[1][0]
    styles = ["o-", "s--", "^:", "d-."]
    lines = [ax.plot(x, y, styles[i % len(styles)], label=label)[0] for i, (label, y) in enumerate(ys.items())]
    ax.set_xscale(xscale)
    ax.set_yscale(yscale)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend()
    return lines


def scatter_vs_target(
    target: np.ndarray,
    prediction: np.ndarray,
    ax: Axes | None = None,
    title: str = "",
    xlabel: str = "正确答案",
    ylabel: str = "预测",
    color: str = "#31688e",
):
    """散点图：横轴是正确答案，纵轴是预测；落在虚线 y = x 上就是答对。

    Parameters
    ----------
    target, prediction : ndarray of shape (N,)
    ax : Axes, optional
    title, xlabel, ylabel : str
    color : str

    Returns
    -------
    PathCollection
        画出的散点。
    """
    target, prediction = np.asarray(target), np.asarray(prediction)
    if target.shape != prediction.shape or target.ndim != 1:
        raise ValueError(f"target 与 prediction 必须是同样长的一维数组，收到 {target.shape} 和 {prediction.shape}。")
    if ax is None:
        ax = new_figure(4.2, 4.0)[1][0]
    lim = float(np.ceil(np.abs(target).max()))
    dots = ax.scatter(target, prediction, s=6, alpha=0.5, color=color)
    ax.plot([-lim, lim], [-lim, lim], "--", color="0.4", lw=1, label="答对的线 (y = x)")
    ax.set(xlim=(-lim, lim), ylim=(-lim, lim), aspect="equal", xlabel=xlabel, ylabel=ylabel, title=title)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    return dots
