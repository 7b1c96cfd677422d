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

from typing import NamedTuple

import numpy as np

from .. import _validation as check
from ..core.attention import scaled_dot_product_attention

__all__ = ["FEATURES", "ToySentence", "sentence_names", "variant_names", "toy_sentence", "embed", "sentence_text",
           "turn_weights", "attention_turn", "discuss", "explain_matrix"]

from .toy_lexicon import FEATURES, LEXICON, SENTENCES, TURNS


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
    return tuple(SENTENCES)


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
    name = check.one_of(name, "name", sentence_names())
    return tuple(SENTENCES[name][1])


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
    tokens = check.string_list(tokens, "tokens")
    for t in tokens:
        check.one_of(t, "tokens 里的词", tuple(LEXICON))
    x = np.zeros((len(tokens), len(FEATURES)))  # (T, D)
    for row, t in enumerate(tokens):
        x[row, [FEATURES.index(f) for f in LEXICON[t]]] = 1.0
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
    variant = variants[0] if variant is None else check.one_of(variant, "variant", variants)
    template, table = SENTENCES[name]
    pronoun, predicate, referent = table[variant]
    tokens = tuple(pronoun if t == "{P}" else predicate if t == "{A}" else t for t in template)
    return ToySentence(tokens, embed(tokens), template.index("{P}"), template.index("{A}"), referent)


def sentence_text(tokens: tuple[str, ...]) -> str:
    """把词连成句子：英文词之间加空格，标点和中文不加。

    Raises
    ------
    TypeError, ValueError
        ``tokens`` 不是字符串的列表或元组（一个字符串本身也不行），或为空。

    Examples
    --------
    >>> sentence_text(("The", "animal", "was", "tired", "."))
    'The animal was tired.'
    >>> sentence_text(("小明", "把", "苹果", "，", "因为", "tā", "饿了"))
    '小明把苹果，因为tā饿了'
    """
    tokens = check.string_list(tokens, "tokens")
    text = tokens[0]
    for prev, tok in zip(tokens, tokens[1:]):
        spaced = prev.isascii() and tok.isascii() and tok[:1].isalnum()  # tok[:1]：空字符串也不出错
        text += (" " if spaced else "") + tok
    return text


def turn_weights(turn: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
    >>> w_q, w_k, w_v = turn_weights(1)
    >>> w_q.shape, float(w_q[FEATURES.index("是代词"), FEATURES.index("描述活物")])
    ((12, 12), 4.0)
    """
    turn = check.positive_int(turn, "turn")
    if turn not in TURNS:
        raise ValueError(f"turn 只能是 1（找线索）或 2（找指代），收到的是 {turn}。")
    mats = []
    for key in ("W_Q", "W_K", "W_V"):
        w = np.zeros((len(FEATURES), len(FEATURES)))  # (D, D)
        for src, dst, value in TURNS[turn][key]:
            w[FEATURES.index(src), FEATURES.index(dst)] = value
        mats.append(w)
    return mats[0], mats[1], mats[2]


def attention_turn(x: np.ndarray, turn: int) -> tuple[np.ndarray, np.ndarray]:
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
    >>> x1, w1 = attention_turn(s.x, 1)
    >>> round(float(w1[s.pronoun, s.tokens.index("tired")]), 3)   # 第 1 轮：it 找到线索 tired
    0.744
    """
    x = check.as_real_array(x, "x")
    check.check_shape(x, "x", (None, len(FEATURES)), f"每一行是一个词的 {len(FEATURES)} 个特征。")
    w_q, w_k, w_v = turn_weights(turn)
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
        x_new, w = attention_turn(states[-1], turn)
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
    >>> print(explain_matrix(turn_weights(1)[0]))
    是代词 → 描述活物 ×4, 描述地点 ×4, 描述食物 ×4
    """
    w = check.as_real_array(w, "w")
    check.check_shape(w, "w", (len(FEATURES), len(FEATURES)))
    lines = []
    for f, row in zip(FEATURES, w):
        parts = [f"{g} ×{value:g}" for g, value in zip(FEATURES, row) if value != 0]
        if parts:
            lines.append(f"{f} → " + ", ".join(parts))
    return "\n".join(lines) if lines else "（全是 0）"
