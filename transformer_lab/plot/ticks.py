"""刻度：对数轴上挑哪几个刻度写字（太挤的去掉），以及斜着写的刻度字。

第 4 章的方差图用前两个；第 2 章的柱状图和热力图用 ``slanted_ticks``。本模块只依赖 matplotlib 与 NumPy。
"""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes

__all__ = ["spread_ticks", "log_ticks", "slanted_ticks"]


def spread_ticks(values: np.ndarray, decades: float) -> list[float]:
    """从最大的值往小挑刻度：与上一个留下的相差不到 ``decades`` 个数量级 (log10) 的跳过（最大的一个总留着）。

    Examples
    --------
    >>> spread_ticks(np.array([1, 4, 16, 64, 256, 512]), 0.45)    # log10(512 / 256) = 0.3 < 0.45：去掉 256
    [1.0, 4.0, 16.0, 64.0, 512.0]
    """
    kept = [float(values[-1])]
    for x in values[-2::-1]:
        if np.log10(kept[-1]) - np.log10(x) >= decades:
            kept.append(float(x))
    return kept[::-1]


def log_ticks(values: np.ndarray) -> tuple[list[float], list[str]]:
    """对数纵轴的刻度：范围里的 1、10、100……，再加上最大值的一位有效数字（例如 503 → 500），写成普通数字。

    返回 (刻度的位置, 刻度字)，可以直接交给 ``ax.set_yticks(*log_ticks(values))``。

    Examples
    --------
    >>> log_ticks(np.array([0.98, 503.0]))
    ([1.0, 10.0, 100.0, 500.0], ['1', '10', '100', '500'])
    """
    lo, hi = float(values.min()), float(values.max())
    ticks = [10.0 ** e for e in range(int(np.floor(np.log10(lo))), int(np.floor(np.log10(hi))) + 1)
             if lo / 1.5 <= 10.0 ** e <= hi * 1.5]
    top = float(f"{hi:.0e}")
    if not ticks or top >= 3 * ticks[-1]:
        ticks.append(top)
    return ticks, [f"{t:g}" for t in ticks]


def slanted_ticks(ax: Axes, labels) -> None:
    """横轴每个位置 0, 1, 2, ... 写一个名字，斜着写（45°，右端对准刻度），长词才不会挤在一起。"""
    ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right", rotation_mode="anchor")
