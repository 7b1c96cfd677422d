"""第 4 章的图：一句话的注意力热力图，四步的形状图（每一步进出什么形状的数组），点积方差随 d_k 增长的对数图，
以及除以 √d_k 前后的 softmax 权重（可交互）。

每张图都画两种版式（见 ``plot.figure.Layout``）：宽版给电脑（≤ 6.8 英寸），窄版给手机（≤ 3.6 英寸，子图竖排、
标题更短、刻度更少）。静态图是没有滑块的 ``Explorable``。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from ..core.attention import scaled_dot_product_attention
from ..core.softmax import softmax
from ..lessons.saturation import saturation_demo
from ..plot.bars import weight_bars
from ..plot.checks import increasing_ints, positive_series, square_weights
from ..plot.figure import MIN_FONT_PT
from ..plot.heatmap import attention_heatmap
from ..plot.lines import line_plot
from ..plot.shape_diagram import cell_text, draw_four_steps, plan_four_steps
from ..plot.ticks import log_ticks, spread_ticks
from ..widgets.explorable import Explorable, Slider

__all__ = ["sentence_attention", "four_steps_shapes", "variance_growth", "scaling_saturation"]

TITLE_PT = 10.5  # 标题；其余的字不小于 MIN_FONT_PT (9 pt)


# ---------------------------------------------------------------- 一句话的注意力热力图（静态）

class _SentenceView:
    """一张注意力热力图：行是提问的词，列是被看的词，格子里写权重。"""

    def __init__(self, fig, axes, layout, weights, tokens, title):
        attention_heatmap(weights, list(tokens), ax=axes[0], title=title)
        axes[0].title.set_fontsize(TITLE_PT)
        self.weights = weights

    def update(self):
        return {"weights": self.weights}


def sentence_attention(weights: np.ndarray, tokens, sentence: str, note: str = "手工设计的示意，不是训练所得"):
    """第 4 章：一句话里每个词对每个词的注意力权重，画成一张热力图（静态图，两种版式）。

    Parameters
    ----------
    weights : ndarray of shape (T, T)
        注意力权重，每个数在 [0, 1] 之内（颜色上限固定为 1）。
    tokens : list of str, length T
        句子里的词（两条轴都标上它们）。
    sentence : str
        写在标题里的原句，例如 ``"小猫睡了，因为它累了"``。
    note : str
        标题第二行括号里的说明（默认说明权重是手工设计的）。

    Returns
    -------
    Explorable
        没有滑块的 Explorable（静态图）。

    Raises
    ------
    TypeError, ValueError
        ``weights`` 不是有限实数的方阵、有数不在 [0, 1] 之内；``tokens`` 不是字符串列表或个数与行数不符；
        ``sentence``、``note`` 不是非空字符串。
    """
    tokens = check.string_list(tokens, "tokens")
    weights = square_weights(weights, "weights", len(tokens))
    sentence, note = check.nonempty_text(sentence, "sentence"), check.nonempty_text(note, "note")
    title = f"「{sentence}」的注意力权重\n（{note}）"
    return Explorable(
        view=_SentenceView, sliders=[], data={"weights": weights, "tokens": tokens, "title": title},
        title=f"「{sentence}」的注意力权重",
        alt=(f"「{sentence}」的注意力权重热力图：行是提问的词，列是被看的词（{'、'.join(tokens)}），"
             "颜色越亮权重越大，每个格子里写着权重。"),
        size=(4.6, 4.0), narrow_size=(3.6, 3.4),
    )


# ---------------------------------------------------------------- 四步的形状图（静态）

MAX_CELLS = 12  # 每个数组最多画 12 行、12 列：再多格子就太小了


class _FourStepsView:
    """按 ``plot.shape_diagram`` 排好的位置画七个数组、四支箭头和词（排法见 ``plan_four_steps``）。"""

    def __init__(self, fig, axes, layout, arrays, plans):
        draw_four_steps(axes[0], plans[layout.name], arrays)
        self.arrays = arrays

    def update(self):
        return dict(self.arrays)


def _checked_four_steps(q, k, v, query_tokens, key_tokens):
    """检查输入（形状规则交给 ``scaled_dot_product_attention``），返回浮点数组和两串词。"""
    q, k, v = (check.as_real_array(a, n, min_ndim=2) for a, n in ((q, "q"), (k, "k"), (v, "v")))
    for a, n in ((q, "q"), (k, "k"), (v, "v")):
        if a.ndim != 2:
            raise ValueError(f"{n} 必须是二维数组（一行一个词），收到的是 {a.ndim} 维，shape={a.shape}。")
        if max(a.shape) > MAX_CELLS:
            raise ValueError(f"{n} 的每一维最多 {MAX_CELLS}（格子里要写得下数字），收到的 shape={a.shape}。")
    scaled_dot_product_attention(q, k, v)  # d_k、S 对不上时在这里报错
    query_tokens, key_tokens = check.string_list(query_tokens, "query_tokens"), check.string_list(key_tokens, "key_tokens")
    for tokens, name, n, what in ((query_tokens, "query_tokens", q.shape[0], "q 的行数 T"),
                                  (key_tokens, "key_tokens", k.shape[0], "k 的行数 S")):
        if len(tokens) != n:
            raise ValueError(f"{name} 有 {len(tokens)} 个词，应该等于 {what} = {n}：每一行配一个词。")
    return q, k, v, query_tokens, key_tokens


def four_steps_shapes(q: np.ndarray, k: np.ndarray, v: np.ndarray, query_tokens, key_tokens):
    """第 4 章：四步的形状图。T 个查询、S 个键值，每一步进来什么、出去什么，连同每个格子的数值（静态图）。

    排法和手算矩阵乘法一样：``Q`` 在分数表左边、``Kᵀ`` 在它上面（第 1 步）；权重在输出左边、``V`` 在输出上面
    （第 4 步）。宽版（电脑）里第 2、3 步不改形状，从上往下画在同一列里，第 4 步在右边；窄版（手机）里图只有一半宽，
    第 3 步的权重拐到左下角，第 4 步画在它右边（``V`` 在缩放后的分数下面），整张图从上往下读。
    格子太小、数字写不下 9 pt 时，那种版式不写数值（标题里注明）。

    Parameters
    ----------
    q : ndarray of shape (T, d_k)
    k : ndarray of shape (S, d_k)
    v : ndarray of shape (S, d_v)
    query_tokens : list of str, length T
        提问的词（画在 Q 和权重的每一行左边）。
    key_tokens : list of str, length S
        被看的词（画在 Kᵀ 的每一列上面、V 的每一行左边）。

    Returns
    -------
    Explorable
        没有滑块的 Explorable（静态图）；``update()`` 返回七个数组（``q``、``k_t``、``scores``、``scaled``、
        ``weights``、``v``、``out``）。

    Raises
    ------
    TypeError, ValueError
        数组不是二维有限实数数组、某一维超过 12、d_k 或 S 对不上；词不是字符串列表，或个数与行数不符。
    """
    q, k, v, query_tokens, key_tokens = _checked_four_steps(q, k, v, query_tokens, key_tokens)
    scores = q @ k.T  # (T, S)
    scaled = scores / np.sqrt(q.shape[1])  # (T, S)
    weights = softmax(scaled, axis=-1)  # (T, S)
    arrays = {"q": q, "k_t": k.T, "scores": scores, "scaled": scaled, "weights": weights, "v": v,
              "out": weights @ v}  # out: (T, d_v)
    numbers = [cell_text(x) for a in arrays.values() for x in np.ravel(a)]
    plans = {name: plan_four_steps(q.shape, v.shape, query_tokens, key_tokens, numbers, narrow=name == "narrow")
             for name in ("wide", "narrow")}
    (T, d_k), S, d_v = q.shape, k.shape[0], v.shape[1]
    cells = "每个格子里写着它的数值" if all(p.numbers for p in plans.values()) else "格子放得下时写着数值"
    return Explorable(
        view=_FourStepsView, sliders=[],
        data={"arrays": arrays, "plans": plans},
        title="四步的形状：进来什么，出去什么",
        alt=(f"四步的形状图：查询 Q ({T}×{d_k}) 乘键的转置 Kᵀ ({d_k}×{S}) 得到分数 ({T}×{S})，除以 √{d_k}、"
             f"每行做 softmax 得到权重 ({T}×{S})，再乘值 V ({S}×{d_v}) 得到输出 ({T}×{d_v})；{cells}。"),
        size=plans["wide"].size, narrow_size=plans["narrow"].size,
    )


# ---------------------------------------------------------------- 点积的方差随 d_k 增长（静态）

class _VarianceView:
    """对数—对数坐标：不缩放的 Var(q·k) 随 d_k 增长，缩放后的始终在 1 附近。"""

    def __init__(self, fig, axes, layout, dims, raw_var, scaled_var, samples):
        (ax,) = axes
        curves = {"不缩放：Var($q\\cdot k$)": raw_var, "缩放后：Var($q\\cdot k/\\sqrt{d_k}$)": scaled_var}
        title = (f"点积的方差随 $d_k$ 增长\n（每个 $d_k$ 抽样 {samples} 对）" if layout.narrow
                 else f"点积的方差随 $d_k$ 增长（每个 $d_k$ 抽样 {samples} 对）")
        line_plot(dims, curves, ax=ax, xscale="log", yscale="log", title=title, xlabel="$d_k$", ylabel="方差")
        ax.title.set_fontsize(TITLE_PT)
        shown = spread_ticks(dims, 0.45 if layout.narrow else 0.25)  # 对数轴上太挤的刻度字去掉（最大的一个总留着）
        ax.set_xticks(shown, [f"{d:g}" for d in shown])
        ax.set_yticks(*log_ticks(np.concatenate([raw_var, scaled_var])))
        ax.minorticks_off()
        ax.legend(loc="upper left", fontsize=MIN_FONT_PT)
        self.drawn = {"dims": dims, "raw_var": raw_var, "scaled_var": scaled_var}

    def update(self):
        return dict(self.drawn)


def variance_growth(dims, raw_var, scaled_var, samples: int):
    """第 4 章：点积 q·k 的方差随 d_k 增长（不缩放），除以 √d_k 后回到 1 左右；对数—对数坐标（静态图）。

    Parameters
    ----------
    dims : sequence of int, length N
        从小到大的 d_k（至少两个），例如 ``[1, 4, 16, 64, 256, 512]``。
    raw_var, scaled_var : sequence of float, length N
        每个 d_k 抽样估计出的 Var(q·k) 与 Var(q·k/√d_k)（见 ``tl.saturation.dot_product_variance``），都要 > 0。
    samples : int
        每个 d_k 抽样了多少对（写在标题里）。

    Returns
    -------
    Explorable
        没有滑块的 Explorable（静态图）。

    Raises
    ------
    TypeError, ValueError
        ``dims`` 不是至少两个、从小到大的正整数；方差不是同样长、有限的正数；``samples`` 不是正整数。
    """
    dims = increasing_ints(np.asarray(dims) if isinstance(dims, (list, tuple)) else dims, "dims", "d_k")
    arrays = {name: positive_series(np.asarray(values) if isinstance(values, (list, tuple)) else values, name, len(dims),
                                    "每个 d_k 一个方差")
              for name, values in (("raw_var", raw_var), ("scaled_var", scaled_var))}
    samples = check.positive_int(samples, "samples")
    return Explorable(
        view=_VarianceView, sliders=[], data={"dims": dims, **arrays, "samples": samples},
        title="点积的方差随 d_k 增长",
        alt=(f"对数坐标上的两条线：横轴 d_k 从 {dims[0]:g} 到 {dims[-1]:g}；不缩放的 Var(q·k) 从 "
             f"{arrays['raw_var'][0]:.1f} 涨到 {arrays['raw_var'][-1]:.1f}，差不多等于 d_k；"
             f"除以 √d_k 之后一直在 {arrays['scaled_var'].min():.2f} 到 {arrays['scaled_var'].max():.2f} 之间。"),
        size=(5.6, 3.5), narrow_size=(3.6, 3.2),
    )


# ---------------------------------------------------------------- 除以 √d_k 前后（可交互）

MAX_KEYS = 64  # 再多柱子就挤成一团
MAX_NUMBERED_BARS = 10  # 柱子再多，柱顶的数字（9 pt）就挤在一起了：只画柱子，刻度字隔几个写一个
DK_GRID = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


class _ScalingView:
    """左（窄版：上）：不缩放的 softmax(q·k)；右（窄版：下）：缩放后的 softmax(q·k/√d_k)。同一组随机向量。"""

    def __init__(self, fig, axes, layout, num_keys, seed):
        self.num_keys, self.seed, self.narrow = num_keys, seed, layout.narrow
        labels = [f"k{j + 1}" for j in range(num_keys)]
        zeros = np.zeros(num_keys)
        self.raw = weight_bars(zeros, labels, ax=axes[0], color="#b5367a", ylim=(0.0, 1.15))
        self.scaled = weight_bars(zeros, labels, ax=axes[1], color="#31688e", ylim=(0.0, 1.15))
        every = max(1, -(-num_keys // MAX_NUMBERED_BARS))  # 刻度字隔几个写一个
        for ax, bars in ((axes[0], self.raw), (axes[1], self.scaled)):
            ax.set_ylabel("注意力权重")
            ax.set_yticks([0, 0.5, 1.0])
            ax.set_xticks(range(0, num_keys, every), labels[::every])
            for text in bars.texts:
                text.set_visible(num_keys <= MAX_NUMBERED_BARS)
        self.axes, self.suptitle = axes, fig.suptitle(" ", fontsize=TITLE_PT)
        self.artists = [*self.raw.artists, *self.scaled.artists, axes[0].title, axes[1].title, self.suptitle]

    def update(self, d_k):
        demo = saturation_demo(int(d_k), self.num_keys, np.random.default_rng(self.seed))
        self.raw.set_values(demo["raw"])
        self.scaled.set_values(demo["scaled"])
        for ax, head, w, g in ((self.axes[0], "不缩放：softmax($q\\cdot k$)", demo["raw"], demo["grad_raw"]),
                               (self.axes[1], "缩放：softmax($q\\cdot k/\\sqrt{d_k}$)", demo["scaled"], demo["grad_scaled"])):
            ax.set_title(f"{head}\n最大权重 {w.max():.2f}，梯度最大 {g:.3f}", fontsize=MIN_FONT_PT + 1)
        scores = demo["scores"]
        spread = f"$d_k$ = {int(d_k)}：{self.num_keys} 个点积从 {scores.min():.1f} 到 {scores.max():.1f}"
        gap = f"最大与最小差 {np.ptp(scores):.1f}"
        self.suptitle.set_text(f"{spread}\n{gap}：分数拉得越开，softmax 越尖" if self.narrow
                               else f"{spread}，{gap}（分数拉得越开，softmax 越尖）")
        return demo


def scaling_saturation(num_keys: int = 8, seed: int = 0) -> Explorable:
    """第 4 章：拖动 d_k，比较除不除以 √d_k 时 softmax 权重有多"尖"。

    Parameters
    ----------
    num_keys : int
        键的个数（柱子的根数）。超过 10 根时柱顶不写数字、刻度字隔几个写一个（否则挤在一起）。
    seed : int
        随机向量的种子；同一个种子，静态网页和 JupyterLab 里画的是同一组向量。

    Returns
    -------
    Explorable

    Raises
    ------
    TypeError, ValueError
        ``num_keys`` 不是 1 到 64 的整数，或 ``seed`` 不是非负整数。
    """
    num_keys = check.at_most(check.positive_int(num_keys, "num_keys"), "num_keys", MAX_KEYS, "每个键画一根柱子")
    seed = check.seed(seed)
    return Explorable(
        view=_ScalingView,
        data={"num_keys": num_keys, "seed": seed},
        sliders=[Slider("d_k", DK_GRID, label="d_k", default=64, continuous=True)],
        title="除以 √d_k 前后的注意力权重",
        alt=f"d_k = {{d_k}} 时，{num_keys} 个键的注意力权重：左边（手机上是上面）不缩放，右边（下面）除以 √d_k。",
        size=(6.8, 3.4), ncols=2, narrow_size=(3.6, 5.6),
    )
