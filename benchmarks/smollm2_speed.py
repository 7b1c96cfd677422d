"""第 12 章的真 GPT（SmolLM2-135M-Instruct）有多快、占多少内存（单线程 BLAS，同一次运行里测）。

    python -m benchmarks.smollm2_speed

1. 载入（目标 ≤ 3 s）：``load(name, reuse=False)`` = 核对 wheel 的 sha256 + 从 zip 解压 GGUF + 解析 + 272 个张量
   还原成 float32；另外分项测 sha256、解压，参照是把 540 MB 的 float32 复制一遍（同样多的内存要写一遍）。
2. 逐词生成（目标：带 KV 缓存 ≥ 15 词元/秒）：同一段提示词，贪心写 NEW 个词元，带缓存（提示词一次读进，之后每步读
   1 个词元）/ 不带缓存（每步把整段重新算一遍）。先核对两者写出的词元相同，再交替测，各取最短的一次，打印词元/秒和比值。
3. 峰值内存：在一个新进程里载入一次、写 NEW 个词元，读它的最大常驻内存 (VmHWM，含 Python 和 NumPy 本身；
   目标：notebook 的内核 ≤ 1.5 GB)。本进程为了测载入反复载入过，它的峰值不算数。
4. PyTorch 参照（issue 44：同样的前向、同样的 float32 权重、一个线程，NumPy/PyTorch 的每词元用时 ≤ 2 倍）：
   装了 ``torch`` 才测，否则打印“跳过”和原因。``torch`` 从来不是本书的依赖。

时间都是本进程用掉的 CPU 时间（``cpu_seconds``，取最短的一次）：这台 2 核的机器被好几个人共用，排队等 CPU 的
墙上时钟大起大落（负载 7 时约慢 3–4 倍）；但内存带宽也是共用的，CPU 时间同样会被拖慢。测试里从不断言时间。
"""

import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np

from benchmarks import _harness  # noqa: F401  单线程 BLAS：须在导入 NumPy 之前
from benchmarks._harness import best, cpu_seconds
from transformer_lab.pretrained import load, verify_wheel
from transformer_lab.pretrained.registry import MODELS

NAME = "SmolLM2-135M-Instruct"
PROMPT = ("The transformer reads every word of the prompt at once, but it writes one token at a time: each new token "
          "looks back at all the tokens before it. Once upon a time, there was a little")  # 41 个词元
NEW = 24


def load_line():
    info = MODELS[NAME]
    path = verify_wheel(info)

    def unzip():
        with zipfile.ZipFile(path) as z:
            z.read(info.members["weights"])

    model = load(NAME)
    total = sum(a.nbytes for a in model.state_dict.values())
    data = np.ones(total // 4, np.float32)
    t = best({"load": lambda: load(NAME, reuse=False), "sha256": lambda: verify_wheel(info), "unzip": unzip,
              "copy": lambda: data.copy()}, repeats=3, clock=cpu_seconds)
    print(f"载入：{t['load']:.2f} s（目标 ≤ 3 s；其中核对 sha256 {t['sha256']:.2f} s、解压 GGUF {t['unzip']:.2f} s，"
          f"其余是解析和还原 {total / 1e6:.0f} MB 的 float32）；复制同样多的 float32 {t['copy']:.2f} s，"
          f"比值 {t['load'] / t['copy']:.1f}×")
    return model


def generation_line(model):
    ids = model.encode(PROMPT)
    cached = model.generate(ids, NEW)
    full = model.generate(ids, NEW, use_cache=False)
    if full != cached or len(cached) != NEW:
        raise SystemExit(f"带缓存与不带缓存写出的词元不同（或提前停了）：{cached} / {full}")
    t = best({"cache": lambda: model.generate(ids, NEW), "full": lambda: model.generate(ids, NEW, use_cache=False)},
             repeats=2, clock=cpu_seconds)
    caches = model.new_caches(len(ids) + 1)
    prompt = np.array(ids)

    def read_prompt():
        for c in caches:
            c.truncate(0)
        model.feed_unchecked(prompt, caches)

    def one_step():  # 提示词之后的一步：读 1 个词元（之后撤回，下一轮还是同一步）
        model.feed_unchecked(prompt[-1:], caches)
        for c in caches:
            c.truncate(len(ids))

    read_prompt()
    step = best({"prompt": read_prompt, "step": one_step}, repeats=10, clock=cpu_seconds)
    rate = {"cache": NEW / t["cache"], "full": NEW / t["full"]}
    print(f"生成（提示词 {len(ids)} 个词元，贪心写 {NEW} 个，含读提示词）：带 KV 缓存 {rate['cache']:.1f} 词元/秒，"
          f"不带缓存 {rate['full']:.1f} 词元/秒，缓存快 {rate['cache'] / rate['full']:.1f}×"
          "（每步都要把 540 MB 的权重读一遍，这一部分两种一样；缓存省的是随前文变长的那部分）")
    print(f"  其中读提示词 {step['prompt'] * 1e3:.0f} ms；之后每个词元 {step['step'] * 1e3:.0f} ms，"
          f"即 {1 / step['step']:.1f} 词元/秒（目标 ≥ 15）")
    print(f"  写出的：{PROMPT!r} → {model.decode(cached)!r}")
    return step["step"]


def torch_line(model, numpy_per_token):
    try:
        import torch
    except ImportError:
        print("PyTorch 参照：跳过（没有装 torch。这台机器上 download.pytorch.org 连不上，PyPI 只有带 CUDA 的 torch，"
              "连同 nvidia-* 依赖好几 GB：按约定不装）")
        return
    torch.set_num_threads(1)
    print(f"PyTorch 参照：torch {torch.__version__} 已装，但本脚本还没有写 PyTorch 版的前向"
          f"（NumPy 每词元 {numpy_per_token * 1e3:.0f} ms）")


# VmHWM（/proc/self/status）而不是 ru_maxrss：后者在 fork + exec 之后记着父进程的峰值（子进程刚 fork 出来时与父进程
# 共享全部内存页），本进程已经占了好几 GB，子进程就会报出同样的数。
PEAK = f"""
from benchmarks import _harness
from transformer_lab.pretrained import load
model = load({NAME!r})
model.generate(model.encode({PROMPT!r}), {NEW})
print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")))
"""


def memory_line():
    out = subprocess.run([sys.executable, "-c", PEAK], cwd=Path(__file__).resolve().parents[1], capture_output=True,
                         text=True, check=True).stdout
    print(f"峰值内存（新进程：载入一次、写 {NEW} 个词元）：{int(out.split()[-1]) / 1024**2:.2f} GB（目标 ≤ 1.5 GB）")


if __name__ == "__main__":
    model = load_line()
    per_token = generation_line(model)
    memory_line()
    torch_line(model, per_token)
