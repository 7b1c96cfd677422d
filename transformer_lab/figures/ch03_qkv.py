"""第 3 章的图：点积与余弦相似度（射箭打靶），一个键变长时注意力怎么变，换一副提问眼镜前后的注意力，
眼镜是练出来的，以及 V = K 实验的读出散点图。

每张图都画两种版式（见 ``plot.figure.Layout``）：宽版给电脑（≤ 6.8 英寸），窄版给手机（≤ 3.6 英寸，子图竖排、
标题更短或分行）。静态图是没有滑块的 ``Explorable``。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from ..core.attention import scaled_dot_product_attention
from ..lessons import runs
from ..lessons.geometry import vector_2d, with_key_length
from ..lessons.learned_glasses import chapter3_example
from ..lessons.optim import as_run
from ..plot.bars import weight_bars
from ..plot.checks import square_weights
from ..plot.figure import MIN_FONT_PT
from ..plot.heatmap import attention_heatmap
from ..plot.lines import scatter_vs_target
from ..plot.text import clean_number, factor_text, wrap_title
from ..plot.vectors import origin_arrow, vector_plane
from ..widgets.explorable import Explorable, Slider

__all__ = ["dot_vs_cosine", "key_length_attention", "swapped_glasses", "learned_glasses", "readout_scatter"]

Q_COLOR, K_COLOR, SHADOW_COLOR, OTHER_COLOR = "#31688e", "#b5367a", "#35b779", "#9a9a9a"
ANGLE_GRID = (0, 30, 60, 90, 120, 150, 180)
LENGTH_GRID = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0)
Q_LENGTH = 2.0
TITLE_PT = 10.5  # 标题；其余的字不小于 MIN_FONT_PT (9 pt)


class _DotCosineView:
    """左：q 与 k 两支箭头，以及 k 在 q 方向上的"影子"；右：点积和余弦随夹角变化的曲线。"""

    def __init__(self, fig, axes, layout):
        plane, curve = axes
        self.narrow = layout.narrow
        self.suptitle = fig.suptitle(" ", fontsize=TITLE_PT)
        q = vector_2d(Q_LENGTH, 0)
        vector_plane(plane, (-3.4, 3.4), (-1.3, 3.4), "射箭打靶：$k$ 在 $q$ 方向上的“影子”", TITLE_PT)
        self.shadow = plane.plot([], [], color=SHADOW_COLOR, lw=7, alpha=0.8, solid_capstyle="butt",
                                 label="影子（$k$ 投在 $q$ 上的长度）", zorder=2)[0]
        self.drop = plane.plot([], [], ":", color=SHADOW_COLOR, lw=1.5, zorder=2)[0]
        self.q_arrow = origin_arrow(plane, q, Q_COLOR, lw=3)
        plane.text(q[0] + 0.1, -0.4, "$q$", color=Q_COLOR, fontsize=13, ha="center")
        self.k_arrow = origin_arrow(plane, q, K_COLOR)
        self.k_label = plane.text(0, 0, "$k$", color=K_COLOR, fontsize=13, ha="center", va="center")
        self.arc = plane.plot([], [], color="0.3", lw=1)[0]
        self.theta_label = plane.text(0, 0, "θ", fontsize=11, ha="center", va="center", color="0.2")
        plane.legend(loc="lower left", fontsize=MIN_FONT_PT)
        grid = np.linspace(0, 180, 181)
        self.grid = grid
        self.dot_line = curve.plot(grid, np.zeros_like(grid), color=K_COLOR, lw=2, label="点积 $q\\cdot k$（随长度伸缩）")[0]
        curve.plot(grid, np.cos(np.deg2rad(grid)), "--", color=Q_COLOR, lw=2, label="余弦相似度（只看方向）")
        self.dot_dot = curve.plot([], [], "o", color=K_COLOR, ms=8, clip_on=False)[0]
        self.cos_dot = curve.plot([], [], "o", color=Q_COLOR, ms=8, clip_on=False)[0]
        curve.axhline(0, color="0.6", lw=0.8)
        curve.set_xlim(0, 180)
        curve.set_ylim(-6.5, 6.5)
        curve.set_xticks(ANGLE_GRID[::2] if layout.narrow else ANGLE_GRID)
        curve.set_xlabel("夹角 θ（度）")
        curve.grid(alpha=0.3)
        curve.legend(loc="lower left", fontsize=MIN_FONT_PT)
        self.curve = curve
        # 随滑块变化的图元，按从下到上的顺序（q 的箭头重画在影子上面）：拖动时只重画它们
        self.artists = [self.shadow, self.drop, self.q_arrow, self.k_arrow, self.k_label, self.arc,
                        self.theta_label, self.dot_line, self.dot_dot, self.cos_dot, curve.title, self.suptitle]

    def update(self, angle, length):
        q, k = vector_2d(Q_LENGTH, 0), vector_2d(float(length), float(angle))
        dot = clean_number(q @ k)
        cos = clean_number(np.cos(np.deg2rad(float(angle))))
        self.k_arrow.xy = tuple(k)
        if float(angle) < 15 or float(angle) > 150:  # 贴着横轴时写在箭头尖上方（向左时也免得伸出左边框）
            tip = k + np.array([-0.1 if float(angle) < 15 else 0.1, 0.35])
        else:
            tip = k + vector_2d(0.35, float(angle))
        self.k_label.set_position(tuple(tip))
        self.shadow.set_data([0, k[0]], [0, 0])
        self.drop.set_data([k[0], k[0]], [0, k[1]])
        theta = np.deg2rad(np.linspace(0, float(angle), 40))
        self.arc.set_data(0.55 * np.cos(theta), 0.55 * np.sin(theta))
        mid = np.deg2rad(float(angle) / 2)
        self.theta_label.set_position((0.85 * np.cos(mid), 0.85 * np.sin(mid) + (0.25 if float(angle) < 15 else 0)))
        self.theta_label.set_text("θ" if float(angle) >= 3 else "")  # 夹角为 0 时没有弧线，也不写 θ
        curve = Q_LENGTH * float(length) * np.cos(np.deg2rad(self.grid))  # (181,)
        self.dot_line.set_ydata(curve)
        self.dot_dot.set_data([float(angle)], [dot])
        self.cos_dot.set_data([float(angle)], [cos])
        self.curve.set_title(f"点积 = {dot:.2f}，余弦相似度 = {cos:.2f}", fontsize=TITLE_PT)
        given = f"θ = {float(angle):.0f}°，$|q|$ = 2，$|k|$ = {float(length):.1f}"
        product = f"2 × {float(length):.1f} × {factor_text(cos)} = {dot:.2f}"
        self.suptitle.set_text(f"{given}\n$q\\cdot k$ = {product}" if self.narrow
                               else f"{given}：$q\\cdot k$ = $|q|\\,|k|\\cos\\theta$ = {product}")
        return {"q": q, "k": k, "dot": np.array([dot]), "cosine": np.array([cos]), "curve": curve}


def dot_vs_cosine() -> Explorable:
    """第 3 章：拖动夹角和一支箭头的长度，比较点积与余弦相似度。

    q 固定（长度 2，指向右方）；k 的夹角和长度由滑块决定。
    点积 = |q| |k| cos θ，既看方向也看长度；余弦相似度 = cos θ，只看方向。

    Returns
    -------
    Explorable
    """
    return Explorable(
        view=_DotCosineView,
        sliders=[
            Slider("angle", ANGLE_GRID, label="夹角 θ（度）", default=60, continuous=True),
            Slider("length", LENGTH_GRID, label="k 的长度", default=1.5, continuous=True, step=0.1),
        ],
        title="点积与余弦相似度：射箭打靶",
        alt=("q（长度 2）与 k 的夹角为 {angle} 度、k 的长度为 {length}：左图画出两支箭头和 k 在 q 方向上的影子，"
             "右图（手机上是下图）是点积与余弦相似度随夹角变化的曲线，圆点标出当前的两个值。"),
        size=(6.8, 3.5),
        ncols=2,
        narrow_size=(3.6, 6.6),
    )


# 第二张图：一个查询、四个键（为讲解手工设计的二维向量），只有 k2 的长度可调。
KEY_ANGLES = (0.0, 60.0, 110.0, 180.0)
KEY_BASE_LENGTH = 1.5
CHANGING = 1  # k2
K1_COLOR = "#e07b00"  # k1 与 q 同向、叠在 q 的粗箭头上：用橙色，免得灰色的它看不见
KEY_LENGTH_GRID = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0)


def _keys(length: float) -> np.ndarray:
    base = np.stack([vector_2d(KEY_BASE_LENGTH, a) for a in KEY_ANGLES])  # (S=4, d_k=2)
    return with_key_length(base, CHANGING, float(length))  # (S=4, d_k=2)


class _KeyLengthView:
    """左：查询和四个键的箭头（k2 会变长）；右：查询对四个键的注意力权重。"""

    def __init__(self, fig, axes, layout):
        plane, bars_ax = axes
        self.narrow = layout.narrow
        self.bars_ax, self.suptitle = bars_ax, fig.suptitle(" ", fontsize=TITLE_PT)
        self.q = vector_2d(Q_LENGTH, 0)
        vector_plane(plane, (-2.3, 3.3), (-0.9, 5.0), "一个查询 $q$、四个键" if layout.narrow else
                     "一个查询 $q$、四个键（手工设计的示意）", TITLE_PT)
        q_arrow = origin_arrow(plane, self.q, Q_COLOR, lw=6, zorder=2)
        plane.text(self.q[0] + 0.1, -0.45, "$q$", color=Q_COLOR, fontsize=13, ha="center")
        keys = _keys(KEY_BASE_LENGTH)
        self.arrows, self.labels = [], []
        for j, key in enumerate(keys):
            color = K_COLOR if j == CHANGING else K1_COLOR if j == 0 else OTHER_COLOR
            self.arrows.append(origin_arrow(plane, key, color, lw=1.8 if j > CHANGING else 2.5, zorder=3))
            self.labels.append(plane.text(0, 0, f"$k_{j + 1}$", color=color, fontsize=12, ha="center", va="center"))
        names = [f"$k_{j + 1}$\n{a:.0f}°" for j, a in enumerate(KEY_ANGLES)]
        self.bars = weight_bars(np.zeros(len(KEY_ANGLES)), names, ax=bars_ax, color=OTHER_COLOR)
        self.bars.bars[CHANGING].set_color(K_COLOR)
        self.bars.bars[0].set_color(K1_COLOR)
        bars_ax.set_ylabel("注意力权重")
        bars_ax.set_yticks([0, 0.5, 1.0])
        # 随滑块变化的图元（q 的粗箭头先画，k1 画在它上面）：拖动时只重画它们
        self.artists = [q_arrow, *self.arrows, *self.labels, *self.bars.artists, bars_ax.title, self.suptitle]

    def update(self, length):
        keys = _keys(length)
        for j, (arrow, label, key) in enumerate(zip(self.arrows, self.labels, keys)):
            arrow.xy = tuple(key)
            offset = vector_2d(0.35, KEY_ANGLES[j]) + (np.array([0.0, 0.3]) if KEY_ANGLES[j] == 0 else 0)
            label.set_position(tuple(key + offset))
        _, weights = scaled_dot_product_attention(self.q[None, :], keys, keys)  # (1, S)
        weights = weights[0]  # (S,)
        scores = keys @ self.q  # (S,)
        self.bars.set_values(weights)
        cos = clean_number(scores[CHANGING] / (Q_LENGTH * float(length)))
        self.bars_ax.set_title(f"$k_2$ 的长度 = {float(length):.1f}：点积 {scores[CHANGING]:.2f}"
                               f"（$k_1$ 是 {scores[0]:.2f}）\n$k_2$ 的余弦 {cos:.2f}（不变）", fontsize=TITLE_PT)
        share = f"同向的 $k_1$ 分到 {weights[0]:.2f}，偏 60° 的 $k_2$ 分到 {weights[CHANGING]:.2f}"
        self.suptitle.set_text(f"{share}\n（手工设计的示意向量）" if self.narrow else f"{share}（手工设计的示意向量）")
        return {"keys": keys, "scores": scores, "weights": weights}


def key_length_attention() -> Explorable:
    """第 3 章：只改一个键的长度（方向不变），看查询对四个键的注意力权重怎么变。

    四个键是为讲解手工设计的二维向量：k1 与查询同向，k2 偏 60°，k3 偏 110°，k4 反向。
    权重用缩放点积注意力计算（分数除以 √d_k = √2，见第 4 章）。

    Returns
    -------
    Explorable
    """
    return Explorable(
        view=_KeyLengthView,
        sliders=[Slider("length", KEY_LENGTH_GRID, label="k2 的长度", default=1.5, continuous=True, step=0.1)],
        title="一个键变长，注意力怎么变",
        alt=("k2 的长度为 {length}：左图是查询 q 和四个键的箭头，k2 与 q 夹角 60 度；"
             "右图（手机上是下图）是 q 对四个键的注意力权重柱状图。"),
        size=(6.8, 3.6),
        ncols=2,
        narrow_size=(3.6, 6.8),
    )


# ---------------------------------------------------------------- 换一副提问眼镜前后（静态）

class _SwappedView:
    """两张注意力热力图（宽版并排，窄版上下）：原来的 W_Q 与换过的 W_Q 给出的权重。"""

    def __init__(self, fig, axes, layout, weights, swapped, tokens, titles, note):
        for ax, w, title in zip(axes, (weights, swapped), titles):
            attention_heatmap(w, list(tokens), ax=ax, title=title)
            ax.title.set_fontsize(TITLE_PT)
        fig.suptitle(f"（{note}）", fontsize=TITLE_PT)
        self.drawn = {"weights": weights, "swapped": swapped}

    def update(self):
        return dict(self.drawn)


def swapped_glasses(weights: np.ndarray, swapped: np.ndarray, tokens,
                    titles=("原来的提问眼镜 $W_Q$", "两列对调后的 $W_Q$"),
                    note: str = "手工设计的示意，不是训练所得"):  # 静态图：不标 -> Explorable（那是 CATALOG 的登记标志）
    """第 3 章：同一句话、同样的 K，只换提问眼镜 W_Q，注意力权重怎么变（静态图，两张热力图，两种版式）。

    Parameters
    ----------
    weights, swapped : ndarray of shape (T, T)
        换眼镜前、后的注意力权重，每个数在 [0, 1] 之内。
    tokens : list of str, length T
        句子里的词。
    titles : pair of str
        两张热力图的标题。
    note : str
        整张图的标题（默认说明权重是手工设计的）。

    Returns
    -------
    Explorable
        没有滑块的 Explorable（静态图）；``update()`` 返回 ``weights`` 和 ``swapped``。

    Raises
    ------
    TypeError, ValueError
        权重不是有限实数的 (T, T) 方阵、有数不在 [0, 1] 之内；``tokens`` 不是字符串列表；
        ``titles`` 不是两个非空字符串；``note`` 不是非空字符串。
    """
    tokens = check.string_list(tokens, "tokens")
    weights, swapped = square_weights(weights, "weights", len(tokens)), square_weights(swapped, "swapped", len(tokens))
    if not isinstance(titles, (list, tuple)) or len(titles) != 2:
        raise TypeError(f"titles 必须是两个字符串（两张热力图的标题），收到的是 {check.describe(titles)}。")
    titles = tuple(check.nonempty_text(t, f"titles[{i}]") for i, t in enumerate(titles))
    note = check.nonempty_text(note, "note")
    return Explorable(
        view=_SwappedView, sliders=[],
        data={"weights": weights, "swapped": swapped, "tokens": tokens, "titles": titles, "note": note},
        title="换一副提问眼镜前后的注意力",
        alt=(f"两张注意力热力图（{'、'.join(tokens)}）：左（手机上是上）是{titles[0]}，右（下）是{titles[1]}；"
             "行是提问的词，列是被看的词，颜色越亮权重越大，每个格子里写着权重。").replace("$", ""),
        size=(6.8, 3.3), ncols=2, narrow_size=(3.6, 6.6),
    )


# ---------------------------------------------------------------- V = K 实验的读出散点图（静态）

MAX_PANELS = 3  # 宽版横排：再多每个子图就不到 2.3 英寸宽


class _ReadoutView:
    """每种做法一个散点子图（宽版横排，窄版竖排）：横轴是正确答案，纵轴是读者的回答。"""

    def __init__(self, fig, axes, layout, target, predictions, errors, title):
        xlabel = "正确答案：书的页数（标准化）"
        for ax, (name, pred) in zip(axes, predictions.items()):
            scatter_vs_target(target, pred, ax=ax, title=f"{name}\n读出误差 = {errors[name]:.3f}", color=Q_COLOR,
                              xlabel=xlabel, ylabel="读者的回答")
            ax.title.set_fontsize(TITLE_PT)
        fig.suptitle(wrap_title(title) if layout.narrow else title, fontsize=TITLE_PT)
        self.drawn = {"target": target, **{f"prediction:{name}": pred for name, pred in predictions.items()}}

    def update(self):
        return dict(self.drawn)


def readout_scatter(target: np.ndarray, predictions: dict[str, np.ndarray], errors: dict[str, float],
                    title: str):  # 静态图：不标 -> Explorable（见 swapped_glasses）
    """V = K 实验的散点图：横轴是正确答案，纵轴是"读者"的回答；落在对角线上 = 答对（静态图，两种版式）。

    Parameters
    ----------
    target : ndarray of shape (N,)
    predictions : dict of 名字 -> ndarray of shape (N,)
        每种做法一个子图（宽版横排，手机上竖排）。
    errors : dict of 名字 -> float
        每种做法的读出误差（写在子图标题里）。
    title : str
        整张图的标题；手机上超过 16 个字时在靠近中间的标点后面断成两行。

    Returns
    -------
    Explorable
        没有滑块的 Explorable（静态图）；``update()`` 返回 ``target`` 和每种做法的 ``prediction:名字``。

    Raises
    ------
    TypeError, ValueError
        ``predictions`` 不是非空字典（最多 3 个子图）、``errors`` 缺少某个名字或不是有限实数；
        ``title`` 不是非空字符串；数组有 NaN/inf 或长度与 ``target`` 不一。
    """
    _check_readout(predictions, errors)
    title = check.nonempty_text(title, "title")
    target = check.as_real_array(target, "target")
    preds = {}
    for name, pred in predictions.items():
        pred = check.as_real_array(pred, f"predictions[{name!r}]")
        if target.ndim != 1 or pred.shape != target.shape:
            raise ValueError(f"predictions[{name!r}] 必须与 target 是同样长的一维数组，"
                             f"收到 {pred.shape} 和 {target.shape}。")
        preds[name] = pred
    n = len(preds)
    names = "、".join(preds)
    return Explorable(
        view=_ReadoutView, sliders=[],
        data={"target": target, "predictions": preds, "errors": {k: float(errors[k]) for k in preds}, "title": title},
        title=title,
        alt=(f"{n} 张散点图（{names}）：横轴是正确答案（借到的书的页数），纵轴是读者的回答，落在虚线 y = x 上就是答对；"
             + "；".join(f"{k} 的读出误差 {float(errors[k]):.3f}" for k in preds) + "。"),
        size=(6.8, 4.0) if n == 2 else (6.8, round(6.8 / n + 1.0, 2)), ncols=n,
        narrow_size=(3.6, round(3.3 * n + 0.5, 2)),
    )


def _check_readout(predictions: object, errors: object) -> None:
    if not isinstance(predictions, dict) or not 1 <= len(predictions) <= MAX_PANELS:
        raise TypeError(f"predictions 必须是有 1 到 {MAX_PANELS} 项的字典 {{名字: 一维数组}}，收到的是 {check.describe(predictions)}。")
    if not isinstance(errors, dict):
        raise TypeError(f"errors 必须是字典 {{名字: 读出误差}}，收到的是 {check.describe(errors)}。")
    for name in predictions:
        if name not in errors:
            raise ValueError(f"errors 里没有 {name!r}：predictions 的每个名字都要有一个读出误差。")
        check.finite_real(errors[name], f"errors[{name!r}]")


# ---------------------------------------------------------------- 眼镜是练出来的（训练代码与第 5 章共用）

class _LearnedGlassesView:
    """左：训练到第 step 步时学出的眼镜给出的注意力；右：第 3 章设计的眼镜给出的注意力（目标）。"""

    def __init__(self, fig, axes, layout, run, example):
        self.run = run
        tokens = example["tokens"]
        self.learned = attention_heatmap(np.zeros((3, 3)), tokens, ax=axes[0], title="从随机眼镜开始训练")
        attention_heatmap(example["target"], tokens, ax=axes[1], title="第 3 章设计的眼镜（目标）")
        for ax in axes:
            ax.title.set_fontsize(TITLE_PT)
        self.narrow = layout.narrow
        self.suptitle = fig.suptitle(" ", fontsize=TITLE_PT)
        self.artists = [*self.learned.artists, self.suptitle]

    def update(self, step):
        run = self.run
        i = run.at(step)
        s = int(run["checkpoint_steps"][i])
        self.learned.set_values(run["weights"][i])
        loss, share = run["losses"][s], run["weights"][i][1, 0]
        self.suptitle.set_text(
            f"第 {s} 步：损失 {loss:.3f}（最低 {run['losses'][-1]:.3f}）\n“吃”分给“小猫” {share:.2f}" if self.narrow
            else f"第 {s} 步：交叉熵损失 {loss:.3f}（最低可到 {run['losses'][-1]:.3f}，即目标本身的熵）\n"
                 f"“吃”分给“小猫” {share:.2f}")
        return {"weights": run["weights"][i], "loss": np.array([run["losses"][s]])}


def learned_glasses(run: object = None, seed: int = 0) -> Explorable:
    """第 3 章：拖动训练步数，看随机的 W_Q、W_K 怎样学成第 3 章设计的注意力（训练出来的，目标是设计的）。

    ``run`` 是 ``learned_glasses.learn_query_key`` 在第 3 章例子上的结果；不传就用 ``tl.runs.glasses(seed)``。
    """
    seed = check.seed(seed)
    run = runs.glasses(seed) if run is None else as_run(run, "run", ("weights",))
    example = chapter3_example()
    steps = tuple(int(s) for s in run["checkpoint_steps"])
    return Explorable(
        view=_LearnedGlassesView,
        data={"run": run, "example": example},
        sliders=[Slider("step", steps, label="训练步数", default=steps[-1])],
        title="眼镜是练出来的：从随机 W_Q、W_K 学出第 3 章的注意力（目标是设计的）",
        alt="训练第 {step} 步时，学出的眼镜给出的注意力权重（左，手机上是上），与第 3 章设计的眼镜给出的注意力（右，手机上是下）。",
        size=(6.8, 3.4), ncols=2, narrow_size=(3.6, 6.6),
    )
