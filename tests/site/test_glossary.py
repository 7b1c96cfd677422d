"""术语表（book/glossary.md）：每个词条格式完整（英文名、一句话定义、链接到算出它的那一章），
每个词条至少被一章链接过，章节里链到的词条都存在；网站上词条有锚点、搜索找得到。

链到词条的写法是普通的 Markdown 链接 ``[词元](../book/glossary.md#词元)``（JupyterLab 里也能点开；
建书时 ``book/_ext/glossary_links.py`` 把它换成术语引用）；不用 MyST 的 ``{term}`` 角色。"""

from __future__ import annotations

import json
import re

import pytest

from tools.site import ROOT, ranked

GLOSSARY = ROOT / "book" / "glossary.md"
# [显示文字](…glossary.md#词条) 或 [显示文字](<…glossary.md#有空格的词条>)
TERM_LINK = re.compile(r"\[([^\]]+)\]\(<?(?:\.\./book/)?glossary\.md#([^)>]+)>?\)")
CHAPTER_LINK = re.compile(r"\[第 (\d+) 章\]\(\.\./notebooks/(\d\d_\w+)\.ipynb\)")


def glossary_entries(text: str | None = None) -> dict[str, str]:
    """术语表里的词条：{词条名: 定义}。词条写在 ```{glossary} 块里，不缩进的行是词条名，缩进的行是定义。"""
    text = GLOSSARY.read_text(encoding="utf-8") if text is None else text
    entries: dict[str, str] = {}
    for block in re.findall(r"```\{glossary\}\n(.*?)```", text, re.S):
        name = None
        for line in block.splitlines():
            if line.strip() and not line.startswith(" "):
                name = line.strip()
                entries[name] = ""
            elif line.strip():
                entries[name] += line.strip()
    return entries


def term_uses() -> dict[str, set[str]]:
    """{词条名: 链到它的文件}，在所有 notebook 的文字单元格和 book/ 下的页面里找。"""
    uses: dict[str, set[str]] = {}
    sources = {p.name: "\n".join("".join(c["source"]) for c in json.loads(p.read_text(encoding="utf-8"))["cells"]
                                 if c["cell_type"] == "markdown")
               for p in sorted((ROOT / "notebooks").glob("*.ipynb"))}
    sources |= {p.name: p.read_text(encoding="utf-8") for p in sorted((ROOT / "book").glob("*.md"))}
    for name, text in sources.items():
        for _shown, target in TERM_LINK.findall(text):
            uses.setdefault(target.strip(), set()).add(name)
    return uses


ENTRIES = glossary_entries()


def test_parser_can_fail():
    sample = "```{glossary}\n词元\n  英文 token。一句话。\n\n向量\n  英文 vector。\n```\n"
    assert glossary_entries(sample) == {"词元": "英文 token。一句话。", "向量": "英文 vector。"}
    assert TERM_LINK.findall("看[头](../book/glossary.md#头)和[KV 缓存](<glossary.md#KV 缓存>)，[第 3 章](03_qkv.ipynb)") \
        == [("头", "头"), ("KV 缓存", "KV 缓存")]
    assert CHAPTER_LINK.findall("见 [第 1 章](../notebooks/01_rnn_vs_transformer.ipynb)") == [("1", "01_rnn_vs_transformer")]


def test_no_term_role_is_left():
    """书里不再用 MyST 的 {term} 和 {doc} 角色：JupyterLab 里它们显示不出链接，还会在控制台报错。"""
    sources = [*(ROOT / "notebooks").glob("*.ipynb"), *(ROOT / "book").glob("*.md")]
    left = [p.name for p in sources if re.search(r"\{(?:term|doc)\}`", p.read_text(encoding="utf-8"))]
    assert not left, left


def test_every_entry_has_english_definition_and_chapter():
    assert len(ENTRIES) >= 40
    for name, text in ENTRIES.items():
        assert text.startswith("英文 "), name
        assert len(text) > 30, name
        links = CHAPTER_LINK.findall(text)
        assert links, f"{name} 没有链接到算出它的那一章"
        for number, doc in links:
            assert doc.startswith(f"{int(number):02d}_") and (ROOT / "notebooks" / f"{doc}.ipynb").exists(), (name, doc)


def test_softmax_entry_explains_the_name():
    text = ENTRIES["softmax"]
    assert "soft" in text and "max" in text and "名字" in text and "eˣ" in text


def test_every_term_used_in_the_book_is_defined():
    """链到的词条都存在（否则 -n 构建报 “term not in glossary”）。"""
    assert not set(term_uses()) - set(ENTRIES)


def test_every_entry_is_linked_from_a_chapter():
    """每个词条至少被一章（notebook）链接过：读者是从章节里点进来的。"""
    uses = term_uses()
    orphans = sorted(name for name in ENTRIES if not any(f.endswith(".ipynb") for f in uses.get(name, ())))
    assert not orphans, f"没有任何一章链接这些词条：{orphans}"


def test_built_glossary_has_an_anchor_per_term(site):
    """网站上每个词条一个锚点；章节里的术语链接都指向术语表上存在的锚点。"""
    page = (site / "book" / "glossary.html").read_text(encoding="utf-8")
    dts = re.findall(r'<dt id="(term-[^"]+)">(.*?)<a class="headerlink"', page, re.S)
    assert sorted(re.sub(r"<[^>]+>", "", text).strip() for _, text in dts) == sorted(ENTRIES)
    anchors = {anchor for anchor, _ in dts}
    linked = 0
    for chapter in sorted((site / "notebooks").glob("*.html")):
        for anchor in re.findall(r'href="\.\./book/glossary\.html#(term-[^"]+)"', chapter.read_text(encoding="utf-8")):
            assert anchor in anchors, (chapter.name, anchor)
            linked += 1
    assert linked >= len(ENTRIES) // 2


BACK_OF_BOOK_QUERIES = [  # (查询, 回答它的页面, 必须排在前几条)
    ("术语表", "glossary", 1),
    ("softmax 名字的由来", "glossary", 2),
    ("对称性破缺 英文", "glossary", 3),
    # 先列原样含这两个词的章（第 8、9 章讲它，第 12 章拿 RMSNorm 和它逐项比，前言、第 7 章、延伸阅读也有），再是只含其中几个
    # 两字块的第 11 章和代码里有 layer0、normal 的第 13 章（拉丁词按部分匹配算），术语表按附录降权
    ("层归一化 LayerNorm", "glossary", 9),
    ("学习路线", "resources", 1),
    ("3Blue1Brown", "resources", 2),  # 各章末尾的延伸阅读也引用它们
    ("nanoGPT", "resources", 3),  # 第 8、9 章的延伸阅读都介绍它
    ("李宏毅", "resources", 3),
    ("自测", "self_test", 1),
]


@pytest.mark.parametrize("query, answer, within", BACK_OF_BOOK_QUERIES, ids=[q[0] for q in BACK_OF_BOOK_QUERIES])
def test_search_finds_the_back_of_the_book(searcher, query, answer, within):
    """网站自己的搜索能找到术语表、延伸阅读和自测页。"""
    assert answer in ranked(searcher, query)[:within], query
