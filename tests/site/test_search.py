"""中文搜索：读者真会输入的查询，在浏览器里用网站自己的搜索页（索引 searchindex.js + searchtools.js +
本书的 book/_ext/zh_search.js 和 search_scorer.js）去搜，回答它的那一页必须排在前面。

``QUERIES``：术语、单个汉字、书里没有原样出现的句子和问句（书里写“除以 √d_k”，读者搜“为什么要除以根号”）、
英文术语、中英混合。``NATURAL``：读者在搜索框里真会打的问句，中英混写、带“的”“吗”“怎么”、用术语表里的另一种
说法（“self attention”“FFN”“mask”“kv cache”）；在改进搜索之前（commit 977e408 的网站），56 条里 2 条一无所获、17 条
排第一的不是回答它的页面，18 条不满足下表要求的名次。``within`` 是“回答它的页面必须出现在前几条结果里”：
大多数查询要求排第一；到处都用的词（每一页都有）只要求出现在结果里。

后面是性质测试：一页里任意两个实词拼成的查询，这一页一定在“每个词都在”的那一档（排在只有一部分词的页前面）；
加上“的”“吗”不改变第一条结果；书里哪里都没有的字拼成的查询得到说清楚的“没找到”，不报错。
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from zh_search import HAN_RUN, OTHER_WORD

from tools.site import ranked, search

PREFACE, CH1, CH2, CH3, CH4 = "preface", "01_rnn_vs_transformer", "02_self_attention", "03_qkv", "04_four_steps"
CH5, CH6, CH7 = "05_multi_head", "06_positional_encoding", "07_complexity"
CH8, CH9, CH10, PRIMER = "08_transformer_layer", "09_next_token", "10_real_model", "numpy_primer"
CH11 = "11_tokenization"
NOTATION = "notation"
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
    ("图书馆借书", CH3, 2),              # 图书馆的比喻在第 3 章，可那里没有“借书”二字；第 4 章回顾图书馆、讲借书的四个动作，两个词都有，排第一
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
    ("分词器怎么切词", CH11, 1),  # 第 11 章整章讲分词（此前答案是第 10 章，排在原样有“分词器怎样切词”的延伸阅读之后）
]


NATURAL = [  # (查询, 回答它的页面, 必须排在前几条)
    ("transformer的优点", CH1, 2),       # 书里没有“优点”：只剩 transformer，标题里有它的前言、第 1 章排前两位
    ("Transformer的好处", CH1, 2),       # “好处”是问“关于”的词（FRAME_WORDS），不参与搜索
    ("为什么要除以根号dk", CH4, 1),      # 记号表：根号 = \\sqrt；dk = d_k
    ("softmax是什么", CH4, 1),
    ("注意力机制怎么算", CH4, 4),        # “算”每一页都有（“动手算”），只有“注意力”在排序；第 2、4 章都在算（待改进）
    ("位置编码有什么用", CH6, 1),
    ("kv cache为什么快", CH7, 1),        # 术语表：KV 缓存 = KV cache
    ("GPT和BERT的区别", CH9, 1),         # 第 9 章：编码器的用法（BERT 这一类）vs 解码器的用法（GPT 这一类）
    ("多头注意力 好处", CH5, 1),
    ("什么是困惑度", CH9, 1),
    ("layer norm 放在哪", CH8, 1),
    ("自注意力和交叉注意力", CH8, 1),     # 交叉注意力只在第 8 章；“交叉熵”不算
    ("温度 采样", CH9, 1),
    ("它指代谁", CH2, 1),
    ("self attention是什么", CH2, 1),    # 术语表：自注意力 = self-attention
    ("positional encoding怎么算", CH6, 1),
    ("FFN是干嘛的", CH8, 1),              # 术语表：前馈网络，简称 FFN
    ("前馈网络的作用", CH8, 1),
    ("embedding是什么意思", CH1, 1),      # 术语表：嵌入 = embedding（见第 1 章）
    ("mask有什么用", CH8, 1),              # 术语表：掩码 = mask
    ("因果掩码是干什么的", CH8, 1),
    ("残差连接为什么有用", CH8, 1),
    ("梯度消失是怎么回事", CH1, 2),        # 第 4 章的实验三“赢家通吃时，梯度消失了”也回答它
    ("RNN的缺点是什么", CH1, 1),
    ("rnn为什么不能并行", CH1, 1),
    ("QKV分别是什么", CH3, 1),
    ("查询 键 值 是什么意思", CH3, 1),
    ("点积和余弦相似度有啥区别", CH3, 1),
    ("softmax为什么会饱和", CH4, 1),
    ("温度是什么", CH9, 1),
    ("W_O是干什么的", CH5, 1),
    ("sin cos 位置编码", CH6, 1),
    ("RoPE是什么", CH6, 1),
    ("旋转位置编码怎么转", CH6, 1),
    ("注意力的复杂度为什么是平方", CH7, 1),
    ("上下文长度翻倍会怎样", CH7, 1),
    ("flash attention 原理", CH7, 1),
    ("在线softmax怎么算", CH7, 1),
    ("pre-LN和post-LN的区别", CH8, 1),
    ("编码器和解码器有什么不同", CH8, 1),
    ("怎么生成下一个字", CH9, 1),
    ("top-k和top-p有什么不同", CH9, 1),
    ("贪心和采样哪个好", CH9, 1),
    ("自回归是什么意思", CH9, 1),
    ("真模型的权重从哪来", CH10, 2),     # 第 12 章也讲它的权重从哪里来（PyPI 上的 GGUF 文件），第 10 章按“重看”的章打九折
    ("分词器是怎么切词的", CH11, 1),  # 同上
    ("注意力汇点是什么", CH10, 1),
    ("numpy广播是啥", PRIMER, 1),
    ("怎么在自己电脑上安装", PREFACE, 1),
    ("为什么需要位置编码", CH6, 1),
    ("KV缓存是什么", CH7, 1),
    ("对称性破缺是什么", CH5, 1),
    ("置换等变是什么意思", CH6, 1),
    ("反向传播怎么写", CH5, 1),            # 术语表：第 5 章手写反向函数
    ("交叉熵损失是什么", CH3, 1),          # 第 3 章训练眼镜时第一次用交叉熵
    ("多头注意力的头是怎么切的", CH5, 1),
]


def test_query_lists_are_long_enough():
    assert len(QUERIES) >= 30 and len({q for q, _, _ in QUERIES}) == len(QUERIES)
    assert len(NATURAL) >= 40 and len({q for q, _, _ in NATURAL}) == len(NATURAL)
    assert not {q for q, _, _ in QUERIES} & {q for q, _, _ in NATURAL}


@pytest.mark.parametrize("query, expected, within", QUERIES + NATURAL, ids=[q for q, _, _ in QUERIES + NATURAL])
def test_search_finds_the_page_that_answers(searcher, query, expected, within):
    results = ranked(searcher, query)
    assert expected in results[:within], f"搜索 {query!r}：期望 {expected} 在前 {within or '任意'} 条，实际结果 {results}"


def test_the_search_page_shows_what_the_ranking_gives(site, page):
    """上面的查询直接调搜索页的 JS 排序（``tools.site.ranked``），不看页面；读者在搜索页上看到的结果列表
    （``search``：打开 search.html?q=…，读显示出来的链接）必须和它一模一样，排序、去重都一样。"""
    for query in ("射箭打靶", "为什么要除以根号", "注意力", "softmax 分蛋糕", "头越多越好吗", "transformer的优点"):
        shown = search(page, query)
        assert shown == ranked(page, query), (query, shown)


# 搜索页的 JS 排序，带得分：[(页面, 得分)]，按显示顺序
SCORED_JS = """q => {
  const [query, terms, excluded, highlighted, objects] = Search._parseQuery(q);
  return Search._performSearch(query, terms, excluded, highlighted, objects).reverse().map(r => [r[0].split("/").pop(), r[4]]);
}"""


def scored(page, query: str) -> list[tuple[str, float]]:
    return [tuple(r) for r in page.evaluate(SCORED_JS, query)]


def test_pages_with_every_word_come_first(searcher):
    """每个词都在的页（得分 ≥ ALL_WORDS）排在只有一部分词的页前面；没有一页有全部的词时，有大部分的照样列出。"""
    all_words = searcher.evaluate("ALL_WORDS")
    assert ranked(searcher, "射箭打靶") == [CH3]            # 只有第 3 章有这几个字
    results = scored(searcher, "自注意力和交叉注意力")
    tiers = [score >= all_words for _, score in results]
    assert results[0][0] == CH8 and tiers == sorted(tiers, reverse=True) and not all(tiers), results
    # “优点”书里没有，“transformer”有：不是空的（原来的搜索在这里一无所获）
    assert ranked(searcher, "transformer的优点")[:2] == [PREFACE, CH1]


def test_query_and_index_are_split_the_same_way(searcher):
    """查询端（浏览器里的 splitQuery）切出查询的词，每个汉字的词在索引里查它的相邻两字（zh_search.py 的 split
    建索引时记下的也是相邻两字）：书里原样出现的句子，查询切出来的每一块都是索引里的词条。"""
    page = searcher
    split = "q => splitQuery(q)"
    assert page.evaluate(split, "除以根号") == ["除以", "根号"]            # 记号表：根号 (\\sqrt) 是认得的词
    assert page.evaluate(split, "头") == ["头"]
    assert page.evaluate(split, "d_k缩放 softmax") == ["d_k", "缩放", "softmax"]
    assert page.evaluate(split, "softmax的分母") == ["softmax", "分母"]          # 文字种类变化处分开，“的”删掉
    assert page.evaluate(split, "transformer的优点") == ["transformer"]           # 还有别的词时，“优点”不用
    assert page.evaluate(split, "GPT和BERT的区别") == ["GPT", "BERT"]             # 连词夹在两个词中间：删掉
    assert page.evaluate(split, "自注意力和交叉注意力") == ["自注意力", "交叉注意力"]  # 两个都是术语表里的词条
    assert page.evaluate(split, "softmax和饱和 总和") == ["softmax", "饱和", "总和"]  # 词里的“和”不删
    assert page.evaluate(split, "为什么要除以根号dk") == ["除以", "根号", "dk"]
    assert page.evaluate(split, "多头注意力 好处") == ["多头注意力"]        # 还有别的词时，“好处”不用
    assert page.evaluate(split, "好处") == ["好处"]                          # 只有它时照样搜
    assert page.evaluate(split, "加权求和吗") == ["加权", "求和"]            # 术语“求和”里的“和”不当虚词删
    assert page.evaluate(split, "是什么呢") == []
    assert page.evaluate("w => bigrams(w)", "除以根号") == ["除以", "以根", "根号"]
    # 哪些字算汉字、哪些算其他的词，两边的判断一致（JS 用 \p{Script=Han}，Python 列出区段）
    parts = "q => Array.from(q.matchAll(QUERY_PART)).map(m => m[1] ? 'han:' + m[1] : 'other:' + m[2])"
    for text in ("〇 与 々", "𠀀𠀁字", "⺀部首", "ーカタカナ", "θ 角 α1"):
        expected = [("han:" if HAN_RUN.fullmatch(run) else "other:") + run
                    for run in re.findall(f"{HAN_RUN.pattern}|{OTHER_WORD.pattern}", text)]
        assert page.evaluate(parts, text) == expected, text
    verbatim = ["实验二：分数一大，softmax 就变成“赢家通吃”", "一个键变长，注意力怎么变", "图 1：点一个词，看它在听谁",
                "可交互图：放大倍数 g 决定记忆是衰减还是爆炸", "真实尺寸：D = 512，d_k = 64"]
    for sentence in verbatim:
        missing = page.evaluate("""s => splitQuery(s.toLowerCase())
            .flatMap(w => /\\p{Script=Han}/u.test(w) ? bigrams(w) : [w])
            .filter(t => !/^\\d+$/.test(t))
            .map(t => new Stemmer().stemWord(t))
            .filter(t => !(t in Search._index.terms) && !(t in Search._index.titleterms))""", sentence)
        assert not missing, f"{sentence!r} 切出的 {missing} 不在索引里"


# ---------------------------------------------------------------- 性质测试

@pytest.fixture(scope="module")
def vocabulary(searcher) -> dict:
    """索引里每一页的实词：相邻两字，不含虚词（STOP_WORDS）、不是“好处”这类词（FRAME_WORDS）；
    以及书里一次也没出现过的汉字（拼“哪里都没有”的查询）。"""
    return searcher.evaluate("""() => {
      const index = Search._index, pages = index.docnames.map(() => new Set());
      const stop = w => STOP_WORDS.some(s => w.includes(s)) || FRAME_WORDS.includes(w);
      for (const table of [index.terms, index.titleterms])
        for (const [term, files] of Object.entries(table))
          if (/^\\p{Script=Han}{2}$/u.test(term) && !stop(term))
            for (const f of [].concat(files)) pages[f].add(term);
      const seen = new Set(Object.keys(index.terms).concat(Object.keys(index.titleterms)).join(""));
      const absent = [];
      for (let c = 0x4e00; c < 0x9fa5 && absent.length < 3000; c++) {
        const ch = String.fromCharCode(c);
        if (!seen.has(ch) && !STOP_WORDS.some(s => s.includes(ch))) absent.push(ch);
      }
      return {docnames: index.docnames.map(d => d.split("/").pop()), words: pages.map(p => Array.from(p).sort()), absent};
    }""")


PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@PROPERTY
@given(data=st.data())
def test_two_words_of_a_page_find_it_among_the_all_words_matches(searcher, vocabulary, data):
    """一页里任意两个实词拼成的查询（空格、“的”隔开，末尾加不加“吗”）：这一页在“每个词都在”的那一档，
    那一档排在其余结果前面；“的”“吗”不改变第一条结果。"""
    all_words = searcher.evaluate("ALL_WORDS")
    doc = data.draw(st.sampled_from([i for i, words in enumerate(vocabulary["words"]) if len(words) >= 2]))
    first, second = data.draw(st.lists(st.sampled_from(vocabulary["words"][doc]), min_size=2, max_size=2, unique=True))
    results = scored(searcher, f"{first} {second}")
    name = vocabulary["docnames"][doc]
    assert max((score for page, score in results if page == name), default=0) >= all_words, (first, second, name, results)
    tiers = [score >= all_words for _, score in results]
    assert tiers == sorted(tiers, reverse=True), results
    for variant in (f"{first}的{second}", f"{first}的{second}吗", f"请问{first} {second}呢"):
        assert ranked(searcher, variant)[:1] == [results[0][0]], (variant, results[:3])


@pytest.mark.parametrize("query", [q for q, _, _ in NATURAL])
def test_particles_do_not_change_the_top_result(searcher, query):
    top = ranked(searcher, query)[:1]
    for variant in (query + "吗", query + "呢", "请问" + query):
        assert ranked(searcher, variant)[:1] == top, variant


@PROPERTY
@given(data=st.data())
def test_words_that_occur_nowhere_find_nothing(searcher, vocabulary, data):
    """书里一次也没出现过的字拼成的词（夹着虚词、问句的套话），结果是空的，不报错。"""
    word = st.lists(st.sampled_from(vocabulary["absent"]), min_size=1, max_size=4).map("".join)
    words = data.draw(st.lists(word, min_size=1, max_size=3))
    glue = data.draw(st.sampled_from(["", " ", "的", "是什么", "怎么", "吗"]))
    query = glue.join(words) + data.draw(st.sampled_from(["", "吗", "？", "是什么意思"]))
    assert ranked(searcher, query) == [], query


def summary(page, query: str) -> str:
    """搜索页显示的那一句总结（“找到 N 个页面”，或者没找到时的提示）。"""
    search(page, query)
    return page.locator("#search-results p.search-summary").inner_text()


def test_nothing_found_says_so_clearly(page):
    """没找到时，搜索页说清楚为什么、该怎么办（不是 Sphinx 自带的“选择了合适的分类”）；只有问句套话的查询也一样。"""
    for query in ("鑫龘齉", "是什么呢", "为什么"):
        text = summary(page, query)
        assert text.startswith("没找到") and "术语表" in text and "分类" not in text, (query, text)
    assert not summary(page, "射箭打靶").startswith("没找到")


# ---------------------------------------------------------------- 不是词的查询：继承来的属性名、标记

# 索引 (Search._index.terms) 是普通的 JS 对象：修复前 zh_search.js 用 table[word] 查，“constructor”“__proto__”
# 查到的是 Object 继承来的属性，结果列表里多出一条标题为 undefined 的页（在 Node.js 里对照书的索引看过）
HOSTILE_QUERIES = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf", "softmax constructor",
                   "prototype __proto__ 注意力", "<img src=x onerror=alert(1)>", '"><script>alert(1)</script>',
                   "__defineGetter__ isPrototypeOf"]


@pytest.mark.parametrize("query", HOSTILE_QUERIES)
def test_inherited_property_names_and_markup_are_just_words(page, query):
    """在搜索页上搜对象的属性名和一段 HTML：不报错（控制台、页面异常）、不弹窗、结果里没有 undefined，
    也没有从查询里造出来的元素；JS 排序给出的每一条都是索引里真有的页。"""
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    shown = search(page, query)
    text = page.locator("#search-results").inner_text()
    assert "undefined" not in text and "undefined" not in shown, (query, text)
    assert page.locator("#search-results img, #search-results script").count() == 0
    results = page.evaluate(SCORED_JS, query)
    docnames = page.evaluate("() => Search._index.docnames.map(d => d.split('/').pop())")
    assert all(doc in docnames for doc, _ in results), (query, results)
    assert not dialogs and not page.errors, (query, dialogs, page.errors)
    if "softmax" in query:  # 还有真词时照样找到
        assert CH4 in [doc for doc, _ in results][:3], results
