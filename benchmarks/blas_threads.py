"""线性代数库用几个线程：一个线程对默认（每个核一个）的耗时之比，在同一次运行里交替量。

书里的矩阵都很小；``dev.py`` 给测试、建网站、JupyterLab 都设了 ``OPENBLAS_NUM_THREADS=1``。这里量的是
第 9 章小 GPT 的训练（``lessons.runs.GPT`` 的设置，只训练几步）和第 10 章真模型的一次编码。线程数要在导入
NumPy 之前定下，所以每种设置在一个子进程里跑；两种设置交替跑几轮，取中位数之比（比值不受机器忙闲影响）。

    python benchmarks/blas_threads.py
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = """
import json, time
import numpy as np
from transformer_lab.lessons import runs, tiny_gpt
cfg = {**runs.GPT, "steps": 8, "checkpoint_every": 8}
tiny_gpt.train(np.random.default_rng(0), **{**cfg, "steps": 1, "checkpoint_every": 1})  # 预热
t = time.perf_counter()
tiny_gpt.train(np.random.default_rng(0), **cfg)
gpt = time.perf_counter() - t
a, b = np.random.default_rng(0).standard_normal((2, 256, 384))
t = time.perf_counter()
for _ in range(200):
    a @ b.T
matmul = time.perf_counter() - t
print(json.dumps({"gpt": gpt, "matmul": matmul}))
"""
ROUNDS = 3


def run(threads: str | None) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    if threads:
        env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = threads
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    results = {"1": [], "默认": []}
    for _ in range(ROUNDS):
        results["1"].append(run("1"))
        results["默认"].append(run(None))
    print(f"核数 {os.cpu_count()}，每种设置 {ROUNDS} 轮，交替运行")
    print("测量 | 1 个线程 中位 s | 默认线程数 中位 s | 1 个线程 / 默认")
    print("--- | --- | --- | ---")
    for key, name in (("gpt", "小 GPT 训练 8 步"), ("matmul", "200 次 (256×384)·(384×256)")):
        one = statistics.median(r[key] for r in results["1"])
        default = statistics.median(r[key] for r in results["默认"])
        print(f"{name} | {one:.2f} | {default:.2f} | {one / default:.2f}")


if __name__ == "__main__":
    main()
