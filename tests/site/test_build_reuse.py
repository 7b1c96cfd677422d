"""网站测试什么时候可以直接用上一次建好的网站（``tools.site.reusable``、``book_inputs``），什么时候必须重建。"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tools.site import book_inputs, reusable

CLEAN = {"run": "上一次", "returncode": 0, "log": "jupyter_book.cli.main build\n完成", "inputs": "甲", "built_at": 7}


def test_a_clean_build_from_the_same_inputs_is_reused_and_anything_else_is_rebuilt():
    assert reusable(CLEAN, "这一次", "甲", 7)
    assert reusable({**CLEAN, "returncode": 1}, "上一次", None, None)  # 同一次运行：别的进程建的，成败都照用
    assert not reusable(CLEAN, "这一次", "乙", 7)  # 书、包或依赖变了
    assert not reusable(CLEAN, "这一次", None, 7)  # 没有 git，算不出输入
    assert not reusable(CLEAN, "这一次", "甲", 8)  # 之后有人重建过 _build/html（可能是从别的输入）
    assert not reusable(CLEAN, "这一次", "甲", None)  # _build/html 不在了
    assert not reusable({**CLEAN, "returncode": 2}, "这一次", "甲", 7)
    assert not reusable({**CLEAN, "log": CLEAN["log"] + "\nWARNING: 找不到引用"}, "这一次", "甲", 7)
    assert reusable({**CLEAN, "log": "pip WARNING: 额外的索引\n" + CLEAN["log"]}, "这一次", "甲", 7)  # pip 的提示不算
    assert not reusable({k: v for k, v in CLEAN.items() if k != "inputs"}, "这一次", "甲", 7)  # 旧格式的记录


@pytest.mark.skipif(shutil.which("git") is None, reason="没有 git")
def test_the_inputs_change_with_the_book_and_not_with_the_tests(tmp_path):
    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    for rel, text in (("notebooks/01.ipynb", "{}"), ("tests/test_a.py", "x = 1"), ("README.md", "说明"), ("_toc.yml", "")):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    git("init", "-q")
    git("add", ".")
    first = book_inputs(tmp_path)
    assert first is not None and first == book_inputs(tmp_path)
    (tmp_path / "tests" / "test_a.py").write_text("x = 2", encoding="utf-8")
    (tmp_path / "README.md").write_text("新的说明", encoding="utf-8")
    assert book_inputs(tmp_path) == first  # 只改了测试和 README：还是同一个网站
    (tmp_path / "notebooks" / "01.ipynb").write_text('{"cells": []}', encoding="utf-8")
    second = book_inputs(tmp_path)
    assert second != first
    (tmp_path / "notebooks" / "02.ipynb").write_text("{}", encoding="utf-8")  # 还没 git add 的新章也算
    assert book_inputs(tmp_path) not in (first, second)
    assert book_inputs(tmp_path / "没有这个目录") is None


def test_the_inputs_do_not_depend_on_how_pytest_was_started(monkeypatch):
    """``python -m pytest`` 把仓库根目录放上 sys.path，那里有可编辑安装的 transformer_lab.egg-info；xdist 的工作进程
    没有。摘要必须一样，否则换个启动方式就白白重建网站。"""
    from tools.site import ROOT

    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(ROOT))])
    without = book_inputs()
    monkeypatch.setattr(sys, "path", [str(ROOT), *sys.path])
    assert without is not None and book_inputs() == without

