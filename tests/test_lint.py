"""代码风格：ruff 按 ``pyproject.toml`` 里 ``[tool.ruff]`` 的规则检查整个仓库（包、测试、基准、notebook）。

本地想自动改好导入顺序之类的问题：``.venv/bin/ruff check --fix .``（Windows：``.venv\\Scripts\\ruff``）。
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools.site import ROOT


def _ruff() -> list[str]:
    exe = Path(sys.executable).with_name("ruff.exe" if sys.platform == "win32" else "ruff")
    if exe.exists():
        return [str(exe)]
    if shutil.which("ruff"):
        return ["ruff"]
    pytest.fail("找不到 ruff：它在 pyproject.toml 的 dev 依赖里，用 python dev.py test 会自动装好。")


def _check(*paths: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([*_ruff(), "check", "--no-cache", "--output-format", "concise",
                           "--config", str(ROOT / "pyproject.toml"), *paths],
                          cwd=cwd, capture_output=True, text=True)


def test_the_whole_repository_passes_ruff():
    proc = _check(".")
    assert proc.returncode == 0, "ruff 发现了问题（ruff check --fix . 能自动改好大部分）：\n" + proc.stdout[-4000:]


def test_ruff_really_checks_with_the_projects_rules(tmp_path):
    """反证：同样的配置下，一个有未定义名字、没用的导入、乱序导入的文件必须被挑出来。"""
    bad = tmp_path / "bad.py"
    bad.write_text("import sys\nimport os\n\nprint(undefined_name)\n", encoding="utf-8")
    proc = _check(str(bad), cwd=tmp_path)
    assert proc.returncode == 1
    for code in ("F821", "F401", "I001"):
        assert f"{code} " in proc.stdout, proc.stdout
