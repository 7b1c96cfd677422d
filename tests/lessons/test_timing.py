"""lessons/timing.py：RNN 与注意力的计时（在单线程子进程里测）。只查返回的结构与子进程的设置，从不断言用时长短。"""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.lessons import timing
from transformer_lab.lessons import timing as costs

from helpers.errors import error_table_test

ROOT = Path(__file__).resolve().parents[2]


def test_time_rnn_vs_attention_returns_positive_times():
    out = costs.time_rnn_vs_attention([4, 16], 8, np.random.default_rng(0), repeat=1)  # 列表也行
    assert sorted(out) == ["T", "attention", "rnn", "rnn_batched"]
    np.testing.assert_array_equal(out["T"], [4, 16])
    for key in ("rnn", "attention", "rnn_batched"):
        assert out[key].shape == (2,) and np.all(np.isfinite(out[key])) and np.all(out[key] > 0)


def test_time_rnn_vs_attention_reports_a_failing_subprocess(monkeypatch):
    failed = subprocess.CompletedProcess(args=[], returncode=1, stdout="", stderr="Traceback ...\nboom")
    monkeypatch.setattr(costs.subprocess, "run", lambda *args, **kwargs: failed)
    with pytest.raises(RuntimeError, match=r"(?s)计时子进程出错（返回码 1）.*boom"):
        costs.time_rnn_vs_attention((4,), 2, np.random.default_rng(0), repeat=1)


def test_timing_subprocess_is_single_threaded(monkeypatch):
    seen = {}

    def fake_run(cmd, env, **kwargs):
        seen.update(env)
        return subprocess.CompletedProcess(cmd, 0, '{"rnn": [1.0], "attention": [2.0], "rnn_batched": [0.5]}\n', "")

    monkeypatch.setattr(costs.subprocess, "run", fake_run)
    out = costs.time_rnn_vs_attention((4,), 2, np.random.default_rng(0))
    assert seen["OPENBLAS_NUM_THREADS"] == seen["OMP_NUM_THREADS"] == seen["MKL_NUM_THREADS"] == "1"
    assert str(ROOT) in seen["PYTHONPATH"].split(os.pathsep)
    np.testing.assert_array_equal(out["attention"], [2.0])


# ---- 第 7 章：用时与内存随 n 的变化、对数–对数斜率


def test_measure_scaling_structure_and_memory_pattern():
    out = timing.measure_scaling((128, 512), 16, np.random.default_rng(0), repeat=1)
    assert sorted(out) == sorted(["n", *(f"{k}_{w}" for k in ("attention", "tiled", "rnn") for w in ("seconds", "bytes"))])
    for key, value in out.items():
        assert value.shape == (2,) and np.all(value > 0), key
    # 内存不是用时：它不受机器忙闲影响。普通注意力至少造了一张 n×n 的 float64 分数表。
    assert np.all(out["attention_bytes"] >= out["n"] ** 2 * 8)


def test_measure_scaling_runs_in_a_single_threaded_subprocess(monkeypatch):
    seen = {}

    def fake_run(cmd, env, **kwargs):
        seen.update(env, args=cmd[-1])
        return subprocess.CompletedProcess(cmd, 0, '{"rnn_seconds": [1.0], "rnn_bytes": [2.0]}\n', "")

    monkeypatch.setattr(timing.subprocess, "run", fake_run)
    out = timing.measure_scaling((4,), 2, np.random.default_rng(0))
    assert seen["OPENBLAS_NUM_THREADS"] == "1" and '"task": "scaling"' in seen["args"]
    np.testing.assert_array_equal(out["rnn_bytes"], [2.0])


def test_loglog_slope_by_hand():
    n = np.array([256.0, 512.0, 1024.0])
    assert timing.loglog_slope(n, 5 * n**2) == 2.0
    assert timing.loglog_slope(n, 0.1 * n) == 1.0
    assert timing.loglog_slope(np.array([1.0, 10.0]), np.array([7.0, 7.0])) == 0.0


@given(st.floats(-3, 3), st.floats(0.01, 100), st.lists(st.floats(1, 1e4), min_size=2, max_size=6, unique=True))
def test_loglog_slope_recovers_a_power_law(k, c, xs):
    x = np.array(xs)
    if np.ptp(np.log(x)) < 1e-3:
        return
    assert timing.loglog_slope(x, c * x**k) == pytest.approx(k, abs=1e-6)


RNG = np.random.default_rng(0)
VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("slope-zero", lambda: timing.loglog_slope(np.array([1.0, 2.0]), np.array([0.0, 1.0])), VE, r"全为正数.*对数"),
    ("slope-one-point", lambda: timing.loglog_slope(np.array([1.0]), np.array([1.0])), VE, r"至少 2 个不同 x"),
    ("slope-lengths", lambda: timing.loglog_slope(np.ones(3), np.ones(2)), VE, r"x\.shape=\(3,\), y\.shape=\(2,\)"),
    ("slope-list", lambda: timing.loglog_slope([1.0, 2.0], np.ones(2)), TE, r"x 必须是 NumPy 数组"),
    ("scaling-empty", lambda: timing.measure_scaling((), 4, np.random.default_rng(0)), VE, r"lengths 必须是非空"),
    ("scaling-n-zero", lambda: timing.measure_scaling((0,), 4, np.random.default_rng(0)), VE,
     r"lengths 里的每个 n 必须是正整数"),
    ("scaling-rng", lambda: timing.measure_scaling((4,), 4, 0), TE, r"rng"),
    ("time-empty", lambda: timing.time_rnn_vs_attention((), 4, RNG), ValueError, r"lengths 必须是非空的元组或列表.*\(\)"),
    ("time-str", lambda: timing.time_rnn_vs_attention("16", 4, RNG), ValueError, r"lengths 必须是非空的元组或列表.*'16'"),
    ("time-T-0", lambda: timing.time_rnn_vs_attention((8, 0), 4, RNG), ValueError, r"lengths 里的每个 T 必须是正整数.*0"),
    ("time-d-0", lambda: timing.time_rnn_vs_attention((8,), 0, RNG), ValueError, r"d 必须是正整数.*0"),
    ("time-repeat-0", lambda: timing.time_rnn_vs_attention((8,), 4, RNG, repeat=0), ValueError, r"repeat 必须是正整数"),
    ("time-rng", lambda: timing.time_rnn_vs_attention((8,), 4, 42), TypeError, r"rng 必须是 np\.random\.Generator"),
    ("peak_bytes-not-callable", lambda: timing.peak_bytes(np.ones(3)), TE, r"fn 必须是函数.*np\.ndarray"),
    ("timing-memory", lambda: timing.time_rnn_vs_attention((10**6,), 4, np.random.default_rng(0)), VE,
     r"计时用的数组（最长 T=1000000, d=4） 要占 7\.45e\+03 GiB"),
    ("scaling-memory", lambda: timing.measure_scaling((4,), 10**5, np.random.default_rng(0)), VE, r"d=100000\） 要占"),
    ("peak-bytes-needs-argument", lambda: timing.peak_bytes(lambda x: x), TypeError, r"fn 必须不带参数就能调用.*\(x\)"),
]

test_documented_errors = error_table_test(ERROR_CASES)
