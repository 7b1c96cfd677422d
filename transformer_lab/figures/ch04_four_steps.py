"""第 4 章的图：四步的形状图（每一步进出什么形状的数组），以及除以 √d_k 前后的 softmax 权重（可交互）。"""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Rectangle

from .. import _validation as check
from ..core.attention import scaled_dot_product_attention
from ..core.softmax import softmax
from ..lessons.saturation import saturation_demo
from ..plot.bars import weight_bars
from ..plot.figure import CMAP, new_figure
from ..plot.heatmap import text_color
from ..widgets.explorable import Explorable, Slider

__all__ = ["four_steps_shapes", "scaling_saturation"]

MAX_KEYS = 64  # 再多柱子就挤成一团，数字也看不清
DK_GRID = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


class _ScalingView:
    """左：不缩放的 softmax(q·k)；右：缩放后的 softmax(q·k/√d_k)。同一组随机向量。"""

    def __init__(self, fig, axes, layout, num_keys, seed):
        self.num_keys, self.seed = num_keys, seed
        labels = [f"k{j + 1}" for j in range(num_keys)]
        zeros = np.zeros(num_keys)
        self.raw = weight_bars(zeros, labels, ax=axes[0], color="#b5367a", ylim=(0.0, 1.12))
        self.scaled = weight_bars(zeros, labels, ax=axes[1], color="#31688e", ylim=(0.0, 1.12))
        axes[0].set_ylabel("注意力权重")
        self.axes, self.suptitle = axes, fig.suptitle(" ")
        self.artists = [*self.raw.artists, *self.scaled.artists, axes[0].title, axes[1].title, self.suptitle]

    def update(self, d_k):
        demo = saturation_demo(int(d_k), self.num_keys, np.random.default_rng(self.seed))
        self.raw.set_values(demo["raw"])
        self.scaled.set_values(demo["scaled"])
        self.axes[0].set_title(
            "不缩放：softmax($q\\cdot k$)\n" f"最大权重 {demo['raw'].max():.2f}，梯度最大 {demo['grad_raw']:.3f}"
        )
        self.axes[1].set_title(
            "缩放：softmax($q\\cdot k/\\sqrt{d_k}$)\n"
            f"最大权重 {demo['scaled'].max():.2f}，梯度最大 {demo['grad_scaled']:.3f}"
        )
        self.suptitle.set_text(
            f"$d_k$ = {int(d_k)}：这 {self.num_keys} 个点积从 {demo['scores'].min():.1f} 到 {demo['scores'].max():.1f}，"
            f"最大与最小差 {np.ptp(demo['scores']):.1f}（分数拉得越开，softmax 越尖）"
        )
        return demo


def scaling_saturation(num_keys: int = 8, seed: int = 0) -> Explorable:
    """第 4 章：拖动 d_k，比较除不除以 √d_k 时 softmax 权重有多"尖"。

    Parameters
    ----------
    num_keys : int
        键的个数（柱子的根数）。
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
    num_keys = check.at_most(check.positive_int(num_keys, "num_keys"), "num_keys", MAX_KEYS, "每个键画一根带数字的柱子")
    seed = check.nonnegative_int(seed, "seed")
    return Explorable(
        view=_ScalingView,
        data={"num_keys": num_keys, "seed": seed},
        sliders=[Slider("d_k", DK_GRID, label="d_k", default=64, continuous=True)],
        title="除以 √d_k 前后的注意力权重",
        alt=f"d_k = {{d_k}} 时，{num_keys} 个键的注意力权重：左边不缩放，右边除以 √d_k。",
        size=(8.4, 3.6),
        ncols=2,
    )


# ---------------------------------------------------------------- 四步的形状图（静态）

MAX_CELLS = 12  # 每个数组最多画 12 行、12 列：再多格子里的数字就看不清
GAP = 2.8  # 两个数组之间留几格宽，放箭头和步骤名


def _block(ax, a, x0, y0, name, shape):
    """把数组 ``a`` 画在左上角 (x0, y0)（单位：格子），每格写上数值，下面写名字和形状。"""
    rows, cols = a.shape
    m = float(np.max(np.abs(a))) or 1.0
    ax.imshow(a, cmap=CMAP, vmin=-m if a.min() < 0 else 0.0, vmax=m, interpolation="nearest",
              extent=(x0, x0 + cols, y0 + rows, y0))
    for (i, j), value in np.ndenumerate(a):
        ax.text(x0 + j + 0.5, y0 + i + 0.5, f"{value:.2f}".rstrip("0").rstrip("."), ha="center", va="center",
                fontsize=8, color=text_color(value, m))
    ax.add_patch(Rectangle((x0, y0), cols, rows, fill=False, edgecolor="0.2", lw=1.0))
    ax.text(x0 + cols / 2, y0 + rows + 0.3, f"{name}\n{shape}", ha="center", va="top", fontsize=10.5)


def _step_arrow(ax, start, end, label):
    """从 ``start`` 指到 ``end`` 的箭头（横的或竖的），旁边写步骤名：横箭头写在上面，竖箭头写在左边。"""
    (x0, y0), (x1, y1) = start, end
    horizontal = y0 == y1
    shrink = (0.25, 0.0) if horizontal else (0.0, 0.25)
    ax.annotate("", xy=(x1 - shrink[0], y1 - shrink[1]), xytext=(x0 + shrink[0], y0 + shrink[1]),
                arrowprops=dict(arrowstyle="-|>", color="#b5367a", lw=1.8, mutation_scale=14))
    if horizontal:
        ax.text((x0 + x1) / 2, y0 - 0.35, label, ha="center", va="bottom", fontsize=10.5, color="#b5367a")
    else:
        ax.text(x0 - 0.35, (y0 + y1) / 2, label, ha="right", va="center", fontsize=10.5, color="#b5367a")


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
    """第 4 章：四步的形状图。T 个查询、S 个键值，每一步进来什么、出去什么，连同每个格子的数值。

    排法和手算矩阵乘法一样：``Q`` 在分数表左边、``Kᵀ`` 在它上面（第 1 步）；权重在输出左边、``V`` 在输出上面（第 4 步）。
    第 2、3 步不改形状，从上往下画在同一列里。

    Parameters
    ----------
    q : ndarray of shape (T, d_k)
    k : ndarray of shape (S, d_k)
    v : ndarray of shape (S, d_v)
    query_tokens : list of str, length T
        提问的词（画在 Q 的每一行左边）。
    key_tokens : list of str, length S
        被看的词（画在 Kᵀ 的每一列上面、V 的每一行左边）。

    Returns
    -------
    BookFigure

    Raises
    ------
    TypeError, ValueError
        数组不是二维有限实数数组、某一维超过 12、d_k 或 S 对不上；词不是字符串列表，或个数与行数不符。
    """
    q, k, v, query_tokens, key_tokens = _checked_four_steps(q, k, v, query_tokens, key_tokens)
    (T, d_k), S, d_v = q.shape, k.shape[0], v.shape[1]
    scores = q @ k.T  # (T, S)
    scaled = scores / np.sqrt(d_k)  # (T, S)
    weights = softmax(scaled, axis=-1)  # (T, S)
    out = weights @ v  # (T, d_v)
    # 排成"一竖列 + 两侧"：中间一列从上到下是 Kᵀ、分数、缩放后、权重；Q 在分数左边，V 和输出在右边。
    x_q, x_mid = 0.0, d_k + GAP
    x_out = x_mid + S + GAP
    row = 2.6  # 相邻两行之间留的高度（放名字、形状和箭头）
    y_scores = d_k + row
    y_scaled = y_scores + T + row
    y_weights = y_scaled + T + row
    y_v = y_weights - row - S
    bottom = y_weights + T + 1.8
    fig, (ax,) = new_figure(0.4 * (x_out + d_v + 2.5), 0.4 * (bottom + 1.5))
    # 画的顺序固定为 Q、Kᵀ、分数、缩放后、权重、V、输出（测试按这个顺序读 ax.images）
    _block(ax, q, x_q, y_scores, "查询 Q", f"(T, $d_k$) = ({T}, {d_k})")
    _block(ax, k.T, x_mid, 0, "键的转置 $K^\\top$", f"($d_k$, S) = ({d_k}, {S})")
    _block(ax, scores, x_mid, y_scores, "分数 $QK^\\top$", f"(T, S) = ({T}, {S})")
    _block(ax, scaled, x_mid, y_scaled, f"缩放后的分数（÷ √{d_k}）", f"(T, S) = ({T}, {S})")
    _block(ax, weights, x_mid, y_weights, "权重（每行和为 1）", f"(T, S) = ({T}, {S})")
    _block(ax, v, x_out, y_v, "值 V", f"(S, $d_v$) = ({S}, {d_v})")
    _block(ax, out, x_out, y_weights, "输出（新表示）", f"(T, $d_v$) = ({T}, {d_v})")
    for i, token in enumerate(query_tokens):
        for x0, y0 in ((x_q, y_scores), (x_out, y_weights)):
            ax.text(x0 - 0.2, y0 + i + 0.5, token, ha="right", va="center", fontsize=9)
    for j, token in enumerate(key_tokens):
        ax.text(x_mid + j + 0.5, -0.2, token, ha="center", va="bottom", fontsize=9)
        ax.text(x_out - 0.2, y_v + j + 0.5, token, ha="right", va="center", fontsize=9)
    _step_arrow(ax, (x_q + d_k, y_scores + T / 2), (x_mid, y_scores + T / 2), "第 1 步\n点积")
    _step_arrow(ax, (x_mid - 0.9, y_scores + T - 0.2), (x_mid - 0.9, y_scaled + T / 2), "第 2 步\n缩放")
    _step_arrow(ax, (x_mid - 0.9, y_scaled + T - 0.2), (x_mid - 0.9, y_weights + T / 2), "第 3 步\nsoftmax")
    _step_arrow(ax, (x_mid + S, y_weights + T / 2), (x_out, y_weights + T / 2), "第 4 步\n乘 V")
    ax.set_xlim(-2.0, x_out + d_v + 0.5)
    ax.set_ylim(bottom, -1.3)
    ax.set_aspect("equal")
    ax.set_axis_off()
    ax.set_title(f"四步的形状：T = {T} 个查询，S = {S} 个键和值，$d_k$ = {d_k}，$d_v$ = {d_v}"
                 "（数字为讲解手工设计）", fontsize=11)
    return fig
