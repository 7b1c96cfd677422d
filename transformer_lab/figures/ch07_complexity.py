"""第 7 章的图：一层要做多少次乘加（拖 n 和 d）、分数表和 KV 缓存要占多少内存，以及实测的用时和内存。

前两张图是"数出来"的（公式见 ``lessons/costs.py`` 与 ``core/kv_cache.py``），不是测出来的；
第三张 ``measured_scaling`` 是静态图，画的是章节正文里用 ``tl.timing.measure_scaling`` 当场测的数。
每张图画两种版式（见 ``plot.figure.Layout``）：宽版给电脑，窄版给手机——子图竖着排、标题更短、刻度更少。
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.ticker import NullLocator

from .. import _validation as check
from ..lessons.costs import MAX_D, kv_cache_bytes, layer_costs, score_matrix_bytes
from ..lessons.timing import loglog_slope
from ..plot.bars import weight_bars
from ..plot.figure import MIN_FONT_PT
from ..widgets.explorable import Explorable, Slider

__all__ = ["cost_calculator", "memory_calculator", "measured_scaling"]

N_GRID = (256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)  # 最长 128k 个词
D_GRID = (256, 512, 1024, 4096)
LAYER_GRID = (1, 12, 32, 80)
LAPTOP, GPU = 16 * 2**30, 80 * 2**30  # 一台笔记本的内存、一块大显卡的显存（字节）
TITLE_PT = 10.0  # 子图标题；整张图的标题 (suptitle) 用 SUPTITLE_PT
SUPTITLE_PT = 10.5
_N_AXIS = np.unique(np.geomspace(64, N_GRID[-1], 48).round().astype(np.int64))  # 横轴上的 n
_COLORS = {"attention": "#31688e", "rnn": "#b5367a", "feedforward": "#35b779"}


def _count(x: float) -> str:
    """乘加次数写成 1.2e+12 这样的科学记数法（不用 mathtext：标题每帧都变，mathtext 慢）。"""
    return f"{x:.2g}" if x < 1e4 else f"{x:.1e}"


def _size(nbytes: float) -> str:
    """字节数写成 KiB / MiB / GiB / TiB。"""
    for unit, power in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if nbytes >= 2**power:
            return f"{nbytes / 2**power:.3g} {unit}"
    return f"{nbytes:.0f} B"


def _log_axes(ax, xlabel, ylabel, ylim, yticks):
    """对数–对数坐标：横轴 n 从 64 到 128k（5 个刻度），纵轴只在 ``yticks`` 处写字。"""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(_N_AXIS[0], _N_AXIS[-1])
    ax.set_ylim(*ylim)
    ax.set_xticks([64, 512, 4096, 32768, 131072], ["64", "512", "4096", "32k", "128k"])
    ax.set_yticks(*yticks)
    ax.xaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)


# ---------------------------------------------------------------- 一层的乘加


class _CostView:
    """上/左：一层的乘加次数随 n 变化（对数–对数）；下/右：一层 Transformer 的乘加里，注意力、投影、前馈层各占几成。"""

    def __init__(self, fig, axes, layout):
        left, right = axes
        self.narrow = layout.narrow
        self.lines, self.dots = {}, {}
        names = {"attention": "注意力 2n²d", "rnn": "RNN 2nd²", "feedforward": "前馈层 8nd²"}
        for key, label in names.items():
            self.lines[key] = left.plot(_N_AXIS, _N_AXIS, "-", color=_COLORS[key], lw=2, label=label)[0]
            self.dots[key] = left.plot([1], [1], "o", color=_COLORS[key], ms=7, clip_on=False)[0]
        self.cross = left.axvline(512, color="black", lw=1, ls=":", label="n = d：注意力 = RNN")
        powers = (6, 9, 12, 15)
        _log_axes(left, "序列长度 n（词数）", "一层的乘加次数", (1e6, 1e17),  # 上面留出图例的地方
                  ([10.0**p for p in powers], [f"$10^{{{p}}}$" for p in powers]))
        left.legend(loc="upper left", fontsize=MIN_FONT_PT, handlelength=1.5)
        self.share = weight_bars(np.zeros(3), ["注意力\n2n²d", "投影\n4nd²", "前馈层\n8nd²"], ax=right,
                                 ylim=(0.0, 1.15), color="#31688e")
        right.set_yticks([0, 0.25, 0.5, 0.75, 1.0], ["0", "", "0.5", "", "1"])
        right.set_ylabel("占一层乘加的比例")
        self.axes, self.suptitle = axes, fig.suptitle(" ", fontsize=SUPTITLE_PT)
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
        self.axes[0].set_title(f"注意力 {_count(c['attention'])}，RNN {_count(c['rnn'])}", fontsize=TITLE_PT)
        self.axes[1].set_title(f"注意力占一层的 {share[0]:.0%}", fontsize=TITLE_PT)
        head = f"n = {n:,}，d = {d}"
        ratio = f"注意力 / RNN = n / d = {n / d:.3g}"
        self.suptitle.set_text(f"{head}\n{ratio}" if self.narrow else f"{head}：{ratio}")
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
        alt=("序列长度 n = {n}、宽度 d = {d} 时：第一张图是一层的乘加次数随 n 变化的对数–对数图（注意力、RNN、前馈层），"
             "竖虚线是 n = d；第二张图是一层 Transformer 的乘加里注意力、投影、前馈层各占的比例。按公式数出，不是测量。"),
        size=(6.8, 3.4),
        ncols=2,
        narrow_size=(3.6, 6.2),
    )


# ---------------------------------------------------------------- 分数表与 KV 缓存的内存


class _MemoryView:
    """一张 n × n 分数表（一个头）与整个 KV 缓存的内存随 n 变化，对比笔记本内存与大显卡显存。"""

    def __init__(self, fig, axes, layout, d_model):
        (ax,) = axes
        self.d_model, self.narrow = d_model, layout.narrow
        self.lines, self.dots = {}, {}
        labels = {"float32": "n×n 分数表，float32（一个头）", "float16": "n×n 分数表，float16（一个头）",
                  "kv": f"KV 缓存，float16，d = {d_model}，全部层"}
        styles = {"float32": ("#31688e", "-"), "float16": ("#31688e", "--"), "kv": ("#b5367a", "-")}
        for key, label in labels.items():
            color, ls = styles[key]
            self.lines[key] = ax.plot(_N_AXIS, _N_AXIS, ls, color=color, lw=2, label=label)[0]
            self.dots[key] = ax.plot([1], [1], "o", color=color, ms=7, clip_on=False)[0]
        for limit, text in ((LAPTOP, "笔记本内存 16 GiB"), (GPU, "大显卡显存 80 GiB")):
            ax.axhline(limit, color="black", lw=0.8, ls=":", zorder=1.5)
            ax.text(_N_AXIS[0] * 1.2, limit * 1.4, text, fontsize=MIN_FONT_PT)
        _log_axes(ax, "序列长度 n（词数）", "字节（对数）", (1e4, 2**43), ([2**20, 2**30, 2**40], ["1 MiB", "1 GiB", "1 TiB"]))
        if self.narrow:  # 窄图里放不下图例：放在整张图的最下面
            fig.legend(loc="outside lower center", fontsize=MIN_FONT_PT, frameon=False)
        else:
            ax.legend(loc="lower right", fontsize=MIN_FONT_PT)
        self.ax, self.artists = ax, [*self.lines.values(), *self.dots.values(), ax.title]

    def update(self, n, num_layers):
        n, num_layers = int(n), int(num_layers)
        curve = {"float32": 4.0 * _N_AXIS**2, "float16": 2.0 * _N_AXIS**2,
                 "kv": 2.0 * 2 * num_layers * self.d_model * _N_AXIS.astype(float)}
        now = {"float32": score_matrix_bytes(n, "float32"), "float16": score_matrix_bytes(n, "float16"),
               "kv": kv_cache_bytes(n, self.d_model, num_layers, np.float16)}
        for key, y in curve.items():
            self.lines[key].set_data(_N_AXIS, y)
            self.dots[key].set_data([n], [now[key]])
        head = f"n = {n:,}，{num_layers} 层：KV 缓存 {_size(now['kv'])}"
        table = f"分数表 {_size(now['float32'])}（float32）/ {_size(now['float16'])}（float16）"
        self.ax.set_title(f"{head}\n{table}" if self.narrow else f"{head}；一张{table}", fontsize=TITLE_PT)
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
        size=(6.8, 4.0),
        narrow_size=(3.6, 4.6),
    )


# ---------------------------------------------------------------- 实测：用时与峰值内存（静态图）

KINDS = {"attention": "普通注意力", "tiled": "分块注意力", "rnn": "RNN"}
MEASURES = {"seconds": ("用时（单核，实测）", "秒"), "bytes": ("峰值额外内存（实测）", "字节")}
_TIMING_STYLES = {"attention": ("o-", "#31688e"), "tiled": ("s--", "#35b779"), "rnn": ("^-", "#b5367a")}


def _slope(k: float) -> str:
    """斜率写两位小数；平得几乎不动的线写 0.00，不写 "-0.00"。"""
    return f"{round(k, 2) + 0.0:.2f}"


def _check_measured(measured: object) -> dict[str, np.ndarray]:
    """``measured`` 必须是 ``measure_scaling`` 那样的字典：n 至少两个不同的正数，六列都是与 n 等长的正数。"""
    if not isinstance(measured, Mapping):
        raise TypeError(f"measured 必须是 tl.timing.measure_scaling 返回的字典，收到的是 {check.describe(measured)}。")
    fields = ["n", *(f"{kind}_{what}" for kind in KINDS for what in MEASURES)]
    missing = [f for f in fields if f not in measured]
    if missing:
        raise ValueError(f"measured 缺少字段 {', '.join(missing)}：这张图要画 {', '.join(fields)}。"
                         "提示：把 tl.timing.measure_scaling(...) 的结果原样传进来。")
    out = {f: check.as_real_array(measured[f], f"measured['{f}']", min_ndim=1).ravel() for f in fields}
    n = out["n"]
    if np.unique(n).size < 2:
        raise ValueError(f"measured['n'] 至少要有 2 个不同的长度，才拟合得出斜率，收到的是 {n.tolist()}。")
    for f, y in out.items():
        if y.shape != n.shape or np.any(y <= 0):
            raise ValueError(f"measured['{f}'] 必须是与 n 等长 ({n.size}) 的正数（对数坐标里没有 0 和负数），"
                             f"收到 shape={y.shape}、最小值 {y.min():g}。")
    return out


class _TimingView:
    """两张对数–对数图：实测的用时、峰值额外内存随 n 变化，三条线（普通注意力、分块注意力、RNN），图例里是斜率。"""

    def __init__(self, fig, axes, layout, measured, slopes):
        n = measured["n"]
        for ax, (what, (title, unit)) in zip(axes, MEASURES.items()):
            for kind, label in KINDS.items():
                marker, color = _TIMING_STYLES[kind]
                ax.loglog(n, measured[f"{kind}_{what}"], marker, color=color, lw=1.8, ms=5,
                          label=f"{label}（斜率 {_slope(slopes[kind, what])}）")
            ys = np.log10([measured[f"{kind}_{what}"] for kind in KINDS])  # (3, N)
            low, span = ys.min(), max(ys.max() - ys.min(), 0.5)
            ax.set_ylim(10 ** (low - 0.08 * span), 10 ** (ys.max() + 0.6 * span))  # 上面留出图例的地方：测得的线不会压在图例下
            ax.set_xticks(n, [str(int(v)) for v in n])
            ax.xaxis.set_minor_locator(NullLocator())
            ax.set_title(title, fontsize=TITLE_PT)
            ax.set_xlabel("序列长度 n")
            ax.set_ylabel(unit)
            ax.grid(alpha=0.3)
            ax.legend(loc="upper left", fontsize=MIN_FONT_PT, handlelength=1.8)
        self.drawn = {"n": n, **{f: measured[f] for f in measured if f != "n"},
                      "slopes": np.array([[slopes[kind, what] for what in MEASURES] for kind in KINDS])}  # (3, 2)

    def update(self):
        return self.drawn


def measured_scaling(measured: Mapping) -> Explorable:
    """第 7 章（静态图）：实测的用时和峰值额外内存随序列长度 n 怎样涨，每条线在图例里写着拟合的斜率。

    斜率由 ``tl.timing.loglog_slope`` 在对数–对数坐标里拟合：y 约正比于 n^斜率。

    Parameters
    ----------
    measured : dict
        ``tl.timing.measure_scaling(...)`` 的结果：``n`` (N,)，以及 ``attention_seconds``、``tiled_seconds``、
        ``rnn_seconds``、``attention_bytes``、``tiled_bytes``、``rnn_bytes``，都是 (N,) 的正数。

    Returns
    -------
    Explorable
        没有滑块的图（静态图）；``update()`` 返回画出的数组，``slopes`` (3, 2) 的行是普通注意力、分块注意力、RNN，
        列是用时、内存。

    Raises
    ------
    TypeError
        ``measured`` 不是字典，或某一列不是实数数组。
    ValueError
        缺少字段；n 少于 2 个不同的值；某一列与 n 不等长、或有 0、负数、NaN。

    Examples
    --------
    >>> n = np.array([1.0, 2.0, 4.0])
    >>> m = {"n": n, **{f"{k}_{w}": 3 * n**2 for k in ("attention", "tiled", "rnn") for w in ("seconds", "bytes")}}
    >>> measured_scaling(m).update()["slopes"][0].tolist()   # y = 3n²：斜率 2
    [2.0, 2.0]
    """
    measured = _check_measured(measured)
    slopes = {(kind, what): loglog_slope(measured["n"], measured[f"{kind}_{what}"]) for kind in KINDS for what in MEASURES}
    n = measured["n"]
    said = "；".join(f"{label}：用时斜率 {_slope(slopes[kind, 'seconds'])}、内存斜率 {_slope(slopes[kind, 'bytes'])}"
                    for kind, label in KINDS.items())
    return Explorable(
        view=_TimingView,
        sliders=[],
        data={"measured": measured, "slopes": slopes},
        title="实测：用时和峰值内存随序列长度 n 怎样涨",
        alt=(f"两张对数–对数图，横轴是序列长度 n（{int(n.min())} 到 {int(n.max())}）：第一张是实测用时，第二张是实测的"
             f"峰值额外内存，每张三条线。{said}。"),
        size=(6.8, 3.3),
        ncols=2,
        narrow_size=(3.6, 6.2),
    )
