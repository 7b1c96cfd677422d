"""PDF 测试的 fixture：建一次 PDF（``tools.pdf.build_once``：网站的构建先建了、输入又没变时直接用它那一份）。

没有 TeX（或读 PDF 的 poppler 工具）时本地跳过，并用中文说明要装什么；CI（环境变量 ``CI``）里不许跳过，直接失败。
fixture 用 ``slow_fixture`` 声明：``python dev.py check`` 不建 PDF。
"""

from __future__ import annotations

import os
import shutil

import pytest

from helpers.slow import slow_fixture
from tools import pdf

POPPLER = ("pdftotext", "pdffonts", "pdfimages", "pdfinfo")


@slow_fixture(scope="session")
def book_pdf():
    """全书的 PDF（路径）；xelatex 的日志在 ``tools.pdf.LOG``，.tex 在它旁边。"""
    missing = pdf.missing_tools() + [f"命令 {cmd}" for cmd in POPPLER if shutil.which(cmd) is None]
    if missing:
        message = pdf.no_tex_message(missing)
        if os.environ.get("CI"):
            pytest.fail(f"CI 里必须生成并检查 PDF。{message}")
        pytest.skip(f"PDF 测试已跳过。{message}")
    code, log = pdf.build_once()
    assert code == 0, "PDF 生成失败：\n" + log[-4000:]
    return pdf.PDF
