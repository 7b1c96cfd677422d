"""第 2 章的句子"小明把苹果递给小红，因为她饿了"走过一整层编码器（权重全部为讲解而手工设计，不是训练出来的）。

一层 = 2 个头的自注意力 → 残差 + LayerNorm → 前馈网络 → 残差 + LayerNorm（论文的 post-LN）。D = 12 个有名字的特征
（见 ``toy_lexicon.FEATURES``）。W_Q、W_K、W_V 的 12 列分给两个头，每个头 6 列；这些列只是"暗号"，没有特征名：

* 头 1（找线索）：代词问"后面说了我什么"，描述词亮出"我描述活物/地点/食物"，交出这条线索；
* 头 2（认性别）：指女性的代词找"是女性"的词、指男性的找"是男性"的，交出对方"是什么"；
* W_O 把两个头交回的暗号翻译回特征名；
* 前馈网络只有 1 个隐藏单元，规则是"会饿的东西不是食物，也不是地点"：哪个位置身上"描述活物"够强，
  就压低它的"是食物""是地点"。同一条规则在每个位置上各算各的（位置之间不交流）。

本模块只依赖 NumPy 和 ``core``。形状字母：T 词数，D = 12。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from ..core.encoder import PARAM_KEYS, encoder_layer_steps
from .toy_lexicon import DESCRIBE, ENTITY, FEATURES
from .toy_sentences import toy_sentence

__all__ = ["story_params", "story_steps", "STAGES", "NUM_HEADS"]

NUM_HEADS = 2
STAGES = ("输入 x", "注意力输出 a", "残差 x + a", "第一次 LayerNorm → h", "前馈输出 FFN(h)", "残差 h + FFN(h)", "第二次 LayerNorm → 输出")
_F = {f: i for i, f in enumerate(FEATURES)}


def story_params() -> dict[str, np.ndarray]:
    """手工设计的一层编码器参数（16 个键，D = 12，d_ff = 1），每次调用都是新数组。

    Examples
    --------
    >>> p = story_params()
    >>> p["w_q"].shape, p["w_1"].shape, float(p["w_q"][FEATURES.index("指女性"), 6])
    ((12, 12), (12, 1), 4.0)
    """
    D = len(FEATURES)
    p = {k: np.zeros((D, D)) for k in ("w_q", "w_k", "w_v", "w_o")}  # 每个 (D, D)
    for j, f in enumerate(DESCRIBE):  # 头 1 用第 0-5 列
        p["w_q"][_F["是代词"], j] = 4.0  # 代词问：后面说了我什么？
        p["w_k"][_F[f], j] = 3.0  # 描述词亮出：我描述哪一类
        p["w_v"][_F[f], j] = 1.0  # 交出这条线索
        p["w_o"][j, _F[f]] = 1.0  # 暗号 j → 特征 f
    for j, (hint, gender) in enumerate([("指女性", "是女性"), ("指男性", "是男性")]):  # 头 2 用第 6-11 列
        p["w_q"][_F[hint], 6 + j] = 4.0
        p["w_k"][_F[gender], 6 + j] = 3.0
    for j, f in enumerate(ENTITY):
        p["w_v"][_F[f], 6 + j] = 1.0  # 交出"我是什么"
        p["w_o"][6 + j, _F[f]] = 1.0
    p |= {b: np.zeros(D) for b in ("b_q", "b_k", "b_v", "b_o", "b_2", "ln1_beta", "ln2_beta")}
    p |= {"ln1_gamma": np.ones(D), "ln2_gamma": np.ones(D)}
    p["w_1"] = np.zeros((D, 1))  # (D, d_ff=1)
    p["w_1"][_F["描述活物"], 0] = 1.0  # 这个位置身上"描述活物"有多强
    p["b_1"] = np.array([-0.9])  # 超过门槛 0.9 才算数
    p["w_2"] = np.zeros((1, D))  # (d_ff=1, D)
    p["w_2"][0, [_F["是食物"], _F["是地点"]]] = -4.0  # 会饿的东西不是食物，也不是地点
    return {k: p[k] for k in PARAM_KEYS}


def story_steps(variant: str = "她饿了", residual: bool = True) -> dict:
    """让玩具句子走过 ``story_params`` 这一层，交出每一步的数组。

    Parameters
    ----------
    variant : str
        ``toy_sentences.variant_names("apple")`` 之一。
    residual : bool
        False 时把两处残差的 "x +" 去掉（只为对照：看丢了什么）。

    Returns
    -------
    dict
        ``tokens``；``stages``：按 ``STAGES`` 顺序的 7 个 (T, D) 数组；``weights`` (H, T, T)；``pronoun`` 代词位置；
        ``hidden`` (T, 1) 前馈网络隐藏单元的值。

    Raises
    ------
    TypeError, ValueError
        ``variant`` 不合法。

    Examples
    --------
    >>> st = story_steps()
    >>> [st["tokens"][int(st["weights"][h, st["pronoun"]].argmax())] for h in range(2)]   # 头 1 找线索，头 2 找女性
    ['饿了', '小红']
    """
    s = toy_sentence("apple", variant)
    p = story_params()
    st = encoder_layer_steps(s.x, p, NUM_HEADS, residual=check.boolean(residual, "residual"))  # 就是 core 的那一层
    hidden = np.maximum(st["h"] @ p["w_1"] + p["b_1"], 0)  # (T, 1) 前馈网络唯一的隐藏单元：规则被触发了多少
    return {"tokens": s.tokens, "stages": [st[k] for k in ("x", "a", "u", "h", "f", "v", "out")],
            "weights": st["weights"], "pronoun": s.pronoun, "hidden": hidden}
