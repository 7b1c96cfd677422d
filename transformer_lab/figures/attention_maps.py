"""第 2 章的图：点一个词看它在听谁；换一个词看代词改主意。另有一张静态的特征热力图。

所有权重都来自 ``toy_sentences`` 里手工设计的词向量和投影矩阵，图的标题上写明这一点。
"""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import Rectangle

from ..explorable import Explorable, Slider
from ..plotting import attention_heatmap, new_figure, text_color, weight_bars
from ..toy_sentences import FEATURES, discuss, toy_sentence, variant_names

__all__ = ["attention_explorer", "pronoun_shift"]

HONEST = "手工设计的示意权重，不是训练所得"
TURNS = ("第 1 轮", "第 2 轮")
_PLAIN = "#31688e"   # viridis 的蓝
_MARKED = "#e3702d"  # 橙色：要留意的那根柱子
_GROUPS = (6, 9)     # FEATURES 的分组边界：名词是什么 | 代词线索 | 描述词


def sentence_text(tokens: tuple[str, ...]) -> str:
    """把词连成句子：英文词之间加空格，标点和中文不加。

    Examples
    --------
    >>> sentence_text(("The", "animal", "was", "tired", "."))
    'The animal was tired.'
    >>> sentence_text(("小明", "把", "苹果", "，", "因为", "tā", "饿了"))
    '小明把苹果，因为tā饿了'
    """
    text = tokens[0]
    for prev, tok in zip(tokens, tokens[1:]):
        spaced = prev.isascii() and tok.isascii() and tok[0].isalnum()
        text += (" " if spaced else "") + tok
    return text


def _rotate_ticks(ax: Axes, labels: tuple[str, ...]) -> None:
    ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right", rotation_mode="anchor")


class _ExplorerView:
    """左：选中那个词的一行权重（柱状图）；右：整张权重矩阵，选中的一行加框。"""

    def __init__(self, fig, axes, query, turn, sentence):
        s = toy_sentence(sentence)
        self.tokens = s.tokens
        _, self.weights = discuss(s.x)  # 两轮的 (T, T) 权重
        T = len(self.tokens)
        self.bars = weight_bars(np.zeros(T), list(self.tokens), ax=axes[0], color=_PLAIN)
        _rotate_ticks(axes[0], self.tokens)
        axes[0].set_ylabel("注意力权重")
        self.heat = attention_heatmap(np.zeros((T, T)), list(self.tokens), ax=axes[1], title="整张权重矩阵",
                                      annotate=False)  # 这一行的数值写在左边的柱子上
        _rotate_ticks(axes[1], self.tokens)
        self.box = Rectangle((-0.5, -0.5), T, 1, fill=False, edgecolor="#d62728", linewidth=2.2)
        axes[1].add_patch(self.box)
        fig.suptitle(f"{sentence_text(self.tokens)}\n（{HONEST}）", fontsize=11)
        self.axes = axes
        self.update(query, turn)
        # 随滑块变化的图元：拖动时只重画它们（见 Explorable 的 blitting）
        self.artists = [*self.bars.artists, *self.heat.artists, self.box, axes[0].title, axes[1].title]

    def update(self, query, turn):
        i, t = self.tokens.index(query), TURNS.index(turn)
        weights = self.weights[t]  # (T, T)
        row = weights[i]  # (T,)
        self.bars.update(row)
        self.axes[0].set_title(f"{turn}：「{query}」分给每个词的注意力（和为 1）")
        self.heat.update(weights)
        self.heat.image.axes.set_title(f"{turn}：整张权重矩阵（框内是「{query}」这一行）")
        self.box.set_y(i - 0.5)
        return {"row": row, "weights": weights}


def attention_explorer(sentence: str = "animal") -> Explorable:
    """第 2 章：选一个词当查询，看它在第 1、2 轮讨论中把注意力分给了谁。

    Parameters
    ----------
    sentence : str
        ``"animal"`` 或 ``"apple"``（见 ``toy_sentences.sentence_names()``）。

    Returns
    -------
    Explorable
        滑块：查询词（句子里的每个词）× 讨论轮次（2 轮）。
    """
    s = toy_sentence(sentence)
    text = sentence_text(s.tokens)
    return Explorable(
        make_view=lambda fig, axes, query, turn: _ExplorerView(fig, axes, query, turn, sentence),
        sliders=[Slider("query", s.tokens, label="查询词", default=s.tokens[s.pronoun]),
                 Slider("turn", TURNS, label="讨论轮次", default=TURNS[1])],
        title=f"点一个词，看它在听谁：{text}",
        alt=f"句子「{text}」中，「{{query}}」在{{turn}}分给全句每个词的注意力权重：左边柱状图是这一行，"
            f"右边是整张权重矩阵，这一行加了红框。{HONEST}。",
        size=(11.5, 5.0),
        ncols=2,
    )


class _ShiftView:
    """代词在两轮里的那一行：第 1 轮找线索（橙色 = 换掉的词），第 2 轮找指代（橙色 = 人读出的对象）。

    换句子时代词和描述词会变，所以横轴上的词是自己画的文字（可以 ``set_text``），不是刻度标签。
    """

    def __init__(self, fig, axes, variant, sentence):
        self.sentence = sentence
        variants = [toy_sentence(sentence, v).tokens for v in variant_names(sentence)]
        longest = [max(column, key=len) for column in zip(*variants)]  # 每个位置最长的词
        T = len(longest)
        self.bars = [weight_bars(np.zeros(T), [""] * T, ax=ax, color=_PLAIN) for ax in axes]
        for ax in axes:  # 透明的占位刻度：让排版按最长的词留出空间（排版只做一次）
            _rotate_ticks(ax, tuple(longest))
            ax.tick_params(axis="x", labelcolor="none")
        self.labels = [[ax.text(j, -0.03, "", transform=ax.get_xaxis_transform(), rotation=45, ha="right",
                                va="top", rotation_mode="anchor") for j in range(T)] for ax in axes]
        axes[0].set_ylabel("代词分给每个词的注意力")
        self.fig, self.axes = fig, axes
        fig.suptitle(" ", fontsize=11)
        self.update(variant)
        self.artists = [*self.bars[0].artists, *self.bars[1].artists, *self.labels[0], *self.labels[1],
                        axes[0].title, axes[1].title, fig._suptitle]

    def update(self, variant):
        s = toy_sentence(self.sentence, variant)
        _, weights = discuss(s.x)
        rows = [w[s.pronoun] for w in weights]  # 两轮里代词那一行，各 (T,)
        marked = (s.predicate, s.tokens.index(s.referent))
        pron = s.tokens[s.pronoun]
        titles = (f"第 1 轮 找线索：「{pron}」听谁说了自己什么",
                  f"第 2 轮 找指代：「{pron}」指谁（人读出的是 {s.referent}）")
        for ax, bars, labels, row, mark, title in zip(self.axes, self.bars, self.labels, rows, marked, titles):
            bars.update(row)
            for j, (bar, label) in enumerate(zip(bars.bars, labels)):
                bar.set_color(_MARKED if j == mark else _PLAIN)
                label.set_text(s.tokens[j])
            ax.set_title(title)
        self.fig.suptitle(f"{sentence_text(s.tokens)}\n（{HONEST}；橙色柱：左 = 换掉的词，右 = 人读出的指代对象）",
                          fontsize=11)
        return {"turn1": rows[0], "turn2": rows[1]}


def pronoun_shift(sentence: str = "animal") -> Explorable:
    """第 2 章：只换句末的描述词（tired → wide，饿了 → 很甜……），看代词的注意力怎么搬家。

    Parameters
    ----------
    sentence : str
        ``"animal"`` 或 ``"apple"``。

    Returns
    -------
    Explorable
        滑块：换成哪个词（``toy_sentences.variant_names(sentence)``）。
    """
    variants = variant_names(sentence)
    return Explorable(
        make_view=lambda fig, axes, variant: _ShiftView(fig, axes, variant, sentence),
        sliders=[Slider("variant", variants, label="换成", default=variants[0])],
        title=f"换一个词，代词改主意：{sentence_text(toy_sentence(sentence).tokens)}",
        alt="句末换成「{variant}」时，代词在第 1 轮（找线索）和第 2 轮（找指代）分给每个词的注意力权重。"
            f"{HONEST}。",
        size=(11.0, 4.2),
        ncols=2,
    )


def feature_heatmap(x: np.ndarray, row_labels: list[str] | tuple[str, ...], ax: Axes | None = None,
                    title: str = "", vmax: float = 1.0):
    """静态图：每行一个词（或一个时刻），每列一个带名字的特征，格子里写数值（0 不写）。

    Parameters
    ----------
    x : ndarray of shape (T, D)
        D = len(FEATURES)。
    row_labels : list of str, length T
    ax : Axes, optional
    title : str
    vmax : float
        颜色上限，固定下来，几张图的颜色才可比。

    Returns
    -------
    AxesImage
    """
    x = np.asarray(x)
    if x.shape != (len(row_labels), len(FEATURES)):
        raise ValueError(f"x 的形状 {x.shape} 不对：期望 ({len(row_labels)}, {len(FEATURES)})。")
    if ax is None:
        ax = new_figure(7.0, 0.45 * len(row_labels) + 2.0)[1][0]
    image = ax.imshow(x, cmap="viridis", vmin=0.0, vmax=vmax, aspect="auto")
    ax.set_xticks(range(len(FEATURES)), FEATURES, rotation=45, ha="right", rotation_mode="anchor")
    ax.set_yticks(range(len(row_labels)), row_labels)
    for (i, j), value in np.ndenumerate(x):
        if value != 0:
            ax.text(j, i, f"{value:.2f}".rstrip("0").rstrip("."), ha="center", va="center", fontsize=8,
                    color=text_color(value, vmax))
    for edge in _GROUPS:
        ax.axvline(edge - 0.5, color="white", linewidth=2)
    ax.set_title(title)
    ax.figure.colorbar(image, ax=ax, shrink=0.8)
    return image
