"""读回一段 HTML：标准库 ``html.parser`` 给出标签和属性（``Page``），照 HTML 标准切分 <script>（``scripts``）。

Python 的 ``html.parser`` 不实现 <script> 里的"转义"和"双重转义"状态（WHATWG HTML §13.2.5 "script data"）：
``<!--<script>`` 之后的 ``</script>`` 在浏览器里**关不掉**脚本，后面的内容都会被吞进这段脚本。
html5lib 没有装在环境里（也不为测试加依赖），所以 ``script_end`` 照标准写了这个状态机（约 40 行）；
``tests/widgets/test_static.py`` 用反例证明它能发现问题。
"""

from __future__ import annotations

import re
from html.parser import HTMLParser


class Page(HTMLParser):
    """读一段 HTML：所有开始标签 (tag, 属性 dict)，以及每个 <script> 里的原文。"""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags, self.scripts, self._in = [], [], None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in = dict(attrs)
            self.scripts.append([self._in, ""])

    def handle_data(self, data):
        if self._in is not None:
            self.scripts[-1][1] += data

    def handle_endtag(self, tag):
        if tag == "script":
            self._in = None

    def all(self, tag):
        return [attrs for t, attrs in self.tags if t == tag]


_END = "\t\n\f />"  # 合适的结束标签 "</script" 后面只能跟这些字符


def _tag_at(text: str, i: int, name: str = "script") -> bool:
    """text[i:] 以 name（不分大小写）开头，且后面紧跟空白、/ 或 >。"""
    j = i + len(name)
    return text[i:j].lower() == name and j < len(text) and text[j] in _END


def script_end(text: str, i: int) -> int:
    """从脚本内容的第一个字符 i 开始，按标准的 script data 状态机找到关闭它的 "</script" 的位置（找不到返回 -1）。"""
    state = "data"  # data → escaped（见过 <!--）→ double（又见过 <script）
    while i < len(text):
        c = text[i]
        if state == "data":
            if text.startswith("</", i) and _tag_at(text, i + 2):
                return i
            if text.startswith("<!--", i):
                state, i = "escaped", i + 4
                continue
        elif state == "escaped":
            if text.startswith("-->", i):
                state, i = "data", i + 3
                continue
            if text.startswith("</", i) and _tag_at(text, i + 2):
                return i
            if c == "<" and _tag_at(text, i + 1):
                state, i = "double", i + 7
                continue
        elif state == "double":
            if text.startswith("-->", i):
                state, i = "data", i + 3
                continue
            if text.startswith("</", i) and _tag_at(text, i + 2):
                state, i = "escaped", i + 8  # 双重转义里的 </script> 只退回"转义"状态，关不掉脚本
                continue
        i += 1
    return -1


def scripts(page: str) -> list[tuple[str, str]]:
    """页面里每个 <script> 元素的 (开始标签, 内容)，按标准规则切分。页面别处的 < 都已转义成 &lt;。"""
    found, i = [], 0
    while (m := re.compile(r"<script(?=[\t\n\f />])", re.I).search(page, i)) is not None:
        open_end = page.index(">", m.end()) + 1
        end = script_end(page, open_end)
        assert end >= 0, f"第 {len(found) + 1} 个 <script> 一直没有关上：页面剩下的部分全被吞进了脚本"
        found.append((page[m.start():open_end], page[open_end:end]))
        i = page.index(">", end) + 1
    return found
