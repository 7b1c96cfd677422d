"""第 10 章的测量：真模型的头到底在做什么——代词看向谁、注意力汇点、看前一个/后一个词的头。

做法照 Clark et al. (2019) “What Does BERT Look At?”：对每一层的每一个头，把注意力权重在一组句子上平均，
报告**全部**头的数字，不挑。每个函数的输入是 ``model.run(text)`` 的结果（或者一串这样的结果）。
层和头的编号从 0 开始（给读者看时加 1）。

0/0 的约定：头给两个候选词的注意力都是 0 时（float32 的 softmax 下溢），份额 0/0 定为 0.5：一视同仁，
“两不沾”，不算指对也不算指错（留着 NaN，``summary`` 的最小值、argmax 就乱了）。阈值 ``min_mass``、``threshold``
是注意力的份量，必须是 [0, 1] 里的实数（NaN 和谁比较都是假，会悄悄让所有头都“不合格”）。

本模块只依赖 NumPy 和本层的分词器工具。
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .. import _validation as check
from .unigram import METASPACE
from .wordpiece import is_punctuation

__all__ = ["check_results", "token_text", "find_word", "token_kinds", "KINDS", "PronounTable", "pronoun_table",
           "minimal_pairs", "attention_by_kind", "sink_heads", "offset_attention", "positional_heads"]

KINDS = ("cls", "sep", "punct", "word")  # 句首的特殊词元、句尾的特殊词元、标点、其余
_SPECIAL = {"[CLS]": "cls", "<s>": "cls", "[SEP]": "sep", "</s>": "sep"}


def token_text(token: str) -> str:
    """词元去掉记号后的文字（小写）：``##ing`` → ``ing``，``▁The`` → ``the``。

    Raises ``TypeError``：``token`` 不是字符串。
    """
    if not isinstance(token, str):
        raise TypeError(f"token 必须是字符串（一个词元），收到的是 {check.describe(token)}。")
    return token.removeprefix("##").replace(METASPACE, "").lower()


def find_word(tokens: Sequence[str], word: str, occurrence: int = 0) -> list[int]:
    """``word`` 占了哪几个词元：第 ``occurrence`` 段（从 0 数）文字连起来恰好是 ``word`` 的连续词元。

    一个词被切成几块时（“马路” → 马、路；“playing” → play、##ing），返回这几块的位置。

    Raises
    ------
    TypeError
        ``tokens`` 不是字符串列表、``word`` 不是非空字符串、``occurrence`` 不是整数。
    ValueError
        找不到（列出这句话的词元）；``occurrence`` 是负数。

    Examples
    --------
    >>> find_word(["[CLS]", "the", "animal", "was", "tired", "[SEP]"], "animal")
    [2]
    >>> find_word(["<s>", "▁", "那", "只", "动物", "过", "马", "路", "</s>"], "马路")
    [6, 7]
    """
    tokens = check.string_list(tokens, "tokens")
    if not isinstance(word, str) or not word:
        raise TypeError(f"word 必须是非空的字符串，收到的是 {check.describe(word)}。")
    occurrence = check.nonnegative_int(occurrence, "occurrence")
    texts = [token_text(t) if t not in _SPECIAL else "" for t in tokens]
    target = word.lower().replace(" ", "")
    found = []
    for start in range(len(texts)):
        joined, end = "", start
        while end < len(texts) and texts[end] and target.startswith(joined + texts[end]):
            joined, end = joined + texts[end], end + 1
            if joined == target:
                found.append(list(range(start, end)))
                break
    if len(found) <= occurrence:
        raise ValueError(f"word={word!r} 在这句话的词元里找不到第 {occurrence + 1} 处（找到 {len(found)} 处）。"
                         f"词元是：{' '.join(tokens)}")
    return found[occurrence]


def token_kinds(tokens: Sequence[str]) -> list[str]:
    """每个词元是哪一类：``"cls"``（[CLS] / <s>）、``"sep"``（[SEP] / </s>）、``"punct"``（标点）或 ``"word"``。

    Raises ``TypeError``、``ValueError``：``tokens`` 不是字符串的非空列表（一个字符串也不行：会被当成一个个字母）。

    >>> token_kinds(["[CLS]", "hi", ",", "you", "[SEP]"])
    ['cls', 'word', 'punct', 'word', 'sep']
    """
    kinds = []
    for t in check.string_list(tokens, "tokens"):
        text = token_text(t)
        kinds.append(_SPECIAL.get(t, "punct" if text and all(is_punctuation(c) for c in text) else "word"))
    return kinds


# ---------------------------------------------------------------- 代词看向谁


@dataclass(frozen=True)
class PronounTable:
    """每一句、每个候选词、每层每个头：代词给这个候选词的注意力权重。

    Attributes
    ----------
    sentences : 句子；``expected`` : 每句里代词实际指的词；``candidates`` : 候选词（两个）。
    weights : ndarray of shape (N 句, 2 个候选, L, H)
        代词（它的第一个词元）对候选词（它所有词元之和）的注意力权重。

    Raises ``TypeError``、``ValueError``：``weights`` 不是 (N, 2, L, H) 的实数数组、有 NaN/inf 或负数，
    或句数与 ``sentences``、``expected`` 对不上。
    """

    sentences: tuple[str, ...]
    expected: tuple[str, ...]
    candidates: tuple[str, str]
    weights: np.ndarray

    def __post_init__(self) -> None:
        w = check.as_real_array(self.weights, "weights")
        check.check_shape(w, "weights", (None, 2, None, None), "（N 句 × 2 个候选词 × L 层 × H 个头）")
        if np.any(w < 0):
            raise ValueError(f"weights 是注意力权重，不能是负数，收到的最小值是 {float(w.min())}。")
        if not len(self.sentences) == len(self.expected) == len(w):
            raise ValueError(f"sentences、expected、weights 的句数必须相同，收到 {len(self.sentences)}、"
                             f"{len(self.expected)}、{len(w)}。")

    @property
    def share(self) -> np.ndarray:
        """(N, L, H)：两个候选词分到的注意力里，第一个候选词占几成（0 到 1；0.5 = 一样多）。

        两个候选词都分到 0 时是 0/0，定为 0.5（两不沾，见模块开头的约定），不是 NaN。
        """
        w = self.weights.astype(np.float64)
        total = w[:, 0] + w[:, 1]
        return np.divide(w[:, 0], total, out=np.full_like(total, 0.5), where=total > 0)

    @property
    def right_share(self) -> np.ndarray:
        """(N, L, H)：两个候选词分到的注意力里，代词**实际所指**的那个占几成（> 0.5 = 这个头在这句里“指对了”）。"""
        first_is_right = np.array([e == self.candidates[0] for e in self.expected])[:, None, None]
        return np.where(first_is_right, self.share, 1 - self.share)

    @property
    def mass(self) -> np.ndarray:
        """(N, L, H)：代词一共把多少注意力给了这两个候选词。比例 ``share`` 只比两者谁多，
        这里看这个头到底有没有在看它们：0.007 对 0.003 也是 “七三开”，但这个头其实几乎不看这两个词。"""
        return self.weights.astype(np.float64).sum(axis=1)

    def _heads(self, right: bool, min_mass: float) -> list[tuple[int, int]]:
        """每一句都指对（``right``）或每一句都指错的头 (层, 头)；``min_mass`` > 0 时还要求每句的总量够大。"""
        min_mass = check.fraction(min_mass, "min_mass", "注意力的份量")
        answer = self.right_share > 0.5 if right else self.right_share < 0.5  # (N, L, H)；正好 0.5 算两不沾
        ok = (answer & (self.mass >= min_mass)).all(axis=0)  # (L, H)
        return [(int(layer), int(h)) for layer, h in np.argwhere(ok)]

    def resolving_heads(self, min_mass: float = 0.0) -> list[tuple[int, int]]:
        """每一句都“指对了”的头 (层, 头)：它的指向随句子的意思改变，而不只是偏爱某一个词。
        ``min_mass`` > 0 时还要求每一句里这个头至少把这么多注意力给了两个候选词。

        Raises ``TypeError``、``ValueError``：``min_mass`` 不是 [0, 1] 里的实数（NaN、字符串、bool 都不行）。
        """
        return self._heads(True, min_mass)

    def wrong_way_heads(self, min_mass: float = 0.0) -> list[tuple[int, int]]:
        """对照组：每一句都“指错了”的头 (层, 头)。它的指向也随句子改变，只是变反了。一个不懂意思、只是两句之间
        随便变一变的头，变对和变反的机会一样大；所以“句句都对”的头只有比这一组明显多，才说明有头在做指代。

        Raises ``TypeError``、``ValueError``：``min_mass`` 不是 [0, 1] 里的实数。
        """
        return self._heads(False, min_mass)

    def summary(self, min_mass: float = 0.1) -> dict[str, object]:
        """给正文用的几个数。

        ``heads`` 头的总数；``correct_per_sentence`` 每一句里指对的头数；``resolving`` 句句都指对的头数；
        ``resolving_attentive`` 其中每句都至少把 ``min_mass`` 的注意力给了两个候选词的头数；
        ``wrong_way``、``wrong_way_attentive`` 是对照组：句句都指错的头数，不加和加上 ``min_mass`` 的条件；
        ``best_head`` 最差那一句也指得最对的头 (层, 头)，``best_worst_share`` 是它在最差那一句里给实际所指的比例
        （≤ 0.5 就说明没有一个头句句都指对），``best_mass`` 是它在各句里给两个候选词的注意力之和的最小值。
        两个候选词都分到 0 的那一句，份额按 0.5 算（见 ``share``），所以这些数里不会出现 NaN。

        Raises ``TypeError``、``ValueError``：``min_mass`` 不是 [0, 1] 里的实数。
        """
        min_mass = check.fraction(min_mass, "min_mass", "注意力的份量")
        L, H = self.weights.shape[2:]
        worst = self.right_share.min(axis=0)  # (L, H) 每个头最差的那一句
        best = tuple(int(i) for i in np.unravel_index(np.argmax(worst), worst.shape))
        return {"heads": L * H, "correct_per_sentence": [int(c.sum()) for c in self.right_share > 0.5],
                "resolving": len(self.resolving_heads()), "resolving_attentive": len(self.resolving_heads(min_mass)),
                "wrong_way": len(self.wrong_way_heads()), "wrong_way_attentive": len(self.wrong_way_heads(min_mass)),
                "best_head": best, "best_worst_share": float(worst[best]),
                "best_mass": float(self.mass[:, best[0], best[1]].min())}


def pronoun_table(results: Sequence[Mapping], expected: Sequence[str], pronoun: str,
                  candidates: tuple[str, str]) -> PronounTable:
    """代词对两个候选词的注意力，每句 × 每层 × 每个头。

    Parameters
    ----------
    results : ``model.run(text)`` 的结果，一句一个。
    expected : 每句里代词实际指的是哪个候选词。
    pronoun : 代词（"it"、"它"）；取它的第一个词元当查询。
    candidates : 两个候选词（"animal"、"street"）。

    Raises
    ------
    TypeError
        ``results`` 不合 ``check_results`` 的要求；``expected``、``candidates`` 不是字符串的列表或元组（一个字符串
        也不行：``"ab"`` 会被当成两个候选词 a、b）；``pronoun`` 不是非空字符串。
    ValueError
        句数与 ``expected`` 对不上、``expected`` 不是候选词之一、候选词不是两个，或某句里找不到代词或候选词。
    """
    results = check_results(results)
    expected = check.string_list(expected, "expected")
    candidates = check.string_list(candidates, "candidates")
    if not isinstance(pronoun, str) or not pronoun:
        raise TypeError(f"pronoun 必须是非空的字符串（代词，例如 \"it\"），收到的是 {check.describe(pronoun)}。")
    if len(candidates) != 2:
        raise ValueError(f"candidates 必须恰好是两个候选词，收到 {len(candidates)} 个：{candidates!r}。")
    if len(results) != len(expected) or any(e not in candidates for e in expected):
        raise ValueError(f"expected 要给每一句写明代词指的是哪个候选词 {candidates}：收到 {len(results)} 句、{list(expected)}。")
    rows = []
    for r in results:
        q = find_word(r["tokens"], pronoun)[0]
        a = r["attentions"][:, :, q]  # (L, H, T) 代词这一行
        rows.append([a[..., find_word(r["tokens"], c)].sum(axis=-1) for c in candidates])  # 2 × (L, H)
    return PronounTable(tuple(" ".join(r["tokens"]) for r in results), tuple(expected), tuple(candidates),
                        np.array(rows))


def minimal_pairs(tables: Sequence[PronounTable], min_mass: float = 0.0) -> dict[str, object]:
    """几组最小对照句（每组一张 ``pronoun_table``）合起来看：每个头在几组里句句指对、几组里句句指错。

    Parameters
    ----------
    tables : list of PronounTable
        每组一张表（同一个模型，层数、头数相同）。
    min_mass : float
        > 0 时只算每句都至少把这么多注意力给了两个候选词的头（``PronounTable.resolving_heads``）。

    Returns
    -------
    dict
        ``pairs`` 组数，``sentences`` 句数；``right_per_pair``、``wrong_per_pair`` 每组里句句指对 / 句句指错的头数；
        ``right_count``、``wrong_count`` (L, H)：每个头在几组里句句指对 / 句句指错；``right_on_all``、``wrong_on_all``
        在每一组里都句句指对 / 都句句指错的头数；``chance_all`` = 2 ** -句数：一个头每句都像抛硬币一样随便偏向
        一个词时，句句都指对的机会。

    Raises
    ------
    TypeError
        ``tables`` 不是 PronounTable 的非空列表；``min_mass`` 不是实数。
    ValueError
        各张表的层数、头数不一样（不是同一个模型）；``min_mass`` 不在 0 到 1 之间。

    Examples
    --------
    >>> import numpy as np
    >>> w = np.array([[[[0.3]], [[0.1]]], [[[0.1]], [[0.3]]]])   # (2 句, 2 个候选, 1 层, 1 个头)：跟着意思变
    >>> t = PronounTable(("a", "b"), ("x", "y"), ("x", "y"), w)
    >>> r = minimal_pairs([t, t])
    >>> r["right_on_all"], r["wrong_on_all"], r["chance_all"]
    (1, 0, 0.0625)
    """
    if not isinstance(tables, (list, tuple)) or not tables or not all(isinstance(t, PronounTable) for t in tables):
        raise TypeError(f"tables 必须是 pronoun_table(...) 返回的 PronounTable 的非空列表（每组对照句一张），"
                        f"收到的是 {check.describe(tables)}。")
    min_mass = check.fraction(min_mass, "min_mass", "注意力的份量")
    shapes = {t.weights.shape[2:] for t in tables}
    if len(shapes) != 1:
        raise ValueError(f"tables 必须来自同一个模型（层数、头数相同），收到的 (L, H) 有 {sorted(shapes)}。")
    L, H = shapes.pop()
    right, wrong = np.zeros((2, len(tables), L, H), dtype=bool)  # (组, L, H)
    for i, t in enumerate(tables):
        for layer, h in t.resolving_heads(min_mass):
            right[i, layer, h] = True
        for layer, h in t.wrong_way_heads(min_mass):
            wrong[i, layer, h] = True
    n_sentences = sum(len(t.sentences) for t in tables)
    return {"pairs": len(tables), "sentences": n_sentences,
            "right_per_pair": [int(r.sum()) for r in right], "wrong_per_pair": [int(w.sum()) for w in wrong],
            "right_count": right.sum(axis=0), "wrong_count": wrong.sum(axis=0),
            "right_on_all": int(right.all(axis=0).sum()), "wrong_on_all": int(wrong.all(axis=0).sum()),
            "chance_all": 2.0 ** -n_sentences}


# ---------------------------------------------------------------- 注意力汇点、看前一个/后一个词的头


def check_results(results: object) -> list[Mapping]:
    """``model.run`` 的结果列表：非空，每个都含 ``tokens``（T 个字符串）和 ``attentions`` (L, H, T, T)。

    Raises
    ------
    TypeError, ValueError
        不是非空的列表，某一项缺 ``tokens``/``attentions``，或形状对不上。
    """
    if not isinstance(results, (list, tuple)) or not results:
        raise TypeError(f"results 必须是非空的列表，每一项是 model.run(句子) 的结果，收到的是 {check.describe(results)}。")
    for i, r in enumerate(results):
        if not isinstance(r, Mapping) or "tokens" not in r or "attentions" not in r:
            raise TypeError(f"results[{i}] 必须是 model.run(句子) 的结果（含 tokens、attentions），收到的是 {check.describe(r)}。")
        tokens = check.string_list(r["tokens"], f"results[{i}]['tokens']")
        a = check.as_real_array(r["attentions"], f"results[{i}]['attentions']")
        check.check_shape(a, f"results[{i}]['attentions']", (None, None, len(tokens), len(tokens)),
                          f"（L 层 × H 个头 × T × T，T = {len(tokens)} 个词元）")
    return list(results)


def attention_by_kind(results: Sequence[Mapping]) -> dict[str, np.ndarray]:
    """每个头平均把多少注意力给了每一类词元（``KINDS``）：先在一句里对所有查询取平均，再对句子取平均。

    Returns
    -------
    dict of str -> ndarray of shape (L, H)
        四类加起来是 1。

    Examples
    --------
    >>> import numpy as np
    >>> a = np.zeros((1, 1, 3, 3)); a[..., 2] = 1.0              # 1 层 1 个头，每个词元都只看 [SEP]
    >>> attention_by_kind([{"tokens": ["[CLS]", "hi", "[SEP]"], "attentions": a}])["sep"]
    array([[1.]])
    """
    out = {k: [] for k in KINDS}
    for r in check_results(results):
        kinds = np.array(token_kinds(r["tokens"]))
        per_query = r["attentions"].astype(np.float64)  # (L, H, T, T)
        for k in KINDS:
            out[k].append(per_query[..., kinds == k].sum(axis=-1).mean(axis=-1))  # (L, H)
    return {k: np.mean(v, axis=0) for k, v in out.items()}


def sink_heads(by_kind: Mapping[str, np.ndarray], threshold: float = 0.5) -> dict[str, int]:
    """有几个头平均至少把 ``threshold`` 的注意力给了某一类（[CLS]、[SEP]、标点……）：这些就是“汇点”头。

    Raises ``TypeError``、``ValueError``：``by_kind`` 不是 ``attention_by_kind`` 返回的映射；``threshold`` 不是 [0, 1] 里的实数。
    """
    if not isinstance(by_kind, Mapping) or not all(isinstance(v, np.ndarray) for v in by_kind.values()):
        raise TypeError(f"by_kind 必须是 attention_by_kind(...) 返回的 类别 → (L, H) 数组 的映射，"
                        f"收到的是 {check.describe(by_kind)}。")
    threshold = check.fraction(threshold, "threshold", "注意力的份量")
    return {k: int((v >= threshold).sum()) for k, v in by_kind.items()}


def offset_attention(results: Sequence[Mapping], offset: int) -> np.ndarray:
    """(L, H)：每个词元平均给它后面第 ``offset`` 个词元多少注意力（``-1`` = 前一个，``+1`` = 后一个）。

    Raises
    ------
    TypeError, ValueError
        ``results`` 不合 ``check_results`` 的要求；``offset`` 不是非零整数；没有一句话长到有这个邻居。

    Examples
    --------
    >>> import numpy as np
    >>> a = np.eye(4, k=-1)[None, None]; a[..., 0, 0] = 1.0     # 每个词元都看前一个（第一个只能看自己）
    >>> float(offset_attention([{"tokens": list("abcd"), "attentions": a}], -1)[0, 0])
    1.0
    """
    if isinstance(offset, (bool, np.bool_)) or not isinstance(offset, (int, np.integer)) or offset == 0:
        raise TypeError(f"offset 必须是非零整数（-1 = 前一个词元，+1 = 后一个），收到的是 {check.describe(offset)}。")
    out = []
    for r in check_results(results):
        a = r["attentions"].astype(np.float64)  # (L, H, T, T)
        T = a.shape[-1]
        t = np.arange(max(0, -offset), min(T, T - offset))  # 有这个邻居的查询位置
        if t.size:  # 句子比 |offset| 还短：没有一个查询有这个邻居
            out.append(a[..., t, t + offset].mean(axis=-1))  # (L, H)
    if not out:
        raise ValueError(f"offset={offset}：每句话都不到 {abs(offset) + 1} 个词元，没有一个词元有这个邻居，平均值是 0/0。")
    return np.mean(out, axis=0)


def positional_heads(results: Sequence[Mapping], threshold: float = 0.5) -> dict[str, list[tuple[int, int]]]:
    """平均至少把 ``threshold`` 的注意力给前一个（``"before"``）或后一个（``"after"``）词元的头 (层, 头)。

    Raises ``TypeError``、``ValueError``：``results`` 不合 ``check_results`` 的要求；``threshold`` 不是 [0, 1] 里的实数。
    """
    check_results(results)
    threshold = check.fraction(threshold, "threshold", "注意力的份量")
    found = {}
    for key, offset in (("before", -1), ("after", 1)):
        found[key] = [(int(layer), int(h)) for layer, h in np.argwhere(offset_attention(results, offset) >= threshold)]
    return found
