"""第 6 章的可交互图：位置编码表（热力图 + 曲线 + 一个位置的向量）、时钟指针与二进制计数器、
位置编码的点积只取决于相隔几个位置。"""

from __future__ import annotations

import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.patches import Circle, Rectangle
from matplotlib.ticker import MaxNLocator

from .. import _validation as check
from ..core.positional import positional_frequencies, sinusoidal_positional_encoding
from ..lessons.positions import binary_bits, offset_dot, rope_score_matrix
from ..plot.axes import inch_axes
from ..plot.figure import CMAP
from ..plot.heatmap import column_pointer
from ..widgets.explorable import Explorable, Slider

__all__ = ["pe_table", "clock_hands", "relative_dot", "rope_scores"]

SIN_COLOR, COS_COLOR = "#31688e", "#b5367a"
T_GRID, D_GRID, POS_GRID = (16, 32, 64), (16, 32, 64), (0, 5, 10, 15)


def _pe_formula(d_model, narrow):
    """总标题：正弦位置编码的公式（``d_model`` 写进 ω_i 的指数里）。"""
    sin, cos = r"$PE[p, 2i] = \sin(p\,\omega_i)$", r"$PE[p, 2i{+}1] = \cos(p\,\omega_i)$"
    omega = rf"$\omega_i = 1/10000^{{2i/{d_model}}}$"
    if narrow:
        return f"正弦位置编码（按公式算出，不是训练的）\n{sin}，{cos}\n{omega}"
    return f"正弦位置编码（按公式算出，不是训练的）\n{sin}，{cos}，{omega}"


class _TableView:
    """PE 表热力图（行 = 位置 p，列 = 维度）、几列随位置变化的曲线、选中位置的整条向量。

    宽版：热力图在左占两行，曲线和向量在右边上下排；窄版：三张从上到下。
    """

    def __init__(self, fig, axes, layout, tables):
        self.tables, self.axes, self.narrow = tables, axes, layout.narrow
        heat, curves, vec = axes
        if layout.narrow:
            axes[0].get_subplotspec().get_gridspec().set_height_ratios((1.45, 1, 1))
        else:
            grid = fig.add_gridspec(2, 2, width_ratios=(1.05, 1))
            for ax, spec in zip(axes, (grid[:, 0], grid[0, 1], grid[1, 1])):
                ax.set_subplotspec(spec)
        self._table(fig, heat, layout.narrow)
        self._curves(curves)
        self._vector(vec)
        self.suptitle = fig.suptitle(" ", fontsize=10)
        self.artists = [self.image, self.row, *self.lines, self.cursor, self.stems, self.sin_dots, self.cos_dots,
                        *self.last_pairs.values(), heat.title, vec.title, self.suptitle]

    def _table(self, fig, heat, narrow):
        """PE 表的热力图，上方一条空白带写三支箭头的说明（最后一对的箭头随 d_model 移动）。"""
        self.image = heat.imshow(np.zeros((2, 2)), cmap=CMAP, vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
        fig.colorbar(self.image, ax=heat, shrink=0.8, ticks=(-1, -0.5, 0, 0.5, 1))
        self.row = heat.axhline(0, color="white", lw=1.5, ls="--")
        heat.set_xlim(-0.5, max(D_GRID) - 0.5)
        self.band = band = 20 if narrow else 15  # 上方留一条空白带（约 0.55 英寸）写箭头的说明
        heat.set_ylim(max(T_GRID) - 0.5, -band)
        heat.set_yticks([0, 16, 32, 48, 63])
        heat.set_xticks([0, 16, 32, 48, 63])
        # 前两支箭头不变，放在热力图下层（zorder -1），拖动时不必重画；最后一对的箭头随 d_model 移动
        column_pointer(heat, "第 0 列：sin", 0, (0, -0.65 * band), "left", -1)
        column_pointer(heat, "第 1 列：cos", 1, (5, -0.25 * band), "left", -1)
        # 最后一对的箭头随 d_model 移动：表宽时说明写在箭头左边（右对齐），表窄时写在右边；两支备好，只显示一支
        self.last_pairs = {ha: column_pointer(heat, " ", 30, (63, -0.25 * band), ha, 3) for ha in ("left", "right")}
        heat.set_ylabel("位置 p（第几个词）")
        heat.set_xlabel("维度：偶数列 2i 放 sin\n奇数列 2i+1 放 cos")

    def _curves(self, curves):
        """几列（第 0、1、2 维和中间一维）随位置变化的曲线，一条竖虚线标出选中的位置。"""
        styles = [("第 0 维 sin", SIN_COLOR, "-"), ("第 1 维 cos", COS_COLOR, "-"),
                  ("第 2 维 sin", SIN_COLOR, "--"), ("中间 sin（慢）", "#35b779", "-")]
        self.lines = [curves.plot([], [], ls, color=c, lw=1.6, label=lab)[0] for lab, c, ls in styles]
        self.cursor = curves.plot([], [], color="0.3", lw=1, ls=":")[0]  # 只画在曲线的范围里，不穿过图例
        curves.set_ylim(-1.15, 2.25)
        curves.set_yticks([-1, 0, 1])
        curves.set_xlim(0, max(T_GRID) - 1)
        curves.set_xlabel("位置 p")
        curves.set_title("几列随位置变化的曲线", fontsize=10)
        curves.legend(loc="upper center", fontsize=9, ncol=2, handlelength=1.5, columnspacing=1.0,
                      borderaxespad=0.2).set_zorder(0.5)  # 图例在曲线下层：拖动时不重画它

    def _vector(self, vec):
        """选中位置的整条编码向量：每一维一根竖线，偶数维（sin）画圆点、奇数维（cos）画方块。"""
        self.stems = LineCollection([], colors="0.6", lw=1, zorder=2)
        vec.add_collection(self.stems)
        self.sin_dots = vec.plot([], [], "o", color=SIN_COLOR, ms=3.5, label="sin：偶数维")[0]
        self.cos_dots = vec.plot([], [], "s", color=COS_COLOR, ms=3.5, label="cos：奇数维")[0]
        vec.axhline(0, color="0.7", lw=0.8)
        vec.set_ylim(-1.15, 2.0)
        vec.set_yticks([-1, 0, 1])
        vec.set_xlim(-1, max(D_GRID))
        vec.set_xlabel("维度下标")
        vec.legend(loc="upper center", fontsize=9, ncol=2, handlelength=1.0, columnspacing=1.0,
                   borderaxespad=0.2).set_zorder(0.5)

    def update(self, T, d_model, position):
        T, d_model, p = int(T), int(d_model), int(round(float(position)))
        pe = self.tables[(T, d_model)]  # (T, D)
        heat, curves, vec = self.axes
        self.image.set_data(pe)
        self.image.set_extent((-0.5, d_model - 0.5, T - 0.5, -0.5))
        ha = "right" if d_model > 32 else "left"
        for side, arrow in self.last_pairs.items():
            arrow.set_visible(side == ha)
        last = self.last_pairs[ha]
        last.xy = (d_model - 2, -0.5)
        last.set_position((63 if ha == "right" else max(d_model + 2, 30), -0.25 * self.band))  # 不挤到左边两支箭头
        last.set_text(f"最后一对 i = {d_model // 2 - 1}：\n第 {d_model - 2}、{d_model - 1} 列")
        self.row.set_ydata([p, p])
        heat.set_title(f"PE 表：{T} 个位置 × {d_model} 维", fontsize=10)
        pos = np.arange(T)
        for line, col in zip(self.lines, (0, 1, 2, 2 * (d_model // 4))):
            line.set_data(pos, pe[:, col])
        self.cursor.set_data([p, p], [-1.1, 1.1])
        dims = np.arange(d_model)
        self.stems.set_segments([[(j, 0), (j, v)] for j, v in zip(dims, pe[p])])
        self.sin_dots.set_data(dims[0::2], pe[p, 0::2])
        self.cos_dots.set_data(dims[1::2], pe[p, 1::2])
        vec.set_title(f"位置 p = {p} 的编码向量", fontsize=10)
        self.suptitle.set_text(_pe_formula(d_model, self.narrow))
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
        sliders=[Slider("T", T_GRID, label="序列长度 T", default=64),
                 Slider("d_model", D_GRID, label="维度 d_model", default=64),
                 Slider("position", POS_GRID, label="位置 p", default=5, continuous=True)],
        title="正弦位置编码表（按公式算出）",
        alt="按公式算出的正弦位置编码：{T} 个位置 × {d_model} 维的热力图，几列随位置变化的曲线，以及位置 {position} 的向量。",
        size=(6.8, 4.6), ncols=3, narrow_size=(3.6, 8.6),
    )


CLOCK_D, CLOCK_BITS, CLOCK_POSITIONS = 16, 5, tuple(range(32))


def _clock_plan(narrow: bool) -> dict:
    """指针图的排版（英寸，y 朝下）：每根指针的圆心和半径，计数器每一位格子的左上角，各段文字的位置。

    宽版：左边 2 行 × 4 根指针，右边计数器竖着排（高位在上，从上往下读就是二进制）；
    窄版：3 根一行、指针更大，计数器在下面横着排（高位在左）。第 j 位在 ``bits[j]``（低位在前）。
    """
    if narrow:
        centers = [(0.62 + 1.18 * (i % 3), 1.5 + 1.38 * (i // 3)) for i in range(CLOCK_D // 2)]
        return {"size": (3.6, 6.3), "r": 0.45, "cell": 0.5, "clocks": (0, 0, 3.6, 4.95), "counter": (0, 4.95, 3.6, 1.35),
                "centers": centers, "bits": [(0.27 + 0.64 * (CLOCK_BITS - 1 - j), 5.35) for j in range(CLOCK_BITS)],
                "title": "8 根指针（按公式算出）\n快指针像二进制的低位，慢指针像高位", "subtitle": (1.8, 0.62),
                "counter_title": (1.8, 5.02, "center"), "key": (0.62 + 1.18 * 2, 1.5 + 1.38 * 2)}
    centers = [(0.6 + 1.05 * (i % 4), 1.42 + 1.42 * (i // 4)) for i in range(CLOCK_D // 2)]
    return {"size": (6.8, 3.65), "r": 0.4, "cell": 0.42, "clocks": (0, 0, 4.35, 3.65), "counter": (4.35, 0, 2.45, 3.65),
            "centers": centers, "bits": [(4.55, 0.85 + 0.5 * (CLOCK_BITS - 1 - j)) for j in range(CLOCK_BITS)],
            "title": "8 根指针（按公式算出）：快指针像二进制的低位，慢指针像高位", "subtitle": (2.15, 0.42),
            "counter_title": (4.55, 0.42, "left"), "key": None}


class _ClockView:
    """d_model = 16 的 8 根指针（指针尖 = (sin, cos) = (PE[p, 2i], PE[p, 2i+1])，12 点钟 = 位置 0）和 5 位二进制计数器。

    排版见 ``_clock_plan``；两块都用英寸作坐标（``plot.axes.inch_axes``）。
    """

    def __init__(self, fig, axes, layout, omega, bits):
        self.omega, self.bits, self.narrow = omega, bits, layout.narrow
        plan = self.plan = _clock_plan(layout.narrow)
        fig.set_layout_engine("none")  # 自己排版
        clocks, counter = axes
        inch_axes(clocks, plan["size"], plan["clocks"])
        inch_axes(counter, plan["size"], plan["counter"])
        fig.text(0.5, 1 - 0.06 / plan["size"][1], plan["title"], ha="center", va="top", fontsize=10.5)
        self._clocks(clocks, plan, layout.narrow)
        self._counter(counter, plan, layout.narrow)
        self.artists = [*self.hands, *self.tips, *self.turns, *self.cells, *self.digits, self.counter_title]

    def _clocks(self, clocks, plan, narrow):
        """8 个钟面（圆、12 点钟的刻度、第几根）画在指针下层，拖动时不必重画；指针、指针尖、转了几圈随位置变。"""
        r = plan["r"]
        clocks.text(*plan["subtitle"], "第 i 根指针 = 第 2i、2i+1 维" + ("" if narrow else "；指针尖 = (sin, cos)"),
                    ha="center", va="top", fontsize=9.5, color="0.25", zorder=-1)
        self.hands, self.tips, self.turns = [], [], []
        for i, (cx, cy) in enumerate(plan["centers"]):
            clocks.add_patch(Circle((cx, cy), r, fill=False, color="0.6", lw=1.2, zorder=-1))
            clocks.plot([cx, cx], [cy - r, cy - 0.85 * r], color="0.4", lw=1.5, zorder=-1)  # 12 点钟 = 位置 0
            clocks.text(cx, cy - r - 0.06, f"i = {i}", ha="center", va="bottom", fontsize=10, zorder=-1)
            self.hands.append(clocks.plot([cx, cx], [cy, cy - r], color=SIN_COLOR, lw=3.2 if narrow else 2.6,
                                          solid_capstyle="round")[0])
            self.tips.append(clocks.plot([cx], [cy - r], "o", color=COS_COLOR, ms=5)[0])
            self.turns.append(clocks.text(cx, cy + r + 0.06, "", ha="center", va="top", fontsize=9))
        if plan["key"]:  # 窄版第 9 格空着：写怎么读指针
            clocks.text(*plan["key"], "指针尖：\n横坐标 = sin\n纵坐标 = cos\n顶上刻度 = 位置 0", ha="center", va="center",
                        fontsize=9, color="0.25", linespacing=1.4, zorder=-1)

    def _counter(self, counter, plan, narrow):
        """5 位二进制计数器：每一位一个格子（颜色和数字随位置变），旁边写第几位、几步一翻。"""
        self.cells, self.digits, size = [], [], plan["cell"]
        for j, (x, y) in enumerate(plan["bits"]):
            self.cells.append(counter.add_patch(Rectangle((x, y), size, size, color="0.85")))
            self.digits.append(counter.text(x + size / 2, y + size / 2, "0", ha="center", va="center", fontsize=14))
            if narrow:  # 格子下面写第几位、几步一翻；宽版写在格子右边
                counter.text(x + size / 2, y + size + 0.05, f"第 {j} 位\n{2 ** j} 步一翻", ha="center", va="top",
                             fontsize=9, zorder=-1)
            else:
                counter.text(x + size + 0.1, y + size / 2, f"第 {j} 位：每 {2 ** j} 步翻一次", va="center", fontsize=9,
                             zorder=-1)
        if not narrow:
            x, y = plan["bits"][0]
            counter.text(x, y + size + 0.1, "从上往下读，就是 p 的二进制", va="top", fontsize=9, color="0.25", zorder=-1)
        x, y, ha = plan["counter_title"]
        self.counter_title = counter.text(x, y, " ", ha=ha, va="top", fontsize=10)

    def update(self, position):
        p = int(round(float(position)))
        angles = p * self.omega  # (8,)
        tips = np.stack([np.sin(angles), np.cos(angles)], axis=1)  # (8, 2) = PE[p] 按对排好
        r = 0.9 * self.plan["r"]
        for hand, dot, turn, (cx, cy), tip, a in zip(self.hands, self.tips, self.turns, self.plan["centers"], tips,
                                                     angles):
            x, y = cx + r * tip[0], cy - r * tip[1]  # y 朝下：cos 为正时指针朝上
            hand.set_data([cx, x], [cy, y])
            dot.set_data([x], [y])
            turn.set_text(f"已转 {a / (2 * np.pi):.2f} 圈")
        bits = self.bits[p]  # (5,) 低位在前
        for cell, digit, b in zip(self.cells, self.digits, bits):
            cell.set_color("#fde725" if b else "0.85")
            digit.set_text(str(b))
        binary = "".join(str(b) for b in bits[::-1])
        self.counter_title.set_text(f"位置 p = {p} → 二进制 {binary}")
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
        alt="位置 {position}：d_model = 16 时 8 对 (sin, cos) 画成 8 根指针（按公式算出），旁边是 5 位二进制计数器。",
        size=_clock_plan(False)["size"], ncols=2, narrow_size=_clock_plan(True)["size"],
    )


DOT_D_GRID, BASE_GRID, DOT_T = (8, 16, 32, 64, 128), (10.0, 100.0, 1000.0, 10000.0), 48


class _RelativeDotView:
    """余弦相似度 PE(p)·PE(p′) / (D/2) 的热力图（对角线上颜色相同）和它随相隔 Δ 的变化（宽版左右排，窄版上下排）。

    第二个位置写 p′，不写 q：q 在书里是查询。
    """

    def __init__(self, fig, axes, layout, tables, curves):
        self.tables, self.curves, self.narrow = tables, curves, layout.narrow
        heat, line = axes
        self.image = heat.imshow(np.zeros((DOT_T, DOT_T)), cmap=CMAP, vmin=-1, vmax=1, interpolation="nearest")
        fig.colorbar(self.image, ax=heat, shrink=0.8)
        heat.set_xlabel("位置 $p'$")
        heat.set_ylabel("位置 $p$")
        heat.set_title(r"$PE(p)\cdot PE(p')\,/\,(d_{model}/2)$" + ("" if layout.narrow else r"：只看 $p - p'$"), fontsize=10)
        k = np.arange(DOT_T)
        self.k = k
        self.curve = line.plot(k, np.zeros(DOT_T), "o-", color=SIN_COLOR, ms=3, lw=1.5)[0]
        line.axhline(0, color="0.7", lw=0.8)
        line.set_xlim(0, DOT_T - 1)
        line.set_ylim(-1.05, 1.05)
        line.set_xlabel(r"相隔 $\Delta = |p - p'|$ 个位置")
        line.set_ylabel("余弦相似度")
        line.grid(alpha=0.3)
        self.line_title = line.set_title(" ", fontsize=10)
        self.suptitle = fig.suptitle(" ", fontsize=10.5)
        self.artists = [self.image, self.curve, self.line_title, self.suptitle]

    def update(self, d_model, base):
        d_model, base = int(d_model), float(base)
        pe = self.tables[(d_model, base)]  # (T, D)
        sim = pe @ pe.T / (d_model // 2)  # (T, T)
        curve = self.curves[(d_model, base)]  # (T,)
        self.image.set_data(sim)
        self.curve.set_ydata(curve)
        self.line_title.set_text(f"相隔 1 个位置：{curve[1]:.2f}；相隔 10 个：{curve[10]:.2f}")
        self.suptitle.set_text(f"d_model = {d_model}，base = {base:g}" + ("\n" if self.narrow else "：")
                               + "相似度只取决于相隔多远（按公式算出）")
        return {"similarity": sim, "curve": curve}


def relative_dot() -> Explorable:
    """第 6 章：拖动 d_model 和 base，看 PE(p)·PE(p′) 只取决于 p - p′，以及它怎样随相隔变远而变小。

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
        size=(6.8, 3.3), ncols=2, narrow_size=(3.6, 6.6),
    )


ROPE_T, ROPE_D, START_GRID, GAP_GRID = 32, 8, (0, 4, 8, 12, 16, 20, 24), (-4, -2, 0, 2, 4)


class _RopeView:
    """左：RoPE 分数表 S[m, n]（同一对随机 q, k 放到每个位置），圈出 (m, n)；右：分数随 m - n 的变化。"""

    def __init__(self, fig, axes, layout, scores, plain):
        self.scores, self.plain, self.narrow = scores, plain, layout.narrow
        heat, line = axes
        image = heat.imshow(scores, cmap=CMAP, interpolation="nearest", zorder=0)  # 颜色范围 = 分数的最小到最大
        fig.colorbar(image, ax=heat, shrink=0.8)
        heat.set_xlabel("键的位置 p′")
        heat.set_ylabel("查询的位置 p")
        heat.set_title(r"$\mathrm{rope}(q)_p\cdot\mathrm{rope}(k)_{p'}$：每条对角线都相同", fontsize=10)
        self.mark = heat.plot([], [], "s", ms=9, mfc="none", mec="white", mew=2)[0]
        offsets = np.arange(-ROPE_T + 1, ROPE_T)  # m - n
        line.plot(offsets, [scores[max(o, 0), max(-o, 0)] for o in offsets], "-", color=SIN_COLOR, lw=1.5)
        line.axhline(plain, color="0.5", lw=1, ls="--", label=f"不转时 q·k = {plain:.2f}".replace("-", "−"))
        self.dot = line.plot([], [], "o", color=COS_COLOR, ms=9)[0]
        line.set_xlabel("相差 p − p′")
        line.set_ylabel("分数")
        line.grid(alpha=0.3)
        if layout.narrow:
            line.yaxis.set_major_locator(MaxNLocator(4))  # 手机上少几个刻度
        line.legend(loc="upper left", fontsize=9).set_zorder(0.5)  # 左上角空着；圆点只在 m − n ∈ [−4, 4] 里走
        self.line_title = line.set_title(" ", fontsize=10)
        self.suptitle = fig.suptitle(" ", fontsize=10.5)
        self.artists = [self.mark, self.dot, self.line_title, self.suptitle]

    def update(self, start, gap):
        start, gap = int(start), int(gap)
        m, n = (start + gap, start) if gap >= 0 else (start, start - gap)  # 靠前的那个词在位置 start
        score = float(self.scores[m, n])
        self.mark.set_data([n], [m])
        self.dot.set_data([m - n], [score])
        self.line_title.set_text(f"p − p′ = {m - n}：分数 {score:.3f}".replace("-", "−"))
        if self.narrow:
            self.suptitle.set_text(f"RoPE：查询在 p = {m}，键在 p′ = {n}\n两个词一起往后挪，分数不变")
        else:
            self.suptitle.set_text(f"RoPE（随机的 q, k，d_k = {ROPE_D}）：查询在 p = {m}，键在 p′ = {n}——两个词一起往后挪，分数不变")
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
    seed = check.seed(seed)
    q, k = np.random.default_rng(seed).normal(size=(2, ROPE_D))  # (d,) 随机向量，不是训练出来的
    return Explorable(
        view=_RopeView,
        data={"scores": rope_score_matrix(q, k, ROPE_T), "plain": float(q @ k)},
        sliders=[Slider("start", START_GRID, label="靠前那个词的位置", default=0, continuous=True),
                 Slider("gap", GAP_GRID, label="相差 p − p′", default=2, continuous=True)],
        title="RoPE 的分数只看相差几个位置",
        alt="随机的查询和键经过 RoPE 后的分数表（32 × 32）：靠前的词在位置 {start}，查询与键相差 p − p′ = {gap}；另一张是分数随相差的变化。",
        size=(6.8, 3.3), ncols=2, narrow_size=(3.6, 6.6),
    )
