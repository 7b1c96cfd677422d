"""依赖方向 (数学 → 画图 → 交互) 与中文字体。

数学模块只依赖 NumPy；plotting 才加载 matplotlib；ipywidgets 只在真正要活滑块时才加载。
"""

import ast
import io
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import matplotlib
import numpy as np
import pytest

import transformer_lab as tl

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "transformer_lab"
MATH = {"attention", "multihead", "positional", "rnn", "similarity", "scaling", "_validation",
        "recurrence", "costs", "toy_sentences", "projections"}  # 各章的数学模块也只许导入 NumPy

PROBE = """
import json, sys
def loaded():
    return {name: name in sys.modules for name in ("matplotlib", "ipywidgets")}
steps = {}
import transformer_lab as tl
import transformer_lab.similarity, transformer_lab.scaling
tl.multi_head_attention(tl.sinusoidal_positional_encoding(3, 4), *[__import__("numpy").eye(4)] * 4, num_heads=2)
steps["import transformer_lab + math"] = loaded()
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
    ("import transformer_lab + math", False, False),
    ("tl.plotting", True, False),
    ("tl.explore + update", True, False),
])
def test_heavy_dependencies_load_only_when_needed(probe, step, matplotlib_loaded, ipywidgets_loaded):
    assert probe[step] == {"matplotlib": matplotlib_loaded, "ipywidgets": ipywidgets_loaded}


def _module_level_imports(path):
    """模块顶层（不含函数体内）导入的 (第三方包名集合, 包内相对导入的模块名集合)。"""
    third_party, internal = set(), set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            third_party |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            third_party.add(node.module.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            internal |= {node.module} if node.module else {alias.name for alias in node.names}
    return third_party - set(sys.stdlib_module_names) - {"__future__"}, internal


# 每一层允许在模块顶层导入的：(第三方包, 包内模块)。PIL (Pillow) 是 matplotlib 自己的依赖。
DRAWING = {"numpy", "matplotlib", "PIL"}
LAYERS = {name: ({"numpy"}, MATH) for name in MATH} | {
    "__init__": (set(), MATH),
    "plotting": (DRAWING, MATH),
    "explorable": (DRAWING, MATH | {"plotting"}),
    "figures": (DRAWING, MATH | {"plotting", "explorable"}),  # figures/ 下的每个文件
    "explore": (DRAWING, MATH | {"plotting", "explorable", "figures"}),
    "_live": ({"ipywidgets"}, set()),
}
MODULES = sorted(str(p.relative_to(PKG).with_suffix("")) for p in PKG.rglob("*.py"))


@pytest.mark.parametrize("module", MODULES)
def test_module_imports_point_one_way(module):
    layer = module.split("/")[0]
    assert layer in LAYERS, f"新模块 {module}.py：请在 LAYERS 里写明它属于哪一层"
    third_party, internal = _module_level_imports(PKG / f"{module}.py")
    internal = {name.split(".")[0] for name in internal}  # figures.scaling → figures
    allowed_third, allowed_internal = LAYERS[layer]
    assert third_party <= allowed_third, f"{module} 导入了 {third_party - allowed_third}"
    assert internal <= allowed_internal, f"{module} 导入了包内的 {internal - allowed_internal}"


def test_public_names_resolve():
    for name in tl.__all__:
        assert getattr(tl, name) is not None
    with pytest.raises(AttributeError, match="没有属性"):
        tl.no_such_thing  # noqa: B018


def test_hasattr_never_raises_for_unknown_names():
    assert hasattr(tl, "chapters") is False


# ---------------------------------------------------------------- 字体


def _render_mixed_text():
    """一张同时有中文、拉丁字母、数学公式和 Unicode 减号的热力图，存成 PNG。"""
    heat = tl.plotting.attention_heatmap(np.full((3, 3), 1 / 3), ["小明", "它", "cat"],
                                         title="注意力权重 softmax $\\sqrt{d_k}$ −1")
    buf = io.BytesIO()
    heat.image.axes.figure.savefig(buf, format="png")
    return buf.getvalue()


def test_setup_fonts_picks_a_cjk_font_first():
    with matplotlib.rc_context():
        name = tl.plotting.setup_fonts()
        assert name is not None and ("CJK" in name or "SC" in name)
        assert matplotlib.rcParams["font.sans-serif"][0] == name


def test_chinese_latin_and_math_render_without_warnings():
    with matplotlib.rc_context(), warnings.catch_warnings():
        tl.plotting.setup_fonts()
        warnings.simplefilter("error")
        png = _render_mixed_text()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")


def test_missing_glyph_warning_fires_with_latin_only_font():
    # 反证：只用 DejaVu Sans（没有汉字）时必须出现缺字警告——证明上面那个测试真的能失败
    with matplotlib.rc_context({"font.family": ["sans-serif"], "font.sans-serif": ["DejaVu Sans"]}):
        with pytest.warns(UserWarning, match=r"Glyph \d+ .*missing from font"):
            _render_mixed_text()
