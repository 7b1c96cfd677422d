"""自测页：在 Markdown 里写一行 ```{self-test}```，建网站时换成题库生成的自测小部件。

题库在 ``transformer_lab.lessons.question_bank``（数值答案由工具包当场算出），HTML 由
``transformer_lab.widgets.self_test.render_html`` 生成——和 notebook 里 ``tl.self_test()`` 是同一段。
每道题的“回去看”链接指向某一章的某个小节：小节按标题在那一章的 doctree 里找，找不到就发警告
（``-W`` 下构建失败），所以章节标题改了、链接不会悄悄失效。
"""

from __future__ import annotations

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from transformer_lab.lessons.question_bank import CHAPTERS, as_dicts, questions
from transformer_lab.widgets.self_test import render_html

logger = logging.getLogger(__name__)


class self_test_placeholder(nodes.General, nodes.Element):
    """占位：等所有页面都读完（小节的锚点都有了）再换成 HTML。"""


class SelfTestDirective(SphinxDirective):
    has_content = False

    def run(self):
        node = self_test_placeholder()
        node.source, node.line = self.get_source_info()
        return [node]


def _section_anchor(env, docname: str, title: str, where) -> str:
    for section in env.get_doctree(docname).findall(nodes.section):
        if section[0].astext().strip() == title and section["ids"]:
            return section["ids"][0]
    logger.warning(f"自测题链接的小节“{title}”在 {docname} 里找不到（标题改了？）", location=where)
    return ""


def _replace(app, doctree, docname) -> None:
    for node in list(doctree.findall(self_test_placeholder)):
        def link(chapter: int, section: str | None) -> str:
            target = f"notebooks/{CHAPTERS[chapter][0]}"
            if target not in app.env.all_docs:
                logger.warning(f"自测题链接的章节 {target} 不在书里", location=node)
                return "#"
            uri = app.builder.get_relative_uri(docname, target)
            anchor = _section_anchor(app.env, target, section, node) if section else ""
            return f"{uri}#{anchor}" if anchor else uri

        html = render_html(as_dicts(questions(), link), prefix="tlq")
        node.replace_self(nodes.raw("", html, format="html"))


def _always_rewrite(app, env, added, changed, removed):
    """题库在 Python 包里，Sphinx 察觉不到它的改动：每次构建都重新生成自测页。"""
    return [doc for doc in env.found_docs if doc.endswith("self_test")]


def setup(app):
    app.add_node(self_test_placeholder)
    app.add_directive("self-test", SelfTestDirective)
    app.connect("doctree-resolved", _replace)
    app.connect("env-get-outdated", _always_rewrite)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
