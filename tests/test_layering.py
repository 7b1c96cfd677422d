"""依赖方向：文件夹就是层，只许上层导入下层。

层由 ``transformer_lab/`` 下的文件夹（和顶层的几个文件）推出，没有手写的模块清单：新加一个模块，
它属于所在文件夹的层；新加一个文件夹，要在 ``ALLOWED`` 里写明它能导入谁。导入包括函数体里的延迟导入。
另有一个子进程探针：只用数学（core、lessons）时，既不加载 matplotlib，也不加载 ipywidgets。
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "transformer_lab"
TOP = "(top)"  # 顶层的 __init__.py 与 explore.py：可以导入任何一层

# 层 → (允许导入的包内层, 允许导入的第三方包)。同一层内部可以互相导入。
ALLOWED: dict[str, tuple[set[str], set[str]]] = {
    "_validation": (set(), {"numpy"}),
    "core": ({"_validation"}, {"numpy"}),
    "lessons": ({"core", "_validation"}, {"numpy"}),
    "plot": (set(), {"numpy", "matplotlib", "mplfonts"}),
    "widgets": ({"plot"}, {"numpy", "matplotlib", "PIL", "ipywidgets", "traitlets", "IPython"}),  # traitlets 是 ipywidgets 的
    "figures": ({"lessons", "core", "plot", "widgets", "_validation"}, {"numpy", "matplotlib"}),
    TOP: ({"_validation", "core", "lessons", "plot", "widgets", "figures"}, {"numpy"}),
}


def layer_of(path: Path) -> str:
    """``transformer_lab/core/attention.py`` → ``core``；顶层的 ``__init__.py``、``explore.py`` → 顶层。"""
    rel = path.relative_to(PKG)
    if len(rel.parts) > 1:
        return rel.parts[0]
    return rel.stem if rel.stem.startswith("_") and rel.stem != "__init__" else TOP


def imports(source: str, module: str) -> tuple[set[str], set[str]]:
    """一段源码（模块名 ``module``，如 ``transformer_lab.core.rnn``）导入的 (包内的层, 第三方包)。

    包括函数体里的导入；包内导入按相对路径解析到层。
    """
    internal, third_party = set(), set()
    package = module.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1]
            targets = [node.module] if node.module else [alias.name for alias in node.names]
            names = [".".join([*base, t]) for t in targets]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "transformer_lab":
                inner = parts[1] if len(parts) > 1 else ""
                is_folder = (PKG / inner).is_dir()
                internal.add(inner if is_folder or inner.startswith("_") else TOP)
            elif parts[0] not in sys.stdlib_module_names and parts[0] != "__future__":
                third_party.add(parts[0])
    return internal, third_party


def violations(layer: str, source: str, module: str) -> list[str]:
    """这段源码违反了本层规则的导入（空列表 = 没问题）。"""
    assert layer in ALLOWED, f"新的一层 {layer}/：请在 ALLOWED 里写明它能导入哪些层和第三方包"
    internal, third_party = imports(source, module)
    ok_internal, ok_third = ALLOWED[layer]
    bad = [f"包内的 {name}" for name in sorted(internal - ok_internal - {layer})]
    return bad + [f"第三方的 {name}" for name in sorted(third_party - ok_third)]


MODULES = sorted(PKG.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(PKG)) for p in MODULES])
def test_imports_point_down_only(path):
    module = ".".join(("transformer_lab", *path.relative_to(PKG).with_suffix("").parts))
    bad = violations(layer_of(path), path.read_text(encoding="utf-8"), module)
    assert not bad, f"{path.relative_to(PKG)}（{layer_of(path)} 层）导入了 {bad}"


def test_every_folder_is_a_declared_layer():
    folders = {p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders <= set(ALLOWED), f"没有写明规则的文件夹：{folders - set(ALLOWED)}"


@pytest.mark.parametrize("layer, module, source, expected", [
    ("core", "transformer_lab.core.x", "from ..plot.figure import new_figure", ["包内的 plot"]),
    ("core", "transformer_lab.core.x", "def f():\n    import matplotlib.pyplot as plt", ["第三方的 matplotlib"]),
    ("lessons", "transformer_lab.lessons.x", "from ..figures import ch01_rnn_vs_transformer", ["包内的 figures"]),
    ("lessons", "transformer_lab.lessons.x", "from .. import explore", ["包内的 (top)"]),
    ("plot", "transformer_lab.plot.x", "from ..core.attention import softmax", ["包内的 core"]),
    ("widgets", "transformer_lab.widgets.x", "import transformer_lab.lessons.costs", ["包内的 lessons"]),
    ("lessons", "transformer_lab.lessons.x", "from ..core.attention import attend\nfrom .. import _validation", []),
], ids=["core-imports-plot", "core-lazy-matplotlib", "lessons-imports-figures", "lessons-imports-top",
        "plot-imports-math", "widgets-absolute-import", "allowed"])
def test_the_layer_check_can_fail(layer, module, source, expected):
    """反证：往下层塞一个向上的导入，同一个检查函数必须把它找出来。"""
    assert violations(layer, source, module) == expected


# ---------------------------------------------------------------- 只用数学时不加载画图和控件

PROBE = """
import json, sys
import numpy as np
def loaded():
    return {name: name in sys.modules for name in ("matplotlib", "ipywidgets")}
steps = {}
import transformer_lab as tl
x = tl.sinusoidal_positional_encoding(3, 4)
tl.multi_head_attention(x, *[np.eye(4)] * 4, num_heads=2)
tl.input_jacobians(np.ones((2, 1)), np.ones((1, 2)), np.eye(2))
tl.qkv_projections(x, np.eye(4), np.eye(4), np.eye(4))
tl.toy_sentences.discuss(tl.toy_sentences.toy_sentence().x)
tl.saturation.saturation_demo(4, 8, np.random.default_rng(0))
tl.dependency_graph.sequential_steps(tl.dependency_graph.rnn_dependencies(3))
tl.library.library_experiment(4, 3, np.random.default_rng(0))
tl.costs.attention_multiply_adds(3, 4)
steps["import transformer_lab + core + lessons"] = loaded()
tl.plotting
steps["tl.plotting"] = loaded()
tl.explore.scaling_saturation().update(d_k=4)
steps["tl.explore + update"] = loaded()
print(json.dumps(steps))
"""


@pytest.fixture(scope="module")
def probe():
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("step, matplotlib_loaded, ipywidgets_loaded", [
    ("import transformer_lab + core + lessons", False, False),
    ("tl.plotting", True, False),
    ("tl.explore + update", True, False),
])
def test_heavy_dependencies_load_only_when_needed(probe, step, matplotlib_loaded, ipywidgets_loaded):
    assert probe[step] == {"matplotlib": matplotlib_loaded, "ipywidgets": ipywidgets_loaded}
