"""报错表的元测试（einops 风格的表，一个模块一张）。

每个模块的报错表 ``ERROR_CASES`` 放在镜像它的测试文件里（tests/core/test_attention.py 放注意力的，
tests/figures/test_ch01_*.py 放第 1 章图的……），由 conftest.py 的 ``error_table_test`` 一行跑完：每行
(id, 调用, 期望的异常类型, 中文报错必须匹配的正则) 都经过 ``check_error``——恰好是这个异常类型（不是 numpy
内部的子类）、信息匹配正则、而且是中文。

这个文件只留下：
- 元测试：``check_error`` 真的会判失败；每张表的 id 唯一、正则能编译；
- 覆盖测试：包里每个文档写了 ``Raises`` 的公开函数，都是某张表里某一行"直接调用、并由它抛出异常"的函数（附反证）。
"""

import importlib
import importlib.util
import inspect
import pkgutil
import re
import sys
from functools import cache
from pathlib import Path
from types import CodeType

import numpy as np
import pytest

import transformer_lab as tl

from helpers.errors import check_error

VE, TE = ValueError, TypeError



# ---------------------------------------------------------------- 元测试：check_error 与每张表

def test_check_error_can_fail():
    """反证：英文信息、错的类型、子类、不匹配的正则，check_error 都必须判为失败。"""
    def raise_(exc):
        def fn():
            raise exc
        return fn

    for fn, exc_type, pattern in [
        (raise_(ValueError("x must be positive")), ValueError, r"x"),  # 不是中文
        (raise_(TypeError("x 必须是正整数")), ValueError, r"x"),  # 类型不对
        (raise_(np.exceptions.AxisError("axis 越界")), ValueError, r"axis"),  # 子类也不行
        (raise_(ValueError("x 必须是正整数")), ValueError, r"y 必须"),  # 正则不匹配
        (lambda: None, ValueError, r"x"),  # 根本没报错
    ]:
        with pytest.raises((AssertionError, pytest.fail.Exception, TypeError, ValueError)):
            check_error(fn, exc_type, pattern)


TESTS = Path(__file__).resolve().parent
PACKAGE = Path(tl.__file__).resolve().parent


@cache
def error_tables() -> dict[str, list]:
    """tests/ 下每张报错表：{测试文件的相对路径: ERROR_CASES}。每个文件按路径各导入一份（不改 sys.modules）。"""
    tables = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        rel = path.relative_to(TESTS).as_posix()
        if re.search(r"^ERROR_CASES\s*=", path.read_text(encoding="utf-8"), re.M):
            spec = importlib.util.spec_from_file_location("_error_table_of_" + re.sub(r"\W", "_", rel), path)
            module = importlib.util.module_from_spec(spec)
            sys.path.insert(0, str(path.parent))  # 和 pytest 导入它时一样：同目录的辅助模块能导入
            try:
                spec.loader.exec_module(module)
            finally:
                sys.path.remove(str(path.parent))
            tables[rel] = module.ERROR_CASES
    return tables


def test_every_table_is_well_formed():
    """每行 (id, 调用, 异常类型, 正则)：id 在表内唯一，调用不带参数，异常是 TypeError/ValueError 这类类型，正则能编译。"""
    tables = error_tables()
    assert {"core/test_attention.py", "figures/test_ch01_rnn_vs_transformer.py",
            "lessons/test_costs.py", "plot/test_lines.py", "test_top_level.py"} <= set(tables)  # 真的找到了各处的表
    for rel, rows in tables.items():
        ids = [row[0] for row in rows]
        assert len(ids) == len(set(ids)), (rel, sorted({i for i in ids if ids.count(i) > 1}))
        for row in rows:
            case_id, fn, exc_type, pattern = row
            required = [p for p in inspect.signature(fn).parameters.values()
                        if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
            assert isinstance(case_id, str) and callable(fn) and not required, (rel, case_id)
            assert isinstance(exc_type, type) and issubclass(exc_type, Exception), (rel, case_id)
            re.compile(pattern)


# ---------------------------------------------------------------- 覆盖：每个文档写明的 Raises 都有一行

RAISES = re.compile(r"^\s*Raises(\s*\n\s*-{3,}|\s+``)", re.M)  # numpy 风格的小标题，或一行里的 "Raises ``ValueError``："
CONSTRUCTORS = ("__init__", "__post_init__", "__new__")


def _in_package(code: CodeType) -> bool:
    return Path(code.co_filename).resolve().is_relative_to(PACKAGE)


def _codes(cls: type, names) -> set[CodeType]:
    funcs = [inspect.unwrap(getattr(v, "fget", v)) for k, v in vars(cls).items() if k in names]
    return {f.__code__ for f in funcs if inspect.isfunction(f) and _in_package(f.__code__)}


@cache
def documented_raises() -> dict[str, frozenset[CodeType]]:
    """包里每个文档写了 Raises 的公开函数、公开类（算它的构造函数）和公开方法：{全名: 它的代码对象}。"""
    modules = [tl] + [importlib.import_module(m.name) for m in pkgutil.walk_packages(tl.__path__, "transformer_lab.")
                      if not any(part.startswith("_") for part in m.name.split("."))]
    found = {}
    for module in modules:
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue  # 私有的名字，或从别处导入的（在定义它的模块里算）
            full = f"{module.__name__}.{name}"
            if inspect.isfunction(obj) and RAISES.search(obj.__doc__ or ""):
                found[full] = frozenset({inspect.unwrap(obj).__code__})
            elif inspect.isclass(obj):
                if RAISES.search(obj.__doc__ or ""):
                    found[full] = frozenset(_codes(obj, CONSTRUCTORS))
                for attr, member in vars(obj).items():
                    func = getattr(member, "fget", member)
                    if not attr.startswith("_") and inspect.isfunction(func) and RAISES.search(func.__doc__ or ""):
                        found[f"{full}.{attr}"] = frozenset(_codes(obj, (attr,)))
    return found


def raised_through(fn) -> CodeType | None:
    """调用一行的 ``fn()``，返回异常经过的第一个包内函数的代码对象：测试直接调用、并由它抛出异常的那个函数。

    从异常的回溯 (traceback) 里找：最外层是测试自己的 lambda，往里第一个落在 transformer_lab/ 里的帧就是它。
    这一行如果没报错，或者异常在进入包之前就抛出，返回 None。
    """
    try:
        fn()
    except Exception as exc:  # noqa: BLE001  任何异常都行：这里只看它从哪里来
        tb = exc.__traceback__
        while tb is not None:
            if _in_package(tb.tb_frame.f_code):
                return tb.tb_frame.f_code
            tb = tb.tb_next
    return None


@cache
def called_by_rows() -> dict[tuple[str, str], CodeType | None]:
    """{(测试文件, 行 id): 这一行直接调用、并由它抛出异常的函数}。"""
    return {(rel, row[0]): raised_through(row[1]) for rel, rows in error_tables().items() for row in rows}


def uncovered(documented: dict[str, frozenset[CodeType]], called) -> list[str]:
    """文档写了 Raises、却没有任何一行直接调用它并由它报错的函数名。"""
    called = set(called)
    return sorted(name for name, codes in documented.items() if not codes & called)


# 报错只能在 fixture 里造出来、写不成表的一行的函数：{全名: 测它的测试}。条目过时（函数没了、或有了表里的行）会被下面的测试报出来。
NOT_A_TABLE_ROW = {
    "transformer_lab.quiz.questions": "tests/quiz/test_banks.py::test_questions_refuses_a_repeated_qid、"
                                      "::test_questions_names_a_missing_bank（要先 monkeypatch 某一章的题库或章节表）",
}


def test_every_documented_raises_has_an_error_row():
    documented = documented_raises()
    missing = uncovered(documented, called_by_rows().values())
    assert set(NOT_A_TABLE_ROW) <= set(missing), ("NOT_A_TABLE_ROW 过时了（函数不存在、文档不再写 Raises，或已经有表里的行），"
                                                  f"请删掉：{sorted(set(NOT_A_TABLE_ROW) - set(missing))}")
    missing = [name for name in missing if name not in NOT_A_TABLE_ROW]
    assert not missing, ("这些公开函数的文档写了 Raises，但没有任何报错表的一行直接调用它并由它报错；"
                         f"请在镜像它的测试文件的 ERROR_CASES 里加一行：{missing}")


def test_the_coverage_check_can_fail():
    """反证：拿掉调用 softmax 的行，softmax 就被报出来；行的"调用者"按回溯认，不是按 lambda 里出现的名字认。"""
    documented = documented_raises()
    softmax = "transformer_lab.core.softmax.softmax"
    assert softmax in documented and "transformer_lab.core.kv_cache.KVCache.append" in documented
    called = list(called_by_rows().values())
    assert softmax not in uncovered(documented, called)
    kept = [code for code in called if code not in documented[softmax]]
    assert uncovered(documented, kept) == sorted([*uncovered(documented, called), softmax])

    def code_of(name):
        (code,) = documented[name]
        return code

    grads = np.ones((3, 4))
    assert raised_through(lambda: tl.encoder_layer_backward(grads, {"w_q": grads}, grads, 2)) is code_of(
        "transformer_lab.core.encoder.encoder_layer_backward")  # 不是它内部调用的 encoder_layer_vjp
    assert raised_through(lambda: tl.rnn_forward(tl.causal_mask(0), grads, grads)) is code_of(
        "transformer_lab.core.attention.causal_mask")  # 参数里先报错的那个函数，不是外层的 rnn_forward
    assert raised_through(lambda: tl.softmax([1.0]) / 0) is code_of(softmax)  # 报错发生在 _validation 里，记在 softmax 上
    assert raised_through(lambda: 1 / 0) is None  # 没进包就报错
    assert raised_through(lambda: tl.softmax(np.ones(2))) is None  # 根本没报错
