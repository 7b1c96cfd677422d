"""位置编码的速度：算一张 (T = 8192, d_model = 1024) 的正弦位置编码表，用时是"一次 np.sin"的几倍（同一次运行里测，目标 <= 2×）。

    python -m benchmarks.positional_speed

参照是一次 ``np.sin`` 作用在同样大小 (8192 × 1024) 的数组上。np.sin 的快慢和自变量的大小有关
（自变量大时要先做"减去 2π 的整数倍"，更慢），所以给两个参照：
* 参照 A：自变量在 [0, 1) 之间（最快的情况，最严格的参照）；
* 参照 B：自变量就是这张表的角度 p·ω_i（从 0 到 8191，同样的工作量）。
位置编码要算 T × d_model/2 个 sin 和同样多个 cos，正好是一次 np.sin 的工作量；多出来的是角度表和交错写入。
每项取多次运行的中位数，交替测量，负载变化对两边一样。
"""

import numpy as np

from benchmarks import _harness  # noqa: F401  单线程 BLAS：须在导入 NumPy 之前
from benchmarks._harness import alternate
from transformer_lab.core.positional import positional_frequencies, sinusoidal_positional_encoding

T, D = 8192, 1024
REPEATS = 15


def main():
    small = np.random.default_rng(0).random((T, D))  # (T, D) 参照 A 的自变量
    angles = np.repeat(np.arange(T, dtype=float)[:, None] * positional_frequencies(D), 2, axis=1)  # (T, D) 参照 B
    jobs = {
        "位置编码 sinusoidal_positional_encoding(8192, 1024)": lambda: sinusoidal_positional_encoding(T, D),
        "参照 A：np.sin，自变量在 [0, 1)": lambda: np.sin(small),
        "参照 B：np.sin，自变量 = 这张表的角度": lambda: np.sin(angles),
    }
    med = alternate(jobs, REPEATS)  # 预热后轮流测，取中位数
    for name, t in med.items():
        print(f"{name:<52s} {t * 1e3:8.2f} ms")
    pe, ref_a, ref_b = med.values()
    print(f"位置编码 / 参照 A = {pe / ref_a:.2f}×   位置编码 / 参照 B = {pe / ref_b:.2f}×   （目标 <= 2×）")


if __name__ == "__main__":
    main()
