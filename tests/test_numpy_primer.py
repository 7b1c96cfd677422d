"""附录"NumPy 速成"不会说谎：页面上的每段 ```python 代码都从上到下真的运行一遍（共用一个命名空间，像一个 notebook），
打印出来的东西必须和紧跟在它后面的 ```text 框逐字相同；后面没有 ```text 框的代码段必须什么都不打印。
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import numpy as np
import pytest

PAGE = Path(__file__).resolve().parents[1] / "book" / "numpy_primer.md"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```\s*$", re.M | re.S)


def blocks(text: str) -> list[tuple[str, str]]:
    """页面里按顺序排列的代码框：(语言, 内容)。"""
    return [(lang, body) for lang, body in FENCE.findall(text)]


def mismatches(text: str) -> list[str]:
    """运行页面上的 python 代码段，返回每一处"打印的"与"页面上写的"不一致的说明（空列表 = 全部一致）。"""
    found, namespace = [], {}
    items = blocks(text)
    with np.printoptions():  # 页面自己会改显示选项；测试结束后恢复原样
        for i, (lang, body) in enumerate(items):
            if lang != "python":
                continue
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(body, f"numpy_primer 第 {i} 段", "exec"), namespace)
            shown = items[i + 1][1] if i + 1 < len(items) and items[i + 1][0] == "text" else ""
            printed = "\n".join(line.rstrip() for line in out.getvalue().splitlines())
            stated = "\n".join(line.rstrip() for line in shown.splitlines())
            if printed != stated:
                found.append(f"第 {i} 段代码\n{body}\n打印：\n{printed}\n页面上写的：\n{stated}")
    return found


def test_every_stated_output_is_what_the_code_prints():
    assert mismatches(PAGE.read_text(encoding="utf-8")) == []


def test_the_page_covers_what_the_chapters_use():
    """评审列出的、各章代码里没解释过的写法，这一页都得演示到（出现在某段 python 代码里）。"""
    code = "\n".join(body for lang, body in blocks(PAGE.read_text(encoding="utf-8")) if lang == "python")
    for needle in [".shape", " @ ", ".T", "axis=0", "keepdims=True", "[:, None]", "np.where", "assert_allclose",
                   "atol=", "rtol=", "e-08", "argsort()[::-1][:3]", ":.3f", ":.2e", "default_rng",
                   # 第 9、10 章（评审 chapters-9-10 #14）
                   "np.cumsum", "np.searchsorted", "np.isin", "np.bincount", "rng.choice(", "p=p", "np.unique",
                   "np.argwhere", "~", " & ", ".astype(", "np.float32"]:
        assert needle in code, needle
    languages = {lang for lang, _ in blocks(PAGE.read_text(encoding="utf-8"))}
    assert languages == {"python", "text"}  # 只有这两种框：别的语言的框不会被检查


def test_the_check_can_fail():
    page = ("```python\nimport numpy as np\nprint(np.array([3.0, 4.0]) @ np.array([1.0, 2.0]))\n```\n\n```text\n12.0\n```\n\n"
            "```python\nx = 1\n```\n\n```python\nprint('没写结果')\n```\n")
    found = mismatches(page)
    assert len(found) == 2
    assert "打印：\n11.0" in found[0] and "页面上写的：\n12.0" in found[0]
    assert "没写结果" in found[1]


def test_the_page_keeps_print_options_unchanged():
    before = np.get_printoptions()
    mismatches("```python\nimport numpy as np\nnp.set_printoptions(precision=1)\n```\n")
    assert np.get_printoptions() == before


def test_code_that_raises_fails_the_test():
    with pytest.raises(ZeroDivisionError):
        mismatches("```python\n1 / 0\n```\n")
