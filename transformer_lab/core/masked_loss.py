"""带损失掩码的交叉熵 (masked cross-entropy)：只在掩码为 True 的位置算损失，对这些位置取平均。

    L = (1/M) Σ_{p: mask_p} -log softmax(logits_p)[target_p],   M = mask 里 True 的个数
    dL/dlogits_p = mask_p · (softmax(logits_p) - onehot_p) / M

指令微调 (instruction tuning) 用它：一段"问：……答：……"里，模型只为"答"后面的字挨罚，问题本身不算分。
掩码全是 True 时，它就是 ``core.loss.cross_entropy``。本模块只依赖 NumPy。形状字母：T 位置，V 词表大小。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from .loss import log_softmax_unchecked

__all__ = ["masked_cross_entropy", "masked_cross_entropy_backward"]


def _check_masked(logits, targets, loss_mask):
    logits = check.as_real_array(logits, "logits", min_ndim=2)
    targets = check.token_ids(targets, "targets", logits.shape[-1])
    if targets.shape != logits.shape[:-1]:
        raise ValueError(f"targets 的形状必须等于 logits 去掉最后一维 (V) 的形状：期望 {logits.shape[:-1]}，"
                         f"收到的是 {targets.shape}（logits.shape={logits.shape}）。")
    if not isinstance(loss_mask, np.ndarray):
        raise TypeError(f"loss_mask 必须是 bool 类型的 NumPy 数组，收到的是 {check.describe(loss_mask)}。")
    loss_mask = check.plain_array(loss_mask, "loss_mask")
    if loss_mask.dtype != np.bool_:
        raise TypeError(f"loss_mask 的 dtype 必须是 bool（True = 这个位置算损失），收到的是 dtype={loss_mask.dtype}。"
                        "提示：用比较运算得到 bool 数组，例如 positions >= answer_start。")
    if loss_mask.shape != targets.shape:
        raise ValueError(f"loss_mask 的形状必须与 targets 相同：期望 {targets.shape}，收到的是 {loss_mask.shape}。")
    if not loss_mask.any():
        raise ValueError(f"loss_mask 全是 False（shape={loss_mask.shape}）：没有一个位置算损失，平均值是 0/0。"
                         "提示：至少标出一个答案位置；这一段若没有答案，就别把它放进这一批。")
    return logits, targets, loss_mask


def masked_cross_entropy(logits: np.ndarray, targets: np.ndarray, loss_mask: np.ndarray) -> float:
    """带损失掩码的交叉熵：只对 ``loss_mask`` 为 True 的位置取 -log 概率的平均。

    Parameters
    ----------
    logits : ndarray of shape (..., T, V)
        每个位置对 V 个字的打分（还没过 softmax）。
    targets : ndarray of int, shape (..., T)
        每个位置正确的下一个字。
    loss_mask : ndarray of bool, shape (..., T)
        True = 这个位置算损失（例如答案里的字），False = 不算（问题里的字、补齐的空位）。

    Returns
    -------
    float
        M 个算分位置上 -log 概率的平均。

    Raises
    ------
    TypeError
        ``logits`` 不是实数数组、``targets`` 不是整数数组、``loss_mask`` 不是 bool 数组。
    ValueError
        少于 2 维、``targets`` 越界或形状不对、``loss_mask`` 形状不对或全是 False（平均值会是 0/0）。

    Examples
    --------
    三个位置，只有后两个算分：第 0 个位置打分再离谱也不影响损失。

    >>> import numpy as np
    >>> logits = np.array([[9.0, 0.0], [0.0, 0.0], [0.0, np.log(3)]])   # 后两行：p = [1/2, 1/2] 和 [1/4, 3/4]
    >>> targets, mask = np.array([1, 0, 1]), np.array([False, True, True])
    >>> round(masked_cross_entropy(logits, targets, mask), 4), round(float((np.log(2) - np.log(3 / 4)) / 2), 4)
    (0.4904, 0.4904)
    """
    logits, targets, loss_mask = _check_masked(logits, targets, loss_mask)
    log_p = log_softmax_unchecked(logits)  # (..., T, V)
    picked = np.take_along_axis(log_p, targets[..., None], axis=-1)[..., 0]  # (..., T)
    loss = -float(np.where(loss_mask, picked, 0.0).sum()) / int(loss_mask.sum())
    return float(check.finite_result(np.float64(loss), "带掩码的交叉熵", "正确答案的打分低得无法表示。")) + 0.0


def masked_cross_entropy_backward(logits: np.ndarray, targets: np.ndarray, loss_mask: np.ndarray) -> np.ndarray:
    """``masked_cross_entropy`` 对 ``logits`` 的梯度：算分的位置是 (softmax − onehot) / M，其余位置是 0。

    Parameters
    ----------
    logits : ndarray of shape (..., T, V)
    targets : ndarray of int, shape (..., T)
    loss_mask : ndarray of bool, shape (..., T)

    Returns
    -------
    ndarray of shape (..., T, V)
        掩掉的位置整行是 0：问题里的字不产生任何梯度。

    Raises
    ------
    TypeError, ValueError
        与 ``masked_cross_entropy`` 相同。

    Examples
    --------
    >>> import numpy as np
    >>> g = masked_cross_entropy_backward(np.zeros((2, 2)), np.array([0, 1]), np.array([False, True]))
    >>> g.tolist()                     # 第 0 行掩掉；第 1 行 ([1/2, 1/2] - [0, 1]) / 1
    [[0.0, 0.0], [0.5, -0.5]]
    """
    logits, targets, loss_mask = _check_masked(logits, targets, loss_mask)
    p = np.exp(log_softmax_unchecked(logits))  # (..., T, V)
    onehot = np.arange(logits.shape[-1]) == targets[..., None]  # (..., T, V)
    return np.where(loss_mask[..., None], p - onehot, 0.0) / int(loss_mask.sum())  # (..., T, V)
