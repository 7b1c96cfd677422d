"""代价：数乘加次数，量用时。

* 乘加次数 (multiply-adds)：每层的计算量，RNN 是 T·d²，注意力是 T²·d；
* 计时：同一句话，RNN 一步接一步、注意力一次批量乘法，各要多久（在单线程的子进程里量）。

本模块只依赖 NumPy 和标准库。
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from . import _validation as val
from .attention import scaled_dot_product_attention
from .recurrence import orthogonal_recurrent_weights
from .rnn import rnn_forward

__all__ = ["rnn_multiply_adds", "attention_multiply_adds", "time_rnn_vs_attention"]


# ---------------------------------------------------------------- 每层的计算量


def rnn_multiply_adds(T: int, d_in: int, d_h: int) -> int:
    """Elman RNN 读完 T 个词的乘加次数：每步 ``x_t @ W_xh`` 要 d_in·d_h 次，``h @ W_hh`` 要 d_h² 次。

    共 T·(d_in·d_h + d_h²)；d_in = d_h = d 时是 2·T·d²，即 O(n·d²)。tanh、偏置只有 T·d_h 次，不计。

    Parameters
    ----------
    T, d_in, d_h : int
        序列长度、输入长度、隐状态长度。

    Returns
    -------
    int

    Raises
    ------
    TypeError, ValueError
        任一参数不是正整数。

    Examples
    --------
    >>> rnn_multiply_adds(3, 2, 4)      # 3 × (2×4 + 4×4)
    72
    """
    T, d_in, d_h = (val.positive_int(n, name) for n, name in ((T, "T"), (d_in, "d_in"), (d_h, "d_h")))
    return T * (d_in * d_h + d_h * d_h)


def attention_multiply_adds(T: int, d_k: int, d_v: int | None = None, S: int | None = None) -> int:
    """缩放点积注意力的乘加次数：打分 ``q @ kᵀ`` 要 T·S·d_k 次，加权求和 ``weights @ v`` 要 T·S·d_v 次。

    S = T、d_k = d_v = d 时是 2·T²·d，即 O(n²·d)；softmax 的 T·S 次指数不计。算 Q、K、V 的投影另要
    3·T·d² 次，但每个词各算各的，不用排队。

    Parameters
    ----------
    T : int
        查询个数。
    d_k : int
        查询/键的长度。
    d_v : int, optional
        值的长度，默认等于 ``d_k``。
    S : int, optional
        键/值的个数，默认等于 ``T``（自注意力）；生成新词时 T = 1、S = 已有词数。

    Returns
    -------
    int

    Raises
    ------
    TypeError, ValueError
        任一参数不是正整数。

    Examples
    --------
    >>> attention_multiply_adds(3, 4)            # 3×3×4 + 3×3×4
    72
    >>> attention_multiply_adds(1, 4, S=100)     # 生成第 101 个词：1 个查询对 100 个键
    800
    """
    T, d_k = val.positive_int(T, "T"), val.positive_int(d_k, "d_k")
    d_v = d_k if d_v is None else val.positive_int(d_v, "d_v")
    S = T if S is None else val.positive_int(S, "S")
    return T * S * d_k + T * S * d_v


# ---------------------------------------------------------------- 计时

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
    """在当前进程里计时（由 ``time_rnn_vs_attention`` 在一个单线程的子进程里调用）。"""
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
        参数不是正整数、``lengths`` 为空或不是元组/列表、``rng`` 不是 Generator。
    RuntimeError
        计时的子进程出错（报错信息附上子进程的 stderr）。

    Examples
    --------
    >>> t = time_rnn_vs_attention((8, 16), 4, np.random.default_rng(0), repeat=1)
    >>> sorted(t), t["rnn"].shape
    (['T', 'attention', 'rnn', 'rnn_batched'], (2,))
    """
    if not isinstance(lengths, (tuple, list)) or len(lengths) == 0:
        raise ValueError(f"lengths 必须是非空的整数元组，例如 (16, 64, 256)，收到的是 {lengths!r}。")
    lengths = [val.positive_int(T, "lengths 里的每个 T") for T in lengths]
    d, repeat = val.positive_int(d, "d"), val.positive_int(repeat, "repeat")
    seed = int(val.generator(rng).integers(2**32))
    code = ("import json, sys; from transformer_lab.costs import _time_here; "
            f"print(json.dumps(_time_here({lengths!r}, {d}, {seed}, {repeat})))")
    package_root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, **_ONE_THREAD,
           "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"计时子进程出错（返回码 {proc.returncode}）：\n{proc.stderr[-2000:]}")
    times = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"T": np.array(lengths), **{key: np.array(value) for key, value in times.items()}}
