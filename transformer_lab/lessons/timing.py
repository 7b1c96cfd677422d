"""计时：同一句话，RNN 一步接一步、注意力一次批量乘法，各要多久。

在一个新的 Python 子进程里量（``python -m transformer_lab.lessons.timing``），并把 BLAS 限制为单线程：
机器上同时有别的程序在跑时，多线程的矩阵乘法可能因为等线程而慢上百倍，单线程的结果稳定得多。
第 7 章的 ``measure_scaling`` 用同样的子进程，量用时和峰值内存（tracemalloc）随序列长度 n 怎样变化；
``loglog_slope`` 在对数–对数坐标里拟合一条直线，斜率就是"n 翻倍，代价乘 2 的几次方"。
本模块只依赖 NumPy 和标准库。
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

from .. import _validation as check
from ..core.attention import scaled_dot_product_attention
from ..core.rnn import orthogonal_recurrent_weights, rnn_forward
from ..core.tiled import tiled_attention

__all__ = ["time_rnn_vs_attention", "measure_scaling", "loglog_slope", "peak_bytes"]

_ONE_THREAD = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                      "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")}


def _best_time(fn, repeat: int) -> float:
    """运行 ``fn`` ``repeat`` 次，取最快的一次（秒）：最少受到机器上其他程序的干扰。"""
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _time_here(lengths: list[int], d: int, seed: int, repeat: int) -> dict[str, list[float]]:
    """在当前进程里计时（``time_rnn_vs_attention`` 用 ``python -m`` 在单线程的子进程里运行本模块，见文件末尾）。"""
    rng = np.random.default_rng(seed)
    w_xh = rng.standard_normal((d, d)) / np.sqrt(d)  # (d, d)
    w_hh = orthogonal_recurrent_weights(d, 0.9, rng)  # (d, d)
    out: dict[str, list[float]] = {"rnn": [], "attention": [], "rnn_batched": []}
    for T in lengths:
        x = rng.standard_normal((T, d))  # (T, d)
        out["rnn"].append(_best_time(lambda: rnn_forward(x, w_xh, w_hh), repeat))
        out["attention"].append(_best_time(lambda: scaled_dot_product_attention(x, x, x), repeat))
        out["rnn_batched"].append(_best_time(lambda: np.tanh(x @ w_xh + x @ w_hh), repeat))  # (T, d)
    return out


def _budget(lengths: list[int], d: int) -> None:
    """计时之前先算内存（在子进程里才失败就只剩一句英文）：最长的 T 的 T × T 分数表，以及 d × d 的权重和 T × d 的输入。"""
    T = max(lengths)
    check.memory_budget(T * T + 2 * d * d + 2 * T * d, 8, f"计时用的数组（最长 T={T}, d={d}）")


def time_rnn_vs_attention(lengths: tuple[int, ...], d: int, rng: np.random.Generator,
                          repeat: int = 5) -> dict[str, np.ndarray]:
    """对每个序列长度 T 计时三件事（秒，``repeat`` 次中最快的一次），全部只用一个 CPU 核心。

    * ``rnn``：``tl.rnn_forward``，T 步一步接一步；
    * ``attention``：``tl.scaled_dot_product_attention(x, x, x)``，一次批量乘法；
    * ``rnn_batched``：假想实验——RNN 的乘加一次不少，但假装不用等上一步（上一步的笔记换成已知的 x），
      全部塞进一次批量乘法。它和 ``rnn`` 的差距，就是"排队"本身的代价。

    计时在一个新的 Python 子进程里进行，并把 BLAS 限制为单线程：机器上同时有别的程序在跑时，
    多线程的矩阵乘法可能因为等线程而慢上百倍，单线程的结果稳定得多，三者也在同一起跑线上。

    Parameters
    ----------
    lengths : tuple of int
        要测的序列长度（非空）。
    d : int
        词向量与隐状态的长度。
    rng : np.random.Generator
        用来抽随机权重和输入。
    repeat : int, default 5

    Returns
    -------
    dict
        ``T`` (N,) 序列长度；``rnn``、``attention``、``rnn_batched`` (N,) 用时（秒）。

    Raises
    ------
    TypeError, ValueError
        参数不是正整数、``lengths`` 为空或不是元组/列表、``rng`` 不是 Generator，或最长的 T 要占的内存超过预算（2 GiB）。
    RuntimeError
        计时的子进程出错（报错信息附上子进程的 stderr）。

    Examples
    --------
    >>> t = time_rnn_vs_attention((8, 16), 4, np.random.default_rng(0), repeat=1)
    >>> sorted(t), t["rnn"].shape
    (['T', 'attention', 'rnn', 'rnn_batched'], (2,))
    """
    lengths = check.nonempty_sequence(lengths, "lengths", "(16, 64, 256)")
    lengths = [check.positive_int(T, "lengths 里的每个 T") for T in lengths]
    d, repeat = check.positive_int(d, "d"), check.positive_int(repeat, "repeat")
    _budget(lengths, d)
    seed = int(check.generator(rng).integers(2**32))
    times = _run_alone("rnn_vs_attention", {"lengths": lengths, "d": d, "seed": seed, "repeat": repeat})
    return {"T": np.array(lengths), **{key: np.array(value) for key, value in times.items()}}


def _run_alone(task: str, kwargs: dict) -> dict:
    """在一个新的单线程 Python 子进程里运行 ``_TASKS[task](**kwargs)``，返回它的 JSON 结果。"""
    args = json.dumps({"task": task, **kwargs})
    package_root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, **_ONE_THREAD,
           "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-m", __name__, args], env=env, capture_output=True, text=True,
                          timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"计时子进程出错（返回码 {proc.returncode}）：\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def peak_bytes(fn) -> int:
    """``fn()`` 运行期间比运行前多占的内存峰值（字节，tracemalloc；NumPy 数组会报告给它）。

    Raises
    ------
    TypeError
        ``fn`` 不是不带参数就能调用的函数。
    """
    if not callable(fn):
        raise TypeError(f"fn 必须是函数（peak_bytes 会调用 fn()），收到的是 {check.describe(fn)}。提示：lambda: 要量的计算。")
    try:
        inspect.signature(fn).bind()
    except TypeError:
        raise TypeError(f"fn 必须不带参数就能调用（peak_bytes 会调用 fn()），收到的 {fn!r} 要参数 {inspect.signature(fn)}。"
                        "提示：lambda: 要量的计算(参数)。") from None
    except ValueError:  # 有的内置函数没有签名：交给调用本身
        pass
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def _scaling_here(lengths: list[int], d: int, seed: int, repeat: int) -> dict[str, list[float]]:
    """在当前进程里量 measure_scaling 的六列（用时不开 tracemalloc；内存单独量一次）。"""
    rng = np.random.default_rng(seed)
    w_xh, w_hh = rng.standard_normal((d, d)) / np.sqrt(d), orthogonal_recurrent_weights(d, 0.9, rng)  # (d, d)
    out: dict[str, list[float]] = {f"{kind}_{what}": [] for what in ("seconds", "bytes")
                                   for kind in ("attention", "tiled", "rnn")}
    for T in lengths:
        x = rng.standard_normal((T, d))  # (T, d)
        runs = {"attention": lambda: scaled_dot_product_attention(x, x, x),
                "tiled": lambda: tiled_attention(x, x, x), "rnn": lambda: rnn_forward(x, w_xh, w_hh)}
        for kind, fn in runs.items():
            out[f"{kind}_seconds"].append(_best_time(fn, repeat))
            out[f"{kind}_bytes"].append(float(peak_bytes(fn)))
    return out


def measure_scaling(lengths: tuple[int, ...], d: int, rng: np.random.Generator,
                    repeat: int = 3) -> dict[str, np.ndarray]:
    """对每个序列长度 n，量注意力（整表）、分块注意力、RNN 的用时与峰值额外内存，单核、单独的子进程。

    Parameters
    ----------
    lengths : tuple of int
        序列长度（非空）。
    d : int
        词向量长度。
    rng : np.random.Generator
    repeat : int, default 3
        用时取 ``repeat`` 次中最快的一次。

    Returns
    -------
    dict
        ``n`` (N,)；``attention_seconds``、``tiled_seconds``、``rnn_seconds`` (N,) 秒；
        ``attention_bytes``、``tiled_bytes``、``rnn_bytes`` (N,) 峰值额外内存（字节）。

    Raises
    ------
    TypeError, ValueError
        同 ``time_rnn_vs_attention``。
    RuntimeError
        子进程出错。

    Examples
    --------
    >>> m = measure_scaling((8, 16), 4, np.random.default_rng(0), repeat=1)
    >>> sorted(m)[:3], m["rnn_bytes"].shape
    (['attention_bytes', 'attention_seconds', 'n'], (2,))
    """
    lengths = check.nonempty_sequence(lengths, "lengths", "(256, 512, 1024)")
    lengths = [check.positive_int(T, "lengths 里的每个 n") for T in lengths]
    d, repeat = check.positive_int(d, "d"), check.positive_int(repeat, "repeat")
    _budget(lengths, d)
    seed = int(check.generator(rng).integers(2**32))
    got = _run_alone("scaling", {"lengths": lengths, "d": d, "seed": seed, "repeat": repeat})
    return {"n": np.array(lengths), **{key: np.array(value) for key, value in got.items()}}


def loglog_slope(x: np.ndarray, y: np.ndarray) -> float:
    """在 log x – log y 坐标里用最小二乘拟合直线，返回斜率 k：y 约正比于 x^k。

    Raises ``ValueError``：少于 2 个点、长度不等，或有非正数（取不了对数）。

    >>> loglog_slope(np.array([1.0, 2.0, 4.0]), np.array([3.0, 12.0, 48.0]))   # y = 3x²
    2.0
    """
    x = check.as_real_array(x, "x", min_ndim=1).ravel()
    y = check.as_real_array(y, "y", min_ndim=1).ravel()
    if x.shape != y.shape or x.size < 2 or np.any(x <= 0) or np.any(y <= 0) or np.unique(x).size < 2:
        raise ValueError(f"x 与 y 必须是等长、至少 2 个不同 x、全为正数的一维数组，收到 x.shape={x.shape}, "
                         f"y.shape={y.shape}。提示：对数坐标里没有 0 和负数。")
    return round(float(np.polyfit(np.log(x), np.log(y), 1)[0]), 12)


_TASKS = {"rnn_vs_attention": _time_here, "scaling": _scaling_here}


if __name__ == "__main__":  # _run_alone 的子进程：参数是一个 JSON 字符串（含 task），结果打印成 JSON
    _kwargs = json.loads(sys.argv[1])
    print(json.dumps(_TASKS[_kwargs.pop("task")](**_kwargs)))
