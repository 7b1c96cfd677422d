"""平面上的向量：从原点出发的箭头（改 ``.xy`` 就能移动箭头尖），固定范围、等比例的坐标平面。

第 3 章的两张图（点积与余弦、一个键变长）都用它们。本模块只依赖 matplotlib。
"""

from __future__ import annotations

from matplotlib.axes import Axes

__all__ = ["origin_arrow", "vector_plane"]


def origin_arrow(ax: Axes, tip, color: str, lw: float = 2.5, zorder: float = 3):
    """从原点画到 ``tip`` = (x, y) 的箭头，返回它（一个 ``Annotation``）；之后改 ``.xy`` 就能移动箭头尖。"""
    return ax.annotate("", xy=tuple(tip), xytext=(0.0, 0.0), zorder=zorder,
                       arrowprops=dict(arrowstyle="-|>", color=color, lw=lw, mutation_scale=16, shrinkA=0, shrinkB=0))


def vector_plane(ax: Axes, xlim: tuple[float, float], ylim: tuple[float, float], title: str, fontsize: float) -> None:
    """固定范围、等比例（横竖一格一样长）的坐标平面，画出两条坐标轴：每一帧都一样，方便比较。"""
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    ax.axhline(0, color="0.8", lw=0.8, zorder=0)
    ax.axvline(0, color="0.8", lw=0.8, zorder=0)
    ax.grid(alpha=0.25)
    ax.set_title(title, fontsize=fontsize)
