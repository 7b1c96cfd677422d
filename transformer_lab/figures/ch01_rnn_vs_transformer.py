"""第 1 章的图：RNN 的"传话"会衰减或爆炸；RNN 要排队，注意力一步直达。另有两张静态图：用时曲线、"他"看"小明"。"""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Rectangle
from matplotlib.ticker import NullLocator

from .. import _validation as check
from ..core.attention import scaled_dot_product_attention
from ..core.rnn import input_jacobians, random_rnn
from ..plot.axes import log_y_axes
from ..plot.checks import increasing_ints, positive_series
from ..plot.figure import MIN_FONT_PT
from ..plot.heatmap import attention_heatmap, colorbar_below, text_color
from ..plot.lines import line_plot
from ..plot.text import title_number
from ..widgets.explorable import Explorable, Slider

__all__ = ["rnn_memory_decay", "queue_vs_direct", "timing_curves", "direct_attention_map"]

GAIN_GRID = (0.5, 0.8, 0.9, 1.0, 1.5, 2.0)
INPUT_GRID = (0.1, 0.5, 1.0)
T_GRID = (4, 8, 16, 32, 48, 64)
MAX_T, MAX_WIDTH, MAX_GAIN, MAX_INPUT = 256, 64, 4.0, 10.0  # 构造参数的上限：图的纵轴范围和几秒内画完
TOO_STEEP = "再大曲线就超出纵轴、甚至溢出"  # gain、input_scale 为什么有上限（写在报错里）
_RNN_COLOR, _LINEAR_COLOR, _ATTN_COLOR = "#b5367a", "#7f7f7f", "#31688e"
TITLE_PT = 10  # 子图标题的字号；总标题大 1 号。最小的字（图例、刻度旁的注释）是 MIN_FONT_PT = 9


class _MemoryView:
    """左（窄版：上）：第 1 个词对第 t 步笔记的影响 ‖∂h_t/∂x_1‖；右（窄版：下）：笔记本身的大小 ‖h_t‖。

    各有 tanh / 去掉 tanh 两条线，图例放在图的下方。窄版的总标题分两行、不写"随机权重"（正文写了）。
    """

    def __init__(self, fig, axes, layout, q, w_xh, x):
        self.q, self.w_xh, self.x = q, w_xh, x  # 第 1 章的随机 RNN（tl.random_rnn）
        T, d_h = x.shape[0], q.shape[0]
        self.t = np.arange(1, T + 1)
        self.narrow = layout.narrow
        self.axes, self.suptitle = axes, fig.suptitle(" ", fontsize=TITLE_PT + 1)
        if layout.narrow:  # 上下叠的两张子图：总标题、子图标题和上一张的横轴标签之间多留一点空，不挤成一团
            fig.get_layout_engine().set(h_pad=0.1)
        left, right = axes
        self.infl = left.plot(self.t, self.t, "-", color=_RNN_COLOR, lw=2, label="真实 RNN（有 tanh）")[0]
        self.infl_lin = left.plot(self.t, self.t, "--", color=_LINEAR_COLOR, lw=1.5,
                                  label=r"去掉 tanh（线性）：影响力正好 $\propto g^{t-1}$")[0]
        left.axhline(1.0, color="black", lw=0.8, zorder=1.5)  # 压在曲线下面：拖动时曲线重画在上层
        log_y_axes(left, "第 t 步", r"影响力 $\|\partial h_t/\partial x_1\|$", (1, T), (1e-30, 1e20),
                   [10.0**k for k in range(-30, 21, 10)])
        self.size = right.plot(self.t, self.t, "-", color=_RNN_COLOR, lw=2)[0]
        self.size_lin = right.plot(self.t, self.t, "--", color=_LINEAR_COLOR, lw=1.5)[0]
        right.axhline(np.sqrt(d_h), color=_RNN_COLOR, lw=0.8, ls=":", zorder=1.5)
        right.text(T, np.sqrt(d_h) * 2.2, rf"tanh 的上限 $\sqrt{{d_h}}$ = {np.sqrt(d_h):.0f}（点线）", ha="right",
                   fontsize=MIN_FONT_PT, color=_RNN_COLOR)
        # 纵轴只到 1e4：有 tanh 的笔记不超过 4，看得清；去掉 tanh 又 g > 1 时虚线冲出上沿，末值写在小标题里。
        log_y_axes(right, "第 t 步", r"笔记的大小 $\|h_t\|$", (1, T), (1e-2, 1e4), [10.0**k for k in range(-2, 5, 2)])
        for ax in axes:  # 少画几个刻度和文字：拖动滑块时重绘更快
            ax.set_xticks([1, *range(20, T + 1, 20)])
        # 两张子图的线型相同，图例只放一个，放在图的下方（不挡曲线）；窄版一行一条
        fig.legend(handles=[self.infl, self.infl_lin], loc="outside lower center", ncols=1 if layout.narrow else 2,
                   fontsize=MIN_FONT_PT, frameon=False)
        self.artists = [self.infl, self.infl_lin, self.size, self.size_lin, left.title, right.title, self.suptitle]

    def update(self, gain, input_scale):
        w_hh, x = float(gain) * self.q, float(input_scale) * self.x  # (d_h, d_h), (T, d_in)
        states, jac = input_jacobians(x, self.w_xh, w_hh)
        states_lin, jac_lin = input_jacobians(x, self.w_xh, w_hh, linear=True)
        infl = np.linalg.norm(jac[:, 0], ord=2, axis=(-2, -1))  # (T,)
        infl_lin = np.linalg.norm(jac_lin[:, 0], ord=2, axis=(-2, -1))  # (T,)
        size, size_lin = np.linalg.norm(states, axis=-1), np.linalg.norm(states_lin, axis=-1)  # (T,)
        for line, y in ((self.infl, infl), (self.infl_lin, infl_lin), (self.size, size), (self.size_lin, size_lin)):
            line.set_data(self.t, y)
        end = len(self.t)
        per_step = float((infl[-1] / infl[0]) ** (1.0 / (end - 1)))  # 平均每传一步乘上几：决定涨还是落
        self.axes[0].set_title(f"第 1 个词的影响（t = {end}）\n有 tanh：{title_number(infl[-1])}；"
                               f"去掉 tanh：{title_number(infl_lin[-1])}", fontsize=TITLE_PT)
        self.axes[1].set_title(f"笔记本身的大小（t = {end}）\n有 tanh：{size[-1]:.2f}；去掉 tanh：{title_number(size_lin[-1])}",
                               fontsize=TITLE_PT)
        trend = "大于 1，越传越大" if per_step > 1 else "小于 1，越传越小"
        if self.narrow:  # 手机：两行短句；"随机权重"写在正文里
            self.suptitle.set_text(f"放大倍数 g = {float(gain):g}，输入强度 {float(input_scale):g}\n"
                                   f"影响力平均每步乘上 {per_step:.3f}（{trend}）")
        else:
            self.suptitle.set_text(f"放大倍数 g = {float(gain):g}，输入强度 {float(input_scale):g}："
                                   f"影响力平均每步乘上 {per_step:.3f}\n（{trend}；随机权重，种子固定）")
        return {"influence": infl, "influence_linear": infl_lin, "size": size, "size_linear": size_lin,
                "per_step": np.array(per_step)}


def rnn_memory_decay(T: int = 60, d_in: int = 4, d_h: int = 16, seed: int = 1) -> Explorable:
    """第 1 章：拖动循环权重的放大倍数 g 和输入强度，看第 1 个词的影响怎样随步数衰减或爆炸。

    W_hh = g · Q（Q 是随机正交矩阵），所以去掉 tanh 时影响力正好按 g^(t−1) 变化；
    有 tanh 时还要乘上每一步的斜率 1 − h_t² ≤ 1。

    Parameters
    ----------
    T : int
        序列长度（横轴的步数）。
    d_in, d_h : int
        输入和隐状态的长度。
    seed : int
        随机权重与输入的种子。

    Returns
    -------
    Explorable

    Raises
    ------
    TypeError, ValueError
        ``T`` 不在 [2, 256] 之内、``d_in``/``d_h`` 不在 [1, 64] 之内，或 ``seed`` 不是非负整数。
    """
    T = check.int_in_range(T, "T", 2, MAX_T)
    d_in, d_h = check.int_in_range(d_in, "d_in", 1, MAX_WIDTH), check.int_in_range(d_h, "d_h", 1, MAX_WIDTH)
    q, w_xh, x = random_rnn(T, d_in, d_h, np.random.default_rng(check.seed(seed)))
    return Explorable(
        view=_MemoryView,
        data={"q": q, "w_xh": w_xh, "x": x},
        sliders=[
            Slider("gain", GAIN_GRID, label="放大倍数 g", default=0.9, continuous=True, step=0.05),
            Slider("input_scale", INPUT_GRID, label="输入强度", default=0.5, continuous=True, step=0.05),
        ],
        title="RNN 里第 1 个词的影响：衰减还是爆炸",
        alt=(f"放大倍数 g = {{gain}}、输入强度 {{input_scale}} 时，第一张子图是第 1 个词对第 t 步隐状态的影响力随 t 的变化"
             f"（对数纵轴，t = 1 到 {T}），第二张子图是隐状态的大小；实线有 tanh，虚线去掉 tanh。"),
        size=(6.8, 4.0),
        ncols=2,
        narrow_size=(3.6, 7.0),
    )


def _direct_weights(T: int, rng: np.random.Generator) -> np.ndarray:
    """手工设计的一句话：第 T 个词在找第 1 个词（两者的第 0 维都是 4），中间的词只是随机的"陪衬"。

    返回最后一个词的注意力权重 (T,)。
    """
    d_k = 8
    k = np.hstack([np.zeros((T, 1)), rng.standard_normal((T, d_k - 1))])  # (T, d_k)
    k[0] = 0.0
    k[0, 0] = 4.0  # 第 1 个词的键：我就是你要找的
    q = np.hstack([[4.0], 0.5 * rng.standard_normal(d_k - 1)])[None, :]  # (1, d_k)
    _, weights = scaled_dot_product_attention(q, k, np.eye(T))  # (1, T)
    return weights[0]  # (T,)


class _QueueView:
    """左（窄版：上）：每个词在第几轮算完（RNN 是楼梯，注意力是一堵墙）；
    右（窄版：下）：最后一个词从第 j 个词那里得到多少影响。窄版的总标题更短。
    """

    def __init__(self, fig, axes, layout, rnn_influence, attention, gain):
        self.rnn_influence = rnn_influence  # (T_max, T_max)：第 t 步受第 j 个词影响的大小
        self.attention = attention  # T -> (T,)：最后一个词的注意力权重（手工设计）
        T_max = rnn_influence.shape[0]
        self.axes, self.gain, self.suptitle = axes, gain, fig.suptitle(" ", fontsize=TITLE_PT + 1)
        self.narrow = layout.narrow
        if layout.narrow:  # 同 _MemoryView：上下叠时多留一点空
            fig.get_layout_engine().set(h_pad=0.1)
        left, right = axes
        self.rnn_dots = left.plot([], [], "s", color=_RNN_COLOR, ms=3.5, label="RNN：第 t 个词在第 t 轮算完")[0]
        self.attn_dots = left.plot([], [], "o", color=_ATTN_COLOR, ms=3.5, label="注意力：所有词在第 1 轮算完")[0]
        left.set_xlim(0, T_max + 1)
        left.set_ylim(T_max + 1, 0)  # 第 1 个词在最上面
        left.set_xlabel("第几轮（必须一轮接一轮）")
        left.set_ylabel("词的位置")
        left.legend(loc="upper right", fontsize=MIN_FONT_PT)
        left.grid(alpha=0.3)
        # 两条线量法不同（RNN：推一推输入 x_j；注意力：权重），所以各自换成"占总影响的几成"再比（每条线加起来都是 1）。
        self.rnn_line = right.plot([], [], "s-", color=_RNN_COLOR, ms=3, lw=1.2,
                                   label=r"RNN：$\|\partial h_T/\partial x_j\|$ ÷ 总和")[0]
        self.attn_line = right.plot([], [], "o-", color=_ATTN_COLOR, ms=3, lw=1.2,
                                    label=r"注意力：权重 $\alpha_{T,j}$（手工设计）")[0]
        # 纵轴下到 1e-15：右下角的图例压不到任何一条线（T = 64 时 RNN 最低的点约 4e-10）
        log_y_axes(right, "第 j 个词", "占全部影响的比例", (0, T_max + 1), (1e-15, 5.0), [10.0**k for k in range(-15, 1, 3)])
        ticks = range(0, T_max + 1, 16 if T_max >= 32 else 4)  # 少画几个刻度：拖动滑块时重绘更快
        for ax in axes:
            ax.set_xticks(ticks)
        left.set_yticks(ticks)
        right.legend(loc="lower right", fontsize=MIN_FONT_PT)
        self.artists = [self.rnn_dots, self.attn_dots, self.rnn_line, self.attn_line, left.title, right.title,
                        self.suptitle]

    def update(self, T):
        T = int(T)
        positions = np.arange(1, T + 1)  # (T,)
        rnn = self.rnn_influence[T - 1, :T]  # (T,)：因果性——前 T 个词的影响与后面的词无关
        rnn_share = rnn / rnn.sum()  # (T,)：占全部影响的比例，和注意力权重一样加起来是 1
        attn = self.attention[T]  # (T,)
        self.rnn_dots.set_data(positions, positions)
        self.attn_dots.set_data(np.ones(T), positions)
        self.rnn_line.set_data(positions, rnn_share)
        self.attn_line.set_data(positions, attn)
        self.axes[0].set_title(f"RNN 要 {T} 轮，注意力 1 轮", fontsize=TITLE_PT)
        self.axes[1].set_title(f"第 1 个词占第 {T} 个词所受影响的比例\n"
                               f"RNN {title_number(rnn_share[0])}，注意力 {attn[0]:.2f}", fontsize=TITLE_PT)
        if self.narrow:
            self.suptitle.set_text(f"T = {T} 个词：排队传话 vs 一步直达\n（RNN 用随机权重，注意力是手工设计）")
        else:
            self.suptitle.set_text(f"一句话有 T = {T} 个词：排队传话 vs 一步直达\n"
                                   f"（RNN：g = {self.gain:g} 的随机权重；注意力：手工设计的示意）")
        return {"rnn_rounds": positions, "attention_rounds": np.ones(T), "rnn": rnn, "rnn_share": rnn_share,
                "attention": attn}


def queue_vs_direct(T_max: int = 64, gain: float = 0.9, input_scale: float = 0.5, seed: int = 1) -> Explorable:
    """第 1 章：拖动句子长度 T，比较 RNN 与注意力"算完要几轮"和"第 1 个词还剩多少影响"。

    Parameters
    ----------
    T_max : int
        横轴的最大长度；滑块的网格不超过它。
    gain, input_scale : float
        RNN 循环权重的放大倍数与输入强度（与 ``rnn_memory_decay`` 的含义相同）。
    seed : int
        随机权重与输入的种子。

    Returns
    -------
    Explorable

    Raises
    ------
    TypeError, ValueError
        ``T_max`` 不在 [8, 256] 之内（滑块至少要有 4 和 8 两个取值）、``gain`` 不在 (0, 4] 之内、
        ``input_scale`` 不在 (0, 10] 之内，或 ``seed`` 不是非负整数。
    """
    T_max = check.int_in_range(T_max, "T_max", T_GRID[1], MAX_T)
    gain = check.positive_real_up_to(gain, "gain", MAX_GAIN, TOO_STEEP)
    input_scale = check.positive_real_up_to(input_scale, "input_scale", MAX_INPUT, TOO_STEEP)
    seed = check.seed(seed)
    grid = tuple(T for T in T_GRID if T <= T_max)
    q, w_xh, x = random_rnn(T_max, 4, 16, np.random.default_rng(seed))
    _, jac = input_jacobians(input_scale * x, w_xh, gain * q)  # (T_max, T_max, d_h, d_in)
    attention = {T: _direct_weights(T, np.random.default_rng(seed)) for T in range(1, T_max + 1)}
    return Explorable(
        view=_QueueView,
        data={"rnn_influence": np.linalg.norm(jac, ord=2, axis=(-2, -1)), "attention": attention, "gain": gain},
        sliders=[Slider("T", grid, label="句子长度 T", default=16 if 16 in grid else grid[-1], continuous=True)],
        title="排队传话 vs 一步直达",
        alt=("句子长度 T = {T}：第一张子图中 RNN 的 T 个词沿对角线一轮一个地算完，注意力的所有词都在第 1 轮算完；"
             "第二张子图是第 j 个词占最后一个词所受影响的比例（两条线各自加起来是 1），RNN 离得越远越小，"
             "注意力集中在第 1 个词上。"),
        size=(6.8, 4.0),
        ncols=2,
        narrow_size=(3.6, 7.0),
    )


# ---------------------------------------------------------------- 静态图（没有滑块的 Explorable）

TIMING_KEYS = ("rnn", "attention", "rnn_batched")  # time_rnn_vs_attention 量的三件事
_TIMING_LABELS = ("RNN（一步接一步）", "自注意力（一次批量乘法）", "假想：RNN 的乘加不排队")


class _TimingView:
    """三件事的用时随句子长度 T 的变化，双对数坐标；横轴只标测过的长度（窄版隔一个标一个）。"""

    def __init__(self, fig, axes, layout, lengths, times, d):
        (ax,) = axes
        self.lengths, self.times = lengths, times  # (N,)；{名字: (N,) 秒}
        self.lines = line_plot(lengths, {label: times[key] * 1e3 for key, label in zip(TIMING_KEYS, _TIMING_LABELS)},
                               ax=ax, xscale="log", yscale="log", xlabel="句子长度 T", ylabel="用时（毫秒）")
        words = "" if d is None else f"每个词 {d} 维，"
        ax.set_title(f"用时随句子长度 T 的变化\n（{words}单核）" if layout.narrow
                     else f"用时随句子长度 T 的变化（{words}单核）", fontsize=TITLE_PT + 1)
        ticks = lengths[::2] if layout.narrow and len(lengths) > 4 else lengths
        ax.set_xticks(ticks, [str(T) for T in ticks])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.get_legend().remove()  # 图例放在图下方：不挡曲线，窄版一行一条
        fig.legend(handles=self.lines, loc="outside lower center", ncols=1 if layout.narrow else 3,
                   fontsize=MIN_FONT_PT, frameon=False)

    def update(self):
        return {"T": self.lengths, **{f"{key}_ms": self.times[key] * 1e3 for key in TIMING_KEYS}}


def _check_timing(tim: object) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """``time_rnn_vs_attention`` 的结果：键齐全，T 是递增的正整数，三组用时都是正数、和 T 一样长。"""
    if not isinstance(tim, dict):
        raise TypeError(f"tim 必须是 tl.timing.time_rnn_vs_attention 返回的字典，收到的是 {check.describe(tim)}。")
    missing = [key for key in ("T", *TIMING_KEYS) if key not in tim]
    if missing:
        raise ValueError(f"tim 缺少键 {missing}：应有 'T'、'rnn'、'attention'、'rnn_batched'"
                         f"（tl.timing.time_rnn_vs_attention 的结果），收到的键是 {sorted(tim)}。")
    lengths = increasing_ints(tim["T"], "tim['T']", "测过的句子长度")
    times = {key: positive_series(tim[key], f"tim[{key!r}]", len(lengths), "每个长度一个用时，秒") for key in TIMING_KEYS}
    return lengths.astype(int), times


def timing_curves(tim: dict, d: int | None = None) -> Explorable:
    """第 1 章的静态图：RNN、自注意力、"不排队的 RNN"三件事的用时随句子长度 T 的变化（双对数坐标）。

    Parameters
    ----------
    tim : dict
        ``tl.timing.time_rnn_vs_attention`` 的结果：``T`` (N,) 句子长度，``rnn``、``attention``、
        ``rnn_batched`` (N,) 用时（秒）。图上画成毫秒。
    d : int, optional
        每个词的维数，给出时写进标题。

    Returns
    -------
    Explorable
        没有滑块的静态图：宽版给电脑，窄版给手机（标题分两行、横轴隔一个长度标一个、图例一行一条）。

    Raises
    ------
    TypeError, ValueError
        ``tim`` 不是字典、缺键、``T`` 不是至少 2 个递增的正整数、某组用时不是同样长的正数数组；
        ``d`` 不是正整数。
    """
    lengths, times = _check_timing(tim)
    d = None if d is None else check.positive_int(d, "d")
    last = len(lengths) - 1
    return Explorable(
        view=_TimingView,
        data={"lengths": lengths, "times": times, "d": d},
        sliders=[],
        title="用时随句子长度 T 的变化",
        alt=(f"双对数坐标上的三条用时曲线（毫秒），句子长度 T 从 {lengths[0]} 到 {lengths[last]}："
             f"RNN 一步接一步（T = {lengths[last]} 时 {times['rnn'][last] * 1e3:.3g} 毫秒），"
             f"自注意力一次批量乘法（{times['attention'][last] * 1e3:.3g} 毫秒），"
             f"假想的不排队 RNN（{times['rnn_batched'][last] * 1e3:.3g} 毫秒）。"),
        size=(6.8, 3.8),
        narrow_size=(3.6, 4.2),
    )


class _DirectView:
    """注意力权重表，最后一个词（代词）那一行加框。窄版格子太小，只在那一行的大权重（≥ 0.1）上写数。"""

    def __init__(self, fig, axes, layout, weights, tokens, title):
        (ax,) = axes
        self.weights = weights  # (T, T)
        T = len(tokens)
        heat = attention_heatmap(weights, list(tokens), ax=ax, title=title, annotate=not layout.narrow)
        ax.title.set_fontsize(TITLE_PT + 1)
        if layout.narrow:  # 手机：色条挪到下面，格子才够宽（约 0.28 英寸）写得下加框那一行的大权重（≥ 0.1）
            colorbar_below(heat)
            for j in np.flatnonzero(weights[-1] >= 0.1):
                ax.text(j, T - 1, f"{weights[-1, j]:.2f}", ha="center", va="center", fontsize=MIN_FONT_PT,
                        color=text_color(weights[-1, j], 1.0))
            ax.set_xticks(range(T), tokens, rotation=90)  # 竖着写：三个字的词横着或斜着都会挤到一起
        elif max(map(len, tokens)) > 2:
            ax.set_xticks(range(T), tokens, rotation=30, ha="right", rotation_mode="anchor")
        ax.add_patch(Rectangle((-0.5, T - 1.5), T, 1, fill=False, edgecolor="#d62728", linewidth=2))

    def update(self):
        return {"weights": self.weights}


def direct_attention_map(weights: np.ndarray, tokens: list[str] | tuple[str, ...], designed: bool = True) -> Explorable:
    """第 1 章的静态图：一句话的注意力权重表，最后一个词（代词）那一行加红框，标题写它一步看到了谁。

    Parameters
    ----------
    weights : ndarray of shape (T, T)
        自注意力权重：第 i 行是第 i 个词分给每个词的权重（每个数在 [0, 1] 里，每行加起来是 1）。
    tokens : list of str, length T
    designed : bool
        权重是不是手工设计的；是的话标题注明"手工设计的示意，不是训练所得"。

    Returns
    -------
    Explorable
        没有滑块的静态图。宽版每格写数；窄版（手机）只在加框那一行的大权重（≥ 0.1）上写数。

    Raises
    ------
    TypeError, ValueError
        ``weights`` 不是 (T, T) 的实数数组、有数不在 [0, 1] 里、某行加起来不是 1；``tokens`` 不是 T 个字符串
        （T ≥ 2）；``designed`` 不是 bool。
    """
    weights = check.as_real_array(weights, "weights")
    tokens = check.string_list(tokens, "tokens")
    designed = check.boolean(designed, "designed")
    T = len(tokens)
    if T < 2 or weights.shape != (T, T):
        raise ValueError(f"weights 的形状必须是 (T, T) = ({T}, {T})（tokens 有 {T} 个词，至少 2 个），"
                         f"收到的是 {weights.shape}。")
    if np.any(weights < 0) or np.any(weights > 1) or not np.allclose(weights.sum(axis=-1), 1.0, atol=1e-6):
        raise ValueError("weights 必须是注意力权重：每个数在 [0, 1] 里、每一行加起来等于 1，"
                         f"收到的行和是 {np.round(weights.sum(axis=-1), 4).tolist()}。")
    query, target = tokens[-1], tokens[int(weights[-1].argmax())]
    where = "句首的" if weights[-1].argmax() == 0 else ""
    title = f"“{query}”一步看到{where}“{target}”" + ("\n（手工设计的示意，不是训练所得）" if designed else "")
    return Explorable(
        view=_DirectView,
        data={"weights": weights, "tokens": tokens, "title": title},
        sliders=[],
        title=f"“{query}”一步看到“{target}”",
        alt=(f"{T}×{T} 的注意力权重表，行是提问的词、列是被关注的词：{'、'.join(tokens)}。最后一行“{query}”加了红框，"
             f"它把 {weights[-1].max():.2f} 的权重给了“{target}”。" + ("手工设计的示意，不是训练所得。" if designed else "")),
        size=(5.6, 5.0),
        narrow_size=(3.6, 4.5),  # 方格子的热力图刚好占满：再高只会在上下留白
    )
