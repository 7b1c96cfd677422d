"""网站的两项测量（需要先 python dev.py book 构建网站，并装有 Chromium），电脑和手机两种窗口各量一遍：

* 电脑：1280 × 900；手机：390 × 844、设备像素比 3、触屏（读者多半这样打开书里的链接）。手机上页面只取窄版的帧，
  电脑上只取宽版的帧（``<picture>`` 按窗口宽度挑，见 ``widgets/static.py``）。

1. 页面体积：每一页加载的全部字节（HTML、图片与帧、脚本、样式、字体）。
   分两次量（``tools.site.weigh``，和 tests/site/test_phone.py 的上限测试同一个量法）：打开页面、MathJax 排完版时，
   以及从头滚到尾之后（不碰滑块：图快进入视野时只预取每个滑块左右一格的帧，碰了才取其余的帧，
   见 ``widgets/player.js``）。
   目标：手机上打开时 <= 2 MB、滚完全页 <= 6 MB；电脑上滚完全页 <= 6 MB。
   同时给出 gzip 压缩后的传输量（普通静态网站托管都会压缩文本文件）；
2. 浏览器里滑块的响应：从 input 事件到新帧解码完、下一帧开始绘制的时间，每张可交互图取中位数，
   目标在一帧（16.7 ms）之内；并与同一页里"换一张同样大小的图片"的参照值相比（比值才不受机器忙闲影响）。

    python -m benchmarks.site_benchmarks
"""

from __future__ import annotations

import gzip
import statistics
import sys

from transformer_lab.widgets.static import FRAME_SOURCES_JS

from tools.site import CHROMIUM_ARGS, HTML, NO_CHROMIUM, block_outside, chromium_path, pages, serve, weigh

# 在页面里把滑块走遍全程，量每一步从 input 事件到新帧可以上屏的时间
SWEEP_JS = """async (root) => {
  const inp = root.querySelector('input.tlx-range'), img = root.querySelector('img');
  const n = Number(inp.max), times = [];
  const frame = () => new Promise(r => requestAnimationFrame(() => r()));
  for (let round = 0; round < 3; round++) {
    for (let k = 0; k <= 2 * n; k++) {
      const v = k <= n ? k : 2 * n - k;
      const t0 = performance.now();
      inp.value = v; inp.dispatchEvent(new Event('input'));
      await img.decode(); await frame();
      times.push(performance.now() - t0);
    }
  }
  return times;
}"""

# 参照：同一张图片元素，直接换成已有的另一帧（不经过本书的脚本），同样等解码和下一帧。
# 各帧的地址用 static.FRAME_SOURCES_JS 读（帧在页面里的格式只由 static.py 定义）：它给出这块屏幕正在显示的
# 版式的帧；手机上显示的是 <picture> 里 <source> 的窄版，所以换 source 的 srcset，电脑上换 <img> 的 src。
REFERENCE_JS = """async (root) => {
  const img = root.querySelector('img'), source = root.querySelector('picture source');
  const srcs = (FRAME_SOURCES)(root);
  const narrow = !!source && img.currentSrc !== img.src;  // 正在显示 <source> 的那一版
  const times = [], frame = () => new Promise(r => requestAnimationFrame(() => r()));
  for (let round = 0; round < 3; round++) {
    for (const src of srcs) {
      const t0 = performance.now();
      if (narrow) source.srcset = src; else img.src = src;
      await img.decode(); await frame();
      times.push(performance.now() - t0);
    }
  }
  return times;
}""".replace("FRAME_SOURCES", FRAME_SOURCES_JS)


def _totals(bodies):
    """(原始字节, gzip 后字节)。"""
    raw = sum(len(b) for _, b in bodies)
    return raw, sum(len(b) if _is_binary(u) else len(gzip.compress(b)) for u, b in bodies)


def _is_binary(url: str) -> bool:
    """已经压缩过的格式（图片、woff2 字体）不再计 gzip。"""
    return url.split("?")[0].rsplit(".", 1)[-1].lower() in {"png", "jpg", "jpeg", "gif", "webp", "woff", "woff2"}


# 两种窗口：(名字, browser.new_context 的参数, 打开时的上限 MB, 滚完全页的上限 MB)
VIEWPORTS = [
    ("电脑 1280 px", {"viewport": {"width": 1280, "height": 900}}, None, 6.0),
    ("手机 390 px", {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 3, "is_mobile": True,
                    "has_touch": True}, 2.0, 6.0),
]
# 一帧。量的是"从 input 事件到新帧解码完、下一帧开始绘制"，最快也要等到下一帧，所以 16.7 ms 左右就是"下一帧
# 就换上了"；留 10 % 给计时的抖动。
FRAME_BUDGET_MS = 1000 / 60 * 1.1


def measure(browser, base: str, context_options: dict):
    """每一页的体积和每张可交互图的滑块响应（一种窗口）。"""
    weights, latencies = [], []
    for page_path in pages():
        rel = page_path.relative_to(HTML).as_posix()
        context = browser.new_context(**context_options)
        page = context.new_page()
        blocked = []
        block_outside(page, base, blocked)
        first, bodies = weigh(page, f"{base}/{rel}")
        weights.append((rel, *_totals(first), *_totals(bodies), len(bodies), len(blocked)))
        roots = page.locator(".tlx")
        for i in range(roots.count()):
            if not roots.nth(i).locator("input.tlx-range").count():
                continue  # 没有滑块的图（静态图也用播放器显示）
            title = roots.nth(i).get_attribute("aria-label")
            roots.nth(i).scroll_into_view_if_needed()
            sweep = roots.nth(i).evaluate(SWEEP_JS)
            ref = roots.nth(i).evaluate(REFERENCE_JS)
            latencies.append((rel, title, len(sweep), statistics.median(sweep), statistics.median(ref)))
        context.close()
    return weights, latencies


def report(name: str, first_cap: float | None, full_cap: float, weights, latencies) -> None:
    """一种窗口的两张表（Markdown），和一行总结。"""
    first_rule = f"打开时 <= {first_cap:g} MB" if first_cap else "打开时"
    print(f"## {name}")
    print()
    print(f"页面 | 打开时 MB | 打开时 gzip MB | 滚完全页 MB | 滚完全页 gzip MB | 请求数 | 被拦截的外部请求 | "
          f"{first_rule} | 滚完全页 <= {full_cap:g} MB")
    print("--- | --- | --- | --- | --- | --- | --- | --- | ---")
    for rel, raw0, zip0, raw, zipped, count, blocked in weights:
        first_ok = "—" if first_cap is None else ("是" if raw0 <= first_cap * 1e6 else "否")
        print(f"{rel} | {raw0 / 1e6:.2f} | {zip0 / 1e6:.2f} | {raw / 1e6:.2f} | {zipped / 1e6:.2f} | {count} | "
              f"{blocked} | {first_ok} | {'是' if raw <= full_cap * 1e6 else '否'}")
    print()
    print("页面 | 可交互图 | 拖动次数 | 中位 ms | 参照中位 ms | 比值 | <= 1 帧")
    print("--- | --- | --- | --- | --- | --- | ---")
    for rel, title, n, med, ref in latencies:
        print(f"{rel} | {title} | {n} | {med:.1f} | {ref:.1f} | {med / ref:.2f} | "
              f"{'是' if med <= FRAME_BUDGET_MS else '否'}")
    print()
    worst_first = max(w[1] for w in weights) / 1e6
    worst_full = max(w[3] for w in weights) / 1e6
    slowest = max(lat[3] for lat in latencies) if latencies else 0.0
    print(f"{name}：{len(weights)} 页，打开时最重 {worst_first:.2f} MB，滚完全页最重 {worst_full:.2f} MB，"
          f"{len(latencies)} 张带滑块的图，最慢的中位响应 {slowest:.1f} ms"
          f"（{sum(lat[3] <= FRAME_BUDGET_MS for lat in latencies)} 张在一帧之内）。")
    print()


def main() -> None:
    path = chromium_path()
    if path is None:
        sys.exit(NO_CHROMIUM)
    if not HTML.exists():
        sys.exit("没有找到 _build/html：先运行 python dev.py book。")
    from playwright.sync_api import sync_playwright

    only = sys.argv[1:]  # 可以只量其中一种：python -m benchmarks.site_benchmarks 手机
    with serve() as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        for name, options, first_cap, full_cap in VIEWPORTS:
            if only and not any(word in name for word in only):
                continue
            report(name, first_cap, full_cap, *measure(browser, base, options))
        browser.close()


if __name__ == "__main__":
    main()
