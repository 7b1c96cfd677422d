"""头是练出来的：一个需要两种关系的小任务，用最朴素的梯度下降训练一个 2 头注意力层。

任务（设计的数据，训练出来的权重）：一句话有 T = 6 个词，词来自 ``num_pairs`` 对"搭档"（A 与 a、B 与 b ……），
每句挑 3 对、打乱顺序；每个词还带一个随机的"内容"向量（长 ``value_dim``）。
每个位置 t 要同时输出两样东西：

* 前一个词的内容（第一个词的"前一个"绕回到最后一个词）——只看**位置**就能找到；
* 搭档词的内容（A 找 a，a 找 A）——只看**词本身**就能找到。

输入 x 的每一行 = [词的独热编码 (2·num_pairs) | 位置的独热编码 (T) | 内容 (value_dim)]，长度 D。
输出的前 2·value_dim 维与目标比较（均方误差），其余维不计。

训练循环 ``gradient_descent`` 与任务无关：给它一个"算损失和梯度"的函数，它只做 ``w ← w − lr · ∂L/∂w``，
每隔几步把权重存一份（检查点 (checkpoint)），图的每一帧读检查点，不重新训练。本模块只依赖 NumPy 和 ``core``。
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .. import _validation as check
from ..core.multihead import multi_head_attention, multi_head_attention_backward, split_heads
from .optim import gradient_descent

__all__ = ["two_relation_task", "init_head_weights", "train_heads",
           "head_pieces", "relation_mass", "head_gap", "WEIGHT_NAMES"]

WEIGHT_NAMES = ("w_q", "w_k", "w_v", "w_o")
T_TASK = 6


def two_relation_task(num_sequences: int, rng: np.random.Generator, num_pairs: int = 4,
                      value_dim: int = 2) -> dict[str, np.ndarray]:
    """造 ``num_sequences`` 句"前一个词 + 搭档词"任务的数据（设计的数据）。

    Parameters
    ----------
    num_sequences : int
        句子个数 N。
    rng : np.random.Generator
    num_pairs : int
        词表里有几对搭档（≥ 3，每句用其中 3 对）。
    value_dim : int
        每个词的内容向量长度 m。

    Returns
    -------
    dict
        ``x`` (N, T, D)，D = 2·num_pairs + T + m；``y`` (N, T, 2m) 目标 = [前一个词的内容 | 搭档的内容]；
        ``prev`` (T,) 每个位置的前一个位置；``partner`` (N, T) 搭档所在的位置；
        ``tokens`` (N, T) 词的名字（"A"、"a" ……）。

    Raises
    ------
    TypeError, ValueError
        参数不是正整数、``num_pairs`` < 3，``rng`` 不是 Generator，或数据要占的内存超过预算（2 GiB）。

    Examples
    --------
    >>> data = two_relation_task(2, np.random.default_rng(0))
    >>> data["x"].shape, data["y"].shape                 # D = 8 + 6 + 2 = 16
    ((2, 6, 16), (2, 6, 4))
    >>> data["prev"].tolist()                            # 位置 0 的"前一个"绕回到位置 5
    [5, 0, 1, 2, 3, 4]
    """
    N = check.positive_int(num_sequences, "num_sequences")
    num_pairs, m = check.positive_int(num_pairs, "num_pairs"), check.positive_int(value_dim, "value_dim")
    rng = check.generator(rng)
    if num_pairs < 3:
        raise ValueError(f"num_pairs 至少是 3（每句要用 3 对搭档），收到的是 {num_pairs}。")
    T, V = T_TASK, 2 * num_pairs
    check.memory_budget(V * V + 3 * N * T * (V + T + 3 * m), 8, f"{N} 句的任务数据（num_pairs={num_pairs}, value_dim={m}）")
    pairs = np.stack([rng.choice(num_pairs, size=3, replace=False) for _ in range(N)])  # (N, 3)
    types = np.concatenate([2 * pairs, 2 * pairs + 1], axis=1)  # (N, T) 搭档 = 编号的最低位取反
    types = np.take_along_axis(types, np.argsort(rng.random((N, T)), axis=1), axis=1)  # (N, T) 打乱顺序
    values = rng.normal(size=(N, T, m))  # (N, T, m)
    partner = np.argmax(types[:, None, :] == (types[:, :, None] ^ 1), axis=-1)  # (N, T)
    prev = (np.arange(T) - 1) % T  # (T,)
    x = np.concatenate([np.eye(V)[types], np.broadcast_to(np.eye(T), (N, T, T)), values], axis=-1)  # (N, T, D)
    y = np.concatenate([values[:, prev], np.take_along_axis(values, partner[..., None], axis=1)], axis=-1)  # (N, T, 2m)
    names = np.array([chr(ord("A") + i // 2) if i % 2 == 0 else chr(ord("a") + i // 2) for i in range(V)])
    return {"x": x, "y": y, "prev": prev, "partner": partner, "tokens": names[types]}


def init_head_weights(D: int, num_heads: int, rng: np.random.Generator, scale: float = 0.3,
                      identical: bool = False) -> dict[str, np.ndarray]:
    """小的随机初始权重 W_Q, W_K, W_V, W_O（每个 D × D，元素 ~ N(0, scale²)）。

    ``identical=True`` 时只随机出第 1 个头，其余头是它的复制品：W_Q/W_K/W_V 里每个头的那几列相同，
    W_O 里每个头的那几行相同——这是"对称性"实验的起点。

    Raises
    ------
    TypeError, ValueError
        D 或 num_heads 不是正整数、D 不能被 num_heads 整除、scale 不是正数，权重要占的内存超过预算（2 GiB），
        或 scale 大到权重溢出。

    Examples
    --------
    >>> w = init_head_weights(4, 2, np.random.default_rng(0), identical=True)
    >>> bool(np.array_equal(w["w_q"][:, :2], w["w_q"][:, 2:])), head_gap(w, 2)
    (True, 0.0)
    """
    D, H = check.positive_int(D, "D"), check.positive_int(num_heads, "num_heads")
    scale, rng = check.positive_real(scale, "scale"), check.generator(rng)
    check.heads_divide(D, H, source="", name="D")
    check.memory_budget(4 * D * D, 8, f"四个 D × D 的权重（D={D}）")
    with np.errstate(over="ignore", invalid="ignore"):
        w = check.finite_result(scale * rng.normal(size=(4, D, D)), f"随机权重（scale={scale}）", check.SCALE_HINT)  # (4, D, D)
    if check.boolean(identical, "identical"):
        d_k = D // H
        w[:3] = np.tile(w[:3, :, :d_k], (1, 1, H))  # (3, D, D) 每个头的列都抄第 1 个头
        w[3] = np.tile(w[3, :d_k, :], (H, 1))  # (D, D) 每个头的行都抄第 1 个头
    return dict(zip(WEIGHT_NAMES, w))


def _task_loss(params, x, y, num_heads):
    """均方误差：输出的前 2m 维与目标比较。返回 (损失, 四个权重的梯度)。"""
    w = [params[name] for name in WEIGHT_NAMES]
    out, _ = multi_head_attention(x, *w, num_heads)  # (N, T, D)
    r = out[..., : y.shape[-1]] - y  # (N, T, 2m)
    grad_out = np.zeros_like(out)
    grad_out[..., : y.shape[-1]] = 2 * r / r.size  # (N, T, D) 只有前 2m 维有梯度
    grads = multi_head_attention_backward(x, *w, grad_out, num_heads)
    return float(np.mean(r**2)), {name: grads[name] for name in WEIGHT_NAMES}


def _check_task(task: object) -> tuple[np.ndarray, np.ndarray]:
    """``two_relation_task`` 那样的数据：``x`` (N, T, D)、``y`` (N, T, 2m)，2m <= D（输出的前 2m 维与目标比较）。"""
    if not isinstance(task, Mapping) or "x" not in task or "y" not in task:
        got = sorted(map(str, task)) if isinstance(task, Mapping) else check.describe(task)
        raise TypeError(f"task 必须是含 x、y 的字典（two_relation_task 的返回值），收到的是 {got}。")
    x = check.as_real_array(task["x"], "task['x']")
    check.check_shape(x, "task['x']", (None, None, None), "（N 句 × T 个词 × D）")
    y = check.as_real_array(task["y"], "task['y']")
    check.check_shape(y, "task['y']", (x.shape[0], x.shape[1], None), f"（与 task['x'] 同样的 N={x.shape[0]} 句、T={x.shape[1]} 个词）")
    if y.shape[-1] > x.shape[-1]:
        raise ValueError(f"task['y'] 的最后一维 {y.shape[-1]} 不能超过 task['x'] 的 D={x.shape[-1]}：输出的前 2m 维与目标比较。")
    return x, y


def train_heads(task: dict, params: dict[str, np.ndarray], num_heads: int = 2, lr: float = 1.0,
                steps: int = 1200, checkpoint_every: int = 40, train_w_o: bool = True) -> dict:
    """在 ``two_relation_task`` 的数据上训练一个多头注意力层（全部数据一起算梯度）。

    Parameters
    ----------
    task : dict
        ``two_relation_task`` 的返回值（用到 ``x`` 和 ``y``）。
    params : dict
        初始权重，例如 ``init_head_weights`` 的返回值。
    num_heads, lr, steps, checkpoint_every
        头数；学习率；步数；每隔几步存一份权重。
    train_w_o : bool
        是否训练输出矩阵 W_O。``False`` 时 W_O 的梯度当作 0，从头到尾停在 ``params["w_o"]``
        （第 5 章把它定在单位矩阵上，看"没有 W_O"的多头层能练到哪一步）。

    Returns
    -------
    Run
        ``optim.gradient_descent`` 的结果（只读），另加 ``weights``：每个检查点上全部句子的注意力权重 (C, N, H, T, T)。

    Raises
    ------
    TypeError, ValueError
        与 ``optim.gradient_descent``、``multi_head_attention`` 相同（例如 D 不能被 num_heads 整除、训练发散）；
        ``train_w_o`` 不是 bool 时 TypeError；``task`` 不是含 x (N, T, D)、y (N, T, 2m) 的字典。

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> task = two_relation_task(8, rng)
    >>> run = train_heads(task, init_head_weights(16, 2, rng), steps=20, checkpoint_every=10)
    >>> run["checkpoint_steps"].tolist(), run["weights"].shape
    ([0, 10, 20], (3, 8, 2, 6, 6))
    >>> bool(run["losses"][-1] < run["losses"][0])
    True
    """
    train_w_o = check.boolean(train_w_o, "train_w_o")
    x, y = _check_task(task)

    def loss_and_grads(p):
        loss, grads = _task_loss(p, x, y, num_heads)
        if not train_w_o:
            grads = {**grads, "w_o": np.zeros_like(grads["w_o"])}  # W_O 不动：w_o − lr·0 = w_o
        return loss, grads

    run = gradient_descent(params, loss_and_grads, lr, steps, checkpoint_every)
    maps = [multi_head_attention(x, *(p[n] for n in WEIGHT_NAMES), num_heads)[1] for p in run["checkpoints"]]
    return run.with_fields(weights=np.stack(maps))  # weights: (C, N, H, T, T)


def _check_params(params) -> None:
    if not isinstance(params, Mapping) or any(n not in params for n in WEIGHT_NAMES):
        got = sorted(map(str, params)) if isinstance(params, Mapping) else check.describe(params)
        raise TypeError(f"params 必须是含 {', '.join(WEIGHT_NAMES)} 的字典，收到的是 {got}。")


def head_pieces(params: dict[str, np.ndarray], x: np.ndarray, num_heads: int) -> np.ndarray:
    """每个头经 W_O 送出的那一份：piece_h = head_h W_O^(h)，全部加起来就是多头注意力的输出。

    W_O^(h) 是 W_O 里对应第 h 个头的那 d_k 行。W_O 是单位矩阵时，头 h 的那一份只落在输出的
    第 h·d_k 到 (h+1)·d_k − 1 维上。

    Parameters
    ----------
    params : dict
        含 ``w_q, w_k, w_v, w_o`` 的权重（每个 (D, D)）。
    x : ndarray of shape (..., T, D)
    num_heads : int

    Returns
    -------
    ndarray of shape (H, ..., T, D)

    Raises
    ------
    TypeError, ValueError
        ``params`` 不是含四个权重的字典；其余与 ``multi_head_attention`` 相同（例如 D 不能被 num_heads 整除）。

    Examples
    --------
    >>> x = np.arange(8.0).reshape(2, 4) / 8            # (T=2, D=4)
    >>> w = {n: np.eye(4) for n in WEIGHT_NAMES}
    >>> pieces = head_pieces(w, x, 2)                   # (H=2, T=2, D=4)
    >>> pieces.shape, bool(np.all(pieces[1][:, :2] == 0))    # 头 2 的那一份不碰前 2 维
    ((2, 2, 4), True)
    """
    _check_params(params)
    _, weights = multi_head_attention(x, *(params[n] for n in WEIGHT_NAMES), num_heads)  # (..., H, T, T)
    H = weights.shape[-3]
    v = split_heads(np.asarray(x, dtype=float) @ params["w_v"], H)  # (..., H, T, d_k)
    heads = weights @ v  # (..., H, T, d_k)
    w_o = np.asarray(params["w_o"], dtype=float)
    d_k = w_o.shape[0] // H
    return np.stack([heads[..., h, :, :] @ w_o[h * d_k:(h + 1) * d_k] for h in range(H)])  # (H, ..., T, D)


def relation_mass(weights: np.ndarray, prev: np.ndarray, partner: np.ndarray) -> np.ndarray:
    """每个头平均放在"前一个词"和"搭档词"上的注意力。

    只数"前一个词"和"搭档"不是同一个位置的那些行，免得一份注意力被两种关系同时认领。

    Parameters
    ----------
    weights : ndarray of shape (N, H, T, T)
    prev : ndarray of int, shape (T,)
    partner : ndarray of int, shape (N, T)

    Returns
    -------
    ndarray of shape (H, 2)
        第 h 行 = [头 h 放在前一个词上的平均权重, 放在搭档上的平均权重]。

    Raises
    ------
    TypeError, ValueError
        ``weights`` 不是 4 维实数数组，prev/partner 不是整数位置数组、越界或形状与它不符，或没有一个位置的
        partner 与 prev 不同。
    """
    weights = check.as_real_array(weights, "weights")
    check.check_shape(weights, "weights", (None, None, None, None), "（N 句 × H 个头 × T × T 的注意力权重）")
    N, H, T, S = weights.shape
    if S != T:
        raise ValueError(f"weights 必须是自注意力的权重 (N, H, T, T)：最后两维要相等，收到的 shape={weights.shape}。")
    prev = check.token_ids(prev, "prev", T, f"句子只有 T={T} 个位置")  # 位置编号：整数、在 [0, T) 里
    check.check_shape(prev, "prev", (T,))
    partner = check.token_ids(partner, "partner", T, f"句子只有 T={T} 个位置")
    check.check_shape(partner, "partner", (N, T))
    if not np.any(partner != prev):
        raise ValueError("每一行的搭档都恰好是前一个词：没有可以分清两种关系的位置，平均值会是 0/0。"
                         "提示：至少要有一个位置的 partner 与 prev 不同。")
    on_prev = weights[:, :, np.arange(T), prev]  # (N, H, T)
    on_partner = np.take_along_axis(weights, partner[:, None, :, None], axis=-1)[..., 0]  # (N, H, T)
    distinct = np.broadcast_to((partner != prev)[:, None, :], on_prev.shape)  # (N, H, T)
    mean = lambda a: np.where(distinct, a, 0).sum(axis=(0, 2)) / distinct[:, 0].sum()  # noqa: E731  (H,)
    return np.stack([mean(on_prev), mean(on_partner)], axis=-1)  # (H, 2)


def head_gap(params: dict[str, np.ndarray], num_heads: int) -> float:
    """各头的权重与第 1 个头相差多少：四个矩阵里对应元素之差的最大绝对值（全相同时恰为 0）。

    Raises
    ------
    TypeError, ValueError
        ``params`` 不是含四个权重的字典、权重不是实数矩阵、D 不能被 num_heads 整除。

    Examples
    --------
    >>> w = {n: np.eye(4) for n in WEIGHT_NAMES}       # 单位矩阵：头 1 和头 2 管的是不同的维
    >>> head_gap(w, 2)
    1.0
    """
    H = check.positive_int(num_heads, "num_heads")
    _check_params(params)
    gap = 0.0
    for name in WEIGHT_NAMES:
        w = check.as_real_array(params[name], name, min_ndim=2)
        if w.shape[0] % H != 0:
            raise ValueError(f"{name} 的形状 {w.shape} 不能平均分给 num_heads={H} 个头。")
        blocks = np.split(w.T if name == "w_o" else w, H, axis=1)  # H 个 (D, d_k)
        gap = max(gap, max(float(np.max(np.abs(b - blocks[0]))) for b in blocks))
    return gap
