"""采样的柱状图（第 9、12 章）：原始概率最大的几个候选，柱子是调过温度、截过 top-k/top-p 之后的概率
（被截掉的画成灰色），小横线是原始概率（温度 1、不截断），右上角写还能抽到几个、最高的一根多高。

本模块只画图：概率由调用它的图（``figures``）用 ``core.decoding.next_token_probs`` 算好再交进来。
"""

from __future__ import annotations

import numpy as np

__all__ = ["KEPT", "DROPPED", "SamplingBars", "sampling_title"]

KEPT, DROPPED = "#31688e", "#bbbbbb"  # 还能抽到的候选 / 被 top-k、top-p 截掉的候选


class SamplingBars:
    """在 ``ax`` 上画 ``len(base)`` 根柱子（先是 0 高），``show`` 换成调过的概率。

    Parameters
    ----------
    fig, ax : matplotlib 的 Figure 和 Axes
    base : ndarray of shape (N,)
        这几个候选的原始概率（画成小横线）。
    labels : list of str
        横轴上每个候选的文字。
    unit : str
        候选叫什么（“字”“词元”），写进右上角的计数。
    tick_style : dict
        交给 ``ax.set_xticks`` 的字号、旋转等。
    marker_size : float
        原始概率小横线的长短。
    ylabel : str
    xlabel : str or None
    title_size : float
        总标题的字号。
    """

    def __init__(self, fig, ax, base: np.ndarray, labels: list[str], *, unit: str, tick_style: dict,
                 marker_size: float, ylabel: str, xlabel: str | None, title_size: float):
        x = np.arange(len(base))
        self.unit = unit
        self.bars = ax.bar(x, np.zeros(len(base)), color=KEPT, width=0.7)
        ax.plot(x, base, "_", color="black", ms=marker_size, mew=2, label="原始概率（温度 1，不截断）")
        ax.set_xticks(x, labels, **tick_style)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel(ylabel)
        if xlabel:
            ax.set_xlabel(xlabel)
        ax.legend(loc="upper right", fontsize=9, frameon=False)
        self.note = ax.text(0.98, 0.80, "", transform=ax.transAxes, ha="right", va="top", fontsize=9)
        self.suptitle = fig.suptitle(" ", fontsize=title_size)

    @property
    def artists(self) -> list:
        """随滑块变化的图元（给可交互图的局部重画用）。"""
        return [*self.bars, self.note, self.suptitle]

    def show(self, shown: np.ndarray, kept: str, title: str) -> None:
        """柱子换成 ``shown``（概率为 0 的画成灰色），右上角写“还能被抽到的{unit}：{kept} 个”和最高的一根，换标题。"""
        for bar, value in zip(self.bars, shown):
            bar.set_height(value)
            bar.set_color(KEPT if value > 0 else DROPPED)
        self.note.set_text(f"还能被抽到的{self.unit}：{kept} 个\n最高的一根：{shown.max():.2f}")
        self.suptitle.set_text(title)


def sampling_title(temperature: float, top_k: object, top_p: float, narrow: bool, wide_tail: str,
                   narrow_tail: str = "") -> str:
    """采样柱状图的总标题：“温度 t（贪心），top-k = k，top-p = p” 加上各章自己的说明。

    >>> sampling_title(0.0, "不限", 1.0, False, "：同一组打分，换一种抽法")
    '温度 0（贪心），top-k = 不限，top-p = 1：同一组打分，换一种抽法'
    >>> sampling_title(0.5, 5, 0.9, True, "：…", "\\n第二行")
    '温度 0.5，top-k 5，top-p 0.9\\n第二行'
    """
    head = f"温度 {temperature:g}" + ("（贪心）" if temperature == 0 else "")
    if narrow:
        return f"{head}，top-k {top_k}，top-p {top_p:g}{narrow_tail}"
    return f"{head}，top-k = {top_k}，top-p = {top_p:g}{wide_tail}"
