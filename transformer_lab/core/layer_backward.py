"""一层之外的反向传播 (backward pass)：LayerNorm、前馈网络、词嵌入，以及交叉熵损失。

每个 ``*_backward`` 接收前向的输入和"损失对前向输出的梯度" ``grad_out``（与输出同形状），
返回损失对各个输入/参数的梯度（与它们同形状）。参数（γ、β、W、b）在所有位置共用，
所以它们的梯度要把所有前导维度 (...) 上的贡献加起来。

    LayerNorm:  x̂ = (x - μ)/σ,  dx = (1/σ) [ĝ - mean(ĝ) - x̂ ⊙ mean(ĝ ⊙ x̂)],  ĝ = grad_out ⊙ γ
    FFN:        z = x W_1 + b_1,  r = max(0, z),  dr = grad_out W_2ᵀ,  dz = dr ⊙ [z > 0],  dx = dz W_1ᵀ
    嵌入:       grad_table[i] = Σ_{位置 p: token_ids[p] = i} grad_out[p]
    交叉熵:     L = mean_p(-log softmax(logits_p)[target_p]),  dL/dlogits_p = (softmax(logits_p) - onehot_p) / N

本模块只依赖 NumPy。形状字母：D = d_model，d_ff 前馈隐藏宽度，V 词表大小，N 位置总数。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from .layer import _as_token_ids, _check_ffn, _check_vector, _normalize

__all__ = ["layer_norm_backward", "feed_forward_backward", "embedding_backward", "cross_entropy",
           "cross_entropy_backward"]


def _check_grad_out(grad_out, shape):
    grad_out = check.as_real_array(grad_out, "grad_out")
    check.check_shape(grad_out, "grad_out", shape, "（grad_out 是损失对前向输出的梯度，必须与前向输出同形状）")
    return grad_out


def _rows(a):
    return a.reshape(-1, a.shape[-1])  # (N, 最后一维)：把所有位置排成 N 行


def _sum_leading(a):
    return _rows(a).sum(axis=0)  # (最后一维,)  把所有前导维度加起来


def layer_norm_backward(
    x: np.ndarray, gamma: np.ndarray, grad_out: np.ndarray, eps: float = 1e-5
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``layer_norm`` 的反向传播。

    Parameters
    ----------
    x : ndarray of shape (..., D)
        前向的输入。
    gamma : ndarray of shape (D,)
    grad_out : ndarray of shape (..., D)
        损失对 ``layer_norm(x, gamma, beta, eps)`` 的梯度（β 不影响任何梯度，所以不用传）。
    eps : float, default 1e-5
        必须与前向用的相同。

    Returns
    -------
    grad_x : ndarray of shape (..., D)
    grad_gamma, grad_beta : ndarray of shape (D,)
        在所有前导维度上求和。

    Raises
    ------
    TypeError
        输入不是实数数组，或 ``eps`` 不是实数。
    ValueError
        ``gamma`` 长度不是 D、``grad_out`` 形状与 ``x`` 不同、数组为空或含 NaN/inf、``eps`` 不是正数。

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([1.0, 2.0, 3.0])
    >>> grad_x, grad_gamma, grad_beta = layer_norm_backward(x, np.ones(3), np.ones(3))
    >>> np.allclose(grad_x, 0)        # 所有输出一起加 1：LayerNorm 先减均值，整体平移对它没影响
    True
    >>> grad_gamma.round(4), grad_beta    # grad_γ = grad_out ⊙ x̂，grad_β = grad_out
    (array([-1.2247,  0.    ,  1.2247]), array([1., 1., 1.]))
    """
    x = check.as_real_array(x, "x", min_ndim=1)
    gamma = _check_vector(gamma, "gamma", x.shape[-1])
    grad_out = _check_grad_out(grad_out, x.shape)
    eps = check.positive_real(eps, "eps")
    x_hat, inv_std = _normalize(x, eps)  # (..., D), (..., 1)
    return _layer_norm_grads(x_hat, inv_std, gamma, grad_out)


def _layer_norm_grads(x_hat, inv_std, gamma, grad_out):
    """LayerNorm 反向的计算本身（不做检查）；``x_hat, inv_std`` 是前向 ``_normalize`` 的结果。"""
    g_hat = grad_out * gamma  # (..., D)  损失对 x̂ 的梯度
    mean_g = g_hat.mean(axis=-1, keepdims=True)  # (..., 1)
    mean_gx = (g_hat * x_hat).mean(axis=-1, keepdims=True)  # (..., 1)
    grad_x = inv_std * (g_hat - mean_g - x_hat * mean_gx)  # (..., D)
    return grad_x, _sum_leading(grad_out * x_hat), _sum_leading(grad_out)  # (..., D), (D,), (D,)


def feed_forward_backward(
    x: np.ndarray, w_1: np.ndarray, b_1: np.ndarray, w_2: np.ndarray, b_2: np.ndarray, grad_out: np.ndarray
) -> dict[str, np.ndarray]:
    """``feed_forward`` 的反向传播（ReLU 在 z = 0 处取导数 0）。

    Parameters
    ----------
    x, w_1, b_1, w_2, b_2 :
        与 ``feed_forward`` 相同：(..., D), (D, d_ff), (d_ff,), (d_ff, D), (D,)。
    grad_out : ndarray of shape (..., D)
        损失对前馈网络输出的梯度。

    Returns
    -------
    dict[str, ndarray]
        键 ``x, w_1, b_1, w_2, b_2``，每个梯度与同名输入同形状（参数的梯度已在前导维度上求和）。

    Raises
    ------
    TypeError
        输入不是实数数组。
    ValueError
        形状对不上（含 ``grad_out`` 与 ``x`` 形状不同）、数组为空或含 NaN/inf。

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1.0, -2.0]])                    # z = x W_1 = [1, -2]，ReLU 只让第 0 个隐藏单元通过
    >>> w_2 = np.array([[2.0, 0.0], [3.0, 1.0]])
    >>> g = feed_forward_backward(x, np.eye(2), np.zeros(2), w_2, np.zeros(2), np.array([[1.0, 0.0]]))
    >>> g["x"]                                         # dr = [1, 0] W_2ᵀ = [2, 3]；ReLU 挡住第 1 个 → [2, 0]
    array([[2., 0.]])
    >>> g["w_2"]                                       # rᵀ grad_out，r = [1, 0]
    array([[1., 0.],
           [0., 0.]])
    """
    x, w_1, b_1, w_2, b_2 = _check_ffn(x, w_1, b_1, w_2, b_2)
    grad_out = _check_grad_out(grad_out, x.shape)
    z = x @ w_1 + b_1  # (..., d_ff)
    return _feed_forward_grads(x, z, w_1, w_2, grad_out)


def _feed_forward_grads(x, z, w_1, w_2, grad_out):
    """前馈网络反向的计算本身（不做检查）；``z = x W_1 + b_1`` 是前向 ReLU 之前的值。"""
    r = np.maximum(z, 0)  # (..., d_ff)
    dz = np.where(z > 0, grad_out @ w_2.T, 0)  # (..., d_ff)
    return {
        "x": dz @ w_1.T,  # (..., D)
        "w_1": _rows(x).T @ _rows(dz),  # (D, d_ff)
        "b_1": _sum_leading(dz),  # (d_ff,)
        "w_2": _rows(r).T @ _rows(grad_out),  # (d_ff, D)
        "b_2": _sum_leading(grad_out),  # (D,)
    }


def embedding_backward(token_ids: np.ndarray, grad_out: np.ndarray, vocab_size: int) -> np.ndarray:
    """``embed`` 的反向传播：把每个位置的梯度加回它取的那一行；同一个词出现几次就加几次。

    Parameters
    ----------
    token_ids : ndarray of int, shape (...)
        前向用的编号，每个值在 [0, vocab_size) 之内。
    grad_out : ndarray of shape (..., D)
        损失对 ``embed(token_ids, table)`` 的梯度。
    vocab_size : int
        V，嵌入表的行数。

    Returns
    -------
    ndarray of shape (V, D)
        损失对嵌入表的梯度；没出现过的词那一行是 0。

    Raises
    ------
    TypeError
        ``token_ids`` 不是整数数组、``grad_out`` 不是实数数组、``vocab_size`` 不是整数。
    ValueError
        编号越界、``grad_out`` 形状不是 ``token_ids.shape + (D,)``、数组为空或含 NaN/inf。

    Examples
    --------
    >>> import numpy as np
    >>> embedding_backward(np.array([1, 1, 2]), np.ones((3, 2)), vocab_size=4)   # 词 1 出现两次
    array([[0., 0.],
           [2., 2.],
           [1., 1.],
           [0., 0.]])
    """
    vocab_size = check.positive_int(vocab_size, "vocab_size")
    token_ids = _as_token_ids(token_ids, "token_ids", vocab_size)
    grad_out = check.as_real_array(grad_out, "grad_out", min_ndim=1)
    _check_grad_out(grad_out, token_ids.shape + (grad_out.shape[-1],))
    grad_table = np.zeros((vocab_size, grad_out.shape[-1]), dtype=grad_out.dtype)  # (V, D)
    np.add.at(grad_table, token_ids, grad_out)  # 不用 grad_table[ids] += ...：那样重复的编号只算一次
    return grad_table  # (V, D)


def _check_ce(logits, targets):
    logits = check.as_real_array(logits, "logits", min_ndim=1)
    targets = _as_token_ids(targets, "targets", logits.shape[-1])
    if targets.shape != logits.shape[:-1]:
        raise ValueError(f"targets 的形状必须等于 logits 去掉最后一维 (V) 的形状：期望 {logits.shape[:-1]}，"
                         f"收到的是 {targets.shape}（logits.shape={logits.shape}）。")
    return logits, targets


def _log_softmax(logits):
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
    log_p = _log_softmax(logits)  # (..., V)
    picked = np.take_along_axis(log_p, targets[..., None], axis=-1)  # (..., 1)
    loss = -(picked / picked.size).sum() + 0.0  # ()；先除以 N 再求和：每项都很大时和也不会溢出；+ 0.0 把 -0.0 变成 0.0
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
    p = np.exp(_log_softmax(logits))  # (..., V)
    onehot = np.arange(logits.shape[-1]) == targets[..., None]  # (..., V)
    return (p - onehot) / targets.size  # (..., V)
