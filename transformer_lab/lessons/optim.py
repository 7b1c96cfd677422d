"""训练：一个训练循环 ``train_loop``、两种走法（梯度下降、Adam），和训练的结果 ``Run``。

全书的每一次训练（第 3 章学眼镜、第 5 章训练头、第 8 章训练小 Transformer）都走同一个循环::

    for step in 0, 1, ..., steps:
        loss, grads = loss_and_grads(params)      # 前向 + 反向（本书自己手写的梯度）
        检查没有发散；每隔 checkpoint_every 步存一份参数
        params = 走一步(params, grads)             # 梯度下降：w ← w − lr·g；Adam：见 ``adam``

``Run`` 是只读的：损失、存档的步数、每一份参数，以及各章另加的东西（注意力权重、正确率……）。
它像字典一样取值（``run["losses"]``），``run.at(step)`` 找到某一步的存档。本模块只依赖 NumPy。
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from .. import _validation as check

__all__ = ["Run", "as_run", "freeze", "train_loop", "sgd", "adam", "adam_step", "gradient_descent", "check_not_diverged"]


def freeze(value: Any) -> Any:
    """只读的深拷贝：数组复制一份并设为不可写，字典变成只读映射，列表变成元组。

    实验结果在一个进程里只算一次、被几张图和 notebook 共用；只读保证谁也不会悄悄改掉别人的数据。

    Examples
    --------
    >>> frozen = freeze({"w": np.zeros(2)})
    >>> frozen["w"].flags.writeable
    False
    """
    if isinstance(value, np.ndarray):
        out = value.copy()
        out.setflags(write=False)
        return out
    if isinstance(value, Run):
        return value
    if isinstance(value, Mapping):
        return MappingProxyType({k: freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


class Run(Mapping):
    """一次训练的结果（只读）：``losses`` (steps + 1,)、``checkpoint_steps`` (C,)、``checkpoints``（C 份参数），
    以及各章另加的字段（``run.with_fields(weights=...)``）。

    Examples
    --------
    >>> run = Run(losses=[4.0, 1.0, 0.25], checkpoint_steps=[0, 2], checkpoints=[{"w": np.array([1.0])},
    ...                                                                       {"w": np.array([2.5])}])
    >>> run.at(2), float(run["checkpoints"][run.at(2)]["w"][0]), sorted(run)
    (1, 2.5, ['checkpoint_steps', 'checkpoints', 'losses'])
    >>> run.at(1)
    Traceback (most recent call last):
    ...
    ValueError: step=1 不是存过档的一步：存档在第 0, 2 步。
    """

    def __init__(self, losses, checkpoint_steps, checkpoints, **fields):
        data = {"losses": np.asarray(losses, dtype=float), "checkpoint_steps": np.asarray(checkpoint_steps, dtype=int),
                "checkpoints": checkpoints, **fields}
        self._data = {k: freeze(v) for k, v in data.items()}

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"Run(步数={len(self['losses']) - 1}, 存档 {len(self['checkpoint_steps'])} 份, 字段={list(self)})"

    def with_fields(self, **fields: Any) -> "Run":
        """加上（或换掉）几个字段，得到一个新的 Run；原来的不变。"""
        data = {**self._data, **fields}
        return Run(data.pop("losses"), data.pop("checkpoint_steps"), data.pop("checkpoints"), **data)

    def at(self, step: int) -> int:
        """第 ``step`` 步的存档是第几份（下标）。``step`` 必须正好是存过档的一步。"""
        steps = self["checkpoint_steps"]
        hits = np.flatnonzero(steps == step)
        if isinstance(step, (bool, np.bool_)) or not hits.size:
            raise ValueError(f"step={step!r} 不是存过档的一步：存档在第 {', '.join(map(str, steps))} 步。")
        return int(hits[0])


def as_run(value: object, name: str, fields: tuple[str, ...] = ()) -> Run:
    """检查传进来的是一次训练的结果 ``Run``，并且带着要用的字段（例如图要画的 ``weights``）。"""
    if not isinstance(value, Run):
        raise TypeError(f"{name} 必须是一次训练的结果 (Run)，收到的是 {check.describe(value)}。"
                        f"提示：用 tl.runs 里的实验，或本章训练函数的返回值。")
    missing = [f for f in fields if f not in value]
    if missing:
        raise ValueError(f"{name} 缺少字段 {', '.join(missing)}：这张图要用它们（有的字段：{', '.join(value)}）。")
    return value


MAX_STEPS = 100_000  # 训练步数的上限：本书最长的训练是 1200 步；10 万步在单核上要算好几个小时


def check_not_diverged(loss: float, losses: list[float], step: int, lr: float) -> None:
    """训练发散了就停下并说明：损失变成 NaN/inf，或超过初始损失的 1000 倍。

    Raises
    ------
    TypeError
        ``loss`` 不是实数。
    ValueError
        训练发散了。
    """
    if isinstance(loss, (bool, np.bool_)) or not isinstance(loss, (numbers.Real, np.ndarray)) or np.ndim(loss) != 0:
        raise TypeError(f"损失 loss 必须是一个实数（loss_and_grads 返回的第一个值），第 {step} 步收到的是 {check.describe(loss)}。")
    loss = float(loss)
    if not np.isfinite(loss) or (losses and loss > 1000 * losses[0]):
        raise ValueError(
            f"训练发散了：第 {step} 步的损失是 {loss}（初始损失 {losses[0] if losses else loss}）。"
            f"学习率 lr={lr} 太大，步子迈过了谷底、越走越高。提示：把 lr 调小（例如减半）再试。"
        )


def sgd(lr: float) -> Callable:
    """梯度下降的一步 ``w ← w − lr · g``，写成 ``train_loop`` 要的走法 ``step(params, grads, state)``。"""
    lr = check.positive_real(lr, "lr")

    def step(params, grads, state):
        return {name: w - lr * grads[name] for name, w in params.items()}, state

    step.lr = lr
    return step


def adam(params: dict, grads: dict, state: dict, lr: float, beta1: float = 0.9, beta2: float = 0.999,
         eps: float = 1e-8) -> tuple[dict, dict]:
    """Adam 走一步（不改动传入的字典）：返回 ``(新参数, 新状态)``。

    m 是梯度的滑动平均（每步留下 β₁ 的旧值、掺进 1 − β₁ 的新梯度），v 是梯度平方的滑动平均；
    每个参数按 m̂ / √v̂ 走一步——梯度一直很小的参数也能迈出像样的一步。开头几步 m、v 偏小，除以 1 − βᵗ 修正。

    Raises
    ------
    ValueError
        ``grads`` 与 ``params`` 的键不同或某个梯度与参数形状不同，参数或梯度含 NaN/inf，``lr`` 或 ``eps`` 不是正数，
        ``beta1``、``beta2`` 不在 [0, 1) 之内；``state`` 不是 ``{}`` 或 ``{"t", "m", "v"}``，``state['t']`` 是负数，
        m、v 与 ``params`` 不同键、形状不同（不悄悄广播）或含 NaN/inf，v 有负数；梯度的平方溢出；
        走一步之后的参数不是有限数（报出是哪个参数）。
    TypeError
        ``lr``、``beta1``、``beta2``、``eps`` 不是实数；``params``、``grads``、``state`` 不是字典；
        参数、梯度、m、v 不是实数数组；``state['t']`` 不是整数。

    Examples
    --------
    第一步修正之后 m̂ = g、v̂ = g²，所以每个参数都走 lr（方向与梯度相反），不管梯度多大（ε 只让它差一点点）：

    >>> new, state = adam({"a": np.array([1.0]), "b": np.array([1.0])},
    ...                   {"a": np.array([0.001]), "b": np.array([50.0])}, {}, lr=0.1)
    >>> new["a"].round(4), new["b"].round(4), state["t"]
    (array([0.9]), array([0.9]), 1)
    """
    lr, eps = check.positive_real(lr, "lr"), check.positive_real(eps, "eps")
    beta1, beta2 = check.decay_rate(beta1, "beta1"), check.decay_rate(beta2, "beta2")
    t, m_old, v_old = _adam_state(params, grads, state)
    t += 1
    m = {k: beta1 * m_old[k] + (1 - beta1) * g for k, g in grads.items()}
    with np.errstate(over="ignore"):
        v = {k: beta2 * v_old[k] + (1 - beta2) * np.square(g) for k, g in grads.items()}
    for k in v:
        check.finite_result(v[k], f"Adam 的梯度平方 v[{k!r}]",
                            "梯度的平方超出了 float64 的范围（梯度约 1e154 以上）：多半是训练已经发散。提示：把 lr 调小。")
    m_hat = {k: m[k] / (1 - beta1**t) for k in m}  # 开头几步 m、v 偏小，修正一下
    v_hat = {k: v[k] / (1 - beta2**t) for k in v}
    with np.errstate(over="ignore", invalid="ignore"):
        new = {k: w - lr * m_hat[k] / (np.sqrt(v_hat[k]) + eps) for k, w in params.items()}
    for k in new:
        check.finite_result(new[k], f"Adam 走一步之后的参数 params[{k!r}]",
                            f"提示：lr={lr} 太大（或参数本来就接近浮点数的上限）：把 lr 调小再试。")
    return new, {"t": t, "m": m, "v": v}


def _adam_state(params: Mapping, grads: Mapping, state: Mapping) -> tuple[int, dict, dict]:
    """Adam 的输入只在这里检查一次：返回 ``(已走的步数 t, 旧的 m, 旧的 v)``（第一步的 m、v 是 0）。

    ``params``、``grads``、``state`` 都是字典；``grads`` 与 ``params`` 同键、每个梯度与参数同形状（不悄悄广播）、
    都是有限实数；``state`` 是空字典（第一步），或上一步返回的 ``{"t": 非负整数, "m": ..., "v": ...}``：
    m、v 与 ``params`` 同键，每个与参数同形状、有限，v（梯度平方的平均）不能是负数。
    """
    for value, name in ((params, "params"), (grads, "grads"), (state, "state")):
        if not isinstance(value, Mapping):
            raise TypeError(f"{name} 必须是字典，收到的是 {check.describe(value)}。"
                            + ("提示：第一步传空字典 {}，之后传上一步返回的状态。" if name == "state" else ""))
    if set(grads) != set(params):
        raise ValueError(f"grads 的键必须与 params 相同：params 有 {sorted(params)}，grads 有 {sorted(grads)}。")
    for k, w in params.items():
        w = check.as_real_array(w, f"params[{k!r}]")
        g = check.as_real_array(grads[k], f"grads[{k!r}]")
        check.check_shape(g, f"grads[{k!r}]", w.shape, f"（必须与 params[{k!r}] 同形状）")
    if not state:
        zeros = dict.fromkeys(params, 0)
        return 0, zeros, zeros
    if set(state) != {"t", "m", "v"}:
        raise ValueError(f"state 必须是空字典（第一步）或上一步返回的 {{'t', 'm', 'v'}}，收到的键是 {sorted(map(str, state))}。"
                         "提示：第一步传 {}，之后原样传回 adam 返回的第二个值。")
    t = check.nonnegative_int(state["t"], "state['t']")
    for key in ("m", "v"):
        moments = state[key]
        if not isinstance(moments, Mapping) or set(moments) != set(params):
            got = sorted(map(str, moments)) if isinstance(moments, Mapping) else check.describe(moments)
            raise ValueError(f"state[{key!r}] 必须是与 params 同键的字典：params 有 {sorted(params)}，收到的是 {got}。")
        for k, w in params.items():
            x = check.as_real_array(moments[k], f"state[{key!r}][{k!r}]")
            check.check_shape(x, f"state[{key!r}][{k!r}]", np.shape(w), f"（必须与 params[{k!r}] 同形状，不能广播）")
            if key == "v" and np.any(x < 0):
                raise ValueError(f"state['v'][{k!r}] 不能有负数（它是梯度平方的滑动平均），收到的最小值是 {x.min()}。")
    return t, state["m"], state["v"]


def adam_step(lr: float, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8) -> Callable:
    """Adam 写成 ``train_loop`` 要的走法 ``step(params, grads, state)``。

    Raises
    ------
    TypeError, ValueError
        与 ``adam`` 相同（``lr``、``eps`` 是正实数，``beta1``、``beta2`` 在 [0, 1) 之内）：造走法时就检查，不必等到第一步。
    """
    lr, eps = check.positive_real(lr, "lr"), check.positive_real(eps, "eps")
    beta1, beta2 = check.decay_rate(beta1, "beta1"), check.decay_rate(beta2, "beta2")

    def step(params, grads, state):
        return adam(params, grads, state, lr, beta1, beta2, eps)

    step.lr = lr
    return step


def train_loop(params: Mapping[str, np.ndarray], loss_and_grads: Callable, step: Callable, steps: int,
               checkpoint_every: int = 1) -> Run:
    """全书唯一的训练循环。不改动传入的 ``params``。

    Parameters
    ----------
    params : mapping of str -> ndarray
        初始参数。
    loss_and_grads : callable
        ``loss_and_grads(params) -> (loss, grads)``，grads 与 params 同键同形状。
    step : callable
        走法：``sgd(lr)`` 或 ``adam_step(lr)``。
    steps : int
        走多少步。
    checkpoint_every : int
        每隔几步存一份参数（第 0 步和最后一步总会存）。

    Returns
    -------
    Run
        ``losses`` (steps + 1,) 每一步更新前的损失（最后一个是训练完的损失）；``checkpoint_steps``；``checkpoints``；
        ``seconds``：这次训练用了多少秒（结果存进硬盘缓存后，读出来的仍是当初训练时量的用时）。

    Raises
    ------
    TypeError, ValueError
        ``steps``、``checkpoint_every`` 不是正整数，``steps`` 超过 ``MAX_STEPS``（10 万）；``params`` 不是 {名字: 实数数组}
        的字典；``loss_and_grads``、``step`` 不是函数；``loss_and_grads`` 返回的不是 (实数损失, 与 params 同键同形状的
        有限梯度)；检查点要占的内存超过预算（2 GiB）；训练发散（停下并说明，不会存下 NaN 的检查点）。
    """
    steps, every = check.positive_int(steps, "steps"), check.positive_int(checkpoint_every, "checkpoint_every")
    check.at_most(steps, "steps", MAX_STEPS, "本书最长的训练是 1200 步，这么多步要算上好几个小时")
    if not isinstance(params, Mapping) or not params:
        raise TypeError(f"params 必须是非空的字典 {{名字: 数组}}，收到的是 {check.describe(params)}。")
    for name, w in params.items():
        check.as_real_array(w, f"params[{name!r}]")
    for fn, name in ((loss_and_grads, "loss_and_grads"), (step, "step")):
        if not callable(fn):
            raise TypeError(f"{name} 必须是函数，收到的是 {check.describe(fn)}。"
                            + ("提示：loss_and_grads(params) 返回 (损失, 梯度字典)。" if name == "loss_and_grads"
                               else "提示：用 sgd(lr) 或 adam_step(lr) 造一个。"))
    params, state = {name: np.array(w, dtype=float) for name, w in params.items()}, {}
    check.memory_budget((steps // every + 2) * sum(w.size for w in params.values()), 8,
                        f"{steps // every + 2} 份检查点（每 {every} 步存一份参数）")
    losses, saved, saved_steps = [], [], []
    start = time.perf_counter()
    for i in range(steps + 1):
        loss, grads = _checked_result(loss_and_grads(params), params, i)
        check_not_diverged(loss, losses, i, getattr(step, "lr", "?"))
        losses.append(float(loss))
        if i % every == 0 or i == steps:
            saved.append({name: w.copy() for name, w in params.items()})
            saved_steps.append(i)
        if i < steps:
            params, state = step(params, grads, state)
    return Run(losses, saved_steps, saved, seconds=time.perf_counter() - start)


def _checked_result(result: object, params: dict, i: int) -> tuple[object, dict]:
    """``loss_and_grads`` 的返回值：(损失, 梯度字典)，梯度与 params 同键、同形状、都是有限实数。"""
    if not isinstance(result, tuple) or len(result) != 2:
        raise TypeError(f"loss_and_grads 必须返回 (损失, 梯度字典) 两个值，第 {i} 步收到的是 {check.describe(result)}。")
    loss, grads = result
    if not isinstance(grads, Mapping) or set(grads) != set(params):
        got = sorted(map(str, grads)) if isinstance(grads, Mapping) else check.describe(grads)
        raise ValueError(f"loss_and_grads 返回的梯度必须与 params 同键：params 有 {sorted(params)}，第 {i} 步的梯度是 {got}。")
    for name, w in params.items():
        g = check.as_real_array(grads[name], f"第 {i} 步的梯度 grads[{name!r}]")  # NaN/inf 在这里报：多半是训练发散了
        check.check_shape(g, f"grads[{name!r}]", w.shape, f"（必须与 params[{name!r}] 同形状）")
    return loss, grads


def gradient_descent(params: Mapping[str, np.ndarray], loss_and_grads: Callable, lr: float, steps: int,
                     checkpoint_every: int = 1) -> Run:
    """最朴素的梯度下降：``w ← w − lr · ∂L/∂w``，重复 ``steps`` 步（``train_loop`` 加 ``sgd(lr)``）。

    Raises
    ------
    TypeError, ValueError
        lr 不是有限正数、steps/checkpoint_every 不是正整数；训练发散（损失变成 NaN/inf 或超过初始损失的 1000 倍）。

    Examples
    --------
    损失 (w − 3)²，梯度 2(w − 3)，学习率 0.25：每步离 3 的距离减半。

    >>> run = gradient_descent({"w": np.array([1.0])}, lambda p: (float((p["w"][0] - 3) ** 2), {"w": 2 * (p["w"] - 3)}),
    ...                        lr=0.25, steps=3)
    >>> run["losses"].tolist(), run["checkpoints"][-1]["w"].tolist()
    ([4.0, 1.0, 0.25, 0.0625], [2.75])
    """
    return train_loop(params, loss_and_grads, sgd(lr), steps, checkpoint_every)
