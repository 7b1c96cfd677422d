"""自测页：在 Markdown 里写一行 ```{self-test}```，建网站时换成题库生成的自测小部件。

题库和小部件都在 ``transformer_lab.quiz``（数值答案由工具包当场算出）：HTML 由 ``render_html`` 生成——
和 notebook 里 ``tl.self_test()`` 是同一段。每道题的“回去看”链接指向某一章的某个小节：章的文档名取自
``transformer_lab.chapters``，小节按标题在那一章的 doctree 里找，找不到就发警告（``-W`` 下构建失败），
所以章节标题改了、链接不会悄悄失效。

题目在 Python 包里，Sphinx 自己看不到它们的改动：指令用 ``env.note_dependency`` 把整个工具包的源文件
（题目、答案要用的 core/lessons、小部件的脚本和样式）和各章的 notebook（小节标题）都登记为这一页的依赖，
其中任何一个比上次读这一页时新，Sphinx 就重读这一页、重新生成自测。

PDF（LaTeX 构建）里换成印刷版：题目原地印出，答案和讲解收进这一页末尾的“自测答案”一节。

另一行 ```{exercise-links}``` 换成一张清单：每一章有练习的（``tl.exercises.for_chapter``），一条链接指向那一章的
“动手写”一节（锚点同样按标题在 doctree 里找，找不到就警告），后面写着这一章的练习名。
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from transformer_lab import chapters, exercises, quiz

logger = logging.getLogger(__name__)
PACKAGE = Path(quiz.__file__).resolve().parents[1]  # transformer_lab/


class self_test_placeholder(nodes.General, nodes.Element):
    """占位：等所有页面都读完（小节的锚点都有了）再换成 HTML。"""


class exercise_links_placeholder(nodes.General, nodes.Element):
    """占位：等所有页面都读完，再换成各章“动手写”的链接清单。"""


EXERCISE_SECTION = "动手写"


def dependencies(srcdir: str | Path) -> list[Path]:
    """自测页依赖的文件：工具包里的每个 .py/.js/.css，加上每一章的 notebook（在 ``srcdir`` 下，有的才算：
    Sphinx 把找不到的依赖当成“每次都变了”）。"""
    package = [p for p in sorted(PACKAGE.rglob("*")) if p.suffix in {".py", ".js", ".css"}]
    notebooks = [Path(srcdir) / c.notebook for c in chapters.CHAPTERS]
    return package + [p for p in notebooks if p.is_file()]


class SelfTestDirective(SphinxDirective):
    has_content = False
    placeholder = self_test_placeholder

    def run(self):
        for path in dependencies(self.env.srcdir):
            self.env.note_dependency(str(path))
        node = self.placeholder()
        node.source, node.line = self.get_source_info()
        return [node]


class ExerciseLinksDirective(SelfTestDirective):
    placeholder = exercise_links_placeholder


def _section_anchor(env, docname: str, title: str, where) -> str:
    for section in env.get_doctree(docname).findall(nodes.section):
        if section[0].astext().strip() == title and section["ids"]:
            return section["ids"][0]
    logger.warning(f"自测题链接的小节“{title}”在 {docname} 里找不到（标题改了？）", location=where)
    return ""


def _replace(app, doctree, docname) -> None:
    for node in list(doctree.findall(self_test_placeholder)):
        def link(number: int, section: str | None) -> str:
            target = chapters.chapter(number).docname
            if target not in app.env.all_docs:
                logger.warning(f"自测题链接的章节 {target} 不在书里", location=node)
                return "#"
            uri = app.builder.get_relative_uri(docname, target)
            anchor = _section_anchor(app.env, target, section, node) if section else ""
            return f"{uri}#{anchor}" if anchor else uri

        if app.builder.format == "latex":
            _print_self_test(node, quiz.as_dicts(quiz.questions(), lambda number, section: ""))
            continue
        html = quiz.render_html(quiz.as_dicts(quiz.questions(), link), prefix="tlq")
        node.replace_self(nodes.raw("", html, format="html"))
    for node in list(doctree.findall(exercise_links_placeholder)):
        node.replace_self(_exercise_list(app, docname, node))


ANSWERS_TITLE = "自测答案"
LETTERS = "ABCDEFGHIJ"


def _print_self_test(node, items: list[dict]) -> None:
    """PDF 里的自测：题目（选择题带 A、B、C……选项）原地印出，答案和讲解收进这一页末尾的“自测答案”一节。"""
    questions, answers = [], nodes.section(ids=[], names=[])
    answers += nodes.title(ANSWERS_TITLE, ANSWERS_TITLE)
    for q in items:
        kind = {"choice": "单选", "number": "填数", "predict": "先猜后看"}[q["kind"]]
        head = f"{q['number']}. [{kind}] {q['prompt']}"
        questions.append(nodes.paragraph("", "", nodes.strong(head, head)))
        if q["choices"]:
            choices = nodes.bullet_list()
            for letter, choice in zip(LETTERS, q["choices"]):
                choices += nodes.list_item("", nodes.paragraph(text=f"{letter}. {choice}"))
            questions.append(choices)
        questions.append(nodes.paragraph(text=f"（回去看：{q['where']}）"))
        if q["kind"] == "number":
            unit = f" {q['unit']}" if q["unit"] else ""
            said = f"{q['number']}. {q['answer']:g}{unit}（误差在 ±{q['tolerance']:g} 以内都算对）"
        else:
            said = f"{q['number']}. {LETTERS[q['correct']]}. {q['choices'][q['correct']]}"
        answers += nodes.paragraph("", "", nodes.strong(said, said))
        for line in ([q["why"][q["correct"]]] if q["why"] else []) + list(q["reveal"]) + ([q["explain"]] if q["explain"] else []):
            answers += nodes.paragraph(text=line)
    page = node
    while page.parent is not None and not isinstance(page.parent, (addnodes.start_of_file, nodes.document)):
        page = page.parent
    node.replace_self(questions)
    page += answers


def _exercise_list(app, docname: str, where) -> nodes.bullet_list:
    """每一章有练习的，一条：“第 N 章 短章名”链接到那一章的“动手写”一节，后面是练习名。"""
    items = nodes.bullet_list()
    for chapter in chapters.CHAPTERS:
        names = exercises.for_chapter(chapter.number)
        if not names:
            continue
        if chapter.docname not in app.env.all_docs:
            logger.warning(f"动手写的链接：章节 {chapter.docname} 不在书里", location=where)
            continue
        anchor = _section_anchor(app.env, chapter.docname, EXERCISE_SECTION, where)
        uri = app.builder.get_relative_uri(docname, chapter.docname) + (f"#{anchor}" if anchor else "")
        para = nodes.paragraph()
        para += nodes.reference("", f"第 {chapter.number} 章 {chapter.short}", internal=True, refuri=uri)
        para += nodes.Text("：")
        for i, name in enumerate(names):
            para += nodes.Text("、" if i else "")
            para += nodes.literal(text=name)
        items += nodes.list_item("", para)
    return items


def setup(app):
    app.add_node(self_test_placeholder)
    app.add_node(exercise_links_placeholder)
    app.add_directive("self-test", SelfTestDirective)
    app.add_directive("exercise-links", ExerciseLinksDirective)
    app.connect("doctree-resolved", _replace)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
