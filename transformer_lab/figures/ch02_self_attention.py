"""第 2 章的图：点一个词看它在听谁；换一个词看代词改主意。另有一张静态的特征热力图。

所有权重都来自 ``toy_sentences`` 里手工设计的词向量和投影矩阵，图的标题上写明这一点。
"""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import Rectangle

from .. import _validation as check
from ..lessons.toy_sentences import FEATURES, discuss, sentence_names, sentence_text, toy_sentence, variant_names
from ..plot.bars import weight_bars
from ..plot.heatmap import attention_heatmap, labelled_heatmap
from ..widgets.explorable import Explorable, Slider

__all__ = ["attention_explorer", "pronoun_shift", "feature_heatmap"]

ILLUSTRATIVE_NOTE = "手工设计的示意权重，不是训练所得"
TURNS = ("第 1 轮", "第 2 轮")
_PLAIN = "#31688e"   # viridis 的蓝
_MARKED = "#e3702d"  # 橙色：要留意的那根柱子
_GROUPS = (6, 9)     # FEATURES 的分组边界：名词是什么 | 代词线索 | 描述词


def _rotate_ticks(ax: Axes, labels: tuple[str, ...]) -> None:
    ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right", rotation_mode="anchor")


class _ExplorerView:
    """左：选中那个词的一行权重（柱状图）；右：整张权重矩阵，选中的一行加框。"""

    def __init__(self, fig, axes, layout, tokens, weights):
        self.tokens, self.weights = tokens, weights  # 词；两轮的 (T, T) 权重
        T = len(tokens)
        self.bars = weight_bars(np.zeros(T), list(self.tokens), ax=axes[0], color=_PLAIN)
        _rotate_ticks(axes[0], self.tokens)
        axes[0].set_ylabel("注意力权重")
        self.heat = attention_heatmap(np.zeros((T, T)), list(self.tokens), ax=axes[1], title="整张权重矩阵",
                                      annotate=False)  # 这一行的数值写在左边的柱子上
        _rotate_ticks(axes[1], self.tokens)
        self.box = Rectangle((-0.5, -0.5), T, 1, fill=False, edgecolor="#d62728", linewidth=2.2)
        axes[1].add_patch(self.box)
        fig.suptitle(f"{sentence_text(self.tokens)}\n（{ILLUSTRATIVE_NOTE}）", fontsize=11)
        self.axes = axes
        # 随滑块变化的图元：拖动时只重画它们（见 Explorable 的 blitting）
        self.artists = [*self.bars.artists, *self.heat.artists, self.box, axes[0].title, axes[1].title]

    def update(self, query, turn):
        i, t = self.tokens.index(query), TURNS.index(turn)
        weights = self.weights[t]  # (T, T)
        row = weights[i]  # (T,)
        self.bars.set_values(row)
        self.axes[0].set_title(f"{turn}：「{query}」分给每个词的注意力（和为 1）")
        self.heat.set_values(weights)
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

    Raises
    ------
    TypeError, ValueError
        ``sentence`` 不是合法的句子名。
    """
    s = toy_sentence(check.one_of(sentence, "sentence", sentence_names()))
    text = sentence_text(s.tokens)
    return Explorable(
        view=_ExplorerView,
        data={"tokens": s.tokens, "weights": discuss(s.x)[1]},
        sliders=[Slider("query", s.tokens, label="查询词", default=s.tokens[s.pronoun]),
                 Slider("turn", TURNS, label="讨论轮次", default=TURNS[1])],
        title=f"点一个词，看它在听谁：{text}",
        alt=f"句子「{text}」中，「{{query}}」在{{turn}}分给全句每个词的注意力权重：左边柱状图是这一行，"
            f"右边是整张权重矩阵，这一行加了红框。{ILLUSTRATIVE_NOTE}。",
        size=(11.5, 5.0),
        ncols=2,
    )


class _ShiftView:
    """代词在两轮里的那一行：第 1 轮找线索（橙色 = 换掉的词），第 2 轮找指代（橙色 = 人读出的对象）。

    换句子时代词和描述词会变，所以横轴上的词是自己画的文字（可以 ``set_text``），不是刻度标签。
    """

    def __init__(self, fig, axes, layout, shifts):
        self.shifts = shifts  # 变体名 -> (词, 两轮里代词那一行, 两张图各要标橙色的位置, 两个子图标题)
        longest = [max(column, key=len) for column in zip(*(v[0] for v in shifts.values()))]  # 每个位置最长的词
        T = len(longest)
        self.bars = [weight_bars(np.zeros(T), [""] * T, ax=ax, color=_PLAIN) for ax in axes]
        for ax in axes:  # 透明的占位刻度：让排版按最长的词留出空间（排版只做一次）
            _rotate_ticks(ax, tuple(longest))
            ax.tick_params(axis="x", labelcolor="none")
        self.labels = [[ax.text(j, -0.03, "", transform=ax.get_xaxis_transform(), rotation=45, ha="right",
                                va="top", rotation_mode="anchor") for j in range(T)] for ax in axes]
        axes[0].set_ylabel("代词分给每个词的注意力")
        self.axes, self.suptitle = axes, fig.suptitle(" ", fontsize=11)
        self.artists = [*self.bars[0].artists, *self.bars[1].artists, *self.labels[0], *self.labels[1],
                        axes[0].title, axes[1].title, self.suptitle]

    def update(self, variant):
        tokens, rows, marked, titles = self.shifts[variant]
        for ax, bars, labels, row, mark, title in zip(self.axes, self.bars, self.labels, rows, marked, titles):
            bars.set_values(row)
            for j, (bar, label) in enumerate(zip(bars.bars, labels)):
                bar.set_color(_MARKED if j == mark else _PLAIN)
                label.set_text(tokens[j])
            ax.set_title(title)
        self.suptitle.set_text(f"{sentence_text(tokens)}\n（{ILLUSTRATIVE_NOTE}；"
                               "橙色柱：左 = 换掉的词，右 = 人读出的指代对象）")
        return {"turn1": rows[0], "turn2": rows[1]}


def _shift(sentence: str, variant: str) -> tuple:
    """一个变体的全部数据：词、两轮里代词那一行、两张图各要标橙色的位置、两个子图标题。"""
    s = toy_sentence(sentence, variant)
    _, weights = discuss(s.x)
    rows = [w[s.pronoun] for w in weights]  # 两轮里代词那一行，各 (T,)
    marked = (s.predicate, s.tokens.index(s.referent))
    pron = s.tokens[s.pronoun]
    titles = (f"第 1 轮 找线索：「{pron}」听谁说了自己什么",
              f"第 2 轮 找指代：「{pron}」指谁（人读出的是 {s.referent}）")
    return s.tokens, rows, marked, titles


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

    Raises
    ------
    TypeError, ValueError
        ``sentence`` 不是合法的句子名。
    """
    sentence = check.one_of(sentence, "sentence", sentence_names())
    variants = variant_names(sentence)
    return Explorable(
        view=_ShiftView,
        data={"shifts": {v: _shift(sentence, v) for v in variants}},
        sliders=[Slider("variant", variants, label="换成", default=variants[0])],
        title=f"换一个词，代词改主意：{sentence_text(toy_sentence(sentence).tokens)}",
        alt="句末换成「{variant}」时，代词在第 1 轮（找线索）和第 2 轮（找指代）分给每个词的注意力权重。"
            f"{ILLUSTRATIVE_NOTE}。",
        size=(11.0, 4.2),
        ncols=2,
    )


def feature_heatmap(x: np.ndarray, row_labels: list[str] | tuple[str, ...], ax: Axes | None = None,
                    title: str = "", vmax: float = 1.0):
    """静态图：每行一个词（或一个时刻），每列一个带名字的特征（``FEATURES``），格子里写数值（0 不写）。

    白色竖线把特征分成三组：名词"是什么" | 代词自带的线索 | 描述词"能说谁"。

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
    Heatmap

    Raises
    ------
    TypeError, ValueError
        ``x`` 不是实数数组、含 NaN/inf，或形状不是 (len(row_labels), len(FEATURES))；``row_labels`` 不是字符串列表。
    """
    x = check.as_real_array(x, "x")
    row_labels = check.string_list(row_labels, "row_labels")
    if x.shape != (len(row_labels), len(FEATURES)):
        raise ValueError(f"x 的形状 {x.shape} 不对：应为 ({len(row_labels)}, {len(FEATURES)})——"
                         f"每行一个词（row_labels 有 {len(row_labels)} 个），每列一个特征（FEATURES 有 {len(FEATURES)} 个）。")
    heat = labelled_heatmap(x, list(row_labels), FEATURES, ax=ax, title=title, vmax=vmax, skip_zeros=True,
                            aspect="auto")
    for edge in _GROUPS:
        heat.image.axes.axvline(edge - 0.5, color="white", linewidth=2)
    return heat
