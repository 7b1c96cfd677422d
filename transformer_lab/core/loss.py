"""交叉熵损失 (cross-entropy loss)：前向与对 logits 的梯度。

    L = mean_p(-log softmax(logits_p)[target_p]),   dL/dlogits_p = (softmax(logits_p) - onehot_p) / N

用 log-softmax 直接算，不会溢出。本模块只依赖 NumPy。形状字母：V 词表大小，N 位置总数。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check

__all__ = ["cross_entropy", "cross_entropy_backward", "log_softmax_unchecked"]


def _check_ce(logits, targets):
    logits = check.as_real_array(logits, "logits", min_ndim=1)
    targets = check.token_ids(targets, "targets", logits.shape[-1])
    if targets.shape != logits.shape[:-1]:
        raise ValueError(f"targets 的形状必须等于 logits 去掉最后一维 (V) 的形状：期望 {logits.shape[:-1]}，"
                         f"收到的是 {targets.shape}（logits.shape={logits.shape}）。")
    return logits, targets


def log_softmax_unchecked(logits: np.ndarray) -> np.ndarray:
    """log softmax 的计算核（不做检查）：减去最大值再取 log-sum-exp，不会溢出。"""
    with np.errstate(over="ignore"):  # 相差超过 ~1.8e308 的打分：差值溢出成 -inf，概率 e^-inf = 0 正是对的
        shifted = logits - logits.max(axis=-1, keepdims=True)  # (..., V)  减最大值：e^x 不会溢出
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))  # (..., V)


def cross_entropy(logits: np.ndarray, targets: np.ndarray) -> np.floating:
    """交叉熵损失 (cross-entropy loss)：正确答案的 -log 概率，对所有位置取平均。

    L = (1/N) Σ_p -log softmax(logits_p)[targets_p]，N = targets.size。用 log-softmax 直接算，不会溢出。

    Parameters
    ----------
    logits : ndarray of shape (..., V)
        每个位置对 V 个词的打分（还没过 softmax）。
    targets : ndarray of int, shape (...)
        每个位置正确的词编号，在 [0, V) 之内。

    Returns
    -------
    NumPy 标量，与 ``logits`` 同 dtype。

    Raises
    ------
    TypeError
        ``logits`` 不是实数数组，或 ``targets`` 不是整数数组。
    ValueError
        ``targets`` 越界或形状不是 ``logits.shape[:-1]``、数组为空或含 NaN/inf。

    Examples
    --------
    >>> import numpy as np
    >>> float(cross_entropy(np.zeros((2, 4)), np.array([0, 3])).round(4))   # 均匀打分：log 4 ≈ 1.3863
    1.3863
    >>> float(cross_entropy(np.array([0.0, np.log(3)]), np.array(1)).round(4))  # p = [1/4, 3/4]：-log(3/4)
    0.2877
    """
    logits, targets = _check_ce(logits, targets)
    log_p = log_softmax_unchecked(logits)  # (..., V)
    picked = np.take_along_axis(log_p, targets[..., None], axis=-1)  # (..., 1)
    # ()；先按绝对值最大的一项缩放、求平均，再乘回去：每一项都接近 1.8e308 时，直接求和会溢出，先各除以 N 再求和
    # 也会因舍入超出上限一点点（三项各 -6e307）。缩放后每项都在 [-1, 0]，平均值乘回去不会比最大的一项更大。
    # 全是 0（不用缩放）或有 -inf（log-softmax 已经溢出，下面 finite_result 报错）时不缩放。
    scale = np.abs(picked).max()
    scale = scale if 0 < scale < np.inf else picked.dtype.type(1)
    loss = -(picked / scale).mean() * scale + 0.0  # + 0.0 把 -0.0 变成 0.0
    return check.finite_result(loss, "交叉熵损失", "正确答案的打分比最高分低了超过 1.8e308，-log 概率无法表示。")


def cross_entropy_backward(logits: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """``cross_entropy`` 对 ``logits`` 的梯度：(softmax(logits) - onehot(targets)) / N。

    Parameters
    ----------
    logits : ndarray of shape (..., V)
    targets : ndarray of int, shape (...)

    Returns
    -------
    ndarray of shape (..., V)
        每一行的和都是 0：把正确答案的分数往上推多少，其余分数就一共往下压多少。

    Raises
    ------
    TypeError, ValueError
        与 ``cross_entropy`` 相同。

    Examples
    --------
    >>> import numpy as np
    >>> cross_entropy_backward(np.array([0.0, np.log(3)]), np.array(1)).round(4)   # [1/4, 3/4] - [0, 1]
    array([ 0.25, -0.25])
    """
    logits, targets = _check_ce(logits, targets)
    p = np.exp(log_softmax_unchecked(logits))  # (..., V)
    onehot = np.arange(logits.shape[-1]) == targets[..., None]  # (..., V)
    return (p - onehot) / targets.size  # (..., V)
