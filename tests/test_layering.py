"""依赖方向：文件夹就是层，只许上层导入下层；模块之间没有导入环。

层由 ``transformer_lab/`` 下的文件夹（和顶层的几个文件）推出，没有手写的模块清单：新加一个模块，
它属于所在文件夹的层；新加一个文件夹（或顶层文件），要在 ``ALLOWED`` 里写明它能导入谁。顶层的
``__init__.py`` 和 ``explore.py`` 是“顶层”，别的顶层文件（``_validation.py``、``_cache.py``、``chapters.py``）各自成一层。
导入包括函数体里的延迟导入。层与层之间只许向下，同一层里的模块也不许互相导入成环（延迟导入也算：
环里的模块谁也离不开谁，比如题的格式、题库、汇总三者互相导入）。
下划线开头的名字是模块自己的：不许从别的模块导入（要共用就起一个公开的名字，或搬到用它的地方）。
另有一个子进程探针：只用数学（core、lessons）时，既不加载 matplotlib，也不加载 ipywidgets。
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from transformer_lab.chapters import CHAPTERS
from transformer_lab.lessons import stored
from transformer_lab.widgets import static

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "transformer_lab"
TOP = "(top)"  # 顶层的 __init__.py 与 explore.py：可以导入任何一层
TOP_FILES = {"__init__", "explore"}

# 层 → (允许导入的包内层, 允许导入的第三方包)。同一层内部可以互相导入（但不许成环）。
ALLOWED: dict[str, tuple[set[str], set[str]]] = {
    "_validation": (set(), {"numpy"}),
    "_cache": (set(), {"numpy"}),  # 硬盘缓存（存放位置、代码版本）：存实验结果的 lessons 和存帧的 widgets 共用
    "chapters": ({"_validation"}, set()),  # 全书的章节表：quiz、figures 和顶层可以导入它
    "core": ({"_validation"}, {"numpy"}),
    "lessons": ({"core", "_validation", "_cache"}, {"numpy"}),
    "plot": ({"_validation"}, {"numpy", "matplotlib", "mplfonts"}),  # 检查规则全包共用；不导入任何数学
    "widgets": ({"plot", "_validation", "_cache"}, {"numpy", "matplotlib", "PIL", "ipywidgets", "traitlets", "IPython"}),  # traitlets 是 ipywidgets 的
    "quiz": ({"lessons", "core", "_validation", "chapters"}, {"numpy"}),
    "figures": ({"lessons", "core", "plot", "widgets", "_validation", "chapters", "pretrained"}, {"numpy", "matplotlib"}),
    "pretrained": ({"core", "_validation"}, {"numpy"}),
    "exercises": ({"core", "_validation", "chapters"}, {"numpy"}),  # 动手写：参考答案自己写（给读者看）；错误写法可以借 core  # 第 10 章的真模型：读 PyPI wheel 里的权重，用 core 算前向
    TOP: ({"_validation", "_cache", "chapters", "core", "lessons", "plot", "widgets", "figures", "quiz", "pretrained", "exercises"}, {"numpy"}),
}


def layer_of(path: Path) -> str:
    """``transformer_lab/core/attention.py`` → ``core``；顶层的 ``__init__.py``、``explore.py`` → 顶层；
    别的顶层文件（``_validation.py``、``chapters.py``）→ 它自己的名字。"""
    rel = path.relative_to(PKG)
    if len(rel.parts) > 1:
        return rel.parts[0]
    return TOP if rel.stem in TOP_FILES else rel.stem


def module_name(path: Path) -> str:
    """``transformer_lab/core/rnn.py`` → ``transformer_lab.core.rnn``；包的 ``__init__.py`` 保留 ``.__init__``
    （这样相对导入 ``from . import x`` 在包里和在模块里按同一条规则解析）。"""
    return ".".join(("transformer_lab", *path.relative_to(PKG).with_suffix("").parts))


def on_disk(name: str) -> bool:
    """``transformer_lab.a.b`` 是包里真有的模块或包吗？"""
    parts = name.split(".")
    if parts[0] != "transformer_lab":
        return False
    where = PKG.joinpath(*parts[1:])
    return (where / "__init__.py").is_file() or where.with_suffix(".py").is_file()


def imported_modules(source: str, module: str, is_module: Callable[[str], bool] = on_disk) -> list[str]:
    """一段源码（模块名 ``module``）导入的模块，绝对名字，包括函数体里的导入。

    相对导入按 ``module`` 解析；``from P import a``：``P.a`` 是模块（``is_module``）时算导入了 ``P.a``，
    否则算导入了 ``P``（取 P 里的名字）。父包的 ``__init__`` 总会先运行，不算一次导入。
    """
    names = []
    package = module.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module
            else:
                base = ".".join([*package[: len(package) - node.level + 1], *([node.module] if node.module else [])])
            for alias in node.names:
                names.append(f"{base}.{alias.name}" if is_module(f"{base}.{alias.name}") else base)
    return names


def imports(source: str, module: str) -> tuple[set[str], set[str]]:
    """一段源码（模块名 ``module``，如 ``transformer_lab.core.rnn``）导入的 (包内的层, 第三方包)。"""
    internal, third_party = set(), set()
    for name in imported_modules(source, module):
        parts = name.split(".")
        if parts[0] == "transformer_lab":
            inner = parts[1] if len(parts) > 1 else ""
            own_layer = (PKG / inner).is_dir() or (inner not in TOP_FILES and (PKG / f"{inner}.py").is_file())
            internal.add(inner if inner and own_layer else TOP)
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


def import_graph(sources: dict[str, str]) -> dict[str, set[str]]:
    """模块 → 它导入的包内模块。``sources``：模块名（``module_name`` 的写法）→ 源码。"""
    def canonical(name: str) -> str | None:
        return name if name in sources else f"{name}.__init__" if f"{name}.__init__" in sources else None

    def is_module(name: str) -> bool:
        return canonical(name) is not None

    graph = {}
    for module, source in sources.items():
        targets = {canonical(name) for name in imported_modules(source, module, is_module)}
        graph[module] = {t for t in targets if t is not None and t != module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """导入图里的环：每个环是一组互相（直接或间接）导入的模块，排好序；没有环时是空列表。"""
    def reachable(start: str) -> set[str]:
        seen, todo = set(), list(graph.get(start, ()))
        while todo:
            node = todo.pop()
            if node not in seen:
                seen.add(node)
                todo += graph.get(node, ())
        return seen

    reach = {node: reachable(node) for node in graph}
    found, done = [], set()
    for node in sorted(graph):
        if node in done or node not in reach[node]:
            continue
        ring = sorted(m for m in reach[node] if node in reach[m])
        done |= set(ring)
        found.append(ring)
    return found


SHARED_BASE = {"_validation", "_cache"}


def private_imports(source: str) -> list[str]:
    """从别的模块导入的私有名字（``from x import _y``）；全包共用的底层模块 ``_validation``（检查规则）、
    ``_cache``（硬盘缓存）——名字里的下划线表示它们不属于读者用的 API——和 ``__future__`` 不算。"""
    return [alias.name for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.ImportFrom) and node.module != "__future__"
            for alias in node.names
            if alias.name.startswith("_") and not alias.name.startswith("__") and alias.name not in SHARED_BASE]


MODULES = sorted(PKG.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(PKG)) for p in MODULES])
def test_imports_point_down_only(path):
    bad = violations(layer_of(path), path.read_text(encoding="utf-8"), module_name(path))
    assert not bad, f"{path.relative_to(PKG)}（{layer_of(path)} 层）导入了 {bad}"


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(PKG)) for p in MODULES])
def test_no_private_name_crosses_a_module_boundary(path):
    bad = private_imports(path.read_text(encoding="utf-8"))
    assert not bad, f"{path.relative_to(PKG)} 从别的模块导入了私有名字 {bad}：给它起个公开的名字，或把它搬过来"


def test_the_private_import_check_can_fail():
    """反证：改版前 core 的反向传播从前向的模块里借私有函数，必须被找出来；公开名字和 _validation 不算。"""
    old = "from .layer import PARAM_KEYS, _check_layer, _normalize\nfrom .multihead import _check_mha"
    assert private_imports(old) == ["_check_layer", "_normalize", "_check_mha"]
    assert private_imports("from ..core.multihead import split, merge\nfrom .. import _validation as check") == []
    assert private_imports("from __future__ import annotations") == []


def test_every_folder_is_a_declared_layer():
    folders = {p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    files = {p.stem for p in PKG.glob("*.py")} - TOP_FILES
    assert folders | files <= set(ALLOWED), f"没有写明规则的文件夹或顶层文件：{(folders | files) - set(ALLOWED)}"


# 按名字导入的模块（importlib，源码里看不到）：quiz.questions 导入章节表里每一章的题库 quiz/bank_chNN.py
BY_NAME = {"transformer_lab.quiz.__init__": {f"transformer_lab.quiz.{c.bank_module}" for c in CHAPTERS},
           # exercises 导入章节表里每一章的练习 exercises/chNN.py（还没有练习的章跳过）
           "transformer_lab.exercises.__init__": {f"transformer_lab.exercises.ch{c.number:02d}" for c in CHAPTERS
                                                  if (PKG / "exercises" / f"ch{c.number:02d}.py").is_file()}}


def with_imports_by_name(graph: dict[str, set[str]], by_name: dict[str, set[str]]) -> dict[str, set[str]]:
    """导入图加上按名字导入的边（环的检查也要算上它们）。"""
    return {module: targets | by_name.get(module, set()) for module, targets in graph.items()}


def test_no_import_cycles():
    graph = import_graph({module_name(p): p.read_text(encoding="utf-8") for p in MODULES})
    assert "transformer_lab.chapters" in graph["transformer_lab.quiz.__init__"]
    # 每一章的题库都是包里真有的模块：上面的分层检查逐个查过它，这里的环检查也走得到它
    assert BY_NAME["transformer_lab.quiz.__init__"] <= set(graph), "章节表里有的章没有题库模块（见 test_chapters.py）"
    assert "transformer_lab.quiz.bank_ch01" in BY_NAME["transformer_lab.quiz.__init__"]
    assert cycles(with_imports_by_name(graph, BY_NAME)) == [], "模块之间有导入环"


@pytest.mark.parametrize("layer, module, source, expected", [
    ("core", "transformer_lab.core.x", "from ..plot.figure import new_figure", ["包内的 plot"]),
    ("core", "transformer_lab.core.x", "def f():\n    import matplotlib.pyplot as plt", ["第三方的 matplotlib"]),
    ("lessons", "transformer_lab.lessons.x", "from ..figures import ch01_rnn_vs_transformer", ["包内的 figures"]),
    ("lessons", "transformer_lab.lessons.x", "from .. import explore", ["包内的 (top)"]),
    ("plot", "transformer_lab.plot.x", "from ..core.attention import softmax", ["包内的 core"]),
    ("widgets", "transformer_lab.widgets.x", "import transformer_lab.lessons.costs", ["包内的 lessons"]),
    ("core", "transformer_lab.core.x", "from .. import chapters", ["包内的 chapters"]),
    ("lessons", "transformer_lab.lessons.x", "from ..quiz import questions", ["包内的 quiz"]),
    ("quiz", "transformer_lab.quiz.x", "from ..widgets.static import PLAYER_JS", ["包内的 widgets"]),
    ("chapters", "transformer_lab.chapters", "import numpy as np\nfrom . import core",
     ["包内的 core", "第三方的 numpy"]),
    ("lessons", "transformer_lab.lessons.x", "from ..core.attention import attend\nfrom .. import _validation", []),
    ("quiz", "transformer_lab.quiz.__init__", "from .. import chapters\nfrom . import question\nfrom ..lessons import costs",
     []),
], ids=["core-imports-plot", "core-lazy-matplotlib", "lessons-imports-figures", "lessons-imports-top",
        "plot-imports-math", "widgets-absolute-import", "core-imports-chapters", "lessons-imports-quiz",
        "quiz-imports-widgets", "chapters-imports-core", "allowed", "allowed-quiz"])
def test_the_layer_check_can_fail(layer, module, source, expected):
    """反证：往下层塞一个向上的导入，同一个检查函数必须把它找出来。"""
    assert violations(layer, source, module) == expected


def test_the_cycle_check_can_fail():
    """反证：改版前的题库——题的格式、两个题库、汇总互相导入（汇总写在函数里的延迟导入也算）——必须被找出环来；
    把题的格式单独放一个模块、汇总放进包的 ``__init__`` 之后，环就没有了。"""
    old = {
        "transformer_lab.lessons.question_bank": "from .. import _validation\n"
                                                 "def questions():\n    from .questions_basics import basic_questions",
        "transformer_lab.lessons.questions_basics": "from . import dependency_graph\n"
                                                    "from .question_bank import Question",
        "transformer_lab.lessons.dependency_graph": "import numpy as np",
        "transformer_lab._validation": "import numpy as np",
    }
    assert cycles(import_graph(old)) == [["transformer_lab.lessons.question_bank",
                                          "transformer_lab.lessons.questions_basics"]]
    new = {
        "transformer_lab.quiz.__init__": "import importlib\nfrom .question import Question",
        "transformer_lab.quiz.question": "from .. import _validation",
        "transformer_lab.quiz.bank_ch01": "from .question import Question",
        "transformer_lab._validation": "import numpy as np",
    }
    by_name = {"transformer_lab.quiz.__init__": {"transformer_lab.quiz.bank_ch01"}}
    assert cycles(with_imports_by_name(import_graph(new), by_name)) == []
    # 题库若从汇总（包的 __init__）里取名字，就和按名字导入它的汇总成环：只有算上按名字导入的边才看得出来
    new["transformer_lab.quiz.bank_ch01"] = "from . import GROUPS\nfrom .question import Question"
    assert cycles(import_graph(new)) == []
    assert cycles(with_imports_by_name(import_graph(new), by_name)) == [["transformer_lab.quiz.__init__",
                                                                        "transformer_lab.quiz.bank_ch01"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"d"}, "e": {"a"}}) == [["a", "b", "c"], ["d"]]


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


def _reachable_layers(start: str) -> set[str]:
    """从 ``start`` 这一层出发，按 ``ALLOWED`` 一路往下能导入到的所有层（含它自己）。"""
    seen, todo = set(), [start]
    while todo:
        layer = todo.pop()
        if layer not in seen:
            seen.add(layer)
            todo += ALLOWED[layer][0]
    return seen


def _as_part(layer: str) -> str:
    """层名 → 缓存 ``parts`` 里的写法：包是文件夹，顶层模块是 ``名字.py``。"""
    return layer if (PKG / layer).is_dir() else f"{layer}.py"


@pytest.mark.parametrize("layer, parts", [("lessons", stored.RUN_PARTS), ("figures", static.FRAME_PARTS)],
                         ids=["实验结果", "可交互图的帧"])
def test_cache_keys_cover_every_layer_the_code_can_import(layer, parts):
    """存下的实验结果和帧只按包的一部分算代码版本（``_cache.code_version(parts=...)``）；那一部分必须包括算它们的
    代码按分层规则能导入的每一层，否则改了那一层，旧结果会被误用。"""
    needed = {_as_part(name) for name in _reachable_layers(layer) - {layer, TOP}}
    if layer == "lessons":
        needed |= {"lessons"}
    assert needed <= set(parts), f"缓存的代码版本漏了：{sorted(needed - set(parts))}"


def test_the_cache_key_check_catches_a_missing_layer(monkeypatch):
    """反证：分层规则若允许 lessons 导入 plot，而 RUN_PARTS 里没有 plot，上面的检查就会失败。"""
    monkeypatch.setitem(ALLOWED, "lessons", (ALLOWED["lessons"][0] | {"plot"}, ALLOWED["lessons"][1]))
    with pytest.raises(AssertionError, match="plot"):
        test_cache_keys_cover_every_layer_the_code_can_import("lessons", stored.RUN_PARTS)
