"""book/_ext 的扩展，在几十秒就建好的小网站上测（不必等几分钟的整本书）。

小网站用的是本书自己的 ``_config.yml``（扩展列表、消息目录、搜索设置都一样），只把其中的相对路径换成绝对路径；
内容是三页：前言、术语表（附录）和一个只有一个单元格、输出一张可交互图的 notebook（建书时执行它，证明建书的
内核画出全部帧、不建活滑块）。整个测试模块只建一次（``tiny_site`` fixture），每个测试看它的一个方面；加工步骤
另外当纯函数测。
自测页 (self_test_page) 不在这里测。
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import mathjax_parts
import postprocess
import pytest
import yaml
import zh_ui
from sphinx.errors import ExtensionError
from zh_search import REVISITING_SLOT, BookChineseSearch, scorer_code

from transformer_lab.chapters import CHAPTERS
from transformer_lab.widgets.static import read_player

from helpers import tiny_view
from helpers.slow import slow_fixture

ROOT = Path(__file__).resolve().parents[2]
EXT = ROOT / "book" / "_ext"


# 会被浏览器加载的资源（与 test_site.py 的检查相同）
LOADED_URL = re.compile(r"<(script|link|img|iframe|source)\b[^>]*\b(src|href)=\"((?:https?:)?//[^\"]+)\"", re.I)
BASE64_FRAME = re.compile(r"data:image/png;base64,[A-Za-z0-9+/]")  # 页面里还嵌着帧（player.js 里的字面量不算）
ANSI = re.compile(r"\x1b\[[0-9;]*m")
WARNING = re.compile(r"WARNING: (.*)$", re.M)


# ---------------------------------------------------------------- 小网站

PREFACE = """\
# 前言

本书用 NumPy 算注意力。为什么要除以根号？答案在第 4 章。

公式照常排版：$\\sqrt{d_k}$。

|   | 查询 | 键 |
|---|---|---|
| 形状 | (T, d_k) | (S, d_k) |

```{explorable} transformer_diagram
{"decoder": true}
```
"""

GLOSSARY = """\
# 术语表

```{glossary}
词元
  英文 token。模型读文字时的最小单位。

多头注意力
  英文 multi-head attention。几组注意力并排算。
```
"""

CHAPTER_TEXT = """\
# 第 1 章 小测

先看[词元](../book/glossary.md#词元)，再看[多头注意力](<../book/glossary.md#多头注意力>)；
这个链接拼错了：[词原](../book/glossary.md#词原)。整个[术语表](../book/glossary.md)也可以链接。

缩放点积注意力除以根号 d_k，softmax 才不会饱和。
"""


WIDGET_STATE = "application/vnd.jupyter.widget-state+json"  # nbclient 执行时记下的控件状态（有活滑块才有）


def _notebook() -> dict:
    """一段文字，一个画可交互图的代码单元格：建书时真的执行（图是 tests/helpers/tiny_view.py 的三帧小图，
    那个文件复制到 notebook 旁边），内核从构建进程继承 explorable_frames 设的开关。"""
    return {
        "nbformat": 4, "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                     "language_info": {"name": "python"}},
        "cells": [
            {"cell_type": "markdown", "id": "text", "metadata": {}, "source": CHAPTER_TEXT},
            {"cell_type": "code", "id": "figure", "metadata": {}, "execution_count": None,
             "source": "from tiny_view import tiny\n\ntiny()", "outputs": []},
        ],
    }


def site_config() -> dict:
    """本书的 _config.yml，相对路径换成绝对路径。"""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    config["execute"]["execute_notebooks"] = "force"  # 只有一个单元格：证明建书的内核不建活滑块
    config["html"]["favicon"] = str(ROOT / config["html"]["favicon"])
    sphinx = config["sphinx"]
    sphinx["local_extensions"] = {name: str(ROOT / path) for name, path in sphinx["local_extensions"].items()}
    sphinx["config"]["locale_dirs"] = [str(ROOT / d) for d in sphinx["config"]["locale_dirs"]]
    sphinx["config"]["html_search_scorer"] = str(ROOT / sphinx["config"]["html_search_scorer"])
    for key in ("templates_path", "html_static_path"):  # 页头模板、book.css
        sphinx["config"][key] = [str(ROOT / d) for d in sphinx["config"][key]]
    return config


def build_tiny_site(src: Path) -> tuple[Path, list[str], str]:
    """在 ``src`` 里写好小网站并用 Jupyter Book 构建（-n --keep-going，不加 -W：警告由测试自己检查）。

    返回 (HTML 目录, 警告列表, 完整日志)。"""
    (src / "book").mkdir(parents=True)
    (src / "notebooks").mkdir()
    (src / "book" / "preface.md").write_text(PREFACE, encoding="utf-8")
    (src / "book" / "glossary.md").write_text(GLOSSARY, encoding="utf-8")
    shutil.copy(ROOT / "tests" / "helpers" / "tiny_view.py", src / "notebooks" / "tiny_view.py")
    (src / "notebooks" / "01_demo.ipynb").write_text(json.dumps(_notebook(), ensure_ascii=False), encoding="utf-8")
    (src / "_toc.yml").write_text(textwrap.dedent("""\
        format: jb-book
        root: book/preface
        chapters:
          - file: notebooks/01_demo
          - file: book/glossary
        """), encoding="utf-8")
    (src / "_config.yml").write_text(yaml.safe_dump(site_config(), allow_unicode=True), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-c", "from jupyter_book.cli.main import main; main()",
                           "build", str(src), "--all", "-n", "--keep-going"],
                          cwd=src, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"})
    log = ANSI.sub("", proc.stdout + proc.stderr)
    html = src / "_build" / "html"
    assert (html / "book" / "preface.html").exists(), f"小网站没建成：\n{log[-3000:]}"
    return html, WARNING.findall(log), log


@slow_fixture(scope="module")
def tiny_build(tmp_path_factory):
    """建好的小网站：(HTML 目录, 警告列表, 完整日志)。建一次要几十秒，所以和整本书一样算慢测试。"""
    return build_tiny_site(tmp_path_factory.mktemp("tiny") / "src")


@slow_fixture(scope="module")
def tiny_site(tiny_build) -> Path:
    return tiny_build[0]


def read(site: Path, page: str) -> str:
    return (site / page).read_text(encoding="utf-8")


def test_tiny_site_builds_with_only_the_planted_warning(tiny_build):
    """唯一的警告是故意拼错的术语链接（glossary_links 让 -n 构建照样报出来）；没有别的警告。"""
    _, warnings, log = tiny_build
    assert warnings == ["term not in glossary: '词原'"], log[-3000:]


# ---------------------------------------------------------------- 配置：扩展列表由本书自己定

def test_extension_list_has_no_thebe_and_puts_zh_ui_before_the_theme():
    sphinx = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["sphinx"]
    extensions = sphinx["config"]["extensions"]
    assert "sphinx_thebe" not in extensions
    assert extensions.index("zh_ui") < extensions.index("sphinx_book_theme")
    # book/_ext 里的每个扩展都登记了路径，也都在加载列表里（只登记路径的扩展不会被加载）
    local = set(sphinx["local_extensions"])
    assert local == {p.stem for p in EXT.glob("*.py")}
    assert local <= set(extensions), local - set(extensions)


# ---------------------------------------------------------------- 建完后的加工：纯函数

# pydata 主题模板宏里写死的那一行（摘自构建出的页面）
FONTAWESOME_TAG = '<script defer src="../_static/scripts/fontawesome.js?digest=55c26ed414f5f8a31ebb"></script>\n  '
SIDEBAR = '<div id="pst-primary-sidebar" class="bd-sidebar-primary bd-sidebar">'
UI = {"Main": "全书目录", "Toggle primary sidebar": "切换侧边栏", "Search this book...": "搜索本书……"}


def fake_gettext(message: str) -> str:
    """像 GNU gettext 一样：空字符串返回目录的文件头，没有译文的原样返回。"""
    return "Project-Id-Version: 文件头" if message == "" else UI.get(message, message)


def test_fontawesome_script_is_dropped_and_other_scripts_stay():
    page = f'<head>{FONTAWESOME_TAG}<script defer src="../_static/scripts/bootstrap.js?digest=1"></script></head>'
    assert postprocess.drop_fontawesome_script(page) == \
        '<head><script defer src="../_static/scripts/bootstrap.js?digest=1"></script></head>'
    assert postprocess.drop_fontawesome_script(FONTAWESOME_TAG.replace("../", "")) == ""  # 根目录下的页面


def test_ui_attributes_are_translated_and_nothing_else():
    page = ('<nav aria-label="Main"><button title="Toggle primary sidebar">Main</button>'
            '<input placeholder="Search this book..." aria-label="Search this book...">'
            '<img alt="Main" src="x.png"><a title="">空</a><span title="Unknown &amp; kept">Toggle primary sidebar</span></nav>')
    assert postprocess.translate_ui_attributes(page, fake_gettext) == (
        '<nav aria-label="全书目录"><button title="切换侧边栏">Main</button>'
        '<input placeholder="搜索本书……" aria-label="搜索本书……">'
        '<img alt="Main" src="x.png"><a title="">空</a><span title="Unknown &amp; kept">Toggle primary sidebar</span></nav>')


def test_translated_attribute_values_are_escaped():
    assert postprocess.translate_ui_attributes('<a title="Tom &amp; Jerry">', {"Tom & Jerry": '“汤姆"与杰瑞'}.get) == \
        '<a title="“汤姆&quot;与杰瑞">'


ICON_CSS = (
    '.fa-bars:before,.fa-navicon:before{content:"\\f0c9"}'           # 页面用到 fa-bars：留
    '.fa-anchor:before{content:"\\f13d"}'                              # 没用到：不留
    ':root{--pst-icon-info-circle:"\uf05a";--x:"\\e521"}'              # 主题自己的规则：都留（字面字符和转义）
    '@media (min-width:960px){.toctree-toggle:after{content:"\\f107"}}'  # 媒体查询里的规则也算
    '.note{content:"\\f0c9a"}'                                          # 不是四位的转义：不是图标
)


def test_icon_codepoints_keep_used_icon_classes_and_the_themes_own_glyphs():
    assert postprocess.icon_codepoints([ICON_CSS], {"fa-bars", "fa-lg"}) == {0xF0C9, 0xF05A, 0xE521, 0xF107}
    assert postprocess.icon_codepoints([ICON_CSS], {"fa-navicon"}) == {0xF0C9, 0xF05A, 0xE521, 0xF107}
    assert postprocess.icon_codepoints([ICON_CSS], set()) == {0xF05A, 0xE521, 0xF107}


def test_sidebar_becomes_a_named_landmark():
    assert postprocess.add_sidebar_landmark(SIDEBAR + "</div>") == \
        '<div role="complementary" aria-label="全书导航" id="pst-primary-sidebar" class="bd-sidebar-primary bd-sidebar"></div>'


@pytest.mark.parametrize("cell, expected", [
    ('<th class="head"><p></p></th>', '<td class="head"></td>'),
    ('<th class="head"> </th>', '<td class="head"></td>'),
    ('<th class="head"><p>查询</p></th>', '<th class="head"><p>查询</p></th>'),  # 有文字的表头不动
])
def test_only_empty_header_cells_are_demoted(cell, expected):
    assert postprocess.demote_empty_header_cells(f"<tr>{cell}</tr>") == f"<tr>{expected}</tr>"


def test_transforms_run_in_the_documented_order():
    """TRANSFORMS 的顺序就是 postprocess.py 文档里编号的顺序（文档和代码不会各说各的）。"""
    documented = re.findall(r"^\d\. ``(\w+)``", postprocess.__doc__, re.M)
    assert [name for name, _ in postprocess.TRANSFORMS] == documented
    assert documented[0] == "externalize_frames" and len(documented) == 5


def _sample_page() -> str:
    figure = tiny_view.tiny()
    return (f'<html><head>{FONTAWESOME_TAG}</head><body>{SIDEBAR}<nav aria-label="Main"></nav></div>'
            f'<table><tr><th class="head"></th><th class="head"><p>键</p></th></tr></table>'
            f'{figure.static_html(all_frames=True)}</body></html>')


def test_process_applies_every_step_and_a_second_pass_changes_nothing(tmp_path):
    page = postprocess.Page(root="../", frames_dir=tmp_path, gettext=fake_gettext)
    once = postprocess.process(_sample_page(), page)
    assert "fontawesome" not in once and 'aria-label="全书目录"' in once and 'aria-label="全书导航"' in once
    assert '<td class="head"></td>' in once and not BASE64_FRAME.search(once)
    (player,) = read_player(once)
    urls = [u for layout in ("wide", "narrow") for u in player["urls"][layout]]  # 两种版式各 3 帧
    assert [u.startswith("../_static/tlx/") for u in urls] == [True] * 6 and len(list(tmp_path.iterdir())) == 6
    assert postprocess.process(once, page) == once


def test_process_site_removes_frames_no_page_uses(tmp_path):
    """同一个 _build 里反复构建：上一次的帧（页面里已经不再引用）被删掉，这一次用到的都留着。"""
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "a.html").write_text(_sample_page(), encoding="utf-8")
    frames = tmp_path / postprocess.FRAMES_URL
    frames.mkdir(parents=True)
    (frames / "0123456789abcdef.png").write_bytes(b"old frame")
    assert postprocess.process_site(tmp_path, fake_gettext) == ["0123456789abcdef.png"]
    (player,) = read_player((tmp_path / "notebooks" / "a.html").read_text(encoding="utf-8"))
    kept = {u.split("/")[-1] for layout in ("wide", "narrow") for u in player["urls"][layout]}
    assert {f.name for f in frames.iterdir()} == kept and len(kept) == 6
    assert postprocess.process_site(tmp_path, fake_gettext) == []  # 第二遍：没有可删的


# ---------------------------------------------------------------- 建完后的加工：在小网站上

def _pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if "_static" not in p.parts)


def offline_problems(page: str) -> list[str]:
    """一页里不该有的：第三方网址上的资源、thebe、fontawesome.js。"""
    problems = [m.group(3) for m in LOADED_URL.finditer(page)]
    problems += re.findall(r"[^\s\"'<>]*thebe[^\s\"'<>]*", page, re.I)
    return problems + re.findall(r"<script[^>]*fontawesome\.js[^>]*>", page)


def test_offline_check_flags_what_jupyter_book_emits_by_default():
    """反证：Jupyter Book 默认给每页加的东西（摘自去掉 sphinx_thebe 之前构建出的页面），检查都能抓到。"""
    default = ('<script>const THEBE_JS_URL = "https://unpkg.com/thebe@0.8.2/lib/index.js"; const thebe_selector = ".thebe,.cell"</script>'
               '<script async="async" src="../_static/sphinx-thebe.js?v=c100c467"></script>'
               '<link rel="stylesheet" type="text/css" href="../_static/sphinx-thebe.css?v=4fa983c6" />' + FONTAWESOME_TAG)
    found = offline_problems(default)
    assert "https://unpkg.com/thebe@0.8.2/lib/index.js" in found and "../_static/sphinx-thebe.js?v=c100c467" in found
    assert "../_static/sphinx-thebe.css?v=4fa983c6" in found and FONTAWESOME_TAG.split("></script>")[0] + ">" in found
    assert offline_problems('<script src="https://cdn.example.org/x.js"></script>') == ["https://cdn.example.org/x.js"]


def test_tiny_site_loads_nothing_from_elsewhere_and_has_no_thebe_or_fontawesome(tiny_site):
    problems = {p.name: offline_problems(p.read_text(encoding="utf-8")) for p in _pages(tiny_site)}
    assert not any(problems.values()), problems
    assert not list((tiny_site / "_static").glob("*thebe*"))


def test_the_build_kernel_makes_the_player_and_no_live_widget(tiny_site):
    """建书时执行的内核知道自己在建书（explorable_frames 设的 BOOK_BUILD_ENV）：单元格输出全部帧的播放器，
    不建活滑块，页面里也就没有控件状态和控件视图（以前是先建出来、再由一个钩子从页面里删掉）。"""
    text = read(tiny_site, "notebooks/01_demo.html")
    (player,) = read_player(text)
    assert [len(player["urls"][layout]) for layout in ("wide", "narrow")] == [3, 3]  # 有内核却不是预览：全部帧
    assert "静态预览" not in text
    assert WIDGET_STATE not in text and "widget-view+json" not in text and "SliderModel" not in text


@pytest.mark.parametrize("builder, chosen", [("html", "text/html"), ("latex", "image/png")])
def test_myst_nb_picks_the_player_for_the_site_and_the_png_for_latex(builder, chosen):
    """本书的 _config.yml 交给 myst-nb 的优先级（nb_mime_priority_overrides，没有就是默认的）：建书时一张可交互图
    输出的三种格式里，网站取 text/html 的播放器，LaTeX/PDF 取初始帧的 image/png。"""
    from myst_nb.core.render import get_mime_priority

    overrides = site_config()["sphinx"]["config"].get("nb_mime_priority_overrides", [])
    priority = get_mime_priority(builder, [tuple(o) for o in overrides])
    bundle = {"text/plain", "text/html", "image/png"}
    assert next(mime for mime in priority if mime in bundle) == chosen


def test_mathjax_comes_in_parts_without_the_english_menu(tiny_site):
    """MathJax 由 startup.js 按 loader 装组件（mathjax_parts.py），不用带右键菜单 (ui/menu) 的合订本 tex-chtml.js；
    Jupyter Book 自己的 MathJax 设置（processHtmlClass）还在。"""
    text = read(tiny_site, "book/preface.html")
    assert re.search(r'<script[^>]+src="[./]*_static/mathjax/startup\.js', text), "页面没有加载 startup.js"
    assert "tex-chtml.js" not in text and "ui/menu" not in text
    config = re.search(r"window\.MathJax = (\{.*?\})</script>", text, re.S)
    assert config, "页面里没有 MathJax 的设置"
    settings = json.loads(config.group(1))
    assert settings["loader"]["load"] == list(mathjax_parts.COMPONENTS)
    assert "math" in settings["options"]["processHtmlClass"]
    assert mathjax_parts.missing_components(tiny_site.parent / "html") == []
    # 排版后让独立公式能用 Tab 聚焦的那段脚本：只在有公式的页面上
    assert mathjax_parts.FOCUS_JS in text and mathjax_parts.FOCUS_JS not in read(tiny_site, "book/glossary.html")


def test_a_missing_mathjax_component_is_named(tmp_path):
    (tmp_path / "_static" / "mathjax" / "input").mkdir(parents=True)
    for name in ("startup.js", "input/tex.js"):
        (tmp_path / "_static" / "mathjax" / name).write_text("//", encoding="utf-8")
    assert mathjax_parts.missing_components(tmp_path) == ["mathjax/output/chtml.js", "mathjax/a11y/assistive-mml.js"]


def test_the_icon_font_is_cut_to_the_icons_the_pages_use(tiny_site):
    """建完后 subset_icon_font 只留用到的图标：搜索按钮的放大镜在，没用到的图标不在；CSS 的 unicode-range 正好是
    子集里的字形，页面链接了这份 CSS。"""
    from fontTools.ttLib import TTFont

    subset = TTFont(tiny_site / postprocess.ICON_SUBSET)
    kept = set(subset.getBestCmap())
    assert 0xF002 in kept and 0xF13D not in kept  # 放大镜 fa-magnifying-glass；船锚 fa-anchor 没有用到
    full = TTFont(tiny_site / postprocess.ICON_FONT)
    assert len(kept) < len(full.getBestCmap()) / 20
    assert (tiny_site / postprocess.ICON_SUBSET).stat().st_size < 20_000
    css = (tiny_site / postprocess.ICON_CSS).read_text(encoding="utf-8")
    ranges = re.search(r"unicode-range:([^}]*)\}", css).group(1)
    assert {int(r.strip()[2:], 16) for r in ranges.split(",")} == kept
    assert postprocess.ICON_FAMILY in css and "font-weight:900" in css
    assert re.search(r'<link[^>]+href="[./]*_static/icon-font\.css', read(tiny_site, "book/preface.html"))


def test_frames_become_site_files(tiny_site):
    page = read(tiny_site, "notebooks/01_demo.html")
    (player,) = read_player(page)
    assert "frames" not in player and not BASE64_FRAME.search(page)
    for url in (u for layout in ("wide", "narrow") for u in player["urls"][layout]):
        assert url.startswith("../_static/tlx/") and (tiny_site / "notebooks" / url).resolve().read_bytes()[:4] == b"\x89PNG"
    assert re.search(r'<div class="tlx"[^>]*>\s*<a class="tlx-zoom" href="\.\./_static/tlx/[^"]*"[^>]*>\s*<picture>'
                     r'\s*<source [^>]*srcset="\.\./_static/tlx/[^"]*".*?<img src="\.\./_static/tlx/', page, re.S)


def test_a_markdown_page_gets_a_figure_from_the_package(tiny_site):
    """page_figures：前言里的 ```{explorable} transformer_diagram``` 变成那张图的播放器（参数照传，帧搬成文件）。"""
    page = read(tiny_site, "book/preface.html")
    (player,) = read_player(page)
    urls = [u for layout in ("wide", "narrow") for u in player["urls"][layout]]
    assert urls and all(u.startswith("../_static/tlx/") and (tiny_site / "book" / u).resolve().is_file() for u in urls)
    assert "因果掩码" in page  # {"decoder": true} 传到了画图函数：替代文字写的是解码器
    assert not BASE64_FRAME.search(page)


def test_accessibility_fixes_reach_the_built_pages(tiny_site):
    page = read(tiny_site, "book/preface.html")
    assert page.count('role="complementary" aria-label="全书导航"') == 1
    assert '<td class="head"></td>' in page and '<th class="head"><p>查询</p></th>' in page


# ---------------------------------------------------------------- 中文界面

ENGLISH_WORD = re.compile(r"[A-Za-z]{2,}")


def test_ui_strings_come_from_the_books_catalogues(tiny_site):
    page = read(tiny_site, "notebooks/01_demo.html")
    for text in ("链接到此标题",   # sphinx 域：Sphinx 按 locale_dirs 编译并优先使用本书的 sphinx.po
                 "打印成 PDF",     # booktheme 域：zh_ui 注册的 booktheme.po 盖过主题的“列印成 PDF”
                 'title="切换侧边栏"', 'aria-label="全书目录"', 'placeholder="搜索本书……"'):  # 模板写死的属性
        assert text in page, text
    assert "列印" not in page


def test_no_ui_attribute_is_left_in_english(tiny_site):
    import transformer_lab as tl

    figure = tl.explore.transformer_diagram(decoder=True)  # 前言里那张图的标题和替代文字是书的内容，不是界面
    allowed = {"PDF", *ENGLISH_WORD.findall(figure.title + figure.alt_text())}
    english = {}
    for path in _pages(tiny_site):
        for attr, value in re.findall(r'\b(title|aria-label|alt|placeholder|data-bs-title)="([^"]*)"',
                                      path.read_text(encoding="utf-8")):
            if set(ENGLISH_WORD.findall(value)) - allowed:
                english.setdefault(path.name, []).append(f"{attr}={value!r}")
    assert not english, english


def test_catalogue_priority_check_catches_the_themes_wording():
    """zh_ui 在所有扩展加载完后核对：主题的译文盖过本书的时候报错（反证：假装主题排在前面）。"""
    ours = {"Print to PDF": "打印成 PDF"}
    zh_ui.check_priority("booktheme", ours, ours.get)
    with pytest.raises(ExtensionError, match="booktheme.po 没有生效.*列印成 PDF.*zh_ui 必须在 sphinx_book_theme 之前加载"):
        zh_ui.check_priority("booktheme", ours, {"Print to PDF": "列印成 PDF"}.get)
    with pytest.raises(ExtensionError, match="sphinx.po 没有生效.*Link to this heading.*locale_dirs"):
        zh_ui.check_priority("sphinx", {"Link to this heading": "链接到此标题"}, lambda s: s)


def test_catalogue_is_compiled_once_and_readable_by_gettext(tmp_path):
    import gettext

    po = tmp_path / "zh_CN" / "LC_MESSAGES" / "booktheme.po"
    po.parent.mkdir(parents=True)
    po.write_text('msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\n'
                  'msgid "Print to PDF"\nmsgstr "打印成 PDF"\n\n#, fuzzy\nmsgid "Search"\nmsgstr "搜寻"\n', encoding="utf-8")
    mo = zh_ui.compile_catalogue(po, "zh_CN")
    translation = gettext.translation("booktheme", localedir=tmp_path, languages=["zh_CN"])
    assert translation.gettext("Print to PDF") == "打印成 PDF" and translation.gettext("Search") == "Search"
    mo.write_bytes(b"sentinel")
    os.utime(mo, (po.stat().st_mtime + 10,) * 2)
    assert zh_ui.compile_catalogue(po, "zh_CN").read_bytes() == b"sentinel"  # .mo 比 .po 新：不重写


def test_compiled_catalogues_are_not_committed():
    check = lambda path: subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT).returncode  # noqa: E731
    assert check("book/locales/zh_CN/LC_MESSAGES/sphinx.mo") == 0
    assert check("book/locales/zh_CN/LC_MESSAGES/booktheme.mo") == 0
    assert check("book/locales/zh_CN/LC_MESSAGES/sphinx.po") == 1  # 反证：.po 要进仓库


# ---------------------------------------------------------------- 术语链接

def test_glossary_links_become_term_references(tiny_site):
    glossary = read(tiny_site, "book/glossary.html")
    anchors = dict(re.findall(r'<dt id="(term-[^"]+)">(.*?)<a class="headerlink"', glossary, re.S))
    page = read(tiny_site, "notebooks/01_demo.html")
    links = re.findall(r'<a class="reference internal" href="\.\./book/glossary\.html#(term-[^"]+)">'
                       r'<span class="xref std std-term">([^<]+)</span></a>', page)
    assert [(anchors[anchor].strip(), text) for anchor, text in links] == [("词元", "词元"), ("多头注意力", "多头注意力")]
    assert '<a class="reference internal" href="../book/glossary.html"><span class="std std-doc">术语表</span></a>' in page
    # 拼错的词条（构建时警告，见上面的第一个测试）：没有链接，只剩文字
    assert re.search(r'<span class="xref std std-term">词原</span>', page)
    assert "glossary.html#词原" not in page


# ---------------------------------------------------------------- 中文搜索

def test_index_holds_single_characters_and_bigrams(tiny_site):
    index = json.loads(re.search(r"Search\.setIndex\((.*)\)", read(tiny_site, "searchindex.js"), re.S).group(1))
    for term in ("除", "根", "除以", "以根", "根号", "softmax"):
        assert term in index["terms"], term
    assert "除以根号" not in index["terms"]  # 不是整段
    assert BookChineseSearch({}).split("除以根号 d_k") == ["除", "以", "根", "号", "除以", "以根", "根号", "d_k"]


def test_language_data_carries_the_splitter_and_the_scorer(tiny_site):
    data = read(tiny_site, "_static/language_data.js")
    assert "var splitQuery = function" in data and "Search.performTermsSearch = function" in data
    assert "var Scorer = {" in data and "BACK_MATTER" in data
    # 要降权的章是建书时按章节表填上的（search_scorer.js 里留的是空列表）
    revisiting = [c.number for c in CHAPTERS if c.revisits]
    assert revisiting and f"var REVISITING = {json.dumps(revisiting)};" in data and REVISITING_SLOT not in data
    # 虚词清单和同义词也是建书时填上的：同义词来自小网站自己的术语表（没有记号表）
    assert 'var STOP_WORDS = ["为什么要", ' in data and "var STOP_WORDS = [];" not in data
    assert ('var SYNONYMS = [{"names": ["词元", "token"], "pages": []}, '
            '{"names": ["多头注意力", "multi-head attention"], "pages": []}];') in data


NODE_HARNESS = """
const vm = require("vm"), fs = require("fs"), path = require("path");
globalThis.window = globalThis;
globalThis.document = {getElementById: () => null, addEventListener: () => {}, readyState: "complete"};
globalThis.localStorage = {setItem() {}, getItem() { return null; }};
globalThis._ready = () => {};
globalThis.SPHINX_HIGHLIGHT_ENABLED = false;
for (const f of ["_static/documentation_options.js", "_static/searchtools.js", "_static/language_data.js", "searchindex.js"])
  vm.runInThisContext(fs.readFileSync(path.join(process.argv[1], f), "utf8"), {filename: f});
const search = q => { const p = Search._parseQuery(q); return Search._performSearch(...p).reverse().map(r => [r[0], r[4]]); };
process.stdout.write(JSON.stringify(eval(process.argv[2])));
"""


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("没有找到 Node.js（sudo apt-get install nodejs）：搜索脚本的测试已跳过，浏览器里的搜索测试在 test_search.py。")
    return node


def run_search_js(site: Path, expression: str):
    """在 Node.js 里按浏览器的顺序载入网站的搜索脚本和索引，返回 ``expression`` 的值。"""
    proc = subprocess.run([_node(), "-e", NODE_HARNESS, str(site), expression], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def scores_under(code: str, docs: list[str]) -> list[float]:
    """在 Node.js 里只载入计分脚本 ``code``，给每个文档名算分（原始得分 100），保留六位小数。"""
    script = f"{code}\nprocess.stdout.write(JSON.stringify({docs}.map(d => Scorer.score([d, '', '', null, 100, d + '.md']))));"
    proc = subprocess.run([_node(), "-e", script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return [round(s, 6) for s in json.loads(proc.stdout)]


def test_query_is_split_into_words_in_the_browser_scripts(tiny_site):
    """查询切成词（汉字的词在索引里查它的相邻两字）：虚词删掉、在那里断开，术语表里的词先认出来。"""
    assert run_search_js(tiny_site, 'splitQuery("除以根号")') == ["除以根号"]
    assert run_search_js(tiny_site, 'bigrams("除以根号")') == ["除以", "以根", "根号"]
    assert run_search_js(tiny_site, 'splitQuery("头 Q K V softmax")') == ["头", "softmax"]
    assert run_search_js(tiny_site, 'splitQuery("多头注意力的好处是什么")') == ["多头注意力"]


def test_scorer_discounts_within_the_all_words_tier(tiny_site):
    """每个词都在的页（得分加了 ALL_WORDS）打折时只折档内的部分：附录仍在这一档，不会掉到只有部分词的章节后面。"""
    scores = run_search_js(tiny_site, "[[ALL_WORDS, ['book/glossary', 'notebooks/04_x']], "
                                      "...[['book/glossary', ALL_WORDS + 100], ['notebooks/04_x', 99]]"
                                      ".map(([d, s]) => Scorer.score([d, '', '', null, s, d + '.md']))]")
    all_words, glossary, chapter = scores[0][0], scores[1], scores[2]
    assert all_words == 1000 and round(glossary, 6) == 1090 and round(chapter, 6) == 98.96


def test_scorer_marks_down_back_matter_but_not_the_preface(tiny_site):
    """附录打九折，前言不变；章节打平时章号小的在前（每章减 章号 × 0.01）；重看前面概念的第 10 章（章节表里
    ``revisits``）和附录一样打九折，它后面讲新概念的一章（第 11 章）不打折。"""
    docs = ["book/glossary", "book/preface", "notebooks/01_demo", "notebooks/02_x", "notebooks/10_x", "notebooks/11_x"]
    scores = run_search_js(tiny_site, f"{docs}.map(d => Scorer.score([d, '', '', null, 100, d + '.md']))")
    assert [round(s, 6) for s in scores] == [90, 100, 99.99, 99.98, 89.9, 99.89]


SCORER = (EXT / "search_scorer.js").read_text(encoding="utf-8")
SCORED = ["notebooks/03_x", "notebooks/04_x", "notebooks/10_x", "notebooks/11_x", "book/glossary"]


def test_the_chapters_to_mark_down_come_from_the_table():
    """建书时写进计分脚本的章号来自章节表：标了 ``revisits`` 的章打九折，没标的不打折（在不建网站的 Node.js 里算）。"""
    table = tuple(replace(c, revisits=c.number == 3) for c in CHAPTERS)  # 假的表：只有第 3 章重看
    assert scores_under(scorer_code(SCORER, table), SCORED) == [89.97, 99.96, 99.9, 99.89, 90]
    assert scores_under(scorer_code(SCORER, CHAPTERS), SCORED) == [99.97, 99.96, 89.9, 99.89, 90]
    assert scores_under(SCORER, SCORED) == [99.97, 99.96, 99.9, 99.89, 90]  # 没填的模板：哪一章都不降权


def test_a_scorer_without_the_slot_is_refused():
    """反证：计分脚本里没有（或有两处）留给章号的那一行，建书时就报错，而不是悄悄不降权。"""
    with pytest.raises(ExtensionError, match="search_scorer.js 里必须恰好有一行.*找到 0 行"):
        scorer_code(SCORER.replace(REVISITING_SLOT, "var REVISITING = [10];"), CHAPTERS)
    with pytest.raises(ExtensionError, match="找到 2 行"):
        scorer_code(SCORER + REVISITING_SLOT, CHAPTERS)


def test_questions_find_the_page_that_contains_most_of_them(tiny_site):
    """书里没有原样出现的问句也能搜到（原来的 Sphinx 要求每一块都出现）：问句的套话（“为什么要”“为何”）不参与，
    每个词都在的页在前（按显示的顺序）；书里一个字也没有的查询一无所获。"""
    results = run_search_js(tiny_site, '[search("为什么要除以根号"), search("softmax 为何不会饱和"), '
                                       'search("softmax为何不会饱和吗"), search("鑫龘齉"), search("是什么呢")]')
    assert [doc for doc, _ in results[0]] == ["book/preface", "notebooks/01_demo"]   # 两页都有“除以根号”
    assert [doc for doc, _ in results[1]][:1] == ["notebooks/01_demo"]              # “饱和”里的“和”不当连词删
    assert results[2] == results[1]
    assert results[3] == [] and results[4] == []


def test_inherited_property_names_are_not_index_words(tiny_site):
    """索引是普通的 JS 对象：查询 “constructor”“__proto__” 查到的不能是 Object 继承来的属性（修复前各多出一条
    文档名、标题都是 undefined 的结果）；和真词一起搜时，结果和只搜真词一样。"""
    queries = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf", "<img src=x onerror=alert(1)>"]
    results = run_search_js(tiny_site, f"[...{queries}.map(q => search(q)), search('softmax constructor'), "
                                       "search('softmax')]")
    assert results[:len(queries)] == [[]] * len(queries)
    with_word, alone = results[len(queries):]
    assert alone and all(doc for doc, _ in with_word) and [d for d, _ in with_word] == [d for d, _ in alone]
