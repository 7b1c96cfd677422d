"""网页界面的中文（大陆用语）：本书的消息目录优先于 Sphinx 和主题自带的译文。

网页界面的中文来自 ``book/locales/zh_CN/LC_MESSAGES/`` 下的两个消息目录，一个文件对应一个消息域：

* ``sphinx.po``：Sphinx 和两个主题模板里用 ``_()`` 包起来的字符串（“Link to this heading”“Color mode”…），
  以及主题写死在属性里的英文（由 ``postprocess.py`` 按同一份译文替换）。它由 Sphinx 自己处理：_config.yml 的
  ``locale_dirs: [book/locales]`` 让 Sphinx 启动时把它编译成 .mo，并排在 Sphinx 和主题的译文前面。本扩展只核对它生效了。
* ``booktheme.po``：sphinx-book-theme 页头按钮的字符串（主题自带的 zh_CN 是“列印成 PDF”这类台湾用语）。
  Sphinx 只替 ``sphinx`` 域编译 .po，所以本扩展在 setup 里把 booktheme.po 编译成 booktheme.mo（.po 比 .mo 新时
  才重写，和 Sphinx 对 sphinx.po 的做法一样），再用 Sphinx 给扩展的 ``app.add_message_catalog`` 注册它。

**顺序。** 同一个消息域注册多次时，先注册的优先，后来的只当后备（``sphinx.locale.init``）。sphinx-book-theme
在它自己的 setup 里注册 booktheme 域，所以 _config.yml 的扩展列表里本扩展排在 ``sphinx_book_theme`` 之前。

**核对。** 所有扩展和主题都加载完以后（``builder-inited``），本扩展核对两个域里本书的每一条译文都真的生效了；
没生效（扩展排错了、``locale_dirs`` 被删了），构建就报错并说明该查哪里，而不是让网页悄悄显示台湾用语或英文。

生成的 .mo 文件不进仓库（.gitignore）：仓库里只有人能读、能改的 .po。
"""

from __future__ import annotations

from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from sphinx.errors import ExtensionError
from sphinx.locale import get_translation

LOCALES = Path(__file__).resolve().parents[1] / "locales"
DOMAIN = "booktheme"


def read_catalogue(po: Path, language: str) -> dict[str, str]:
    """``po`` 里已翻译、非 fuzzy 的条目：{英文: 中文}。"""
    with po.open("rb") as f:
        catalogue = read_po(f, locale=language, domain=po.stem)
    return {m.id: m.string for m in catalogue if m.id and isinstance(m.id, str) and m.string and not m.fuzzy}


def compile_catalogue(po: Path, language: str) -> Path:
    """把 ``po`` 编译成旁边同名的 .mo（.mo 已经比 .po 新就不动），返回 .mo 的路径。fuzzy 条目不编进去。"""
    mo = po.with_suffix(".mo")
    if mo.exists() and mo.stat().st_mtime >= po.stat().st_mtime:
        return mo
    with po.open("rb") as f:
        catalogue = read_po(f, locale=language, domain=po.stem)
    with mo.open("wb") as f:
        write_mo(f, catalogue)
    return mo


# 某个域的译文没生效时，该查哪里
HINTS = {
    "sphinx": "sphinx 域由 Sphinx 按 _config.yml 的 locale_dirs（应为 [book/locales]）加载",
    DOMAIN: "zh_ui 必须在 sphinx_book_theme 之前加载（先注册的译文优先）：请在 _config.yml 的 "
            "sphinx.config.extensions 里把 zh_ui 移到 sphinx_book_theme 前面",
}


def check_priority(domain: str, messages: dict[str, str], translate) -> None:
    """``translate``（``domain`` 域的 gettext）对本书目录里的每一条都给出本书的译文；否则报错并列出不一致的条目。"""
    got = {source: str(translate(source)) for source in messages}
    wrong = {source: text for source, text in got.items() if text != messages[source]}
    if wrong:
        raise ExtensionError(f"本书的 {domain}.po 没有生效，这些字符串用的是别人的译文：{wrong}。"
                             f"{HINTS.get(domain, '')}")


def setup(app):
    language = app.config.language
    folder = LOCALES / language / "LC_MESSAGES"
    catalogues = {po.stem: read_catalogue(po, language) for po in sorted(folder.glob("*.po"))}
    if DOMAIN in catalogues:
        compile_catalogue(folder / f"{DOMAIN}.po", language)
        app.add_message_catalog(DOMAIN, str(LOCALES))

    def check(app) -> None:  # 所有扩展和主题都加载完以后再核对：主题的译文这时也注册了
        for domain, messages in catalogues.items():
            check_priority(domain, messages, get_translation(domain))

    app.connect("builder-inited", check)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
