"""四步的形状图（第 4 章）的排版与画法：七个数组、四支箭头和词各放在哪里，再照着画出来。

排法和手算矩阵乘法一样：``Q`` 在分数表左边、``Kᵀ`` 在它上面（第 1 步）；权重在输出左边、``V`` 在输出上面（第 4 步）。
``plan_four_steps`` 只看数组的形状和字有多宽，算出宽版或窄版里每样东西的位置（英寸，y 朝下）；``draw_four_steps``
照这份排法把七个数组画出来。本模块不做任何数学：七个数组由 ``figures/ch04_four_steps.py`` 算好传进来。
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import Rectangle

from .figure import CMAP, MIN_FONT_PT, NARROW_WIDTH, WIDE_WIDTH
from .heatmap import text_color
from .text import text_width

__all__ = ["ARRAYS", "STEPS", "ShapePlan", "cell_text", "plan_four_steps", "draw_four_steps"]

ARRAYS = ("q", "k_t", "scores", "scaled", "weights", "v", "out")  # 画的顺序（测试按这个顺序读 ax.images）
STEPS = ("① 点积", "② 缩放", "③ softmax", "④ 乘 V")
CELL_MAX = 0.4  # 格子边长的上限（英寸）；图放不下时按比例缩小
TITLE_PT = 10.5  # 标题（与第 4 章其余的图相同）；其余的字不小于 MIN_FONT_PT (9 pt)
NAME_PT = MIN_FONT_PT + 0.5  # 数组的名字和形状、步骤名
LINE = NAME_PT * 1.25 / 72  # 一行这么大的字有多高（英寸）
NAME_H = 2 * LINE + 0.1  # 数组下面写两行名字留的高度
MARGIN = 0.08
STEP_COLOR = "#b5367a"


@dataclass(frozen=True)
class ShapePlan:
    """四步形状图的一种版式：图的大小和格子边长（英寸），每个数组左上角的位置（y 朝下），词和箭头放在哪。"""

    size: tuple[float, float]
    cell: float
    numbers: bool  # 格子里写不写数值
    title: str
    title_y: float
    at: dict
    names: dict
    tokens: list  # ((x, y), 词, 对齐方式)
    arrows: list  # (折线的顶点, 步骤名的位置, 步骤名, 对齐方式)


def cell_text(value: float) -> str:
    """格子里的数：最多两位小数，去掉末尾的 0（2.00 → 2，0.50 → 0.5），不写 -0。

    >>> [cell_text(x) for x in (2.0, 0.5, 0.649, -0.001, -1.25)]
    ['2', '0.5', '0.65', '0', '-1.25']
    """
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _names(T: int, d_k: int, S: int, d_v: int) -> dict[str, str]:
    """每个数组下面写的两行字：它是什么、它的形状。"""
    return {"q": f"查询 Q\n(T, $d_k$) = ({T}, {d_k})", "k_t": f"键的转置 $K^\\top$\n($d_k$, S) = ({d_k}, {S})",
            "scores": f"分数 $QK^\\top$\n(T, S) = ({T}, {S})", "scaled": f"缩放后的分数（÷ √{d_k}）\n(T, S) = ({T}, {S})",
            "weights": f"权重（每行和为 1）\n(T, S) = ({T}, {S})", "v": f"值 V\n(S, $d_v$) = ({S}, {d_v})",
            "out": f"输出（新表示）\n(T, $d_v$) = ({T}, {d_v})"}


def plan_four_steps(q_shape, v_shape, query_tokens, key_tokens, numbers, narrow: bool) -> ShapePlan:
    """算出四步形状图在宽版或窄版里的排法（``q_shape`` = (T, d_k)，``v_shape`` = (S, d_v)）。

    宽版三列：Q | Kᵀ、分数、缩放后、权重 | V、输出。窄版两列：上面 Q | Kᵀ、分数、缩放后；
    下面权重 | V、输出（第 3 步的箭头从缩放后的分数拐到左下角的权重）。格子边长取放得下的最大值（≤ 0.4 英寸）；
    ``numbers`` 是要写进格子的全部数字，最宽的一个放不进格子时这种版式不写数值（标题里注明）。
    """
    (T, d_k), (S, d_v) = q_shape, v_shape
    dims = {"q": (T, d_k), "k_t": (d_k, S), "scores": (T, S), "scaled": (T, S), "weights": (T, S), "v": (S, d_v),
            "out": (T, d_v)}
    names = _names(T, d_k, S, d_v)
    title = [f"四步的形状：T = {T} 个查询，S = {S} 个键和值", f"$d_k$ = {d_k}，$d_v$ = {d_v}（数字为讲解手工设计）"]
    title = title if narrow else ["，".join(title)]
    key_w = text_width(key_tokens, MIN_FONT_PT)
    c, columns, clear, right = _columns(dims, names, title, query_tokens, key_tokens, narrow)
    fits = text_width(numbers, MIN_FONT_PT) + 0.03 <= c
    rotate = key_w + 0.03 > c  # Kᵀ 每列上面的词比格子宽：竖着写
    title += [] if fits else ["格子太小，不写数值"]
    above = key_w if rotate else LINE  # Kᵀ 上面给词留的高度
    at = _rows(dims, c, columns, MARGIN + len(title) * TITLE_PT * 1.3 / 72 + 0.1 + above + 0.06, narrow)
    height = at["out"][1] + T * c + NAME_H + MARGIN
    tokens = token_spots(at, c, query_tokens, key_tokens, rotate)
    arrows = step_arrows(at, c, T, d_k, S, text_width(STEPS, NAME_PT), clear, narrow)
    return ShapePlan((round(float(right), 2), round(float(height), 2)), c, fits, "\n".join(title), MARGIN, at, names,
                     tokens, arrows)


def _columns(dims, names, title, query_tokens, key_tokens, narrow):
    """格子边长 c、三列的左边 (x_q, x_b, x_c)、竖箭头离中间那一列多远、图的右边（英寸）。

    格子边长定了，名字伸出数组多少才定；放不下就把格子按比例缩小再排一次（最多 10 次）。
    """
    (_, d_k), (_, S), (_, d_v) = dims["q"], dims["k_t"], dims["v"]
    name_w = {k: text_width(n.split("\n"), NAME_PT) for k, n in names.items()}
    tok = text_width([*query_tokens, *key_tokens], MIN_FONT_PT) + 0.05  # 行首的词占的宽度
    across = text_width((STEPS[0], STEPS[3]), NAME_PT)  # 横箭头上面的步骤名
    title_w = text_width(title, TITLE_PT)
    limit = NARROW_WIDTH if narrow else WIDE_WIDTH
    middle = ("k_t", "scores", "scaled") + (() if narrow else ("weights",))
    c = CELL_MAX
    for _ in range(10):
        over = {k: max(0.0, name_w[k] / 2 - dims[k][1] * c / 2) for k in dims}  # 名字比数组宽出的半边
        clear = max(0.15, max(over[k] for k in middle) + 0.06)  # 竖箭头离中间那一列多远：别穿过伸出来的名字
        gap = max(across + 0.1, tok + 0.25, over["q"] + clear + 0.06)  # 两列之间：横箭头、V 左边的词
        gap4 = max(gap, over["weights"] + over["out"] + 0.1)
        x_q = MARGIN + max(tok, over["q"], over["weights"] if narrow else 0.0)
        x_b = x_q + d_k * c + gap
        x_c = (x_q + S * c + gap4) if narrow else (x_b + S * c + gap4)
        right = max(x_b + S * c + max(over[k] for k in middle), x_c + d_v * c + max(over["v"], over["out"]),
                    title_w + MARGIN) + MARGIN
        if right <= limit + 1e-9:
            break
        c *= (limit - 2 * MARGIN) / (right - 2 * MARGIN) * 0.995
    return c, (x_q, x_b, x_c), clear, right


def _rows(dims, c, columns, y_kt, narrow) -> dict:
    """每个数组左上角的位置：Kᵀ 在 ``y_kt``（标题和 Kᵀ 上面的词之下），往下依次是分数、缩放后，再是权重和输出。"""
    (T, d_k), (S, _) = dims["q"], dims["v"]
    x_q, x_b, x_c = columns
    y_scores = y_kt + d_k * c + NAME_H
    y_scaled = y_scores + T * c + NAME_H + LINE + 0.05  # Q 的名字下面还要放第 2 步的步骤名
    if narrow:
        y_v = y_scaled + T * c + NAME_H + 0.1
        y_w = y_v + S * c + NAME_H
        at = {"weights": (x_q, y_w), "v": (x_c, y_v), "out": (x_c, y_w)}
    else:
        y_w = y_scaled + T * c + NAME_H + 0.1
        y_v = y_w - NAME_H - S * c
        at = {"weights": (x_b, y_w), "v": (x_c, y_v), "out": (x_c, y_w)}
    at.update({"q": (x_q, y_scores), "k_t": (x_b, y_kt), "scores": (x_b, y_scores), "scaled": (x_b, y_scaled)})
    shift = max(0.0, y_kt - LINE - y_v)  # V 很高时（宽版）会顶到标题：整张图往下挪
    return {k: (x, y + shift) for k, (x, y) in at.items()}


def token_spots(at, c, query_tokens, key_tokens, rotate):
    """词写在哪：Q 和权重每一行的左边是提问的词，Kᵀ 每一列上面、V 每一行左边是被看的词。"""
    left = {"ha": "right", "va": "center"}
    spots = [((at[b][0] - 0.05, at[b][1] + (i + 0.5) * c), t, left)
             for b in ("q", "weights") for i, t in enumerate(query_tokens)]
    spots += [((at["v"][0] - 0.05, at["v"][1] + (j + 0.5) * c), t, left) for j, t in enumerate(key_tokens)]
    above = {"ha": "center", "va": "bottom", "rotation": 90 if rotate else 0}
    spots += [((at["k_t"][0] + (j + 0.5) * c, at["k_t"][1] - 0.04), t, above) for j, t in enumerate(key_tokens)]
    return spots


def step_arrows(at, c, T, d_k, S, step_w, clear, narrow):
    """四支箭头：第 1、4 步是横的（步骤名在上面），第 2、3 步是竖的（步骤名在左边）；窄版的第 3 步拐一个弯。"""
    above, beside = {"ha": "center", "va": "bottom"}, {"ha": "right", "va": "center"}
    (xq, yq), (xb, _), (_, y_scaled), (xw, yw), (xo, _) = (at[k] for k in ("q", "scores", "scaled", "weights", "out"))
    y1, y4 = yq + T * c / 2, yw + T * c / 2
    x_down = xb - clear  # 竖箭头在中间那一列的左边
    arrows = [([(xq + d_k * c + 0.04, y1), (xb - 0.04, y1)], ((xq + d_k * c + xb) / 2, y1 - 0.04), STEPS[0], above),
              ([(x_down, yq + T * c + 0.04), (x_down, y_scaled - 0.04)], (x_down - 0.06, y_scaled - 0.04 - LINE / 2),
               STEPS[1], beside),
              ([(xw + S * c + 0.04, y4), (xo - 0.04, y4)], ((xw + S * c + xo) / 2, y4 - 0.04), STEPS[3], above)]
    if not narrow:
        mid = (y_scaled + T * c + yw) / 2
        return arrows[:2] + [([(x_down, y_scaled + T * c + 0.04), (x_down, yw - 0.04)], (x_down - 0.06, mid),
                              STEPS[2], beside)] + arrows[2:]
    y3 = y_scaled + T * c / 2
    corner = min(xw + S * c / 2, x_down - 0.1)
    mid = (y3 + yw) / 2
    spot = ((corner - 0.06, mid), beside) if corner - 0.06 - step_w > MARGIN else ((corner + 0.06, mid),
                                                                                 {"ha": "left", "va": "center"})
    turn = ([(xb - 0.04, y3), (corner, y3), (corner, yw - 0.04)], spot[0], STEPS[2], spot[1])  # 拐一个弯
    return arrows[:2] + [turn] + arrows[2:]


def draw_four_steps(ax: Axes, plan: ShapePlan, arrays: dict) -> None:
    """照 ``plan`` 在 ``ax`` 上画标题、七个数组（``ARRAYS`` 的顺序）、词和四支箭头。

    位置全由 ``plan`` 算好：关掉图的排版引擎，坐标轴占满整张图，一个坐标单位 = 1 英寸，y 轴朝下。
    """
    ax.figure.set_layout_engine("none")
    ax.set_position((0.0, 0.0, 1.0, 1.0))
    ax.set_xlim(0, plan.size[0])
    ax.set_ylim(plan.size[1], 0)
    ax.set_axis_off()
    ax.text(plan.size[0] / 2, plan.title_y, plan.title, ha="center", va="top", fontsize=TITLE_PT)
    for name in ARRAYS:
        _block(ax, plan, name, arrays[name])
    for (x, y), token, how in plan.tokens:
        ax.text(x, y, token, fontsize=MIN_FONT_PT, **how)
    for path, (x, y), label, how in plan.arrows:
        if len(path) > 2:  # 拐弯的箭头：先画前几段直线，最后一段带箭头
            ax.plot(*zip(*path[:-1]), color=STEP_COLOR, lw=1.8, solid_capstyle="butt")
        ax.annotate("", xy=path[-1], xytext=path[-2],
                    arrowprops=dict(arrowstyle="-|>", color=STEP_COLOR, lw=1.8, mutation_scale=12,
                                    shrinkA=0, shrinkB=0))
        ax.text(x, y, label, fontsize=MIN_FONT_PT + 0.5, color=STEP_COLOR, **how)


def _block(ax: Axes, plan: ShapePlan, name: str, a: np.ndarray) -> None:
    """一个数组画在 plan 给的左上角，格子里写数值（放得下时），下面写名字和形状。"""
    c, (x0, y0) = plan.cell, plan.at[name]
    rows, cols = a.shape
    m = float(np.max(np.abs(a))) or 1.0
    ax.imshow(a, cmap=CMAP, vmin=-m if a.min() < 0 else 0.0, vmax=m, interpolation="nearest",
              extent=(x0, x0 + cols * c, y0 + rows * c, y0))
    if plan.numbers:
        for (i, j), value in np.ndenumerate(a):
            ax.text(x0 + (j + 0.5) * c, y0 + (i + 0.5) * c, cell_text(value), ha="center", va="center",
                    fontsize=MIN_FONT_PT, color=text_color(value, m))
    ax.add_patch(Rectangle((x0, y0), cols * c, rows * c, fill=False, edgecolor="0.2", lw=1.0))
    ax.text(x0 + cols * c / 2, y0 + rows * c + 0.04, plan.names[name], ha="center", va="top",
            fontsize=MIN_FONT_PT + 0.5, linespacing=1.15)
