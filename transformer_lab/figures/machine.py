"""全书的总图：一个 Transformer 从输入的词元到最上面的输出，每个方框写着它在哪一章算过。

同一个函数画三种机器，前言、第 8 章末尾、第 9 章和第 12 章用的就是它们：

* ``transformer_diagram()``：**编码器**（第 8 章那一层叠 N 层，不带掩码）。这是原论文编码器和 BERT 的 post-LN
  接法：先做工序、加上残差、再层归一化。每个位置都看得见整句话（包括后文），所以它最上面不是“下一个词的概率”
  （那等于抄答案，第 9 章讲过），而是每个位置一个新向量 (T, D)，图上写着这些向量拿去做什么。
* ``transformer_diagram(decoder=True)``：**只有解码器**的小 GPT（第 9 章，``lessons/gpt_model.py``）。它是 pre-LN
  接法：每道工序之前先层归一化，工序的结果加回直路上（直路上没有 LN）；N 层之后再过一道 LN_f，
  最后线性层 + softmax 给出每个位置“下一个字是字表里每个字的概率”，形状 (T, |𝒱|)。

* ``transformer_diagram(decoder=True, modern=True)``：第 12 章的真 GPT（SmolLM2，``pretrained/llama.py``）。同一台
  只有解码器的机器，换了五个零件：层归一化 → RMSNorm，前馈网络 → SwiGLU，位置表 → RoPE（在注意力里转 q、k），
  多头 → 分组查询注意力，输出层 → 词嵌入表（权重共享）。

三张图底下都有同一句话：论文原版（2017）是编码器–解码器，解码器每层还多一道交叉注意力。
方框从下往上排，和数据流动的方向一致；每个箭头旁写着那里的数组形状，蓝线是残差。宽版（电脑）把“第几章、做什么”
写在方框右边；窄版（手机）图只有一半宽，方框里只写名字和章号。

方框和章号的对应只写在 ``ENCODER``、``DECODER``、``MODERN`` 这三张表里；章名取自 ``transformer_lab.chapters``，
表里的章号不在书里时画图就报错（不会画出指向不存在的一章的方框）。
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.patches import FancyBboxPatch

from .. import chapters
from ..plot.figure import MIN_FONT_PT
from ..widgets.explorable import Explorable

__all__ = ["Box", "Machine", "ENCODER", "DECODER", "MODERN", "ORIGINAL", "transformer_diagram"]

TITLE_PT = 11.0
NAME_PT = 10.0


@dataclass(frozen=True)
class Box:
    """总图里的一个方框。

    Parameters
    ----------
    key : str
        方框的代号（测试、残差线和颜色用）。
    name : str
        方框里写的名字。
    chapters : tuple of int
        在哪几章算过它。
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


@dataclass(frozen=True)
class Machine:
    """一种机器的画法：从下往上的方框、两条残差线、最上面的输出写什么。

    Parameters
    ----------
    boxes : tuple of Box
        从下往上的方框。
    skips : tuple of (str, str)
        残差线：从哪个方框下面的箭头分出来，加进哪个方框（方框的 ``key``）。
    result, result_short : str
        最上面那句话（宽版、窄版）。
    uses : tuple of str
        宽版写在最上面那句话旁边的几行说明（可以没有）；窄版把它们接起来重新折行。
    title, title_short : str
        图里的标题（宽版、窄版）。
    """

    boxes: tuple[Box, ...]
    skips: tuple[tuple[str, str], ...]
    result: str
    result_short: str
    uses: tuple[str, ...]
    title: str
    title_short: str


# 编码器：原论文编码器和 BERT 的 post-LN（先相加、再归一化）。不带掩码：每个位置看得见后文，所以输出的是向量。
ENCODER = Machine(
    boxes=(
        Box("embed", "词嵌入 + 位置编码", (1, 6), "查表得到词向量，再加上座位号", "(T, D)"),
        Box("attention", "多头自注意力", (2, 3, 4, 5), "每个词问一问、听一听全句的词", "(T, D)", True),
        Box("add_norm_1", "残差相加 + 层归一化", (8,), "把听到的添进原来的笔记", "(T, D)", True),
        Box("ffn", "前馈网络", (8,), "每个词各自想一想（中间 d_ff 维）", "(T, D)", True),
        Box("add_norm_2", "残差相加 + 层归一化", (8,), "再添一次，整理成下一层的输入", "(T, D)", True),
    ),
    skips=(("attention", "add_norm_1"), ("ffn", "add_norm_2")),
    result="每个位置一个新向量",
    result_short="每个位置一个新向量",
    uses=("拿去做什么：BERT 用它猜被遮住的词；", "第 10 章的模型把它们平均成句向量；",
          "第 8 章的倒序模型再接一个线性层，", "猜每个位置该输出的符号"),
    title="编码器：每个方框在哪一章算过",
    title_short="编码器（每个词看全句）",
)

# 只有解码器的小 GPT（第 9 章，lessons/gpt_model.py）：pre-LN，N 层之后再过一道 LN_f，最后是输出层。
DECODER = Machine(
    boxes=(
        Box("embed", "字嵌入 + 位置表", (1, 6, 9), "查表得到字向量，再加上学出来的位置向量", "(T, D)"),
        Box("ln_1", "层归一化", (8,), "先把每个字的向量整理好", "(T, D)", True),
        Box("attention", "带因果掩码的多头自注意力", (2, 3, 4, 5, 7, 8), "只听自己和前面的字", "(T, D)", True),
        Box("add_1", "残差相加", (8,), "把听到的加回直路（直路上没有 LN）", "(T, D)", True),
        Box("ln_2", "层归一化", (8,), "再整理一次", "(T, D)", True),
        Box("ffn", "前馈网络", (8,), "每个字各自想一想（中间 d_ff 维）", "(T, D)", True),
        Box("add_2", "残差相加", (8,), "再加回直路，成为下一层的输入", "(T, D)", True),
        Box("ln_f", r"最后的层归一化 $\mathrm{LN}_f$", (9,), "叠完 N 层，再整理一次", "(T, D)"),
        Box("output", "线性层 + softmax", (4, 9), "每个位置变成字表上的概率", r"(T, $|\mathcal{V}|$)"),
    ),
    skips=(("ln_1", "add_1"), ("ln_2", "add_2")),
    result="每个位置：下一个字是字表里每个字的概率",
    result_short="每个位置：下一个字的概率",
    uses=(),
    title="只有解码器（第 9 章的小 GPT，pre-LN）",
    title_short="解码器：每个字只看前面",
)

# 第 12 章的真 GPT（SmolLM2，pretrained/llama.py）：和 DECODER 同样的方框次序，五个零件换成今天的版本。
# 名字里的“RMSNorm”也是一种归一化：方框名写“RMSNorm 归一化”，和上面的层归一化一样读作归一化。
MODERN = Machine(
    boxes=(
        Box("embed", "词嵌入（没有位置表）", (1, 12), "查表得到词向量；位置交给 RoPE", "(T, D)"),
        Box("ln_1", "RMSNorm 归一化", (12,), "整理一下：只除以均方根，不减均值", "(T, D)", True),
        Box("attention", "分组查询注意力 + RoPE", (4, 6, 7, 12), "9 个查询头共用 3 组 k、v；q、k 按位置转", "(T, D)", True),
        Box("add_1", "残差相加", (8,), "把听到的加回直路（直路上没有归一化）", "(T, D)", True),
        Box("ln_2", "RMSNorm 归一化", (12,), "再整理一次", "(T, D)", True),
        Box("ffn", "SwiGLU 前馈网络", (12,), "带门的前馈网络（中间 d_ff 维）", "(T, D)", True),
        Box("add_2", "残差相加", (8,), "再加回直路，成为下一层的输入", "(T, D)", True),
        Box("ln_f", r"最后的 RMSNorm 归一化 $\mathrm{LN}_f$", (12,), "叠完 N 层，再整理一次", "(T, D)"),
        Box("output", "乘词嵌入表 + softmax", (9, 12), "输出层就是词嵌入表（权重共享）", r"(T, $|\mathcal{V}|$)"),
    ),
    skips=(("ln_1", "add_1"), ("ln_2", "add_2")),
    result="每个位置：下一个词元是词表里每个词元的概率",
    result_short="每个位置：下一个词元的概率",
    uses=(),
    title="第 12 章的真 GPT（SmolLM2）：同一台机器，五个新零件",
    title_short="真 GPT：五个新零件",
)

# 三张图底下的同一句话（第 8 章讲一层时在括号里提过交叉注意力）
ORIGINAL = ("论文原版（2017）是编码器–解码器：原文图 1 左边一摞编码器，右边一摞解码器；"
            "解码器每层还多一道交叉注意力，去看编码器的输出（第 8 章提过一句）。")

COLOURS = {"embed": "#dbe9f6", "attention": "#fde2c8", "ffn": "#efe0f4", "output": "#dbe9f6",
           "add_norm_1": "#e3f1dc", "add_norm_2": "#e3f1dc", "ln_1": "#e3f1dc", "ln_2": "#e3f1dc", "ln_f": "#e3f1dc",
           "add_1": "#eeeeee", "add_2": "#eeeeee"}


def _chapter_label(numbers: tuple[int, ...]) -> str:
    """章号写成一句：三章以上连着的写成区间，其余用顿号。

    Examples
    --------
    >>> _chapter_label((2, 3, 4, 5)), _chapter_label((1, 6)), _chapter_label((2, 3, 4, 5, 7, 8))
    ('第 2–5 章', '第 1、6 章', '第 2–5、7、8 章')
    """
    ordered = sorted(set(numbers))
    runs: list[list[int]] = []
    for n in ordered:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    parts = [f"{r[0]}–{r[-1]}" if len(r) > 2 else "、".join(map(str, r)) for r in runs]
    return "第 " + "、".join(parts) + " 章"


def _wrap(text: str, width: int) -> str:
    """按字数折行（一个汉字算 1，一个 ASCII 字符算 0.5），标点不放在行首。

    Examples
    --------
    >>> _wrap("一二三，四五六七", 3)
    '一二三，\\n四五六\\n七'
    """
    lines, line, used = [], "", 0.0
    for ch in text:
        w = 0.5 if ch.isascii() else 1.0
        if used + w > width and line and ch not in "，。；：、）":
            lines.append(line)
            line, used = "", 0.0
        line += ch
        used += w
    return "\n".join([*lines, line])


def _machine(decoder: bool = False, modern: bool = False) -> Machine:
    """``decoder``、``modern`` 选中的那一种机器。每个章号都必须在书的章节表里。

    Examples
    --------
    >>> [b.key for b in _machine().boxes][:3]
    ['embed', 'attention', 'add_norm_1']
    >>> [b.key for b in _machine(decoder=True).boxes][-2:]
    ['ln_f', 'output']
    >>> _machine(decoder=True, modern=True).boxes[5].name
    'SwiGLU 前馈网络'
    """
    for value, name in ((decoder, "decoder"), (modern, "modern")):
        if not isinstance(value, bool):
            raise TypeError(f"{name} 必须是 True 或 False，收到的是 {value!r}（{type(value).__name__}）。")
    if modern and not decoder:
        raise ValueError("modern=True 画的是第 12 章的真 GPT，它只有解码器：请同时传 decoder=True。")
    machine = (MODERN if modern else DECODER) if decoder else ENCODER
    known = chapters.numbers()
    for box in machine.boxes:
        missing = [n for n in box.chapters if n not in known]
        if missing:
            raise ValueError(f"总图的方框“{box.name}”指向第 {missing} 章，可书的章节表里只有第 "
                             f"{known[0]}–{known[-1]} 章：先在 chapters.py 里加上这一章，或改 machine.py 里的表。")
    return machine


def _span(count: int, narrow: bool, uses: int) -> tuple[float, float]:
    """纵向排版（单位：一格 = 相邻两个方框的距离）：(第一个方框的 y, 整张图的顶)。``uses`` 是输出旁说明的行数。"""
    line = 0.3 if narrow else 0.34
    caption = len(_wrap(ORIGINAL, _caption_width(narrow)).split("\n")) * line + 0.15
    first = caption + 0.82
    above = (0.45 + uses * line) if narrow else max(0.45, uses * line - 0.25)
    return first, first + count + above


def _caption_width(narrow: bool) -> int:
    """图下那句说明每行几个字。"""
    return 25 if narrow else 47


class _MachineView:
    """从下往上：输入 → 方框 → … → 最上面的输出；中间一层用虚线框起来（× N），两条蓝色残差线；最底下一行原论文的说明。"""

    def __init__(self, fig, axes, layout, machine, decoder):
        (ax,) = axes
        narrow = layout.narrow
        boxes = machine.boxes
        uses = "\n".join(machine.uses)
        first, top = _span(len(boxes), narrow, len(machine.uses))
        x0, x1 = (1.0, 8.0) if narrow else (0.9, 4.9)
        step, height = 1.0, (0.64 if narrow else 0.56)
        ys = first + np.arange(len(boxes)) * step
        ax.set_xlim(0, 10)
        ax.set_ylim(0, top)
        ax.axis("off")
        mid = (x0 + x1) / 2
        for box, y in zip(boxes, ys):
            ax.add_patch(FancyBboxPatch((x0, y - height / 2), x1 - x0, height, boxstyle="round,pad=0.02,rounding_size=0.12",
                                        facecolor=COLOURS[box.key], edgecolor="#444444", linewidth=1.0))
            label = _chapter_label(box.chapters)
            if narrow:
                ax.text(mid, y + 0.13, box.name, ha="center", va="center", fontsize=NAME_PT)
                ax.text(mid, y - 0.16, label, ha="center", va="center", fontsize=MIN_FONT_PT, color="#333333")
            else:
                ax.text(mid, y, box.name, ha="center", va="center", fontsize=NAME_PT)
                ax.text(x1 + 0.35, y + 0.13, label, ha="left", va="center", fontsize=MIN_FONT_PT, weight="bold")
                ax.text(x1 + 0.35, y - 0.15, box.what, ha="left", va="center", fontsize=MIN_FONT_PT, color="#333333")
        # 箭头：输入 → 第一个方框 → … → 最后一个方框 → 输出；旁边写形状（写在箭头左边，右边是残差线）
        arrow = dict(arrowstyle="-|>", color="#333333", linewidth=1.1, shrinkA=0, shrinkB=0)
        ax.annotate("", xy=(mid, ys[0] - height / 2), xytext=(mid, first - 0.55), arrowprops=arrow)
        ax.text(mid, first - 0.74, "输入：T 个词元（编号）" if not narrow else "输入：T 个词元", ha="center", va="center",
                fontsize=MIN_FONT_PT)
        for box, y, y_next in zip(boxes, ys, [*ys[1:], ys[-1] + step]):
            ax.annotate("", xy=(mid, y_next - height / 2), xytext=(mid, y + height / 2), arrowprops=arrow)
            ax.text(mid - 0.15, (y + y_next) / 2, box.shape_out, ha="right", va="center", fontsize=MIN_FONT_PT,
                    color="#555555")
        result_y = ys[-1] + step - height / 2 + 0.08
        ax.text(mid, result_y, machine.result_short if narrow else machine.result, ha="center", va="bottom",
                fontsize=NAME_PT, weight="bold")
        if uses and narrow:  # 窄版：说明写在输出上面，整行宽
            ax.text(5.0, result_y + 0.4, uses, ha="center", va="bottom", fontsize=MIN_FONT_PT, color="#333333",
                    linespacing=1.35)
        elif uses:  # 宽版：说明写在右边那一栏，和输出齐平往上排
            ax.text(x1 + 0.35, result_y - 0.2, uses, ha="left", va="bottom", fontsize=MIN_FONT_PT, color="#333333",
                    linespacing=1.35)
        self._layer_frame(ax, boxes, ys, height, x0, x1, narrow)
        self._residuals(ax, machine, ys, height, mid, x1, narrow)
        ax.text(5.0, 0.05, _wrap(ORIGINAL, _caption_width(narrow)), ha="center", va="bottom", fontsize=MIN_FONT_PT,
                color="#555555", linespacing=1.35)
        ax.set_title(machine.title_short if narrow else machine.title, fontsize=TITLE_PT)
        self.drawn = {"y": ys}

    @staticmethod
    def _layer_frame(ax, boxes, ys, height, x0, x1, narrow):
        """重复 N 次的那一层：虚线框，左边竖着写 × N 层。"""
        layer = [y for box, y in zip(boxes, ys) if box.in_layer]
        lo, hi = layer[0] - height / 2 - 0.36, layer[-1] + height / 2 + 0.07
        frame_x0, frame_x1 = x0 - (0.15 if narrow else 0.2), x1 + (0.75 if narrow else 0.25)
        ax.add_patch(FancyBboxPatch((frame_x0, lo), frame_x1 - frame_x0, hi - lo, boxstyle="round,pad=0,rounding_size=0.15",
                                    facecolor="none", edgecolor="#777777", linewidth=1.0, linestyle="--"))
        ax.text(frame_x0 - 0.15, (lo + hi) / 2, "× N 层", ha="right", va="center", rotation=90, fontsize=MIN_FONT_PT,
                color="#555555")

    @staticmethod
    def _residuals(ax, machine, ys, height, mid, x1, narrow):
        """残差：从一个方框下面那段箭头的中间分出来，绕到右边，加进“相加”的那个方框。"""
        keys = [b.key for b in machine.boxes]
        skip_x = x1 + (0.35 if narrow else 0.12)
        for start_key, into in machine.skips:
            start = ys[keys.index(start_key)] - height / 2 - 0.2
            end = ys[keys.index(into)]
            ax.plot([mid, skip_x, skip_x], [start, start, end], color="#2b7bba", linewidth=1.2)
            ax.annotate("", xy=(x1, end), xytext=(skip_x, end),
                        arrowprops=dict(arrowstyle="-|>", color="#2b7bba", linewidth=1.2, shrinkA=0, shrinkB=0))

    def update(self):
        return dict(self.drawn)


def transformer_diagram(decoder: bool = False, modern: bool = False) -> Explorable:
    """全书的总图。每个方框写着在哪一章算过，箭头旁写着数组形状，蓝线是残差，最底下一句说明原论文的样子。

    * ``decoder=False``（第 8 章）：编码器，原论文编码器和 BERT 的 post-LN 接法。输入的词元 → 词嵌入 + 位置编码 →
      N 层 [多头自注意力 → 残差相加 + 层归一化 → 前馈网络 → 残差相加 + 层归一化] → 每个位置一个新向量 (T, D)。
      它看得见后文，所以不画“下一个词的概率”。
    * ``decoder=True``（第 9 章，前言）：只有解码器的小 GPT，pre-LN 接法。字嵌入 + 位置表 → N 层 [层归一化 →
      带因果掩码的多头自注意力 → 残差相加；层归一化 → 前馈网络 → 残差相加] → LN_f → 线性层 + softmax →
      每个位置：下一个字是字表里每个字的概率 (T, |𝒱|)。

    * ``decoder=True, modern=True``（第 12 章）：SmolLM2，同样的次序，零件换成 RMSNorm、分组查询注意力 + RoPE、
      SwiGLU，最后乘词嵌入表（权重共享）。

    Parameters
    ----------
    decoder : bool, default False
        True：画只有解码器的机器（注意力带因果掩码，每个字只看自己和前面的字）。
    modern : bool, default False
        True（要和 ``decoder=True`` 一起）：画第 12 章的真 GPT 的零件。

    Returns
    -------
    Explorable
        没有滑块的 Explorable（静态图，宽版和窄版各一张）。

    Raises
    ------
    TypeError
        ``decoder`` 或 ``modern`` 不是 bool。
    ValueError
        ``modern=True`` 却没有 ``decoder=True``，或表里的章号不在书的章节表里。

    Examples
    --------
    >>> transformer_diagram().layout("narrow").size[0] <= 3.6
    True
    """
    machine = _machine(decoder, modern)
    steps = "；".join(f"{b.name}（{_chapter_label(b.chapters)}，输出 {b.shape_out}）" for b in machine.boxes)
    layer = sum(b.in_layer for b in machine.boxes)
    kind = ("第 12 章的真 GPT SmolLM2（只有解码器，pre-LN：每道工序之前先 RMSNorm）" if modern
            else "只有解码器的 Transformer（第 9 章的小 GPT，pre-LN：每道工序之前先层归一化）" if decoder
            else "Transformer 编码器（原论文编码器和 BERT 的 post-LN：先相加再层归一化）")
    uses = "".join(machine.uses)
    alt = (f"一张从下往上的方框图，画的是{kind}：输入 T 个词元，依次经过 {steps}；最上面是“{machine.result}”。"
           f"{uses + '。' if uses else ''}中间 {layer} 个方框组成一层，虚线框表示重复 N 次，两条蓝色的残差线各绕过一道工序。"
           f"图下的说明：{ORIGINAL}").replace("$", "").replace(r"\mathrm{LN}_f", "LN_f").replace(r"\mathcal{V}", "𝒱")
    n = len(machine.boxes)
    wide_h = 0.56 * _span(n, False, len(machine.uses))[1] + 0.4
    narrow_h = 0.6 * _span(n, True, len(machine.uses))[1] + 0.4
    return Explorable(
        view=_MachineView, sliders=[], data={"machine": machine, "decoder": decoder},
        title="整个 Transformer" + ("：第 12 章的真 GPT" if modern else "：解码器" if decoder else ""),
        alt=alt.replace("{", "{{").replace("}", "}}"),
        size=(6.8, round(wide_h, 2)), narrow_size=(3.6, round(narrow_h, 2)),
    )
