"""DPO（直接偏好优化，direct preference optimization，Rafailov et al. 2023）的损失和它的梯度。

同一个问题 x 有两份回答：人更喜欢的 y_w（chosen）和不喜欢的 y_l（rejected）。π 是正在训练的模型，π_ref 是
出发时的模型（冻住）。每一对的"偏好差" (margin)::

    z = β · [(log π(y_w) − log π_ref(y_w)) − (log π(y_l) − log π_ref(y_l))]
    L = mean_i −log σ(z_i)                   σ 是 sigmoid：z 越大，损失越小
    ∂L/∂log π(y_w) = −β·σ(−z) / N,   ∂L/∂log π(y_l) = +β·σ(−z) / N

也就是：把喜欢的回答的概率往上推、不喜欢的往下压，推多少以"比出发时变了多少"计；已经分得很开的对 (σ(−z) ≈ 0)
几乎不再推。β 越大，同样的概率变化算作越大的 z。模型只看到"哪份更受喜欢"，看不到哪份是对的。
本模块只依赖 NumPy。形状字母：N 偏好对的个数。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check

__all__ = ["dpo_loss"]


def _log_sigmoid(z: np.ndarray) -> np.ndarray:
    """log σ(z) = −log(1 + e^{−z})，两边都不溢出。"""
    return -np.logaddexp(0.0, -z)


def dpo_loss(policy_chosen_logp: np.ndarray, policy_rejected_logp: np.ndarray, ref_chosen_logp: np.ndarray,
             ref_rejected_logp: np.ndarray, beta: float) -> tuple[float, np.ndarray, np.ndarray]:
    """DPO 损失（对 N 对取平均），以及它对两个策略对数概率的梯度。

    Parameters
    ----------
    policy_chosen_logp, policy_rejected_logp : ndarray of shape (N,)
        正在训练的模型给喜欢 / 不喜欢的回答的对数概率（整段回答每个字的 log 概率之和）。
    ref_chosen_logp, ref_rejected_logp : ndarray of shape (N,)
        参照模型（出发时的模型，冻住）给同样两份回答的对数概率。
    beta : float
        β > 0：偏好差的缩放，也是"别离参照模型太远"的力度。

    Returns
    -------
    (loss, grad_chosen, grad_rejected)
        ``loss`` 是 float；两个梯度都是 (N,)：∂L/∂policy_chosen_logp 与 ∂L/∂policy_rejected_logp。

    Raises
    ------
    TypeError
        某个输入不是实数数组，或 ``beta`` 不是实数。
    ValueError
        四个数组不是同样长的一维数组、含 NaN/inf，或 ``beta`` 不是正数。

    Examples
    --------
    起点：策略就是参照模型，z = 0，损失 = log 2，梯度 = ∓β·σ(0)/N = ∓β/2/N。

    >>> import numpy as np
    >>> same = np.array([-3.0, -5.0])
    >>> loss, g_w, g_l = dpo_loss(same, same, same, same, beta=0.5)
    >>> round(loss, 4), round(float(np.log(2)), 4), g_w.tolist(), g_l.tolist()
    (0.6931, 0.6931, [-0.125, -0.125], [0.125, 0.125])
    """
    names = ("policy_chosen_logp", "policy_rejected_logp", "ref_chosen_logp", "ref_rejected_logp")
    arrays = [check.as_real_array(v, n, min_ndim=1) for v, n in
              zip((policy_chosen_logp, policy_rejected_logp, ref_chosen_logp, ref_rejected_logp), names)]
    if any(a.ndim != 1 or a.shape != arrays[0].shape for a in arrays):
        got = ", ".join(f"{n}.shape={a.shape}" for n, a in zip(names, arrays))
        raise ValueError(f"四个对数概率必须是同样长的一维数组 (N,)（每对一个数）：收到 {got}。")
    beta = check.positive_real(beta, "beta")
    pw, pl, rw, rl = arrays
    z = beta * ((pw - rw) - (pl - rl))  # (N,) 每一对的偏好差
    n = z.size
    loss = -float(_log_sigmoid(z).mean())
    push = beta * np.exp(_log_sigmoid(-z)) / n  # (N,) β·σ(−z)/N：分得越开，推得越轻
    return loss + 0.0, -push, push
