"""第 11 章的可交互图：BPE 一次次合并之后一句话怎样切、词表大小换来了什么、几种分词器切同一句话。

合并规则是本书自己的 BPE（``tokenization.book_bpe``：在第 9 章的训练文字上训练的，不是设计的）；第 10 章的两个
分词器来自 ``tl.pretrained`` 里真模型的词表。工厂函数把每一帧要画的词元全部算好交给 view，view 只画。
词元画成一个个小方框，按屏幕宽度折行；半个汉字（不成字符的字节）写成两位十六进制数，方框是灰色的。
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping

import numpy as np

from .. import _validation as check
from ..lessons import bpe, tokenization
from ..lessons.corpus import held_out_split, load_corpus
from ..lessons.gpt_model import GPTConfig
from ..lessons.runs import BPE_GPT_VOCAB, GPT
from ..pretrained import gpt_tokenizer, load
from ..pretrained.unigram import display_token
from ..widgets.explorable import FRAME_CAP, Explorable, Slider

__all__ = ["bpe_merges", "vocab_costs", "tokenizer_compare", "MERGE_STEPS", "SENTENCE"]

SENTENCE = tokenization.PARALLEL[0]  # (中文, 英文)：意思相同的一对
MERGE_STEPS = (0, 1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 768, 1500, 3840)
_FILL, _FILL_ALT, _BYTE, _NEW = "#cfe1f2", "#f6e3b4", "#dddddd", "#b5367a"
_ZH, _EN = "#b5367a", "#31688e"
_HEX = re.compile(r"<([0-9a-f]{2})>")
_FONT = 10.0  # 方框里的字号 (pt)


def _shown(piece: str) -> str:
    """方框里写的字：空格 → ␣，``<e6>`` 这样的半个字符 → ``e6``。"""
    return _HEX.sub(r"\1", piece.replace(" ", "␣").replace("\n", "⏎"))


def _pieces_width(piece: str) -> float:
    """一个方框里的字有多宽，以字号 (em) 为单位：汉字和全角符号 1 个，其余的约 0.66 个（偏宽地估计，不出界）。

    >>> _pieces_width("注意"), _pieces_width("ab")
    (2.0, 1.32)
    """
    return sum(1.0 if unicodedata.east_asian_width(c) in "WF" else 0.66 for c in _shown(piece))


def _place(pieces: list[str], line_em: float) -> list[tuple[int, float]]:
    """每个方框放在第几行、左边距多少 em：从左往右排，放不下就折到下一行。"""
    out, line, x = [], 0, 0.0
    for p in pieces:
        w = _pieces_width(p) + 0.6  # 方框的内边距和间隔
        if x > 0 and x + w > line_em:
            line, x = line + 1, 0.0
        out.append((line, x))
        x += w
    return out


def _pair(sentence: object) -> tuple[str, str]:
    """(中文, 英文) 两句话，都不是空的。"""
    sentence = check.string_list(sentence, "sentence")
    if len(sentence) != 2:
        raise ValueError(f"sentence 必须是 (中文, 英文) 两句话，收到 {len(sentence)} 句。")
    return tuple(check.nonempty_text(s, f"sentence[{i}]") for i, s in enumerate(sentence))


class _TokenRows:
    """一个子图里画一句话的词元：一池子文字方框，每帧改字、位置、颜色，用不到的藏起来。"""

    def __init__(self, fig, ax, frames: list[list[str]], full_width: bool = False):
        ax.set_axis_off()
        fig.draw_without_rendering()  # 先排版（constrained layout），子图的实际宽度才定下来
        if full_width:  # 不跟下面那个子图的左边对齐（它的左边留给了刻度的字）：占满整个图宽，版式不再管它
            pos = ax.get_position()
            ax.set_in_layout(False)
            ax.set_position([0.02, pos.y0, 0.96, pos.height])
        line_em = ax.get_position().width * fig.get_figwidth() * 72 / _FONT * 0.95  # 一行能放多少 em（留出余量）
        lines = max(line for f in frames for line, _ in _place(f, line_em)) + 1  # 最长的一帧要几行
        pool = max(map(len, frames))
        ax.set_xlim(0, line_em)
        ax.set_ylim(max(lines, 3) - 0.4, -1.0)
        self.line_em = line_em
        self.head = ax.text(0, -0.85, "", fontsize=9.5, va="center", ha="left", color="0.25")
        self.boxes = [ax.text(0, 0, "", fontsize=_FONT, va="center", ha="left", visible=False,
                              bbox={"boxstyle": "round,pad=0.2", "fc": _FILL, "ec": "0.5", "lw": 0.6})
                      for _ in range(pool)]
        for t in (self.head, *self.boxes):
            t.set_in_layout(False)  # 版式不跟着每帧的字变
        self.artists = [self.head, *self.boxes]

    def show(self, pieces: list[str], head: str, new: str | None = None) -> int:
        self.head.set_text(head)
        spots = _place(pieces, self.line_em)
        for i, box in enumerate(self.boxes):
            if i >= len(pieces):
                box.set_visible(False)
                continue
            line, x = spots[i]
            fill = _BYTE if _HEX.search(pieces[i]) else (_FILL, _FILL_ALT)[i % 2]
            box.set_text(_shown(pieces[i]))
            box.set_position((x + 0.2, line))
            box.get_bbox_patch().set_facecolor(fill)
            box.get_bbox_patch().set_edgecolor(_NEW if pieces[i] == new else "0.5")
            box.get_bbox_patch().set_linewidth(2.0 if pieces[i] == new else 0.6)
            box.set_visible(True)
        return max((line for line, _ in spots), default=0) + 1


# ---------------------------------------------------------------- 合并第几次：一句中文、一句英文


class _MergeView:
    def __init__(self, fig, axes, layout, segments, newest, sentence):
        zh_ax, en_ax = axes
        self.segments, self.newest, self.sentence = segments, newest, sentence
        self.suptitle = fig.suptitle(" \n " if layout.narrow else " ", fontsize=10)
        self.rows = [_TokenRows(fig, ax, [s[i] for s in segments.values()]) for i, ax in enumerate((zh_ax, en_ax))]
        self.narrow = layout.narrow
        self.artists = [*self.rows[0].artists, *self.rows[1].artists, self.suptitle]

    def update(self, merges):
        pieces = self.segments[merges]
        new = self.newest[merges]
        lines = []
        for row, text, part, unit in zip(self.rows, self.sentence, pieces, ("个字", "个字符")):
            lines.append(row.show(part, f"{'中文' if row is self.rows[0] else '英文'}：{len(text)} {unit} → "
                                        f"{len(part)} 个词元", new))
        tail = f"最新学到的词元：“{_shown(new)}”" if new else "还没有合并：每个字节一个词元"
        sep = "\n" if self.narrow else "；"
        self.suptitle.set_text(f"合并 {merges} 次（词表 {256 + merges}）{sep}{tail}")
        return {"counts": np.array([len(p) for p in pieces]), "lines": np.array(lines)}


def bpe_merges(merges: object = None, sentence: tuple[str, str] = SENTENCE) -> Explorable:
    """第 11 章：拖"合并次数"，看同一句中文、英文被本书的 BPE 切成怎样的词元；粗红框是最新学到的那个词元。

    ``merges`` 是 ``bpe.train`` 那样的合并规则（不传就用 ``tokenization.book_bpe()``），至少要有 ``MERGE_STEPS``
    里最大的那么多条；``sentence`` 是 (中文, 英文) 两句话。

    Raises
    ------
    TypeError
        ``sentence`` 不是字符串的列表，或 ``merges`` 不是合并规则。
    ValueError
        ``merges`` 不到 ``MERGE_STEPS[-1]`` 条，或 ``sentence`` 不是两句话。
    """
    merges = list(tokenization.book_bpe() if merges is None else merges)
    table = bpe.vocab(merges)  # 顺便检查每条规则
    if len(merges) < MERGE_STEPS[-1]:
        raise ValueError(f"merges 至少要有 {MERGE_STEPS[-1]} 条合并规则（滑块拖到最后一格要用），收到 {len(merges)} 条。")
    sentence = _pair(sentence)
    segments = {k: [bpe.token_strings(s, merges[:k]) for s in sentence] for k in MERGE_STEPS}
    newest = {k: bpe.readable_bytes(table[255 + k]) if k else None for k in MERGE_STEPS}
    return Explorable(
        view=_MergeView,
        data={"segments": segments, "newest": newest, "sentence": sentence},
        sliders=[Slider("merges", MERGE_STEPS, label="合并次数", default=0)],
        title="BPE 一次次合并：同一句话的词元越来越少（本书的 BPE，在本书正文上训练）",
        alt="本书的 BPE 合并 {merges} 次之后，一句中文和一句英文切出的词元，每个词元一个方框；"
            "灰色方框是半个汉字（一个字节，写成两位十六进制数），粗红框是最新学到的词元。",
        size=(6.8, 3.4), ncols=2, narrow_size=(3.6, 6.6),
    )


# ---------------------------------------------------------------- 词表大小：词元数和参数


class _VocabView:
    def __init__(self, fig, axes, layout, sizes, per_char, params, other):
        rate_ax, param_ax = axes
        self.sizes, self.per_char, self.params, self.other = sizes, per_char, params, other
        for (name, rates), color in zip(per_char.items(), (_ZH, _EN)):
            rate_ax.plot(sizes, rates, "o-", color=color, lw=1.6, ms=3.5, label=name)
        rate_ax.axhline(1.0, color="0.4", ls="--", lw=1, label="一字一词元（第 9 章）")
        rate_ax.set_xscale("log", base=2)
        ticks = [s for s in sizes if s & (s - 1) == 0]  # 2 的整数次幂：对数轴上等距
        rate_ax.set_xticks(ticks, [str(s) for s in ticks])
        rate_ax.minorticks_off()
        rate_ax.set_xlabel("词表大小 |V|")
        rate_ax.set_ylabel("每个字几个词元")
        rate_ax.legend(loc="upper right", fontsize=9, frameon=False)
        rate_ax.grid(alpha=0.3)
        param_ax.plot(sizes, params, "o-", color="#35978f", lw=1.6, ms=3.5, label="嵌入表 + 输出层")
        param_ax.axhline(other, color="0.4", ls="--", lw=1, label="其余全部参数（2 层、位置表……）")
        param_ax.set_xscale("log", base=2)
        param_ax.set_xticks(rate_ax.get_xticks(), rate_ax.get_xticklabels())
        param_ax.minorticks_off()
        param_ax.set_xlabel("词表大小 |V|")
        param_ax.set_ylabel("参数个数（D = 64）")
        param_ax.legend(loc="upper left", fontsize=9, frameon=False)
        param_ax.grid(alpha=0.3)
        self.dots = [rate_ax.plot([], [], "o", color="black", ms=8, zorder=5)[0],
                     rate_ax.plot([], [], "o", color="black", ms=8, zorder=5)[0],
                     param_ax.plot([], [], "o", color="black", ms=8, zorder=5)[0]]
        self.narrow = layout.narrow
        self.suptitle = fig.suptitle(" ", fontsize=10)
        self.artists = [*self.dots, self.suptitle]

    def update(self, size):
        i = self.sizes.index(size)
        rates = [r[i] for r in self.per_char.values()]
        for dot, rate in zip(self.dots, rates):
            dot.set_data([size], [rate])
        self.dots[2].set_data([size], [self.params[i]])
        share = self.params[i] / (self.params[i] + self.other)
        zh, en = rates
        self.suptitle.set_text(f"|V| = {size}：中文每字 {zh:.2f} 个词元，英文 {en:.2f} 个\n"
                               f"嵌入表 + 输出层 {self.params[i]:,} 个参数，占 {share:.0%}")
        return {"per_char": np.array(rates), "params": np.array([self.params[i]]), "share": np.array([share])}


def vocab_costs() -> Explorable:
    """第 11 章：拖词表大小，看本书的 BPE 切中文、英文每个字要几个词元，以及小 GPT 的嵌入表 + 输出层要多少参数。

    中文量的是第 9 章的考题（没训练过的正文），英文量的是 ``tokenization.PARALLEL`` 的 6 句英文；
    参数按第 9 章的小 GPT（``runs.GPT``：D = 64）算：嵌入表 |V| × D + 输出矩阵 D × |V| + 偏置 |V|。
    """
    merges = tokenization.book_bpe()
    _, test_text = held_out_split(load_corpus())
    english = tuple(en for _, en in tokenization.PARALLEL)
    sizes = tokenization.SIZES
    zh = tokenization.vocab_sweep(merges, sizes, (test_text,))[:, 0] / len(test_text)
    en = tokenization.vocab_sweep(merges, sizes, english).sum(axis=1) / sum(map(len, english))
    D = GPT["d_model"]
    shapes = GPTConfig(BPE_GPT_VOCAB, **{k: GPT[k] for k in ("d_model", "num_layers", "num_heads", "d_ff")}).shapes()
    other = sum(int(np.prod(s)) for name, s in shapes.items() if name not in ("tok_embed", "w_out", "b_out"))
    return Explorable(
        view=_VocabView,
        data={"sizes": sizes, "per_char": {"中文（考题正文）": zh, "英文（6 句）": en},
              "params": [2 * V * D + V for V in sizes], "other": other},
        sliders=[Slider("size", sizes, label="词表大小", default=BPE_GPT_VOCAB)],
        title="词表越大，词元越少，嵌入表越大（本书的 BPE，第 9 章的小 GPT）",
        alt="词表大小为 {size} 时：左边是本书的 BPE 切中文、英文每个字要几个词元（随词表变大而下降），"
            "右边是小 GPT 的嵌入表和输出层的参数（随词表直线上升）。",
        size=(6.8, 3.5), ncols=2, narrow_size=(3.6, 6.4),
    )


# ---------------------------------------------------------------- 几种分词器切同一句话


def _default_tokenizers() -> dict[str, Callable[[str], list[str]]]:
    """本章比较的分词器：名字 → 把一句话切成词元（字符串列表，不含 [CLS]、<s> 这样的特殊词元）的函数。
    后三个来自真模型的词表：MiniLM 的 WordPiece、e5 的 Unigram（第 10 章），SmolLM2 的字节级 BPE（主要读英文）。"""
    merges = tokenization.book_bpe()
    minilm, e5, smol = load("all-MiniLM-L6-v2"), load("multilingual-e5-small"), gpt_tokenizer.load()
    return {
        "字（第 9 章）": list,
        "UTF-8 字节": lambda s: bpe.token_strings(s, []),
        f"本书 BPE {BPE_GPT_VOCAB}": lambda s: bpe.token_strings(s, merges[:BPE_GPT_VOCAB - 256]),
        f"本书 BPE {tokenization.SIZES[-1]}": lambda s: bpe.token_strings(s, merges),
        "WordPiece（第 10 章）": lambda s: minilm.tokenize(s)[1:-1],
        "Unigram（第 10 章）": lambda s: [display_token(t) for t in e5.tokenize(s)[1:-1]],
        "SmolLM2 的 BPE": smol.tokens,
    }


class _CompareView:
    def __init__(self, fig, axes, layout, pieces, sentence):
        text_ax, bar_ax = axes
        self.pieces, self.names = pieces, list(pieces)
        y = np.arange(len(self.names))
        counts = np.array([[len(p) for p in pieces[n]] for n in self.names])  # (K, 2)
        bar_ax.barh(y - 0.2, counts[:, 0], height=0.4, color=_ZH, label=f"中文（{len(sentence[0])} 个字）")
        bar_ax.barh(y + 0.2, counts[:, 1], height=0.4, color=_EN, label=f"英文（{len(sentence[1])} 个字符）")
        bar_ax.set_yticks(y, self.names, fontsize=9)
        bar_ax.invert_yaxis()
        bar_ax.set_xlabel("这句话切成几个词元")
        bar_ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=1 if layout.narrow else 2, fontsize=9,
                      frameon=False)
        bar_ax.grid(axis="x", alpha=0.3)
        self.marker = bar_ax.axhspan(-0.5, 0.5, color="0.85", zorder=0)
        self.sentence = sentence
        self.suptitle = fig.suptitle(" ", fontsize=10)
        self.rows = _TokenRows(fig, text_ax, [p for both in pieces.values() for p in both],  # 排好横条之后再量宽度
                               full_width=layout.narrow)
        self.artists = [*self.rows.artists, self.marker, self.suptitle]

    def update(self, tokenizer, language):
        i, lang = self.names.index(tokenizer), ("中文", "英文").index(language)
        part = self.pieces[tokenizer][lang]
        text = self.sentence[lang]
        unit = "个字" if lang == 0 else "个字符"
        lines = self.rows.show(part, f"{len(text)} {unit} → {len(part)} 个词元（每{unit[1:]} {len(part) / len(text):.2f} 个）")
        self.marker.set_y(i - 0.5)
        self.suptitle.set_text(f"{tokenizer}：{language}")
        return {"count": np.array([len(part)]), "lines": np.array([lines])}


def _cut(f: Callable, text: str, name: str) -> list[str]:
    """一个切词函数切一句话：必须返回词元的列表（字符串或编号）；编号写成数字给人看。"""
    out = f(text)
    if not isinstance(out, (list, tuple)):
        raise TypeError(f"tokenizers[{name!r}] 切“{text}”必须返回词元的列表，收到的是 {check.describe(out)}。")
    return [t if isinstance(t, str) else str(t) for t in out]


def tokenizer_compare(tokenizers: Mapping[str, Callable[[str], list[str]]] | None = None,
                      sentence: tuple[str, str] = SENTENCE) -> Explorable:
    """第 11 章：同一句中文、英文，被几种分词器各切成几个词元（上：选中的那一种怎样切；下：全部的词元数）。

    ``tokenizers`` 是名字 → 切词函数的字典（不传就用 ``_default_tokenizers()``：要载入第 10 章的两个真模型）。

    Raises
    ------
    TypeError
        ``tokenizers`` 不是 名字 → 函数 的非空字典，``sentence`` 不是字符串的列表，或某个切词函数返回的不是列表。
    ValueError
        ``sentence`` 不是两句话。
    """
    tokenizers = _default_tokenizers() if tokenizers is None else dict(tokenizers)
    if not tokenizers or not all(isinstance(k, str) and callable(f) for k, f in tokenizers.items()):
        raise TypeError(f"tokenizers 必须是 名字 → 切词函数 的非空字典，收到的是 {check.describe(tokenizers)}。")
    sentence = _pair(sentence)
    pieces = {name: [_cut(f, s, name) for s in sentence] for name, f in tokenizers.items()}
    names = tuple(pieces)
    return Explorable(
        view=_CompareView,
        data={"pieces": pieces, "sentence": sentence},
        sliders=[Slider("tokenizer", names, label="分词器", default=names[0]),
                 Slider("language", ("中文", "英文"), label="句子", default="中文")],
        title="同一句话，几种分词器各切成几个词元",
        alt="分词器“{tokenizer}”切{language}句子的结果，每个词元一个方框；下面的横条是每种分词器把中文句子、"
            "英文句子各切成几个词元。",
        size=(6.8, 3.6), ncols=2, narrow_size=(3.6, 7.0), max_frames=max(FRAME_CAP, 2 * len(names)),
    )
