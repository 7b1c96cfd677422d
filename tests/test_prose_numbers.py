"""正文里引用的每一个小数，都必须出自同一章的代码——文字和计算永远对得上。

做法：从每章 Markdown 单元格里找出所有带小数点的数（如 0.649、1.2e-08、94.7），逐个到该章代码单元格的
文字输出里找（写在代码里的常数，例如滑块的取值 0.5，也算）；找不到就失败，并指出是哪一章的哪个数。
整数太常见（章节号、维度），不在检查之列。
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
NUMBER = re.compile(r"(?<![\w.])\d+\.\d+(?:e[-+]?\d+)?(?![\w.])")


def text_outputs(nb) -> str:
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
    prose = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")
    return set(NUMBER.findall(prose))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_quoted_number_is_printed_by_the_chapter(path):
    nb = nbformat.read(path, as_version=4)
    outputs = text_outputs(nb)
    missing = sorted(n for n in quoted_numbers(nb) if n not in outputs)
    assert not missing, f"{path.name} 的正文引用了代码没有打印过的数：{missing}"


def test_the_check_can_fail():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("权重是 0.649，梯度 1.2e-08。"),
        nbformat.v4.new_code_cell("print(0.649)", outputs=[nbformat.v4.new_output("stream", text="0.649\n")]),
    ])
    assert quoted_numbers(nb) == {"0.649", "1.2e-08"}
    assert [n for n in quoted_numbers(nb) if n not in text_outputs(nb)] == ["1.2e-08"]
