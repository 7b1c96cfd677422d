"""第 6 章的可交互图：位置编码表（热力图 + 曲线 + 一个位置的向量）、时钟指针与二进制计数器、
位置编码的点积只取决于相隔几个位置。"""

from __future__ import annotations

import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.patches import Circle, Rectangle

from ..core.positional import positional_frequencies, sinusoidal_positional_encoding
from ..lessons.positions import binary_bits, offset_dot, rope_score_matrix
from .. import _validation as check
from ..plot.figure import CMAP
from ..widgets.explorable import Explorable, Slider

__all__ = ["pe_table", "clock_hands", "relative_dot", "rope_scores"]

SIN_COLOR, COS_COLOR = "#31688e", "#b5367a"
T_GRID, D_GRID, POS_GRID = (16, 32, 64), (16, 32, 64), (0, 5, 10, 15)


def _pointer(ax, text, col, xytext, zorder, relpos=(0.0, 0.0)):
    """一支从文字指向第 ``col`` 列顶端的箭头（表的上方留了一条空白带放这些文字，与热力图不重叠）。"""
    return ax.annotate(text, xy=(col, -0.5), xytext=xytext, fontsize=7.5, ha="center", va="center", zorder=zorder,
                       arrowprops=dict(arrowstyle="->", color="0.2", lw=1, shrinkA=0, shrinkB=0, patchA=None,
                                       relpos=relpos))


class _TableView:
    """左：PE 表热力图（行 = 位置 p，列 = 维度）；中：几列随位置变化的曲线；右：选中位置的整条向量。"""

    def __init__(self, fig, axes, layout, tables):
        self.tables, self.axes = tables, axes
        heat, curves, vec = axes
        self.image = heat.imshow(np.zeros((2, 2)), cmap=CMAP, vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
        fig.colorbar(self.image, ax=heat, shrink=0.8)
        self.row = heat.axhline(0, color="white", lw=1.5, ls="--")
        heat.set_xlim(-0.5, max(D_GRID) - 0.5)
        heat.set_ylim(max(T_GRID) - 0.5, -14)  # 上方留一条空白带写箭头的说明
        heat.set_yticks([0, 16, 32, 48, 63])
        # 前两支箭头不变，放在热力图下层（zorder -1），拖动时不必重画；最后一对的箭头随 d_model 移动
        _pointer(heat, "2i = 0：sin\n(i = 0)", 0, (6, -10), -1)
        _pointer(heat, "2i+1 = 1：cos", 1, (14, -4), -1)
        self.last_pair = _pointer(heat, " ", 30, (44, -10), 3, relpos=(0.5, 0.0))
        heat.set_ylabel("位置 p（第几个词）")
        heat.set_xlabel("维度下标：偶数列 2i 放 sin，奇数列 2i+1 放 cos")
        styles = [("第 0 维：i=0 的 sin（最快）", SIN_COLOR, "-"), ("第 1 维：i=0 的 cos", COS_COLOR, "-"),
                  ("第 2 维：i=1 的 sin", SIN_COLOR, "--"), ("中间一对的 sin（慢）", "#35b779", "-")]
        self.lines = [curves.plot([], [], ls, color=c, lw=1.6, label=lab)[0] for lab, c, ls in styles]
        self.cursor = curves.axvline(0, color="0.3", lw=1, ls=":")
        curves.set_ylim(-1.15, 1.6)
        curves.set_xlim(0, max(T_GRID) - 1)
        curves.set_xlabel("位置 p")
        curves.legend(loc="upper right", fontsize=7, ncol=2).set_zorder(0.5)  # 图例在曲线下层：拖动时不重画它
        self.stems = LineCollection([], colors="0.6", lw=1, zorder=2)
        vec.add_collection(self.stems)
        self.sin_dots = vec.plot([], [], "o", color=SIN_COLOR, ms=3.5, label="sin（偶数维 2i）")[0]
        self.cos_dots = vec.plot([], [], "s", color=COS_COLOR, ms=3.5, label="cos（奇数维 2i+1）")[0]
        vec.axhline(0, color="0.7", lw=0.8)
        vec.set_ylim(-1.15, 1.6)
        vec.set_xlim(-1, max(D_GRID))
        vec.set_xlabel("维度下标")
        vec.legend(loc="upper right", fontsize=7).set_zorder(0.5)
        self.suptitle = fig.suptitle(" ")
        self.artists = [self.image, self.row, *self.lines, self.cursor, self.stems, self.sin_dots, self.cos_dots,
                        self.last_pair, *(ax.title for ax in axes), self.suptitle]

    def update(self, T, d_model, position):
        T, d_model, p = int(T), int(d_model), int(round(float(position)))
        pe = self.tables[(T, d_model)]  # (T, D)
        heat, curves, vec = self.axes
        self.image.set_data(pe)
        self.image.set_extent((-0.5, d_model - 0.5, T - 0.5, -0.5))
        last = self.last_pair
        last.xy = (d_model - 2, -0.5)
        last.set_position((min(max(d_model + 10, 34), 52), -9))
        last.set_text(f"最后一对 i = {d_model // 2 - 1}：\n第 {d_model - 2}、{d_model - 1} 列")
        self.row.set_ydata([p, p])
        heat.set_title(f"PE 表：{T} 个位置 × {d_model} 维", fontsize=10)
        pos = np.arange(T)
        for line, col in zip(self.lines, (0, 1, 2, 2 * (d_model // 4))):
            line.set_data(pos, pe[:, col])
        self.cursor.set_xdata([p, p])
        curves.set_title("每一维随位置变化的曲线", fontsize=10)
        dims = np.arange(d_model)
        self.stems.set_segments([[(j, 0), (j, v)] for j, v in zip(dims, pe[p])])
        self.sin_dots.set_data(dims[0::2], pe[p, 0::2])
        self.cos_dots.set_data(dims[1::2], pe[p, 1::2])
        vec.set_title(f"位置 p = {p} 的编码向量", fontsize=10)
        self.suptitle.set_text(f"正弦位置编码（按公式算出，不是训练的）：PE[p, 2i] = sin(p·ω_i)，PE[p, 2i+1] = cos(p·ω_i)，"
                               f"ω_i = 1/10000^(2i/{d_model})")
        return {"pe": pe, "vector": pe[p].copy(), "curves": np.stack([pe[:, c] for c in (0, 1, 2, 2 * (d_model // 4))])}


def pe_table(base: float = 10000.0) -> Explorable:
    """第 6 章：拖动序列长度 T、维度 d_model 和一个位置 p，看整张位置编码表、几条曲线和位置 p 的向量。

    Parameters
    ----------
    base : float
        波长的底数（论文用 10000），必须大于 1。

    Returns
    -------
    Explorable
    """
    positional_frequencies(2, base)  # 检查 base
    tables = {(T, d): sinusoidal_positional_encoding(T, d, base) for T in T_GRID for d in D_GRID}
    return Explorable(
        view=_TableView,
        data={"tables": tables},
        sliders=[Slider("T", T_GRID, label="序列长度 T", default=32),
                 Slider("d_model", D_GRID, label="维度 d_model", default=32),
                 Slider("position", POS_GRID, label="位置 p", default=5, continuous=True)],
        title="正弦位置编码表（按公式算出）",
        alt="按公式算出的正弦位置编码：{T} 个位置 × {d_model} 维的热力图，几列随位置变化的曲线，以及位置 {position} 的向量。",
        size=(13.0, 4.2),
        ncols=3,
    )


CLOCK_D, CLOCK_BITS, CLOCK_POSITIONS = 16, 5, tuple(range(32))


def _blank(ax) -> None:
    """不要坐标轴的子图。不用 ``ax.axis("off")``：局部重画时引擎会把仍标为可见的边框重画出来。"""
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_visible(False)


class _ClockView:
    """左：d_model = 16 的 8 根指针，指针尖的坐标 = (sin, cos) = (PE[p, 2i], PE[p, 2i+1])；右：5 位二进制计数器。"""

    def __init__(self, fig, axes, layout, omega, bits):
        self.omega, self.bits = omega, bits
        clocks, counter = axes
        self.centers = [(2.4 * (i % 4), -3.3 * (i // 4)) for i in range(len(omega))]
        self.hands, self.turns = [], []
        for i, (cx, cy) in enumerate(self.centers):
            clocks.add_patch(Circle((cx, cy), 1.0, fill=False, color="0.6", lw=1))
            clocks.plot([cx], [cy + 1.0], "|", color="0.4", ms=6, zorder=1.5)  # 12 点钟 = 位置 0
            # 不变的文字放在指针下层（与指针不重叠），拖动时不必重画
            clocks.text(cx, cy + 1.25, f"i={i}（第 {2 * i}、{2 * i + 1} 维）", ha="center", fontsize=7.5, zorder=1.5)
            self.hands.append(clocks.plot([cx, cx], [cy, cy + 0.9], color=SIN_COLOR, lw=2.5)[0])
            self.turns.append(clocks.text(cx, cy - 1.12, "", ha="center", va="top", fontsize=7.5))
        clocks.set_xlim(-1.3, 8.5)
        clocks.set_ylim(-5.0, 1.6)
        clocks.set_aspect("equal")
        _blank(clocks)
        clocks.set_title("8 根指针：指针尖 = (sin, cos)，各转各的速度", fontsize=10)
        self.cells, self.digits = [], []
        for j in range(bits.shape[1]):
            self.cells.append(counter.add_patch(Rectangle((j, 0), 0.9, 0.9, color="0.85")))
            self.digits.append(counter.text(j + 0.45, 0.45, "0", ha="center", va="center", fontsize=14))
            counter.text(j + 0.45, -0.2, f"第 {j} 位\n每 {2 ** j} 格翻转", ha="center", va="top", fontsize=7.5, zorder=0.5)
        counter.set_xlim(-0.2, bits.shape[1])
        counter.set_ylim(-2.0, 2.4)
        _blank(counter)
        self.counter_title = counter.set_title(" ", fontsize=10)
        fig.suptitle("8 根指针（按公式算出）：快指针（左上）像二进制的低位，慢指针（右下）像高位")  # 不随滑块变
        self.artists = [*self.hands, *self.turns, *self.cells, *self.digits, self.counter_title]

    def update(self, position):
        p = int(round(float(position)))
        angles = p * self.omega  # (8,)
        tips = np.stack([np.sin(angles), np.cos(angles)], axis=1)  # (8, 2) = PE[p] 按对排好
        for hand, turn, (cx, cy), tip, a in zip(self.hands, self.turns, self.centers, tips, angles):
            hand.set_data([cx, cx + 0.9 * tip[0]], [cy, cy + 0.9 * tip[1]])
            turn.set_text(f"已转 {a / (2 * np.pi):.2f} 圈")
        bits = self.bits[p]  # (5,) 低位在前
        for cell, digit, b in zip(self.cells, self.digits, bits):
            cell.set_color("#fde725" if b else "0.85")
            digit.set_text(str(b))
        binary = "".join(str(b) for b in bits[::-1])
        self.counter_title.set_text(f"位置 p = {p}，二进制 {binary}（书写时高位在前；图中低位在左）")
        return {"tips": tips, "turns": angles / (2 * np.pi), "bits": bits.copy()}


def clock_hands() -> Explorable:
    """第 6 章：拖动位置 p，看 d_model = 16 的 8 对 (sin, cos) 像 8 根转速不同的指针，和二进制计数器对照。

    Returns
    -------
    Explorable
    """
    return Explorable(
        view=_ClockView,
        data={"omega": positional_frequencies(CLOCK_D), "bits": binary_bits(len(CLOCK_POSITIONS), CLOCK_BITS)},
        sliders=[Slider("position", CLOCK_POSITIONS, label="位置 p", default=5, continuous=True)],
        title="位置编码的 8 根指针与二进制计数器",
        alt="位置 {position}：d_model = 16 时 8 对 (sin, cos) 画成 8 根指针（按公式算出），右边是 5 位二进制计数器。",
        size=(10.5, 4.0),
        ncols=2,
    )


DOT_D_GRID, BASE_GRID, DOT_T = (8, 16, 32, 64, 128), (10.0, 100.0, 1000.0, 10000.0), 48


class _RelativeDotView:
    """左：cos 相似度 PE(p)·PE(q) / (D/2) 的热力图（对角线上颜色相同）；右：它随相隔 k 的变化。"""

    def __init__(self, fig, axes, layout, tables, curves):
        self.tables, self.curves = tables, curves
        heat, line = axes
        self.image = heat.imshow(np.zeros((DOT_T, DOT_T)), cmap=CMAP, vmin=-1, vmax=1, interpolation="nearest")
        fig.colorbar(self.image, ax=heat, shrink=0.8)
        heat.set_xlabel("位置 q")
        heat.set_ylabel("位置 p")
        heat.set_title("PE(p)·PE(q) / (d_model/2)：只看 p - q", fontsize=10)
        k = np.arange(DOT_T)
        self.k = k
        self.curve = line.plot(k, np.zeros(DOT_T), "o-", color=SIN_COLOR, ms=3, lw=1.5)[0]
        line.axhline(0, color="0.7", lw=0.8)
        line.set_xlim(0, DOT_T - 1)
        line.set_ylim(-1.05, 1.05)
        line.set_xlabel("相隔 k = |p - q| 个位置")
        line.set_ylabel("余弦相似度")
        line.grid(alpha=0.3)
        self.line_title = line.set_title(" ", fontsize=10)
        self.suptitle = fig.suptitle(" ")
        self.artists = [self.image, self.curve, self.line_title, self.suptitle]

    def update(self, d_model, base):
        d_model, base = int(d_model), float(base)
        pe = self.tables[(d_model, base)]  # (T, D)
        sim = pe @ pe.T / (d_model // 2)  # (T, T)
        curve = self.curves[(d_model, base)]  # (T,)
        self.image.set_data(sim)
        self.curve.set_ydata(curve)
        self.line_title.set_text(f"相隔 1 个位置：{curve[1]:.2f}；相隔 10 个：{curve[10]:.2f}")
        self.suptitle.set_text(f"d_model = {d_model}，base = {base:g}：位置编码的相似度只取决于相隔多远（按公式算出）")
        return {"similarity": sim, "curve": curve}


def relative_dot() -> Explorable:
    """第 6 章：拖动 d_model 和 base，看 PE(p)·PE(q) 只取决于 p - q，以及它怎样随相隔变远而变小。

    Returns
    -------
    Explorable
    """
    combos = [(d, b) for d in DOT_D_GRID for b in BASE_GRID]
    return Explorable(
        view=_RelativeDotView,
        data={"tables": {c: sinusoidal_positional_encoding(DOT_T, *c) for c in combos},
              "curves": {c: offset_dot(np.arange(DOT_T), *c) / (c[0] // 2) for c in combos}},
        sliders=[Slider("d_model", DOT_D_GRID, label="维度 d_model", default=64),
                 Slider("base", BASE_GRID, label="底数 base", default=10000.0)],
        title="位置编码的点积只看相隔多远",
        alt="d_model = {d_model}、base = {base} 时，48 个位置两两之间位置编码的余弦相似度热力图（按公式算出），以及它随相隔距离的变化。",
        size=(10.0, 4.2),
        ncols=2,
    )


ROPE_T, ROPE_D, START_GRID, GAP_GRID = 32, 8, (0, 4, 8, 12, 16, 20, 24), (-4, -2, 0, 2, 4)


class _RopeView:
    """左：RoPE 分数表 S[m, n]（同一对随机 q, k 放到每个位置），圈出 (m, n)；右：分数随 m - n 的变化。"""

    def __init__(self, fig, axes, layout, scores, plain):
        self.scores, self.plain = scores, plain
        heat, line = axes
        image = heat.imshow(scores, cmap=CMAP, interpolation="nearest", zorder=0)  # 颜色范围 = 分数的最小到最大
        fig.colorbar(image, ax=heat, shrink=0.8)
        heat.set_xlabel("键的位置 n")
        heat.set_ylabel("查询的位置 m")
        heat.set_title("rope(q)_m · rope(k)_n：每条对角线上都相同", fontsize=10)
        self.mark = heat.plot([], [], "s", ms=9, mfc="none", mec="white", mew=2)[0]
        offsets = np.arange(-ROPE_T + 1, ROPE_T)  # m - n
        line.plot(offsets, [scores[max(o, 0), max(-o, 0)] for o in offsets], "-", color=SIN_COLOR, lw=1.5)
        line.axhline(plain, color="0.5", lw=1, ls="--", label=f"不转时 q·k = {plain:.2f}")
        self.dot = line.plot([], [], "o", color=COS_COLOR, ms=9)[0]
        line.set_xlabel("相差 m - n")
        line.set_ylabel("分数")
        line.grid(alpha=0.3)
        line.legend(loc="lower right", fontsize=8).set_zorder(0.5)
        self.line_title = line.set_title(" ", fontsize=10)
        self.suptitle = fig.suptitle(" ")
        self.artists = [self.mark, self.dot, self.line_title, self.suptitle]

    def update(self, start, gap):
        start, gap = int(start), int(gap)
        m, n = (start + gap, start) if gap >= 0 else (start, start - gap)  # 靠前的那个词在位置 start
        score = float(self.scores[m, n])
        self.mark.set_data([n], [m])
        self.dot.set_data([m - n], [score])
        self.line_title.set_text(f"m - n = {m - n}：分数 {score:.3f}")
        self.suptitle.set_text(f"RoPE（随机的 q, k，d = {ROPE_D}）：查询在位置 m = {m}，键在位置 n = {n}——"
                               "两个词一起往后挪，分数不变")
        return {"scores": self.scores, "score": np.array([score]), "m": np.array([m]), "n": np.array([n])}


def rope_scores(seed: int = 0) -> Explorable:
    """第 6 章：拖动"起点"把查询和键一起往后挪，拖动"相差"改变它们的距离，看 RoPE 的分数只取决于 m - n。

    Parameters
    ----------
    seed : int
        随机 q, k 的种子（同一个种子，网页和 JupyterLab 里是同一对向量）。

    Returns
    -------
    Explorable
    """
    seed = check.nonnegative_int(seed, "seed")
    q, k = np.random.default_rng(seed).normal(size=(2, ROPE_D))  # (d,) 随机向量，不是训练出来的
    return Explorable(
        view=_RopeView,
        data={"scores": rope_score_matrix(q, k, ROPE_T), "plain": float(q @ k)},
        sliders=[Slider("start", START_GRID, label="靠前那个词的位置", default=0, continuous=True),
                 Slider("gap", GAP_GRID, label="相差 m - n", default=2, continuous=True)],
        title="RoPE 的分数只看相差几个位置",
        alt="随机的查询和键经过 RoPE 后的分数表（32 × 32）：靠前的词在位置 {start}，查询与键相差 m - n = {gap}；右边是分数随相差的变化。",
        size=(10.0, 4.2),
        ncols=2,
    )
