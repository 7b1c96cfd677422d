"""全书的 PDF（``python dev.py pdf``）：读日志和 PDF 本身，不信 xelatex 的退出码（缺字时它照样退出 0）。

检查的函数在 ``tools/pdf_checks.py``，它们会失败的证明在 ``test_pdf_checks.py``。章、图、题都从章节表和
notebook 里数：新的一章加进章节表，这里不用改。
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from transformer_lab import chapters

from tools import pdf, pdf_checks

ROOT = Path(__file__).resolve().parents[2]


def toc_files() -> list[str]:
    """``_toc.yml`` 里根页面之后的每一篇（文档名），按目录的顺序。"""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    return [entry["file"] for part in toc.get("parts", []) for entry in part.get("chapters", [])]


@pytest.fixture(scope="module")
def text(book_pdf) -> str:
    return pdf_checks.pdf_text(book_pdf)


def test_no_missing_characters(book_pdf):
    log = pdf.LOG.read_text(encoding="utf-8", errors="replace")
    assert "Output written on" in log
    assert not pdf_checks.missing_characters(log)


def test_no_overfull_lines_in_chapters(book_pdf):
    log = pdf.LOG.read_text(encoding="utf-8", errors="replace")
    tex = pdf.LOG.with_suffix(".tex").read_text(encoding="utf-8")
    headings = [c.heading for c in chapters.CHAPTERS]
    assert set(pdf_checks.chapter_ranges(tex, headings)) == set(headings), "有的章不在 .tex 里"
    assert not pdf_checks.overfull_lines(log, tex, headings)


def test_every_page_in_toc_order_with_chapter_answers_at_each_chapter_end(text):
    """``_toc.yml`` 的每一篇按顺序：章是章名、正文里均匀取的三句、（有小测验的章）末尾的“答案与提示”；
    Markdown 页面（附录）是它的标题，自测页后面还有“自测答案”。"""
    markdowns = [pdf_checks.notebook_markdown(ROOT / c.notebook) for c in chapters.CHAPTERS]
    by_doc = {}
    for c, cells, sentences in zip(chapters.CHAPTERS, markdowns, pdf_checks.chapter_samples(markdowns)):
        assert len(sentences) == 3, f"第 {c.number} 章取不到三个可比对的句子"
        has_quiz = any(re.search(r"^## 小测验", cell, re.M) for cell in cells)
        by_doc[c.docname] = (c.heading, sentences + (["答案与提示"] if has_quiz else []))
    groups = []
    for doc in toc_files():
        if doc in by_doc:
            groups.append(by_doc.pop(doc))
            continue
        page = (ROOT / f"{doc}.md").read_text(encoding="utf-8")
        title = re.search(r"^# (.+)$", page, re.M).group(1)
        groups.append((title, ["自测答案"] if "```{self-test}" in page else []))
    assert not by_doc, f"章节表里的章不在 _toc.yml 里：{sorted(by_doc)}"
    assert any(extra == ["自测答案"] for _, extra in groups), "自测页不在 _toc.yml 里？"
    assert not pdf_checks.in_order(text, groups)


def test_quiz_answers_are_not_under_the_questions(text):
    """第 4 章小测验第 1 题的答案只在章末：题目之后、下一个小节之前没有它。"""
    flat = pdf_checks.normalize(text)
    question = pdf_checks.normalize("1. 四步分别是什么？哪一步之后每行加起来等于 1？")
    answer = pdf_checks.normalize("softmax 之后每行和为 1。")
    first_q, first_a = flat.find(question), flat.find(answer)
    assert 0 <= first_q < first_a
    assert flat.find(pdf_checks.normalize("答案与提示"), first_q) < first_a


def test_fonts_embedded_images_pages_size(book_pdf):
    assert not pdf_checks.unembedded_fonts(pdf_checks.run_tool("pdffonts", str(book_pdf)))
    figures = sum(pdf_checks.figure_count(ROOT / c.notebook) for c in chapters.CHAPTERS)
    figures += sum(p.read_text(encoding="utf-8").count("```{explorable}") for p in (ROOT / "book").glob("*.md"))
    assert pdf_checks.image_count(pdf_checks.run_tool("pdfimages", "-list", str(book_pdf))) >= figures
    pages = int(re.search(r"^Pages:\s+(\d+)", pdf_checks.run_tool("pdfinfo", str(book_pdf)), re.M).group(1))
    low, high = pdf_checks.page_range(len(chapters.CHAPTERS))
    assert low <= pages <= high
    assert book_pdf.stat().st_size <= pdf_checks.MAX_MEGABYTES * 1e6
