#!/usr/bin/env python3
"""Transformer 实验室的开发命令（Windows、macOS、Linux 通用，只需要 Python >= 3.10）。

    python dev.py book      # 准备环境并构建网站 → _build/html/index.html
    python dev.py test      # 准备环境并运行全部测试（单元、notebook、网站构建、浏览器）
    python dev.py check     # 写代码时的快速检查：代码风格、单元测试、文档里的例子（不建网站、不跑 notebook）
    python dev.py refresh   # 重新运行所有 notebook，把输出写回 .ipynb（改过 notebook 或包之后必做）
    python dev.py lab       # 准备环境并打开 JupyterLab（中文界面，从 notebooks/ 开始）

没有激活虚拟环境时，会在仓库里建一个 .venv 并在里面安装 requirements.txt；
requirements.txt 或 pyproject.toml 没变时跳过安装。然后把第 10 章的两个真模型（PyPI 上钉死版本的 wheel，
共约 175 MB）下载到 .models/ 并核对 sha256；已经下载过、核对无误时不联网。
"""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BOOK_CMD = ["-c", "from jupyter_book.cli.main import main; main()", "build", ".", "--all", "-W", "-n", "--keep-going"]
# 内核与前端之间的本机通信加密（CurveZMQ）：ipykernel 7.3 起，没加密时每次启动内核都打一条警告。
KERNEL_ENCRYPTION = "auto"
# JupyterLab 的设置默认值（中文界面、不弹新闻通知、.md 用渲染视图打开）在 book/jupyterlab/overrides.json 里。
# 根目录是整个仓库：章节里的术语链接指向 ../book/glossary.md，要能点开。tests/test_jupyterlab.py 用同一组选项。
# 线性代数库 (OpenBLAS) 只用一个线程：书里的矩阵都很小（D = 64、384），多线程帮不上忙；而测试、建网站时好几个
# 进程（pytest 的工作进程、notebook 内核）同时在算，每个再开两个线程就互相空等——这台 2 核机器很忙时，小 GPT
# 训练 12 步单线程 25 秒、两个线程 158–188 秒（benchmarks/numeric_env.py 量两者之比）。已经设了的不改。
SINGLE_THREAD = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
# 批量运行（测试、建网站、刷新 notebook）时的内存设置。虚拟机上（这台 2 核机器就是）第一次碰到一页内存很贵：
# glibc 把释放掉的大块内存马上还给系统，下一个同样大的数组又要一页页重新要回来；NumPy 还给大数组申请 2 MiB 的
# 透明大页，在这里更慢。所以让 glibc 把 1 GiB 以下的块留在进程里重用、不往回还（mallopt(3) 的两个环境变量），
# NumPy 不申请大页（NumPy 文档 “Global state”）。只关系快慢，不改任何结果；代价是每个进程占着它用过的最大内存
# 直到退出——测试和建网站的进程很快就退出，读者的 JupyterLab（``dev.py lab``）因此不用这组设置。
# 这台机器上：小 GPT 训练 8 步从忽快忽慢的 3.0–6.7 秒变成 2.8–2.9 秒，第 7 章 n = 4096 的注意力快两到四倍，
# 全部 notebook 跑一遍少约 20 % 的 CPU（benchmarks/numeric_env.py 量比值）。
BATCH_MEMORY = {"NUMPY_MADVISE_HUGEPAGE": "0", "MALLOC_MMAP_THRESHOLD_": str(2**30), "MALLOC_TRIM_THRESHOLD_": str(2**31)}
LAB_OPTIONS = [f"--LabApp.app_settings_dir={ROOT / 'book' / 'jupyterlab'}", f"--ServerApp.root_dir={ROOT}",
               "--LabApp.default_url=/lab/tree/notebooks", f"--KernelManager.transport_encryption={KERNEL_ENCRYPTION}"]


def process_env(command: str) -> dict[str, str]:
    """``command`` 和它的子进程在导入 NumPy 之前要有的环境变量（已经设了的不改）：线性代数库一个线程；
    批量的命令再加上 ``BATCH_MEMORY``，读者的 JupyterLab 不加。"""
    return SINGLE_THREAD | (BATCH_MEMORY if command != "lab" else {})


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def in_venv() -> bool:
    return sys.prefix != sys.base_prefix


# 同样的代码、同样的 NumPy，在不同的 x86-64 处理器上会走不同的指令：OpenBLAS 按处理器挑矩阵乘法的内核，NumPy
# 按处理器挑 AVX2 或 AVX-512 版本的循环。加法的先后一变，最后一位就可能不同；第 5 章那种"两个头只差百万分之一"
# 的训练会把这点差别放大到第三位小数（一台 AMD EPYC 上 0.1065，存档原先那台机器上 0.1083），nbval 就对不上存档。
# 所以 x86-64 上统一用 AVX2 这一档（近十年的处理器大多有；没有的就不指定）：存档的输出在哪台这样的机器上重跑都一位不差，
# 读者在 JupyterLab 里看到的数也和书上一样。书里的矩阵都很小，快慢看不出差别（benchmarks/numeric_env.py 量两者之比）。
def same_arithmetic() -> dict[str, str]:
    """x86-64 上让 OpenBLAS 和 NumPy 都走 AVX2 那一档的环境变量；别的处理器（或没有 AVX2）返回空字典。

    只关掉这台机器上真有的 AVX-512 档：关掉一个没有的档，有的 NumPy 版本会在每次导入时打一条警告。"""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return {}
    import numpy as np

    simd = getattr(np.__config__, "CONFIG", {}).get("SIMD Extensions", {})
    found = [*simd.get("baseline", []), *simd.get("found", [])]
    if "X86_V3" not in found and not {"AVX2", "FMA3"} <= set(found):
        return {}
    wide = [name for name in simd.get("found", []) if name == "X86_V4" or name.startswith("AVX512")]
    return {"OPENBLAS_CORETYPE": "Haswell", **({"NPY_DISABLE_CPU_FEATURES": " ".join(wide)} if wide else {})}


def ensure_env() -> None:
    """没在虚拟环境里就建 .venv 并用它重新运行本脚本；然后按需安装依赖。"""
    if not in_venv():
        if not venv_python().exists():
            print("==> 创建虚拟环境 .venv")
            venv.create(VENV, with_pip=True)
        os.execv(str(venv_python()), [str(venv_python()), *sys.argv])  # Windows 上 execv 也可用
    digest = hashlib.sha256(b"".join((ROOT / f).read_bytes() for f in ("requirements.txt", "pyproject.toml")))
    stamp = Path(sys.prefix) / ".transformer-lab-installed"
    if stamp.exists() and stamp.read_text() == digest.hexdigest():
        return
    print("==> 安装依赖（第一次较慢，之后会跳过）")
    run([sys.executable, "-m", "pip", "install", "-q", "--upgrade", "pip"])
    run([sys.executable, "-m", "pip", "install", "-q", "-r", "requirements.txt"])
    stamp.write_text(digest.hexdigest())


def ensure_models() -> None:
    """第 10 章的真模型权重：按 transformer_lab/pretrained/registry.py 里钉死的版本和 sha256 下载、核对。"""
    from transformer_lab.pretrained.fetch import fetch_all  # fetch 只用标准库；导入包时顺带导入的 numpy 已在 .venv 里

    try:
        fetch_all()
    except (RuntimeError, ValueError) as err:
        sys.exit(f"\n{err}")


def run(cmd: list[str]) -> None:
    print("$", " ".join(cmd), flush=True)
    code = subprocess.call(cmd, cwd=ROOT)
    if code:
        sys.exit(code)


def book() -> None:
    run([sys.executable, *BOOK_CMD])
    print(f"\n网站已生成：{ROOT / '_build' / 'html' / 'index.html'}（用浏览器直接打开即可）")


def test() -> None:
    run([sys.executable, "-m", "pytest", *sys.argv[2:]])


def check() -> None:
    """快速检查：tests/ 和包里的 doctest，跳过标成 slow 的测试（建网站、浏览器、JupyterLab），不运行 notebook。"""
    run([sys.executable, "-m", "pytest", "tests", "transformer_lab", "-m", "not slow", *sys.argv[2:]])


def merge_streams(outputs: list) -> list:
    """相邻的同名 stream 输出（连续几次 print）合成一段。内核有时把连续的打印分成两段发出，有时合成一段（看机器
    忙闲），不合并的话每次刷新，存档都无端多出几行差异。nbval 比较之前也会合并 stream（``coalesce_streams``），
    所以合并不影响 nbval 的比较。"""
    merged: list = []
    for output in outputs:
        last = merged[-1] if merged else None
        if (last is not None and output.get("output_type") == "stream" and last.get("output_type") == "stream"
                and last.get("name") == output.get("name")):
            last["text"] = last["text"] + output["text"]
        else:
            merged.append(output)
    return merged


def refresh() -> None:
    """重新运行 notebook 并写回输出。去掉 ipywidgets 的输出与状态：存档里只留静态帧（text/html）和文字。"""
    import nbformat
    from nbclient import NotebookClient
    from traitlets.config import Config

    paths = [Path(p).resolve() for p in sys.argv[2:]] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    for path in paths:
        print(f"==> 运行 {path.relative_to(ROOT)}", flush=True)
        nb = nbformat.read(path, as_version=4)
        NotebookClient(nb, timeout=600, kernel_name="python3", store_widget_state=False, record_timing=False,
                       resources={"metadata": {"path": str(path.parent)}},
                       config=Config({"KernelManager": {"transport_encryption": KERNEL_ENCRYPTION}})).execute()
        for cell in nb.cells:
            cell.metadata.pop("execution", None)  # 不存运行时刻：同样的输入，存档就逐字节相同
            for output in cell.get("outputs", []):
                output.get("data", {}).pop("application/vnd.jupyter.widget-view+json", None)
            if cell.get("outputs"):
                cell.outputs = merge_streams(cell.outputs)
        nb.metadata.pop("widgets", None)
        nbformat.write(nb, path)


def lab() -> None:
    run([sys.executable, "-m", "jupyterlab", *LAB_OPTIONS, *sys.argv[2:]])


COMMANDS = {"book": book, "test": test, "check": check, "refresh": refresh, "lab": lab}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    for name, value in process_env(sys.argv[1]).items():  # 在导入 NumPy 之前；子进程（pytest、内核、jupyter-book）都继承
        os.environ.setdefault(name, value)
    ensure_env()
    for name, value in same_arithmetic().items():  # 要在虚拟环境里才导入得了 NumPy；子进程都继承
        os.environ.setdefault(name, value)
    ensure_models()
    COMMANDS[sys.argv[1]]()
