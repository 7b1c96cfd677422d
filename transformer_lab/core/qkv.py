"""Q、K、V 从哪里来：同一个词向量，戴上三副"眼镜"（三个投影矩阵）变成三个分身。

    Q = X W_Q,   K = X W_K,   V = X W_V

X 的每一行是一个词的向量 (T, D)；W_Q、W_K 的形状是 (D, d_k)，W_V 是 (D, d_v)。
三个矩阵是模型训练时学出来的参数，不是词自带的属性。
本模块只依赖 NumPy。约定行向量：每个词是一行，``x @ w``。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check

__all__ = ["qkv_projections", "init_qkv_weights"]


def _check_weight(w: object, name: str, D: int) -> np.ndarray:
    """投影矩阵必须是 (D, 输出维数) 的二维实数数组，且行数等于 x 的最后一维 D。"""
    w = check.as_real_array(w, name)
    if w.ndim != 2 or w.shape[0] != D:
        raise ValueError(
            f"{name} 的形状应为 (D, 输出维数) = ({D}, 任意)，收到的是 {w.shape}。"
            f"提示：行数要等于 x 的最后一维 D={D}，才能做 x @ {name}。"
        )
    return w


def qkv_projections(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """把词向量投影成查询 (query)、键 (key)、值 (value)：q = x W_Q，k = x W_K，v = x W_V。

    Parameters
    ----------
    x : ndarray of shape (..., T, D)
        每行一个词的向量，D = d_model。
    w_q : ndarray of shape (D, d_k)
        "提问眼镜"：把词变成查询。
    w_k : ndarray of shape (D, d_k)
        "被问眼镜"：把词变成键；列数必须和 ``w_q`` 相同，q 和 k 才能做点积。
    w_v : ndarray of shape (D, d_v)
        "内容眼镜"：把词变成值；d_v 可以和 d_k 不同。

    Returns
    -------
    q : ndarray of shape (..., T, d_k)
    k : ndarray of shape (..., T, d_k)
    v : ndarray of shape (..., T, d_v)

    Raises
    ------
    TypeError
        输入不是实数 NumPy 数组。
    ValueError
        ``x`` 少于 2 维、为空或含 NaN/inf；某个矩阵不是二维、行数不等于 D；
        ``w_q`` 与 ``w_k`` 的列数 (d_k) 不同；输入有限但投影结果溢出（超出浮点数范围）。

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[2.0, 0.0, 1.0]])                      # (T=1, D=3)
    >>> w_q = np.array([[0.0, 1.0], [0.0, 0.0], [1.0, 0.0]])  # (D=3, d_k=2)
    >>> q, k, v = qkv_projections(x, w_q, np.eye(3)[:, :2], np.ones((3, 1)))
    >>> q, k, v
    (array([[1., 2.]]), array([[2., 0.]]), array([[3.]]))
    """
    x = check.as_real_array(x, "x", min_ndim=2)
    D = x.shape[-1]
    w_q, w_k, w_v = (_check_weight(w, n, D) for w, n in ((w_q, "w_q"), (w_k, "w_k"), (w_v, "w_v")))
    if w_q.shape[1] != w_k.shape[1]:
        raise ValueError(
            f"w_q 与 w_k 的列数 (d_k) 必须相等，q 和 k 才能做点积：w_q.shape={w_q.shape}, w_k.shape={w_k.shape}。"
            "（w_v 的列数 d_v 可以不同。）"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        out = x @ w_q, x @ w_k, x @ w_v  # (..., T, d_k), (..., T, d_k), (..., T, d_v)
    for name, y in zip(("x @ w_q", "x @ w_k", "x @ w_v"), out):
        check.finite_result(y, name, check.OVERFLOW_HINT)
    return out


def init_qkv_weights(
    d_model: int, d_k: int, rng: np.random.Generator, d_v: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """像训练开始时那样随机初始化三副"眼镜"：每个元素服从均值 0、方差 1/d_model 的正态分布。

    方差取 1/d_model，是为了让 x 的分量方差为 1 时，投影出来的 q、k、v 分量方差也约为 1。

    Parameters
    ----------
    d_model : int
        词向量长度 D。
    d_k : int
        查询和键的长度。
    rng : np.random.Generator
    d_v : int, optional
        值的长度，默认等于 ``d_k``。

    Returns
    -------
    w_q : ndarray of shape (d_model, d_k)
    w_k : ndarray of shape (d_model, d_k)
    w_v : ndarray of shape (d_model, d_v)

    Raises
    ------
    TypeError
        维数不是整数，或 ``rng`` 不是 ``np.random.Generator``。
    ValueError
        维数不是正数，或权重矩阵超过 1e8 个元素（内存）。

    Examples
    --------
    >>> import numpy as np
    >>> w_q, w_k, w_v = init_qkv_weights(512, 64, np.random.default_rng(0))
    >>> w_q.shape, w_v.shape
    ((512, 64), (512, 64))
    """
    d_model = check.positive_int(d_model, "d_model")
    d_k = check.positive_int(d_k, "d_k")
    d_v = d_k if d_v is None else check.positive_int(d_v, "d_v")
    check.at_most(d_model * max(d_k, d_v), "d_model × max(d_k, d_v)", check.MAX_ELEMENTS, "每个权重矩阵有这么多个元素")
    rng = check.generator(rng)
    std = 1.0 / np.sqrt(d_model)
    w_q = rng.normal(0.0, std, size=(d_model, d_k))  # (D, d_k)
    w_k = rng.normal(0.0, std, size=(d_model, d_k))  # (D, d_k)
    w_v = rng.normal(0.0, std, size=(d_model, d_v))  # (D, d_v)
    return w_q, w_k, w_v
