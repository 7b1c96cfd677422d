"""第 10 章的可交互图：一个真正训练过的 Transformer（all-MiniLM-L6-v2，以及 4 位量化的 multilingual-e5-small）。

权重来自 ``tl.pretrained.load``，前向用的是本书自己的 ``tl.core`` 函数。这里只画图：notebook 已经算好的结果
（``model.run`` 的输出、句向量、代词表）直接交给工厂函数（``result=``、``vectors=``、``table=``），图不重算；
不给时工厂函数当场算一次。view 只读。所有数字都是测出来的，不是设计的——图上写明了。
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.patches import Rectangle

from .. import _validation as check
from ..plot.heatmap import attention_heatmap, labelled_heatmap
from ..pretrained import load, measures, sentences
from ..pretrained.unigram import display_token
from ..widgets.explorable import Explorable, Slider

__all__ = ["MINILM", "E5", "real_attention", "real_token_heads", "real_similarity", "real_attention_zh",
           "pronoun_heads"]

MINILM, E5 = "all-MiniLM-L6-v2", "multilingual-e5-small"
TOKEN_QUERIES = ("it", "animal", "street", "tired")  # 一个词元在一层 12 个头里看向谁：可选的查询词


def _narrow_without_colorbar(heat) -> None:
    """窄版：去掉热力图的色条、让格子随图拉伸，词元标签才放得下。"""
    heat.image.colorbar.remove()
    heat.image.axes.set_aspect("auto")


def _check_sentence(tokens: Sequence[str], name: str, model: str, text: str) -> None:
    """``tokens`` 必须是 ``model`` 读 ``text`` 切出的词元：句首是这个模型的特殊词元（MiniLM [CLS]、e5 <s>），
    其余词元的文字连起来就是这句话（不计空格、大小写和全角半角）。图的标题和替代文字写的是这个模型、这句话。"""
    start = "[CLS]" if model == MINILM else "<s>"
    kinds = measures.token_kinds(tokens)
    spelled = "".join(measures.token_text(t) for t, k in zip(tokens, kinds) if k not in ("cls", "sep"))
    if list(tokens[:1]) != [start] or spelled != unicodedata.normalize("NFKC", text).lower().replace(" ", ""):
        raise ValueError(f"{name} 必须是 {model} 读本章那句话“{text}”的结果，收到的词元是：{' '.join(tokens)}。"
                         "提示：传 model.run(那句话) 的返回值，或者不传、让图自己算。")


def _model_output(result: object, model: str, text: str) -> Mapping:
    """notebook 已经算好的 ``load(model).run(text)``（检查它真是这个模型读这句话的结果）；None 时当场算。"""
    if result is None:
        return load(model).run(text)
    if not isinstance(result, Mapping) or "tokens" not in result or "attentions" not in result:
        raise TypeError(f"result 必须是 model.run(句子) 返回的字典（含 tokens、attentions），收到的是 {check.describe(result)}。")
    tokens = check.string_list(result["tokens"], "result['tokens']")
    attentions = check.as_real_array(result["attentions"], "result['attentions']")
    check.check_shape(attentions, "result['attentions']", (None, None, len(tokens), len(tokens)),
                      f"（L 层 × H 个头 × T × T，T = {len(tokens)} 个词元）")
    _check_sentence(tokens, "result", model, text)
    return result


# ---------------------------------------------------------------- 一句话的 72（或 144）张注意力图


class _HeatView:
    """一张注意力热力图（行 = 查询词元，列 = 键词元），滑块选层和头；标题里写“代词”那一行给两个候选词的权重。"""

    def __init__(self, fig, axes, layout, result, pronoun, candidates, model_label):
        self.result, self.narrow, self.label = result, layout.narrow, model_label
        tokens = [display_token(t) for t in result["tokens"]]
        T = len(tokens)
        self.q = measures.find_word(result["tokens"], pronoun)[0]
        self.cols = [measures.find_word(result["tokens"], c) for c in candidates]
        self.pronoun, self.candidates = pronoun, candidates
        self.heat = attention_heatmap(np.zeros((T, T)), tokens, ax=axes[0], title="", annotate=False)
        ax = axes[0]
        ax.set_xlabel("被关注的词元（键）" if layout.narrow else "被关注的词元（键 Key）")
        ax.set_ylabel("提问的词元（查询）" if layout.narrow else "提问的词元（查询 Query）")
        ax.tick_params(labelsize=9)
        ax.get_yticklabels()[self.q].set_color("#b5367a")
        if layout.narrow:  # 手机上省下色条的宽度给格子：颜色的意思写在正文里（亮 = 权重大，最大 1）
            _narrow_without_colorbar(self.heat)
        self.suptitle = fig.suptitle(" ", fontsize=10 if not layout.narrow else 9)
        self.artists = [*self.heat.artists, self.suptitle]

    def update(self, layer, head):
        w = self.result["attentions"][layer - 1, head - 1].astype(np.float64)  # (T, T)
        self.heat.set_values(w)
        a, b = (float(w[self.q, c].sum()) for c in self.cols)
        c0, c1 = self.candidates
        if self.narrow:
            text = (f"{self.label}\n第 {layer} 层第 {head} 头（训练出来的）\n"
                    f"“{self.pronoun}”给 {c0} {a:.2f}，给 {c1} {b:.2f}")
        else:
            text = (f"{self.label}，第 {layer} 层第 {head} 头（训练出来的权重，不是设计的）\n"
                    f"“{self.pronoun}”那一行：给 {c0} {a:.2f}，给 {c1} {b:.2f}，给句首的 {self.result['tokens'][0]} "
                    f"{w[self.q, 0]:.2f}")
        self.suptitle.set_text(text)
        return {"weights": w, "pronoun_row": w[self.q], "candidates": np.array([a, b])}


def real_attention(result: Mapping | None = None) -> Explorable:
    """第 10 章：all-MiniLM-L6-v2 读 “The animal didn't cross the street because it was too tired.”，6 层 × 12 个头。

    Parameters
    ----------
    result : dict, optional
        notebook 已经算好的 ``load("all-MiniLM-L6-v2").run(句子)``（本章的 it 那句话 ``sentences.PRONOUN_CASES_EN[0]``），
        交给图就不再重算；默认当场算。

    Raises
    ------
    TypeError, ValueError
        ``result`` 不是含 ``tokens``、``attentions`` (L, H, T, T) 的字典，或者不是这个模型读这句话的结果。
    """
    text, _ = sentences.PRONOUN_CASES_EN[0]
    result = _model_output(result, MINILM, text)
    L, H = result["attentions"].shape[:2]
    return Explorable(
        view=_HeatView,
        data={"result": result, "pronoun": "it", "candidates": ("animal", "street"), "model_label": MINILM},
        sliders=[Slider("layer", tuple(range(1, L + 1)), label="第几层", default=5),
                 Slider("head", tuple(range(1, H + 1)), label="第几个头", default=1)],
        title="真模型的 72 张注意力图：all-MiniLM-L6-v2 读 it 那句话",
        alt="all-MiniLM-L6-v2 第 {layer} 层第 {head} 个头读 “The animal didn't cross the street because it was too "
            "tired.” 的注意力热力图（行 = 查询词元，列 = 键词元）。",
        size=(6.8, 5.6), narrow_size=(3.6, 4.9), max_frames=L * H, frame_dpi=100,
    )


def real_attention_zh(result: Mapping | None = None) -> Explorable:
    """第 10 章：4 位量化的 multilingual-e5-small 读“那只动物没有过马路，它太累了。”，12 层 × 头 1–12。

    Parameters
    ----------
    result : dict, optional
        notebook 已经算好的 ``load("multilingual-e5-small").run(句子)``（本章的“它”那句话 ``sentences.PRONOUN_CASES_ZH[0]``），
        交给图就不再重算；默认当场算。

    Raises
    ------
    TypeError, ValueError
        ``result`` 不是含 ``tokens``、``attentions`` (L, H, T, T) 的字典，或者不是这个模型读这句话的结果。
    """
    text, _ = sentences.PRONOUN_CASES_ZH[0]
    result = _model_output(result, E5, text)
    L, H = result["attentions"].shape[:2]
    return Explorable(
        view=_HeatView,
        data={"result": result, "pronoun": "它", "candidates": ("动物", "马路"),
              "model_label": "multilingual-e5-small（4 位量化）"},
        sliders=[Slider("layer", tuple(range(1, L + 1)), label="第几层", default=4),  # 第 4 层：汇点头所在的第 2–6 层之一
                 Slider("head", tuple(range(1, H + 1)), label="第几个头", default=1)],
        title="4 位量化的 multilingual-e5-small 读“它”那句话：12 层 × 12 个头",
        alt="4 位量化的 multilingual-e5-small 第 {layer} 层第 {head} 个头读“那只动物没有过马路，它太累了。”的注意力热力图。",
        size=(6.0, 4.9), narrow_size=(3.6, 4.4), max_frames=L * H, frame_dpi=100,  # 帧的像素不少于显示的宽度：不放大
    )


# ---------------------------------------------------------------- 一个词元，在一层的 12 个头里


class _TokenHeadsView:
    """行 = 一层的 12 个头，列 = 键词元：选中的词元在每个头里把注意力给了谁。"""

    def __init__(self, fig, axes, layout, result):
        self.result = result
        tokens = [display_token(t) for t in result["tokens"]]
        H, T = result["attentions"].shape[1], len(tokens)
        self.heat = labelled_heatmap(np.zeros((H, T)), [f"头 {h + 1}" for h in range(H)], tokens, ax=axes[0],
                                     annotate=False, aspect="auto")
        axes[0].set_xlabel("被关注的词元（键）")
        axes[0].tick_params(labelsize=9)
        if layout.narrow:
            _narrow_without_colorbar(self.heat)
        self.narrow = layout.narrow
        self.suptitle = fig.suptitle(" ", fontsize=9 if layout.narrow else 10)
        self.artists = [self.heat.image, self.suptitle]

    def update(self, layer, word):
        q = measures.find_word(self.result["tokens"], word)[0]
        rows = self.result["attentions"][layer - 1, :, q].astype(np.float64)  # (H, T)
        self.heat.set_values(rows)
        top = rows.argmax(axis=-1)  # (H,) 每个头最看重的词元
        n_cls = int(np.sum(top == 0))
        sep = "\n" if self.narrow else "，"
        self.suptitle.set_text(f"第 {layer} 层：“{word}”在 12 个头里各看向谁{sep}"
                               f"{n_cls} 个头最亮的一格在句首的 [CLS]" + ("" if self.narrow else "（训练出来的权重）"))
        return {"rows": rows, "top": top}


def real_token_heads(result: Mapping | None = None) -> Explorable:
    """第 10 章：一个词元在一层的 12 个头里各把注意力给了谁（all-MiniLM-L6-v2，it 那句话）。

    Parameters
    ----------
    result : dict, optional
        notebook 已经算好的 ``load("all-MiniLM-L6-v2").run(句子)``（本章的 it 那句话 ``sentences.PRONOUN_CASES_EN[0]``），
        交给图就不再重算；默认当场算。

    Raises
    ------
    TypeError, ValueError
        ``result`` 不是含 ``tokens``、``attentions`` (L, H, T, T) 的字典，或者不是这个模型读这句话的结果。
    """
    text, _ = sentences.PRONOUN_CASES_EN[0]
    result = _model_output(result, MINILM, text)
    return Explorable(
        view=_TokenHeadsView,
        data={"result": result},
        sliders=[Slider("layer", tuple(range(1, result["attentions"].shape[0] + 1)), label="第几层", default=5),
                 Slider("word", TOKEN_QUERIES, label="查询词", default="it")],
        title="一个词，12 个头：all-MiniLM-L6-v2 的一层里，每个头让它看向哪里",
        alt="all-MiniLM-L6-v2 第 {layer} 层：词元 {word} 在 12 个头里对句中每个词元的注意力（每行一个头）。",
        size=(6.8, 4.4), narrow_size=(3.6, 4.4), frame_dpi=100,
    )


# ---------------------------------------------------------------- 句向量的相似度

SIMILARITY_TOPICS = ("猫", "天气", "做饭", "金融")  # 十二句按顺序每三句一个话题
TOPIC_COLOURS = ("#31688e", "#35b779", "#e8a33d", "#b5367a")


def _similarity_texts(texts: object) -> list[str]:
    """检查 ``real_similarity`` 的句子：字符串的列表，3、6、9 或 12 句（每三句一个话题），都不是空串。"""
    if not isinstance(texts, (list, tuple)) or not all(isinstance(t, str) for t in texts):
        raise TypeError(f"texts 必须是字符串的列表或元组（每三句一个话题），收到的是 {check.describe(texts)}。")
    if len(texts) not in (3, 6, 9, 12):
        raise ValueError(f"texts 必须有 3、6、9 或 12 句（每三句一个话题，最多四个话题），收到 {len(texts)} 句。")
    empty = [i for i, t in enumerate(texts) if not t.strip()]
    if empty:
        raise ValueError(f"texts 里的句子不能是空串：第 {empty[0] + 1} 句是空的。")
    return list(texts)


def _similarity_vectors(vectors: object, texts: list[str]) -> np.ndarray:
    """notebook 已经算好的句向量（检查形状和长度）；None 时当场算 MiniLM 的 ``sentence_vectors``。"""
    if vectors is None:
        return load(MINILM).sentence_vectors(texts)
    v = check.as_real_array(vectors, "vectors")
    check.check_shape(v, "vectors", (len(texts), None), f"（每句一行：{len(texts)} 句，每行一个句向量）")
    norms = np.linalg.norm(v.astype(np.float64), axis=-1)  # (N,)
    if not np.allclose(norms, 1.0, atol=1e-3):
        raise ValueError(f"vectors 的每一行长度必须是 1（model.sentence_vectors 的结果：长度都是 1，点积才是余弦），"
                         f"收到的长度在 {norms.min():.3g} 到 {norms.max():.3g} 之间。")
    return v


class _SimilarityView:
    """选一句；横条 = 它和每一句（平均池化、长度 1 的句向量）的余弦相似度。句子写在横条上方。"""

    def __init__(self, fig, axes, layout, texts, vectors):
        self.texts, self.vectors = texts, vectors
        ax = axes[0]
        n = len(texts)
        colours = [TOPIC_COLOURS[i // 3] for i in range(n)]
        # 左边一小块固定的色块标出每句的话题：相似度接近 0 或是负数的横条看不见，话题的颜色照样看得见
        ax.barh(np.arange(n), np.full(n, 0.035), left=-0.05, height=0.45, color=colours)
        self.bars = ax.barh(np.arange(n), np.zeros(n), height=0.45, color=colours)
        for i, t in enumerate(texts):
            ax.text(0.0, i - 0.3, f"{i + 1}. {t}", fontsize=9, va="bottom", ha="left", parse_math=False, usetex=False)
        self.values = [ax.text(0.0, i, "", fontsize=9, va="center", ha="left") for i in range(n)]
        ax.axvline(0.0, color="#999999", lw=0.8)
        ax.set_ylim(n - 0.4, -0.9)
        ax.set_xlim(-0.06, 1.18)
        keys = [Rectangle((0, 0), 1, 1, color=c) for c in TOPIC_COLOURS[:n // 3]]  # 图下面的色标：每三句一个话题
        fig.legend(keys, ["话题：" + SIMILARITY_TOPICS[0], *SIMILARITY_TOPICS[1:n // 3]], loc="outside lower center",
                   ncol=n // 3, fontsize=9, frameon=False, handlelength=1.0, columnspacing=1.0)
        ax.set_yticks([])
        ax.set_xlabel("余弦相似度（1 = 方向完全相同）")
        for side in ("top", "right", "left"):
            ax.spines[side].set_visible(False)
        self.suptitle = fig.suptitle(" ", fontsize=9 if layout.narrow else 10)
        self.narrow = layout.narrow
        self.artists = [*self.bars, *self.values, self.suptitle]

    def update(self, pick):
        i = pick - 1
        cos = (self.vectors.astype(np.float64) @ self.vectors[i].astype(np.float64))  # (N,) 长度都是 1：点积 = 余弦
        for bar, v, label in zip(self.bars, cos, self.values):
            bar.set_width(max(float(v), 0.0))
            label.set_position((max(float(v), 0.0) + 0.01, label.get_position()[1]))
            label.set_text(f"{round(float(v), 2) + 0.0:.2f}")  # + 0.0：不显示 "-0.00"
        others = np.delete(np.arange(len(cos)), i)
        best = int(others[np.argmax(cos[others])])
        sep = "\n" if self.narrow else "；"
        self.suptitle.set_text(f"选第 {pick} 句：和它最像的是第 {best + 1} 句（{cos[best]:.2f}）{sep}"
                               "横条 = 余弦相似度，颜色 = 话题")
        return {"cosine": cos, "best": np.array([best])}


def real_similarity(texts: Sequence[str] | None = None, vectors: np.ndarray | None = None) -> Explorable:
    """第 10 章：all-MiniLM-L6-v2 的句向量（最后一层平均、长度 1）：选一句，看它和每一句的余弦相似度。

    Parameters
    ----------
    texts : list of str, optional
        要比的句子，按顺序每三句一个话题（颜色按话题分），3 到 12 句；默认是本章的十二句
        ``pretrained.sentences.SIMILARITY_EN``。
    vectors : ndarray of shape (N, D), optional
        notebook 已经算好的句向量 ``load("all-MiniLM-L6-v2").sentence_vectors(texts)``（N = 句数，每行长度 1），
        交给图就不再重算；默认当场算。

    Raises
    ------
    TypeError
        ``texts`` 不是字符串的列表或元组，或 ``vectors`` 不是实数数组。
    ValueError
        句数不是 3、6、9 或 12，某一句是空串，``vectors`` 的行数不等于句数，或某一行的长度不是 1。
    """
    texts = list(sentences.SIMILARITY_EN) if texts is None else _similarity_texts(texts)
    return Explorable(
        view=_SimilarityView,
        data={"texts": texts, "vectors": _similarity_vectors(vectors, texts)},
        sliders=[Slider("pick", tuple(range(1, len(texts) + 1)), label="选一句", default=1)],
        title="句向量：意思相近的句子，向量的方向也相近（all-MiniLM-L6-v2）",
        alt="all-MiniLM-L6-v2 的句向量：第 {pick} 句和十二句各自的余弦相似度（横条，颜色表示话题）。",
        size=(6.8, 6.4), narrow_size=(3.6, 7.2), frame_dpi=100,
    )


# ---------------------------------------------------------------- 静态图：72 个头，it 指对了吗

RIGHT_WAY = {"edgecolor": "#e8473d", "linestyle": "-"}  # 两句都指对：红色实线框
WRONG_WAY = {"edgecolor": "#5ec8f2", "linestyle": "--"}  # 两句都指错（对照）：浅蓝色虚线框


class _PronounHeadsView:
    """两张 L × H 的表（两句各一张）：每个头给“实际所指”那个词的份额 = 它 / (animal + street)。
    两句都指对的头描红色实线框，两句都指错的头（对照组）描浅蓝色虚线框；两种版式写的字一样（“对”）。"""

    def __init__(self, fig, axes, layout, table, titles):
        share = table.right_share  # (N, L, H)
        L, H = share.shape[1:]
        self.share = share
        for ax, s, title in zip(axes, share, titles):
            labelled_heatmap(s, [f"{i + 1}" for i in range(L)], [f"{h + 1}" for h in range(H)], ax=ax, title=title,
                             annotate=False, aspect="equal")
            ax.set_xlabel("头")
            ax.set_ylabel("层")
            ax.tick_params(labelsize=9)
            for layer, head in zip(*np.nonzero(s > 0.5)):
                ax.text(head, layer, "对", ha="center", va="center", fontsize=9,
                        color="black" if s[layer, head] > 0.6 else "white")
        right, wrong = table.resolving_heads(), table.wrong_way_heads()
        for ax in axes:  # 两张表里都描框：红色实线 = 两句都指对，浅蓝色虚线 = 两句都指错
            for heads, style in ((right, RIGHT_WAY), (wrong, WRONG_WAY)):
                for layer, head in heads:
                    ax.add_patch(Rectangle((head - 0.5, layer - 0.5), 1, 1, fill=False, lw=2, **style))
        keys = [Rectangle((0, 0), 1, 1, fill=False, lw=2, **style) for style in (RIGHT_WAY, WRONG_WAY)]
        labels = [f"两句都指对：{len(right)} 个头", f"两句都指错（对照）：{len(wrong)} 个头"]
        fig.legend(keys, labels, loc="outside lower center", ncol=1 if layout.narrow else 2, fontsize=9, frameon=False)
        sep = "\n" if layout.narrow else "；"
        self.suptitle = fig.suptitle(f"72 个头里两句都指对的 {len(right)} 个，都指错的 {len(wrong)} 个{sep}"
                                     "格子越亮，越偏向实际所指的词", fontsize=9 if layout.narrow else 10)

    def update(self):
        return {"right_share": self.share}


def _pronoun_table(table: object) -> measures.PronounTable:
    """notebook 已经算好的代词表（检查它是 MiniLM 读本章两句话、候选词 animal 和 street 的表）；None 时当场算。"""
    cases, candidates = sentences.PRONOUN_CASES_EN, ("animal", "street")
    if table is None:
        model = load(MINILM)
        return measures.pronoun_table([model.run(t) for t, _ in cases], [e for _, e in cases], "it", candidates)
    if not isinstance(table, measures.PronounTable):
        raise TypeError(f"table 必须是 measures.pronoun_table(...) 返回的 PronounTable，收到的是 {check.describe(table)}。")
    if table.candidates != candidates or table.expected != tuple(e for _, e in cases) or len(table.sentences) != len(cases):
        raise ValueError(f"table 必须是本章两句话（it 分别指 animal、street）、候选词 {candidates} 的表，"
                         f"收到的候选词是 {table.candidates}，实际所指是 {table.expected}。")
    for sentence, (text, _) in zip(table.sentences, cases):
        _check_sentence(sentence.split(" "), "table", MINILM, text)
    return table


def pronoun_heads(table: measures.PronounTable | None = None) -> Explorable:
    """第 10 章的静态图：it 的注意力在 animal 与 street 之间，“实际所指”那个分到几成，6 层 × 12 头，两句话。

    Parameters
    ----------
    table : PronounTable, optional
        notebook 已经算好的 ``measures.pronoun_table(...)``（all-MiniLM-L6-v2 读本章两句话，代词 it，
        候选词 animal、street），交给图就不再重算；默认当场算。

    Raises
    ------
    TypeError, ValueError
        ``table`` 不是 PronounTable，或者不是这两句话、这两个候选词的表。
    """
    table = _pronoun_table(table)
    return Explorable(
        view=_PronounHeadsView,
        data={"table": table, "titles": ("…too tired（it = animal）", "…too wide（it = street）")},
        sliders=[],
        title="it 指谁：72 个头各自的答案",
        alt="all-MiniLM-L6-v2 的 72 个头：it 分给 animal 和 street 的注意力里，实际所指的词占几成；两句话各一张表。"
            "红色实线框是两句都指对的头，浅蓝色虚线框是两句都指错的头（对照）。",
        size=(6.8, 3.2), ncols=2, narrow_size=(3.6, 5.2),
    )

