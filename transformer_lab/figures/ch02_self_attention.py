"""第 2 章的图：点一个词看它在听谁；换一个词看代词改主意。另有两张静态图：句子的特征、it 的笔记。

所有权重都来自 ``toy_sentences`` 里手工设计的词向量和投影矩阵，图的标题上写明这一点。

手机上（窄版）子图竖着排；一行权重画成横着的柱子（词竖着列在左边，数写在柱子右端），
12 个词的数横着排在 3.6 英寸里挤不下。
"""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Rectangle

from .. import _validation as check
from ..lessons.toy_sentences import FEATURES, discuss, sentence_names, sentence_text, toy_sentence, variant_names
from ..plot.bars import horizontal_bars, weight_bars
from ..plot.heatmap import attention_heatmap, colorbar_below, labelled_heatmap
from ..plot.text import wrap_sentence
from ..plot.ticks import slanted_ticks
from ..widgets.explorable import Explorable, Slider

__all__ = ["attention_explorer", "pronoun_shift", "feature_heatmap", "sentence_features"]

ILLUSTRATIVE_NOTE = "手工设计的示意权重，不是训练所得"
FEATURE_NOTE = "手工设计的示意，不是训练所得"
TURNS = ("第 1 轮", "第 2 轮")
TITLE_PT = 10        # 子图标题；总标题大 1 号
_PLAIN = "#31688e"   # viridis 的蓝
_MARKED = "#e3702d"  # 橙色：要留意的那根柱子
_GROUPS = (6, 9)     # FEATURES 的分组边界：名词是什么 | 代词线索 | 描述词


class _ExplorerView:
    """一行权重 + 整张权重矩阵（选中的一行加框）。宽版：竖柱和矩阵的列一一对齐；窄版：横柱在上，矩阵在下。"""

    def __init__(self, fig, axes, layout, tokens, weights):
        self.tokens, self.weights = tokens, weights  # 词；两轮的 (T, T) 权重
        T = len(tokens)
        self.narrow = layout.narrow
        if layout.narrow:  # 12 个数横着排挤不下：柱子横过来，词竖着列在左边
            self.bars = horizontal_bars(T, ax=axes[0])
            axes[0].set_yticks(range(T), tokens)
            axes[0].set_xlabel("注意力权重")
        else:  # 竖柱和右边矩阵的列（被关注的词）一一对应
            self.bars = weight_bars(np.zeros(T), list(self.tokens), ax=axes[0], color=_PLAIN, ylim=(0.0, 1.12))
            slanted_ticks(axes[0], self.tokens)
            axes[0].set_ylabel("注意力权重")
            for text in self.bars.texts:  # 柱子只有约 0.25 英寸宽，横着写的 "0.02" 会连成一串：竖着写
                text.set_rotation(90)
        self.heat = attention_heatmap(np.zeros((T, T)), list(self.tokens), ax=axes[1], annotate=False)
        if layout.narrow:
            axes[1].set_xticks(range(T), tokens, rotation=90)
            colorbar_below(self.heat)
        else:
            slanted_ticks(axes[1], self.tokens)
        self.box = Rectangle((-0.5, -0.5), T, 1, fill=False, edgecolor="#d62728", linewidth=2.2)
        axes[1].add_patch(self.box)
        text = sentence_text(self.tokens)
        fig.suptitle(f"{wrap_sentence(text) if layout.narrow else text}\n（{ILLUSTRATIVE_NOTE}）", fontsize=TITLE_PT + 1)
        self.axes = axes
        # 随滑块变化的图元：拖动时只重画它们（见 Explorable 的 blitting）
        self.artists = [*self.bars.artists, *self.heat.artists, self.box, axes[0].title, axes[1].title]

    def update(self, query, turn):
        i, t = self.tokens.index(query), TURNS.index(turn)
        weights = self.weights[t]  # (T, T)
        row = weights[i]  # (T,)
        self.bars.set_values(row)
        self.axes[0].set_title(f"{turn}：「{query}」在听谁（和为 1）", fontsize=TITLE_PT)
        self.heat.set_values(weights)
        self.axes[1].set_title(f"{turn}：整张权重表（框内是「{query}」）", fontsize=TITLE_PT)
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
        alt=f"句子「{text}」中，「{{query}}」在{{turn}}分给全句每个词的注意力权重：第一张子图的柱子是这一行，"
            f"第二张子图是整张权重矩阵，这一行加了红框。{ILLUSTRATIVE_NOTE}。",
        size=(6.8, 3.9),
        narrow_size=(3.6, 7.6),
        ncols=2,
    )


class _ShiftView:
    """代词在两轮里的那一行：第 1 轮找线索（橙色 = 换掉的词），第 2 轮找指代（橙色 = 人读出的对象）。

    宽版两张竖柱图并排（柱顶的数竖着写），窄版两张横柱图上下叠（数写在柱子右端）。
    换句子时代词和描述词会变，所以词是自己画的文字（可以 ``set_text``），不是刻度标签；
    透明的占位刻度按每个位置最长的词留出地方（排版只做一次）。
    """

    def __init__(self, fig, axes, layout, shifts):
        self.shifts = shifts  # 变体名 -> (词, 两轮里代词那一行, 两张图各要标橙色的位置, 两个子图标题)
        longest = [max(column, key=len) for column in zip(*(v[0] for v in shifts.values()))]  # 每个位置最长的词
        T = len(longest)
        self.narrow = layout.narrow
        if layout.narrow:
            self.bars = [horizontal_bars(T, ax=ax) for ax in axes]
            for ax in axes:
                ax.set_yticks(range(T), longest)
                ax.tick_params(axis="y", labelcolor="none")
                ax.set_xlabel("代词分给每个词的注意力")
            self.labels = [[ax.text(-0.03, j, "", transform=ax.get_yaxis_transform(), ha="right", va="center")
                            for j in range(T)] for ax in axes]
        else:
            self.bars = [weight_bars(np.zeros(T), [""] * T, ax=ax, color=_PLAIN, ylim=(0.0, 1.12)) for ax in axes]
            for ax, bars in zip(axes, self.bars):
                slanted_ticks(ax, tuple(longest))
                ax.tick_params(axis="x", labelcolor="none")
                for text in bars.texts:  # 柱子只有约 0.25 英寸宽：数竖着写
                    text.set_rotation(90)
            self.labels = [[ax.text(j, -0.03, "", transform=ax.get_xaxis_transform(), rotation=45, ha="right",
                                    va="top", rotation_mode="anchor") for j in range(T)] for ax in axes]
            axes[0].set_ylabel("代词分给每个词的注意力")
        self.axes, self.suptitle = axes, fig.suptitle(" ", fontsize=TITLE_PT + 1)
        self.artists = [*self.bars[0].artists, *self.bars[1].artists, *self.labels[0], *self.labels[1],
                        axes[0].title, axes[1].title, self.suptitle]

    def update(self, variant):
        tokens, rows, marked, titles = self.shifts[variant]
        for ax, bars, labels, row, mark, title in zip(self.axes, self.bars, self.labels, rows, marked, titles):
            bars.set_values(row)
            for j, (bar, label) in enumerate(zip(bars.bars, labels)):
                bar.set_color(_MARKED if j == mark else _PLAIN)
                label.set_text(tokens[j])
            ax.set_title(title, fontsize=TITLE_PT)
        text = sentence_text(tokens)
        self.suptitle.set_text(f"{wrap_sentence(text) if self.narrow else text}\n（{ILLUSTRATIVE_NOTE}）")
        return {"turn1": rows[0], "turn2": rows[1]}


def _shift(sentence: str, variant: str) -> tuple:
    """一个变体的全部数据：词、两轮里代词那一行、两张图各要标橙色的位置、两个子图标题。"""
    s = toy_sentence(sentence, variant)
    _, weights = discuss(s.x)
    rows = [w[s.pronoun] for w in weights]  # 两轮里代词那一行，各 (T,)
    marked = (s.predicate, s.tokens.index(s.referent))
    pron = s.tokens[s.pronoun]
    titles = (f"第 1 轮 找线索：「{pron}」听谁说了自己什么\n（橙色：换掉的词「{s.tokens[s.predicate]}」）",
              f"第 2 轮 找指代：「{pron}」指谁\n（橙色：人读出的是「{s.referent}」）")
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
        size=(6.8, 4.0),
        ncols=2,
        narrow_size=(3.6, 7.8),
    )


def _cell_text(value: float) -> str:
    """格子里的数：整数写成 "1"（窄格子也放得下），其余保留两位小数。"""
    return f"{value:.0f}" if value == round(value) else f"{value:.2f}"


class _FeatureView:
    """一张或几张特征热力图（每行一个词或一个时刻，每列一个带名字的特征），格子里写数（0 不写）。

    白线把特征分成三组：名词"是什么" | 代词自带的线索 | 描述词"能说谁"。几张图的颜色上限相同，色条只画一个。
    窄版（手机）上一行 12 个格子只有约 0.2 英寸宽，写不下 "0.74"：行数少（≤ 6）时把表转过来
    （特征竖着列，每行的那几个时刻横着排），行数多又有小数时不写数、只留色条。
    """

    def __init__(self, fig, axes, layout, panels, vmax, note):
        self.panels = panels  # [(x (R, D), 行名, 标题), ...]
        self.heats = []
        if note:  # 几张图共用的一句说明
            fig.suptitle(f"（{note}）", fontsize=TITLE_PT + 1)
        for k, (ax, (x, rows, title)) in enumerate(zip(axes, panels)):
            flip = layout.narrow and len(rows) <= 6
            matrix, row_labels, col_labels = (x.T, FEATURES, rows) if flip else (x, rows, FEATURES)
            whole = bool(np.all(x == np.round(x)))
            annotate = whole or flip or not layout.narrow
            heat = labelled_heatmap(matrix, list(row_labels), list(col_labels), ax=ax, title=title, vmax=vmax,
                                    annotate=annotate, skip_zeros=True, aspect="auto")
            ax.title.set_fontsize(TITLE_PT)
            for text, value in zip(heat.texts, matrix[matrix != 0]):  # 与 labelled_heatmap 写数的顺序相同
                text.set_text(_cell_text(float(value)))
            if flip:
                ax.set_xticks(range(len(col_labels)), col_labels, rotation=0, ha="center")  # 几个时刻横着写得下
            elif layout.narrow or len(panels) > 1:  # 一列不到 0.25 英寸：斜着写的特征名会叠在一起，竖着写
                ax.set_xticks(range(len(col_labels)), col_labels, rotation=90)
            for edge in _GROUPS:
                (ax.axhline if flip else ax.axvline)(edge - 0.5, color="white", linewidth=2)
            if k < len(panels) - 1:  # 颜色上限相同：色条只留最后一张图的
                heat.image.colorbar.remove()
            elif layout.narrow:
                colorbar_below(heat)
            self.heats.append(heat)

    def update(self):
        return {f"x{k}": x for k, (x, _, _) in enumerate(self.panels)}


def _check_features(x: object, row_labels: object, name: str = "x", rows_name: str = "row_labels") -> tuple:
    x = check.as_real_array(x, name)
    row_labels = check.string_list(row_labels, rows_name)
    if x.shape != (len(row_labels), len(FEATURES)):
        raise ValueError(f"{name} 的形状 {x.shape} 不对：应为 ({len(row_labels)}, {len(FEATURES)})——"
                         f"每行一个词（{rows_name} 有 {len(row_labels)} 个），每列一个特征（FEATURES 有 {len(FEATURES)} 个）。")
    return x, row_labels


def feature_heatmap(x: np.ndarray, row_labels: list[str] | tuple[str, ...], title: str = "",
                    vmax: float = 1.0) -> Explorable:
    """静态图：每行一个词（或一个时刻），每列一个带名字的特征（``FEATURES``），格子里写数值（0 不写）。

    白色竖线把特征分成三组：名词"是什么" | 代词自带的线索 | 描述词"能说谁"。标题的第二行注明
    "手工设计的示意，不是训练所得"。

    Parameters
    ----------
    x : ndarray of shape (T, D)
        D = len(FEATURES)。
    row_labels : list of str, length T
    title : str
        标题的第一行，例如 ``"it 的笔记"``（手机上一行放得下约 16 个汉字）。
    vmax : float
        颜色上限，固定下来，几张图的颜色才可比。

    Returns
    -------
    Explorable
        没有滑块的静态图。窄版（手机）上行数 ≤ 6 的表转过来画（特征竖着列），格子才写得下两位小数。

    Raises
    ------
    TypeError, ValueError
        ``x`` 不是实数数组、含 NaN/inf，或形状不是 (len(row_labels), len(FEATURES))；``row_labels`` 不是字符串列表；
        ``title`` 不是字符串；``vmax`` 不是正数。
    """
    x, row_labels = _check_features(x, row_labels)
    if not isinstance(title, str):
        raise TypeError(f"title 必须是字符串，收到的是 {check.describe(title)}。")
    vmax = check.positive_real(vmax, "vmax")
    shown = f"{title}\n（{FEATURE_NOTE}）" if title else f"（{FEATURE_NOTE}）"
    narrow_height = 4.6 if len(row_labels) <= 6 else 1.6 + 0.2 * len(row_labels)
    return Explorable(
        view=_FeatureView,
        data={"panels": [(x, row_labels, shown)], "vmax": vmax, "note": ""},
        sliders=[],
        title=title or "特征热力图",
        alt=(f"特征热力图{('「' + title + '」') if title else ''}：行是 {'、'.join(row_labels)}，列是 {len(FEATURES)} 个手工设计的特征"
             f"（{'、'.join(FEATURES)}），格子里写着不为 0 的值。{FEATURE_NOTE}。"),
        size=(6.8, 1.9 + 0.3 * len(row_labels)),
        narrow_size=(3.6, narrow_height),
    )


def sentence_features(sentences: tuple[str, ...] | list[str] = ("animal", "apple")) -> Explorable:
    """静态图：几句玩具句子的特征（``toy_sentence(name).x``），一句一张热力图；宽版并排，窄版上下叠。

    Parameters
    ----------
    sentences : tuple of str
        句子名（见 ``toy_sentences.sentence_names()``），1 或 2 句。

    Returns
    -------
    Explorable
        没有滑块的静态图。每张图的标题是"英文句子的特征"或"中文句子的特征"。

    Raises
    ------
    TypeError, ValueError
        ``sentences`` 不是 1 或 2 个合法句子名的元组或列表。
    """
    names = check.string_list(sentences, "sentences")
    if len(names) > 2:
        raise ValueError(f"sentences 最多 2 句（宽版并排两张图），收到的是 {len(names)} 句：{list(names)}。")
    panels = []
    for name in names:
        s = toy_sentence(check.one_of(name, "sentences 里的句子名", sentence_names()))
        lang = "英文" if all(t.isascii() for t in s.tokens) else "中文"
        panels.append((s.x, s.tokens, f"{lang}句子的特征"))
    texts = "；".join(f"「{sentence_text(tokens)}」" for _, tokens, _ in panels)
    return Explorable(
        view=_FeatureView,
        data={"panels": panels, "vmax": 1.0, "note": "手工设计的示意特征，不是训练所得"},
        sliders=[],
        title="句子的特征（" + FEATURE_NOTE + "）",
        alt=(f"{len(panels)} 张特征热力图：{texts}。每行一个词，每列一个手工设计的特征（{'、'.join(FEATURES)}），"
             f"词有这个特征就写 1，没有就空着。{FEATURE_NOTE}。"),
        size=(6.8, 4.6),
        ncols=len(panels),
        narrow_size=(3.6, 4.0 * len(panels)),
    )
