"""依次运行 benchmarks/ 下的全部测量脚本，每个在自己的进程里（单线程 BLAS 的设置互不影响）。

    python dev.py bench            # 全部
    python dev.py bench training   # 只运行文件名里含 "training" 的

网站的两项（``site_benchmarks.py``）要先 ``python dev.py book`` 构建好网站；网站和 JupyterLab 的测量要装有 Chromium。
结果都写成同一次运行里测出的比值，见各脚本开头的说明。
"""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    scripts = sorted(p for p in HERE.glob("*.py") if not p.name.startswith("_") and p.name != "run_all.py")
    chosen = [p for p in scripts if not sys.argv[1:] or any(word in p.stem for word in sys.argv[1:])]
    failed = []
    for script in chosen:
        print(f"\n## {script.name}\n", flush=True)
        if subprocess.call([sys.executable, "-m", f"benchmarks.{script.stem}"], cwd=HERE.parent):
            failed.append(script.name)
    if failed:
        sys.exit(f"\n这些测量没有跑完：{', '.join(failed)}")
