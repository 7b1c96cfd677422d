"""第 4 章的可交互图：除以 √d_k 前后的 softmax 权重。"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from ..lessons.saturation import saturation_demo
from ..plot.bars import weight_bars
from ..widgets.explorable import Explorable, Slider

__all__ = ["scaling_saturation"]

MAX_KEYS = 64  # 再多柱子就挤成一团，数字也看不清
DK_GRID = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


class _ScalingView:
    """左：不缩放的 softmax(q·k)；右：缩放后的 softmax(q·k/√d_k)。同一组随机向量。"""

    def __init__(self, fig, axes, num_keys, seed):
        self.num_keys, self.seed = num_keys, seed
        labels = [f"k{j + 1}" for j in range(num_keys)]
        zeros = np.zeros(num_keys)
        self.raw = weight_bars(zeros, labels, ax=axes[0], color="#b5367a", ylim=(0.0, 1.12))
        self.scaled = weight_bars(zeros, labels, ax=axes[1], color="#31688e", ylim=(0.0, 1.12))
        axes[0].set_ylabel("注意力权重")
        self.axes, self.suptitle = axes, fig.suptitle(" ")
        self.artists = [*self.raw.artists, *self.scaled.artists, axes[0].title, axes[1].title, self.suptitle]

    def update(self, d_k):
        demo = saturation_demo(int(d_k), self.num_keys, np.random.default_rng(self.seed))
        self.raw.set_values(demo["raw"])
        self.scaled.set_values(demo["scaled"])
        self.axes[0].set_title(
            "不缩放：softmax($q\\cdot k$)\n" f"最大权重 {demo['raw'].max():.2f}，梯度最大 {demo['grad_raw']:.3f}"
        )
        self.axes[1].set_title(
            "缩放：softmax($q\\cdot k/\\sqrt{d_k}$)\n"
            f"最大权重 {demo['scaled'].max():.2f}，梯度最大 {demo['grad_scaled']:.3f}"
        )
        self.suptitle.set_text(
            f"$d_k$ = {int(d_k)}：这 {self.num_keys} 个点积的标准差 {demo['scores'].std():.1f}"
            f"（理论值 $\\sqrt{{d_k}}$ = {np.sqrt(d_k):.1f}）"
        )
        return demo


def scaling_saturation(num_keys: int = 8, seed: int = 0) -> Explorable:
    """第 4 章：拖动 d_k，比较除不除以 √d_k 时 softmax 权重有多"尖"。

    Parameters
    ----------
    num_keys : int
        键的个数（柱子的根数）。
    seed : int
        随机向量的种子；同一个种子，静态网页和 JupyterLab 里画的是同一组向量。

    Returns
    -------
    Explorable

    Raises
    ------
    TypeError, ValueError
        ``num_keys`` 不是 1 到 64 的整数，或 ``seed`` 不是非负整数。
    """
    num_keys = check.at_most(check.positive_int(num_keys, "num_keys"), "num_keys", MAX_KEYS, "每个键画一根带数字的柱子")
    seed = check.nonnegative_int(seed, "seed")
    return Explorable(
        view=_ScalingView,
        data={"num_keys": num_keys, "seed": seed},
        sliders=[Slider("d_k", DK_GRID, label="d_k", default=64, continuous=True)],
        title="除以 √d_k 前后的注意力权重",
        alt=f"d_k = {{d_k}} 时，{num_keys} 个键的注意力权重：左边不缩放，右边除以 √d_k。",
        size=(8.4, 3.6),
        ncols=2,
    )
