"""第 4 章的图：一句话的注意力热力图，四步的形状图（每一步进出什么形状的数组），点积方差随 d_k 增长的对数图，
以及除以 √d_k 前后的 softmax 权重（可交互）。

每张图都画两种版式（见 ``plot.figure.Layout``）：宽版给电脑（≤ 6.8 英寸），窄版给手机（≤ 3.6 英寸，子图竖排、
标题更短、刻度更少）。静态图是没有滑块的 ``Explorable``。
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.patches import Rectangle

from .. import _validation as check
from ..core.attention import scaled_dot_product_attention
from ..core.softmax import softmax
from ..lessons.saturation import saturation_demo
from ..plot.bars import weight_bars
from ..plot.checks import increasing_ints, positive_series, square_weights
from ..plot.figure import CMAP, MIN_FONT_PT, NARROW_WIDTH, WIDE_WIDTH, new_figure
from ..plot.heatmap import attention_heatmap, text_color
from ..plot.lines import line_plot
from ..widgets.explorable import Explorable, Slider

__all__ = ["sentence_attention", "four_steps_shapes", "variance_growth", "scaling_saturation"]

TITLE_PT = 10.5  # 标题；其余的字不小于 MIN_FONT_PT (9 pt)
STEP_COLOR = "#b5367a"


# ---------------------------------------------------------------- 一句话的注意力热力图（静态）

class _SentenceView:
    """一张注意力热力图：行是提问的词，列是被看的词，格子里写权重。"""

    def __init__(self, fig, axes, layout, weights, tokens, title):
        attention_heatmap(weights, list(tokens), ax=axes[0], title=title)
        axes[0].title.set_fontsize(TITLE_PT)
        self.weights = weights

    def update(self):
        return {"weights": self.weights}


def sentence_attention(weights: np.ndarray, tokens, sentence: str, note: str = "手工设计的示意，不是训练所得"):
    """第 4 章：一句话里每个词对每个词的注意力权重，画成一张热力图（静态图，两种版式）。

    Parameters
    ----------
    weights : ndarray of shape (T, T)
        注意力权重，每个数在 [0, 1] 之内（颜色上限固定为 1）。
    tokens : list of str, length T
        句子里的词（两条轴都标上它们）。
    sentence : str
        写在标题里的原句，例如 ``"小猫睡了，因为它累了"``。
    note : str
        标题第二行括号里的说明（默认说明权重是手工设计的）。

    Returns
    -------
    Explorable
        没有滑块的 Explorable（静态图）。

    Raises
    ------
    TypeError, ValueError
        ``weights`` 不是有限实数的方阵、有数不在 [0, 1] 之内；``tokens`` 不是字符串列表或个数与行数不符；
        ``sentence``、``note`` 不是非空字符串。
    """
    tokens = check.string_list(tokens, "tokens")
    weights = square_weights(weights, "weights", len(tokens))
    sentence, note = check.nonempty_text(sentence, "sentence"), check.nonempty_text(note, "note")
    title = f"「{sentence}」的注意力权重\n（{note}）"
    return Explorable(
        view=_SentenceView, sliders=[], data={"weights": weights, "tokens": tokens, "title": title},
        title=f"「{sentence}」的注意力权重",
        alt=(f"「{sentence}」的注意力权重热力图：行是提问的词，列是被看的词（{'、'.join(tokens)}），"
             "颜色越亮权重越大，每个格子里写着权重。"),
        size=(4.6, 4.0), narrow_size=(3.6, 3.4),
    )


# ---------------------------------------------------------------- 四步的形状图（静态）

MAX_CELLS = 12  # 每个数组最多画 12 行、12 列：再多格子就太小了
CELL_MAX = 0.4  # 格子边长的上限（英寸）；图放不下时按比例缩小
NAME_PT = MIN_FONT_PT + 0.5  # 数组的名字和形状、步骤名
LINE = NAME_PT * 1.25 / 72  # 一行这么大的字有多高（英寸）
NAME_H = 2 * LINE + 0.1  # 数组下面写两行名字留的高度
MARGIN = 0.08
STEPS = ("① 点积", "② 缩放", "③ softmax", "④ 乘 V")


def _text_width(texts, pt: float) -> float:
    """这些字（``pt`` 磅）里最宽的一段有多宽（英寸）：用 matplotlib 真的排一次版来量。"""
    fig, _ = new_figure(1.0, 1.0, dpi=72)
    renderer = fig.canvas.get_renderer()
    return max(fig.text(0, 0, t, fontsize=pt).get_window_extent(renderer).width for t in texts) / 72


@dataclass(frozen=True)
class _ShapePlan:
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


def _plan_four_steps(q_shape, v_shape, query_tokens, key_tokens, numbers, narrow: bool) -> _ShapePlan:
    """算出四步形状图在宽版或窄版里的排法（见 ``four_steps_shapes``）。

    宽版三列：Q | Kᵀ、分数、缩放后、权重 | V、输出。窄版两列：上面 Q | Kᵀ、分数、缩放后；
    下面权重 | V、输出（第 3 步的箭头从缩放后的分数拐到左下角的权重）。格子边长取放得下的最大值（≤ 0.4 英寸）。
    """
    (T, d_k), (S, d_v) = q_shape, v_shape
    dims = {"q": (T, d_k), "k_t": (d_k, S), "scores": (T, S), "scaled": (T, S), "weights": (T, S), "v": (S, d_v),
            "out": (T, d_v)}
    names = {"q": f"查询 Q\n(T, $d_k$) = ({T}, {d_k})", "k_t": f"键的转置 $K^\\top$\n($d_k$, S) = ({d_k}, {S})",
             "scores": f"分数 $QK^\\top$\n(T, S) = ({T}, {S})", "scaled": f"缩放后的分数（÷ √{d_k}）\n(T, S) = ({T}, {S})",
             "weights": f"权重（每行和为 1）\n(T, S) = ({T}, {S})", "v": f"值 V\n(S, $d_v$) = ({S}, {d_v})",
             "out": f"输出（新表示）\n(T, $d_v$) = ({T}, {d_v})"}
    name_w = {k: _text_width(n.split("\n"), NAME_PT) for k, n in names.items()}
    tok = _text_width([*query_tokens, *key_tokens], MIN_FONT_PT) + 0.05  # 行首的词占的宽度
    key_w, step_w = _text_width(key_tokens, MIN_FONT_PT), _text_width(STEPS, NAME_PT)
    across = _text_width((STEPS[0], STEPS[3]), NAME_PT)  # 横箭头上面的步骤名
    limit = NARROW_WIDTH if narrow else WIDE_WIDTH
    title = [f"四步的形状：T = {T} 个查询，S = {S} 个键和值", f"$d_k$ = {d_k}，$d_v$ = {d_v}（数字为讲解手工设计）"]
    title = title if narrow else ["，".join(title)]
    title_w = _text_width(title, TITLE_PT)
    c = CELL_MAX
    for _ in range(10):  # 格子边长定了，名字伸出数组多少才定；放不下就把格子缩小再排一次
        over = {k: max(0.0, name_w[k] / 2 - dims[k][1] * c / 2) for k in dims}  # 名字比数组宽出的半边
        middle = ("k_t", "scores", "scaled") + (() if narrow else ("weights",))
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
    fits = _text_width(numbers, MIN_FONT_PT) + 0.03 <= c
    rotate = key_w + 0.03 > c  # Kᵀ 每列上面的词比格子宽：竖着写
    title += [] if fits else ["格子太小，不写数值"]
    y_kt = MARGIN + len(title) * TITLE_PT * 1.3 / 72 + 0.1 + (key_w if rotate else LINE) + 0.06
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
    at = {k: (x, y + shift) for k, (x, y) in at.items()}
    height = at["out"][1] + T * c + NAME_H + MARGIN
    tokens = _token_spots(at, c, query_tokens, key_tokens, rotate)
    arrows = _step_arrows(at, c, T, d_k, S, step_w, clear, narrow)
    return _ShapePlan((round(float(right), 2), round(float(height), 2)), c, fits, "\n".join(title), MARGIN, at, names, tokens, arrows)


def _token_spots(at, c, query_tokens, key_tokens, rotate):
    """词写在哪：Q 和权重每一行的左边是提问的词，Kᵀ 每一列上面、V 每一行左边是被看的词。"""
    left = {"ha": "right", "va": "center"}
    spots = [((at[b][0] - 0.05, at[b][1] + (i + 0.5) * c), t, left)
             for b in ("q", "weights") for i, t in enumerate(query_tokens)]
    spots += [((at["v"][0] - 0.05, at["v"][1] + (j + 0.5) * c), t, left) for j, t in enumerate(key_tokens)]
    above = {"ha": "center", "va": "bottom", "rotation": 90 if rotate else 0}
    spots += [((at["k_t"][0] + (j + 0.5) * c, at["k_t"][1] - 0.04), t, above) for j, t in enumerate(key_tokens)]
    return spots


def _step_arrows(at, c, T, d_k, S, step_w, clear, narrow):
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
    return arrows[:2] + [([(xb - 0.04, y3), (corner, y3), (corner, yw - 0.04)], spot[0], STEPS[2], spot[1])] + arrows[2:]


def _cell_text(value: float) -> str:
    """格子里的数：最多两位小数，去掉末尾的 0（2.00 → 2，0.50 → 0.5），不写 -0。"""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


class _FourStepsView:
    """按 ``_plan_four_steps`` 排好的位置画七个数组、四支箭头和词；一个坐标单位 = 1 英寸，y 轴朝下。"""

    def __init__(self, fig, axes, layout, arrays, plans):
        plan = plans[layout.name]
        (ax,) = axes
        fig.set_layout_engine("none")  # 位置全由 plan 算好：坐标轴占满整张图
        ax.set_position((0.0, 0.0, 1.0, 1.0))
        ax.set_xlim(0, plan.size[0])
        ax.set_ylim(plan.size[1], 0)
        ax.set_axis_off()
        self.ax, self.plan, self.arrays = ax, plan, arrays
        ax.text(plan.size[0] / 2, plan.title_y, plan.title, ha="center", va="top", fontsize=TITLE_PT)
        for name in ("q", "k_t", "scores", "scaled", "weights", "v", "out"):  # 测试按这个顺序读 ax.images
            self._block(name)
        for (x, y), token, how in plan.tokens:
            ax.text(x, y, token, fontsize=MIN_FONT_PT, **how)
        for path, (x, y), label, how in plan.arrows:
            if len(path) > 2:  # 拐弯的箭头：先画前几段直线，最后一段带箭头
                ax.plot(*zip(*path[:-1]), color=STEP_COLOR, lw=1.8, solid_capstyle="butt")
            ax.annotate("", xy=path[-1], xytext=path[-2],
                        arrowprops=dict(arrowstyle="-|>", color=STEP_COLOR, lw=1.8, mutation_scale=12,
                                        shrinkA=0, shrinkB=0))
            ax.text(x, y, label, fontsize=MIN_FONT_PT + 0.5, color=STEP_COLOR, **how)

    def _block(self, name):
        """数组画在 plan 给的左上角，格子里写数值（放得下时），下面写名字和形状。"""
        a, c, (x0, y0) = self.arrays[name], self.plan.cell, self.plan.at[name]
        rows, cols = a.shape
        m = float(np.max(np.abs(a))) or 1.0
        self.ax.imshow(a, cmap=CMAP, vmin=-m if a.min() < 0 else 0.0, vmax=m, interpolation="nearest",
                       extent=(x0, x0 + cols * c, y0 + rows * c, y0))
        if self.plan.numbers:
            for (i, j), value in np.ndenumerate(a):
                self.ax.text(x0 + (j + 0.5) * c, y0 + (i + 0.5) * c, _cell_text(value), ha="center", va="center",
                             fontsize=MIN_FONT_PT, color=text_color(value, m))
        self.ax.add_patch(Rectangle((x0, y0), cols * c, rows * c, fill=False, edgecolor="0.2", lw=1.0))
        self.ax.text(x0 + cols * c / 2, y0 + rows * c + 0.04, self.plan.names[name], ha="center", va="top",
                     fontsize=MIN_FONT_PT + 0.5, linespacing=1.15)

    def update(self):
        return dict(self.arrays)


def _checked_four_steps(q, k, v, query_tokens, key_tokens):
    """检查输入（形状规则交给 ``scaled_dot_product_attention``），返回浮点数组和两串词。"""
    q, k, v = (check.as_real_array(a, n, min_ndim=2) for a, n in ((q, "q"), (k, "k"), (v, "v")))
    for a, n in ((q, "q"), (k, "k"), (v, "v")):
        if a.ndim != 2:
            raise ValueError(f"{n} 必须是二维数组（一行一个词），收到的是 {a.ndim} 维，shape={a.shape}。")
        if max(a.shape) > MAX_CELLS:
            raise ValueError(f"{n} 的每一维最多 {MAX_CELLS}（格子里要写得下数字），收到的 shape={a.shape}。")
    scaled_dot_product_attention(q, k, v)  # d_k、S 对不上时在这里报错
    query_tokens, key_tokens = check.string_list(query_tokens, "query_tokens"), check.string_list(key_tokens, "key_tokens")
    for tokens, name, n, what in ((query_tokens, "query_tokens", q.shape[0], "q 的行数 T"),
                                  (key_tokens, "key_tokens", k.shape[0], "k 的行数 S")):
        if len(tokens) != n:
            raise ValueError(f"{name} 有 {len(tokens)} 个词，应该等于 {what} = {n}：每一行配一个词。")
    return q, k, v, query_tokens, key_tokens


def four_steps_shapes(q: np.ndarray, k: np.ndarray, v: np.ndarray, query_tokens, key_tokens):
    """第 4 章：四步的形状图。T 个查询、S 个键值，每一步进来什么、出去什么，连同每个格子的数值（静态图）。

    排法和手算矩阵乘法一样：``Q`` 在分数表左边、``Kᵀ`` 在它上面（第 1 步）；权重在输出左边、``V`` 在输出上面
    （第 4 步）。宽版（电脑）里第 2、3 步不改形状，从上往下画在同一列里，第 4 步在右边；窄版（手机）里图只有一半宽，
    第 3 步的权重拐到左下角，第 4 步画在它右边（``V`` 在缩放后的分数下面），整张图从上往下读。
    格子太小、数字写不下 9 pt 时，那种版式不写数值（标题里注明）。

    Parameters
    ----------
    q : ndarray of shape (T, d_k)
    k : ndarray of shape (S, d_k)
    v : ndarray of shape (S, d_v)
    query_tokens : list of str, length T
        提问的词（画在 Q 和权重的每一行左边）。
    key_tokens : list of str, length S
        被看的词（画在 Kᵀ 的每一列上面、V 的每一行左边）。

    Returns
    -------
    Explorable
        没有滑块的 Explorable（静态图）；``update()`` 返回七个数组（``q``、``k_t``、``scores``、``scaled``、
        ``weights``、``v``、``out``）。

    Raises
    ------
    TypeError, ValueError
        数组不是二维有限实数数组、某一维超过 12、d_k 或 S 对不上；词不是字符串列表，或个数与行数不符。
    """
    q, k, v, query_tokens, key_tokens = _checked_four_steps(q, k, v, query_tokens, key_tokens)
    scores = q @ k.T  # (T, S)
    scaled = scores / np.sqrt(q.shape[1])  # (T, S)
    weights = softmax(scaled, axis=-1)  # (T, S)
    arrays = {"q": q, "k_t": k.T, "scores": scores, "scaled": scaled, "weights": weights, "v": v,
              "out": weights @ v}  # out: (T, d_v)
    numbers = [_cell_text(x) for a in arrays.values() for x in np.ravel(a)]
    plans = {name: _plan_four_steps(q.shape, v.shape, query_tokens, key_tokens, numbers, narrow=name == "narrow")
             for name in ("wide", "narrow")}
    (T, d_k), S, d_v = q.shape, k.shape[0], v.shape[1]
    cells = "每个格子里写着它的数值" if all(p.numbers for p in plans.values()) else "格子放得下时写着数值"
    return Explorable(
        view=_FourStepsView, sliders=[],
        data={"arrays": arrays, "plans": plans},
        title="四步的形状：进来什么，出去什么",
        alt=(f"四步的形状图：查询 Q ({T}×{d_k}) 乘键的转置 Kᵀ ({d_k}×{S}) 得到分数 ({T}×{S})，除以 √{d_k}、"
             f"每行做 softmax 得到权重 ({T}×{S})，再乘值 V ({S}×{d_v}) 得到输出 ({T}×{d_v})；{cells}。"),
        size=plans["wide"].size, narrow_size=plans["narrow"].size,
    )


# ---------------------------------------------------------------- 点积的方差随 d_k 增长（静态）

class _VarianceView:
    """对数—对数坐标：不缩放的 Var(q·k) 随 d_k 增长，缩放后的始终在 1 附近。"""

    def __init__(self, fig, axes, layout, dims, raw_var, scaled_var, samples):
        (ax,) = axes
        curves = {"不缩放：Var($q\\cdot k$)": raw_var, "缩放后：Var($q\\cdot k/\\sqrt{d_k}$)": scaled_var}
        title = (f"点积的方差随 $d_k$ 增长\n（每个 $d_k$ 抽样 {samples} 对）" if layout.narrow
                 else f"点积的方差随 $d_k$ 增长（每个 $d_k$ 抽样 {samples} 对）")
        line_plot(dims, curves, ax=ax, xscale="log", yscale="log", title=title, xlabel="$d_k$", ylabel="方差")
        ax.title.set_fontsize(TITLE_PT)
        shown = _spread_ticks(dims, 0.45 if layout.narrow else 0.25)  # 对数轴上太挤的刻度字去掉（最大的一个总留着）
        ax.set_xticks(shown, [f"{d:g}" for d in shown])
        ax.set_yticks(*_log_ticks(np.concatenate([raw_var, scaled_var])))
        ax.minorticks_off()
        ax.legend(loc="upper left", fontsize=MIN_FONT_PT)
        self.drawn = {"dims": dims, "raw_var": raw_var, "scaled_var": scaled_var}

    def update(self):
        return dict(self.drawn)


def _spread_ticks(values: np.ndarray, decades: float) -> list[float]:
    """从最大的值往小挑刻度：与上一个留下的相差不到 ``decades`` 个数量级 (log10) 的跳过。"""
    kept = [float(values[-1])]
    for x in values[-2::-1]:
        if np.log10(kept[-1]) - np.log10(x) >= decades:
            kept.append(float(x))
    return kept[::-1]


def _log_ticks(values: np.ndarray) -> tuple[list[float], list[str]]:
    """纵轴刻度：范围里的 1、10、100……，再加上最大值的一位有效数字（例如 503 → 500），写成普通数字。"""
    lo, hi = float(values.min()), float(values.max())
    ticks = [10.0 ** e for e in range(int(np.floor(np.log10(lo))), int(np.floor(np.log10(hi))) + 1)
             if lo / 1.5 <= 10.0 ** e <= hi * 1.5]
    top = float(f"{hi:.0e}")
    if not ticks or top >= 3 * ticks[-1]:
        ticks.append(top)
    return ticks, [f"{t:g}" for t in ticks]


def variance_growth(dims, raw_var, scaled_var, samples: int):
    """第 4 章：点积 q·k 的方差随 d_k 增长（不缩放），除以 √d_k 后回到 1 左右；对数—对数坐标（静态图）。

    Parameters
    ----------
    dims : sequence of int, length N
        从小到大的 d_k（至少两个），例如 ``[1, 4, 16, 64, 256, 512]``。
    raw_var, scaled_var : sequence of float, length N
        每个 d_k 抽样估计出的 Var(q·k) 与 Var(q·k/√d_k)（见 ``tl.saturation.dot_product_variance``），都要 > 0。
    samples : int
        每个 d_k 抽样了多少对（写在标题里）。

    Returns
    -------
    Explorable
        没有滑块的 Explorable（静态图）。

    Raises
    ------
    TypeError, ValueError
        ``dims`` 不是至少两个、从小到大的正整数；方差不是同样长、有限的正数；``samples`` 不是正整数。
    """
    dims = increasing_ints(np.asarray(dims) if isinstance(dims, (list, tuple)) else dims, "dims", "d_k")
    arrays = {name: positive_series(np.asarray(values) if isinstance(values, (list, tuple)) else values, name, len(dims),
                                    "每个 d_k 一个方差")
              for name, values in (("raw_var", raw_var), ("scaled_var", scaled_var))}
    samples = check.positive_int(samples, "samples")
    return Explorable(
        view=_VarianceView, sliders=[], data={"dims": dims, **arrays, "samples": samples},
        title="点积的方差随 d_k 增长",
        alt=(f"对数坐标上的两条线：横轴 d_k 从 {dims[0]:g} 到 {dims[-1]:g}；不缩放的 Var(q·k) 从 "
             f"{arrays['raw_var'][0]:.1f} 涨到 {arrays['raw_var'][-1]:.1f}，差不多等于 d_k；"
             f"除以 √d_k 之后一直在 {arrays['scaled_var'].min():.2f} 到 {arrays['scaled_var'].max():.2f} 之间。"),
        size=(5.6, 3.5), narrow_size=(3.6, 3.2),
    )


# ---------------------------------------------------------------- 除以 √d_k 前后（可交互）

MAX_KEYS = 64  # 再多柱子就挤成一团
MAX_NUMBERED_BARS = 10  # 柱子再多，柱顶的数字（9 pt）就挤在一起了：只画柱子，刻度字隔几个写一个
DK_GRID = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


class _ScalingView:
    """左（窄版：上）：不缩放的 softmax(q·k)；右（窄版：下）：缩放后的 softmax(q·k/√d_k)。同一组随机向量。"""

    def __init__(self, fig, axes, layout, num_keys, seed):
        self.num_keys, self.seed, self.narrow = num_keys, seed, layout.narrow
        labels = [f"k{j + 1}" for j in range(num_keys)]
        zeros = np.zeros(num_keys)
        self.raw = weight_bars(zeros, labels, ax=axes[0], color="#b5367a", ylim=(0.0, 1.15))
        self.scaled = weight_bars(zeros, labels, ax=axes[1], color="#31688e", ylim=(0.0, 1.15))
        every = max(1, -(-num_keys // MAX_NUMBERED_BARS))  # 刻度字隔几个写一个
        for ax, bars in ((axes[0], self.raw), (axes[1], self.scaled)):
            ax.set_ylabel("注意力权重")
            ax.set_yticks([0, 0.5, 1.0])
            ax.set_xticks(range(0, num_keys, every), labels[::every])
            for text in bars.texts:
                text.set_visible(num_keys <= MAX_NUMBERED_BARS)
        self.axes, self.suptitle = axes, fig.suptitle(" ", fontsize=TITLE_PT)
        self.artists = [*self.raw.artists, *self.scaled.artists, axes[0].title, axes[1].title, self.suptitle]

    def update(self, d_k):
        demo = saturation_demo(int(d_k), self.num_keys, np.random.default_rng(self.seed))
        self.raw.set_values(demo["raw"])
        self.scaled.set_values(demo["scaled"])
        for ax, head, w, g in ((self.axes[0], "不缩放：softmax($q\\cdot k$)", demo["raw"], demo["grad_raw"]),
                               (self.axes[1], "缩放：softmax($q\\cdot k/\\sqrt{d_k}$)", demo["scaled"], demo["grad_scaled"])):
            ax.set_title(f"{head}\n最大权重 {w.max():.2f}，梯度最大 {g:.3f}", fontsize=MIN_FONT_PT + 1)
        scores = demo["scores"]
        spread = f"$d_k$ = {int(d_k)}：{self.num_keys} 个点积从 {scores.min():.1f} 到 {scores.max():.1f}"
        gap = f"最大与最小差 {np.ptp(scores):.1f}"
        self.suptitle.set_text(f"{spread}\n{gap}：分数拉得越开，softmax 越尖" if self.narrow
                               else f"{spread}，{gap}（分数拉得越开，softmax 越尖）")
        return demo


def scaling_saturation(num_keys: int = 8, seed: int = 0) -> Explorable:
    """第 4 章：拖动 d_k，比较除不除以 √d_k 时 softmax 权重有多"尖"。

    Parameters
    ----------
    num_keys : int
        键的个数（柱子的根数）。超过 10 根时柱顶不写数字、刻度字隔几个写一个（否则挤在一起）。
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
    num_keys = check.at_most(check.positive_int(num_keys, "num_keys"), "num_keys", MAX_KEYS, "每个键画一根柱子")
    seed = check.seed(seed)
    return Explorable(
        view=_ScalingView,
        data={"num_keys": num_keys, "seed": seed},
        sliders=[Slider("d_k", DK_GRID, label="d_k", default=64, continuous=True)],
        title="除以 √d_k 前后的注意力权重",
        alt=f"d_k = {{d_k}} 时，{num_keys} 个键的注意力权重：左边（手机上是上面）不缩放，右边（下面）除以 √d_k。",
        size=(6.8, 3.4), ncols=2, narrow_size=(3.6, 5.6),
    )
