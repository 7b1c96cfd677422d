"""第 2 章玩具句子的数据表：特征名、词表、句子模板和两轮讨论的投影矩阵（全部为讲解而手工设计）。

表都是只读的（``MappingProxyType`` + ``tuple``），调用者改不动。怎么用这些表，见 ``toy_sentences.py``。
"""

from __future__ import annotations

from types import MappingProxyType

__all__ = ["FEATURES", "ENTITY", "DESCRIBE", "LEXICON", "SENTENCES", "TURNS"]

FEATURES: tuple[str, ...] = (
    "是动物", "是人", "是女性", "是男性", "是地点", "是食物",   # 名词“是什么”
    "是代词", "指女性", "指男性",                              # 代词自带的线索
    "描述活物", "描述地点", "描述食物",                        # 描述词“能说谁”
)
ENTITY = FEATURES[:6]
DESCRIBE = FEATURES[9:]

# 词 -> 它具有的特征（值都是 1）。没列特征的词（the、把、因为……）是一行 0。
# 下面三张表都是只读的 (MappingProxyType + tuple)：调用者改不动它们。
LEXICON = MappingProxyType({
    "animal": ("是动物",), "street": ("是地点",), "it": ("是代词",),
    "tired": ("描述活物",), "hungry": ("描述活物",), "wide": ("描述地点",), "crowded": ("描述地点",),
    "小明": ("是人", "是男性"), "小红": ("是人", "是女性"), "苹果": ("是食物",),
    "她": ("是代词", "指女性"), "他": ("是代词", "指男性"), "它": ("是代词",), "tā": ("是代词",),
    "饿了": ("描述活物",), "很大方": ("描述活物",), "很甜": ("描述食物",),
    **{w: () for w in ("The", "the", "didn't", "cross", "because", "was", "too", ".",
                       "把", "递给", "，", "因为")},
})

# 句子名 -> (模板, {变体名: (代词, 描述词, 人读出的指代对象)})；模板里的 {P} {A} 由变体填入。
SENTENCES = MappingProxyType({
    "animal": (("The", "animal", "didn't", "cross", "the", "street", "because", "{P}", "was", "too", "{A}", "."),
               {"tired": ("it", "tired", "animal"), "hungry": ("it", "hungry", "animal"),
                "wide": ("it", "wide", "street"), "crowded": ("it", "crowded", "street")}),
    "apple": (("小明", "把", "苹果", "递给", "小红", "，", "因为", "{P}", "{A}"),
              {"她饿了": ("她", "饿了", "小红"), "它很甜": ("它", "很甜", "苹果"),
               "他很大方": ("他", "很大方", "小明")}),
})

# 每一轮讨论的投影矩阵：(行特征, 列特征, 值)。行 = 输入特征，列 = 输出特征（行向量约定 x @ W）。
TURNS = MappingProxyType({
    1: {"W_Q": tuple(("是代词", f, 4.0) for f in DESCRIBE),    # 代词问：后面说了我什么？
        "W_K": tuple((f, f, 3.0) for f in DESCRIBE),           # 描述词亮出：我描述哪一类
        "W_V": tuple((f, f, 1.0) for f in DESCRIBE)},          # 交出去的内容：这条线索
    2: {"W_Q": (("描述活物", "是动物", 4.0), ("描述活物", "是人", 4.0), ("描述地点", "是地点", 4.0),
                ("描述食物", "是食物", 4.0), ("指女性", "是女性", 2.0), ("指男性", "是男性", 2.0)),
        "W_K": tuple((f, f, 4.0) for f in ENTITY),             # 名词亮出：我是什么
        "W_V": tuple((f, f, 1.0) for f in ENTITY)},            # 交出去的内容：我是什么
})
