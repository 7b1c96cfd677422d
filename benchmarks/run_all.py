"""依次运行全部基准：活滑块延迟（不需要浏览器），然后页面体积与浏览器响应（需要构建好的网站）。

    python benchmarks/run_all.py
"""

import runpy
from pathlib import Path

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    for script in ("live_latency.py", "training_speed.py", "site_benchmarks.py"):
        print(f"\n## {script}\n", flush=True)
        runpy.run_path(str(HERE / script), run_name="__main__")
