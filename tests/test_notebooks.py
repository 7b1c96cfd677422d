"""各章 notebook 的约定（notebook 本身由 nbval 重新运行、逐格比较输出，见 pyproject.toml 的 testpaths）。

1. 正文里引用的数，都必须出自同一章的代码——文字和计算永远对得上：
   * 每一个小数（0.649、1.2e-08、94.7）要出现在该章代码单元格的源码或文字输出里（子串即可）；
   * 每一个 >= 100 的整数（如 223）要作为一个完整的数出现在源码或输出里。更小的整数（章节号、步骤号、
     "11 个词"、手算的小例子）太常见，不查；年份（"2017 年"、"（Clark 等，2019）"）和百分数也不查。
2. 第一个代码单元格：``import numpy as np``、``import transformer_lab as tl``、``rng = np.random.default_rng(种子)``。
3. notebook 只用公开的名字：不导入 ``transformer_lab.figures``（用 ``tl.explore``），不碰任何下划线开头的名字。
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
IDS = [p.stem for p in NOTEBOOKS]
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w.])")
DECIMAL = re.compile(r"(?<![\w.])\d+(?:\.\d+(?:e[-+]?\d+)?|e[-+]?\d+)(?![\w.])")  # 小数，或 1e-5 这样的写法
NOT_COMPUTED = re.compile(r"(?<![\w.])(?:\d+\s*%|(?:19|20)\d\d\s*年|(?:19|20)\d\d\s*[)）])")  # 百分数、年份
SMALLEST_CHECKED_INTEGER = 100

# 正文里引用了、但这一章的代码还没有打印的数（notebook 刷新后应清空；数对上以后这里要删掉，测试会提醒）。
KNOWN_UNPRINTED = {
}


def _read(path):
    return nbformat.read(path, as_version=4)


def code_text(nb) -> str:
    """代码单元格的源码和文字输出。"""
    parts = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            parts.append(cell.source)
        for out in cell.get("outputs", []):
            parts.append(out.get("text", ""))
            parts.append(out.get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


def quoted_numbers(nb) -> set[str]:
    """正文里要查的数：所有小数，以及 >= 100 的整数（百分数和年份除外）。"""
    prose = NOT_COMPUTED.sub(" ", "\n".join(cell.source for cell in nb.cells if cell.cell_type == "markdown"))
    return {n for n in NUMBER.findall(prose) if DECIMAL.fullmatch(n) or int(n) >= SMALLEST_CHECKED_INTEGER}


def unprinted(nb) -> list[str]:
    code = code_text(nb)
    tokens = set(NUMBER.findall(code))
    return sorted(n for n in quoted_numbers(nb) if (n not in code if DECIMAL.fullmatch(n) else n not in tokens))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_every_quoted_number_is_printed_by_the_chapter(path):
    missing = unprinted(_read(path))
    assert missing == KNOWN_UNPRINTED.get(path.stem, []), (
        f"{path.name} 的正文引用了代码没有打印过的数：{missing}"
        f"（已登记待修的：{KNOWN_UNPRINTED.get(path.stem, [])}；修好了就从 KNOWN_UNPRINTED 里删掉）")


def test_the_number_check_can_fail():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("权重是 0.649，梯度 1.2e-08；影响力涨到 223，共 2230 次；2017 年；占 100%；第 6 步。"
                                      "ε = 1e-5，学习率 3e-4。"),
        nbformat.v4.new_code_cell("print(0.649, 2230)\neps = 1e-5",
                                  outputs=[nbformat.v4.new_output("stream", text="0.649 2230 223.5\n")]),
    ])
    assert quoted_numbers(nb) == {"0.649", "1.2e-08", "223", "2230", "1e-5", "3e-4"}
    assert unprinted(nb) == ["1.2e-08", "223", "3e-4"]  # "223.5" 里的 223 不算打印过 223


# ---------------------------------------------------------------- 代码的约定


def _code_cells(nb):
    return [cell for cell in nb.cells if cell.cell_type == "code"]


def _parse(source: str) -> ast.Module:
    """去掉 IPython 的 %魔法 和 !命令 后按 Python 解析。"""
    return ast.parse("\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()))


def convention_problems(nb) -> list[str]:
    """第一个代码单元格的约定。"""
    first = _code_cells(nb)[0].source if _code_cells(nb) else ""
    problems = []
    for line, pattern in [("import numpy as np", r"^import numpy as np$"),
                          ("import transformer_lab as tl", r"^import transformer_lab as tl$"),
                          ("rng = np.random.default_rng(种子)", r"^rng = np\.random\.default_rng\(\d+\)$")]:
        if not re.search(pattern, first, re.M):
            problems.append(f"第一个代码单元格缺少 {line}")
    return problems


def private_uses(nb) -> list[str]:
    """代码里用到的 figures 内部模块和下划线开头的名字（__init__ 之类的双下划线名字除外）。"""
    found = []
    for cell in _code_cells(nb):
        for node in ast.walk(_parse(cell.source)):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
                names = []
            elif isinstance(node, ast.ImportFrom):
                modules, names = [node.module or ""], [alias.name for alias in node.names]
            elif isinstance(node, ast.Attribute):
                modules, names = [], [node.attr]
            else:
                continue
            for module in modules:
                parts = module.split(".")
                if parts[0] == "transformer_lab" and ("figures" in parts or any(p.startswith("_") for p in parts)):
                    found.append(module)
            found += [n for n in names if n == "figures" or (n.startswith("_") and not n.endswith("__"))]
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_first_code_cell_sets_up_numpy_tl_and_rng(path):
    assert convention_problems(_read(path)) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_uses_only_public_names(path):
    assert private_uses(_read(path)) == [], f"{path.name} 用了内部的名字（请用 tl.explore / 公开函数）"


def test_the_code_checks_can_fail():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import numpy\nimport transformer_lab as tl\nrng = np.random.RandomState(0)"),
        nbformat.v4.new_code_cell("%matplotlib inline\nfrom transformer_lab.figures import ch02_self_attention\n"
                                  "from transformer_lab.core.attention import _private\nex._view()\nimport transformer_lab._validation\n"
                                  "x = tl.figures\nobj.__class__"),
    ])
    assert convention_problems(nb) == ["第一个代码单元格缺少 import numpy as np",
                                       "第一个代码单元格缺少 rng = np.random.default_rng(种子)"]
    assert sorted(private_uses(nb)) == sorted(["transformer_lab.figures", "_private", "_view",
                                               "transformer_lab._validation", "figures"])
