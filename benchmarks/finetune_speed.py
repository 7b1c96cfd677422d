"""第 13 章的三份实验各要多久，以及三张可交互图拖滑块的延迟（单线程 BLAS，同一次运行里测）。

1. 参照：第 9 章小 GPT 训练的一步（``tiny_gpt.loss_and_grads`` + Adam，一批 4 段 × 256 个字），取 5 次里最短的。
2. 从头算一遍 ``runs.sft``、``runs.lora``、``runs.dpo`` 的实验（``assistant.*_experiment``，不读硬盘上的存档），
   打印 CPU 时间、墙上时钟，以及相当于第 9 章训练的几步（目标：每份 ≤ 60 s）。
3. 三张图沿每个滑块拖一遍（update + draw + 编码 PNG，即活滑块真正做的事），中位数和 p95（目标中位数 ≤ 50 ms），
   以及和第 9 章同样版式的 ``training_checkpoints`` 在同一次运行里的比值。

测试里不断言时间；这里只打印同一次运行里测出的比值。

    python -m benchmarks.finetune_speed
"""

import time

import numpy as np

from benchmarks import _harness  # noqa: F401  单核（须在导入 NumPy 之前）
from benchmarks._harness import best, cpu_seconds
from transformer_lab.figures import ch09_next_token, ch13_assistant
from transformer_lab.lessons import assistant, corpus, optim, runs, tiny_gpt


def chapter9_step(model, ids):
    tokens, targets = tiny_gpt.windows(ids, runs.GPT["context"], runs.GPT["batch_size"], np.random.default_rng(0))

    def step():
        loss, grads = tiny_gpt.loss_and_grads(model, tokens, targets)
        optim.adam(dict(model.params), grads, {}, 1e-3)

    return best({"step": step}, 5, clock=cpu_seconds)["step"]


def timed(label, fn, step):
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(f"{label}：CPU {cpu:.1f} s，墙上时钟 {wall:.1f} s，相当于第 9 章训练的 {cpu / step:.0f} 步（目标 ≤ 60 s）")


def slider_latency(ex):
    moves = [{**{s.name: s.start for s in ex.sliders}, s.name: v} for s in ex.sliders for v in s.values]
    ex.png(moves[0])
    times = []
    for _ in range(3):
        for p in moves:
            t0 = time.perf_counter()
            ex.png(p)
            times.append((time.perf_counter() - t0) * 1e3)
    return np.median(times), np.percentile(times, 95)


def main() -> None:
    run = runs.gpt()
    base, chars = run["checkpoints"][-1], run["chars"]
    ids = corpus.encode(corpus.held_out_split(corpus.load_corpus())[0], chars)
    step = chapter9_step(base, ids)
    print(f"参照：第 9 章训练一步（4 × 256 个字，前向 + 反向 + Adam）CPU {step * 1e3:.0f} ms")
    timed("指令微调 runs.sft（200 步 + 11 个存档各答 52 题）", lambda: assistant.sft_experiment(base, chars, 0), step)
    timed(f"LoRA runs.lora（秩 {assistant.LORA_RANKS} 各 200 步 + 打分）", lambda: assistant.lora_experiment(base, chars, 0),
          step)
    sft_model = tiny_gpt.TinyGPT(base.config, runs.sft()["final"])
    timed(f"DPO runs.dpo（β {assistant.DPO_BETAS} 各 100 步 + KL + 打分）", lambda: assistant.dpo_experiment(sft_model, chars),
          step)
    reference, _ = slider_latency(ch09_next_token.training_checkpoints())  # 同一次运行里的参照：第 9 章同样版式的图
    print(f"参照：第 9 章 training_checkpoints 活滑块全程中位数 {reference:.1f} ms")
    for make in (ch13_assistant.sft_checkpoints, ch13_assistant.lora_ranks, ch13_assistant.dpo_beta):
        median, p95 = slider_latency(make())
        print(f"{make.__name__}：活滑块全程中位数 {median:.1f} ms（参照的 {median / reference:.2f} 倍），p95 {p95:.1f} ms"
              "（目标中位数 ≤ 50 ms）")


if __name__ == "__main__":
    main()
