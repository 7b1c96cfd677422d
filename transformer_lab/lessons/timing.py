"""计时：同一句话，RNN 一步接一步、注意力一次批量乘法，各要多久。

在一个新的 Python 子进程里量（``python -m transformer_lab.lessons.timing``），并把 BLAS 限制为单线程：
机器上同时有别的程序在跑时，多线程的矩阵乘法可能因为等线程而慢上百倍，单线程的结果稳定得多。
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

from .. import _validation as check
from ..core.attention import scaled_dot_product_attention
from ..core.rnn import orthogonal_recurrent_weights, rnn_forward

__all__ = ["time_rnn_vs_attention"]

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
    lengths = check.nonempty_sequence(lengths, "lengths", "(16, 64, 256)")
    lengths = [check.positive_int(T, "lengths 里的每个 T") for T in lengths]
    d, repeat = check.positive_int(d, "d"), check.positive_int(repeat, "repeat")
    seed = int(check.generator(rng).integers(2**32))
    args = json.dumps({"lengths": lengths, "d": d, "seed": seed, "repeat": repeat})
    package_root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, **_ONE_THREAD,
           "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-m", __name__, args], env=env, capture_output=True, text=True,
                          timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"计时子进程出错（返回码 {proc.returncode}）：\n{proc.stderr[-2000:]}")
    times = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"T": np.array(lengths), **{key: np.array(value) for key, value in times.items()}}


if __name__ == "__main__":  # time_rnn_vs_attention 的子进程：参数是一个 JSON 字符串，结果打印成 JSON
    print(json.dumps(_time_here(**json.loads(sys.argv[1]))))
