"""分块注意力与 KV 缓存：时间与峰值内存，都以同一次运行里的参照值为分母报告比值。

    python -m benchmarks.streaming_speed            # T = 256, 1024, 2048；T = 8192 的内存；生成 256 个词
    python -m benchmarks.streaming_speed --long     # 另加生成 1024 个词（不用缓存那一路要几分钟）

口径：
* 时间取 REPEAT 次里最短的一次（time.perf_counter），不开 tracemalloc；
* 峰值内存用 tracemalloc 单独量（NumPy 的数组内存会报告给 tracemalloc），是调用期间比调用前多出的峰值；
* "两次矩阵乘"是注意力躲不开的 q @ kᵀ 与 p @ v（在整张数组上），作为速度的下限参照；
* 生成：一层多头注意力 (D = 256, H = 4)，不用缓存 = 每一步把前文全部重新投影并算完整的因果注意力，
  用缓存 = 只投影新词、追加进 KVCache、新词看缓存；两路输出逐步比较（1e-12）。
"""

from __future__ import annotations

import inspect
import os
import platform
import sys

import numpy as np

from benchmarks import _harness  # noqa: F401  单线程 BLAS：须在导入 NumPy 之前
from benchmarks._harness import best
from transformer_lab.core.attention import causal_mask, scaled_dot_product_attention
from transformer_lab.core.kv_cache import KVCache
from transformer_lab.core.multihead import split_heads
from transformer_lab.core.tiled import tiled_attention
from transformer_lab.lessons.costs import decode_multiply_adds
from transformer_lab.lessons.timing import peak_bytes  # 同一把尺子：第 7 章正文也用它

REPEAT = 5


def best_time(fn, repeat=REPEAT):
    """一个函数 repeat 次里最短的一次（不预热：长的那几项只跑一次）。"""
    return best({"fn": fn}, repeat, warmup=False)["fn"]


def torch_sdpa():
    """PyTorch 的 scaled_dot_product_attention（可选依赖；没装就返回 None）。"""
    try:
        import torch
    except ImportError:
        return None
    return lambda q, k, v, causal: torch.nn.functional.scaled_dot_product_attention(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v), is_causal=causal)


def paired_best(fns, repeat=REPEAT):
    """轮流运行 fns 里的每个函数 repeat 轮，各取最短：机器忙闲随时间变化时，比值仍在同样的条件下量出。"""
    return best(fns, repeat, warmup=False)


def attention_table(H=8, d_k=64):
    rng = np.random.default_rng(0)
    torch = torch_sdpa()
    block = inspect.signature(tiled_attention).parameters["block_size"].default
    print(f"### 注意力：H = {H}, d_k = {d_k}, float64, block_size = {block}（默认），单线程 BLAS"
          f"（各项轮流跑 {REPEAT} 轮，各取最短）\n")
    head = "| T | 整表 ms | 分块 ms | 分块/整表 时间 | 分块/两次矩阵乘 | 因果分块/分块 | 因果分块/因果整表 | 分块/整表 峰值内存 |"
    print(head + (" 分块/PyTorch |" if torch else ""))
    print("|---" * (head.count("|") - 1 + bool(torch)) + "|")
    for T in (256, 1024, 2048):
        q, k, v = (rng.normal(size=(H, T, d_k)) for _ in range(3))  # (H, T, d_k)
        mask = causal_mask(T)
        t = paired_best({
            "full": lambda: scaled_dot_product_attention(q, k, v),
            "full_causal": lambda: scaled_dot_product_attention(q, k, v, mask=mask),
            "tiled": lambda: tiled_attention(q, k, v),
            "causal": lambda: tiled_attention(q, k, v, causal=True),
            "mm": lambda: (q @ np.swapaxes(k, -1, -2)) @ v,  # 两次躲不开的矩阵乘
            **({"torch": lambda: torch(q, k, v, False)} if torch else {}),
        })
        m_full = peak_bytes(lambda: scaled_dot_product_attention(q, k, v))
        m_tiled = peak_bytes(lambda: tiled_attention(q, k, v))
        np.testing.assert_allclose(tiled_attention(q, k, v), scaled_dot_product_attention(q, k, v)[0], rtol=1e-12,
                                   atol=1e-12)
        np.testing.assert_allclose(tiled_attention(q, k, v, causal=True),
                                   scaled_dot_product_attention(q, k, v, mask=mask)[0], rtol=1e-12, atol=1e-12)
        row = (f"| {T} | {t['full'] * 1e3:.1f} | {t['tiled'] * 1e3:.1f} | {t['tiled'] / t['full']:.2f} | "
               f"{t['tiled'] / t['mm']:.2f} | {t['causal'] / t['tiled']:.2f} | {t['causal'] / t['full_causal']:.2f} | "
               f"{m_tiled / m_full:.4f} |")
        if torch:
            row += f" {t['tiled'] / t['torch']:.2f} |"
        print(row)
    print()


def memory_8192(T=8192, d_k=64):
    rng = np.random.default_rng(1)
    q, k, v = (rng.normal(size=(T, d_k)) for _ in range(3))  # (T, d_k)
    m_full = peak_bytes(lambda: scaled_dot_product_attention(q, k, v))
    m_tiled = peak_bytes(lambda: tiled_attention(q, k, v))
    print(f"### 峰值额外内存：T = S = {T}, H = 1, d_k = {d_k}, float64\n")
    print(f"整表 {m_full / 2**20:.1f} MiB，分块 {m_tiled / 2**20:.2f} MiB，分块/整表 = {m_tiled / m_full:.4f}"
          f"（一张 T × S 分数表 = {T * T * 8 / 2**20:.0f} MiB）\n")


def generate(x, w, H, cached):
    """一层多头注意力逐词生成，返回每一步新词的输出 (T, D)。w = (w_q, w_k, w_v)，各 (D, D)。"""
    T, D = x.shape
    cache = KVCache(T, D // H, batch_shape=(H,)) if cached else None
    outs = []
    for t in range(1, T + 1):
        if cached:
            q, k, v = (split_heads(x[t - 1 : t] @ wi, H) for wi in w)  # (H, 1, d_k) 只投影新词
            out = cache.step(q, k, v)  # (H, 1, d_k)
        else:
            q, k, v = (split_heads(x[:t] @ wi, H) for wi in w)  # (H, t, d_k) 整段前文重新投影
            out = scaled_dot_product_attention(q, k, v, mask=causal_mask(t))[0][:, -1:, :]  # (H, 1, d_k)
        outs.append(np.swapaxes(out, 0, 1).reshape(1, D))  # (1, D) 各头拼回去
    return np.concatenate(outs)  # (T, D)


def decode_table(lengths, D=256, H=4):
    rng = np.random.default_rng(2)
    print(f"### 逐词生成：一层多头注意力，D = {D}, H = {H}, float64（T <= 256 时取 {REPEAT} 次最短，更长的跑 1 次）\n")
    print("| T | 不用缓存 s | 用缓存 s | 不用/用 时间 | 不用/用 乘加次数 (decode_multiply_adds) |")
    print("|---|---|---|---|---|")
    for T in lengths:
        x = rng.normal(size=(T, D))  # (T, D)
        w = tuple(rng.normal(size=(D, D)) / np.sqrt(D) for _ in range(3))  # 3 × (D, D)
        np.testing.assert_allclose(generate(x, w, H, True), generate(x, w, H, False), rtol=1e-12, atol=1e-12)
        repeat = REPEAT if T <= 256 else 1
        slow = best_time(lambda: generate(x, w, H, cached=False), repeat)
        fast = best_time(lambda: generate(x, w, H, cached=True), repeat)
        counts = decode_multiply_adds(T, D, cached=False) / decode_multiply_adds(T, D, cached=True)
        print(f"| {T} | {slow:.2f} | {fast:.3f} | {slow / fast:.1f} | {counts:.1f} |")
    print()


if __name__ == "__main__":
    print(f"机器：{platform.processor() or platform.machine()}，{os.cpu_count()} 核；Python {sys.version.split()[0]}，"
          f"NumPy {np.__version__}，OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}\n")
    attention_table()
    memory_8192()
    decode_table((256, 1024) if "--long" in sys.argv else (256,))
