"""局部重画 (blitting) 的两项检查，书里每张图（``tests/test_explorables.py``）和引擎的反证
（``tests/widgets/test_blit.py``）共用同一份：

* ``artist_changes``：会随滑块变化的图元都在 ``ex.artists`` 里（否则局部重画时它停在旧样子）；
* ``blit_vs_full``：局部重画出的帧和整张重画的逐像素相同。
"""

from __future__ import annotations

import matplotlib.image as mi
import matplotlib.lines as ml
import matplotlib.patches as mp
import matplotlib.text as mt
import numpy as np


def artist_state(a):
    """一个图元里会随滑块变化的东西（重画时会不同的部分）；不认识的图元类型返回 None。"""
    if isinstance(a, mt.Annotation):
        return (a.get_text(), tuple(np.ravel(a.xy)))
    if isinstance(a, mt.Text):
        return (a.get_text(), tuple(a.get_position()), str(a.get_color()))
    if isinstance(a, ml.Line2D):
        return np.asarray(a.get_xydata(), float).round(9).tobytes()
    if isinstance(a, mp.Rectangle):
        return (a.get_xy(), a.get_width(), a.get_height(), tuple(a.get_facecolor()))
    if isinstance(a, mi.AxesImage):
        return np.asarray(a.get_array()).tobytes()
    return None


def artist_changes(ex) -> tuple[bool, list]:
    """在网格的首、中、尾三点调用 ``update``：(图元集合是否始终不变, 会变却不在 ``ex.artists`` 里的图元)。"""
    fig, listed, grid = ex.figure, set(map(id, ex.artists)), ex.grid()
    snaps = []
    for p in (grid[0], grid[len(grid) // 2], grid[-1]):
        ex.update(**p)
        snaps.append({id(a): (a, artist_state(a)) for a in fig.findobj()})
    same_set = all(s.keys() == snaps[0].keys() for s in snaps)
    stale = [a for k, (a, s) in snaps[0].items()
             if k not in listed and any(k in o and o[k][1] != s for o in snaps[1:])]
    return same_set, stale


def pixels(fig) -> np.ndarray:
    return np.asarray(fig.canvas.buffer_rgba()).copy()


def blit_vs_full(ex, params) -> int:
    """同一组参数：局部重画 (``ex.render``) 与整张重画 (``canvas.draw``) 相差多少个像素。"""
    ex.render(**params)
    blitted = pixels(ex.figure)
    artists = ex.artists
    for a in artists:
        a.set_animated(False)
    try:
        ex.figure.canvas.draw()
        full = pixels(ex.figure)
    finally:
        for a in artists:
            a.set_animated(True)
    return int(np.any(blitted != full, axis=-1).sum())
