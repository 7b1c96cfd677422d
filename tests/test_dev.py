"""仓库根目录的 dev.py：``refresh`` 写回存档前把相邻的同名 stream 输出合成一段（``merge_streams``）；
``same_arithmetic`` 让每台 x86-64 机器走同一档浮点指令。"""

import importlib.util
import os
import types
from pathlib import Path

import nbformat
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("dev", ROOT / "dev.py")
dev = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dev)


def stream(name: str, text: str):
    return nbformat.v4.new_output("stream", name=name, text=text)


def test_adjacent_prints_become_one_stream_and_the_order_is_kept():
    figure = nbformat.v4.new_output("display_data", data={"text/plain": "图"})
    outputs = [stream("stdout", "第 1 行\n"), stream("stdout", "第 2 行\n"), stream("stderr", "警告\n"),
               stream("stdout", "第 3 行\n"), figure, stream("stdout", "第 4 行\n"), stream("stdout", "第 5 行\n")]
    merged = dev.merge_streams(outputs)
    assert [(o["output_type"], o.get("name"), o.get("text")) for o in merged] == [
        ("stream", "stdout", "第 1 行\n第 2 行\n"), ("stream", "stderr", "警告\n"), ("stream", "stdout", "第 3 行\n"),
        ("display_data", None, None), ("stream", "stdout", "第 4 行\n第 5 行\n")]


def test_a_split_and_an_unsplit_run_are_stored_the_same():
    """同一个单元格，内核一次分两段发、一次一段发：合并后存档逐字相同。"""
    split = dev.merge_streams([stream("stdout", "甲\n"), stream("stdout", "乙\n")])
    whole = dev.merge_streams([stream("stdout", "甲\n乙\n")])
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
    for name, value in dev.same_arithmetic().items():
        assert os.environ.get(name) == value, f"{name} 没有设成 {value}：请用 python dev.py test 运行测试"


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
    from conftest import pytest_xdist_auto_num_workers

    config = types.SimpleNamespace(getoption=lambda name: {"markexpr": markexpr}[name])
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    assert pytest_xdist_auto_num_workers(config) == 4 + extra
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "7")
    assert pytest_xdist_auto_num_workers(config) is None
