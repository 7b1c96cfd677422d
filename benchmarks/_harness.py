"""基准脚本共用的一把尺子：单线程 BLAS、交替测量取中位数或最短、打印比值。

在导入 NumPy 之前导入本模块（``from benchmarks import _harness``）：BLAS 的线程数只在 NumPy 第一次加载时读取。
共享的 CPU 上多线程自旋会让计时大起大落，所以一律单线程；墙上时钟受机器忙闲影响，所以结论都写成
同一次运行里、交替测出的两个量之比。测试里从不断言时间。

    python dev.py bench      # 依次运行 benchmarks/ 下的全部脚本
"""

from __future__ import annotations

import os

from tools.env import SINGLE_THREAD

for _name, _value in SINGLE_THREAD.items():
    os.environ.setdefault(_name, _value)

import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

__all__ = ["seconds", "cpu_seconds", "alternate", "best", "ratio_line"]


def seconds(fn: Callable[[], object]) -> float:
    """墙上时钟：``fn()`` 跑一次用了几秒。"""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def cpu_seconds(fn: Callable[[], object]) -> float:
    """本进程用掉的 CPU 时间（不是墙上时钟）：机器被别的程序占着时，排队等 CPU 的时间不算进来。"""
    start = time.process_time()
    fn()
    return time.process_time() - start


def alternate(fns: dict[str, Callable[[], object]], repeats: int, clock: Callable = seconds,
              summary: Callable = statistics.median, warmup: bool = True) -> dict[str, float]:
    """先各跑一次预热（``warmup``），再轮流跑每个函数 ``repeats`` 轮，每个取 ``summary``（默认中位数）。

    轮流测：机器的负载随时间变化时，对每个函数的影响一样，比值仍然可信。
    """
    for fn in fns.values() if warmup else ():
        fn()
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            times[name].append(clock(fn))
    return {name: summary(t) for name, t in times.items()}


def best(fns: dict[str, Callable[[], object]], repeats: int, clock: Callable = seconds,
         warmup: bool = True) -> dict[str, float]:
    """同 ``alternate``，但每个函数取最短的一次（测的是"不被打扰时能多快"）。"""
    return alternate(fns, repeats, clock, min, warmup)


def ratio_line(name: str, value: float, reference: float, unit: str = "×", target: str = "") -> str:
    """一行结果：名字、两个量和它们的比值，以及（可选的）目标。"""
    goal = f"（目标 {target}）" if target else ""
    return f"{name}：{value * 1e3:.2f} ms / {reference * 1e3:.2f} ms = {value / reference:.2f}{unit}{goal}"
