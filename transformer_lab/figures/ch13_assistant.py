"""第 13 章的可交互图：指令微调的每个存档怎样回答三道题、LoRA 的秩换来了什么、DPO 的 β 和步数。

三张图画的都是 ``tl.runs`` 里存好的实验（``sft``、``lora``、``dpo``），不在这里训练；工厂函数把每一帧要写的字
和要画的数都算好交给 view，view 只画。
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .. import _validation as check
from ..lessons import assistant, runs
from ..widgets.explorable import Explorable, Slider

__all__ = ["sft_checkpoints", "lora_ranks", "dpo_beta"]

_FULL, _LORA, _WRONG, _PAIRS, _GREY = "#b5367a", "#31688e", "#d95f02", "#35978f", "0.75"


def _wrap(text: str, width: int) -> str:
    return "\n".join(text[i:i + width] for i in range(0, len(text), width)) or "（什么也没写）"


def _mapping(value: object, name: str, keys: tuple[str, ...]) -> Mapping:
    if not isinstance(value, Mapping) or any(k not in value for k in keys):
        raise TypeError(f"{name} 必须是 tl.runs 里那样的实验结果（带 {', '.join(keys)}），收到的是 {check.describe(value)}。")
    return value


# ---------------------------------------------------------------- 指令微调：存档 → 三道题的回答


class _SFTView:
    """左（窄版在上）：只在答案上算的训练损失，黑点 = 当前存档；右（窄版在下）：这个存档对三道题的回答。"""

    def __init__(self, fig, axes, layout, run):
        loss_ax, text_ax = axes
        self.run = run
        losses = np.asarray(run["losses"])
        loss_ax.plot(np.arange(len(losses)), losses, color=_FULL, lw=1.0, label="答案上的损失（每一批）")
        loss_ax.set_xlabel("微调步数")
        loss_ax.set_ylabel("损失")
        loss_ax.set_ylim(0, float(losses.max()) * 1.08)
        loss_ax.grid(alpha=0.3)
        loss_ax.legend(loc="upper right", fontsize=9, frameon=False)
        self.dot = loss_ax.plot([], [], "o", color="black", ms=7, zorder=5)[0]
        text_ax.set_axis_off()
        self.width = 15 if layout.narrow else 13
        self.texts = [text_ax.text(0.0, 1.0 - 0.34 * i, "", transform=text_ax.transAxes, va="top", fontsize=9.5,
                                   linespacing=1.25) for i in range(len(assistant.FIXED_TERMS))]
        self.suptitle = fig.suptitle(" \n ", fontsize=10)
        self.artists = [self.dot, *self.texts, self.suptitle]

    def update(self, step):
        i = int(np.flatnonzero(np.asarray(self.run["checkpoint_steps"]) == step)[0])
        loss = float(self.run["losses"][step])
        self.dot.set_data([step], [loss])
        replies = [str(r) for r in self.run["fixed_answers"][i]]
        for text, term, reply, seen in zip(self.texts, assistant.FIXED_TERMS, replies, (True, True, False)):
            tag = "训练过" if seen else "没训练过"
            text.set_text(f"问：什么是{term}？（{tag}）\n答：" + _wrap(reply, self.width))
        s = self.run["scores"]
        self.suptitle.set_text(f"第 {step} 步：训练过的 40 题答对 {s['trained_right'][i]:.0%}，"
                               f"\n没训练过的 12 题格式对 {s['held_out_format'][i]:.0%}、答对 {s['held_out_right'][i]:.0%}")
        return {"loss": np.array([loss]), "checkpoint": np.array([i]),
                "right": np.array([s["trained_right"][i], s["held_out_right"][i]])}


def sft_checkpoints(run: object = None) -> Explorable:
    """第 13 章：拖微调步数，看第 9 章的小 GPT 怎样学会答题——两道训练过的题、一道没训练过的题
    （``assistant.FIXED_TERMS``），旁边是只在答案上算的损失；标题是两部分题上答对的比例。

    ``run`` 是 ``tl.runs.sft()`` 那样的结果（不传就用它）。

    Raises
    ------
    TypeError
        ``run`` 不是带 ``losses``、``checkpoint_steps``、``fixed_answers``、``scores`` 的实验结果。
    """
    run = _mapping(runs.sft() if run is None else run, "run", ("losses", "checkpoint_steps", "fixed_answers", "scores"))
    steps = tuple(int(s) for s in run["checkpoint_steps"])
    return Explorable(
        view=_SFTView,
        data={"run": run},
        sliders=[Slider("step", steps, label="微调步数", default=steps[-1])],
        title="指令微调：第 9 章的小 GPT 学答题（本书自己写的 40 道问答）",
        alt="指令微调第 {step} 步：左边是只在答案上算的损失曲线，右边是这时的模型对三道题的贪心回答"
            "（注意力、因果掩码训练过，矩阵乘法没训练过）。",
        size=(6.8, 3.8), ncols=2, narrow_size=(3.6, 6.6),
    )


# ---------------------------------------------------------------- LoRA：秩 → 要学的数和损失


class _LoraView:
    """左：每个秩的损失曲线（灰）和全部参数的微调（红），选中的秩画成蓝色；右：要学的数（对数轴）。"""

    def __init__(self, fig, axes, layout, ranks, losses, counts, full_losses, full_count):
        loss_ax, bar_ax = axes
        self.ranks, self.losses, self.counts, self.full_count = ranks, losses, counts, full_count
        self.full_final = float(np.mean(full_losses[-20:]))
        window = 10
        smooth = np.ones(window) / window
        steps = np.arange(window - 1, len(full_losses))
        for r in ranks:
            loss_ax.plot(steps, np.convolve(losses[r], smooth, "valid"), color=_GREY, lw=1.0)
        loss_ax.plot(steps, np.convolve(full_losses, smooth, "valid"), color=_FULL, lw=1.6, label="全部参数")
        self.line = loss_ax.plot(steps, np.convolve(losses[ranks[0]], smooth, "valid"), color=_LORA, lw=2.0,
                                 label="LoRA（选中的秩）")[0]
        self.smooth = smooth
        loss_ax.set_xlabel("微调步数")
        loss_ax.set_ylabel("损失（10 步平均）")
        loss_ax.grid(alpha=0.3)
        loss_ax.legend(loc="upper right", fontsize=9, frameon=False)
        names = [f"r={r}" for r in ranks] + ["全部"]
        values = [counts[r] for r in ranks] + [full_count]
        y = np.arange(len(names))
        self.bars = bar_ax.barh(y, values, color=[_GREY] * len(ranks) + [_FULL], height=0.6)
        bar_ax.set_xscale("log")
        bar_ax.set_yticks(y, names, fontsize=9)
        bar_ax.invert_yaxis()
        bar_ax.set_xlabel("要学的数（对数轴）")
        bar_ax.grid(axis="x", alpha=0.3)
        self.suptitle = fig.suptitle(" \n ", fontsize=10)
        self.artists = [self.line, *self.bars[:len(ranks)], self.suptitle]

    def update(self, rank):
        i = self.ranks.index(rank)
        curve = np.convolve(self.losses[rank], self.smooth, "valid")
        self.line.set_ydata(curve)
        for j, bar in enumerate(self.bars[:len(self.ranks)]):
            bar.set_color(_LORA if j == i else _GREY)
        final = float(np.mean(self.losses[rank][-20:]))
        share = self.counts[rank] / self.full_count
        self.suptitle.set_text(f"秩 r = {rank}：要学 {self.counts[rank]:,} 个数（全部参数的 {share:.1%}）\n"
                               f"最后 20 步的平均损失 {final:.2f}（全部参数 {self.full_final:.2f}）")
        return {"curve": curve, "count": np.array([self.counts[rank]]), "final": np.array([final, self.full_final])}


def lora_ranks(run: object = None, sft_run: object = None) -> Explorable:
    """第 13 章：拖 LoRA 的秩，看要学的数有多少（和全部参数比）、同样 200 步的损失降到哪里。

    ``run`` 是 ``tl.runs.lora()``、``sft_run`` 是 ``tl.runs.sft()`` 那样的结果（不传就用它们）；两者抽题的随机数相同。

    Raises
    ------
    TypeError
        ``run`` 或 ``sft_run`` 不是相应的实验结果。
    """
    run = _mapping(runs.lora() if run is None else run, "run", tuple(f"rank{r}" for r in assistant.LORA_RANKS))
    sft_run = _mapping(runs.sft() if sft_run is None else sft_run, "sft_run", ("losses", "trainable"))
    ranks = tuple(assistant.LORA_RANKS)
    return Explorable(
        view=_LoraView,
        data={"ranks": ranks, "losses": {r: np.asarray(run[f"rank{r}"]["losses"]) for r in ranks},
              "counts": {r: int(run[f"rank{r}"]["trainable"]) for r in ranks},
              "full_losses": np.asarray(sft_run["losses"]), "full_count": int(sft_run["trainable"])},
        sliders=[Slider("rank", ranks, label="秩 r", default=assistant.LORA["rank"])],
        title="LoRA：只学注意力投影上的低秩改动（同样的题、同样的步数）",
        alt="LoRA 秩为 {rank} 时：左边是它的损失曲线（蓝）、其他秩（灰）和全部参数的微调（红）；"
            "右边是每种做法要学的数，对数轴。",
        size=(6.8, 3.6), ncols=2, narrow_size=(3.6, 6.4),
    )


# ---------------------------------------------------------------- DPO：β 和步数 → 偏好差和离参照模型多远


class _DPOView:
    """左：偏好差比出发时多了多少（普通的 11 对取平均；标错的那一对单独一条）；右：离参照模型的 KL。"""

    def __init__(self, fig, axes, layout, betas, runs_by_beta):
        gap_ax, kl_ax = axes
        self.betas, self.runs = betas, runs_by_beta
        first = runs_by_beta[betas[0]]
        steps = np.arange(len(first["losses"]))
        self.curves = {}
        for name, color in (("平常的 11 对（平均）", _PAIRS), ("标错的那一对", _WRONG)):
            self.curves[name] = gap_ax.plot(steps, np.zeros(len(steps)), color=color, lw=1.8, label=name)[0]
        gap_ax.axhline(0, color="0.4", lw=0.8)
        top = max(float(np.abs(r["margins"] - r["ref_margins"]).max()) for r in runs_by_beta.values())
        gap_ax.set_ylim(-0.05 * top, top * 1.05)
        gap_ax.set_xlabel("DPO 步数")
        gap_ax.set_ylabel("偏好差比出发时多了多少")
        gap_ax.grid(alpha=0.3)
        gap_ax.legend(loc="upper left", fontsize=9, frameon=False)
        self.dots = [gap_ax.plot([], [], "o", color="black", ms=6, zorder=5)[0] for _ in range(2)]
        for beta in betas:
            r = runs_by_beta[beta]
            kl_ax.plot(r["checkpoint_steps"], r["kl"], "o-", color=_GREY, lw=1.0, ms=2.5)
            kl_ax.text(r["checkpoint_steps"][-1], r["kl"][-1], f" β={beta}", fontsize=9, va="center", color="0.35")
        self.kl_line = kl_ax.plot([], [], "o-", color=_LORA, lw=2.0, ms=3.5)[0]
        self.kl_dot = kl_ax.plot([], [], "o", color="black", ms=7, zorder=5)[0]
        kl_ax.set_xlim(0, float(first["checkpoint_steps"][-1]) * 1.25)
        kl_ax.set_xlabel("DPO 步数")
        kl_ax.set_ylabel("离参照模型多远（KL）")
        kl_ax.grid(alpha=0.3)
        self.narrow = layout.narrow
        self.suptitle = fig.suptitle(" \n \n \n " if layout.narrow else " \n ", fontsize=10)
        self.width = 20 if layout.narrow else 40
        self.artists = [*self.curves.values(), *self.dots, self.kl_line, self.kl_dot, self.suptitle]

    def update(self, beta, step):
        r = self.runs[beta]
        gain = np.asarray(r["margins"]) - np.asarray(r["ref_margins"])  # (S + 1, N)
        normal, wrong = gain[:, :-1].mean(axis=1), gain[:, -1]
        self.curves["平常的 11 对（平均）"].set_ydata(normal)
        self.curves["标错的那一对"].set_ydata(wrong)
        for dot, series in zip(self.dots, (normal, wrong)):
            dot.set_data([step], [series[step]])
        i = int(np.flatnonzero(np.asarray(r["checkpoint_steps"]) == step)[0])
        self.kl_line.set_data(r["checkpoint_steps"], r["kl"])
        self.kl_dot.set_data([step], [r["kl"][i]])
        margin = float(r["margins"][step, -1])
        side = "喜欢“等于二”（错的）" if margin > 0 else "仍喜欢“等于一”（对的）"
        sep = "\n" if self.narrow else "；"
        self.suptitle.set_text(f"β = {beta}，第 {step} 步：KL {r['kl'][i]:.3f}{sep}标错的那一对{side}\n"
                               f"答“什么是注意力权重”：{sep if self.narrow else ''}"
                               f"{_wrap(str(r['wrong_answers'][i]), self.width)}")
        return {"normal": normal, "wrong": wrong, "kl": np.array([r["kl"][i]]), "margin": np.array([margin])}


def dpo_beta(run: object = None) -> Explorable:
    """第 13 章：选 β、拖 DPO 步数，看偏好差怎样拉开、模型离出发时（参照模型）走了多远，以及它对
    "标错的那一对"那道题的回答。

    ``run`` 是 ``tl.runs.dpo()`` 那样的结果（不传就用它）。

    Raises
    ------
    TypeError
        ``run`` 不是带每个 β 的实验结果。
    """
    keys = tuple(f"beta{b}" for b in assistant.DPO_BETAS)
    run = _mapping(runs.dpo() if run is None else run, "run", keys)
    betas = tuple(assistant.DPO_BETAS)
    steps = tuple(int(s) for s in run[keys[0]]["checkpoint_steps"])
    return Explorable(
        view=_DPOView,
        data={"betas": betas, "runs_by_beta": {b: run[k] for b, k in zip(betas, keys)}},
        sliders=[Slider("beta", betas, label="β", default=betas[0]),
                 Slider("step", steps, label="DPO 步数", default=steps[-1])],
        title="DPO：把喜欢的回答往上推、不喜欢的往下压（从指令微调后的模型出发）",
        alt="β = {beta}、DPO 第 {step} 步：左边是偏好差（喜欢的减不喜欢的对数概率）比出发时多了多少，"
            "普通的 11 对取平均、标错的那一对单独一条；右边是离参照模型的平均 KL，三种 β 各一条。",
        size=(6.8, 3.8), ncols=2, narrow_size=(3.6, 6.6),
    )
