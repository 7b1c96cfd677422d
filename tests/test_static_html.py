"""静态播放器的 HTML 按 HTML 标准的分词规则 (WHATWG HTML §13.2.5 "script data" 各状态) 读回来，数 <script> 元素。

Python 的 ``html.parser`` 不实现 <script> 里的"转义"和"双重转义"状态：``<!--<script>`` 之后的 ``</script>``
在浏览器里**关不掉**脚本，后面的换帧脚本和整页剩下的内容都会被吞进这段脚本。html5lib 没有装在环境里
（也不为一个测试加依赖），所以这里照标准写了 script data 的状态机（约 40 行），并用反例证明它能发现问题。
"""

from __future__ import annotations

import json
import re

import pytest

from transformer_lab.widgets.explorable import Explorable, Slider
from transformer_lab.widgets.static import PLAYER_JS

from test_explorables import NASTY, _Line

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


def _tiny(label: str = "a", title: str = "直线", values=(1, 2, 3)) -> Explorable:
    return Explorable(_Line, [Slider("a", values, label=label)], title=title, alt=label + " {a}", data={"top": 3},
                      size=(2.0, 1.5))


def test_the_reference_tokenizer_catches_the_double_escape_trap():
    """反证：不转义的 JSON 里有 <!--<script>，按标准，紧接着的 </script> 关不掉脚本。"""
    raw = '<script type="application/json">{"label": "<!--<script>"}</script><script>go()</script><p>后文</p>'
    ((tag, body),) = scripts(raw.replace("<p>后文</p>", "--></script>"))
    assert "go()" in body  # 只剩一个脚本：换帧脚本被吞进了数据里
    with pytest.raises(AssertionError, match="没有关上"):
        scripts(raw)
    assert [b for _, b in scripts("<script>a</script ><script>b</SCRIPT>")] == ["a", "b"]
    assert [b for _, b in scripts("<script>x = '</scripty>'</script>")] == ["x = '</scripty>'"]


def test_player_script_itself_has_no_escape_sequences():
    assert script_end(PLAYER_JS + "</script>", 0) == len(PLAYER_JS)


@pytest.mark.parametrize("nasty", [NASTY, "<!--<script>", "<!--<SCRIPT ", "--><script>", "&lt;script&gt; & <b>"])
def test_every_player_has_exactly_its_two_scripts_even_with_nasty_text(nasty):
    ex = _tiny(label=nasty, title=nasty)
    page = "<main>" + ex.static_html() + ex.static_html() + "<p>页尾</p></main>"
    found = scripts(page)
    assert len(found) == 4, [t for t, _ in found]  # 两个播放器 × (数据 + 换帧脚本)
    data = [json.loads(body) for tag, body in found if 'class="tlx-data"' in tag]
    assert len(data) == 2 and all(d["sliders"][0]["label"] == nasty for d in data)
    assert all(body == PLAYER_JS for tag, body in found if "tlx-data" not in tag)
    assert page.endswith("<p>页尾</p></main>")


def test_nasty_slider_values_survive_too():
    nasty = ("<!--<script>", "&amp;", "b")  # 只出现一次（替代文字不含取值）：不转义的话，换帧脚本会被吞掉
    ex = Explorable(_Labels, [Slider("a", nasty)], title="t", alt="一帧", size=(2.0, 1.5))
    found = scripts(ex.static_html())
    assert len(found) == 2 and json.loads(found[0][1])["sliders"][0]["values"] == list(nasty)


class _Labels:
    def __init__(self, fig, axes):
        self.text = axes[0].text(0.5, 0.5, "")
        self.artists = [self.text]

    def update(self, a):
        self.text.set_text(str(len(a)))
        return {"n": len(a)}
