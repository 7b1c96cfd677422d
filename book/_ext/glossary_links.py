"""术语链接：正文里写普通的 Markdown 链接，建书时换成 Sphinx 的术语引用。

章节里链到术语表的写法是 ``[词元](../book/glossary.md#词元)``（词条名里有空格时写成
``[KV 缓存](<../book/glossary.md#KV 缓存>)``）。同一行字在两个地方都好用：

* 在 JupyterLab 里（jupyterlab-myst 渲染），它是一个普通链接，点开就是 ``book/glossary.md``。
  若写成 MyST 的 ``{term}`` 角色，jupyterlab-myst 只在本 notebook 里找词条，找不到就在控制台报错，
  链接也点不开（术语表在另一个文件里）。
* 在网站上，MyST 把它当成“链到 glossary 文档里某个锚点”，可锚点其实是词条，它找不到就警告。
  本扩展在 MyST 解析链接之前（post-transform 优先级 8 < MyST 的 9 < Sphinx 的 10）把这种链接改成
  ``{term}`` 同样的 ``std:term`` 引用：生成的网页和写 ``{term}`` 一模一样；词条名拼错时 ``-n`` 构建照样报
  "term not in glossary"。
"""

from __future__ import annotations

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform

GLOSSARY_DOC = "book/glossary"


class GlossaryLinks(SphinxPostTransform):
    """把指向术语表锚点的 Markdown 链接换成术语引用。"""

    default_priority = 8  # 早于 MyST 的链接解析 (9) 和 Sphinx 的引用解析 (10)

    def run(self, **kwargs) -> None:
        for node in list(self.document.findall(addnodes.pending_xref)):
            if (node.get("reftype"), node.get("refdomain"), node.get("reftarget")) != ("myst", "doc", GLOSSARY_DOC):
                continue
            term = node.get("reftargetid")
            if not term:  # 链到整个术语表（没有 #词条）：照常按文档链接处理
                continue
            text = node.astext()
            ref = addnodes.pending_xref("", refdomain="std", reftype="term", reftarget=term, refexplicit=True,
                                        refwarn=True, refdoc=node.get("refdoc", self.env.docname))
            ref.source, ref.line = node.source, node.line
            ref += nodes.inline(text, text, classes=["xref", "std", "std-term"])
            node.replace_self(ref)


def setup(app):
    app.add_post_transform(GlossaryLinks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
