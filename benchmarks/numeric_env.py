"""dev.py（``tools.env``）给子进程定下的三样数值环境（第 3 样只给批量的命令，不给 ``dev.py lab``），各自的快慢：在同一次运行里
交替量，给出耗时之比。

1. **线程数**：``OPENBLAS_NUM_THREADS=1`` 对默认（每个核一个线程）。书里的矩阵都很小，测试、建网站时又有好几个
   进程同时在算，``dev.py`` 因此让线性代数库只用一个线程。
2. **同一档指令**（``same_arithmetic()``：x86-64 上 OpenBLAS 和 NumPy 都走 AVX2 那一档，存档的输出在每台
   机器上一位不差）对不指定（各按处理器挑最快的）。两种都是一个线程。这台机器本来就挑 AVX2 那一档时（没有
   AVX-512 的处理器），两者本是同一条路，比值应在 1 附近；有 AVX-512 的机器上，这个比值就是统一的代价。

3. **批量运行的内存设置**（``BATCH_MEMORY``：glibc 把 1 GiB 以下的块留在进程里重用，NumPy 不申请透明大页）
   对默认。第 7 章 n = 4096 的注意力表（128 MiB）在新进程里第一次算，和运行那个单元格时一样。

量的是第 9 章小 GPT 的训练（``lessons.runs.GPT`` 的设置，只训练几步）、一个中等大小的矩阵乘法，和第 7 章
n = 4096 的普通注意力。这些设置要在导入 NumPy 之前定下，所以每种设置在一个子进程里跑；几种设置交替跑几轮，
取中位数之比（比值不受机器忙闲影响）。

    python -m benchmarks.numeric_env
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from tools.env import BATCH_MEMORY, SINGLE_THREAD, same_arithmetic

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
import transformer_lab as tl
q, k, v = np.random.default_rng(0).standard_normal((3, 4096, 64))
t = time.perf_counter()
for _ in range(3):
    tl.scaled_dot_product_attention(q, k, v)
big = time.perf_counter() - t
print(json.dumps({"gpt": gpt, "matmul": matmul, "big": big}))
"""
ROUNDS = 3


# 外面设了的这些变量都不带进子进程，只用每种设置自己的
MANAGED = (*SINGLE_THREAD, "OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES", *BATCH_MEMORY)


def run(settings: dict[str, str]) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k not in MANAGED} | settings
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    one = SINGLE_THREAD
    pinned = same_arithmetic()
    settings = {"1 个线程": one, "默认线程数": {}, "1 个线程 + 同一档指令": one | pinned,
                "1 个线程 + 同一档指令 + 内存设置": one | pinned | BATCH_MEMORY}
    results = {name: [] for name in settings}
    for _ in range(ROUNDS):
        for name, env in settings.items():
            results[name].append(run(env))
    print(f"核数 {os.cpu_count()}，每种设置 {ROUNDS} 轮，交替运行；同一档指令：{pinned or '这台机器不是 x86-64 或没有 AVX2，不指定'}")
    median = {name: {key: statistics.median(r[key] for r in rs) for key in rs[0]} for name, rs in results.items()}
    print("测量 | 1 个线程 中位 s | 默认线程数 中位 s | 同一档指令 中位 s | 内存设置 中位 s | 1 个线程 / 默认 | "
          "同一档 / 不指定 | 内存设置 / 默认")
    print("--- | --- | --- | --- | --- | --- | --- | ---")
    for key, label in (("gpt", "小 GPT 训练 8 步"), ("matmul", "200 次 (256×384)·(384×256)"),
                       ("big", "3 次 n = 4096 的注意力（第 7 章）")):
        a, b, c, d = (median[name][key] for name in settings)
        print(f"{label} | {a:.2f} | {b:.2f} | {c:.2f} | {d:.2f} | {a / b:.2f} | {c / a:.2f} | {d / c:.2f}")


if __name__ == "__main__":
    main()
