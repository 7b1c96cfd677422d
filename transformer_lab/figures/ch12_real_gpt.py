"""第 12 章的可交互图：一个真正预训练过的 GPT（SmolLM2-135M-Instruct），在本书自己的 NumPy 代码里写字。

三张图读的都是 ``tl.pretrained.load("SmolLM2-135M-Instruct")``（同一进程里只载入一次）：下一个词元的概率
（第 9 章的温度、top-k、top-p，现在是真模型的打分）、一次生成的逐步演示（最新的词元在 30 层里各看前文的谁，
KV 缓存一格一格变长）、一句话的 30 层 × 9 个头的注意力图（和第 10 章那张一样，只是现在带因果掩码）。
图上的数都是模型算出来的，不是设计的。view 只画 notebook 或工厂函数算好的数组。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from ..core.decoding import next_token_probs
from ..lessons.generation import generate
from ..plot.figure import CMAP
from ..plot.heatmap import attention_heatmap
from ..plot.sampling import SamplingBars, sampling_title
from ..pretrained import load
from ..widgets.explorable import FRAME_CAP, Explorable, Slider

__all__ = ["MODEL", "BAR_PROMPT", "TEMPERATURES", "TOP_KS", "TOP_PS", "NO_LIMIT", "SHOWN", "GEN_PROMPT", "GEN_NEW",
           "MAP_PROMPT", "MAP_LAYERS", "gpt_next_token", "gpt_generation_steps", "gpt_attention_map"]

MODEL = "SmolLM2-135M-Instruct"
BAR_PROMPT = "Once upon a time, there was a little"
TEMPERATURES = (0.0, 0.5, 1.0, 2.0)
NO_LIMIT = "不限"
TOP_KS = (NO_LIMIT, 50, 5)
TOP_PS = (1.0, 0.9, 0.5)
SHOWN = 10  # 条形图画原始概率最大的 10 个词元
GEN_PROMPT, GEN_NEW = "Once upon a time, there was a little", 12
MAP_PROMPT = "The animal didn't cross the street because it was too tired."  # 第 10 章的那句话
MAP_LAYERS = (1, 2, 6, 12, 18, 24, 30)  # 30 层里取 7 层（帧数：7 × 9 = 63）
_NEW = "#b5367a"  # 最新读进的字（词元）


def _show_token(piece: str) -> str:
    """把一个词元的文字写成看得见的样子：开头的空格 → "␣"，换行 → "⏎"。

    >>> _show_token(" girl"), _show_token("\\n"), _show_token("Once")
    ('␣girl', '⏎', 'Once')
    """
    return piece.replace("\n", "⏎").replace(" ", "␣")


def _prompt(prompt: object, example: str) -> str:
    if not isinstance(prompt, str) or not prompt.strip():
        raise TypeError(f"prompt 必须是非空的字符串（一段英文提示词，例如 {example!r}），收到的是 {check.describe(prompt)}。")
    return prompt


# ---------------------------------------------------------------- 下一个词元的概率：温度、top-k、top-p


class _BarsView:
    """原始概率最大的 SHOWN 个词元：柱子 = 调过温度、截过 top-k/top-p 之后的概率；小横线 = 原始概率（温度 1）。"""

    def __init__(self, fig, axes, layout, logits, labels, prompt):
        (ax,) = axes
        self.logits = logits
        self.order = np.argsort(-logits, kind="stable")[:SHOWN]  # (SHOWN,) 原始打分从高到低
        self.narrow = layout.narrow
        ticks = {"fontsize": 9, "rotation": 60 if layout.narrow else 30, "ha": "right", "rotation_mode": "anchor"}
        self.view = SamplingBars(fig, ax, next_token_probs(logits)[self.order], labels, unit="词元", tick_style=ticks,
                                 marker_size=14, ylabel="下一个词元的概率", xlabel=None,
                                 title_size=9 if layout.narrow else 10)
        self.artists = self.view.artists

    def update(self, temperature, top_k, top_p):
        k = None if top_k == NO_LIMIT else int(top_k)
        probs = next_token_probs(self.logits, float(temperature), k, float(top_p))  # (V,)
        shown = probs[self.order]  # (SHOWN,)
        kept = int(np.count_nonzero(probs))
        self.view.show(shown, f"{kept:,}", sampling_title(temperature, top_k, top_p, self.narrow,
                                                          "：SmolLM2 的同一组打分，换一种抽法", "\nSmolLM2 的打分（训练出来的）"))
        return {"probs": probs, "shown": shown, "kept": np.array([kept])}


def gpt_next_token(prompt: str = BAR_PROMPT) -> Explorable:
    """第 12 章：SmolLM2 读完英文提示词之后，下一个词元的概率；拖温度、top-k、top-p（第 9 章的三个旋钮）。

    Parameters
    ----------
    prompt : str
        提示词（纯文字，英文读得最好），默认 ``BAR_PROMPT``。

    Raises
    ------
    TypeError
        ``prompt`` 不是非空的字符串。
    ValueError
        提示词切出的词元超过模型的上下文长度（同 ``GPTModel.logits``）。
    """
    prompt = _prompt(prompt, BAR_PROMPT)
    model = load(MODEL)
    logits = model.logits(model.encode(prompt))[-1].astype(np.float64)  # (V,) 最后一个位置的打分
    order = np.argsort(-logits, kind="stable")[:SHOWN]
    labels = tuple(_show_token(model.decode([int(i)])) for i in order)
    return Explorable(
        view=_BarsView,
        data={"logits": logits, "labels": labels, "prompt": prompt},
        sliders=[Slider("temperature", TEMPERATURES, label="温度", default=1.0),
                 Slider("top_k", TOP_KS, label="top-k", default=NO_LIMIT),
                 Slider("top_p", TOP_PS, label="top-p", default=1.0)],
        title=f"SmolLM2 读完“{prompt}”，下一个词元的概率",
        alt=f"SmolLM2-135M-Instruct 读完“{prompt}”之后最可能的 {SHOWN} 个词元的概率柱状图：温度 {{temperature}}、"
            "top-k {top_k}、top-p {top_p}；被截掉的词元概率为 0，画成灰色；小横线是原始概率。",
        size=(6.8, 3.8), narrow_size=(3.6, 4.2),
    )


# ---------------------------------------------------------------- 一次生成，一步一步：30 层的注意力和 KV 缓存


class _StepView:
    """最新读进的词元在每一层（9 个头平均）看前文的谁：行 = 30 层，列 = 前文的词元（轴下斜着写）；还没写出来的位置罩上灰色。
    标题写着这一步读进、写出的词元和 KV 缓存的大小。"""

    def __init__(self, fig, axes, layout, attention, context, written, cache_length, bytes_per_token):
        (ax,) = axes
        self.attention, self.context, self.written = attention, context, written
        self.cache_length, self.bytes_per_token = cache_length, bytes_per_token
        L, S = attention.shape[1], attention.shape[2]
        self.image = ax.imshow(np.zeros((L, S)), cmap=CMAP, vmin=0, vmax=1, aspect="auto", interpolation="nearest")
        ticks = [0, 9, 19, 29] if L == 30 else list(range(0, L, max(1, L // 4)))
        ax.set_yticks(ticks, [f"第 {t + 1} 层" for t in ticks], fontsize=9)
        ax.set_xlim(-0.5, S - 0.5)
        ax.set_xticks(np.arange(S), [""] * S)
        self.labels = [ax.text(i, -0.02, "", transform=ax.get_xaxis_transform(), ha="right", va="top", fontsize=9,
                               rotation=60, rotation_mode="anchor") for i in range(S)]
        self.span = ax.axvspan(S - 0.5, S - 0.5, color="0.85", zorder=3)
        self.future = ax.text(S - 0.5, 0.5, "还没写", transform=ax.get_xaxis_transform(), ha="center", va="center",
                              fontsize=9, color="0.35", zorder=4)
        # 轴下的词元每步才写上：x 轴标题离轴留够地方（斜着写的最长词元），排版时就为它们留出空间
        ax.set_xlabel("前文的词元（键）", labelpad=38, fontsize=9)
        self.S, self.narrow = S, layout.narrow
        self.suptitle = fig.suptitle(" ", fontsize=9 if layout.narrow else 10)
        self.artists = [self.image, *self.labels, self.span, self.future, self.suptitle]

    def update(self, step):
        s = int(step) - 1
        n = int(self.cache_length[s])
        weights = self.attention[s]  # (L, S) 各头平均
        self.image.set_data(weights)
        for i, label in enumerate(self.labels):
            label.set_text(self.context[i].strip() or "␣" if i < n else "")
            label.set_color(_NEW if i == n - 1 else "black")
        self.span.set_x(n - 0.5)
        self.span.set_width(self.S - n)
        self.future.set_x((n - 1 + self.S) / 2)
        self.future.set_rotation(0 if self.S - n >= 3 else 90)
        self.future.set_visible(n < self.S)
        kb = n * self.bytes_per_token / 1024
        reading, written = _show_token(self.context[n - 1]), _show_token(self.written[s])
        sep = "\n" if self.narrow else "，"
        self.suptitle.set_text(f"第 {step} 步：读进“{reading}”{sep}写出“{written}”（贪心）\n"
                               f"KV 缓存 {n} 个词元，{kb:,.0f} KB")
        return {"weights": weights, "cache_length": np.array([n]), "cache_bytes": np.array([n * self.bytes_per_token])}


def gpt_generation_steps(prompt: str = GEN_PROMPT, num_new: int = GEN_NEW) -> Explorable:
    """第 12 章：SmolLM2 贪心地写 ``num_new`` 个词元，一步一步看：最新读进的词元在 30 层里各看前文的谁，
    KV 缓存每步多存一个词元（第 9 章 ``lessons.generation.generate`` 的同一个循环）。

    Parameters
    ----------
    prompt : str
        提示词，默认 ``GEN_PROMPT``。
    num_new : int
        写几个词元（每写一个是静态网页上的一帧），1 到 ``FRAME_CAP``。

    Raises
    ------
    TypeError
        ``prompt`` 不是非空的字符串，或 ``num_new`` 不是整数。
    ValueError
        ``num_new`` 小于 1 或超过 ``FRAME_CAP``。
    """
    prompt = _prompt(prompt, GEN_PROMPT)
    num_new = check.at_most(check.positive_int(num_new, "num_new"), "num_new", FRAME_CAP, "每写一个词元是静态网页上的一帧")
    model = load(MODEL)
    ids = model.encode(prompt)
    out = generate(model, np.array(ids), num_new)  # 贪心，KV 缓存
    attention = out["attention"].mean(axis=2)  # (num_new, L, S) 各头平均
    tokens = [int(t) for t in out["tokens"]]
    context = [model.decode([t]) for t in ids + tokens]
    c = model.config
    bytes_per_token = 2 * c.num_layers * c.num_kv_heads * c.d_k * 4  # k 和 v，每层 H_kv 个头，float32
    return Explorable(
        view=_StepView,
        data={"attention": attention, "context": tuple(context), "written": tuple(context[len(ids):]),
              "cache_length": out["cache_length"], "bytes_per_token": bytes_per_token},
        sliders=[Slider("step", tuple(range(1, num_new + 1)), label="第几步", default=1)],
        title=f"SmolLM2 接着“{prompt}”一个词元一个词元地写（贪心，带 KV 缓存）",
        alt="生成的第 {step} 步：最新读进的词元在 30 层里（每层 9 个头平均）对前文每个词元的注意力热力图；"
            "还没写出来的位置罩着灰色；标题写着读进、写出的词元和 KV 缓存的大小。",
        size=(6.8, 4.4), narrow_size=(3.6, 5.0),
    )


# ---------------------------------------------------------------- 一句话：30 层 × 9 个头的因果注意力图


class _MapView:
    """一张注意力热力图（行 = 查询词元，列 = 键词元），滑块选层和头；右上角（后面的词元）是因果掩码挡住的 0。"""

    def __init__(self, fig, axes, layout, weights, tokens, layers):
        self.weights, self.layers, self.narrow = weights, layers, layout.narrow
        shown = [t.strip() or "␣" for t in tokens]
        self.heat = attention_heatmap(np.zeros((len(tokens),) * 2), shown, ax=axes[0], title="", annotate=False)
        ax = axes[0]
        ax.set_xlabel("被关注的词元（键）")
        ax.set_ylabel("提问的词元（查询）")
        ax.tick_params(labelsize=9)
        self.it = shown.index("it") if "it" in shown else None
        if self.it is not None:
            ax.get_yticklabels()[self.it].set_color(_NEW)
        if layout.narrow:
            self.heat.image.colorbar.remove()
            self.heat.image.axes.set_aspect("auto")
        self.suptitle = fig.suptitle(" ", fontsize=9 if layout.narrow else 10)
        self.artists = [*self.heat.artists, self.suptitle]

    def update(self, layer, head):
        w = self.weights[self.layers.index(layer), head - 1].astype(np.float64)  # (T, T)
        self.heat.set_values(w)
        first = float(w[1:, 0].mean())  # 除第一个词元自己以外，各行给第一个词元的平均
        sep = "\n" if self.narrow else "，"
        self.suptitle.set_text(f"SmolLM2 第 {layer} 层第 {head} 头{sep}各行平均给第一个词元 {first:.2f}"
                               + ("" if self.narrow else "（训练出来的，右上角被因果掩码挡住）"))
        return {"weights": w, "first": np.array([first])}


def gpt_attention_map(prompt: str = MAP_PROMPT) -> Explorable:
    """第 12 章：SmolLM2 读一句话，第 ``MAP_LAYERS`` 层 × 9 个头的注意力图（因果：每个词元只看自己和前面）。

    Parameters
    ----------
    prompt : str
        这句话，默认第 10 章的 it 那句 ``MAP_PROMPT``。

    Raises
    ------
    TypeError
        ``prompt`` 不是非空的字符串。
    ValueError
        这句话切出的词元多于 40 个（图上写不下）。
    """
    prompt = _prompt(prompt, MAP_PROMPT)
    model = load(MODEL)
    ids = model.encode(prompt)
    if len(ids) > 40:
        raise ValueError(f"prompt 切出的词元最多 40 个（热力图的每个格子要写得下），收到的这句有 {len(ids)} 个。")
    _, weights = model.feed_unchecked(np.array(ids), model.new_caches(len(ids)))  # [(H, T, T)] × L
    picked = np.stack([weights[layer - 1] for layer in MAP_LAYERS])  # (7, H, T, T)
    tokens = tuple(model.decode([i]) for i in ids)
    H = picked.shape[1]
    return Explorable(
        view=_MapView,
        data={"weights": picked, "tokens": tokens, "layers": MAP_LAYERS},
        sliders=[Slider("layer", MAP_LAYERS, label="第几层", default=2),  # 第 2 层第 3 头：看前一个词元（0.66）
                 Slider("head", tuple(range(1, H + 1)), label="第几个头", default=3)],
        title="SmolLM2 读一句话的注意力图：每个词元只看自己和前面",
        alt=f"SmolLM2-135M-Instruct 第 {{layer}} 层第 {{head}} 个头读“{prompt}”的注意力热力图（行 = 查询词元，"
            "列 = 键词元）；右上角是因果掩码挡住的 0。",
        size=(6.4, 5.2), narrow_size=(3.6, 4.6), max_frames=len(MAP_LAYERS) * H, frame_dpi=100,
    )
