"""读 PDF 和 xelatex 日志的检查（``tests/pdf/``）。每个函数只管读进来的文字，返回问题的清单（每条一句中文），
空清单就是没问题；``tests/pdf/test_pdf_checks.py`` 拿故意弄坏的输入证明每一项都会报错。

为什么不信退出码：xelatex 找不到字形时只在日志里写一行 “Missing character: There is no 词 in font …”，
照样退出 0，PDF 里那个字就悄悄没了；中文字体没设对时整本书的中文都会这样消失。
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

# 正文里一行最多伸出版心多宽（pt）。11 pt 的正文里一个汉字宽 10.95 pt：伸出不到一个字，读者看得出是排版的小瑕疵，
# 不会以为丢了字；页边有 2.2 cm（62 pt），这样的行也远离纸边，印得出来。带行内公式、长英文词的中文行常常
# 伸出 3–7 pt（实测），整块伸出页边的公式（第 6 章两个并排的公式 60 pt，已改成上下叠放）才是要拦住的。
OVERFULL_BOUND_PT = 10.0
MAX_MEGABYTES = 25.0
# 页数：每章 20–40 页（含代码、输出和图；前言、附录另算进 +40）。11 章时实测 314 页。
PAGES_PER_CHAPTER = (20, 40)
EXTRA_PAGES = 40

MISSING = re.compile(r"^Missing character: There is no (.+?) in font (.+?)!?$", re.M)
OVERFULL = re.compile(r"^Overfull \\hbox \((?P<pt>[0-9.]+)pt too wide\) (?:in paragraph at lines (?P<a>\d+)--\d+"
                      r"|detected at line (?P<b>\d+))", re.M)
CHAPTER_LINE = re.compile(r"^\\chapter\{(.*)\}\s*$", re.M)
SPACE = re.compile(r"\s+")


def missing_characters(log: str) -> list[str]:
    """日志里每一条缺字（去重，带次数）。"""
    counts: dict[str, int] = {}
    for char, font in MISSING.findall(log):
        key = f"“{char}”（字体 {font.split('/')[0]}）"
        counts[key] = counts.get(key, 0) + 1
    return [f"缺字 {key} ×{n}" for key, n in counts.items()]


def chapter_ranges(tex: str, headings: list[str]) -> dict[str, tuple[int, int]]:
    """.tex 里每一章（按 ``headings``，即“第 N 章 章名”）从 ``\\chapter`` 那一行到下一个 ``\\chapter`` 之前的行号（从 1 起）。"""
    starts = [(tex.count("\n", 0, m.start()) + 1, m.group(1)) for m in CHAPTER_LINE.finditer(tex)]
    ranges = {}
    for i, (line, title) in enumerate(starts):
        plain = title.replace("\\&", "&").replace("{", "").replace("}", "")
        if plain in headings:
            end = starts[i + 1][0] - 1 if i + 1 < len(starts) else tex.count("\n") + 1
            ranges[plain] = (line, end)
    return ranges


def overfull_lines(log: str, tex: str, headings: list[str], bound: float = OVERFULL_BOUND_PT) -> list[str]:
    """各章正文里伸出版心超过 ``bound`` pt 的行（按 .tex 的行号归到章）。"""
    ranges = chapter_ranges(tex, headings)
    problems = []
    for m in OVERFULL.finditer(log):
        width, line = float(m.group("pt")), int(m.group("a") or m.group("b"))
        if width <= bound:
            continue
        for heading, (start, end) in ranges.items():
            if start <= line <= end:
                text = tex.splitlines()[line - 1][:80] if line <= tex.count("\n") + 1 else ""
                problems.append(f"{heading}：.tex 第 {line} 行伸出版心 {width:.1f} pt（上限 {bound} pt）：{text}")
    return problems


def normalize(text: str) -> str:
    """比较用：去掉一切空白（pdftotext 在行尾、页尾断开中文句子）。"""
    return SPACE.sub("", text)


def in_order(pdf_text: str, groups: list[tuple[str, list[str]]]) -> list[str]:
    """``groups`` 是 [(章名, [句子……]), …]：每一章的章名和它的句子都要在 PDF 的文字里按这个顺序依次找到。
    找不到的那一项报出来，之后从上一次找到的地方接着找。"""
    text, pos, problems = normalize(pdf_text), 0, []
    for title, sentences in groups:
        for item in [title, *sentences]:
            found = text.find(normalize(item), pos)
            if found < 0:
                where = "PDF 里没有" if normalize(item) not in text else "顺序不对（出现在前面的内容之前）"
                problems.append(f"《{title}》：{where}：{item}")
            else:
                pos = found + len(normalize(item))
    return problems


# 从一章的 Markdown 里取样的句子：只由汉字和中文标点组成、12–40 个字，不在折叠块（小测验的答案挪到章末）、
# 标题、表格、列表里。这样的句子排进 PDF 后一字不变（没有公式、代码、链接、英文）。
SENTENCE = re.compile(r"[\u4e00-\u9fff，、；：“”（）]{12,40}。")
FENCE = re.compile(r"^(:{3,}|`{3,})")


def candidate_sentences(markdown: list[str]) -> list[str]:
    """``markdown``（一章按顺序的 Markdown 单元格）里可以拿来比对的句子（``SENTENCE``），按出现的顺序。"""
    found: list[str] = []
    for cell in markdown:
        depth = 0
        for line in cell.splitlines():
            stripped = line.strip()
            fence = FENCE.match(stripped)
            if fence:
                depth += 1 if len(stripped) > len(fence.group(1)) else -1
                depth = max(depth, 0)
                continue
            if depth or not stripped or stripped.startswith(("#", "|", "-", "*", ">", "1.", "2.", "3.")):
                continue
            for m in SENTENCE.finditer(stripped):
                start = m.start()
                if start == 0 or stripped[start - 1] in "。！？":  # 句子从头开始，不是半句
                    found.append(m.group(0))
    return found


def spread(items: list[str], k: int = 3) -> list[str]:
    """从 ``items`` 里均匀取 ``k`` 个（头、尾和中间），保持顺序。"""
    if len(items) <= k:
        return list(items)
    return [items[round(i * (len(items) - 1) / (k - 1))] for i in range(k)] if k > 1 else items[:1]


def chapter_samples(markdowns: list[list[str]], k: int = 3) -> list[list[str]]:
    """每一章（``markdowns`` 按章的顺序）取 ``k`` 个只在这一章出现的句子（各章都有的套话，如“先看提示”，不算：
    它找到的可能是别的章里的那一句）。"""
    candidates = [candidate_sentences(cells) for cells in markdowns]
    seen: dict[str, int] = {}
    for found in candidates:
        for sentence in set(found):
            seen[sentence] = seen.get(sentence, 0) + 1
    return [spread([s for s in found if seen[s] == 1], k) for found in candidates]


def notebook_markdown(path: Path) -> list[str]:
    """notebook 的 Markdown 单元格（按顺序）。"""
    nb = json.loads(path.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]


def figure_count(path: Path) -> int:
    """notebook 存档里的图：可交互图的静态预览（``tlx-preview``）和 ``image/png`` 输出各算一张。"""
    nb = json.loads(path.read_text(encoding="utf-8"))
    count = 0
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "image/png" in data or 'class="tlx-preview"' in "".join(data.get("text/html", "")):
                count += 1
    return count


def unembedded_fonts(pdffonts: str) -> list[str]:
    """``pdffonts`` 的输出里没有嵌入的字体（emb 一列不是 yes）。"""
    problems = []
    for line in pdffonts.splitlines()[2:]:
        cols = line.split()
        if len(cols) >= 7 and cols[-5] != "yes":
            problems.append(f"字体没有嵌入：{cols[0]}")
    return problems


def image_count(pdfimages_list: str) -> int:
    """``pdfimages -list`` 的输出里的图片（type 一列是 image；透明度蒙版 smask 不算）。"""
    return sum(1 for line in pdfimages_list.splitlines()[2:] if len(line.split()) > 2 and line.split()[2] == "image")


def page_range(chapters: int) -> tuple[int, int]:
    """``chapters`` 章的书应有的页数范围（含两端）。"""
    low, high = PAGES_PER_CHAPTER
    return low * chapters, high * chapters + EXTRA_PAGES


def pdf_text(pdf: Path) -> str:
    """PDF 版心里的文字（``pdftotext``，裁掉页眉页脚：它们夹在跨页的句子中间）。A4 = 595 × 842 pt，
    页眉页脚在上下 2.5 cm（71 pt）的页边里。"""
    return subprocess.run(["pdftotext", "-enc", "UTF-8", "-x", "0", "-y", "68", "-W", "595", "-H", "706",
                           str(pdf), "-"], capture_output=True, text=True, check=True).stdout


def run_tool(*cmd: str) -> str:
    return subprocess.run(list(cmd), capture_output=True, text=True, check=True).stdout
