"""网站上的 PDF 下载：文件放在网站自己的根目录（``transformer-lab.pdf``，不靠任何第三方），页首和前言各一个链接，
链接旁写着文件大小。

PDF 由 ``python3 dev.py book`` 在建网站之前生成（``tools/pdf.py``，要 TeX），成功后它把 PDF 的路径放进环境变量
``SITE_ENV``。本扩展只认这个变量：

* 设了（文件也在）：建完网站时把 PDF 复制进网站根目录；页首（``book/_templates/pdf-link.html``，由模板变量
  ``pdf_download`` 控制）和前言里 ```{pdf-download}``` 的位置各放一个下载链接，写明大小。
* 没设（这台机器没有 TeX）：不复制、页首没有链接；前言的那一处用一句中文说明怎样自己生成 PDF。网站里因此
  从不出现指向不存在的文件的链接。

PDF 自己的 LaTeX 构建里，```{pdf-download}``` 什么也不印。
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

SITE_ENV = "TRANSFORMER_LAB_PDF"   # 与 tools/pdf.py 的 SITE_ENV 相同（扩展不导入写书的工具）
FILE_NAME = "transformer-lab.pdf"  # 在网站里的位置：根目录
# 网页上的英文词都要是书里自己用过的（tests/site/test_site.py 的界面语言检查按 book/*.md 的词放行）：
# PDF、TeX 在前言里，python、dev、py 在前言的命令里，README 在自测页里。
HOW_TO_BUILD = ("这个网站生成时没有附上 PDF 版（生成它的电脑上没有装 TeX）。想要 PDF，请在仓库根目录运行 "
                "python3 dev.py pdf，要装什么见仓库的 README。")


class pdf_download_placeholder(nodes.General, nodes.Element):
    """占位：写出页面时按构建器和 PDF 在不在，换成链接、说明或什么也没有。"""


def available_pdf() -> Path | None:
    """``dev.py book`` 刚生成（或确认没变）的 PDF；没有时 None。"""
    path = os.environ.get(SITE_ENV)
    return Path(path) if path and Path(path).is_file() else None


def size_text(size: int) -> str:
    """文件大小，写在链接旁：``2.5 MB``、``830 KB``。

    >>> size_text(2_512_000), size_text(830_000)
    ('2.5 MB', '830 KB')
    """
    return f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.0f} KB"


class PdfDownloadDirective(SphinxDirective):
    has_content = False

    def run(self):
        node = pdf_download_placeholder()
        node.source, node.line = self.get_source_info()
        return [node]


def _config_inited(app, config) -> None:
    pdf = available_pdf()
    if pdf is not None:
        config.html_context = {**config.html_context,
                               "pdf_download": {"file": FILE_NAME, "size": size_text(pdf.stat().st_size)}}


def _replace(app, doctree, docname) -> None:
    for node in list(doctree.findall(pdf_download_placeholder)):
        pdf = available_pdf()
        if app.builder.format != "html":
            node.parent.remove(node)
        elif pdf is None:
            node.replace_self(nodes.paragraph(text=HOW_TO_BUILD))
        else:
            href = "../" * docname.count("/") + FILE_NAME
            label = f"下载本书的 PDF 版（{size_text(pdf.stat().st_size)}）"
            para = nodes.paragraph()
            para += nodes.reference("", label, refuri=href, classes=["tl-pdf-download"])
            para += nodes.Text("。PDF 里的可交互图是滑块在初始位置时的一帧，小测验和练习的答案印在每章末尾。")
            node.replace_self(para)


def _finished(app, exception) -> None:
    pdf = available_pdf()
    if exception is None and app.builder.format == "html" and pdf is not None:
        shutil.copyfile(pdf, Path(app.outdir) / FILE_NAME)


def setup(app):
    app.add_node(pdf_download_placeholder)
    app.add_directive("pdf-download", PdfDownloadDirective)
    app.connect("config-inited", _config_inited)
    app.connect("doctree-resolved", _replace)
    app.connect("build-finished", _finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
