"""第 9 章的可交互图：下一个字的概率（温度、top-k、top-p）、训练过程中模型写的字、一次生成的逐步演示，
以及编码器和解码器（只差一个因果掩码）的对照。

三张可交互图读的都是 ``tl.runs.gpt()``（在本书正文上训练出来的小 GPT，不是设计的）；
也可以把算好的一次训练直接交给图（``run=``），图不重算。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from ..core.attention import causal_mask
from ..core.decoding import next_token_probs
from ..lessons import runs as experiments
from ..lessons.corpus import load_corpus
from ..lessons.generation import generation_trace, next_token_logits
from ..lessons.ngram import baseline_losses
from ..lessons.optim import as_run
from ..plot.figure import CMAP
from ..plot.sampling import KEPT, SamplingBars, sampling_title
from ..widgets.explorable import FRAME_CAP, Explorable, Slider

__all__ = ["next_token_bars", "training_checkpoints", "generation_steps", "encoder_vs_decoder",
           "BAR_PROMPT", "TEMPERATURES", "TOP_KS", "TOP_PS", "NO_LIMIT", "SHOWN", "GEN_PROMPT", "GEN_NEW"]

BAR_PROMPT = "注意力权"
TEMPERATURES = (0.0, 0.5, 1.0, 2.0)
NO_LIMIT = "不限"
TOP_KS = (NO_LIMIT, 5, 2)
TOP_PS = (1.0, 0.9, 0.5)
SHOWN = 10  # 条形图画原始概率最大的 10 个字
GEN_PROMPT, GEN_NEW = "每个词", 10
_NEW = "#b5367a"  # 最新读进的字（词元）
_UNIGRAM, _BIGRAM = "#e08214", "#35978f"  # 两张计数表的横线


def _show_char(c: str) -> str:
    """把看不见的字写成看得见的记号：换行 → "⏎"，空格 → "␣"，其余不变。

    >>> _show_char("\\n"), _show_char(" "), _show_char("字")
    ('⏎', '␣', '字')
    """
    return {"\n": "⏎", " ": "␣"}.get(c, c)


def _gpt_run(run: object, name: str = "run"):
    if run is None:
        return experiments.gpt()
    return as_run(run, name, ("test_loss", "train_loss", "chars", "samples", "prompts", "config"))


def _prompt(prompt: object) -> str:
    if not isinstance(prompt, str) or not prompt:
        raise TypeError(f"prompt 必须是非空的字符串（一段提示词，例如 {BAR_PROMPT!r}），收到的是 {check.describe(prompt)}。")
    return prompt


def _wrap(text: str, width: int) -> str:
    return "\n".join(text[i:i + width] for i in range(0, len(text), width))


# ---------------------------------------------------------------- 下一个字的概率：温度、top-k、top-p


class _BarsView:
    """原始概率最大的 SHOWN 个字：柱子 = 调过温度、截过 top-k/top-p 之后的概率；小横线 = 原始概率（温度 1）。"""

    def __init__(self, fig, axes, layout, logits, chars, prompt):
        (ax,) = axes
        self.logits = logits
        self.order = np.argsort(-logits, kind="stable")[:SHOWN]  # (SHOWN,) 原始打分从高到低
        self.narrow = layout.narrow
        self.view = SamplingBars(
            fig, ax, next_token_probs(logits)[self.order], [_show_char(chars[i]) for i in self.order], unit="字",
            tick_style={"fontsize": 11}, marker_size=16, ylabel="下一个字的概率",
            xlabel=f"“{prompt}”之后最可能的 {SHOWN} 个字" if not layout.narrow else f"“{prompt}”之后的字", title_size=10)
        self.artists = self.view.artists

    def update(self, temperature, top_k, top_p):
        k = None if top_k == NO_LIMIT else int(top_k)
        probs = next_token_probs(self.logits, float(temperature), k, float(top_p))  # (V,)
        shown = probs[self.order]  # (SHOWN,)
        kept = int(np.count_nonzero(probs))
        self.view.show(shown, str(kept), sampling_title(temperature, top_k, top_p, self.narrow, "：同一组打分，换一种抽法"))
        return {"probs": probs, "shown": shown, "kept": np.array([kept])}


def next_token_bars(run: object = None, prompt: str = BAR_PROMPT) -> Explorable:
    """第 9 章：读完提示词之后，下一个字的概率；拖温度、top-k、top-p，看概率怎样重新分配。

    ``run`` 是 ``tl.runs.gpt()`` 那样的一次训练（不传就用它），图用它最后一个检查点的打分。
    """
    prompt = _prompt(prompt)  # 先查便宜的参数：不传 run 时下一行要先训练
    run = _gpt_run(run)
    logits = next_token_logits(run["checkpoints"][-1], run["chars"], prompt)
    return Explorable(
        view=_BarsView,
        data={"logits": logits, "chars": run["chars"], "prompt": prompt},
        sliders=[Slider("temperature", TEMPERATURES, label="温度", default=1.0),
                 Slider("top_k", TOP_KS, label="top-k", default=NO_LIMIT),
                 Slider("top_p", TOP_PS, label="top-p", default=1.0)],
        title=f"读完“{prompt}”，下一个字的概率（训练出来的小 GPT）",
        alt=f"读完“{prompt}”之后最可能的 {SHOWN} 个字的概率柱状图：温度 {{temperature}}、top-k {{top_k}}、"
            "top-p {top_p}；被截掉的字概率为 0，画成灰色。",
        size=(6.8, 3.6), narrow_size=(3.6, 3.6),
    )


# ---------------------------------------------------------------- 训练过程：损失和写的字


class _CheckpointView:
    """左（窄版在上）：训练损失和考试损失随步数，黑点 = 当前检查点；两条横线是两张计数表在同一份考题上的损失
    （对照：不训练、只数数能做到多好）；右（窄版在下）：这个检查点接着三个提示词写的字。"""

    def __init__(self, fig, axes, layout, run, baselines):
        self.run = run
        loss_ax, text_ax = axes
        losses = np.asarray(run["losses"])
        steps = np.asarray(run["checkpoint_steps"])
        loss_ax.plot(np.arange(len(losses)), losses, color="#31688e", lw=0.8, alpha=0.6, label="训练（每一批）")
        loss_ax.plot(steps, run["test_loss"], "o-", color="#b5367a", lw=1.6, ms=3, label="考试（没读过的段落）")
        for (name, rule), color in zip((("一元表", "只数字频"), ("二元表", "只看前一个字")), (_UNIGRAM, _BIGRAM)):
            loss = baselines[name]
            label = f"{name}（困惑度 {np.exp(loss):.0f}）" if layout.narrow else f"计数{name}：{rule}（困惑度 {np.exp(loss):.0f}）"
            loss_ax.axhline(loss, color=color, ls=":", lw=1.6, label=label)
        guess = float(np.log(len(run["chars"])))
        loss_ax.axhline(guess, color="0.4", ls="--", lw=1)
        loss_ax.text(steps[-1], guess, "瞎猜 log|V|", ha="right", va="bottom", fontsize=9, color="0.3")
        loss_ax.set_ylim(0, guess + 1.0)
        loss_ax.set_xlabel("训练步数")
        loss_ax.set_ylabel("损失 = log 困惑度")
        loss_ax.legend(loc="lower left", fontsize=8.5 if layout.narrow else 9, frameon=False)
        loss_ax.grid(alpha=0.3)
        self.dot = loss_ax.plot([], [], "o", color="black", ms=7, zorder=5)[0]
        text_ax.set_axis_off()
        self.width = 16 if layout.narrow else 14
        self.texts = [text_ax.text(0.0, 1.0 - 0.34 * i, "", transform=text_ax.transAxes, va="top", fontsize=9.5,
                                   linespacing=1.25) for i in range(len(run["prompts"]))]
        self.suptitle = fig.suptitle(" ", fontsize=10)
        self.artists = [self.dot, *self.texts, self.suptitle]

    def update(self, step):
        i = self.run.at(step)
        loss = float(self.run["test_loss"][i])
        self.dot.set_data([step], [loss])
        samples = [str(s) for s in self.run["samples"][i]]
        for text, prompt, sample in zip(self.texts, self.run["prompts"], samples):
            body = "".join(_show_char(c) for c in sample[len(str(prompt)):])
            text.set_text(f"【{prompt}】" + _wrap(body, self.width))
        self.suptitle.set_text(f"第 {step} 步：考试损失 {loss:.2f}，困惑度 {np.exp(loss):.1f}")
        return {"test_loss": np.array([loss]), "checkpoint": np.array([i])}  # 写的字在 run["samples"][checkpoint]


def training_checkpoints(run: object = None) -> Explorable:
    """第 9 章：拖训练步数，看小 GPT 从乱码到像样的字词，旁边是它的损失曲线，以及一元、二元计数表
    （``ngram.baseline_losses``，同一份考题）的损失作对照。

    ``run`` 是 ``tl.runs.gpt()`` 那样的一次训练（不传就用它）。
    """
    run = _gpt_run(run)
    steps = tuple(int(s) for s in run["checkpoint_steps"])
    return Explorable(
        view=_CheckpointView,
        data={"run": run, "baselines": baseline_losses(load_corpus())},
        sliders=[Slider("step", steps, label="训练步数", default=steps[-1])],
        title="训练中的小 GPT：损失和它写的字（在本书正文上训练出来的）",
        alt="训练第 {step} 步时，小 GPT 的训练损失和考试损失曲线，旁边两条横线是一元、二元计数表在同一份考题上的损失，"
            "以及它接着三个提示词各写的 40 个字。",
        size=(6.8, 3.8), ncols=2, narrow_size=(3.6, 6.4),
    )


# ---------------------------------------------------------------- 一次生成，一步一步


class _StepView:
    """左（窄版在上）：最新读进的字看前文的注意力（最后一层，各头平均）；右（窄版在下）：每一层的 KV 缓存存了哪些字。
    还没写出来的位置没有字：两边都只标已有的字，其余的格子罩上灰色，写着"还没写"。"""

    def __init__(self, fig, axes, layout, trace, num_layers):
        self.trace = trace
        att_ax, cache_ax = axes
        S = trace["attention"].shape[-1]
        x = np.arange(S)
        self.bars = att_ax.bar(x, np.zeros(S), color=KEPT, width=0.7)
        att_ax.set_ylim(0, 1.05)
        att_ax.set_ylabel("注意力权重")
        att_ax.set_title("最新的字看前文（最后一层，各头平均）", fontsize=9.5 if layout.narrow else 10)
        self.L, self.narrow = num_layers, layout.narrow
        self.image = cache_ax.imshow(np.zeros((num_layers, S)), cmap=CMAP, vmin=0, vmax=2, aspect="auto")
        cache_ax.set_yticks(range(num_layers), [f"第 {n + 1} 层" for n in range(num_layers)])
        cache_ax.set_title("KV 缓存里存着的字（亮 = 刚存进）", fontsize=9.5 if layout.narrow else 10)
        self.labels, self.future = [], []
        for ax in (att_ax, cache_ax):  # 字写在轴下面（每一步改写），而不是固定的刻度：后面的字还没写出来
            ax.set_xlim(-0.5, S - 0.5)
            ax.set_xticks(x, [""] * S)
            self.labels.append([ax.text(i, -0.03, "", transform=ax.get_xaxis_transform(), ha="center", va="top",
                                        fontsize=10) for i in x])
            span = ax.axvspan(S - 0.5, S - 0.5, color="0.85", zorder=3)
            note = ax.text(S - 0.5, 0.5, "还没写", transform=ax.get_xaxis_transform(), ha="center", va="center",
                           fontsize=9.5, color="0.35", zorder=4)
            self.future.append((span, note))
        self.S = S
        self.suptitle = fig.suptitle(" ", fontsize=10)
        self.artists = [*self.bars, self.image, *(t for row in self.labels for t in row),
                        *(a for pair in self.future for a in pair), self.suptitle]

    def update(self, step):
        s = int(step) - 1
        tr = self.trace
        n = int(tr["cache_length"][s])
        weights = tr["attention"][s, -1].mean(axis=0)  # (S,) 最后一层，各头平均
        for i, (bar, value) in enumerate(zip(self.bars, weights)):
            bar.set_height(value)
            bar.set_color(_NEW if i == n - 1 else KEPT)
        grid = np.where(np.arange(weights.size) < n, 1.0, 0.0)  # (S,)
        grid = np.where(np.arange(weights.size) == n - 1, 2.0, grid)
        self.image.set_data(np.tile(grid, (self.L, 1)))  # (L, S)
        for row in self.labels:  # 只标已经在缓存里的字
            for i, label in enumerate(row):
                label.set_text(_show_char(tr["context"][i]) if i < n else "")
        for span, note in self.future:  # 灰色罩住还没写的格子
            span.set_x(n - 0.5)
            span.set_width(self.S - n)
            note.set_x((n - 1 + self.S) / 2)  # 灰色区域的正中
            note.set_rotation(0 if self.S - n >= 3 else 90)  # 只剩一两格时竖着写，不伸出图外
            note.set_visible(n < self.S)
        reading, written = _show_char(tr["context"][n - 1]), _show_char(tr["new"][s])
        self.suptitle.set_text(f"第 {step} 步：读进“{reading}”，缓存里 {n} 个字\n写出“{written}”（贪心：取概率最大的字）"
                               if self.narrow else
                               f"第 {step} 步：读进“{reading}”，缓存里 {n} 个字，写出“{written}”（贪心：取概率最大的字）")
        labelled = sum(bool(label.get_text()) for label in self.labels[0])  # 轴下标出了几个字（只标已经写出来的）
        return {"weights": weights, "cache_length": np.array([n]), "token": tr["tokens"][s:s + 1],  # token: 写出的字的编号
                "labelled": np.array([labelled])}


def generation_steps(run: object = None, prompt: str = GEN_PROMPT, num_new: int = GEN_NEW) -> Explorable:
    """第 9 章：一步一步看小 GPT 贪心地写 ``num_new`` 个字：最新的字看前文的注意力、KV 缓存一格一格变长。

    ``run`` 是 ``tl.runs.gpt()`` 那样的一次训练（不传就用它），用它最后一个检查点。
    """
    prompt = _prompt(prompt)  # 先查便宜的参数：不传 run 时下一行要先训练
    num_new = check.at_most(check.positive_int(num_new, "num_new"), "num_new", FRAME_CAP, "每写一个字是静态网页上的一帧")
    run = _gpt_run(run)
    model = run["checkpoints"][-1]
    trace = generation_trace(model, run["chars"], prompt, num_new)
    num_layers = model.config.num_layers
    return Explorable(
        view=_StepView,
        data={"trace": trace, "num_layers": num_layers},
        sliders=[Slider("step", tuple(range(1, num_new + 1)), label="第几步", default=1)],
        title=f"接着“{prompt}”一个字一个字地写（贪心，带 KV 缓存）",
        alt="生成的第 {step} 步：最新读进的字对前文每个字的注意力柱状图，以及每一层 KV 缓存里存了哪些字；"
            "还没写出来的位置罩着灰色，标着“还没写”。",
        size=(6.8, 3.4), ncols=2, narrow_size=(3.6, 5.6),
    )


# ---------------------------------------------------------------- 编码器 vs 只有解码器


ENC_DEC_TOKENS = ("猜", "下", "一", "个", "字")


class _MaskView:
    """两张"谁能看谁"的表：编码器（全看）与解码器（只看自己和前面），被挡住的格子打 ×。"""

    def __init__(self, fig, axes, layout, tokens):
        T = len(tokens)
        masks = (np.ones((T, T), dtype=bool), causal_mask(T))
        titles = (("编码器（不加掩码）", "每个字看全部，如第 8 章的倒序模型"), ("只有解码器（本章的小 GPT）", "只看自己和前面"))
        notes = ("用途：读懂一句话（BERT 这一类）", "用途：猜下一个字（GPT 这一类）")
        for ax, mask, (head, rule), note in zip(axes, masks, titles, notes):
            ax.imshow(mask.astype(float), cmap=CMAP, vmin=-0.3, vmax=1.3)
            for i in range(T):
                for j in range(T):
                    if not mask[i, j]:
                        ax.text(j, i, "×", ha="center", va="center", fontsize=11, color="white")
            ax.set_xticks(range(T), tokens)
            ax.set_yticks(range(T), tokens)
            ax.set_xlabel(f"被看的字（键）\n{note}", fontsize=9)
            ax.set_ylabel("正在读的字（查询）")
            ax.set_title(f"{head}\n{rule}", fontsize=10)
        self.masks = masks
        self.artists = []

    def update(self):
        return {"encoder": self.masks[0], "decoder": self.masks[1]}


def encoder_vs_decoder() -> Explorable:
    """第 9 章（静态图）：编码器和只有解码器的模型用的是同一层，只差一个因果掩码。"""
    return Explorable(
        view=_MaskView,
        data={"tokens": ENC_DEC_TOKENS},
        sliders=[],
        title="编码器和只有解码器：同一层，只差一个因果掩码",
        alt="两张 5×5 的表：编码器里每个字都能看全部 5 个字；只有解码器的模型里，第 t 个字只能看第 0 到 t 个字，右上角打了 ×。",
        size=(6.8, 3.9), ncols=2, narrow_size=(3.6, 7.4),
    )
