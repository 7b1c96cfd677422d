"""第 11 章的 BPE 有多快：在全书语料上训练到本章最大的词表（默认 4096 = 256 + 3840 条合并，和
``tokenization.SIZES`` 的最大值一样），再编码整本语料。

    python -m benchmarks.bpe_speed [合并条数]

目标（issue 43）：训练 <= 30 s，编码 <= 5 s。``tl.bpe.train`` 用增量计数（只更新被换掉的地方左右的计数，
用堆取下一对）；对照是"每一步从头重数"的朴素写法（按文字顺序填的字典 + ``max`` + 从左往右合并，和 minbpe 的基础分词器一样；不做输入检查，不给它多算时间）。
朴素写法跑完几千步要好几分钟，所以只实测它的前 ``RECOUNT_STEPS`` 步，再各实测一步在合并了一半和全部规则的序列上，
按梯形公式把三处的每步用时乘以步数作为估计，并说明这是外推（序列越合越短，但不同的对越来越多，每步用时并不
随长度成比例地下降：最后一步比开头只快一点）。
先核对两种写法的前几步合并规则相同。墙上时钟受机器忙闲影响：比值比绝对时间可信。
"""

import sys
import time

from benchmarks import _harness  # noqa: F401  单线程 BLAS：须在导入 NumPy 之前
from benchmarks._harness import best
from transformer_lab.lessons import bpe, corpus

NUM_MERGES = 4096 - 256  # 第 11 章最大的词表
RECOUNT_STEPS = 24
REPEATS = 3


def recount_train(ids: list[int], num_merges: int) -> tuple[list[tuple[int, int]], list[int]]:
    """朴素写法：每一步从头数一遍所有相邻的对。返回合并规则和最后的序列。"""
    merges = []
    for k in range(num_merges):
        counts = {}
        for pair in zip(ids, ids[1:]):
            counts[pair] = counts.get(pair, 0) + 1
        best = max(counts, key=counts.get)
        if counts[best] < 2:
            break
        merges.append(best)
        out, i = [], 0
        while i < len(ids):
            if i + 1 < len(ids) and ids[i] == best[0] and ids[i + 1] == best[1]:
                out.append(256 + k)
                i += 2
            else:
                out.append(ids[i])
                i += 1
        ids = out
    return merges, ids


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def main(num_merges: int = NUM_MERGES):
    text = corpus.load_corpus()
    data = text.encode("utf-8")
    print(f"语料：{len(text)} 个字符，{len(data)} 个 UTF-8 字节；合并 {num_merges} 条（词表 {256 + num_merges}）")
    for split in (False, True):
        merges, t_train = timed(lambda: bpe.train(text, num_merges, split=split))
        ids, t_encode = timed(lambda: bpe.encode(text, merges, split=split))
        print(f"split={split!s:<5}  训练 {t_train:6.2f} s（目标 <= 30 s）  编码 {t_encode:5.2f} s（目标 <= 5 s）  "
              f"{len(ids)} 个词元，每字 {len(ids) / len(text):.3f} 个")
    merges = bpe.train(text, num_merges)
    head, _ = recount_train(list(data), RECOUNT_STEPS)
    assert head == merges[:RECOUNT_STEPS], "两种写法的前几步合并规则不同"
    final = bpe.encode(text, merges)
    middle = bpe.encode(text, merges[:len(merges) // 2])
    t = best({"incremental": lambda: bpe.train(text, num_merges),
              "head": lambda: recount_train(list(data), RECOUNT_STEPS),
              "middle": lambda: recount_train(middle, 1),
              "last": lambda: recount_train(final, 1)}, REPEATS)  # 轮流测，各取最短的一次
    per_step = [t["head"] / RECOUNT_STEPS, t["middle"], t["last"]]
    estimate = (per_step[0] + 2 * per_step[1] + per_step[2]) / 4 * len(merges)  # 梯形公式：开头、一半、最后
    print(f"朴素写法（每步从头重数）每步用时：开头 {per_step[0] * 1e3:.0f} ms（实测前 {RECOUNT_STEPS} 步的平均），"
          f"合并一半后（{len(middle)} 个词元）{per_step[1] * 1e3:.0f} ms，最后（{len(final)} 个词元）{per_step[2] * 1e3:.0f} ms"
          f" → {len(merges)} 步约 {estimate:.0f} s（外推）")
    print(f"增量计数 {t['incremental']:.2f} s；朴素写法 / 增量计数 ≈ {estimate / t['incremental']:.0f}×（同一次运行里轮流测）")

if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else NUM_MERGES)
