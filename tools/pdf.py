"""全书的 PDF 版：``python dev.py pdf`` → ``_build/pdf/transformer-lab.pdf``。

走 Jupyter Book 1 的 LaTeX 路：``jupyter-book build --builder latex``（Sphinx 的 LaTeX 写出器）写出
``_build/latex/transformer-lab.tex``，再由 ``latexmk`` 调 xelatex 排成 PDF。中文靠 ctex（xeCJK），字体是 Debian 的
``fonts-noto-cjk``（思源/Noto 宋体、黑体）和 DejaVu（拉丁、希腊字母、代码），都随系统安装，读者不必另买字体。

配置是 ``_config.yml`` 加上 ``PDF_OVERRIDES`` 写成的另一份（``_build/pdf/_config.yml``），只给这一次构建用：

* **不重新执行 notebook**（``execute_notebooks: off``）：nbval 严格模式保证存档的输出就是重新运行的结果，PDF
  直接用存档的输出排版，又快又确定。
* ``use_jupyterbook_latex: false``：Jupyter Book 默认加上的 ``sphinx_jupyterbook_latex`` 会把引擎改回它自己的设置、
  往导言区追加东西，它的文档类还要 ``bbm.sty``（只在 509 MB 的 texlive-fonts-extra 里）。不用它，由这里的
  ``latex_elements`` 决定一切。
* ``book/_ext/print_edition.py``（网站和 PDF 都加载它，只在 LaTeX 构建里起作用）：可交互图印成初始的一帧加图注，小测验和动手写的答案
  挪到每章末尾，代码输出去掉 ANSI 转义。

xelatex 缺字时只在日志里写一行 “Missing character” 而照样退出 0——中文会悄悄消失，所以退出码不可信：
``tests/pdf/`` 读日志和 PDF 本身（``tools/pdf_checks.py``）。
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAME = "transformer-lab"
PDF_DIR = ROOT / "_build" / "pdf"
PDF = PDF_DIR / f"{NAME}.pdf"
# Sphinx 的工作目录与网站的 _build/.doctrees、_build/jupyter_execute 分开：测试里网站和 PDF 可能同时在建，
# 两者的环境（扩展、执不执行 notebook）也不同，共用一份会互相作废
WORK = PDF_DIR / "build"
LATEX_DIR = WORK / "_build" / "latex"
LOG = LATEX_DIR / f"{NAME}.log"
CONFIG = PDF_DIR / "_config.yml"
STAMP = PDF_DIR / "build.json"       # 最近一次构建：输入的摘要、退出码、日志、用时（build_once 据此重用）
LOCK = PDF_DIR / ".build.lock"
# dev.py book 建好（或重用）PDF 之后设这个环境变量（PDF 的路径），book/_ext/pdf_download.py 据此把它放进网站、
# 加上下载链接；没设就不放、不加链接。
SITE_ENV = "TRANSFORMER_LAB_PDF"

# 排 PDF 要的 Debian 包（--no-install-recommends；约 140 MB 下载，安装约 1 分钟）。
# texlive-latex-extra：Sphinx 的 LaTeX 样式要的 titlesec、tabulary、framed、upquote……；poppler-utils：测试读 PDF
# （pdftotext、pdffonts、pdfimages、pdfinfo）。.ci/run 装的是同一行。
APT_PACKAGES = ("texlive-xetex", "texlive-lang-chinese", "texlive-latex-recommended", "texlive-latex-extra",
                "texlive-fonts-recommended", "latexmk", "fonts-noto-cjk", "fonts-dejavu-core", "poppler-utils")
INSTALL_HINT = ("Debian/Ubuntu 上安装：sudo apt-get install --no-install-recommends " + " ".join(APT_PACKAGES)
                + "（约 140 MB 下载）。其他系统：装 TeX Live（要有 xelatex、latexmk 和 ctex 宏包）、"
                "Noto CJK（思源）中文字体、DejaVu 字体和 poppler 的命令行工具。")

CJK_FONTS = ("Noto Serif CJK SC", "Noto Sans CJK SC", "Noto Sans Mono CJK SC")
LATIN_FONTS = ("DejaVu Serif", "DejaVu Sans", "DejaVu Sans Mono", "Latin Modern Math")

# LaTeX 导言区。拉丁字母用 DejaVu：它有希腊字母、∈ ∂ 之类的符号和上下标字母（ᵀ ᵢ），正文和代码输出里的这些字
# 不会缺；中文用 Noto CJK 的简体中文字形。DejaVu Serif 没有的两类字借 xeCJK 的“子区块”换字体：数学花体字母
# （术语表里的词表 𝒱）用 TeX Live 自带的 Latin Modern Math，表情符号（第 11 章的字节例子 😀）用 DejaVu Sans。
# DejaVu 也没有的圆圈数字（第 13 章 RLHF 图里的 ① ② ③）和回车符 ⏎（第 13 章标出“答完了”的换行）归到中文一类，
# 由 Noto CJK 排（三种 Noto CJK 字体都有这两样字）。
# 章名里已经写着“第 N 章”，所以不再编号（secnumdepth = -1）；目录只列部分和章（tocdepth = 0，两页），
# 各节在 PDF 阅读器的书签里。
FONTS = r"""
\setmainfont{DejaVu Serif}[Scale=0.9]
\setsansfont{DejaVu Sans}[Scale=0.9]
\setmonofont{DejaVu Sans Mono}[Scale=0.8]
\xeCJKDeclareSubCJKBlock{MathAlnum}{"1D400 -> "1D7FF}
\xeCJKDeclareSubCJKBlock{Emoji}{"1F300 -> "1FAFF}
\setCJKmainfont{Noto Serif CJK SC}[MathAlnum={Latin Modern Math}, Emoji={DejaVu Sans}]
\setCJKsansfont{Noto Sans CJK SC}[MathAlnum={Latin Modern Math}, Emoji={DejaVu Sans}]
\setCJKmonofont{Noto Sans Mono CJK SC}[MathAlnum={Latin Modern Math}, Emoji={DejaVu Sans}]
\xeCJKsetcharclass{"2460}{"24FF}{1}
\xeCJKsetcharclass{"23CE}{"23CE}{1}
"""
PREAMBLE = r"""
\makeatletter\renewcommand{\@pnumwidth}{2.2em}\makeatother
\setcounter{secnumdepth}{-1}
\setcounter{tocdepth}{0}
\renewcommand{\contentsname}{目录}
\linespread{1.25}
\sphinxsetup{verbatimwrapslines=true}
"""

PDF_OVERRIDES = {
    "execute": {"execute_notebooks": "off"},
    "latex": {"latex_engine": "xelatex", "use_jupyterbook_latex": False,
              "latex_documents": {"targetname": f"{NAME}.tex"}},
    "sphinx": {"config": {
        "latex_use_xindy": False,
        "latex_show_urls": "no",
        "latex_elements": {
            "papersize": "a4paper",
            "pointsize": "11pt",
            "extraclassoptions": "openany,oneside",
            "babel": "",
            "fncychap": "",
            "fontenc": r"\usepackage[UTF8, fontset=none, heading=false]{ctex}",
            "fontpkg": FONTS,
            "preamble": PREAMBLE,
            "printindex": "",
            "makeindex": "",
            "sphinxsetup": "hmargin={2.2cm,2.2cm}, vmargin={2.5cm,2.5cm}",
        },
    }},
}


def missing_tools() -> list[str]:
    """排 PDF 还缺的东西（中文短语），什么都不缺时是空列表。"""
    missing = [f"命令 {cmd}" for cmd in ("xelatex", "latexmk") if shutil.which(cmd) is None]
    if shutil.which("kpsewhich") and not _run_quiet(["kpsewhich", "ctex.sty"]):
        missing.append("LaTeX 宏包 ctex")
    if shutil.which("fc-list"):
        families = _run_quiet(["fc-list", ":", "family"])
        missing += [f"字体 {font}" for font in (*CJK_FONTS, *LATIN_FONTS) if font not in families]
    return missing


def _run_quiet(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return ""


def no_tex_message(missing: list[str]) -> str:
    """没有 TeX 时给读者的话：缺什么、怎么装。"""
    return f"不能生成 PDF：缺少{'、'.join(missing)}。PDF 用 xelatex 和 ctex 排版。{INSTALL_HINT}"


def _merge(base: dict, extra: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in extra.items():
        out[key] = _merge(out.get(key) or {}, value) if isinstance(value, dict) else value
    return out


def pdf_config(root: Path = ROOT) -> dict:
    """这次构建用的配置：``_config.yml`` + ``PDF_OVERRIDES``。本书扩展的目录写成绝对路径（Jupyter Book 按配置文件
    所在的目录解析它，而这份配置在 ``_build/pdf/`` 里）。"""
    import yaml

    config = _merge(yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8")), PDF_OVERRIDES)
    sphinx = config["sphinx"]
    sphinx["local_extensions"] = {name: str((root / path).resolve()) for name, path in sphinx["local_extensions"].items()}
    return config


def build(root: Path = ROOT) -> tuple[int, str]:
    """建 PDF，返回 (退出码, 日志)。日志是 jupyter-book 和 latexmk 的输出；xelatex 自己的日志在 ``LOG``。
    没有 TeX 时退出码 2、日志是 ``no_tex_message``。"""
    missing = missing_tools()
    if missing:
        return 2, no_tex_message(missing)
    import yaml

    start = time.monotonic()
    PDF_DIR.mkdir(parents=True, exist_ok=True)
    CONFIG.write_text(yaml.safe_dump(pdf_config(root), allow_unicode=True, sort_keys=False), encoding="utf-8")
    if WORK.exists():  # 上次的 .tex、图、辅助文件和 doctree：Sphinx 只增不删，留着会混进旧章节的图
        shutil.rmtree(WORK)
    PDF.unlink(missing_ok=True)
    sphinx = subprocess.run([sys.executable, "-c", "from jupyter_book.cli.main import main; main()", "build", ".",
                             "--builder", "latex", "--config", str(CONFIG), "--path-output", str(WORK), "--all", "-W", "-n", "--keep-going"],
                            cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log = sphinx.stdout
    if sphinx.returncode:
        return sphinx.returncode, log
    # latexmk 按 Sphinx 写的 latexmkrc 调 xelatex（-xelatex 与它一致）；-interaction=nonstopmode：出错不停下来等键盘
    tex = subprocess.run(["latexmk", "-xelatex", "-interaction=nonstopmode", "-halt-on-error", "-file-line-error",
                          f"{NAME}.tex"], cwd=LATEX_DIR, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, errors="replace")
    log += tex.stdout
    built = LATEX_DIR / f"{NAME}.pdf"
    if tex.returncode or not built.is_file():
        return tex.returncode or 1, log
    shutil.copy2(built, PDF)
    return 0, log + f"\n用时 {time.monotonic() - start:.0f} 秒\n"


def recorded() -> dict:
    """``STAMP`` 里记下的最近一次构建（没有时是空字典）。"""
    try:
        return json.loads(STAMP.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def up_to_date(record: dict, inputs: str | None) -> bool:
    """记下的那次构建（``record``）建成了、读的输入和现在一样（``inputs``，见 ``tools.site.book_inputs``），
    PDF 也还是那次写出的那个文件。"""
    try:
        mtime = PDF.stat().st_mtime_ns
    except OSError:
        return False
    return (inputs is not None and record.get("inputs") == inputs and record.get("returncode") == 0
            and record.get("mtime") == mtime)


def build_once(root: Path = ROOT, force: bool = False) -> tuple[int, str]:
    """建 PDF，或者重用上一次建的：输入（书的每个文件、包的每一行、每个依赖的版本）一样也没变时，建出来的 PDF
    也一样（不执行 notebook，排版是确定的）。``dev.py book`` 和测试都用它：一次测试运行里网站的构建（它先建 PDF）
    和 PDF 的测试只真正建一次。同一台机器上的几个进程用同一把文件锁排队。``force``：总是重建（``dev.py pdf``）。"""
    from transformer_lab._cache import exclusive

    from tools.site import book_inputs

    PDF_DIR.mkdir(parents=True, exist_ok=True)
    with exclusive(LOCK):
        inputs = book_inputs(root)
        record = recorded()
        if not force and up_to_date(record, inputs):
            return 0, record.get("log", "")
        code, log = build(root)
        if code != 2:  # 没有 TeX 时不记：装上之后要建
            mtime = PDF.stat().st_mtime_ns if code == 0 else None
            STAMP.write_text(json.dumps({"inputs": inputs, "returncode": code, "mtime": mtime, "log": log[-20000:]},
                                        ensure_ascii=False), encoding="utf-8")
        return code, log
