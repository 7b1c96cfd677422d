"""``lessons/runs.py`` 的实验名单 ``CHAPTER_RUNS``：每个带种子的命名实验都在表里，各章（notebook 和图）的每一种
调用也都在表里——JupyterLab 测试靠这张表预先算好全部实验，测试靠它把训练全换掉；表漏了一项，JupyterLab 里就有
内核要现场训练（这张表以前是三处手写的名单，其中一处漏了第 5 章的两份）。训练本身在各实验模块的测试里。"""

from __future__ import annotations

import ast
import inspect
import json
from pathlib import Path

from transformer_lab.lessons import runs

ROOT = Path(__file__).resolve().parents[2]


def listed() -> set[tuple[str, tuple]]:
    return {(run.__name__, tuple(sorted(kwargs.items()))) for run, kwargs in runs.CHAPTER_RUNS}


def run_calls(source: str) -> set[tuple[str, tuple]]:
    """源代码里每个 ``runs.名字(...)`` / ``tl.runs.名字(...)`` 调用：(名字, 字面量关键字参数，不含 seed)。
    参数不是字面量的调用（比如测试里循环的种子）只记名字和能读出的那部分。"""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Attribute | ast.Name)
                and (getattr(node.func.value, "attr", None) == "runs" or getattr(node.func.value, "id", None) == "runs")
                and node.func.attr in runs.__all__ and callable(getattr(runs, node.func.attr))
                and node.func.attr != "compute_all"):
            kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords
                      if k.arg != "seed" and isinstance(k.value, ast.Constant)}
            found.add((node.func.attr, tuple(sorted(kwargs.items()))))
    return found


def chapter_sources() -> dict[str, str]:
    sources = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "transformer_lab" / "figures").glob("*.py")}
    for nb in (ROOT / "notebooks").glob("*.ipynb"):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        sources[nb.name] = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!")))
    return sources


def test_every_seeded_run_is_in_the_table():
    seeded = {name for name in runs.__all__ if callable(getattr(runs, name))
              and "seed" in inspect.signature(getattr(runs, name)).parameters}
    assert seeded == {run.__name__ for run, _ in runs.CHAPTER_RUNS}


def test_every_call_in_the_chapters_is_in_the_table():
    calls = {(name, call) for name, source in chapter_sources().items() for call in run_calls(source)}
    assert calls, "一个调用也没找到：扫描写错了"
    missing = sorted((name, call) for name, call in calls if call not in listed())
    assert missing == [], f"这些调用不在 runs.CHAPTER_RUNS 里（JupyterLab 测试不会预先算好它们）：{missing}"


def test_the_scan_sees_a_call_the_table_lacks():
    """反证：一章用了表里没有的参数组合，扫描要把它找出来。"""
    calls = run_calls("import transformer_lab as tl\nr = tl.runs.reversal(use_pe=None)\nh = runs.heads(seed=3)\nrows.gpt()\n")
    assert calls == {("reversal", (("use_pe", None),)), ("heads", ())}
    assert ("reversal", (("use_pe", None),)) not in listed() and ("heads", ()) in listed()


def test_compute_all_calls_every_listed_run_with_its_arguments(monkeypatch):
    seen = []
    fake = tuple((lambda name: (lambda **kw: seen.append((name, kw))))(run.__name__) for run, _ in runs.CHAPTER_RUNS)
    monkeypatch.setattr(runs, "CHAPTER_RUNS", tuple(zip(fake, (kw for _, kw in runs.CHAPTER_RUNS))))
    runs.compute_all()
    assert [kw for _, kw in seen] == [kw for _, kw in runs.CHAPTER_RUNS] and len(seen) == 14
