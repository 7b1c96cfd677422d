"""中文全文搜索：索引和查询用同一种切法；自然的问句（中英混合、带“的”“吗”“怎么”）也能搜到回答它的那一页。

Sphinx 自带的中文搜索在建索引时用 jieba 分词，在浏览器里却只按空格和标点切查询，两边对不上：
查询“头”“权重矩阵”“为什么要除以根号”都是一整块，索引里没有这样的词，于是一无所获。

本扩展让两边用同一个、不依赖分词词典的切法：

* 虚词（``STOP_WORDS``，一份清单，两边共用）：问句里的“的、吗、呢、吧、了、是、什么、怎么、为什么、如何、哪……”
  不是读者要找的内容，而且跨在两个词之间时会造出“的优”“么算”这样的假两字块。选词的标准：只选**书里的术语
  不会含有的**虚字和疑问词（“有”“在”“要”不选：“有效”“存在”“重要”是实词；“谁”不选：第 2 章问的就是“它指谁”）。
* 索引（Python，本文件的 ``BookChineseSearch.split``）：每段连续的汉字先在 ``PARTICLES``（的、了、是、吗……这些
  单个的虚字）处断开，每一段记下**每个单字和每个相邻两字**（“除以根号” → 除、以、根、号、除以、以根、根号）；
  拉丁字母的词照旧（softmax、attention…）。含虚字的两字块（“的优”“器的”）不进索引，索引因此小一些。
* 查询（JavaScript，``zh_search.js``，放进 ``language_data.js``）：汉字和其他字母在文字种类变化处分开，一段汉字里
  先认出术语表和记号表里的词（最长的先认），其余部分删掉 ``STOP_WORDS``、在那里断开，再删掉夹在两个词中间的
  连词（``CONNECTORS``：“自注意力和交叉注意力”的“和”删，“饱和”“求和”的不删），“好处”“区别”“原理”这类问“关于”
  一个概念的词（``FRAME_WORDS``）在还有别的词时不用。得到的每个汉字的词在索引里查它的相邻两字。
* 同义词（``glossary_synonyms``、``notation_synonyms``）：建书时从术语表 (book/glossary.md) 读出每个术语的中英文名、
  简称和别名（“自注意力 / self-attention”“前馈网络 / feed-forward network / FFN”“嵌入 / embedding / 词嵌入”），
  从记号表 (book/notation.md) 读出符号和它的中文名（“根号 / sqrt”“层归一化 / LN”），连同它们链接到的讲它的那一章。
  查询里出现其中一种说法，哪一种出现在页面上都算命中，讲它的那一章排序时加分。不是手写的清单：术语表、记号表
  改了，同义词跟着改。
* 排序（同一个 JS 文件替换 ``Search.performTermsSearch``）：查询里每个词都在这一页的排在前面，其余的按命中的词
  加权计分（越少页面用到的词权重越高，即 IDF）；只要查询里有一个词书里有，结果就不是空的；一个也没有时，
  搜索页显示一句说清楚的“没找到”（改 ``Documentation.TRANSLATIONS`` 里 Sphinx 那一句的译文）。

``splitQuery`` 由 Sphinx 给搜索语言的钩子 ``js_splitter_code`` 提供（有文档）；同义词由 ``add_synonyms`` 放进
``html_search_options``（Sphinx 交给搜索语言的选项，有文档），``BookChineseSearch.init`` 把它和各个词表填进这份代码。``Search.performTermsSearch`` 是
Sphinx 的 searchtools.js（7.x）内部的函数，Sphinx 没有给“哪些页算命中”留钩子，只能替换它，升级 Sphinx 时要复查；
tests/site/test_search.py 和 tests/site/test_extensions.py 会在它们失灵时失败。附录页降权用的是有文档的
``html_search_scorer``（``search_scorer.js``，见 _config.yml）。那个文件里要降权的章（``REVISITING``）留空，
由本扩展在 ``config-inited``（Sphinx 留给扩展改配置的事件）按章节表填上：``Chapter.revisits`` 为真的章号
写进一份填好的 ``search_scorer.js``（放在 doctree 目录里），``html_search_scorer`` 改指向它。

这样就不需要分词词典 (jieba)：两字一块的切法对任何新词都一样有效，索引和查询也不会因为词典不同而错开；
词的边界来自虚词、连词和本书自己的术语表、记号表（书里没有原样写出的长词组，查询时用页面自己有的两字块去铺，
见 zh_search.js）。
"""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path

from sphinx.errors import ExtensionError
from sphinx.search.zh import SearchChinese

from transformer_lab import chapters

# 汉字 = Unicode 的 Script=Han（与 zh_search.js 的 \p{Script=Han} 相同；Python 的 re 不支持 \p{...}，所以列出区段）
HAN = ("[\u2e80-\u2e99\u2e9b-\u2ef3\u2f00-\u2fd5\u3005\u3007\u3021-\u3029\u3038-\u303b"
       "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufa6d\ufa70-\ufad9\U00020000-\U0003134f]")
HAN_RUN = re.compile(HAN + "+")
OTHER_WORD = re.compile(rf"(?:(?!{HAN})\w)+")  # 汉字以外的字母、数字、下划线（softmax、d_k、α1），与 JS 相同
JS = Path(__file__).with_name("zh_search.js")
GLOSSARY = "book/glossary.md"  # 同义词的来源（相对于书的根目录）

# 单个的虚字：索引在这里断开，查询也删掉。书里的术语不含它们（test_extensions.py 核对术语表）。
PARTICLES = "的了是吗呢吧啊呀嘛么"
# 只在查询里删掉的疑问词、套话、连词和笼统的数量词（索引照常收录：书里的正文句子“为什么要……”仍然原样可查，
# 只是查询不用它们）。“和”“与”夹在两个词中间会造出跨词的块（“力和”），“多个”“几个”书里各章说法不同（“多头”“很多个头”）。
QUESTION_WORDS = ("为什么要", "为什么", "为啥", "为何", "什么", "怎么", "怎样", "如何", "哪里", "哪儿", "哪个", "哪些", "哪", "啥",
                  "干嘛", "干什么", "做什么", "有没有", "有什么", "有啥", "能不能", "会不会", "是不是", "意思", "回事",
                  "请问", "一下", "还是", "需要", "多个", "几个")
STOP_WORDS = tuple(sorted(set(QUESTION_WORDS) | set(PARTICLES), key=lambda w: (-len(w), w)))
# 连词：夹在两个词中间时删掉（“自注意力和交叉注意力”，不留下“力和”“和交”这种跨词的块），在词里时不删
# （“饱和”“加权求和”“总和”：离一段汉字的头尾不到两个字的不算夹在中间，见 zh_search.js 的 hanWords）
CONNECTORS = ("和", "与", "或", "跟")
# 问“关于”一个概念的词：回答它的那一页很少原样写出来（量过：“优点”全书 0 页，“好处”2 页，都不是讲它的那一章），
# 查询里还有别的词时删掉；整个查询只剩它们时保留（“作用”本身也能搜）。
FRAME_WORDS = ("优点", "缺点", "好处", "坏处", "长处", "区别", "不同", "差别", "作用", "用处", "原理", "机制", "含义",
               "概念", "定义", "解释", "理解", "介绍", "讲解", "有用", "用途", "用")
BREAK = re.compile(f"[{PARTICLES}]+")
SLOTS = ("STOP_WORDS", "CONNECTORS", "FRAME_WORDS", "SYNONYMS")  # zh_search.js 里 var 名字 = []; 留给建书时填的位置


def han_grams(run: str) -> list[str]:
    """一段连续汉字在虚字（``PARTICLES``）处断开后，每一段的每个单字和每个相邻两字。

    Examples
    --------
    >>> han_grams("除以根号")
    ['除', '以', '根', '号', '除以', '以根', '根号']
    >>> han_grams("它的优点")
    ['它', '优', '点', '优点']
    """
    return [g for piece in BREAK.split(run) if piece
            for g in list(piece) + [piece[i:i + 2] for i in range(len(piece) - 1)]]


ENTRY = re.compile(r"^(\S[^\n]*)\n[ \t]+([^\n]*)", re.M)  # 术语表的一条：顶格的术语，下一行缩进的释义
ENGLISH = re.compile(r"英文 ([^，。（(]+)(?:[（(]([^）)]+)[）)])?")  # 英文 X（别名）
ALIAS = re.compile(r"(?:简称|也叫) ?([^，。（(]+)")  # 简称 FFN、也叫隐状态


LINK = re.compile(r"\]\(<?([^)>#\s]+\.(?:ipynb|md))")  # Markdown 链接的目标（相对于 book/）


def _pages(text: str) -> list[str]:
    """一段释义里链接到的页面，写成 Sphinx 的文档名（``../notebooks/05_multi_head.ipynb`` → ``notebooks/05_multi_head``）。"""
    return list(dict.fromkeys(posixpath.splitext(posixpath.normpath(f"book/{link}"))[0] for link in LINK.findall(text)))


def glossary_synonyms(text: str) -> list[dict]:
    r"""术语表 (MyST 的 ``{glossary}`` 块) 里每个术语的各种说法和讲它的页面。

    说法：术语本身、释义第一句里“英文 X（别名）”的 X 和括号里的别名、“简称 Y”“也叫 Z”（只有一种说法的术语
    也列出：切查询时认它做一个词）。页面：释义里“见 [第 5 章](...)”链接到的页面（排序时加分）。

    Examples
    --------
    >>> glossary_synonyms("```{glossary}\n前馈网络\n  英文 feed-forward network，简称 FFN。见 [第 8 章](../notebooks/08_x.ipynb)。\n```")
    [{'names': ['前馈网络', 'feed-forward network', 'FFN'], 'pages': ['notebooks/08_x']}]
    """
    entries = []
    for block in re.findall(r"```\{glossary\}\n(.*?)```", text, re.S):
        for term, definition in ENTRY.findall(block):
            first = definition.split("。")[0]
            names = [term.strip()]
            english = ENGLISH.search(first)
            if english:
                names += [n.strip() for n in english.groups() if n]
            names += [a.strip() for a in ALIAS.findall(first)]
            entries.append({"names": list(dict.fromkeys(n for n in names if n)), "pages": _pages(definition)})
    # 别名是另一个术语的一部分时不算同义：“参数，也叫权重”的“权重”在“注意力权重”里是另一个意思
    terms = [e["names"][0] for e in entries]
    for e in entries:
        e["names"] = e["names"][:1] + [n for n in e["names"][1:] if not any(n in t and n != t for t in terms)]
    return entries


NOTATION = "book/notation.md"  # 记号表：符号 ↔ 它的中文名（“\sqrt ↔ 根号”“\text{LN} ↔ 层归一化”）
SYMBOL_NAME = re.compile(r"\\(?:text|mathrm)\{([A-Za-z]{2,})\}|\\([A-Za-z]{3,})")
ROW = re.compile(r"^\|([^|\n]*)\|([^|\n]*)\|(.*)$", re.M)
NAME = re.compile(HAN.join(["(", "{1,6})(?:$| ?[（(]|：)"]))  # 第二格开头的中文名：整格，或后面紧跟括号、冒号
LATEX_LAYOUT = {"cdot", "text", "mathrm", "mathcal", "lvert", "rvert", "lVert", "rVert", "lceil", "rceil", "top",
                "left", "right"}  # 排版用的命令（括号、竖线、转置号），不是符号的名字


def notation_synonyms(text: str) -> list[dict]:
    r"""记号表里的符号和它的中文名：一行的第一格是 ``$\sqrt{\cdot}$`` 这样带命令名的公式、第二格以一个短的中文名
    开头（1–6 个汉字，整格或后面紧跟括号、冒号）时，命令名（sqrt、LN、FFN、MHA）和中文名算同义；这一行链接到的
    页面（“哪里先讲”）是讲它的页面。

    Examples
    --------
    >>> notation_synonyms("| $\\sqrt{\\cdot}$ | 根号 | 例子 | [第 4 章](../notebooks/04_x.ipynb) |\n| $d_k$ | 每个查询有几个数 |")
    [{'names': ['根号', 'sqrt'], 'pages': ['notebooks/04_x']}]
    """
    entries = []
    for symbol, meaning, rest in ROW.findall(text):
        name = NAME.match(meaning.strip())
        commands = {a or b for a, b in SYMBOL_NAME.findall(symbol)} - LATEX_LAYOUT
        named = all(f.strip().startswith("\\") for f in re.findall(r"\$([^$]*)\$", symbol))  # 不是 R_\Delta 这样的字母
        if name and named and len(commands) == 1:  # 一行只讲一个符号（“$\text{head}$，$\text{concat}$”那样的几个不算）
            entries.append({"names": [name.group(1), *commands], "pages": _pages(rest)})
    return entries


def merge_synonyms(entries: list[dict]) -> list[dict]:
    """有共同说法（不分大小写）的几条合成一条：术语表的“前馈网络 / FFN”和记号表的“前馈网络 / FFN”是同一个词。

    Examples
    --------
    >>> merge_synonyms([{"names": ["注意力", "attention"], "pages": ["a"]}, {"names": ["根号", "sqrt"], "pages": []},
    ...                 {"names": ["注意力", "Attention"], "pages": ["b"]}])
    [{'names': ['根号', 'sqrt'], 'pages': []}, {'names': ['注意力', 'attention'], 'pages': ['a', 'b']}]
    """
    merged: list[dict] = []
    for entry in entries:
        keys = {n.lower() for n in entry["names"]}
        overlapping = [m for m in merged if keys & {n.lower() for n in m["names"]}]
        names = [n for m in overlapping for n in m["names"]] + entry["names"]
        first = {}
        for n in names:  # 同一个说法大小写不同时，留先出现的写法
            first.setdefault(n.lower(), n)
        merged = [m for m in merged if m not in overlapping]
        merged.append({"names": list(first.values()),
                       "pages": list(dict.fromkeys([p for m in overlapping for p in m["pages"]] + entry["pages"]))})
    return merged


def splitter_code(template: str, synonyms: list[dict]) -> str:
    """``zh_search.js`` 填上虚词、连词、“好处”这类词的清单和同义词（建书时由 ``BookChineseSearch.init`` 调用）。"""
    values = {"STOP_WORDS": STOP_WORDS, "CONNECTORS": CONNECTORS, "FRAME_WORDS": FRAME_WORDS, "SYNONYMS": synonyms}
    for name in SLOTS:
        slot = f"var {name} = [];"
        if template.count(slot) != 1:
            raise ExtensionError(f"zh_search.js 里必须恰好有一行 {slot!r}（建书时填上虚词和同义词），"
                                 f"找到 {template.count(slot)} 行")
        template = template.replace(slot, f"var {name} = {json.dumps(values[name], ensure_ascii=False)};"
                                          "  // 由 zh_search.py 填上")
    return template


class BookChineseSearch(SearchChinese):
    """索引单字和相邻两字（在虚字处断开）；查询端的切法在 ``zh_search.js`` 里，两边必须一致。"""

    js_splitter_code = JS.read_text(encoding="utf-8")

    def init(self, options: dict) -> None:
        """``options`` 是 ``html_search_options``：``add_synonyms`` 在 config-inited 时放进了术语表的同义词。"""
        super().init(options)
        self.js_splitter_code = splitter_code(JS.read_text(encoding="utf-8"), options.get("synonyms", []))

    def split(self, input: str) -> list[str]:
        grams = [g for run in HAN_RUN.findall(input) for g in han_grams(run)]
        latin = OTHER_WORD.findall(input)
        self.latin_terms.extend(latin)
        return grams + latin

    def word_filter(self, stemmed_word: str) -> bool:
        # 单个汉字也要进索引（“头”“键”“值”）；其他的词至少两个字符，与 Sphinx 原来一致
        return bool(HAN_RUN.fullmatch(stemmed_word)) or len(stemmed_word) > 1


REVISITING_SLOT = "var REVISITING = [];"  # search_scorer.js 里留给要降权的章号的位置


def scorer_code(template: str, table: tuple[chapters.Chapter, ...]) -> str:
    """``search_scorer.js`` 填上章节表里 ``revisits`` 为真的章号（和附录一样打九折的章）。"""
    if template.count(REVISITING_SLOT) != 1:
        raise ExtensionError(f"search_scorer.js 里必须恰好有一行 {REVISITING_SLOT!r}（建书时按章节表填上要降权的章），"
                             f"找到 {template.count(REVISITING_SLOT)} 行")
    numbers = [c.number for c in table if c.revisits]
    return template.replace(REVISITING_SLOT, f"var REVISITING = {json.dumps(numbers)};  // 由 zh_search.py 按章节表填上")


def fill_scorer(app, config) -> None:
    """``html_search_scorer`` 改指向按章节表填好的一份（Sphinx 到写网页时才读它，这时已经在了）。"""
    if not config.html_search_scorer:
        return
    filled = Path(app.doctreedir) / "search_scorer.js"
    filled.parent.mkdir(parents=True, exist_ok=True)
    template = Path(config.html_search_scorer).read_text(encoding="utf-8")
    filled.write_text(scorer_code(template, chapters.CHAPTERS), encoding="utf-8")
    config.html_search_scorer = str(filled)


def add_synonyms(app, config) -> None:
    """从书里的术语表和记号表读出同义词，放进 ``html_search_options``（Sphinx 建索引时交给 ``BookChineseSearch``）。"""
    glossary, notation = Path(app.srcdir) / GLOSSARY, Path(app.srcdir) / NOTATION
    synonyms = glossary_synonyms(glossary.read_text(encoding="utf-8")) if glossary.exists() else []
    synonyms += notation_synonyms(notation.read_text(encoding="utf-8")) if notation.exists() else []
    config.html_search_options = {**(config.html_search_options or {}), "synonyms": merge_synonyms(synonyms)}


def setup(app):
    app.add_search_language(BookChineseSearch)
    app.connect("config-inited", fill_scorer)
    app.connect("config-inited", add_synonyms)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
