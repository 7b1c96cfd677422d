"""第 2 章的玩具句子：手工设计的、每一维都有名字的词向量和两轮注意力的投影矩阵。

这里的数都是为了讲解而**手工设计**的，不是训练所得。真实模型的词向量有几百上千维，
没有一维有现成的名字；这里每一维都叫得出名字，读者才能看懂“谁在找什么、谁亮出什么”。

两轮“小组讨论”（相当于真实模型里的两层）::

    第 1 轮（找线索）：代词去找“描述词”，把听到的线索记到自己身上；
    第 2 轮（找指代）：带着线索的代词，去找符合线索的名词。
    每一轮：out, weights = Attention(x W_Q, x W_K, x W_V)；新的 x = x + out。

本模块只依赖 NumPy。形状字母：T 词数，D = 特征个数 (= d_model = d_k)。
"""

from __future__ import annotations

from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from . import _validation as val
from .attention import scaled_dot_product_attention

__all__ = ["FEATURES", "ToySentence", "sentence_names", "variant_names", "toy_sentence", "embed",
           "projections", "attention_round", "discuss", "explain_matrix", "labelled"]

FEATURES: tuple[str, ...] = (
    "是动物", "是人", "是女性", "是男性", "是地点", "是食物",   # 名词“是什么”
    "是代词", "指女性", "指男性",                              # 代词自带的线索
    "描述活物", "描述地点", "描述食物",                        # 描述词“能说谁”
)
_ENTITY = FEATURES[:6]
_DESCRIBE = FEATURES[9:]

# 词 -> 它具有的特征（值都是 1）。没列特征的词（the、把、因为……）是一行 0。
# 下面三张表都是只读的 (MappingProxyType + tuple)：调用者改不动它们。
_LEXICON = MappingProxyType({
    "animal": ("是动物",), "street": ("是地点",), "it": ("是代词",),
    "tired": ("描述活物",), "hungry": ("描述活物",), "wide": ("描述地点",), "crowded": ("描述地点",),
    "小明": ("是人", "是男性"), "小红": ("是人", "是女性"), "苹果": ("是食物",),
    "她": ("是代词", "指女性"), "他": ("是代词", "指男性"), "它": ("是代词",), "tā": ("是代词",),
    "饿了": ("描述活物",), "很大方": ("描述活物",), "很甜": ("描述食物",),
    **{w: () for w in ("The", "the", "didn't", "cross", "because", "was", "too", ".",
                       "把", "递给", "，", "因为")},
})

# 句子名 -> (模板, {变体名: (代词, 描述词, 人读出的指代对象)})；模板里的 {P} {A} 由变体填入。
_SENTENCES = MappingProxyType({
    "animal": (("The", "animal", "didn't", "cross", "the", "street", "because", "{P}", "was", "too", "{A}", "."),
               {"tired": ("it", "tired", "animal"), "hungry": ("it", "hungry", "animal"),
                "wide": ("it", "wide", "street"), "crowded": ("it", "crowded", "street")}),
    "apple": (("小明", "把", "苹果", "递给", "小红", "，", "因为", "{P}", "{A}"),
              {"她饿了": ("她", "饿了", "小红"), "它很甜": ("它", "很甜", "苹果"),
               "他很大方": ("他", "很大方", "小明")}),
})

# 每一轮的投影矩阵：(行特征, 列特征, 值)。行 = 输入特征，列 = 输出特征（行向量约定 x @ W）。
_ROUNDS = MappingProxyType({
    1: {"W_Q": tuple(("是代词", f, 4.0) for f in _DESCRIBE),    # 代词问：后面说了我什么？
        "W_K": tuple((f, f, 3.0) for f in _DESCRIBE),           # 描述词亮出：我描述哪一类
        "W_V": tuple((f, f, 1.0) for f in _DESCRIBE)},          # 交出去的内容：这条线索
    2: {"W_Q": (("描述活物", "是动物", 4.0), ("描述活物", "是人", 4.0), ("描述地点", "是地点", 4.0),
                ("描述食物", "是食物", 4.0), ("指女性", "是女性", 2.0), ("指男性", "是男性", 2.0)),
        "W_K": tuple((f, f, 4.0) for f in _ENTITY),             # 名词亮出：我是什么
        "W_V": tuple((f, f, 1.0) for f in _ENTITY)},            # 交出去的内容：我是什么
})


class ToySentence(NamedTuple):
    """一句玩具句子。``tokens`` 是词，``x`` 是 (T, D) 的特征矩阵，``pronoun`` 是代词的位置，
    ``predicate`` 是可以换掉的描述词的位置，``referent`` 是人读这句话时认为代词指的词。"""

    tokens: tuple[str, ...]
    x: np.ndarray
    pronoun: int
    predicate: int
    referent: str


def sentence_names() -> tuple[str, ...]:
    """所有玩具句子的名字。

    Examples
    --------
    >>> sentence_names()
    ('animal', 'apple')
    """
    return tuple(_SENTENCES)


def variant_names(name: str) -> tuple[str, ...]:
    """句子 ``name`` 的所有变体（换掉的那个词），第一个是默认变体。

    Raises
    ------
    TypeError, ValueError
        ``name`` 不是合法的句子名。

    Examples
    --------
    >>> variant_names("animal")
    ('tired', 'hungry', 'wide', 'crowded')
    """
    name = val.one_of(name, "name", sentence_names())
    return tuple(_SENTENCES[name][1])


def embed(tokens: list[str] | tuple[str, ...]) -> np.ndarray:
    """把一串词变成特征矩阵：第 t 行第 f 列 = 第 t 个词有没有特征 ``FEATURES[f]``（1 或 0）。

    Parameters
    ----------
    tokens : list or tuple of str, length T
        只能用本模块词表里的词（见报错信息里的列表）。

    Returns
    -------
    ndarray of shape (T, D)
        D = len(FEATURES) = 12。每次调用都是新数组。

    Raises
    ------
    TypeError, ValueError
        ``tokens`` 不是字符串的列表或元组、为空，或含有词表里没有的词。

    Examples
    --------
    >>> embed(["the", "animal"]).shape
    (2, 12)
    >>> [FEATURES[f] for f in np.flatnonzero(embed(["她"])[0])]
    ['是代词', '指女性']
    """
    if not isinstance(tokens, (list, tuple)) or not all(isinstance(t, str) for t in tokens):
        raise TypeError(f"tokens 必须是字符串的列表或元组，收到的是 {val._describe(tokens)}。")
    if len(tokens) == 0:
        raise ValueError("tokens 不能为空：至少要有一个词。")
    for t in tokens:
        val.one_of(t, "tokens 里的词", tuple(_LEXICON))
    x = np.zeros((len(tokens), len(FEATURES)))  # (T, D)
    for row, t in enumerate(tokens):
        x[row, [FEATURES.index(f) for f in _LEXICON[t]]] = 1.0
    return x


def toy_sentence(name: str = "animal", variant: str | None = None) -> ToySentence:
    """取一句玩具句子：词、特征矩阵 x (T, D)、代词和描述词的位置、人读出的指代对象。

    Parameters
    ----------
    name : str
        ``"animal"``（The animal didn't cross the street because it was too tired.）
        或 ``"apple"``（小明把苹果递给小红，因为她饿了）。
    variant : str, optional
        换掉的那个词，见 ``variant_names(name)``；默认是第一个（"tired" / "她饿了"）。

    Returns
    -------
    ToySentence

    Raises
    ------
    TypeError, ValueError
        ``name`` 或 ``variant`` 不合法；报错信息列出全部可选值。

    Examples
    --------
    >>> s = toy_sentence("animal", "wide")
    >>> s.tokens[s.pronoun], s.tokens[s.predicate], s.referent, s.x.shape
    ('it', 'wide', 'street', (12, 12))
    """
    variants = variant_names(name)
    variant = variants[0] if variant is None else val.one_of(variant, "variant", variants)
    template, table = _SENTENCES[name]
    pronoun, predicate, referent = table[variant]
    tokens = tuple(pronoun if t == "{P}" else predicate if t == "{A}" else t for t in template)
    return ToySentence(tokens, embed(tokens), template.index("{P}"), template.index("{A}"), referent)


def projections(turn: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """第 ``turn`` 轮讨论用的投影矩阵 (W_Q, W_K, W_V)，都是 (D, D) 的新数组。

    第 f 行第 g 列 = 输入特征 f 让输出特征 g 增加多少。W_Q 说“我在找什么”，
    W_K 说“我亮出什么”，W_V 说“我交出什么内容”。

    Parameters
    ----------
    turn : int
        1（找线索）或 2（找指代）。

    Returns
    -------
    (ndarray, ndarray, ndarray)
        W_Q, W_K, W_V，各 (D, D)。

    Raises
    ------
    TypeError, ValueError
        ``turn`` 不是整数 1 或 2。

    Examples
    --------
    >>> w_q, w_k, w_v = projections(1)
    >>> w_q.shape, float(w_q[FEATURES.index("是代词"), FEATURES.index("描述活物")])
    ((12, 12), 4.0)
    """
    turn = val.positive_int(turn, "turn")
    if turn not in _ROUNDS:
        raise ValueError(f"turn 只能是 1（找线索）或 2（找指代），收到的是 {turn}。")
    mats = []
    for key in ("W_Q", "W_K", "W_V"):
        w = np.zeros((len(FEATURES), len(FEATURES)))  # (D, D)
        for src, dst, value in _ROUNDS[turn][key]:
            w[FEATURES.index(src), FEATURES.index(dst)] = value
        mats.append(w)
    return mats[0], mats[1], mats[2]


def attention_round(x: np.ndarray, turn: int) -> tuple[np.ndarray, np.ndarray]:
    """讨论一轮：全句一起做一次自注意力，每个词把听到的内容加到自己身上。

    ``out, weights = Attention(x W_Q, x W_K, x W_V)``，返回 ``(x + out, weights)``。
    “x + out” 在真实模型里叫残差连接 (residual connection)：记下新听到的，不丢掉原来的自己。

    Parameters
    ----------
    x : ndarray of shape (T, D)
    turn : int
        1 或 2，用哪一轮的投影矩阵。

    Returns
    -------
    x_new : ndarray of shape (T, D)
    weights : ndarray of shape (T, T)
        注意力权重 (attention weights)，第 i 行 = 第 i 个词分给每个词的注意力，和为 1。

    Raises
    ------
    TypeError, ValueError
        ``x`` 不是 (T, D) 的实数数组，或 ``turn`` 不合法。

    Examples
    --------
    >>> s = toy_sentence("animal")
    >>> x1, w1 = attention_round(s.x, 1)
    >>> round(float(w1[s.pronoun, s.tokens.index("tired")]), 3)   # 第 1 轮：it 找到线索 tired
    0.744
    """
    x = val.as_real_array(x, "x")
    val.check_shape(x, "x", (None, len(FEATURES)), f"每一行是一个词的 {len(FEATURES)} 个特征。")
    w_q, w_k, w_v = projections(turn)
    out, weights = scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v)  # (T, D), (T, T)
    return x + out, weights


def discuss(x: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """两轮讨论：先找线索，再找指代。

    Returns
    -------
    states : list of 3 ndarrays of shape (T, D)
        讨论前、第 1 轮后、第 2 轮后每个词的特征。
    weights : list of 2 ndarrays of shape (T, T)
        第 1 轮、第 2 轮的注意力权重。

    Raises
    ------
    TypeError, ValueError
        ``x`` 不是 (T, D) 的实数数组。

    Examples
    --------
    >>> s = toy_sentence("animal")
    >>> states, weights = discuss(s.x)
    >>> s.tokens[int(weights[1][s.pronoun].argmax())]    # 第 2 轮：it 最关注 animal
    'animal'
    """
    states, weights = [x], []
    for turn in (1, 2):
        x_new, w = attention_round(states[-1], turn)
        states.append(x_new)
        weights.append(w)
    return states, weights


def explain_matrix(w: np.ndarray) -> str:
    """把 (D, D) 的投影矩阵写成人话：每个非零的行，列出“输入特征 → 输出特征 ×值”。

    Parameters
    ----------
    w : ndarray of shape (D, D)

    Returns
    -------
    str
        每行一条规则；矩阵全为 0 时返回 "（全是 0）"。

    Raises
    ------
    TypeError, ValueError
        ``w`` 不是 (D, D) 的实数数组。

    Examples
    --------
    >>> print(explain_matrix(projections(1)[0]))
    是代词 → 描述活物 ×4, 描述地点 ×4, 描述食物 ×4
    """
    w = val.as_real_array(w, "w")
    val.check_shape(w, "w", (len(FEATURES), len(FEATURES)))
    lines = []
    for f, row in zip(FEATURES, w):
        parts = [f"{g} ×{value:g}" for g, value in zip(FEATURES, row) if value != 0]
        if parts:
            lines.append(f"{f} → " + ", ".join(parts))
    return "\n".join(lines) if lines else "（全是 0）"


def labelled(labels: list[str] | tuple[str, ...], values: np.ndarray, digits: int = 3,
             skip_zeros: bool = False) -> dict[str, float]:
    """给一行数配上名字（词或特征），方便打印：``{名字: 保留 digits 位小数的 float}``。

    Parameters
    ----------
    labels : list or tuple of str, length N
    values : ndarray of shape (N,)
    digits : int
        保留几位小数。
    skip_zeros : bool
        为 True 时略去值为 0 的项（例如只看一个词有哪些特征）。

    Raises
    ------
    TypeError, ValueError
        ``values`` 不是一维实数数组，或长度和 ``labels`` 不同。

    Examples
    --------
    >>> labelled(("animal", "street"), np.array([0.7384, 0.0238]))
    {'animal': 0.738, 'street': 0.024}
    >>> labelled(FEATURES, embed(["她"])[0], skip_zeros=True)
    {'是代词': 1.0, '指女性': 1.0}
    """
    values = val.as_real_array(values, "values")
    val.check_shape(values, "values", (len(labels),), "每个名字对应一个数。")
    return {str(name): round(float(v), digits) for name, v in zip(labels, values) if v != 0 or not skip_zeros}
