"""中文搜索：读者真会输入的查询，在浏览器里用网站自己的搜索页（索引 searchindex.js + searchtools.js +
本书的 book/_ext/zh_search.js 和 search_scorer.js）去搜，回答它的那一页必须排在前面。

查询分几类：术语、单个汉字、自然的句子和问句（书里没有原样出现的说法，例如书里写“除以 √d_k”，
读者搜“为什么要除以根号”）、英文术语、中英混合。``within`` 是“回答它的页面必须出现在前几条结果里”：
大多数查询要求排第一；到处都用的词（每一页都有）只要求出现在结果里。
"""

from __future__ import annotations

import re

import pytest
from zh_search import HAN_RUN, OTHER_WORD

from tools.site import ranked, search

PREFACE, CH1, CH2, CH3, CH4 = "preface", "01_rnn_vs_transformer", "02_self_attention", "03_qkv", "04_four_steps"
CH5, CH6, CH7 = "05_multi_head", "06_positional_encoding", "07_complexity"
CH8, CH9, CH10, PRIMER = "08_transformer_layer", "09_next_token", "10_real_model", "numpy_primer"
ANYWHERE = None  # 每一页都有的字和词：只要求出现在结果里

QUERIES = [
    # 术语
    ("点积", CH3, 1),
    ("缩放", CH4, 1),
    ("余弦相似度", CH3, 1),
    ("梯度消失", CH4, 1),
    ("加权求和", CH4, 1),
    ("隐状态", CH1, 3),                 # 术语表的“隐藏状态”条目写了“也叫隐状态”，自测题也用这个词
    ("赢家通吃", CH4, 1),
    ("传话游戏", CH1, 1),
    ("全员电话会议", CH1, 1),
    ("位置编码", CH6, 1),
    ("正弦位置编码", CH6, 1),
    ("多头注意力", CH5, 1),
    ("复杂度", CH7, 1),
    ("层归一化", CH8, 1),
    ("残差连接", CH8, 1),
    ("从零训练", CH8, 1),
    ("LayerNorm", CH8, 2),                # 前言的零件清单也解释了它
    ("广播", PRIMER, 2),                  # 第 6 章用广播造位置编码表，NumPy 速成讲它是什么
    ("注意力", CH4, ANYWHERE),          # 每一页都讲注意力
    ("权重矩阵", CH4, 3),               # 第 1、2、4 章都把权重矩阵算出来、画出来
    ("矩阵乘法", CH2, 1),
    # 单个汉字
    ("头", CH5, 1),                     # 每一页都有“头”字；标题里有它的第 5 章（多头注意力）排第一
    ("键", CH2, 2),
    ("它", CH2, 2),
    # 自然的句子和问句
    ("为什么要除以根号", CH4, 1),
    ("它指的是谁", CH2, 1),
    ("为什么一轮不够", CH2, 1),
    ("一个词怎么知道该听谁的", CH2, 1),
    ("为什么要用注意力", CH2, 2),        # 第 4 章开头原样写着“为什么要注意力”（回顾前三章）
    ("为什么要多个头", CH5, 2),          # 第 3 章预告“每层有很多个头”
    ("维度越多点积波动越大", CH4, 1),
    ("记忆衰减还是爆炸", CH1, 1),
    ("点积越大越相似吗", CH3, 1),        # 这个误区只在第 3 章讲（第 4 章回顾时链接回去）
    ("图书馆借书", CH3, 1),              # 图书馆的比喻在第 3 章；第 4 章的“借书的四个动作”排第二
    ("射箭打靶", CH3, 1),
    ("怎么安装", PREFACE, 1),
    ("在自己电脑上运行", PREFACE, 1),
    # 英文术语
    ("softmax", CH4, 1),
    ("self-attention", CH2, 1),
    ("RNN", CH1, 1),
    ("Mamba", CH1, 1),
    ("cosine", CH3, 1),
    ("hidden state", CH1, 1),
    ("The animal didn't cross the street because it was too tired", CH2, 1),
    # 中英混合
    ("Softmax 赢家通吃", CH4, 1),
    ("Q K V 三兄弟", CH3, 1),
    ("d_k 为什么要缩放", CH4, 1),
    ("softmax 分蛋糕", CH4, 1),
    ("怎样让 softmax 变尖", CH4, 1),
    ("为什么 V 不能直接用 K", CH3, 1),
    ("RNN 为什么慢", CH1, 1),
    ("it 指的是什么", CH2, 1),
    # 读第 5–10 章的人会问的（书里没有原样的句子）
    ("头越多越好吗", CH5, 1),
    ("两个头为什么会分工", CH5, 1),
    ("注意力怎么知道词的先后顺序", CH6, 3),  # 排第 3：第 2、1 章的“注意力怎么……”“猫追狗”切出的两字块更多（待改进）
    ("位置为什么不用 1 2 3", CH6, 1),
    ("句子长度翻倍计算量变几倍", CH7, 2),    # 第 1 章也算过“翻倍 → 4 倍”（第 1、7 章去重以后改回 1）
    ("FlashAttention 为什么省内存", CH7, 1),
    ("长上下文为什么占内存", CH7, 1),
    ("残差连接有什么用", CH8, 1),
    ("为什么要叠很多层", CH8, 1),
    ("怎么训练一个小 Transformer", CH8, 3),       # 第 3 章（Q、K 眼镜）和第 9 章（小 GPT）也在训练
    ("温度调高会怎样", CH9, 1),
    ("GPT 怎么一个字一个字地写", CH9, 1),
    ("top-p 采样", CH9, 1),
    ("困惑度是什么意思", CH9, 1),
    ("真模型的注意力头在看什么", CH10, 1),
    ("分词器怎么切词", CH10, 1),
]


def test_query_list_is_long_enough():
    assert len(QUERIES) >= 30 and len({q for q, _, _ in QUERIES}) == len(QUERIES)


@pytest.mark.parametrize("query, expected, within", QUERIES, ids=[q for q, _, _ in QUERIES])
def test_search_finds_the_page_that_answers(searcher, query, expected, within):
    results = ranked(searcher, query)
    assert expected in results[:within], f"搜索 {query!r}：期望 {expected} 在前 {within or '任意'} 条，实际结果 {results}"


def test_the_search_page_shows_what_the_ranking_gives(site, page):
    """上面的查询直接调搜索页的 JS 排序（``tools.site.ranked``），不看页面；读者在搜索页上看到的结果列表
    （``search``：打开 search.html?q=…，读显示出来的链接）必须和它一模一样，排序、去重都一样。"""
    for query in ("射箭打靶", "为什么要除以根号", "注意力", "softmax 分蛋糕", "头越多越好吗", "全然无关的火星文字壹贰叁"):
        shown = search(page, query)
        assert shown == ranked(page, query), (query, shown)


def test_search_does_not_list_pages_that_miss_most_of_the_query(searcher):
    assert ranked(searcher, "射箭打靶") == [CH3]
    assert ranked(searcher, "全然无关的火星文字壹贰叁") == []


def test_query_and_index_are_split_the_same_way(searcher):
    """查询端（浏览器里的 splitQuery）和索引端（zh_search.py 的 split）切法一致：书里原样出现的句子，
    查询切出来的每一块都是索引里的词条。"""
    page = searcher
    assert page.evaluate("q => splitQuery(q)", "除以根号") == ["除以", "以根", "根号"]
    assert page.evaluate("q => splitQuery(q)", "头") == ["头"]
    assert page.evaluate("q => splitQuery(q)", "d_k缩放 softmax") == ["d_k", "缩放", "softmax"]
    # 哪些字算汉字、哪些算其他的词，两边的判断一致（JS 用 \p{Script=Han}，Python 列出区段）
    for text in ("〇 与 々", "𠀀𠀁字", "⺀部首", "ーカタカナ", "θ 角 α1"):
        expected = []
        for run in re.findall(f"{HAN_RUN.pattern}|{OTHER_WORD.pattern}", text):
            if HAN_RUN.fullmatch(run):
                expected += [run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)]
            elif len(run) > 1:
                expected.append(run)
        assert page.evaluate("q => splitQuery(q)", text) == expected, text
    verbatim = ["实验二：分数一大，softmax 就变成“赢家通吃”", "一个键变长，注意力怎么变", "图 1：点一个词，看它在听谁",
                "可交互图：放大倍数 g 决定记忆是衰减还是爆炸", "真实尺寸：D = 512，d_k = 64"]
    for sentence in verbatim:
        missing = page.evaluate("""s => splitQuery(s.toLowerCase())
            .filter(t => t.length > 1 || /\\p{Script=Han}/u.test(t))
            .filter(t => !/^\\d+$/.test(t))
            .map(t => new Stemmer().stemWord(t))
            .filter(t => !(t in Search._index.terms) && !(t in Search._index.titleterms))""", sentence)
        assert not missing, f"{sentence!r} 切出的 {missing} 不在索引里"
