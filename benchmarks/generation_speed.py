"""第 9 章小 GPT 的两项测量（单线程 BLAS，CPU 时间，同一次运行里交替测）：

1. 训练的用时：``tl.runs.gpt`` 那一次计算（``tiny_gpt.train(default_rng(0), **runs.GPT)`` 加上每个检查点写的字），
   这里不读硬盘上的存档，从头算一遍（目标 ≤ 60 s）。
2. 生成 200 个字（交替测 5 轮，各取最短的一次）：带 KV 缓存（``generation.generate``：每个字都走同一层
   ``encoder_layer_unchecked`` + 第 7 章的 ``KVCache``，每步只算新来的字）/ 每步整段重算
   （``generation.generate_recompute``，每步把前文重新过一遍所有层，只对最后一个位置打分）。先核对两者写出的字相同、
   每一步的概率相差不到 1e-12，再打印用时之比（第 9 章的承诺：贪心写 200 个字，缓存至少快 10 倍）。
   贪心、提示词短（3 个字）是第 9 章 notebook 量的那一种；另外测长提示词（56 个字：考题里的一段）和采样
   （温度 0.8、top_p 0.9，同一个种子）。

测试里不断言时间（机器忙闲会让它大起大落）；这里只打印同一次运行里测出的比值。

    python -m benchmarks.generation_speed              # 两项都测
    python -m benchmarks.generation_speed --no-train   # 只测生成（用硬盘上存好的 tl.runs.gpt()）
"""

import sys
import time

import numpy as np

from benchmarks import _harness  # noqa: F401  单核（须在导入 NumPy 之前）
from benchmarks._harness import best, cpu_seconds
from transformer_lab.lessons import corpus, generation, runs, tiny_gpt

NEW, REPEATS, TARGET = 200, 5, 10.0


def train_once():
    wall, cpu = time.perf_counter(), time.process_time()
    run = tiny_gpt.train(np.random.default_rng(0), **runs.GPT)
    generation.checkpoint_samples(run, runs.GPT_PROMPTS, runs.GPT_SAMPLE_LENGTH, runs.GPT_SAMPLE_TEMPERATURE, 0)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    info = tiny_gpt.sizes(run["checkpoints"][-1])
    print(f"训练 {runs.GPT['steps']} 步（{info['num_layers']} 层，D = {info['d_model']}，{info['num_heads']} 个头，"
          f"{info['parameters']} 个参数，含 {len(run['checkpoints'])} 个检查点的考试损失和写字）：CPU {cpu:.1f} s，"
          f"墙上时钟 {wall:.1f} s（目标 ≤ 60 s）")
    print(f"考试损失 {run['test_loss'][-1]:.3f}（困惑度 {np.exp(run['test_loss'][-1]):.1f}），"
          f"训练文字上 {run['train_loss'][-1]:.3f}；瞎猜是 log|V| = {np.log(info['vocab_size']):.3f}")
    return run


def compare(model, prompt, label, **sampling):
    """先核对（字相同、概率差 ≤ 1e-12），再交替测用时；返回 整段重算 / KV 缓存 的用时之比。"""
    def rng():
        return np.random.default_rng(1) if sampling else None

    cached = generation.generate(model, prompt, NEW, rng(), **sampling)
    full = generation.generate_recompute(model, prompt, NEW, rng(), **sampling)
    same = np.array_equal(cached["tokens"], full["tokens"])
    diff = float(np.abs(cached["probs"] - full["probs"]).max())
    if not same or diff > 1e-12:
        raise SystemExit(f"{label}：缓存与整段重算不一致（字相同：{same}，概率最大差 {diff:.2e}）")
    t = best({"cache": lambda: generation.generate(model, prompt, NEW, rng(), **sampling),
              "full": lambda: generation.generate_recompute(model, prompt, NEW, rng(), **sampling)},
             REPEATS, clock=cpu_seconds)
    per = {k: v / NEW * 1e3 for k, v in t.items()}
    ratio = t["full"] / t["cache"]
    print(f"{label}：KV 缓存 {t['cache'] * 1e3:.0f} ms（每字 {per['cache']:.2f} ms），整段重算 {t['full'] * 1e3:.0f} ms"
          f"（每字 {per['full']:.2f} ms），快 {ratio:.1f} 倍；写出的字相同，概率最大差 {diff:.1e}")
    return ratio


def main():
    run = runs.gpt() if "--no-train" in sys.argv[1:] else train_once()
    model, chars = run["checkpoints"][-1], run["chars"]
    _, test = corpus.held_out_split(corpus.load_corpus())
    long_prompt = test.replace("\n", "")[:56]
    promise = compare(model, corpus.encode("注意力", chars), f"贪心，提示词 3 个字 + 生成 {NEW} 个字")
    compare(model, corpus.encode(long_prompt, chars), f"贪心，提示词 56 个字 + 生成 {NEW} 个字")
    compare(model, corpus.encode("注意力", chars), f"采样（温度 0.8，top_p 0.9），提示词 3 个字 + 生成 {NEW} 个字",
            temperature=0.8, top_p=0.9)
    verdict = "做到了" if promise >= TARGET else "没做到（机器很忙时比值会偏低，请在空闲时再测一次）"
    print(f"第 9 章的承诺（贪心 200 个字，KV 缓存至少快 {TARGET:.0f} 倍）：{promise:.1f} 倍，{verdict}")


if __name__ == "__main__":
    main()
