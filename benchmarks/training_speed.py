"""第 8 章小 Transformer 的训练速度：一步训练 / 同一批数据的一次前向（同一次运行里测，打印比值；目标 ≤ 4×），
以及本章每一次训练（有位置编码、去掉位置编码各一次）的用时（目标 ≤ 20 s，单核）。

    python -m benchmarks.training_speed

一步训练 = 前向 + 交叉熵 + 全部反向（encoder_layer_backward 重算前向的中间结果，没有缓存）+ Adam 更新。
一次前向 = 嵌入 + 位置编码 + 一层编码器 + 输出层 + 交叉熵。批次 64 串，每串 6 个符号，D = 32，d_ff = 64，H = 1。
"""

import time

import numpy as np

from benchmarks import _harness  # noqa: F401  单核：目标就是单核上的用时（须在导入 NumPy 之前）
from benchmarks._harness import alternate, cpu_seconds
from transformer_lab.core.loss import cross_entropy
from transformer_lab.lessons import tiny_transformer as tt
from transformer_lab.lessons.optim import adam

REPEATS = 200


def main():
    rng = np.random.default_rng(0)
    params = tt.init_model(rng)
    batch = tt.reversal_task(64, rng)
    tokens, targets = batch["tokens"], batch["targets"]

    def forward():
        return cross_entropy(tt.forward(params, tokens)[0], targets)

    def train_step():
        _, grads = tt.loss_and_grads(params, tokens, targets)
        return adam(params, grads, {}, 3e-3)

    # CPU 时间（不是墙上时钟）：机器被占着时，墙上时钟会把"排队等 CPU"也算进来；BLAS 单线程，CPU 时间就是单核用时
    f, s = alternate({"forward": forward, "step": train_step}, REPEATS, clock=cpu_seconds).values()
    print(f"一次前向 {f * 1e3:6.2f} ms   一步训练 {s * 1e3:6.2f} ms   一步训练/一次前向 = {s / f:.2f}×（目标 ≤ 4×）")

    for use_pe in (True, False):
        wall, cpu = time.perf_counter(), time.process_time()
        tt.train(np.random.default_rng(0), steps=600, checkpoint_every=30, use_pe=use_pe)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        print(f"训练 600 步（{'有' if use_pe else '去掉'}位置编码，含每 30 步在 1000 道考题上的评估）："
              f"CPU {cpu:.1f} s，墙上时钟 {wall:.1f} s（目标 ≤ 20 s）")


if __name__ == "__main__":
    main()
