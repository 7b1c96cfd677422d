"""活滑块的更新延迟：把每张可交互图沿滑块的整个范围拖一遍（Agg 后端），报告中位数和 p95，
并与同一次运行里"同样大小的图做一次 set_data + draw"的参照值相比。

    python -m benchmarks.live_latency

两种口径：
* update+draw：改数据并重绘（与参照值口径相同，比值目标 <= 1.5）；
* 活滑块全程：update + draw + 编码 PNG（JupyterLab 里 ipywidgets 真正做的事，目标中位数 <= 50 ms）。
"""

from __future__ import annotations

import time

import numpy as np

import transformer_lab as tl
from transformer_lab.plot.figure import new_figure

REPEAT = 3


def sweep_values(slider, n=40):
    """活滑块会经过的取值：连续滑块在区间内均匀取 n 个，离散滑块取全部网格。"""
    if slider.continuous:
        lo, hi = min(slider.values), max(slider.values)
        vals = np.linspace(lo, hi, n)
        return [int(round(v)) for v in vals] if isinstance(lo, int) else list(vals)
    return list(slider.values)


def moves(ex):
    """沿每个滑块的范围来回拖（其他滑块停在默认值）。"""
    start = {s.name: s.start for s in ex.sliders}
    return [{**start, s.name: v} for s in ex.sliders for v in sweep_values(s)]


def timed(fn, items):
    times = []
    for _ in range(REPEAT):
        for item in items:
            t0 = time.perf_counter()
            fn(item)
            times.append(time.perf_counter() - t0)
    return np.array(times) * 1000


def reference(ex, n):
    """参照：同样大小、同样子图数的图，每个子图一张 imshow，只做 set_data + draw。"""
    fig, axes = new_figure(*ex.size, ncols=ex.ncols)
    rng = np.random.default_rng(0)
    images = [ax.imshow(rng.random((8, 8))) for ax in axes]
    fig.canvas.draw()
    fig.set_layout_engine("none")  # 与 Explorable 相同：排版只算一次
    data = [rng.random((8, 8)) for _ in range(n)]

    def step(d):
        for im in images:
            im.set_data(d)
        fig.canvas.draw()

    return timed(step, data)


def main() -> None:
    rows = []
    for name, make in tl.explore.catalog().items():
        ex = make()
        if not ex.sliders:
            continue  # 没有滑块的图（静态图，例如第 10 章的 it→animal 表）没有可拖的
        ex.figure  # 建好图（只建一次），计时只量拖动
        items = moves(ex)

        ref = reference(ex, len(items))
        draw = timed(lambda p: ex.render(**p), items)
        full = timed(lambda p: ex.png(p), items)
        rows.append((name, len(items), np.median(ref), np.median(draw), np.percentile(draw, 95),
                     np.median(draw) / np.median(ref), np.median(full), np.percentile(full, 95)))
    head = ("可交互图", "拖动次数", "参照 ms", "update+draw 中位 ms", "p95 ms", "比值", "活滑块全程 中位 ms", "p95 ms")
    print(" | ".join(head))
    print(" | ".join("---" for _ in head))
    for r in rows:
        print(f"{r[0]} | {r[1]} | {r[2]:.1f} | {r[3]:.1f} | {r[4]:.1f} | {r[5]:.2f} | {r[6]:.1f} | {r[7]:.1f}")


if __name__ == "__main__":
    main()
