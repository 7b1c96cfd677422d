"""网页界面的中文：本书自己的 zh_CN 消息目录，盖过主题里译错的和没译的字符串。

目录在 ``book/locales/zh_CN/LC_MESSAGES/<域>.po``，一个文件对应一个消息域：

* ``sphinx.po``    Sphinx 和两个主题的模板里用 ``_()`` 包起来的字符串（“Link to this heading”“Color mode”…）；
* ``booktheme.po`` sphinx-book-theme 页头按钮的字符串（它自带的译文是“列印成 PDF”这类台湾用语）。

**不生成 .mo 文件。** 构建时用 babel（Sphinx 本身就依赖它）直接读 .po，把其中的译文并进 Sphinx 已经为该域
加载的翻译对象（同一个对象，模板里的 ``_`` 和 Python 代码里的 ``get_translation`` 都用它），本书的译文优先，
没覆盖到的仍用主题自带的。这样仓库里只有一个人能读、能改的 .po，不存在 .mo 过期或忘了提交的问题。

主题有几处把英文直接写死在模板的属性里（``title="Toggle primary sidebar"``、``aria-label="Main"``、搜索框的
``placeholder``），不经过 ``_()``。构建结束后把页面里这些属性值按同一份目录替换掉——目录仍是唯一的来源。
"""

from __future__ import annotations

import gettext
import html
import re
from pathlib import Path

from babel.messages.pofile import read_po
from sphinx.locale import translators

LOCALES = Path(__file__).resolve().parents[1] / "locales"
UI_ATTRIBUTE = re.compile(r'\b(title|aria-label|data-bs-title|placeholder|alt)="([^"]*)"')


def read_catalogue(domain: str, language: str = "zh_CN") -> dict[str, str]:
    """``<域>.po`` 里已翻译、非 fuzzy 的条目：{英文: 中文}。"""
    path = LOCALES / language / "LC_MESSAGES" / f"{domain}.po"
    with path.open("rb") as f:
        catalogue = read_po(f, locale=language, domain=domain)
    return {m.id: m.string for m in catalogue
            if m.id and isinstance(m.id, str) and m.string and not m.fuzzy}


class _Catalogue(gettext.NullTranslations):
    """某个域原本没有任何翻译时用的最简翻译对象。"""

    def __init__(self, messages: dict[str, str]):
        super().__init__()
        self._catalog = messages

    def gettext(self, message):
        if message in self._catalog:
            return self._catalog[message]
        return self._fallback.gettext(message) if self._fallback else message


def _install(app) -> None:
    """把每个 .po 并进对应域的翻译对象（本书的译文优先）。在所有主题和扩展都加载之后运行。"""
    language = app.config.language
    for po in sorted((LOCALES / language / "LC_MESSAGES").glob("*.po")):
        messages = read_catalogue(po.stem, language)
        key = ("general", po.stem)
        current = translators.get(key)
        if isinstance(getattr(current, "_catalog", None), dict):
            current._catalog.update(messages)   # 同一个对象：已经装进模板引擎的 _ 也立即生效
        else:
            mine = _Catalogue(messages)
            if current is not None:
                mine.add_fallback(current)
            translators[key] = mine


def _translate_attributes(app, exception) -> None:
    """主题模板里写死的英文属性值，按 sphinx.po 译成中文。"""
    if exception is not None or app.builder.format != "html":
        return
    messages = read_catalogue("sphinx", app.config.language)

    def replace(m):
        text = html.unescape(m.group(2))
        return f'{m.group(1)}="{html.escape(messages[text])}"' if text in messages else m.group(0)

    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        new = UI_ATTRIBUTE.sub(replace, text)
        if new != text:
            page.write_text(new, encoding="utf-8")


def setup(app):
    app.connect("builder-inited", _install, priority=900)
    app.connect("build-finished", _translate_attributes)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
