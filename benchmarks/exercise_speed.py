"""动手写的检查有多快：``tl.exercises.check`` 检查每一道练习的参考答案，每次用时的中位数，以及全部练习检查一遍的总用时。

    python -m benchmarks.exercise_speed

目标（issue 42）：每次检查 <= 0.3 s。练习是运行时从 ``tl.exercises.names()`` 读出来的，加了新的练习不用改这里。
参照是同一次运行里"只把参考答案在这道题的全部测试输入上各跑一遍"的用时：检查 / 参照 之比是检查器自己
（复制输入、核对有没有改动输入、和参考答案比较）的开销。读者的答案通过时不会去重算常见错误的写法，
所以第一栏是通过时的用时；答错时还要把常见错误的写法一个个重算，直到认出是哪一个，所以再测一栏
"答错"：读者交的是表里最后一个常见错误的最后一种写法（要把前面的写法都算一遍才认得出，最慢的情况之一）。
每项轮流测 REPEATS 轮、取中位数，机器负载的变化对各项一样。
"""

import statistics

import transformer_lab as tl
from benchmarks import _harness  # noqa: F401  单线程 BLAS：须在导入 NumPy 之前
from benchmarks._harness import alternate

REPEATS = 7
TARGET = 0.3  # 秒


def _bare(ex):
    cases = ex.test_cases()
    return lambda: [ex.solution(*c.args, **c.kwargs) for c in cases]


def main():
    names = tl.exercises.names()
    jobs = {}
    for name in names:
        ex = tl.exercises.exercise(name)
        jobs[name] = lambda ex=ex: tl.exercises.check(ex.name, ex.solution)
        jobs[f"{name}（参照）"] = _bare(ex)
        if ex.mistakes:
            jobs[f"{name}（答错）"] = lambda ex=ex: tl.exercises.check(ex.name, ex.mistakes[-1].variants[-1])
    med = alternate(jobs, REPEATS)
    print("练习：检查参考答案 / 参照 = 比值；答错时的检查")
    for name in names:
        check, bare = med[name], med[f"{name}（参照）"]
        wrong = med.get(f"{name}（答错）", float("nan"))
        print(f"{name:<20s} {check * 1e3:7.2f} ms / {bare * 1e3:6.2f} ms = {check / bare:6.1f}×；"
              f"答错 {wrong * 1e3:7.2f} ms")
    checks = [med[name] for name in names]
    print(f"{len(names)} 道练习：每次检查的中位数 {statistics.median(checks) * 1e3:.2f} ms，"
          f"最慢的一道 {max(checks) * 1e3:.2f} ms（目标 <= {TARGET * 1e3:.0f} ms），"
          f"全部检查一遍共 {sum(checks) * 1e3:.2f} ms")
    wrongs = [med[k] for k in med if k.endswith("（答错）")]
    print(f"答错时：中位数 {statistics.median(wrongs) * 1e3:.2f} ms，最慢 {max(wrongs) * 1e3:.2f} ms")
    failed = [n for n in names if not tl.exercises.check(n, tl.exercises.exercise(n).solution).passed]
    if failed:
        raise SystemExit(f"这些练习的参考答案没有通过检查：{failed}")


if __name__ == "__main__":
    main()
