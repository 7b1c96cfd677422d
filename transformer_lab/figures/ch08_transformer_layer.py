"""第 8 章的可交互图：一句话走过一整层、叠很多层时梯度和"笔记"怎样了、从零训练一个倒序 Transformer。

每张图画两种版式（见 ``plot.figure.Layout``）：宽版给电脑，子图横排；窄版给手机，子图竖排、标题更短、刻度更少。
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.ticker import NullLocator

from .. import _validation as check
from ..core.layer_norm import layer_norm
from ..lessons import runs as experiments
from ..lessons.deep_stack import MODES
from ..lessons.layer_story import STAGES, story_steps
from ..lessons.optim import as_run
from ..lessons.tiny_transformer import SYMBOLS
from ..lessons.toy_lexicon import FEATURES
from ..plot.figure import CMAP, MIN_FONT_PT
from ..plot.heatmap import attention_heatmap
from ..widgets.explorable import Explorable, Slider

__all__ = ["layer_norm_steps", "layer_walkthrough", "depth_gradients", "reversal_training"]

TITLE_PT, SUPTITLE_PT = 10.0, 10.5  # 子图标题、整张图的标题；其余的字不小于 MIN_FONT_PT

# 每一步的说明：宽版一行写完，窄版（手机）每行不超过 16 个汉字
STAGE_NOTES = (
    "每个词的输入笔记：有这个特征记 1，没有记 0（手工设计的特征）",
    "两个头听来的（经 $W_O$ 译回特征）：她 从 饿了 听到“描述活物”，从 小红 听到“是人”“是女性”",
    "残差：听来的内容加在原来的笔记上——她 仍然记得自己“是代词”“指女性”",
    "LayerNorm：每一行减去均值、除以标准差，变成均值 0、方差 1（γ = 1，β = 0）",
    "前馈网络（设计的规则：会饿的东西不是食物也不是地点），每个词各算各的",
    "第二个残差：规则的结论加在笔记上",
    "LayerNorm 再做一次：这就是这一层的输出，可以交给下一层",
)
STAGE_NOTES_SHORT = (
    "有这个特征记 1，没有记 0",
    "她 听到“描述活物”“是人”“是女性”",
    "听来的内容加在原来的笔记上",
    "每一行变成均值 0、方差 1",
    "规则：会饿的不是食物、不是地点",
    "规则的结论加在笔记上",
    "再归一化：这一层的输出",
)


# ---------------------------------------------------------------- 层归一化：一个向量

LN_VECTOR = (2.0, 4.0, 6.0, 8.0)
LN_PANELS = (("输入（整体平移后）", (-5.0, 15.0), (-5, 0, 5, 10, 15)), ("标准化 (x − μ)/σ", (-4.0, 4.0), (-4, -2, 0, 2, 4)),
             ("再乘 γ、加 β", (-4.0, 4.0), (-4, -2, 0, 2, 4)))


class _LayerNormView:
    """三张柱状图（宽版横排、窄版竖排）：输入（整体平移）、标准化后、乘 γ 加 β 后。纵轴固定，拖动时高低可比。"""

    def __init__(self, fig, axes, layout, vector):
        self.vector, self.narrow = np.asarray(vector), layout.narrow
        dims = range(1, len(self.vector) + 1)
        names = [f"第 {i} 维" for i in dims] if self.narrow else [str(i) for i in dims]  # 宽版一格太窄：只写维号
        self.bars, self.notes = [], []
        for ax, (title, ylim, yticks) in zip(axes, LN_PANELS):
            self.bars.append(ax.bar(names, np.zeros(len(names)), color="#31688e"))
            ax.axhline(0, color="0.3", lw=0.8)
            ax.set_ylim(*ylim)
            ax.set_yticks(yticks)
            ax.set_title(title, fontsize=TITLE_PT)  # 不画网格线：有网格线的坐标轴每次拖动都要重画刻度文字，太慢
            self.notes.append(ax.text(0.03, 0.95, "", transform=ax.transAxes, va="top", fontsize=MIN_FONT_PT))
        if not self.narrow:
            fig.supxlabel("第几维", fontsize=MIN_FONT_PT)
        self.suptitle = fig.suptitle(" ", fontsize=SUPTITLE_PT, linespacing=1.3)
        self.artists = [*(b for bars in self.bars for b in bars), *self.notes, self.suptitle]

    def update(self, shift, gamma, beta):
        x = self.vector + shift  # (D,)
        x_hat = layer_norm(x, np.ones(len(x)), np.zeros(len(x)))  # (D,)
        y = layer_norm(x, np.full(len(x), float(gamma)), np.full(len(x), float(beta)))  # (D,)
        for bars, note, values in zip(self.bars, self.notes, (x, x_hat, y)):
            for bar, value in zip(bars, values):
                bar.set_height(value)
            mean = round(float(values.mean()), 2) + 0.0  # + 0.0：不显示 "-0.00"
            note.set_text(f"均值 {mean:.2f}\n方差 {values.var():.2f}")
        params = f"平移 {shift:g}，γ = {gamma:g}，β = {beta:g}"
        if self.narrow:
            self.suptitle.set_text(f"{params}\n中间那张图不随平移变化")
        else:
            self.suptitle.set_text(f"{params}：中间那张图不随平移变化\nLayerNorm 只看各维之间的相对高低")
        return {"x": x, "x_hat": x_hat, "y": y}


def layer_norm_steps() -> Explorable:
    """第 8 章：把向量 [2, 4, 6, 8] 整体平移，再调 γ、β，看层归一化的两步（标准化、再缩放平移）。"""
    return Explorable(
        view=_LayerNormView,
        data={"vector": LN_VECTOR},
        sliders=[Slider("shift", (-6.0, 0.0, 6.0), label="整体平移", default=0.0),
                 Slider("gamma", (0.5, 1.0, 2.0), label="缩放 γ", default=1.0),
                 Slider("beta", (-1.0, 0.0, 1.0), label="平移 β", default=0.0)],
        title="层归一化：先标准化，再乘 γ、加 β",
        alt=("向量 [2, 4, 6, 8] 整体平移 {shift} 后做层归一化（γ = {gamma}，β = {beta}）：输入、标准化后、最终输出三张柱状图，"
             "每张写着均值和方差。"),
        size=(6.8, 3.2), ncols=3, narrow_size=(3.6, 6.6),
    )


# ---------------------------------------------------------------- 一句话走过一整层


def _feature_ticks(ax, show: bool = True) -> None:
    """横轴的每一格是一个特征：斜着写特征名（``show=False``：不写字，由正下方对齐的那张图写）。"""
    if show:
        ax.set_xticks(range(len(FEATURES)), FEATURES, rotation=60, ha="right", rotation_mode="anchor",
                      fontsize=MIN_FONT_PT)
    else:
        ax.set_xticks(range(len(FEATURES)), [""] * len(FEATURES))


class _WalkView:
    """全句的 (T, D) 数组（行 = 词，列 = 特征）与代词 她 那一行的柱状图：宽版左右并排，窄版上下对齐、共用特征名。"""

    def __init__(self, fig, axes, layout, story):
        self.story, self.narrow = story, layout.narrow
        tokens, T, D = story["tokens"], len(story["tokens"]), len(FEATURES)
        top, bottom = axes
        self.image = top.imshow(np.zeros((T, D)), cmap=CMAP, vmin=-2.5, vmax=3.5, aspect="auto")
        top.set_yticks(range(T), tokens)
        t = story["pronoun"]
        self.bars = bottom.bar(range(D), np.zeros(D), color="#31688e")
        bottom.axhline(0, color="0.3", lw=0.8)
        bottom.set_ylim(-2.5, 3.5)
        bottom.set_xlim(-0.5, D - 0.5)  # 与热力图的列对齐
        bottom.set_yticks([-2, 0, 2])
        _feature_ticks(bottom)
        if self.narrow:  # 竖排：色条放在热力图下面（横着），两张图的列上下对齐，特征名只写在下面那张图上
            _feature_ticks(top, show=False)
            fig.colorbar(self.image, ax=top, location="bottom", shrink=0.7, aspect=30, pad=0.04, ticks=[-2, 0, 2])
            top.set_title("全句（权重是手工设计的）", fontsize=TITLE_PT)
            bottom.set_title(f"“{tokens[t]}”这一行（同样的列）", fontsize=TITLE_PT)
        else:
            _feature_ticks(top)
            fig.colorbar(self.image, ax=top, shrink=0.8, ticks=[-2, 0, 2])
            top.set_title("全句：每行一个词，每列一个特征", fontsize=TITLE_PT)
            bottom.set_title(f"代词“{tokens[t]}”这一行（它的笔记）", fontsize=TITLE_PT)
        self.suptitle = fig.suptitle(" ", fontsize=SUPTITLE_PT, linespacing=1.3)
        self.artists = [self.image, *self.bars, self.suptitle]

    def update(self, stage):
        i = STAGES.index(stage)
        a = self.story["stages"][i]  # (T, D)
        self.image.set_data(a)
        row = a[self.story["pronoun"]]  # (D,)
        for bar, value in zip(self.bars, row):
            bar.set_height(value)
        if self.narrow:
            self.suptitle.set_text(f"第 {i + 1} 步：{stage}\n{STAGE_NOTES_SHORT[i]}")
        else:
            self.suptitle.set_text(f"第 {i + 1} 步：{stage}（权重为讲解而手工设计，不是训练出来的）\n{STAGE_NOTES[i]}")
        return {"stage": a, "pronoun_row": row}


def layer_walkthrough() -> Explorable:
    """第 8 章：拖动"步骤"，看"小明把苹果递给小红，因为她饿了"走过一整层编码器的 7 步（设计的权重）。"""
    return Explorable(
        view=_WalkView,
        data={"story": story_steps("她饿了")},
        sliders=[Slider("stage", STAGES, label="步骤", default=STAGES[0])],
        title="一句话走过一整层编码器（权重为讲解而手工设计）",
        alt="“小明把苹果递给小红，因为她饿了”走过一层编码器的“{stage}”这一步：全句的数组热力图和代词“她”那一行的柱状图。",
        size=(6.8, 3.9), ncols=2, narrow_size=(3.6, 6.0),
    )


# ---------------------------------------------------------------- 叠很多层：梯度和笔记

DEPTHS, SEEDS = experiments.DEPTHS, experiments.DEPTH_SEEDS


class _DepthView:
    """梯度长度 ‖∂L/∂x_n‖ 随层号 n 的变化（每个种子一条细线，粗线是中位数），以及各位置笔记的平均相似度。

    宽版左右并排，窄版上下排；两种版式里每张子图的标题都写着它自己的那个数，整张图的标题只写叠法和层数。
    """

    def __init__(self, fig, axes, layout, profiles):
        self.profiles, self.narrow = profiles, layout.narrow
        grad_ax, sim_ax = axes
        self.thin = [grad_ax.plot([], [], color="#31688e", lw=0.8, alpha=0.35, label="每个种子" if i == 0 else None)[0]
                     for i in range(SEEDS)]
        self.median = grad_ax.plot([], [], "o-", color="#b5367a", lw=2.2, ms=4, label=f"{SEEDS} 次的中位数")[0]
        grad_ax.set_yscale("log")
        grad_ax.set_ylim(1e-3, 1e2)
        grad_ax.set_yticks([1e-3, 1e-2, 1e-1, 1, 10, 100], ["0.001", "0.01", "0.1", "1", "10", "100"])
        grad_ax.yaxis.set_minor_locator(NullLocator())
        grad_ax.set_ylabel("梯度长度（对数）")
        grad_ax.legend(fontsize=MIN_FONT_PT, loc="upper right")
        self.sim = sim_ax.plot([], [], "s-", color="#35b779", lw=2, ms=4)[0]
        sim_ax.set_ylim(-0.1, 1.05)
        sim_ax.set_yticks([0, 0.5, 1])
        sim_ax.set_ylabel("平均余弦相似度")
        for ax in axes:
            ax.set_xlim(-0.5, max(DEPTHS) + 0.5)
            ax.set_xticks(range(0, max(DEPTHS) + 1, 4))
            ax.set_xlabel("层号 n（0 = 输入）")
            ax.grid(alpha=0.3)
        self.suptitle = fig.suptitle(" ", fontsize=SUPTITLE_PT, linespacing=1.3)
        self.axes = axes
        self.artists = [*self.thin, self.median, self.sim, grad_ax.title, sim_ax.title, self.suptitle]

    def update(self, mode, depth):
        prof = self.profiles[mode, int(depth)]
        n = np.arange(int(depth) + 1)
        for line, g in zip(self.thin, prof["grad"]):
            line.set_data(n, g)
        med = np.median(prof["grad"], axis=0)  # (N + 1,)
        sim = np.mean(prof["similarity"], axis=0)  # (N + 1,)
        self.median.set_data(n, med)
        self.sim.set_data(n, sim)
        bottom = prof["grad"][:, 0]
        self.suptitle.set_text(f"{mode}，{depth} 层（随机权重，没有训练）")
        spread = f"（{SEEDS} 次里 {bottom.min():.3f} 到 {bottom.max():.2f}）"
        grad = f"最底层中位数 {med[0]:.2f}"
        titles = ((f"梯度：{grad}\n{spread}", f"笔记的相似度：最上层 {sim[-1]:.2f}\n（1 = 笔记一模一样）") if self.narrow else
                  (f"传到第 n 层的梯度：{grad}\n{spread}", f"各位置笔记的相似度：最上层 {sim[-1]:.2f}\n（1 = 所有词的笔记一模一样）"))
        for ax, title in zip(self.axes, titles):
            ax.set_title(title, fontsize=TITLE_PT)
        return {"grad": prof["grad"], "median": med, "similarity": sim}


def depth_gradients(profiles: object = None, seed: int = 0) -> Explorable:
    """第 8 章：选叠法和层数，看梯度穿过 N 层后还剩多长、各位置的笔记还分不分得开（随机权重）。

    ``profiles`` 是 ``tl.runs.depth(seed)``（不传就用它）。
    """
    seed = check.seed(seed)
    if profiles is None:
        profiles = experiments.depth(seed)
    elif not isinstance(profiles, Mapping) or any((m, n) not in profiles for m in MODES for n in DEPTHS):
        raise TypeError(f"profiles 必须是 tl.runs.depth() 那样的字典（键是 (叠法, 层数)），收到的是 {check.describe(profiles)}。")
    return Explorable(
        view=_DepthView,
        data={"profiles": profiles},
        sliders=[Slider("mode", MODES, label="叠法", default="无残差"), Slider("depth", DEPTHS, label="层数 N", default=16)],
        title="叠很多层：有没有残差，梯度和笔记大不一样（随机权重）",
        alt="{mode}、{depth} 层时，梯度长度随层号的变化（12 个随机种子和中位数），以及各位置笔记的平均相似度。",
        size=(6.8, 3.5), ncols=2, narrow_size=(3.6, 6.4),
    )


# ---------------------------------------------------------------- 从零训练：倒序任务

PE_CHOICES = ("有位置编码", "去掉位置编码")


class _TrainView:
    """第 1 道考题的注意力、两次训练的损失曲线、考题上的正确率（宽版横排，窄版竖排）。黑点 = 当前步。"""

    def __init__(self, fig, axes, layout, runs, labels):
        self.runs, self.narrow = runs, layout.narrow
        heat_ax, loss_ax, acc_ax = axes
        self.heat = attention_heatmap(np.zeros((len(labels), len(labels))), labels, ax=heat_ax, title=" ",
                                      annotate=False)
        self.heat.image.colorbar.set_ticks([0, 0.5, 1])
        if not self.narrow:  # 宽版一格只有约 0.25 英寸："0:G" 横着写会挤在一起
            heat_ax.tick_params(axis="x", labelrotation=90)
        heat_ax.set_xlabel("键（位置:符号）")
        heat_ax.set_ylabel("查询")
        if self.narrow:  # 竖排：热力图那一格高一些，格子才不小
            heat_ax.get_subplotspec().get_gridspec().set_height_ratios([1.4, 1, 1])
        styles = {PE_CHOICES[0]: ("-", "#31688e"), PE_CHOICES[1]: ("--", "#b5367a")}
        for choice, run in runs.items():
            ls, color = styles[choice]
            loss_ax.plot(np.arange(len(run["losses"])), run["losses"], ls, color=color, lw=1.2, label=choice)
            acc_ax.plot(run["checkpoint_steps"], run["accuracy"][:, 1], ls, color=color, lw=1.6, label=choice)
        loss_ax.set_yscale("log")
        loss_ax.set_ylabel("损失（交叉熵）")
        acc_ax.set_ylim(-0.03, 1.03)
        acc_ax.set_yticks([0, 0.5, 1])
        acc_ax.set_ylabel("整串全对的比例")
        acc_ax.legend(fontsize=MIN_FONT_PT, loc="center right")  # 两张曲线图的线型一样，图例只写一次
        steps = len(next(iter(runs.values()))["losses"]) - 1
        for ax in (loss_ax, acc_ax):
            ax.set_xlabel("训练步数")
            ax.set_xticks(np.linspace(0, steps, 4 if self.narrow else 3).round())
            ax.grid(alpha=0.3)
        loss_ax.set_title("两次训练的损失", fontsize=TITLE_PT)
        acc_ax.set_title("1000 道考题的正确率", fontsize=TITLE_PT)
        self.loss_dot = loss_ax.plot([], [], "o", color="black", ms=7, zorder=5, clip_on=False)[0]
        self.acc_dot = acc_ax.plot([], [], "o", color="black", ms=7, zorder=5, clip_on=False)[0]
        self.suptitle = fig.suptitle(" ", fontsize=SUPTITLE_PT, linespacing=1.3)
        self.heat_ax = heat_ax
        self.artists = [*self.heat.artists, self.loss_dot, self.acc_dot, heat_ax.title, self.suptitle]

    def update(self, step, pe):
        run = self.runs[pe]
        i = run.at(step)
        weights = run["weights"][i, 0]  # (T, T)
        self.heat.set_values(weights)
        loss, (token_acc, seq_acc) = run["losses"][int(step)], run["accuracy"][i]
        self.loss_dot.set_data([step], [loss])
        self.acc_dot.set_data([step], [seq_acc])
        anti = float(np.mean(np.diag(weights[:, ::-1])))
        self.heat_ax.set_title(f"第 1 道考题的注意力\n反对角线上平均 {anti:.2f}", fontsize=TITLE_PT)
        if self.narrow:
            self.suptitle.set_text(f"{pe}，第 {step} 步（训练出来的）\n损失 {loss:.3f}，整串全对 {seq_acc:.3f}")
        else:
            self.suptitle.set_text(f"{pe}，第 {step} 步（从随机初始参数训练出来的）\n"
                                   f"损失 {loss:.3f}，逐个符号正确率 {token_acc:.3f}，整串全对 {seq_acc:.3f}")
        return {"weights": weights, "loss": np.array([loss]), "accuracy": run["accuracy"][i],
                "anti_diagonal": np.array([anti])}


def reversal_training(with_pe: object = None, without_pe: object = None, seed: int = 0) -> Explorable:
    """第 8 章：拖动训练步数，看一个小 Transformer 学会把 6 个符号倒过来；切换"去掉位置编码"看它学不会。

    ``with_pe``、``without_pe`` 是两次 ``tiny_transformer.train`` 的结果（同一个种子、同样的步数）；
    不传就用 ``tl.runs.reversal(seed, use_pe=True / False)``。
    """
    seed = check.seed(seed)
    with_pe = experiments.reversal(seed, use_pe=True) if with_pe is None else as_run(with_pe, "with_pe", ("weights", "accuracy", "test"))
    without_pe = (experiments.reversal(seed, use_pe=False) if without_pe is None
                  else as_run(without_pe, "without_pe", ("weights", "accuracy")))
    if not np.array_equal(with_pe["checkpoint_steps"], without_pe["checkpoint_steps"]):
        raise ValueError("with_pe 和 without_pe 必须在同样的步数上存档（同样的 steps 和 checkpoint_every）。")
    runs = {PE_CHOICES[0]: with_pe, PE_CHOICES[1]: without_pe}
    run = with_pe
    steps = tuple(int(s) for s in run["checkpoint_steps"])
    tokens = run["test"]["tokens"][0]
    labels = [f"{t}:{SYMBOLS[k]}" for t, k in enumerate(tokens)]
    return Explorable(
        view=_TrainView,
        data={"runs": runs, "labels": labels},
        sliders=[Slider("pe", PE_CHOICES, label="位置编码", default=PE_CHOICES[0]),
                 Slider("step", steps, label="训练步数", default=steps[-1])],
        title="从零训练一个小 Transformer：把 6 个符号倒过来（训练出来的，不是设计的）",
        alt="{pe}、训练第 {step} 步时，第 1 道考题的注意力热力图，以及两次训练的损失和整串全对的正确率曲线。",
        size=(6.8, 3.3), ncols=3, narrow_size=(3.6, 7.8),
    )
