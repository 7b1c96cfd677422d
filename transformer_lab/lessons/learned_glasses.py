"""眼镜是练出来的：从随机的 W_Q、W_K 出发，用梯度下降学出第 3 章"小猫 / 吃 / 鱼"的注意力。

目标是第 3 章那副**设计的**眼镜给出的注意力权重 P*（每行一个概率分布）。损失是交叉熵
L = −(1/T) Σ_i Σ_j P*_ij log P_ij，其中 P = softmax(X W_Q (X W_K)ᵀ / √d_k)。
它对分数 S 的梯度特别简单：∂L/∂S = (P − P*) / T。再按链式法则：
∂L/∂W_Q = Xᵀ (∂L/∂S · K) / √d_k，∂L/∂W_K = Xᵀ (∂L/∂Sᵀ · Q) / √d_k。
训练循环是 ``optim.gradient_descent``（全书只有一个训练循环，第 5 章也用它）。本模块只依赖 NumPy 和 ``core``。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from ..core.softmax import softmax
from .optim import gradient_descent

__all__ = ["chapter3_example", "learn_query_key"]


def chapter3_example() -> dict:
    """第 3 章"小猫 / 吃 / 鱼"的例子（全部是为讲解**设计**的数字，与第 3 章 notebook 相同）。

    Returns
    -------
    dict
        ``tokens``；``x`` (T=3, D=3)，每行 [像动物, 像食物, 像动作]；设计的 ``w_q``、``w_k`` (D=3, d_k=2)；
        ``target`` (3, 3)：这副设计的眼镜给出的注意力权重。

    Examples
    --------
    >>> ex = chapter3_example()
    >>> ex["tokens"], ex["target"].argmax(axis=1).tolist()      # 吃 → 小猫，小猫 → 鱼
    (['小猫', '吃', '鱼'], [2, 0, 2])
    """
    x = np.array([[2.0, 0.0, 1.0], [0.0, 1.0, 2.0], [1.0, 2.0, 0.0]])  # (T, D)
    w_q = np.array([[0.0, 1.0], [0.0, 0.0], [1.0, 0.0]])  # (D, d_k)
    w_k = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])  # (D, d_k)
    return {"tokens": ["小猫", "吃", "鱼"], "x": x, "w_q": w_q, "w_k": w_k, "target": _weights(x, w_q, w_k)[0]}


def _weights(x, w_q, w_k):
    q, k = x @ w_q, x @ w_k  # (T, d_k)
    return softmax(q @ k.T / np.sqrt(w_q.shape[1]), axis=-1), q, k  # (T, T)


def _loss_and_grads(params, x, target):
    with np.errstate(over="ignore", invalid="ignore"):  # 发散时数会变成 inf/NaN，由训练循环报中文错误
        q, k = x @ params["w_q"], x @ params["w_k"]  # (T, d_k)
        T, scale = x.shape[0], 1.0 / np.sqrt(params["w_q"].shape[1])
        s = q @ k.T * scale  # (T, T)
        s = s - s.max(axis=-1, keepdims=True)
        log_p = s - np.log(np.exp(s).sum(axis=-1, keepdims=True))  # (T, T) log softmax，不会 log 0
        p = np.exp(log_p)
    loss = -float(np.sum(target * log_p)) / T
    grad_s = (p - target) / T  # (T, T) 交叉熵 + softmax 的梯度
    return loss, {"w_q": x.T @ (grad_s @ k) * scale, "w_k": x.T @ (grad_s.T @ q) * scale}  # (D, d_k)


def learn_query_key(x: np.ndarray, target: np.ndarray, rng: np.random.Generator, d_k: int = 2, lr: float = 0.2,
                    steps: int = 150, checkpoint_every: int = 10, scale: float = 0.1) -> dict:
    """从小的随机初始权重学 W_Q、W_K，使注意力权重接近 ``target``。

    Parameters
    ----------
    x : ndarray of shape (T, D)
        词向量。
    target : ndarray of shape (T, T)
        目标注意力权重：每行非负、和为 1，且都 > 0（否则交叉熵无穷大）。
    rng : np.random.Generator
        初始权重 ~ N(0, scale²)。
    d_k, lr, steps, checkpoint_every, scale
        查询/键的长度；学习率；步数；每隔几步存一份；初始权重的大小。

    Returns
    -------
    Run
        ``losses`` (steps + 1,)，``checkpoint_steps`` (C,)，``checkpoints``（每份 {"w_q", "w_k"}），
        ``weights`` (C, T, T) 每个检查点的注意力权重（只读）。

    Raises
    ------
    TypeError, ValueError
        x 不是 2 维实数数组；target 形状不是 (T, T)、有 ≤ 0 的元素或行和不为 1；lr、steps 等不合法；训练发散。

    Examples
    --------
    两个词，目标是"都看第 2 个词"（0.9）：

    >>> x = np.eye(2)
    >>> target = np.array([[0.1, 0.9], [0.1, 0.9]])
    >>> run = learn_query_key(x, target, np.random.default_rng(0), steps=200)
    >>> bool(run["losses"][-1] < run["losses"][0]), run["weights"][-1].argmax(axis=1).tolist()
    (True, [1, 1])
    """
    x = check.as_real_array(x, "x", min_ndim=2)
    if x.ndim != 2:
        raise ValueError(f"x 必须是 2 维 (T, D)，收到的 shape={x.shape}。")
    target = check.as_real_array(target, "target", min_ndim=2)
    check.check_shape(target, "target", (x.shape[0], x.shape[0]), "（目标注意力权重是 T × T 的表）")
    if np.any(target <= 0) or not np.allclose(target.sum(axis=-1), 1.0):
        raise ValueError("target 的每个元素必须 > 0、每行和为 1（它是一张注意力权重表）。"
                         f"收到的最小值 {target.min()}，行和 {target.sum(axis=-1)}。")
    rng, d_k = check.generator(rng), check.positive_int(d_k, "d_k")
    scale = check.positive_real(scale, "scale")
    start = {"w_q": scale * rng.normal(size=(x.shape[1], d_k)), "w_k": scale * rng.normal(size=(x.shape[1], d_k))}
    run = gradient_descent(start, lambda p: _loss_and_grads(p, x, target), lr, steps, checkpoint_every)
    maps = np.stack([_weights(x, p["w_q"], p["w_k"])[0] for p in run["checkpoints"]])  # (C, T, T)
    return run.with_fields(weights=maps)
