"""第 5 章的可交互图：多头注意力的形状追踪器，头在训练中分工，以及"一模一样的头永远一样"。"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .. import _validation as check
from ..lessons.head_shapes import shape_trace
from ..lessons import runs as experiments
from ..lessons.optim import as_run
from ..plot.figure import CMAP
from ..plot.heatmap import attention_heatmap
from ..widgets.explorable import Explorable, Slider

__all__ = ["head_shape_tracer", "head_specialisation", "head_symmetry"]

D_GRID, H_GRID = (8, 16, 24, 32), (1, 2, 4, 8)  # 每个 H 都整除每个 D：滑块上只有合法的组合
TRACE_TOKENS = ("猫", "追", "小", "狗")
MAX_HEADS = max(H_GRID)
HEAD_COLORS = ("#31688e", "#b5367a")


# ---------------------------------------------------------------- 形状追踪器

def _columns(D, T):
    """每一列数组的左边 x 坐标和宽度（单位：格子）。D 画成竖的（高 D），T 画成横的（宽 T）。"""
    widths = {"X": T, "Q": T, "K": T, "V": T, "weights": T, "heads": T, "concat": T, "W_O": D, "out": T}
    gap = max(2.0, D / 8)
    left, x = {}, 0.0
    for name, w in widths.items():
        left[name] = x
        x += w + gap * (1.6 if name in ("X", "V", "weights", "heads", "concat", "W_O") else 0.5)
    return left, widths, x


class _ShapeTracerView:
    """一句话（4 个词）走过多头注意力：每个数组一张缩略图，下面写着它的形状。数组都画成"转置"的：D 方向朝下。"""

    def __init__(self, fig, axes, layout, traces):
        ax = axes[0]
        ax.set_autoscale_on(False)  # 坐标范围固定（下面 set_xlim/set_ylim），挪动图片时不必重算范围
        ax.set_xticks([]), ax.set_yticks([])  # 不要刻度和边框（不用 set_axis_off：局部重画会照样画出边框）
        for spine in ax.spines.values():
            spine.set_visible(False)
        self.ax, self.traces = ax, traces  # (D, H) -> shape_trace 的结果，工厂里一次算好
        names = ["X", "Q", "K", "V", "concat", "W_O", "out"]
        self.images = {n: ax.imshow(np.zeros((2, 2)), cmap=CMAP, interpolation="nearest") for n in names}
        self.weights = [ax.imshow(np.zeros((2, 2)), cmap=CMAP, vmin=0, vmax=1, interpolation="nearest")
                        for _ in range(MAX_HEADS)]
        self.heads = [ax.imshow(np.zeros((2, 2)), cmap=CMAP, interpolation="nearest") for _ in range(MAX_HEADS)]
        self.cuts = {n: ax.plot([], [], color="white", lw=1.5)[0] for n in ("Q", "K", "V", "heads", "concat")}
        self.labels = {n: ax.text(0, 0, "", ha="center", va="top", fontsize=8) for n in [*names, "weights", "heads"]}
        fig.text(0.02, 0.02, "每个数组都画成竖的：往下是 D 个维度，往右是 4 个词。白线 = 切头的位置。",
                 fontsize=8, color="0.35")  # 不随滑块变化；放在子图外，拖动时不必重画
        self.suptitle = fig.suptitle(" ", fontsize=10)
        self.artists = [*self.images.values(), *self.weights, *self.heads, *self.cuts.values(),
                        *self.labels.values(), self.suptitle]

    def update(self, D, H):
        D, H = int(D), int(H)
        tr = self.traces[D, H]
        T, d_k = tr["X"].shape[0], D // H
        left, widths, total = _columns(D, T)
        # 坐标范围固定不变（局部重画要求背景不变），换 D 时把整张排版等比放大到同样大小
        big = _columns(max(D_GRID), T)[2]
        f = min(max(D_GRID) / D, big / total)
        self.ax.set_xlim(-1, big)
        self.ax.set_ylim(1.2 * max(D_GRID) + 2.5, -0.12 * max(D_GRID) - 1)
        for name, img in self.images.items():
            a = tr[name].T if name != "W_O" else tr[name]  # X, Q ... 画成 (D, T)；W_O 本来就是 (D, D)
            self._place(img, a, left[name], 0, f)
        for h in range(MAX_HEADS):
            top = h * d_k
            for img in (self.weights[h], self.heads[h]):  # 用不到的头隐藏起来（隐藏的图元不画，省时间）
                img.set_visible(h < H)
            if h < H:
                self._place(self.weights[h], tr["weights"][h], left["weights"], top, f, fixed=True,
                            height=min(T, d_k - 0.4 * (H > 1)))  # 缩略图：压进这个头的那一段
                self._place(self.heads[h], tr["heads"][h].T, left["heads"], top, f)
        for name, line in self.cuts.items():
            ys = [y for h in range(1, H) for y in (h * d_k - 0.5, h * d_k - 0.5, np.nan)]
            xs = [x for _ in range(1, H) for x in (left[name] - 0.5, left[name] + T - 0.5, np.nan)]
            line.set_data(f * np.array(xs, dtype=float), f * np.array(ys, dtype=float))
        shapes = {"X": f"X\n({T}, {D})", "Q": f"Q=XW_Q\n({T}, {D})", "K": f"K=XW_K\n({T}, {D})",
                  "V": f"V=XW_V\n({T}, {D})", "weights": f"各头的权重\n{H}×({T}, {T})",
                  "heads": f"各头的输出\n{H}×({T}, {d_k})", "concat": f"拼接\n({T}, {D})",
                  "W_O": f"W_O\n({D}, {D})", "out": f"输出\n({T}, {D})"}
        for name, text in self.labels.items():
            text.set_position((f * (left[name] + widths[name] / 2 - 0.5), f * (D + 0.05 * D + 0.5)))
            text.set_text(shapes[name])
        used = np.count_nonzero(np.abs(tr["W_O"]).reshape(H, d_k, D).sum(axis=1) > 0, axis=0)  # (D,) 每个输出维用到几个头
        mixed = int(np.sum(used >= 2))
        self.suptitle.set_text(
            f"D = {D}，H = {H}，每个头 d_k = {D}/{H} = {d_k}（示例数字是随机的，不是训练出来的）\n"
            + (f"W_O 把各头混在一起：输出的 {D} 维里有 {mixed} 维同时用到 ≥ 2 个头；"
               "没有 W_O（直接用拼接），每一维只来自 1 个头" if H > 1 else
               "只有 1 个头：W_O 只是再做一次线性变换，没有头可混"))
        return {**tr, "mixed_dims": np.array([mixed])}

    @staticmethod
    def _place(img, a, x0, y0, f, fixed=False, height=None):
        """把数组 a 画在左上角 (x0, y0)（单位：格子），高 ``height``（默认 = 行数），整体放大 f 倍。"""
        img.set_data(a)
        height = a.shape[0] if height is None else height
        img.set_extent((f * (x0 - 0.5), f * (x0 + a.shape[1] - 0.5), f * (y0 + height - 0.5), f * (y0 - 0.5)))
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
    return Explorable(
        view=_ShapeTracerView,
        data={"traces": {(D, H): _trace(D, H, seed) for D in D_GRID for H in H_GRID}},
        sliders=[Slider("D", D_GRID, label="D (d_model)", default=16), Slider("H", H_GRID, label="头数 H", default=2)],
        title="多头注意力的形状追踪器（示例数字随机，不是训练出来的）",
        alt="D = {D}、H = {H} 时，一句 4 个词的话经过多头注意力的每个数组及其形状：X、Q、K、V、"
            "{H} 个头的注意力权重和输出、拼接、W_O、输出。",
        size=(11.0, 4.8),
    )


# ---------------------------------------------------------------- 训练：头的分工

def _check_runs(runs, seed):
    """本章三次训练：不传就取 ``tl.runs.heads(seed)``；传了就检查它的样子（三个 Run 各带 weights、mass、gap）。"""
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
    """左两张：两个头在第 1 句上的注意力；右：损失曲线（对数刻度）和当前步。"""

    def __init__(self, fig, axes, layout, runs, tokens, keys, caption, starts):
        self.runs, self.keys, self.caption, self.starts = runs, keys, caption, starts
        T = len(tokens)
        self.maps = [attention_heatmap(np.zeros((T, T)), tokens, ax=axes[h], title=f"头 {h + 1}", annotate=False)
                     for h in range(2)]  # 不在格子里写数：拖动时少画 72 段文字，关键的数写在总标题里
        curve = axes[2]
        for key, style in keys.items():
            run = runs[key]
            curve.plot(np.arange(len(run["losses"])), run["losses"], style[0], color=style[1], lw=1.6, label=style[2])
        curve.set_yscale("log")
        curve.set_xlabel("训练步数")
        curve.set_ylabel("损失（均方误差）")
        curve.grid(alpha=0.3)
        curve.legend(fontsize=8, loc="lower left")
        self.marker = curve.plot([], [], "o", color="black", ms=7, zorder=5)[0]
        self.suptitle = fig.suptitle(" ", fontsize=10)
        self.artists = [*self.maps[0].artists, *self.maps[1].artists, self.marker, self.suptitle]

    def update(self, step, **params):  # 分工图只有 step；对称性实验还有“起点”滑块 start
        run = self.runs[self.starts[params.get("start")]]  # starts：起点的取值（没有这个滑块时是 None）→ 哪次训练
        i, loss = run.at(step), run["losses"][step]
        for h in range(2):
            self.maps[h].set_values(run["weights"][i, 0, h])
        self.marker.set_data([step], [loss])
        m, gap = run["mass"][i], run["gap"][i]
        self.suptitle.set_text(self.caption(int(step), loss, m, gap))
        return {"weights": run["weights"][i, 0], "mass": m, "gap": np.array([gap]), "loss": np.array([loss])}


def _mass_text(m):
    return "；".join(f"头 {h + 1} 看前一个词 {m[h, 0]:.2f}、看搭档 {m[h, 1]:.2f}" for h in range(2))


def head_specialisation(runs: object = None, seed: int = 0) -> Explorable:
    """第 5 章：拖动训练步数，看两个头从随机初始权重出发，各自学会一种关系（训练出来的，不是设计的）。

    ``runs`` 是本章的三次训练 ``tl.runs.heads(seed)``（不传就用它）。
    """
    runs = _check_runs(runs, seed)
    steps = tuple(int(s) for s in runs["random"]["checkpoint_steps"])
    caption = lambda s, loss, m, gap: (f"第 {s} 步，损失 {loss:.4f}（从随机初始权重训练，不是设计的）\n"  # noqa: E731
                                       f"全部 48 句平均：{_mass_text(m)}")
    return Explorable(
        view=_TrainingView,
        data={"runs": runs, "tokens": list(runs["task"]["tokens"][0]), "caption": caption, "starts": {None: "random"},
              "keys": {"random": ("-", "#31688e", "随机起点")}},
        sliders=[Slider("step", steps, label="训练步数", default=steps[-1])],
        title="两个头在训练中分工（训练出来的，不是设计的）",
        alt="训练第 {step} 步时两个头在第 1 句上的注意力权重，以及损失随训练下降的曲线。",
        size=(11.0, 3.9), ncols=3,
    )


def head_symmetry(runs: object = None, seed: int = 0) -> Explorable:
    """第 5 章：两个头从完全相同的权重出发 vs 只差 1e-6 出发，拖动训练步数比较。

    ``runs`` 是本章的三次训练 ``tl.runs.heads(seed)``（不传就用它）。
    """
    runs = _check_runs(runs, seed)
    steps = tuple(int(s) for s in runs["identical"]["checkpoint_steps"][::2])
    caption = lambda s, loss, m, gap: (f"第 {s} 步，损失 {loss:.4f}，两头权重之差（最大绝对值）= "  # noqa: E731
                                       f"{'0（恰好为 0）' if gap == 0 else f'{gap:.1e}'}\n{_mass_text(m)}")
    return Explorable(
        view=_TrainingView,
        data={"runs": runs, "tokens": list(runs["task"]["tokens"][0]), "caption": caption,
              "starts": {"完全相同": "identical", "只差一点点": "nudged"},
              "keys": {"identical": ("-", "#b5367a", "两头完全相同"), "nudged": ("--", "#35b779", "两头只差 1e-6"),
                       "random": (":", "#31688e", "随机起点")}},
        sliders=[Slider("start", ("完全相同", "只差一点点"), label="起点", default="完全相同"),
                 Slider("step", steps, label="训练步数", default=steps[-1])],
        title="对称性实验：一模一样的两个头永远一样（训练出来的，不是设计的）",
        alt="起点“{start}”、训练第 {step} 步时两个头的注意力权重，以及三种起点的损失曲线。",
        size=(11.0, 3.9), ncols=3,
    )
