"""全书的总图：一个 Transformer 从输入的词到"下一个词的概率"，每个方框写着它在哪一章算过。

前言、第 8 章末尾和第 9 章（解码器）用的是同一张图：``transformer_diagram()`` 画编码器式的一层层堆叠，
``transformer_diagram(decoder=True)`` 把注意力换成带因果掩码的那一种（只看自己和前面的词）。
方框从下往上排，和数据流动的方向一致；每个箭头旁写着那里的数组形状。宽版（电脑）把"第几章、做什么"
写在方框右边；窄版（手机）图只有一半宽，方框里只写名字和章号，说明改成短句。

方框和章号的对应只写在 ``BOXES`` 这一张表里；章名取自 ``transformer_lab.chapters``，
表里的章号不在书里时画图就报错（不会画出指向不存在的一章的方框）。
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.patches import FancyBboxPatch

from .. import chapters
from ..plot.figure import MIN_FONT_PT
from ..widgets.explorable import Explorable

__all__ = ["Box", "BOXES", "transformer_diagram"]

TITLE_PT = 11.0
NAME_PT = 10.0


@dataclass(frozen=True)
class Box:
    """总图里的一个方框。

    Parameters
    ----------
    key : str
        方框的代号（测试和说明文字里用）。
    name : str
        方框里写的名字。
    chapters : tuple of int
        在哪几章算过它（第一个是主讲的那一章）。
    what : str
        宽版写在方框右边的一句说明。
    shape_out : str
        从这个方框出去的数组形状。
    in_layer : bool
        是否属于重复 N 次的那一层。
    """

    key: str
    name: str
    chapters: tuple[int, ...]
    what: str
    shape_out: str
    in_layer: bool = False


BOXES: tuple[Box, ...] = (
    Box("embed", "词嵌入 + 位置编码", (1, 6), "查表得到词向量，再加上座位号", "(T, D)"),
    Box("attention", "多头自注意力", (2, 3, 4, 5), "每个词问一问、听一听别的词", "(T, D)", True),
    Box("add_norm_1", "残差相加 + 层归一化", (8,), "把听到的添进原来的笔记", "(T, D)", True),
    Box("ffn", "前馈网络", (8,), "每个词各自想一想（中间 d_ff 维）", "(T, D)", True),
    Box("add_norm_2", "残差相加 + 层归一化", (8,), "再添一次，整理成下一层的输入", "(T, D)", True),
    Box("output", "线性层 + softmax", (9, 4), "每个位置变成词表上的概率", "(T, V)"),
)
# 解码器（第 9 章）里换掉的那一个方框：注意力只看自己和前面的词
CAUSAL_ATTENTION = Box("attention", "带因果掩码的多头自注意力", (8, 5), "只听自己和前面的词", "(T, D)", True)


def _chapter_label(numbers: tuple[int, ...]) -> str:
    """(2, 3, 4, 5) → "第 2–5 章"；(1, 6) → "第 1、6 章"。"""
    ordered = sorted(numbers)
    if len(ordered) > 2 and ordered == list(range(ordered[0], ordered[-1] + 1)):
        return f"第 {ordered[0]}–{ordered[-1]} 章"
    return "第 " + "、".join(str(n) for n in ordered) + " 章"


def _diagram_boxes(decoder: bool = False) -> list[Box]:
    """总图从下往上的方框（``decoder=True`` 时注意力带因果掩码）。每个章号都必须在书的章节表里。

    Examples
    --------
    >>> [b.key for b in _diagram_boxes()][:3]
    ['embed', 'attention', 'add_norm_1']
    >>> _diagram_boxes(decoder=True)[1].name
    '带因果掩码的多头自注意力'
    """
    if not isinstance(decoder, bool):
        raise TypeError(f"decoder 必须是 True 或 False，收到的是 {decoder!r}（{type(decoder).__name__}）。")
    boxes = [CAUSAL_ATTENTION if decoder and b.key == "attention" else b for b in BOXES]
    known = chapters.numbers()
    for box in boxes:
        missing = [n for n in box.chapters if n not in known]
        if missing:
            raise ValueError(f"总图的方框“{box.name}”指向第 {missing} 章，可书的章节表里只有第 "
                             f"{known[0]}–{known[-1]} 章：先在 chapters.py 里加上这一章，或改 BOXES。")
    return boxes


class _MachineView:
    """从下往上：输入 → 词嵌入 → N 层（虚线框，残差绕过注意力和前馈网络）→ 输出层 → 概率。"""

    def __init__(self, fig, axes, layout, boxes, decoder):
        (ax,) = axes
        narrow = layout.narrow
        n = len(boxes)
        # 坐标：横轴 0–10（宽版方框在 0.9–4.9，说明在右边；窄版方框占 1.0–8.0）；纵轴每个方框一格
        x0, x1 = (1.0, 8.0) if narrow else (0.9, 4.9)
        step, height = 1.0, 0.58
        ys = np.arange(n) * step + 1.0
        ax.set_xlim(0, 10)
        ax.set_ylim(0.05, ys[-1] + 1.25)
        ax.axis("off")
        colours = {"embed": "#dbe9f6", "attention": "#fde2c8", "add_norm_1": "#e3f1dc", "ffn": "#efe0f4",
                   "add_norm_2": "#e3f1dc", "output": "#dbe9f6"}
        mid = (x0 + x1) / 2
        for box, y in zip(boxes, ys):
            ax.add_patch(FancyBboxPatch((x0, y - height / 2), x1 - x0, height, boxstyle="round,pad=0.02,rounding_size=0.12",
                                        facecolor=colours[box.key], edgecolor="#444444", linewidth=1.0))
            label = _chapter_label(box.chapters)
            if narrow:
                ax.text(mid, y + 0.1, box.name, ha="center", va="center", fontsize=NAME_PT)
                ax.text(mid, y - 0.16, label, ha="center", va="center", fontsize=MIN_FONT_PT, color="#333333")
            else:
                ax.text(mid, y, box.name, ha="center", va="center", fontsize=NAME_PT)
                ax.text(x1 + 0.35, y + 0.12, label, ha="left", va="center", fontsize=MIN_FONT_PT, weight="bold")
                ax.text(x1 + 0.35, y - 0.14, box.what, ha="left", va="center", fontsize=MIN_FONT_PT, color="#333333")
        # 箭头：输入 → 第一个方框 → … → 最后一个方框 → 输出；旁边写形状
        arrow = dict(arrowstyle="-|>", color="#333333", linewidth=1.1, shrinkA=0, shrinkB=0)
        shape_x = mid - 0.15  # 形状写在箭头左边（右边是残差线）
        ax.annotate("", xy=(mid, ys[0] - height / 2), xytext=(mid, 0.3), arrowprops=arrow)
        ax.text(mid, 0.18, "输入：T 个词元（编号）" if not narrow else "输入：T 个词元", ha="center", va="center",
                fontsize=MIN_FONT_PT)
        for (box, y), y_next in zip(zip(boxes, ys), [*ys[1:], ys[-1] + step]):
            ax.annotate("", xy=(mid, y_next - height / 2), xytext=(mid, y + height / 2), arrowprops=arrow)
            ax.text(shape_x, (y + y_next) / 2, box.shape_out, ha="right", va="center", fontsize=MIN_FONT_PT,
                    color="#555555")
        top = "下一个词的概率" if narrow else "每个位置：下一个词是词表里每个词的概率"
        ax.text(mid, ys[-1] + step - height / 2 + 0.12, top, ha="center", va="bottom", fontsize=MIN_FONT_PT)
        # 重复 N 次的那一层：虚线框，旁边写 × N
        layer = [y for box, y in zip(boxes, ys) if box.in_layer]
        lo, hi = layer[0] - height / 2 - 0.36, layer[-1] + height / 2 + 0.07
        frame_x0, frame_x1 = x0 - (0.15 if narrow else 0.2), x1 + (0.75 if narrow else 0.25)
        ax.add_patch(FancyBboxPatch((frame_x0, lo), frame_x1 - frame_x0, hi - lo, boxstyle="round,pad=0,rounding_size=0.15",
                                    facecolor="none", edgecolor="#777777", linewidth=1.0, linestyle="--"))
        ax.text(frame_x0 - 0.15, (lo + hi) / 2, "× N 层", ha="right", va="center", rotation=90, fontsize=MIN_FONT_PT,
                color="#555555")
        # 残差：从一个方框下面的箭头分出来，绕到右边，加进"残差相加"那个方框
        skip_x = x1 + (0.35 if narrow else 0.12)
        for key, into in (("attention", "add_norm_1"), ("ffn", "add_norm_2")):
            start = ys[[b.key for b in boxes].index(key)] - height / 2 - 0.17  # 方框下面那段箭头的中间
            end = ys[[b.key for b in boxes].index(into)]
            ax.plot([mid, skip_x, skip_x], [start, start, end], color="#2b7bba", linewidth=1.2)
            ax.annotate("", xy=(x1, end), xytext=(skip_x, end),
                        arrowprops=dict(arrowstyle="-|>", color="#2b7bba", linewidth=1.2, shrinkA=0, shrinkB=0))
        title = ("解码器：每个词只看前面" if decoder else "整个 Transformer") if narrow else (
            "整个 Transformer（解码器：注意力只看自己和前面的词）" if decoder else "整个 Transformer：每个方框在哪一章算过")
        ax.set_title(title, fontsize=TITLE_PT)
        self.drawn = {"y": ys}

    def update(self):
        return dict(self.drawn)


def transformer_diagram(decoder: bool = False) -> Explorable:
    """全书的总图：输入的词 → 词嵌入 + 位置编码 → N 层 [多头自注意力 → 残差相加 + 层归一化 → 前馈网络 →
    残差相加 + 层归一化] → 线性层 + softmax → 下一个词的概率。每个方框写着在哪一章算过，箭头旁写着数组形状，
    蓝线是残差。（这是原论文的 post-LN 画法：先相加再归一化；第 8 章也讲了先归一化的 pre-LN。）

    Parameters
    ----------
    decoder : bool, default False
        True：画第 9 章的解码器（注意力带因果掩码，每个词只看自己和前面的词）。

    Returns
    -------
    Explorable
        没有滑块的 Explorable（静态图，宽版和窄版各一张）。

    Raises
    ------
    TypeError
        ``decoder`` 不是 bool。
    ValueError
        ``BOXES`` 里的章号不在书的章节表里。

    Examples
    --------
    >>> transformer_diagram().layout("narrow").size[0] <= 3.6
    True
    """
    boxes = _diagram_boxes(decoder)
    steps = "；".join(f"{b.name}（{_chapter_label(b.chapters)}，输出 {b.shape_out}）" for b in boxes)
    kind = "解码器式（注意力带因果掩码）的" if decoder else ""
    return Explorable(
        view=_MachineView, sliders=[], data={"boxes": boxes, "decoder": decoder},
        title="整个 Transformer" + ("：解码器" if decoder else ""),
        alt=(f"一张从下往上的{kind}Transformer 方框图：输入 T 个词元，依次经过 {steps}；"
             "中间四个方框组成一层，虚线框表示重复 N 次，两条蓝色的残差线分别绕过注意力和前馈网络。"),
        size=(6.8, 5.6), narrow_size=(3.6, 6.2),
    )
