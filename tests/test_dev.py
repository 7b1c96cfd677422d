"""``dev.py`` 和它背后的 ``tools/``：``refresh`` 写回存档前把相邻的同名 stream 输出合成一段（``merge_streams``）；
``same_arithmetic`` 让每台 x86-64 机器走同一档浮点指令，测试没在这一档上就拒绝启动；依赖装成 ``constraints.txt``
钉死的版本；用到网站和浏览器的测试自动标成 slow。"""

import ast
import importlib.util
import os
import subprocess
import sys
import types
from importlib import metadata
from pathlib import Path

import nbformat
import numpy as np
import pytest

from helpers.slow import SLOW_FIXTURES, slow_fixture
from tools import env as dev
from tools.refresh import merge_streams

ROOT = Path(__file__).resolve().parents[1]


def stream(name: str, text: str):
    return nbformat.v4.new_output("stream", name=name, text=text)


def test_adjacent_prints_become_one_stream_and_the_order_is_kept():
    figure = nbformat.v4.new_output("display_data", data={"text/plain": "图"})
    outputs = [stream("stdout", "第 1 行\n"), stream("stdout", "第 2 行\n"), stream("stderr", "警告\n"),
               stream("stdout", "第 3 行\n"), figure, stream("stdout", "第 4 行\n"), stream("stdout", "第 5 行\n")]
    merged = merge_streams(outputs)
    assert [(o["output_type"], o.get("name"), o.get("text")) for o in merged] == [
        ("stream", "stdout", "第 1 行\n第 2 行\n"), ("stream", "stderr", "警告\n"), ("stream", "stdout", "第 3 行\n"),
        ("display_data", None, None), ("stream", "stdout", "第 4 行\n第 5 行\n")]


def test_a_split_and_an_unsplit_run_are_stored_the_same():
    """同一个单元格，内核一次分两段发、一次一段发：合并后存档逐字相同。"""
    split = merge_streams([stream("stdout", "甲\n"), stream("stdout", "乙\n")])
    whole = merge_streams([stream("stdout", "甲\n乙\n")])
    assert split == whole


def simd(monkeypatch, machine: str, baseline: list[str], found: list[str], missing: list[str]) -> dict[str, str]:
    """假装是一台 ``machine`` 处理器、NumPy 报告这些指令档的机器，返回 ``same_arithmetic()``。"""
    monkeypatch.setattr(dev.platform, "machine", lambda: machine)
    config = {"SIMD Extensions": {"baseline": baseline, "found": found, "not found": missing}}
    monkeypatch.setattr(np, "__config__", types.SimpleNamespace(CONFIG=config))
    return dev.same_arithmetic()


NUMPY_24 = (["X86_V2"], ["X86_V3", "X86_V4", "AVX512_ICL"], ["AVX512_SPR"])  # NumPy 2.4 的档名
NUMPY_20 = (["SSE", "SSE2", "SSE3"], ["SSSE3", "SSE41", "POPCNT", "SSE42", "AVX", "F16C", "FMA3", "AVX2", "AVX512F",
                                     "AVX512CD", "AVX512_SKX"], ["AVX512_ICL", "AVX512_SPR"])  # NumPy 2.0–2.3 的档名


@pytest.mark.parametrize("levels", [NUMPY_24, NUMPY_20], ids=["numpy-2.4", "numpy-2.0"])
def test_an_avx512_machine_turns_off_exactly_the_avx512_levels_it_has(monkeypatch, levels):
    env = simd(monkeypatch, "x86_64", *levels)
    assert env["OPENBLAS_CORETYPE"] == "Haswell"
    expected = [f for f in levels[1] if f == "X86_V4" or f.startswith("AVX512")]  # 这台机器上真有的 AVX-512 档
    assert env["NPY_DISABLE_CPU_FEATURES"].split() == expected and "AVX512_SPR" not in env["NPY_DISABLE_CPU_FEATURES"]


def test_an_avx2_machine_only_fixes_the_blas_kernel(monkeypatch):
    """没有 AVX-512 的机器（比如 AMD EPYC Zen 3）本来就走 AVX2 那一档：不关任何东西，免得 NumPy 警告。"""
    assert simd(monkeypatch, "AMD64", ["X86_V2"], ["X86_V3"], ["X86_V4", "AVX512_ICL"]) == {"OPENBLAS_CORETYPE": "Haswell"}


@pytest.mark.parametrize("machine, levels", [("x86_64", (["X86_V2"], [], ["X86_V3", "X86_V4"])),
                                             ("aarch64", (["NEON"], ["ASIMDHP"], ["SVE"])),
                                             ("arm64", ([], [], []))])
def test_machines_without_avx2_are_left_alone(monkeypatch, machine, levels):
    """没有 AVX2 的 x86-64 上强行用 Haswell 内核会因非法指令崩溃；ARM 上这些变量没有意义。"""
    assert simd(monkeypatch, machine, *levels) == {}


def test_the_tests_run_on_the_pinned_arithmetic():
    """notebook 的存档输出是在统一的那一档指令上算的：测试进程（和它启动的内核）要从 dev.py 继承这些变量。"""
    assert dev.missing_arithmetic() == {}
    for name, value in dev.same_arithmetic().items():
        assert os.environ.get(name) == value, f"{name} 没有设成 {value}：请用 python dev.py test 运行测试"


def test_missing_arithmetic_names_each_variable_that_is_unset_or_wrong(monkeypatch):
    monkeypatch.setattr(dev, "same_arithmetic", lambda: {"OPENBLAS_CORETYPE": "Haswell", "NPY_DISABLE_CPU_FEATURES": "X86_V4"})
    assert dev.missing_arithmetic({"OPENBLAS_CORETYPE": "Haswell", "NPY_DISABLE_CPU_FEATURES": "X86_V4"}) == {}
    missing = dev.missing_arithmetic({"OPENBLAS_CORETYPE": "SkylakeX"})
    assert missing == {"OPENBLAS_CORETYPE": ("Haswell", "SkylakeX"), "NPY_DISABLE_CPU_FEATURES": ("X86_V4", "（没设）")}
    advice = dev.arithmetic_advice(missing)
    assert "python3 dev.py test" in advice and "OPENBLAS_CORETYPE='Haswell'" in advice and "SkylakeX" in advice


@pytest.mark.skipif(not dev.same_arithmetic(), reason="这台机器不需要统一指令（不是有 AVX2 的 x86-64），守卫不会拦")
def test_a_plain_pytest_without_the_settings_refuses_to_start():
    """在 IDE 里或直接敲 ``pytest``（没经过 dev.py）：整个会话一开始就停下，给出中文说明，一个测试也不跑。"""
    environ = {k: v for k, v in os.environ.items() if k not in dev.same_arithmetic()}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-o", "addopts=", "-q",
                           "tests/test_top_level.py"], cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "拒绝启动" in proc.stderr + proc.stdout and "passed" not in proc.stdout
    ok = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-o", "addopts=", "-q", "--co",
                         "tests/test_top_level.py"], cwd=ROOT, env=os.environ, capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stdout + ok.stderr  # 反证：同样的命令，设好了变量就照常收集


@pytest.mark.parametrize("command", ["test", "check", "book", "refresh"])
def test_batch_commands_keep_freed_memory_and_the_lab_does_not(command):
    """测试、建网站、刷新：glibc 留着释放的块重用、NumPy 不申请大页（``BATCH_MEMORY``）；读者的 JupyterLab 只要
    一个线程，不占着用过的内存。"""
    env, lab = dev.process_env(command), dev.process_env("lab")
    assert env["MALLOC_MMAP_THRESHOLD_"] == str(2**30) and env["NUMPY_MADVISE_HUGEPAGE"] == "0"
    assert env["OPENBLAS_NUM_THREADS"] == lab["OPENBLAS_NUM_THREADS"] == "1"
    assert not {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "NUMPY_MADVISE_HUGEPAGE"} & set(lab)


@pytest.mark.parametrize("markexpr, extra", [("", 1), ("not slow", 0), ("slow", 1)])
def test_auto_workers_add_one_only_when_browser_tests_may_run(monkeypatch, markexpr, extra):
    """``-n auto``（conftest.py 的 ``pytest_xdist_auto_num_workers``）：完整测试比核数多开一个，``dev.py check``
    （``-m "not slow"``）就用核数；设了 ``PYTEST_XDIST_AUTO_NUM_WORKERS`` 时交给 xdist 照它的办。"""
    pytest_xdist_auto_num_workers = load_tests_conftest().pytest_xdist_auto_num_workers
    config = types.SimpleNamespace(getoption=lambda name: {"markexpr": markexpr}[name])
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    assert pytest_xdist_auto_num_workers(config) == 4 + extra
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "7")
    assert pytest_xdist_auto_num_workers(config) is None


def load_tests_conftest():
    """``tests/conftest.py`` 当作普通模块载入（几个 conftest 都叫 ``conftest``，不能 ``import conftest``）。"""
    name = "tests_conftest_under_test"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "tests" / "conftest.py")
        sys.modules[name] = importlib.util.module_from_spec(spec)  # dataclass 要在 sys.modules 里找到自己的模块
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


# ---------------------------------------------------------------- 钉死的版本 (constraints.txt)

KEY_PACKAGES = ("numpy", "matplotlib", "pillow", "mplfonts", "jupyter-book", "myst-nb", "sphinx", "sphinx-book-theme",
                "jupyterlab", "ipywidgets", "jupyterlab-widgets", "nbval", "pytest", "playwright")


def pins(path: Path = dev.CONSTRAINTS) -> dict[str, str]:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    return {metadata_name(line.split("==")[0]): line.split("==")[1] for line in lines}


def metadata_name(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def test_the_lock_pins_every_package_the_stored_outputs_depend_on():
    locked = pins()
    assert all("==" in line for line in dev.CONSTRAINTS.read_text(encoding="utf-8").splitlines() if line and line[0] != "#")
    assert [p for p in KEY_PACKAGES if p not in locked] == []
    assert dev.lock_python() is not None


@pytest.mark.skipif(dev.lock_python() != f"{sys.version_info[0]}.{sys.version_info[1]}",
                    reason="constraints.txt 是为另一个 Python 版本钉的，这里按下限安装")
def test_the_environment_is_the_locked_one():
    """dev.py 在同一个 Python 版本上装的正是 constraints.txt 里的版本（CI 用的就是这个 Python）。"""
    installed = {metadata_name(d.metadata["Name"]): d.version for d in metadata.distributions()}
    wrong = {name: (want, installed[name]) for name, want in pins().items() if name in installed and installed[name] != want}
    assert wrong == {}, f"装的版本与 constraints.txt 不同（应为, 实为）：{wrong}。运行 python3 dev.py test 会重新安装"
    assert [p for p in KEY_PACKAGES if p not in installed] == []


def test_install_uses_the_lock_only_on_the_python_it_was_made_for(tmp_path, monkeypatch):
    lock = tmp_path / "constraints.txt"
    lock.write_text("# 说明\n# python-version: 3.11\nnumpy==2.4.6\n", encoding="utf-8")
    monkeypatch.setattr(dev, "CONSTRAINTS", lock)
    assert dev.install_command("py", "3.11")[-2:] == ["-c", "constraints.txt"]
    assert "-c" not in dev.install_command("py", "3.10")  # NumPy 2.4 已不支持 3.10：按下限装
    lock.write_text("numpy==2.4.6\n", encoding="utf-8")
    with pytest.raises(ValueError, match="python-version"):
        dev.lock_python(lock)
    assert dev.lock_python(tmp_path / "没有这个文件.txt") is None


# ---------------------------------------------------------------- 慢测试的自动标记

def test_every_fixture_of_the_site_conftest_is_declared_slow():
    """``tests/site/conftest.py`` 里的 fixture 都建网站或开浏览器：每个都要用 ``slow_fixture`` 声明。"""
    assert fixtures((ROOT / "tests" / "site" / "conftest.py").read_text(encoding="utf-8"), "pytest.fixture") == []
    declared = {name for path in (ROOT / "tests").rglob("*.py") for name in fixtures(path.read_text(encoding="utf-8"))}
    assert {"site", "server", "browser", "page", "searcher", "tiny_site", "tiny_build", "lab"} <= declared


def fixtures(source: str, decorator: str = "slow_fixture") -> list[str]:
    """源代码里用 ``decorator``（``slow_fixture`` 或 ``pytest.fixture``，带不带括号都算）声明的 fixture。"""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef):
            for deco in node.decorator_list:
                target = deco.func if isinstance(deco, ast.Call) else deco
                if ast.unparse(target) == decorator:
                    found.append(node.name)
    return found


def test_the_fixture_check_catches_a_plain_fixture():
    source = "import pytest\n@pytest.fixture(scope='session')\ndef chrome():\n    pass\n@slow_fixture\ndef ok():\n    pass\n"
    assert fixtures(source, "pytest.fixture") == ["chrome"] and fixtures(source) == ["ok"]


def test_tests_using_a_slow_fixture_directly_or_not_are_marked_slow():
    @slow_fixture(scope="session", name="一个慢的")
    def _slow():
        pass

    is_slow = load_tests_conftest().is_slow
    assert is_slow(["tmp_path", "一个慢的"])
    assert not is_slow(["tmp_path", "rendered", "minilm"])
    SLOW_FIXTURES.discard("一个慢的")
