"""检查器：在一组测试输入上运行读者的函数，和参考答案比，认出常见错误。

一道练习 (``Exercise``) 由这几样东西组成：参考答案（一个真正的函数，``solution`` 显示的就是它的源码）、
测试输入（``cases(rng)``：手算的小例子、随机输入、极端输入……）、常见错误（``Mistake``：每个错误附一份
“错误的写法”，检查时在同样的输入上重算一遍）、分级提示。

检查读者的函数 ``fn`` 时：

1. 在每个测试输入的副本上调用 ``fn``（NumPy 的溢出警告先关掉，结果里的 NaN/inf 由比较来发现）；
   ``fn`` 改动了输入 → ``failed``，诊断 ``mutates_input``；第一个输入就抛 ``NotImplementedError``
   （起始代码）→ ``not_attempted``；抛别的异常 → ``error``，说明是哪个输入、什么异常。
2. 逐个和参考答案比较（``compare.compare``）。全对 → ``passed``，并说明和参考答案差多少。
3. 有不对的：把每个常见错误的写法在同样的输入上算一遍；读者的结果在**每一个**输入上都和某个错误写法
   一样（NaN 对 NaN 也算），就报告这个错误：它叫什么、为什么错、怎么改。从不读读者的源码。

``run`` 从不抛异常：读者的函数做什么都只会得到一个 ``Feedback``。
"""

from __future__ import annotations

import copy
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .compare import closeness, compare, same, show
from .feedback import Feedback

__all__ = ["Case", "Mistake", "Exercise", "run", "parameters", "MUTATES_INPUT"]

SEED = 20241206  # 随机测试输入的种子：同一道题每次检查用同样的输入，反馈可复现
MUTATES_INPUT = "mutates_input"


@dataclass(frozen=True)
class Case:
    """一个测试输入。

    ``label`` 是给读者看的中文说明（“手算的例子”“很大的数 [1000, 1001]”），``args``/``kwargs`` 原样传给函数。
    ``rtol``/``atol`` 是这个输入的容差（float32 的输入用更宽的容差）。
    """

    label: str
    args: tuple
    kwargs: dict = field(default_factory=dict)
    rtol: float = 1e-7
    atol: float = 1e-10


@dataclass(frozen=True)
class Mistake:
    """一个常见错误：编号、中文名字、为什么错、怎么改，以及一种或几种“这样写错了”的函数（和读者的函数同样的参数）。"""

    id: str
    name: str
    why: str
    fix: str
    variants: tuple[Callable, ...]


@dataclass(frozen=True)
class Exercise:
    """一道练习。

    ``signature`` 是读者要写的函数头（``"softmax(z)"``），起始代码由它生成；``task`` 一两句中文说要做什么；
    ``solution`` 是参考答案（真正的函数）；``cases(rng)`` 给出测试输入；``returns`` 给多个返回值起名；
    ``hints`` 由浅到深。
    """

    name: str
    chapter: int
    signature: str
    task: str
    solution: Callable
    cases: Callable[[np.random.Generator], list[Case]]
    mistakes: tuple[Mistake, ...] = ()
    hints: tuple[str, ...] = ()
    returns: tuple[str, ...] = ()

    @property
    def starter(self) -> str:
        """起始代码：函数头加一行 ``raise NotImplementedError``（检查时算“还没有写”）。"""
        return (f"def {self.signature}:\n"
                f"    # 在这里写你的代码，写好后删掉下面这一行\n"
                f"    raise NotImplementedError")

    def test_cases(self) -> list[Case]:
        """这道题的全部测试输入（固定的随机种子，每次都一样）。"""
        return self.cases(np.random.default_rng(SEED))


def _call(fn: Callable, case: Case) -> Any:
    """在输入的深拷贝上调用；溢出等浮点警告先关掉（读者会在结果里看到 NaN/inf，比较时再说明）。"""
    args, kwargs = copy.deepcopy(case.args), copy.deepcopy(case.kwargs)
    with np.errstate(all="ignore"):
        return fn(*args, **kwargs), args, kwargs


def _mutated(exercise: Exercise, case: Case, args: tuple, kwargs: dict) -> str | None:
    """调用之后，传进去的数组被改过了吗？改过就说出是哪个参数。"""
    names = parameters(exercise.signature)
    pairs = [(names[i] if i < len(names) else f"第 {i + 1} 个参数", a, b)
             for i, (a, b) in enumerate(zip(case.args, args))]
    pairs += [(k, case.kwargs[k], kwargs[k]) for k in case.kwargs]
    for label, before, after in pairs:
        if not _unchanged(before, after):
            return label
    return None


def _unchanged(before: Any, after: Any) -> bool:
    """调用前后的一个参数还一样吗？数组逐个元素比（NaN 对 NaN 算一样），list/tuple/dict 逐项比。"""
    if isinstance(before, np.ndarray):
        return (isinstance(after, np.ndarray) and after.shape == before.shape
                and np.array_equal(before, after, equal_nan=before.dtype.kind in "fc"))
    if isinstance(before, (list, tuple)):
        return (type(after) is type(before) and len(after) == len(before)
                and all(_unchanged(b, a) for b, a in zip(before, after)))
    if isinstance(before, dict):
        return (isinstance(after, dict) and list(after) == list(before)
                and all(_unchanged(before[k], after[k]) for k in before))
    return before is after or bool(before == after)


def _where(exc: BaseException) -> str:
    """异常发生在读者代码的哪一行（最后一个不在本包里的栈帧）。"""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "transformer_lab" not in f.filename]
    if not frames:
        return ""
    f = frames[-1]
    return f"（出错的那一行：{f.line}）" if f.line else ""


def _error(exercise: Exercise, case: Case, exc: BaseException) -> Feedback:
    text = str(exc).strip()
    return Feedback(exercise.name, "error", None,
                    f"在测试“{case.label}”上运行你的函数时出错：{type(exc).__name__}"
                    f"{'：' + text if text else ''}{_where(exc)}。\n"
                    f"输入：{_inputs(exercise, case)}\n"
                    f"提示：先在一个小例子上单独调用你的函数，看看哪一步出了问题。")


def parameters(signature: str) -> list[str]:
    """函数头里的参数名：``"attention(q, k, v, mask=None)"`` → ``['q', 'k', 'v', 'mask']``。"""
    inside = signature[signature.index("(") + 1:signature.rindex(")")]
    return [p.split("=")[0].strip() for p in inside.split(",") if p.strip()]


def _inputs(exercise: Exercise, case: Case) -> str:
    """测试输入的简短写法：小数组写出数值，大数组只写形状。"""
    names = parameters(exercise.signature)
    named = [(names[i] if i < len(names) else f"参数 {i + 1}", a) for i, a in enumerate(case.args)]
    parts = []
    for name, value in named + list(case.kwargs.items()):
        if isinstance(value, np.ndarray) and value.size > 12:
            parts.append(f"{name} = 形状 {value.shape} 的数组（dtype={value.dtype}）")
        else:
            parts.append(f"{name} = {show(value)}".replace("\n", ""))
    return "，".join(parts)


def _diagnose(exercise: Exercise, cases: list[Case], outputs: list[Any]) -> Mistake | None:
    """读者在每个输入上的结果都和某个错误写法一样吗？返回第一个对上的常见错误。"""
    for mistake in exercise.mistakes:
        for variant in mistake.variants:
            try:
                wrong = [_call(variant, case)[0] for case in cases]
            except Exception:  # noqa: BLE001  错误写法在某个输入上本身就会出错：这个写法对不上
                continue
            if all(same(w, o, c.rtol, c.atol) for w, o, c in zip(wrong, outputs, cases)):
                return mistake
    return None


def _failure(exercise: Exercise, case: Case, expected: Any, got: Any, problem: str,
             mistake: Mistake | None, wrong: int, total: int) -> Feedback:
    lines = [f"{total} 个测试里有 {wrong} 个不对。第一个不对的测试：{case.label}",
             f"  输入：{_inputs(exercise, case)}",
             f"  应该得到：{_value(expected)}",
             f"  你的结果：{_value(got)}",
             f"  问题：{problem}"]
    if mistake is not None:
        lines += [f"看起来是常见错误「{mistake.name}」（{mistake.id}）。",
                  f"  为什么错：{mistake.why}", f"  怎么改：{mistake.fix}"]
    else:
        lines.append(f"需要提示就运行 tl.exercises.hint({exercise.name!r})。")
    return Feedback(exercise.name, "failed", mistake.id if mistake else None, "\n".join(lines))


def _value(x: Any) -> str:
    if isinstance(x, tuple):
        return "；".join(_value(v) for v in x)
    text = show(x).replace("\n", "\n              ")
    return f"{text}（形状 {x.shape}）" if isinstance(x, np.ndarray) else text


def run(exercise: Exercise, fn: Callable) -> Feedback:
    """检查读者的函数 ``fn``（见模块说明）。从不抛异常。"""
    cases = exercise.test_cases()
    outputs = []
    for i, case in enumerate(cases):
        try:
            out, args, kwargs = _call(fn, case)
        except NotImplementedError as exc:
            if i == 0:
                return Feedback(exercise.name, "not_attempted", None,
                                f"还是起始代码：在上面的起始代码格子里把 raise NotImplementedError 那一行换成你的代码，"
                                f"运行那个格子，再运行这个检查格子。"
                                f"\n想要提示：tl.exercises.hint({exercise.name!r})；"
                                f"看参考答案：tl.exercises.solution({exercise.name!r})。")
            return _error(exercise, case, exc)
        except Exception as exc:  # noqa: BLE001  读者的代码抛什么都只是一条反馈
            return _error(exercise, case, exc)
        moved = _mutated(exercise, case, args, kwargs)
        if moved is not None:
            return Feedback(exercise.name, "failed", MUTATES_INPUT,
                            f"你的函数改动了传进来的参数 {moved}（测试“{case.label}”）。\n"
                            "为什么不行：调用者的数据被悄悄改掉，后面再用它就会算错，这种错误极难查。\n"
                            f"怎么改：不要原地修改传进来的参数（{moved} -= …、{moved}[...] = …、列表的 append/pop 都算），"
                            f"要改就先复制一份：{moved} = {moved}.copy()。")
        outputs.append(out)
    return _judge(exercise, cases, outputs)


def _judge(exercise: Exercise, cases: list[Case], outputs: list[Any]) -> Feedback:
    expected = [exercise.solution(*copy.deepcopy(c.args), **copy.deepcopy(c.kwargs)) for c in cases]
    verdicts = [compare(e, o, c.rtol, c.atol, exercise.returns) for e, o, c in zip(expected, outputs, cases)]
    bad = [i for i, v in enumerate(verdicts) if not v.ok]
    if not bad:
        precise = [v.error for v, c in zip(verdicts, cases) if c.rtol <= 1e-7] or [v.error for v in verdicts]
        worst = max(precise)
        labels = "、".join(dict.fromkeys(c.label.split("：")[0] for c in cases))
        return Feedback(exercise.name, "passed", None,
                        f"全部 {len(cases)} 个测试都对了（{labels}）。\n"
                        f"和参考答案的最大相对误差 {worst:.1e}（float64 的输入上）：{closeness(worst)}。")
    first = bad[0]
    mistake = _diagnose(exercise, cases, outputs)
    return _failure(exercise, cases[first], expected[first], outputs[first], verdicts[first].problem,
                    mistake, len(bad), len(cases))
