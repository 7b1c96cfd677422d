"""JupyterLab 里的两项测量（需要 Chromium）：

1. 每一章 Run All 用多久：一次只开一章（和读者一样），从点下“运行所有单元格”到内核空闲、每个代码单元格都有编号。
   参照：同一进程里用 nbclient 无界面地执行同一个 notebook（同样的内核、同样的代码），给出两者之比——
   比值接近 1 说明 JupyterLab 本身（渲染输出、活滑块）几乎不加时间。
2. 第一张活图出现得多快：Run All 之后，单独再运行这一章第一个可交互图的单元格，量从单元格跑完
   （提示符出现编号）到图片载入的时间。目标 2 秒以内。

    python -m benchmarks.jupyterlab_timing            # 全部章节
    python -m benchmarks.jupyterlab_timing 04 08      # 只量这几章
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from tools.lab import NOTEBOOKS, jupyterlab, open_notebook, open_page, wait_all_done
from tools.site import CHROMIUM_ARGS, NO_CHROMIUM, chromium_path


def headless_seconds(path: Path) -> float:
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(nb, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    return time.perf_counter() - start


def first_image_seconds(page) -> float:
    """单独重跑第一个可交互图的单元格：从提示符出现新编号（单元格跑完）到新图片载入，用了几秒。

    等待用 ``page.wait_for_timeout``（不用 ``time.sleep``）：请求、控制台消息这些事件由本进程里的回调记下，
    Playwright 的同步接口只在我们调用它时才处理回调，睡着时它们都挂着（见 ``tools.lab._wait_connected``）。"""
    cell = page.locator(".jp-CodeCell").filter(has=page.locator("img.widget-image")).first
    cell.scroll_into_view_if_needed()
    old_prompt = cell.locator(".jp-InputPrompt").text_content().strip()
    cell.locator(".jp-InputPrompt").click()  # 选中这个单元格（命令模式）
    page.keyboard.press("Control+Enter")
    finished = image = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and image is None:
        prompt = cell.locator(".jp-InputPrompt").text_content().strip()
        if finished is None and prompt not in (old_prompt, "[*]:") and prompt.startswith("["):
            finished = time.monotonic()
        loaded = cell.locator("img.widget-image").evaluate_all(
            "imgs => imgs.some(i => i.complete && i.naturalWidth > 0)")
        if finished is not None and loaded:
            image = time.monotonic()
        page.wait_for_timeout(10)
    if finished is None or image is None:
        raise RuntimeError("60 秒内没看到单元格跑完或图片载入")
    return image - finished


def main(selected: list[str]) -> None:
    path = chromium_path()
    if path is None:
        sys.exit(NO_CHROMIUM)
    from playwright.sync_api import sync_playwright

    chapters = [p for p in NOTEBOOKS if not selected or any(p.stem.startswith(s) for s in selected)]
    print(f"{'章节':<26}{'JupyterLab Run All':>20}{'nbclient（参照）':>18}{'之比':>8}{'第一张活图':>12}")
    with tempfile.TemporaryDirectory() as tmp, jupyterlab(Path(tmp)) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        for nb_path in chapters:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page, _ = open_page(context, base)
            view, started = open_notebook(page, base, nb_path)  # 内核就绪后点 Run All
            lab_s = wait_all_done({nb_path.stem: view}, {nb_path.stem: started}, base, poll_s=0.1)[nb_path.stem]
            image_s = first_image_seconds(page)
            context.close()
            ref_s = headless_seconds(nb_path)
            print(f"{nb_path.stem:<26}{lab_s:>18.1f} s{ref_s:>16.1f} s{lab_s / ref_s:>8.2f}{image_s:>10.2f} s",
                  flush=True)
        browser.close()


if __name__ == "__main__":
    main(sys.argv[1:])
