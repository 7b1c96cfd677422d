"""练习测试的共用写法（tests/exercises/ 下每章一个文件都用它）。

- ``assert_status(name, fn, status, diagnosis)``：检查 ``fn``，状态和诊断必须恰好是这两个；
- ``shown_solution(name)``：执行 ``tl.exercises.solution(name)`` 显示的那段源码，取出读者会得到的函数；
- ``starter(name)``：执行起始代码得到的函数（检查它必须得到 ``not_attempted``）；
- ``garbage(name)``：从参考答案派生的一组“乱写的”函数（抛异常、返回 None、返回 list、形状不对、NaN、
  改动输入……），每个附上必须得到的状态和诊断。每道练习都要经得起它们（tests/exercises/test_checker.py）。
"""

from __future__ import annotations

import numpy as np

import transformer_lab as tl

__all__ = ["assert_status", "shown_solution", "starter", "garbage", "function_name"]


def function_name(name: str) -> str:
    return tl.exercises.exercise(name).signature.split("(")[0]


def _run(source: str, name: str):
    namespace = {"np": np}
    exec(source, namespace)  # noqa: S102  这是本包自己的参考答案 / 起始代码
    return namespace[function_name(name)]


def shown_solution(name: str):
    return _run(str(tl.exercises.solution(name)), name)


def starter(name: str):
    return _run(tl.exercises.exercise(name).starter, name)


def assert_status(name: str, fn, status: str, diagnosis: str | None = None) -> None:
    feedback = tl.exercises.check(name, fn)
    assert (feedback.status, feedback.diagnosis) == (status, diagnosis), str(feedback)
    assert feedback.passed is (status == "passed")
    assert feedback.message and any("\u4e00" <= ch <= "\u9fff" for ch in feedback.message), str(feedback)


def _broken_shape(out):
    if isinstance(out, tuple):
        return out[0]
    if isinstance(out, np.ndarray):
        return np.append(out.ravel(), out.ravel()[:1])
    if isinstance(out, list):
        return out + out[:1]
    if isinstance(out, dict):
        return list(out)
    return np.array([out, out])


def _nan_like(out):
    if isinstance(out, tuple):
        return tuple(_nan_like(o) for o in out)
    if isinstance(out, np.ndarray):
        return np.full(out.shape, np.nan)
    if isinstance(out, (list, dict)):
        return None
    return float("nan")


def _mutating(ref):
    def fn(*args, **kwargs):
        out = ref(*args, **kwargs)
        for a in list(args) + list(kwargs.values()):
            if isinstance(a, np.ndarray) and a.size:
                a.flat[0] = (not a.flat[0]) if a.dtype.kind == "b" else a.flat[0] + 1
                break
            if isinstance(a, list):  # 列表（比如第 11 章的词元编号）：原地加一个元素也算改动
                a.append(a[-1] if a else 0)
                break
        return out
    return fn


def _raises(*args, **kwargs):
    raise ValueError("我的代码出错了")


def garbage(name: str) -> list[tuple[str, object, str, str | None]]:
    """(说明, 函数, 必须得到的状态, 必须得到的诊断)。"""
    ex = tl.exercises.exercise(name)
    ref = ex.solution
    takes_arrays = any(isinstance(a, (np.ndarray, list)) for c in ex.test_cases() for a in (*c.args, *c.kwargs.values()))
    rows = [
        ("raises", _raises, "error", None),
        ("returns-none", lambda *a, **k: None, "failed", None),
        ("wrong-shape", lambda *a, **k: _broken_shape(ref(*a, **k)), "failed", None),
        ("nan", lambda *a, **k: _nan_like(ref(*a, **k)), "failed", None),
        ("string", lambda *a, **k: "答案", "failed", None),
        ("starter", starter(name), "not_attempted", None),
        ("not-a-function", 42, "error", None),
    ]
    if takes_arrays:
        rows.append(("mutates-input", _mutating(ref), "failed", "mutates_input"))
    return rows
