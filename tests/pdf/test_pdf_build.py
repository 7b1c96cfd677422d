"""``tools/pdf.py`` 的配置和重用规则，``book/_ext/pdf_download.py`` 的链接：不需要 TeX，``dev.py check`` 里也跑。"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pdf_download
import yaml
from docutils import nodes

from tools import pdf

ROOT = Path(__file__).resolve().parents[2]


def test_the_pdf_config_does_not_execute_and_uses_xelatex_without_jupyterbook_latex():
    config = pdf.pdf_config()
    assert config["execute"]["execute_notebooks"] == "off"
    assert config["latex"]["latex_engine"] == "xelatex" and config["latex"]["use_jupyterbook_latex"] is False
    elements = config["sphinx"]["config"]["latex_elements"]
    assert elements["papersize"] == "a4paper" and "ctex" in elements["fontenc"] and "Noto Serif CJK SC" in elements["fontpkg"]
    assert all(Path(p).is_absolute() and (Path(p) / f"{name}.py").is_file()
               for name, p in config["sphinx"]["local_extensions"].items())
    assert "print_edition" in config["sphinx"]["config"]["extensions"]
    site = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert site["execute"]["execute_notebooks"] == "force"  # 网站照样重新执行
    assert {k: v for k, v in config.items() if k not in ("execute", "latex", "sphinx")} == {
        k: v for k, v in site.items() if k not in ("execute", "latex", "sphinx")}


def test_a_pdf_is_reused_only_from_a_clean_build_of_the_same_inputs(tmp_path, monkeypatch):
    target = tmp_path / "book.pdf"
    target.write_bytes(b"%PDF")
    monkeypatch.setattr(pdf, "PDF", target)
    record = {"inputs": "甲", "returncode": 0, "mtime": target.stat().st_mtime_ns}
    assert pdf.up_to_date(record, "甲")
    assert not pdf.up_to_date(record, "乙")                       # 书、包或依赖变了
    assert not pdf.up_to_date(record, None)                       # 没有 git
    assert not pdf.up_to_date({**record, "returncode": 12}, "甲")  # 上次没建成
    assert not pdf.up_to_date({**record, "mtime": 1}, "甲")       # 之后有人换了这个文件
    target.unlink()
    assert not pdf.up_to_date(record, "甲")                       # 文件不在了


def test_the_site_is_rebuilt_when_tex_comes_or_goes(monkeypatch):
    """有 TeX 时网站里多了 PDF 和下载链接：没有 TeX 时建的网站，装上 TeX 后不能再拿来测（反过来也一样）。"""
    from tools.site import book_inputs

    monkeypatch.setattr(pdf, "missing_tools", lambda: [])
    with_tex = book_inputs()
    monkeypatch.setattr(pdf, "missing_tools", lambda: ["命令 xelatex"])
    assert with_tex is not None and book_inputs() != with_tex


def test_without_tex_the_message_says_what_to_install(monkeypatch):
    monkeypatch.setattr(pdf.shutil, "which", lambda cmd: None)
    missing = pdf.missing_tools()
    assert missing == ["命令 xelatex", "命令 latexmk"]
    code, log = pdf.build()
    assert code == 2 and log.startswith("不能生成 PDF：缺少命令 xelatex、命令 latexmk。") and "sudo apt-get install" in log


def _resolve(monkeypatch, tmp_path, fmt: str, with_pdf: bool, docname: str = "book/preface") -> nodes.Node:
    if with_pdf:
        (tmp_path / "t.pdf").write_bytes(b"x" * 2_512_000)
        monkeypatch.setenv(pdf_download.SITE_ENV, str(tmp_path / "t.pdf"))
    else:
        monkeypatch.delenv(pdf_download.SITE_ENV, raising=False)
    section = nodes.section()
    section += pdf_download.pdf_download_placeholder()
    app = SimpleNamespace(builder=SimpleNamespace(format=fmt))
    pdf_download._replace(app, section, docname)
    return section


def test_the_preface_links_the_pdf_only_when_the_site_has_it(monkeypatch, tmp_path):
    link = _resolve(monkeypatch, tmp_path, "html", True).next_node(nodes.reference)
    assert link["refuri"] == "../transformer-lab.pdf" and link.astext() == "下载本书的 PDF 版（2.5 MB）"
    without = _resolve(monkeypatch, tmp_path, "html", False)
    assert without.next_node(nodes.reference) is None and "python3 dev.py pdf" in without.astext()
    assert _resolve(monkeypatch, tmp_path, "latex", True).astext() == ""  # PDF 里不印


def test_the_header_and_the_built_site_get_the_pdf_only_when_it_exists(monkeypatch, tmp_path):
    monkeypatch.delenv(pdf_download.SITE_ENV, raising=False)
    config = SimpleNamespace(html_context={"default_mode": "light"})
    pdf_download._config_inited(None, config)
    assert "pdf_download" not in config.html_context
    (tmp_path / "t.pdf").write_bytes(b"x" * 830_000)
    monkeypatch.setenv(pdf_download.SITE_ENV, str(tmp_path / "t.pdf"))
    pdf_download._config_inited(None, config)
    assert config.html_context == {"default_mode": "light", "pdf_download": {"file": "transformer-lab.pdf", "size": "830 KB"}}
    out = tmp_path / "html"
    out.mkdir()
    pdf_download._finished(SimpleNamespace(builder=SimpleNamespace(format="html"), outdir=str(out)), None)
    assert (out / "transformer-lab.pdf").read_bytes() == b"x" * 830_000
    template = (ROOT / "book" / "_templates" / "pdf-link.html").read_text(encoding="utf-8")
    assert "{%- if pdf_download %}" in template and "pathto(pdf_download.file, 1)" in template
    theme = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["sphinx"]["config"]["html_theme_options"]
    assert theme["article_header_end"][0] == "pdf-link.html"
    assert json.dumps(pdf_download.size_text(25_000_000)) == '"25.0 MB"'
