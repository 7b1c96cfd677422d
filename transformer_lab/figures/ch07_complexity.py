"""第 7 章的可交互图：一层要做多少次乘加（拖 n 和 d），以及分数表和 KV 缓存要占多少内存。

两张图都是"数出来"的（公式见 ``lessons/costs.py`` 与 ``core/kv_cache.py``），不是测出来的：
测量在章节正文里用 ``tl.timing.measure_scaling`` 当场做。
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import NullLocator

from .. import _validation as check
from ..lessons.costs import MAX_D, kv_cache_bytes, layer_costs, score_matrix_bytes
from ..plot.bars import weight_bars
from ..widgets.explorable import Explorable, Slider

__all__ = ["cost_calculator", "memory_calculator"]

N_GRID = (256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)  # 最长 128k 个词
D_GRID = (256, 512, 1024, 4096)
LAYER_GRID = (1, 12, 32, 80)
LAPTOP, GPU = 16 * 2**30, 80 * 2**30  # 一台笔记本的内存、一块大显卡的显存（字节）
_N_AXIS = np.unique(np.geomspace(64, N_GRID[-1], 48).round().astype(np.int64))  # 横轴上的 n
_COLORS = {"attention": "#31688e", "rnn": "#b5367a", "feedforward": "#35b779", "kv": "#fde725"}


def _count(x: float) -> str:
    """乘加次数写成 1.2e+12 这样的科学记数法（不用 mathtext：标题每帧都变，mathtext 慢）。"""
    return f"{x:.2g}" if x < 1e4 else f"{x:.1e}"


def _size(nbytes: float) -> str:
    """字节数写成 KiB / MiB / GiB / TiB。"""
    for unit, power in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if nbytes >= 2**power:
            return f"{nbytes / 2**power:.3g} {unit}"
    return f"{nbytes:.0f} B"


def _log_axes(ax, xlabel, ylabel, ylim):
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(_N_AXIS[0], _N_AXIS[-1])
    ax.set_ylim(*ylim)
    ax.xaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_xticks([64, 512, 4096, 32768, 131072], ["64", "512", "4096", "32k", "128k"])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)


class _CostView:
    """左：一层的乘加次数随 n 变化（对数–对数）；右：一层 Transformer 的乘加里，注意力、投影、前馈层各占几成。"""

    def __init__(self, fig, axes, layout):
        left, right = axes
        self.lines, self.dots = {}, {}
        names = {"attention": "注意力 2n²d", "rnn": "RNN 2nd²", "feedforward": "前馈层 8nd²"}
        for key, label in names.items():
            self.lines[key] = left.plot(_N_AXIS, _N_AXIS, "-", color=_COLORS[key], lw=2, label=label)[0]
            self.dots[key] = left.plot([1], [1], "o", color=_COLORS[key], ms=7)[0]
        self.cross = left.axvline(512, color="black", lw=1, ls=":")
        _log_axes(left, "序列长度 n（词数）", "一层的乘加次数", (1e6, 1e15))
        left.legend(loc="upper left", fontsize=8)
        labels = ["注意力\n2n²d", "投影 Q/K/V/输出\n4nd²", "前馈层\n8nd²"]
        self.share = weight_bars(np.zeros(3), labels, ax=right, ylim=(0.0, 1.12), color="#31688e")
        right.set_ylabel("占一层乘加的比例")
        self.axes, self.suptitle = axes, fig.suptitle(" ")
        self.artists = [*self.lines.values(), *self.dots.values(), self.cross, *self.share.artists,
                        left.title, right.title, self.suptitle]

    def update(self, n, d):
        n, d = int(n), int(d)
        c = layer_costs(n, d)
        curve = {"attention": 2.0 * _N_AXIS**2 * d, "rnn": 2.0 * _N_AXIS * d * d, "feedforward": 8.0 * _N_AXIS * d * d}
        for key, y in curve.items():
            self.lines[key].set_data(_N_AXIS, y)
            self.dots[key].set_data([n], [c[key]])
        self.cross.set_xdata([d, d])
        layer = np.array([c["attention"], c["projections"], c["feedforward"]], dtype=float)
        share = layer / layer.sum()  # (3,)
        self.share.set_values(share)
        self.axes[0].set_title(f"竖虚线 n = d = {d}：注意力与 RNN 一样多\n"
                               f"此刻 注意力 {_count(c['attention'])}，RNN {_count(c['rnn'])}")
        self.axes[1].set_title(f"n = {n:,}：注意力占一层的 {share[0]:.0%}")
        self.suptitle.set_text(f"n = {n:,}，d = {d}：注意力 / RNN = n / d = {n / d:.3g}；n 翻倍，注意力 ×4，RNN ×2")
        return {"attention": np.array(c["attention"]), "rnn": np.array(c["rnn"]),
                "feedforward": np.array(c["feedforward"]), "share": share, "crossover": np.array(d)}


def cost_calculator() -> Explorable:
    """第 7 章：拖动序列长度 n（到 128k）和宽度 d，数一层的乘加：注意力 2n²d、RNN 2nd²、前馈层 8nd²。

    Returns
    -------
    Explorable
    """
    return Explorable(
        view=_CostView,
        data={},
        sliders=[Slider("n", N_GRID, label="序列长度 n", default=4096, continuous=True, step=256),
                 Slider("d", D_GRID, label="宽度 d", default=512, continuous=True, step=64)],
        title="一层的计算量（按公式数出）：注意力 O(n²·d) 对 RNN O(n·d²)",
        alt=("序列长度 n = {n}、宽度 d = {d} 时：左图是一层的乘加次数随 n 变化的对数–对数图（注意力、RNN、前馈层），"
             "竖虚线是 n = d；右图是一层 Transformer 的乘加里注意力、投影、前馈层各占的比例。按公式数出，不是测量。"),
        size=(9.6, 4.0),
        ncols=2,
    )


class _MemoryView:
    """一张 n × n 分数表（一个头）与整个 KV 缓存的内存随 n 变化，对比笔记本内存与大显卡显存。"""

    def __init__(self, fig, axes, layout, d_model):
        (ax,) = axes
        self.d_model = d_model
        self.lines, self.dots = {}, {}
        labels = {"float32": "n×n 分数表，float32（一个头）", "float16": "n×n 分数表，float16（一个头）",
                  "kv": f"KV 缓存，float16，d = {d_model}，全部层"}
        styles = {"float32": ("#31688e", "-"), "float16": ("#31688e", "--"), "kv": ("#b5367a", "-")}
        for key, label in labels.items():
            color, ls = styles[key]
            self.lines[key] = ax.plot(_N_AXIS, _N_AXIS, ls, color=color, lw=2, label=label)[0]
            self.dots[key] = ax.plot([1], [1], "o", color=color, ms=7)[0]
        for limit, text in ((LAPTOP, "笔记本内存 16 GiB"), (GPU, "大显卡显存 80 GiB")):
            ax.axhline(limit, color="black", lw=0.8, ls=":", zorder=1.5)
            ax.text(_N_AXIS[0] * 1.2, limit * 1.3, text, fontsize=8)
        _log_axes(ax, "序列长度 n（词数）", "字节（对数）", (1e4, 2**43))
        ax.set_yticks([2**20, 2**30, 2**40], ["1 MiB", "1 GiB", "1 TiB"])
        ax.legend(loc="lower right", fontsize=8)
        self.ax, self.artists = ax, [*self.lines.values(), *self.dots.values(), ax.title]

    def update(self, n, num_layers):
        n, num_layers = int(n), int(num_layers)
        curve = {"float32": 4.0 * _N_AXIS**2, "float16": 2.0 * _N_AXIS**2,
                 "kv": 2.0 * 2 * num_layers * self.d_model * _N_AXIS.astype(float)}
        now = {"float32": score_matrix_bytes(n, "float32"), "float16": score_matrix_bytes(n, "float16"), "kv": kv_cache_bytes(n, self.d_model, num_layers, np.float16)}
        for key, y in curve.items():
            self.lines[key].set_data(_N_AXIS, y)
            self.dots[key].set_data([n], [now[key]])
        self.ax.set_title(f"n = {n:,}，{num_layers} 层：一张分数表 {_size(now['float32'])}（float32）/ "
                          f"{_size(now['float16'])}（float16）；KV 缓存 {_size(now['kv'])}")
        return {key: np.array(value) for key, value in now.items()}


def memory_calculator(d_model: int = 4096) -> Explorable:
    """第 7 章：拖动 n 和层数，看一张 n × n 分数表、整个 KV 缓存各占多少内存（按公式数出）。

    Parameters
    ----------
    d_model : int
        每层 k（或 v）一个词的长度，默认 4096（一个大语言模型的常见宽度）。1 到 65536。

    Returns
    -------
    Explorable

    Raises
    ------
    TypeError, ValueError
        ``d_model`` 不是正整数或超出范围。
    """
    d_model = check.positive_int(d_model, "d_model")
    if d_model > MAX_D:
        raise ValueError(f"d_model 必须在 [1, {MAX_D}] 之内，收到的是 {d_model}。")
    return Explorable(
        view=_MemoryView,
        data={"d_model": d_model},
        sliders=[Slider("n", N_GRID, label="序列长度 n", default=8192, continuous=True, step=256),
                 Slider("num_layers", LAYER_GRID, label="层数", default=32, continuous=True)],
        title="分数表与 KV 缓存要多少内存（按公式数出）",
        alt=(f"序列长度 n = {{n}}、{{num_layers}} 层时：一张 n × n 分数表（float32 与 float16，一个头）和 KV 缓存"
             f"（float16，d = {d_model}）的字节数随 n 变化的对数–对数图，虚点线是 16 GiB 与 80 GiB。按公式数出。"),
        size=(7.6, 4.4),
    )
