"""lessons/timing.py：RNN 与注意力的计时（在单线程子进程里测）。只查返回的结构与子进程的设置，从不断言用时长短。"""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from transformer_lab.lessons import timing as costs

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
