#!/usr/bin/env python3
"""Transformer 实验室的开发命令（Windows、macOS、Linux 通用，只需要 Python >= 3.10）。

    python dev.py book      # 准备环境并构建网站 → _build/html/index.html
    python dev.py pdf       # 全书的 PDF（要 TeX：xelatex + ctex）→ _build/pdf/transformer-lab.pdf
    python dev.py test      # 准备环境并运行全部测试（单元、notebook、网站构建、浏览器）；可以接 pytest 参数
    python dev.py check     # 写代码时的快速检查：代码风格、单元测试、文档里的例子（不建网站、不跑 notebook）
    python dev.py refresh   # 重新运行 notebook，把输出写回 .ipynb（改过 notebook 或包之后必做）；可以只给几章
    python dev.py lab       # 准备环境并打开 JupyterLab（中文界面，从 notebooks/ 开始）
    python dev.py bench     # 运行 benchmarks/ 下的测量脚本（可以给文件名里的词，只跑那几个）
    python dev.py lock      # 按 PyPI 当天的版本重新生成 constraints.txt（之后要 refresh 和 test）

没有激活虚拟环境时，会在仓库里建一个 .venv 并在里面安装 requirements.txt（用 constraints.txt 钉死的版本）；
依赖清单和钉死的版本都没变时跳过安装。然后把第 10、11 章的三个真模型（PyPI 上钉死版本的 wheel，共约 268 MB）
下载到 .models/ 并核对 sha256；已经下载过、核对无误时不联网。环境的细节都在 tools/env.py。
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tools import env

BOOK_CMD = ["-c", "from jupyter_book.cli.main import main; main()", "build", ".", "--all", "-W", "-n", "--keep-going"]


def book() -> None:
    """先建 PDF（有 TeX 时；输入没变就重用上次的），网站上再放一个下载链接；没有 TeX 时网站照样建，只是不带 PDF。"""
    from tools import pdf as book_pdf

    missing = book_pdf.missing_tools()
    if missing:
        print(f"（{book_pdf.no_tex_message(missing)}网站照样生成，只是没有 PDF 下载链接。）", flush=True)
    else:
        print("先生成 PDF（python3 dev.py pdf，约一分钟；书的内容没变时直接用上次的）……", flush=True)
        code, log = book_pdf.build_once()
        if code:
            print(log[-6000:])
            sys.exit(code)
        os.environ[book_pdf.SITE_ENV] = str(book_pdf.PDF)
    env.run([sys.executable, *BOOK_CMD])
    print(f"\n网站已生成：{env.ROOT / '_build' / 'html' / 'index.html'}（用浏览器直接打开即可）")


def pdf() -> None:
    """全书的 PDF（tools/pdf.py）：不重新执行 notebook，用存档的输出排版。没有 TeX 时用中文说明要装什么，退出码 2。"""
    from tools import pdf as book_pdf

    code, log = book_pdf.build_once(force=True)
    if code:
        print(log[-6000:])
        sys.exit(code)
    print(f"\nPDF 已生成：{book_pdf.PDF}（{book_pdf.PDF.stat().st_size / 1e6:.1f} MB）")


def test() -> None:
    env.run([sys.executable, "-m", "pytest", *sys.argv[2:]])


def check() -> None:
    """快速检查：tests/ 和包里的 doctest，跳过标成 slow 的测试（建网站、浏览器、JupyterLab），不运行 notebook。"""
    env.run([sys.executable, "-m", "pytest", "tests", "transformer_lab", "-m", "not slow", *sys.argv[2:]])


def refresh() -> None:
    from tools.refresh import refresh as run_notebooks

    run_notebooks([Path(p).resolve() for p in sys.argv[2:]])


def lab() -> None:
    env.run([sys.executable, "-m", "jupyterlab", *env.LAB_OPTIONS, *sys.argv[2:]])


def bench() -> None:
    env.run([sys.executable, "-m", "benchmarks.run_all", *sys.argv[2:]])


COMMANDS = {"book": book, "pdf": pdf, "test": test, "check": check, "refresh": refresh, "lab": lab, "bench": bench}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in (*COMMANDS, "lock"):
        sys.exit(__doc__)
    if sys.argv[1] == "lock":  # 用运行 dev.py 的这个 Python 建临时环境，不碰 .venv
        env.write_lock()
        sys.exit()
    for name, value in env.process_env(sys.argv[1]).items():  # 在导入 NumPy 之前；子进程（pytest、内核、jupyter-book）都继承
        os.environ.setdefault(name, value)
    env.ensure_env()
    for name, value in env.same_arithmetic().items():  # 要在虚拟环境里才导入得了 NumPy；子进程都继承
        os.environ.setdefault(name, value)
    env.ensure_models()
    COMMANDS[sys.argv[1]]()
