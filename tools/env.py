"""``dev.py`` 的各条命令运行在什么环境里：虚拟环境、钉死版本的依赖、给子进程的环境变量、第 10 章的模型文件。

导入本模块只用标准库（``dev.py`` 在建好 ``.venv`` 之前就要用它）；``same_arithmetic`` 用到的 NumPy 在调用时才导入。

**重现的约定**：存档在 notebook 里的输出（nbval 逐字比较）、可交互图的帧，是在

1. ``constraints.txt`` 钉死的那一组版本上（NumPy、matplotlib、Pillow、字体包 mplfonts、Jupyter Book、myst-nb、
   Sphinx、主题、JupyterLab 和 ipywidgets……装进 ``.venv`` 的每一个包），
2. ``same_arithmetic()`` 给出的那一档浮点指令上（x86-64：OpenBLAS 的 Haswell 内核，关掉 NumPy 的 AVX-512 循环），

算出来的。``dev.py`` 的每条命令都照此准备环境；``tests`` 启动时（仓库根目录的 ``conftest.py``）核对第 2 条，
没设就拒绝运行，并用中文说明怎么办。``python3 dev.py lock`` 按 PyPI 当天的版本重新生成第 1 条。
"""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv"
CONSTRAINTS = ROOT / "constraints.txt"
LOCK_PYTHON = "# python-version: "  # constraints.txt 里记下生成它的 Python 版本（主.次）的那一行
# 内核与前端之间的本机通信加密（CurveZMQ）：ipykernel 7.3 起，没加密时每次启动内核都打一条警告。
KERNEL_ENCRYPTION = "auto"
# 线性代数库 (OpenBLAS) 只用一个线程：书里的矩阵都很小（D = 64、384），多线程帮不上忙；而测试、建网站时好几个
# 进程（pytest 的工作进程、notebook 内核）同时在算，每个再开两个线程就互相空等——这台 2 核机器很忙时，小 GPT
# 训练 12 步单线程 25 秒、两个线程 158–188 秒（benchmarks/numeric_env.py 量两者之比）。已经设了的不改。
# （工具包自己的 ``lessons/timing.py`` 另有一份同样的名单：包不导入写书的工具。）
SINGLE_THREAD = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
# 批量运行（测试、建网站、刷新 notebook）时的内存设置。虚拟机上（这台 2 核机器就是）第一次碰到一页内存很贵：
# glibc 把释放掉的大块内存马上还给系统，下一个同样大的数组又要一页页重新要回来；NumPy 还给大数组申请 2 MiB 的
# 透明大页，在这里更慢。所以让 glibc 把 1 GiB 以下的块留在进程里重用、不往回还（mallopt(3) 的两个环境变量），
# NumPy 不申请大页（NumPy 文档 “Global state”）。只关系快慢，不改任何结果；代价是每个进程占着它用过的最大内存
# 直到退出——测试和建网站的进程很快就退出，读者的 JupyterLab（``dev.py lab``）因此不用这组设置。
# 这台机器上：小 GPT 训练 8 步从忽快忽慢的 3.0–6.7 秒变成 2.8–2.9 秒，第 7 章 n = 4096 的注意力快两到四倍，
# 全部 notebook 跑一遍少约 20 % 的 CPU（benchmarks/numeric_env.py 量比值）。
BATCH_MEMORY = {"NUMPY_MADVISE_HUGEPAGE": "0", "MALLOC_MMAP_THRESHOLD_": str(2**30), "MALLOC_TRIM_THRESHOLD_": str(2**31)}
# JupyterLab 的设置默认值（中文界面、不弹新闻通知、.md 用渲染视图打开）在 book/jupyterlab/overrides.json 里。
# 根目录是整个仓库：章节里的术语链接指向 ../book/glossary.md，要能点开。tests/site/test_jupyterlab.py 用同一组选项。
LAB_OPTIONS = [f"--LabApp.app_settings_dir={ROOT / 'book' / 'jupyterlab'}", f"--ServerApp.root_dir={ROOT}",
               "--LabApp.default_url=/lab/tree/notebooks", f"--KernelManager.transport_encryption={KERNEL_ENCRYPTION}"]

__all__ = ["ROOT", "VENV", "CONSTRAINTS", "KERNEL_ENCRYPTION", "SINGLE_THREAD", "BATCH_MEMORY", "LAB_OPTIONS",
           "process_env", "same_arithmetic", "missing_arithmetic", "arithmetic_advice", "venv_python", "in_venv",
           "lock_python", "install_command", "ensure_env", "ensure_models", "write_lock", "run"]


def process_env(command: str) -> dict[str, str]:
    """``command`` 和它的子进程在导入 NumPy 之前要有的环境变量（已经设了的不改）：线性代数库一个线程；
    批量的命令再加上 ``BATCH_MEMORY``，读者的 JupyterLab 不加。"""
    return SINGLE_THREAD | (BATCH_MEMORY if command != "lab" else {})


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


def missing_arithmetic(environ: dict[str, str] | None = None) -> dict[str, tuple[str, str]]:
    """``same_arithmetic()`` 里没在 ``environ``（默认当前进程的环境）中设对的变量：{名字: (应为, 实为)}。"""
    environ = os.environ if environ is None else environ
    return {name: (value, environ.get(name, "（没设）")) for name, value in same_arithmetic().items()
            if environ.get(name) != value}


def arithmetic_advice(missing: dict[str, tuple[str, str]]) -> str:
    """测试拒绝启动时的中文说明：缺了哪些变量、为什么要紧、怎么办。"""
    rows = "\n".join(f"  {name}：应为 {want!r}，实为 {got!r}" for name, (want, got) in missing.items())
    exports = " ".join(f"{name}={want!r}" for name, (want, _) in missing.items())
    return ("测试没有在统一的浮点指令上运行，拒绝启动：\n" + rows + "\n"
            "notebook 的存档输出和可交互图的帧都是在这一档指令上算的；不设的话，同一台机器也可能在最后几位算得不同，"
            "测试会报出一堆莫名其妙的数值差异。这些变量必须在 NumPy 载入之前设好，所以测试进程没法替你补上。\n"
            "请用 python3 dev.py test（全部）或 python3 dev.py check（快速检查）运行测试，后面可以接任何 pytest 参数，"
            "例如 python3 dev.py test tests/quiz；\n"
            f"在 IDE 里运行的话，把这些环境变量加进它的运行配置：{exports}")


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def in_venv() -> bool:
    return sys.prefix != sys.base_prefix


def lock_python(path: Path = CONSTRAINTS) -> str | None:
    """``constraints.txt`` 是在哪个 Python（"3.11"）上生成的；没有这个文件时为 None。"""
    if not path.exists():
        return None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith(LOCK_PYTHON):
            return line[len(LOCK_PYTHON):].strip()
    raise ValueError(f"{path.name} 里缺少 “{LOCK_PYTHON.strip()} 主.次” 这一行：请用 python3 dev.py lock 重新生成。")


def install_command(python: str, version: str) -> list[str]:
    """安装 requirements.txt 的 pip 命令：``version``（"3.11"）正是钉死版本时用的 Python 时，加上 ``-c constraints.txt``。

    钉死的版本只对生成它的那个 Python 版本成立（例如 NumPy 2.4 已不支持 Python 3.10），别的 Python 按
    pyproject.toml 里的下限安装当天的版本：notebook 照样能跑，只是个别数字的最后几位可能和存档不同。"""
    cmd = [python, "-m", "pip", "install", "-q", "-r", "requirements.txt"]
    return cmd + (["-c", CONSTRAINTS.name] if lock_python() == version else [])


def ensure_env() -> None:
    """没在虚拟环境里就建 .venv 并用它重新运行 dev.py；然后按需安装依赖（依赖清单或钉死的版本变了才装）。"""
    if not in_venv():
        if not venv_python().exists():
            print("==> 创建虚拟环境 .venv")
            venv.create(VENV, with_pip=True)
        os.execv(str(venv_python()), [str(venv_python()), *sys.argv])  # Windows 上 execv 也可用
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    inputs = [ROOT / f for f in ("requirements.txt", "pyproject.toml", CONSTRAINTS.name) if (ROOT / f).exists()]
    digest = hashlib.sha256(version.encode() + b"".join(f.read_bytes() for f in inputs)).hexdigest()
    stamp = Path(sys.prefix) / ".transformer-lab-installed"
    if stamp.exists() and stamp.read_text() == digest:
        return
    cmd = install_command(sys.executable, version)
    print("==> 安装依赖（第一次较慢，之后会跳过）" + ("，用 constraints.txt 钉死的版本" if "-c" in cmd else ""))
    if "-c" not in cmd and CONSTRAINTS.exists():
        print(f"    注意：constraints.txt 是为 Python {lock_python()} 钉的，这里是 Python {version}，"
              "所以按 pyproject.toml 的下限安装当天的版本；notebook 能跑，个别存档数字的最后几位可能对不上。")
    run([sys.executable, "-m", "pip", "install", "-q", "--upgrade", "pip"])
    run(cmd)
    stamp.write_text(digest)


def write_lock() -> None:
    """``python3 dev.py lock``：在一个临时的虚拟环境里按 pyproject.toml 装 PyPI 当天的版本，把装上的每个包的
    确切版本写进 constraints.txt。之后要 ``python3 dev.py refresh`` 和 ``python3 dev.py test``，全部通过再一起提交。"""
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    with tempfile.TemporaryDirectory(prefix="transformer-lab-lock-") as tmp:
        print(f"==> 在临时虚拟环境里按 pyproject.toml 安装（Python {version}，几分钟）")
        venv.create(tmp, with_pip=True)
        python = str(Path(tmp) / ("Scripts/python.exe" if os.name == "nt" else "bin/python"))
        run([python, "-m", "pip", "install", "-q", "--upgrade", "pip"])
        run([python, "-m", "pip", "install", "-q", "-r", "requirements.txt"])
        frozen = subprocess.run([python, "-m", "pip", "freeze", "--exclude-editable"], cwd=ROOT, check=True,
                                capture_output=True, text=True).stdout
    pins = sorted((line for line in frozen.splitlines() if line and not line.startswith("#")), key=str.lower)
    header = ["# 重现存档输出用的钉死版本：python3 dev.py lock 生成，不要手改（见 README 的“钉死的版本”）。",
              "# dev.py 在同一个 Python 主.次版本上安装时用它（pip install -r requirements.txt -c constraints.txt）。",
              f"# 生成它的机器：{platform.system()} {platform.machine()}",
              f"{LOCK_PYTHON}{version}"]
    CONSTRAINTS.write_text("\n".join(header + pins) + "\n", encoding="utf-8")
    print(f"\n已写入 {CONSTRAINTS.name}（{len(pins)} 个包）。接着运行 python3 dev.py refresh 和 python3 dev.py test，"
          "全部通过后把 constraints.txt 和刷新过的 notebook 一起提交。")


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
