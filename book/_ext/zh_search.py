"""中文全文搜索：索引和查询用同一种切法，单字、词、整句都能搜到。

Sphinx 自带的中文搜索在建索引时用 jieba 分词，在浏览器里却只按空格和标点切查询，两边对不上：
查询“头”“权重矩阵”“为什么要除以根号”都是一整块，索引里没有这样的词，于是一无所获。

本扩展让两边用同一个、不依赖词典的切法：

* 索引（Python，本文件的 ``BookChineseSearch.split``）：每段连续的汉字记下**每个单字和每个相邻两字**
  （“除以根号” → 除、以、根、号、除以、以根、根号）；拉丁字母的词照旧（softmax、attention…）。
* 查询（JavaScript，``zh_search.js``，放进 ``language_data.js``）：一段汉字切成相邻两字，只有一个字时就是
  这个字本身。于是查询里任何一段汉字，只要在书里原样出现过，它的每一块都在索引里。
* 排序（同一个 JS 文件替换 ``Search.performTermsSearch``）：Sphinx 原来要求查询的每一块都出现在同一页；
  自然的问句里总有“为什么”“是谁”这类书里没有原样出现的块，于是改成按命中的块加权计分（越少页面用到的块
  权重越高，即 IDF），查询的块至少一半出现在这一页才列出，得分高的在前。单个拉丁字母（Q、K、V）两边都不要。

``splitQuery`` 由 Sphinx 给搜索语言的钩子 ``js_splitter_code`` 提供（有文档）；``Search.performTermsSearch`` 是
Sphinx 的 searchtools.js（7.x）内部的函数，Sphinx 没有给“哪些页算命中”留钩子，只能替换它，升级 Sphinx 时要复查；
tests/site/test_search.py 和 tests/site/test_extensions.py 会在它们失灵时失败。附录页降权用的是有文档的
``html_search_scorer``（``search_scorer.js``，见 _config.yml）。那个文件里要降权的章（``REVISITING``）留空，
由本扩展在 ``config-inited``（Sphinx 留给扩展改配置的事件）按章节表填上：``Chapter.revisits`` 为真的章号
写进一份填好的 ``search_scorer.js``（放在 doctree 目录里），``html_search_scorer`` 改指向它。

这样就不再需要分词词典 (jieba)：两字一块的切法对任何新词都一样有效，索引和查询也不会因为词典不同而错开。
"""

from __future__ import annotations

import json
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


def han_grams(run: str) -> list[str]:
    """一段连续汉字的每个单字和每个相邻两字。"""
    return list(run) + [run[i:i + 2] for i in range(len(run) - 1)]


class BookChineseSearch(SearchChinese):
    """索引单字和相邻两字；查询端的切法在 ``zh_search.js`` 里，两边必须一致。"""

    js_splitter_code = JS.read_text(encoding="utf-8")

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


def setup(app):
    app.add_search_language(BookChineseSearch)
    app.connect("config-inited", fill_scorer)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
