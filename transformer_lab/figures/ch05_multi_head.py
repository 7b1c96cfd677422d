"""第 5 章的可交互图：多头注意力的形状追踪器，头在训练中分工，以及"一模一样的头永远一样"。"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .. import _validation as check
from ..lessons import runs as experiments
from ..lessons.head_shapes import shape_trace
from ..lessons.optim import as_run
from ..plot.axes import blank
from ..plot.figure import CMAP
from ..plot.heatmap import attention_heatmap
from ..widgets.explorable import Explorable, Slider

__all__ = ["head_shape_tracer", "head_specialisation", "head_symmetry"]

D_GRID, H_GRID = (8, 16, 24, 32), (1, 2, 4, 8)  # 每个 H 都整除每个 D：滑块上只有合法的组合
TRACE_TOKENS = ("猫", "追", "小", "狗")
MAX_HEADS = max(H_GRID)
HEAD_COLORS = ("#31688e", "#b5367a")


# ---------------------------------------------------------------- 形状追踪器

# 两种版式的排版（单位：英寸，y 轴朝下）。每一行：(上沿 y, 行高, 这一行的 [(数组, 槽宽), ...], 行首的说明)，
# 一行的槽整体居中。数组画在自己的槽里，水平居中、顶端对齐；所有数组共用一个格子边长（见 ``_tracer_cell``）。
# title / mix / note：标题、"W_O 混了几个头"那句、读图说明的位置 (x, y, 水平对齐)。
TRACER_PLANS = {
    False: {"size": (6.8, 3.15), "rows": [
        (1.0, 1.25, [("X", 0.58), ("Q", 0.6), ("K", 0.6), ("V", 0.6), ("weights", 0.78), ("heads", 0.78),
                     ("concat", 0.6), ("W_O", 1.5), ("out", 0.58)], None)],
        "groups": [("乘 $W_Q, W_K, W_V$", ("Q", "V")), ("每个头各算一遍", ("weights", "heads")),
                   ("拼接后乘 $W_O$", ("concat", "out"))],
        "title": (3.4, 0.08, "center"), "mix": (3.4, 0.33, "center"), "note": (0.1, 2.82, "left"),
        "note_text": "每个数组都竖着画：往下是 D 个维度，往右是 4 个词。白线 = 切头的位置。"},
    True: {"size": (3.6, 6.75), "rows": [
        (0.98, 1.15, [("X", 0.85), ("Q", 0.85), ("K", 0.85), ("V", 0.85)], "① 乘 $W_Q, W_K, W_V$"),
        (2.8, 1.15, [("weights", 1.7), ("heads", 1.7)], "② 每个头各算一遍注意力"),
        (4.62, 1.15, [("concat", 0.78), ("W_O", 1.96), ("out", 0.78)], "③ 拼接起来，再乘 $W_O$")],
        "groups": [],
        "title": (1.8, 0.06, "center"), "mix": (0.08, 6.24, "left"), "note": (1.8, 0.33, "center"),
        "note_text": "数组都竖着画：往下 D 维，往右 4 个词\n白线 = 切头的位置"},
}


def _tracer_slots(narrow: bool) -> dict[str, tuple[float, float, float, float]]:
    """每个数组的槽：名字 → (左, 上, 宽, 高)，单位英寸（y 朝下）。"""
    plan, slots = TRACER_PLANS[narrow], {}
    for top, height, row, _ in plan["rows"]:
        x = (plan["size"][0] - sum(w for _, w in row)) / 2
        for name, width in row:
            slots[name] = (x, top, width, height)
            x += width
    return slots


def _tracer_cell(narrow: bool, D: int, T: int) -> float:
    """格子边长（英寸）：高 D 的数组不超过行高，每个数组不超过槽宽的 85%。"""
    slots = _tracer_slots(narrow)
    return min(min(h / D, 0.85 * w / (D if name == "W_O" else T)) for name, (_, _, w, h) in slots.items())


class _ShapeTracerView:
    """一句话（4 个词）走过多头注意力：每个数组一张缩略图，下面写着它的形状。数组都画成"转置"的：D 方向朝下。

    宽版一行排开；窄版分三行（投影、各头的注意力、拼接乘 W_O）。排版用英寸作坐标，字号不随 D 变。
    """

    def __init__(self, fig, axes, layout, traces):
        self.traces, self.narrow = traces, layout.narrow  # (D, H) -> shape_trace 的结果，工厂里一次算好
        plan, (W, Hfig) = TRACER_PLANS[layout.narrow], layout.size
        fig.set_layout_engine("none")  # 自己排版：整张图就是一个以英寸为单位的子图
        ax = self.ax = axes[0]
        ax.set_position((0, 0, 1, 1))
        ax.set_xlim(0, W), ax.set_ylim(Hfig, 0)
        ax.set_autoscale_on(False)
        blank(ax)
        self.slots = _tracer_slots(layout.narrow)
        names = ["X", "Q", "K", "V", "concat", "W_O", "out"]
        self.images = {n: ax.imshow(np.zeros((2, 2)), cmap=CMAP, interpolation="nearest") for n in names}
        self.weights = [ax.imshow(np.zeros((2, 2)), cmap=CMAP, vmin=0, vmax=1, interpolation="nearest")
                        for _ in range(MAX_HEADS)]
        self.heads = [ax.imshow(np.zeros((2, 2)), cmap=CMAP, interpolation="nearest") for _ in range(MAX_HEADS)]
        self.cuts = {n: ax.plot([], [], color="white", lw=1.5)[0] for n in ("Q", "K", "V", "heads", "concat")}
        self.labels = {n: ax.text(0, 0, "", ha="center", va="top", fontsize=9, linespacing=1.15)
                       for n in [*names, "weights", "heads"]}
        self.ops = [ax.text(0, 0, op, ha="center", va="center", fontsize=12) for op in "×="]
        self._backdrop(ax, plan)
        x, y, ha = plan["title"]
        self.title = ax.text(x, y, " ", ha=ha, va="top", fontsize=10)
        x, y, ha = plan["mix"]
        self.mix = ax.text(x, y, " ", ha=ha, va="top", fontsize=9.5 if layout.narrow else 10)
        self.artists = [*self.images.values(), *self.weights, *self.heads, *self.cuts.values(),
                        *self.labels.values(), *self.ops, self.title, self.mix]

    def _backdrop(self, ax, plan):
        """不随滑块变的字和线，画在下层：行首的说明、宽版上方的分组线、图下的读法说明。"""
        for top, _, row, header in plan["rows"]:
            if header:
                ax.text(self.slots[row[0][0]][0], top - 0.08, header, fontsize=9.5, va="bottom", color="0.2",
                        zorder=-1)
        for text, (first, last) in plan["groups"]:
            x0, top = self.slots[first][:2]
            x1 = self.slots[last][0] + self.slots[last][2]
            ax.plot([x0 + 0.05, x1 - 0.05], [top - 0.1] * 2, color="0.6", lw=1, zorder=-1)
            ax.text((x0 + x1) / 2, top - 0.14, text, ha="center", va="bottom", fontsize=9, color="0.2", zorder=-1)
        x, y, ha = plan["note"]
        ax.text(x, y, plan["note_text"], ha=ha, va="top", fontsize=9, color="0.35", zorder=-1)

    def update(self, D, H):
        D, H = int(D), int(H)
        tr = self.traces[D, H]
        T, d_k = tr["X"].shape[0], D // H
        c = _tracer_cell(self.narrow, D, T)
        left = {}
        for name, (x, top, w, _) in self.slots.items():  # 每个数组在槽里水平居中
            left[name] = (x + (w - c * (D if name == "W_O" else T)) / 2, top)
        for name, img in self.images.items():
            a = tr[name].T if name != "W_O" else tr[name]  # X, Q ... 画成 (D, T)；W_O 本来就是 (D, D)
            self._place(img, a, *left[name], c)
        for h in range(MAX_HEADS):
            for img in (self.weights[h], self.heads[h]):  # 用不到的头隐藏起来（隐藏的图元不画，省时间）
                img.set_visible(h < H)
            if h < H:
                x, top = left["weights"]
                self._place(self.weights[h], tr["weights"][h], x, top + h * d_k * c, c, fixed=True,
                            height=min(T, d_k - 0.4 * (H > 1)))  # 缩略图：压进这个头的那一段
                self._place(self.heads[h], tr["heads"][h].T, left["heads"][0], top + h * d_k * c, c)
        for name, line in self.cuts.items():
            x, top = left[name]
            ys = [y for h in range(1, H) for y in (top + h * d_k * c, top + h * d_k * c, np.nan)]
            xs = [v for _ in range(1, H) for v in (x, x + T * c, np.nan)]
            line.set_data(np.array(xs, dtype=float), np.array(ys, dtype=float))
        self._label(D, H, T, d_k, c, left)
        used = np.count_nonzero(np.abs(tr["W_O"]).reshape(H, d_k, D).sum(axis=1) > 0, axis=0)  # (D,) 每个输出维用到几个头
        mixed = int(np.sum(used >= 2))
        self.title.set_text(f"D = {D}，H = {H}，每个头 $d_k$ = {D}/{H} = {d_k}"
                            + ("（数字随机）" if self.narrow else "（示例数字是随机的，不是训练出来的）"))
        self.mix.set_text(self._mix(D, H, mixed))
        return {**tr, "mixed_dims": np.array([mixed])}

    def _label(self, D, H, T, d_k, c, left):
        shapes = {"X": f"X\n({T}, {D})", "Q": f"Q\n({T}, {D})", "K": f"K\n({T}, {D})", "V": f"V\n({T}, {D})",
                  "weights": f"各头的权重\n{H}×({T}, {T})", "heads": f"各头的输出\n{H}×({T}, {d_k})",
                  "concat": f"拼接\n({T}, {D})", "W_O": f"$W_O$\n({D}, {D})", "out": f"输出\n({T}, {D})"}
        for name, text in self.labels.items():
            width = D if name == "W_O" else T
            text.set_position((left[name][0] + width * c / 2, left[name][1] + D * c + 0.05))
            text.set_text(shapes[name])
        mid = left["W_O"][1] + D * c / 2
        for op, (a, b) in zip(self.ops, (("concat", "W_O"), ("W_O", "out"))):
            a_right = left[a][0] + c * (D if a == "W_O" else T)
            op.set_position(((a_right + left[b][0]) / 2, mid))

    def _mix(self, D, H, mixed):
        """W_O 把各头混在一起：拼接的每一维只来自 1 个头，输出的每一维用到几个头。"""
        if H == 1:
            return "只有 1 个头：$W_O$ 只是再做一次线性变换，没有头可混"
        return ("拼接的每一维只来自 1 个头；乘 $W_O$ 后，"
                + ("\n" if self.narrow else "") + f"输出的 {D} 维里有 {mixed} 维混合了 ≥ 2 个头")

    @staticmethod
    def _place(img, a, x0, y0, c, fixed=False, height=None):
        """把数组 a 画在左上角 (x0, y0)（英寸），格子边长 c，高 ``height`` 格（默认 = 行数）。"""
        img.set_data(a)
        height = a.shape[0] if height is None else height
        img.set_extent((x0, x0 + c * a.shape[1], y0 + c * height, y0))
        if not fixed:
            m = float(np.max(np.abs(a))) or 1.0
            img.set_clim(-m, m)


def _trace(D: int, H: int, seed: int) -> dict:
    rng = np.random.default_rng(seed + D)  # 同一个 D 下，换 H 时 X 和四个权重矩阵都不变
    x = rng.normal(size=(len(TRACE_TOKENS), D))
    w_q, w_k, w_v, w_o = rng.normal(size=(4, D, D)) / np.sqrt(D)
    return shape_trace(x, w_q, w_k, w_v, w_o, H)


def head_shape_tracer(seed: int = 0) -> Explorable:
    """第 5 章：拖动 D 和 H，看一句 4 个词的话在多头注意力里每一步的数组和形状。

    滑块上只提供合法的组合（每个 H 都整除每个 D）。数字是随机的示例，不是训练出来的。
    """
    seed = check.seed(seed)
    return Explorable(
        view=_ShapeTracerView,
        data={"traces": {(D, H): _trace(D, H, seed) for D in D_GRID for H in H_GRID}},
        sliders=[Slider("D", D_GRID, label="D (d_model)", default=16), Slider("H", H_GRID, label="头数 H", default=2)],
        title="多头注意力的形状追踪器（示例数字随机，不是训练出来的）",
        alt="D = {D}、H = {H} 时，一句 4 个词的话经过多头注意力的每个数组及其形状：X、Q、K、V、"
            "{H} 个头的注意力权重和输出、拼接、W_O、输出。",
        size=TRACER_PLANS[False]["size"], narrow_size=TRACER_PLANS[True]["size"],
    )


# ---------------------------------------------------------------- 训练：头的分工

def _check_runs(runs, seed):
    """本章三次训练：不传就取 ``tl.runs.heads(seed)``；传了就检查它的样子（三个 Run 各带 weights、mass、gap）。"""
    seed = check.seed(seed)
    if runs is None:
        return experiments.heads(seed)
    if not isinstance(runs, Mapping) or "task" not in runs:
        raise TypeError(f"runs 必须是 tl.runs.heads() 那样的三次训练（含 task、random、identical、nudged），"
                        f"收到的是 {check.describe(runs)}。")
    for name in ("random", "identical", "nudged"):
        if name not in runs:
            raise ValueError(f"runs 缺少 {name!r}：应有 random、identical、nudged 三次训练。")
        as_run(runs[name], f"runs[{name!r}]", ("weights", "mass", "gap"))
    return runs


class _TrainingView:
    """两个头在第 1 句上的注意力（小标题：48 句平均看前一个词、看搭档各多少）和损失曲线（对数刻度）上的当前步。

    宽版三张横排；窄版两张热力图并排在上、损失曲线占满下面一行（两个头要能一眼对比）。
    ``caption(step, loss, gap, narrow)`` 给出总标题。
    """

    def __init__(self, fig, axes, layout, runs, tokens, keys, caption, starts):
        self.runs, self.keys, self.caption, self.starts = runs, keys, caption, starts
        self.narrow = layout.narrow
        if layout.narrow:  # 窄版：2 × 2 的格子，热力图占上面两格，曲线占下面一整行
            grid = fig.add_gridspec(2, 2)
            for ax, spec in zip(axes, (grid[0, 0], grid[0, 1], grid[1, :])):
                ax.set_subplotspec(spec)
        else:  # 宽版：曲线那一格宽一些，图例不挡住曲线
            axes[0].get_subplotspec().get_gridspec().set_width_ratios((1, 1, 1.3))
        T = len(tokens)
        self.maps = [attention_heatmap(np.zeros((T, T)), tokens, ax=axes[h], title=" ", annotate=False)
                     for h in range(2)]  # 不在格子里写数：拖动时少画 72 段文字，关键的数写在小标题里
        for heat in self.maps:  # 两张图颜色范围相同（0 到 1），共用一条色条
            heat.image.colorbar.remove()
        fig.colorbar(self.maps[1].image, ax=axes[:2], shrink=0.7, ticks=(0, 0.5, 1) if layout.narrow else None)
        axes[1].set_ylabel("")
        if layout.narrow:
            axes[0].set_ylabel("提问的词（查询）")
            for ax in axes[:2]:
                ax.set_xlabel("被关注的词（键）")
        self.titles = [ax.set_title(" ", fontsize=9.5) for ax in axes[:2]]
        self.marker = self._losses(axes[2], runs, keys)
        self.suptitle = fig.suptitle(" ", fontsize=10)
        self.artists = [*self.maps[0].artists, *self.maps[1].artists, *self.titles, self.marker, self.suptitle]

    @staticmethod
    def _losses(curve, runs, keys):
        """每次训练的损失曲线（对数刻度，图例在曲线下面空出的一条里）；返回标出当前步的圆点。"""
        for key, style in keys.items():
            run = runs[key]
            curve.plot(np.arange(len(run["losses"])), run["losses"], style[0], color=style[1], lw=1.6, label=style[2])
        curve.set_yscale("log")
        low = min(float(np.min(runs[key]["losses"])) for key in keys)
        curve.set_ylim(low / 10 ** (0.45 * len(keys)), 1.6)  # 曲线下面空出一条，放图例（不挡住曲线）
        curve.set_xlabel("训练步数")
        curve.set_ylabel("损失（均方误差）")
        curve.grid(alpha=0.3)
        curve.legend(fontsize=9, loc="lower left")
        return curve.plot([], [], "o", color="black", ms=7, zorder=5)[0]

    def update(self, step, **params):  # 分工图只有 step；对称性实验还有“起点”滑块 start
        run = self.runs[self.starts[params.get("start")]]  # starts：起点的取值（没有这个滑块时是 None）→ 哪次训练
        i, loss = run.at(step), run["losses"][step]
        m, gap = run["mass"][i], run["gap"][i]
        for h in range(2):
            self.maps[h].set_values(run["weights"][i, 0, h])
            self.titles[h].set_text(f"头 {h + 1}（48 句平均）\n前一个词 {m[h, 0]:.2f}\n搭档 {m[h, 1]:.2f}")
        self.marker.set_data([step], [loss])
        self.suptitle.set_text(self.caption(int(step), loss, gap, self.narrow))
        return {"weights": run["weights"][i, 0], "mass": m, "gap": np.array([gap]), "loss": np.array([loss])}


def _specialisation_caption(step, loss, gap, narrow):
    """分工图的总标题。"""
    return f"第 {step} 步，损失 {loss:.4f}" + ("\n" if narrow else "") + "（从随机初始权重训练，不是设计的）"


def _symmetry_caption(step, loss, gap, narrow):
    """对称性实验的总标题：两头权重之差是不是恰好为 0。"""
    diff = "0（恰好为 0）" if gap == 0 else (f"{gap:.1e}" if gap < 0.01 else f"{gap:.2f}")
    return f"第 {step} 步，损失 {loss:.4f}" + ("\n" if narrow else "，") + f"两头权重之差（最大绝对值）= {diff}"


def head_specialisation(runs: object = None, seed: int = 0) -> Explorable:
    """第 5 章：拖动训练步数，看两个头从随机初始权重出发，各自学会一种关系（训练出来的，不是设计的）。

    ``runs`` 是本章的三次训练 ``tl.runs.heads(seed)``（不传就用它）。
    """
    runs = _check_runs(runs, seed)
    steps = tuple(int(s) for s in runs["random"]["checkpoint_steps"])
    return Explorable(
        view=_TrainingView,
        data={"runs": runs, "tokens": list(runs["task"]["tokens"][0]), "caption": _specialisation_caption,
              "starts": {None: "random"},
              "keys": {"random": ("-", "#31688e", "随机起点")}},
        sliders=[Slider("step", steps, label="训练步数", default=steps[-1])],
        title="两个头在训练中分工（训练出来的，不是设计的）",
        alt="训练第 {step} 步时两个头在第 1 句上的注意力权重，以及损失随训练下降的曲线。",
        size=(6.8, 3.2), ncols=3, narrow_size=(3.6, 5.3),
    )


def head_symmetry(runs: object = None, seed: int = 0) -> Explorable:
    """第 5 章：两个头从完全相同的权重出发 vs 只差 1e-6 出发，拖动训练步数比较。

    ``runs`` 是本章的三次训练 ``tl.runs.heads(seed)``（不传就用它）。
    """
    runs = _check_runs(runs, seed)
    steps = tuple(int(s) for s in runs["identical"]["checkpoint_steps"][::2])
    return Explorable(
        view=_TrainingView,
        data={"runs": runs, "tokens": list(runs["task"]["tokens"][0]), "caption": _symmetry_caption,
              "starts": {"完全相同": "identical", "只差一点点": "nudged"},
              "keys": {"identical": ("-", "#b5367a", "两头完全相同"), "nudged": ("--", "#35b779", "两头只差 1e-6"),
                       "random": (":", "#31688e", "随机起点")}},
        sliders=[Slider("start", ("完全相同", "只差一点点"), label="起点", default="完全相同"),
                 Slider("step", steps, label="训练步数", default=steps[-1])],
        title="对称性实验：一模一样的两个头永远一样（训练出来的，不是设计的）",
        alt="起点“{start}”、训练第 {step} 步时两个头的注意力权重，以及三种起点的损失曲线。",
        size=(6.8, 3.2), ncols=3, narrow_size=(3.6, 5.3),
    )
