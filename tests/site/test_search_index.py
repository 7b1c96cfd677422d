"""book/_ext/zh_search.py 在 Python 里的部分，不建网站、不开浏览器：建索引时怎么切一段文字，虚词清单，
从术语表和记号表读出的同义词，以及把它们填进 zh_search.js 的那一步。浏览器里的查询和排序在 test_search.py
（整本书）和 test_extensions.py（小网站）。"""

from __future__ import annotations

from pathlib import Path

import pytest
from sphinx.errors import ExtensionError
from zh_search import (
    CONNECTORS,
    FRAME_WORDS,
    JS,
    PARTICLES,
    STOP_WORDS,
    BookChineseSearch,
    glossary_synonyms,
    han_grams,
    merge_synonyms,
    notation_synonyms,
    splitter_code,
)

ROOT = Path(__file__).resolve().parents[2]
GLOSSARY = (ROOT / "book" / "glossary.md").read_text(encoding="utf-8")
NOTATION = (ROOT / "book" / "notation.md").read_text(encoding="utf-8")
CH = "notebooks/0{}".format


def split(text: str) -> list[str]:
    return BookChineseSearch({}).split(text)


def test_index_keeps_single_characters_and_bigrams():
    assert split("除以根号 d_k") == ["除", "以", "根", "号", "除以", "以根", "根号", "d_k"]
    assert han_grams("头") == ["头"]


def test_index_breaks_at_particles():
    """“的”“是”“吗”这类虚字处断开：跨过它们的两字块（“的优”“器的”）和虚字本身都不进索引。"""
    assert split("Transformer的优点是什么") == ["优", "点", "优点", "什", "Transformer"]
    assert split("编码器的输出") == ["编", "码", "器", "编码", "码器", "输", "出", "输出"]
    for particle in PARTICLES:
        assert not any(particle in g for g in split(f"注意力{particle}权重")), particle
    # 反证：换成不是虚字的“和”，跨过它的两字块照样在（查询端删掉“和”，索引不删：“求和”是术语）
    assert "力和" in split("注意力和权重") and "求和" in split("加权求和")


def test_stop_words_cover_the_particles_and_the_question_words():
    """查询删掉的词包含索引断开的每个虚字（否则查询会去找索引里没有的块），以及问句里常见的疑问词；
    不含书里的实词（“有”“在”“要”“谁”：“有效”“存在”“重要”“指谁”）。最长的在前（“为什么”先于“什么”）。"""
    assert set(PARTICLES) <= set(STOP_WORDS)
    assert {"为什么", "什么", "怎么", "如何", "哪", "吗", "呢", "吧", "的", "了", "是"} <= set(STOP_WORDS)
    assert not {"有", "在", "要", "谁", "它"} & set(STOP_WORDS)
    assert [len(w) for w in STOP_WORDS] == sorted((len(w) for w in STOP_WORDS), reverse=True)
    assert not set(FRAME_WORDS) & set(STOP_WORDS)
    # 连词只在夹在两个词中间时删（“饱和”“求和”里的“和”不删），所以不在 STOP_WORDS 里
    assert set(CONNECTORS) == {"和", "与", "或", "跟"} and not set(CONNECTORS) & set(STOP_WORDS)


def test_glossary_terms_contain_no_particle():
    """索引在虚字处断开，所以术语本身不能含虚字（否则术语在索引里就断成了两半）。"""
    terms = [entry["names"][0] for entry in glossary_synonyms(GLOSSARY)]
    assert len(terms) >= 50
    assert not [t for t in terms if any(p in t for p in PARTICLES)]


def entry(entries: list[dict], name: str) -> dict:
    return next(e for e in entries if name in e["names"])


def test_glossary_gives_each_term_its_other_names_and_its_chapter():
    entries = glossary_synonyms(GLOSSARY)
    assert entry(entries, "前馈网络") == {"names": ["前馈网络", "feed-forward network", "FFN"], "pages": [CH(8) + "_transformer_layer"]}
    assert entry(entries, "自注意力")["names"] == ["自注意力", "self-attention"]
    assert entry(entries, "隐藏状态")["names"] == ["隐藏状态", "hidden state", "隐状态"]     # 也叫
    assert entry(entries, "嵌入")["names"] == ["嵌入", "embedding", "词嵌入"]               # 括号里的别名
    assert entry(entries, "KV 缓存")["names"] == ["KV 缓存", "KV cache"]
    assert entry(entries, "梯度")["pages"] == [CH(1) + "_rnn_vs_transformer", CH(3) + "_qkv", CH(5) + "_multi_head"]
    # “参数，也叫权重”：“权重”在“注意力权重”里是另一个意思，不当同义词
    assert entry(entries, "参数")["names"] == ["参数", "parameters"]


def test_glossary_parser_on_a_hand_written_block():
    """只读 {glossary} 块；释义第一句里的英文名、括号里的别名、“也叫”；别名是另一个术语的一部分时不要。"""
    text = ("```{glossary}\n头\n  英文 head（注意力头）。见 [第 5 章](../notebooks/05_x.ipynb)。\n\n"
            "参数\n  英文 parameters，也叫权重 (weights)。后面的句子里也叫别的。\n\n"
            "注意力权重\n  英文 attention weights。\n```\n\n正文里的“英文 x”不算。\n")
    assert glossary_synonyms(text) == [{"names": ["头", "head", "注意力头"], "pages": ["notebooks/05_x"]},
                                       {"names": ["参数", "parameters"], "pages": []},
                                       {"names": ["注意力权重", "attention weights"], "pages": []}]


def test_notation_gives_symbol_names_and_their_chapter():
    entries = notation_synonyms(NOTATION)
    assert entry(entries, "根号") == {"names": ["根号", "sqrt"], "pages": [CH(4) + "_four_steps"]}
    assert entry(entries, "LN")["names"] == ["层归一化", "LN"]
    names = [n for e in entries for n in e["names"]]
    # 排版命令（\top 转置号、\lvert 竖线）、普通字母开头的记号（R_\Delta）、几个符号的一行（head、concat）都不算
    assert not {"top", "lvert", "cdot", "旋转矩阵", "head", "concat", "第"} & set(names)


def test_synonyms_from_both_tables_are_merged():
    merged = merge_synonyms(glossary_synonyms(GLOSSARY) + notation_synonyms(NOTATION))
    ffn = [e for e in merged if "FFN" in e["names"]]
    assert ffn == [{"names": ["前馈网络", "feed-forward network", "FFN"], "pages": [CH(8) + "_transformer_layer"]}]
    lowered = [n.lower() for e in merged for n in e["names"]]
    assert len(lowered) == len(set(lowered))  # 每个说法只在一条里


def test_splitter_code_fills_the_slots_once():
    code = splitter_code(JS.read_text(encoding="utf-8"), [{"names": ["根号", "sqrt"], "pages": []}])
    assert 'var SYNONYMS = [{"names": ["根号", "sqrt"], "pages": []}];' in code
    assert 'var STOP_WORDS = ["为什么要", ' in code and 'var FRAME_WORDS = ["优点", ' in code
    assert 'var CONNECTORS = ["和", "与", "或", "跟"];' in code
    assert "var SYNONYMS = [];" not in code


def test_a_splitter_without_a_slot_is_refused():
    template = JS.read_text(encoding="utf-8")
    with pytest.raises(ExtensionError, match="zh_search.js 里必须恰好有一行 'var SYNONYMS = \\[\\];'.*找到 0 行"):
        splitter_code(template.replace("var SYNONYMS = [];", "var SYNONYMS = null;"), [])
    with pytest.raises(ExtensionError, match="找到 2 行"):
        splitter_code(template + "var STOP_WORDS = [];", [])
