"""曲线与散点。"""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes

from . import checks
from .figure import MIN_FONT_PT, new_figure

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

    Raises
    ------
    TypeError, ValueError
        ``x`` 或某条曲线不是一维实数数组、含 NaN/inf、长度与 ``x`` 不符；``ys`` 不是非空字典；
        刻度类型不是 "linear"/"log"，或对数刻度上有 ≤ 0 的值。文字里的 ``$`` 若不是合法公式，按普通字符显示。
    """
    x, ys, (title, xlabel, ylabel) = _lines(x, ys, xscale, yscale, title, xlabel, ylabel)
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


def _lines(x, ys, xscale, yscale, *texts):
    """检查 ``line_plot`` 的输入，返回 (x, {安全的名字: y}, 安全的文字)。"""
    x = checks.values(x, "x", 1)
    if not isinstance(ys, dict) or not ys:
        raise TypeError(f"ys 必须是非空的字典 {{名字: 一维数组}}，收到的是 {type(ys).__name__}。")
    safe = {}
    for label, y in ys.items():
        y = checks.values(y, f"ys[{label!r}]", 1)
        if len(y) != len(x):
            raise ValueError(f"ys[{label!r}] 的长度 {len(y)} 与 x 的长度 {len(x)} 不符：每个横坐标要对应一个纵坐标。")
        safe[checks.text(label, "ys 的名字")] = y
    for name, scale, arrays in (("xscale", xscale, [x]), ("yscale", yscale, list(safe.values()))):
        if scale not in ("linear", "log"):
            raise ValueError(f"{name} 只能是 'linear' 或 'log'，收到的是 {scale!r}。")
        if scale == "log" and any(np.any(a <= 0) for a in arrays):
            raise ValueError(f"{name}='log' 时数值必须都 > 0（对数刻度画不出 0 和负数）。")
    return x, safe, [checks.text(t, n) for t, n in zip(texts, ("title", "xlabel", "ylabel"))]


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
    target, prediction = checks.values(target, "target", 1), checks.values(prediction, "prediction", 1)
    title, xlabel, ylabel = (checks.text(t, n) for t, n in ((title, "title"), (xlabel, "xlabel"), (ylabel, "ylabel")))
    if target.shape != prediction.shape:
        raise ValueError(f"target 与 prediction 必须是同样长的一维数组，收到 {target.shape} 和 {prediction.shape}。")
    if ax is None:
        ax = new_figure(4.2, 4.0)[1][0]
    lim = float(np.ceil(np.abs(target).max()))
    dots = ax.scatter(target, prediction, s=6, alpha=0.5, color=color)
    ax.plot([-lim, lim], [-lim, lim], "--", color="0.4", lw=1, label="答对的线 (y = x)")
    ax.set(xlim=(-lim, lim), ylim=(-lim, lim), aspect="equal", xlabel=xlabel, ylabel=ylabel, title=title)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=MIN_FONT_PT)
    return dots
