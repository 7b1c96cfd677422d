"""建完网站后唯一的一遍加工：每个 HTML 页面按 ``TRANSFORMS`` 的顺序经过几个有名字的纯函数（文字进、文字出）。

这几处改动都落在主题模板或文档写出器里写死的 HTML 上，Sphinx 没有更早的、有文档的钩子能改到它们
（``html-page-context`` 只能改模板的变量，这里的标签和属性不经过变量），所以在页面写完后改：

1. ``externalize_frames``：可交互图的帧从页面里搬出来，每一帧存成 ``_static/tlx/<内容哈希>.png``，页面里只留
   网址（``transformer_lab.widgets.static.externalize_frames``，这种 HTML 格式的唯一主人）。首次加载只下载每张图
   的当前帧；图快进入视野时预取再拨一格能看到的几帧，读者碰了这张图才取其余的帧。放在第一步：后面几步就
   不用扫过几 MB 的 base64。
   （帧是 ``explorable_frames.py`` 让内核在建书时画出来的。）
2. ``drop_fontawesome_script``：不加载 fontawesome.js。pydata 主题在模板宏里写死了这个 1.5 MB 的脚本（把图标换成
   SVG），可主题的 CSS 已经带了同样的图标字体 (fa-solid-900.woff2)，去掉脚本后图标照样显示，每页少 1.5 MB。
3. ``translate_ui_attributes``：主题把几处英文直接写在模板的属性里（``title="Toggle primary sidebar"``、
   ``aria-label="Main"``、搜索框的 ``placeholder``），不经过 ``_()``。按 sphinx 域的译文（也就是模板里 ``_()``
   用的那一份，本书的 ``book/locales/zh_CN/LC_MESSAGES/sphinx.po`` 排在最前）替换，好像主题用了 ``_()`` 一样。
4. ``add_sidebar_landmark``：pydata 主题的主侧边栏是一个普通 ``<div>``，里面的书名链接和搜索按钮不属于任何
   地标 (landmark)，读屏软件按地标跳转时跳不到它们（axe 规则 ``region``）。加上 ``role="complementary"`` 和
   中文名称“全书导航”，它就成了一个顶层的辅助地标，里面的目录 ``<nav>`` 不变。
5. ``demote_empty_header_cells``：Markdown 表格左上角留空时生成 ``<th class="head"><p></p></th>``，一个没有文字
   的表头，读屏软件读不出它是哪一列的标题（axe 规则 ``empty-table-header``）。这种格子不是任何一列的标题，
   改成普通的 ``<td>``。

每一步对已经加工过的页面再做一次，结果不变（没加 ``--all`` 的第二次构建只重写改过的页，其余页会再经过这里）。

页面都加工完后，``process_site`` 删掉没有任何一页再用到的旧帧文件。还有一步针对整个网站的
``subset_icon_font``：主题的图标字体 Font Awesome（solid，156 kB）有上千个图标，本书的页面只用到二三十个
（搜索、目录、侧边栏、提示框……）。用 fontTools（matplotlib 本来就依赖它）从主题自带的 TTF 里只取这些字形，
存成 ``ICON_SUBSET``（约 3 kB），再生成 ``ICON_CSS``：同一个字体名的
``@font-face``，``unicode-range`` 只写这些字形。浏览器对同名字体优先用后定义的那个，于是只下载小的；万一有个
图标没被算进去，它不在 ``unicode-range`` 里，浏览器才去下载原来的整个字体，图标照样显示，不会变成方块。
字体按 SIL OFL 1.1 发布，允许取子集再发布；名字表（含许可证信息）原样保留。
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sphinx.errors import ExtensionError
from sphinx.locale import get_translation

from transformer_lab.widgets.static import externalize_frames

FRAMES_URL = "_static/tlx/"  # 帧文件在网站里的位置
FONTAWESOME_JS = re.compile(r'<script defer src="[./]*_static/scripts/fontawesome\.js[^"]*"></script>\s*')
UI_ATTRIBUTE = re.compile(r'\b(title|aria-label|data-bs-title|placeholder)="([^"]*)"')
PRIMARY_SIDEBAR = '<div id="pst-primary-sidebar" class="bd-sidebar-primary bd-sidebar'
SIDEBAR_LANDMARK = ('<div role="complementary" aria-label="全书导航" id="pst-primary-sidebar" '
                    'class="bd-sidebar-primary bd-sidebar')
EMPTY_HEADER = re.compile(r'<th class="head">(?:<p>\s*</p>|\s*)</th>')


def drop_fontawesome_script(text: str) -> str:
    """去掉加载主题 fontawesome.js 的 ``<script>`` 标签。"""
    return FONTAWESOME_JS.sub("", text)


def translate_ui_attributes(text: str, gettext: Callable[[str], str]) -> str:
    """``title`` / ``aria-label`` / ``data-bs-title`` / ``placeholder`` 属性的值按 ``gettext`` 翻译（没有译文的不动）。"""

    def replace(m: re.Match) -> str:
        source = html.unescape(m.group(2))
        target = str(gettext(source)) if source.strip() else source
        return f'{m.group(1)}="{html.escape(target)}"' if target != source else m.group(0)

    return UI_ATTRIBUTE.sub(replace, text)


def add_sidebar_landmark(text: str) -> str:
    """主侧边栏的 ``<div>`` 成为一个有中文名称的辅助地标。"""
    return text.replace(PRIMARY_SIDEBAR, SIDEBAR_LANDMARK)


def demote_empty_header_cells(text: str) -> str:
    """没有文字的表头格 ``<th class="head">`` 改成普通的 ``<td>``。"""
    return EMPTY_HEADER.sub('<td class="head"></td>', text)


@dataclass(frozen=True)
class Page:
    """加工一页时要知道的：从这一页回到网站根目录的相对路径，帧文件写到哪，界面文字怎么翻译。"""

    root: str                        # 例如 "" 或 "../"
    frames_dir: Path                 # 网站的 _static/tlx 目录
    gettext: Callable[[str], str]    # sphinx 域的翻译


# 按顺序执行。名字就是上面文档里的编号条目；只有第一步有副作用（写帧文件）。
TRANSFORMS: tuple[tuple[str, Callable[[str, Page], str]], ...] = (
    ("externalize_frames", lambda text, page: externalize_frames(text, page.frames_dir, page.root + FRAMES_URL)),
    ("drop_fontawesome_script", lambda text, page: drop_fontawesome_script(text)),
    ("translate_ui_attributes", lambda text, page: translate_ui_attributes(text, page.gettext)),
    ("add_sidebar_landmark", lambda text, page: add_sidebar_landmark(text)),
    ("demote_empty_header_cells", lambda text, page: demote_empty_header_cells(text)),
)


def process(text: str, page: Page) -> str:
    """一页 HTML 依次经过 ``TRANSFORMS`` 的每一步。"""
    for _name, transform in TRANSFORMS:
        text = transform(text, page)
    return text


FRAME_FILE = re.compile(r"_static/tlx/([0-9a-f]{16}\.png)")


def process_site(outdir: Path, gettext: Callable[[str], str]) -> list[str]:
    """加工 ``outdir`` 下的每个 HTML 页面（内容变了才重写），再删掉没有任何一页用到的帧文件，返回删掉的文件名。

    帧文件以内容哈希命名，图一改就换一个新名字；在同一个 ``_build`` 里反复构建，旧帧会越积越多，跟着网站一起
    发布（一次实测：1694 个用到的帧之外又积了 739 个、20 MB）。这里每一页都读过，哪些帧还有用是确定的。"""
    frames_dir = outdir / FRAMES_URL
    frames_dir.mkdir(parents=True, exist_ok=True)
    used: set[str] = set()
    for path in sorted(outdir.rglob("*.html")):
        page = Page(root="../" * (len(path.relative_to(outdir).parts) - 1), frames_dir=frames_dir, gettext=gettext)
        text = path.read_text(encoding="utf-8")
        new = process(text, page)
        if new != text:
            path.write_text(new, encoding="utf-8")
        used |= set(FRAME_FILE.findall(new))
    stale = sorted(f.name for f in frames_dir.glob("*.png") if f.name not in used)
    for name in stale:
        (frames_dir / name).unlink()
    return stale


# ---------------------------------------------------------------- 图标字体只留用到的图标

ICON_FONT = "_static/vendor/fontawesome/webfonts/fa-solid-900.ttf"          # 主题自带（与 woff2 同一字体）
ICON_SUBSET = "_static/vendor/fontawesome/webfonts/fa-solid-900.subset.woff"
ICON_CSS = "_static/icon-font.css"   # _config.yml 的 html_css_files 链接它
ICON_FAMILY = "Font Awesome 6 Free"  # 主题 CSS 里 solid（font-weight 900）那一款的名字
CSS_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
# CSS 里的图标字形：写成转义 "\f002"，或者直接写那个私用区字符（主题的 --pst-icon-* 变量就是这样写的）
GLYPH = re.compile(r'\\([ef][0-9a-fA-F]{3})(?![0-9a-fA-F])|([\ue000-\uf8ff])')
ICON_SELECTOR = re.compile(r"^\.(fa-[a-z0-9-]+)::?before$")
CLASS_ATTRIBUTE = re.compile(r'\bclass="([^"]*)"')


def icon_codepoints(css_texts, used_classes: set[str]) -> set[int]:
    """要留下的图标字形。图标类的规则（``.fa-bars:before,.fa-navicon:before{content:"\\f0c9"}``）只在页面用到其中
    某个类时才算；别的规则里写的字形（主题给提示框、折叠箭头用的，包括 ``--pst-icon-*`` 变量）都算。"""
    wanted: set[int] = set()
    for css in css_texts:
        for selectors, body in CSS_RULE.findall(css):
            glyphs = GLYPH.findall(body)
            if not glyphs:
                continue
            icons = [ICON_SELECTOR.match(part.strip()) for part in selectors.split(",")]
            if all(icons) and not {m.group(1) for m in icons} & used_classes:
                continue
            wanted |= {int(escaped, 16) if escaped else ord(literal) for escaped, literal in glyphs}
    return wanted


def used_icon_classes(outdir: Path) -> set[str]:
    """网站每一页的 ``class`` 属性里出现过的 ``fa-*`` 类名。"""
    used: set[str] = set()
    for path in outdir.rglob("*.html"):
        for value in CLASS_ATTRIBUTE.findall(path.read_text(encoding="utf-8")):
            used |= {name for name in value.split() if name.startswith("fa-")}
    return used


def subset_icon_font(outdir: Path) -> list[int]:
    """从主题的图标字体里只取网站用到的字形，写出 ``ICON_SUBSET`` 和 ``ICON_CSS``；返回留下的码位。"""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    source = outdir / ICON_FONT
    if not source.is_file():
        raise ExtensionError(f"主题的图标字体不在 {ICON_FONT}（主题换了目录结构？改 book/_ext/postprocess.py 的 ICON_FONT）")
    css = [p.read_text(encoding="utf-8") for p in (outdir / "_static").rglob("*.css") if p.name != Path(ICON_CSS).name]
    font = TTFont(source)
    keep = sorted(icon_codepoints(css, used_icon_classes(outdir)) & set(font.getBestCmap()))
    options = subset.Options()
    options.flavor, options.name_IDs, options.notdef_outline = "woff", ["*"], True
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=keep)
    subsetter.subset(font)
    font.flavor = "woff"
    font.save(outdir / ICON_SUBSET)
    ranges = ",".join(f"U+{point:04X}" for point in keep)
    url = Path(ICON_SUBSET).relative_to(Path(ICON_CSS).parent).as_posix()
    (outdir / ICON_CSS).write_text(
        f"/* 由 book/_ext/postprocess.py 的 subset_icon_font 生成：主题图标字体里本书用到的 {len(keep)} 个字形 */\n"
        f'@font-face{{font-display:block;font-family:"{ICON_FAMILY}";font-style:normal;font-weight:900;'
        f'src:url({url}) format("woff");unicode-range:{ranges}}}\n', encoding="utf-8")
    return keep


def _finish(app, exception) -> None:
    if exception is None and app.builder.format == "html":
        process_site(Path(app.outdir), get_translation("sphinx"))
        subset_icon_font(Path(app.outdir))


def setup(app):
    app.connect("build-finished", _finish)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
