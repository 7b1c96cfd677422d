"""Q、K、V 从哪里来：同一个词向量，戴上三副"眼镜"（三个投影矩阵）变成三个分身。

    Q = X W_Q,   K = X W_K,   V = X W_V

X 的每一行是一个词的向量 (T, D)；W_Q、W_K 的形状是 (D, d_k)，W_V 是 (D, d_v)。
三个矩阵是模型训练时学出来的参数，不是词自带的属性。
本模块还有第 3 章几个小实验要用的工具：二维向量、只改一个键的长度、线性读出、V = K 的对照实验。
本模块只依赖 NumPy。约定行向量：每个词是一行，``x @ w``。
"""

from __future__ import annotations

import numbers

import numpy as np

from . import _validation as val
from .attention import _softmax

__all__ = [
    "qkv_projections",
    "init_qkv_weights",
    "vector_2d",
    "with_key_length",
    "linear_readout",
    "library_weights",
    "library_experiment",
]


def _check_weight(w: object, name: str, D: int) -> np.ndarray:
    """投影矩阵必须是 (D, 输出维数) 的二维实数数组，且行数等于 x 的最后一维 D。"""
    w = val.as_real_array(w, name)
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
        ``w_q`` 与 ``w_k`` 的列数 (d_k) 不同。

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[2.0, 0.0, 1.0]])                      # (T=1, D=3)
    >>> w_q = np.array([[0.0, 1.0], [0.0, 0.0], [1.0, 0.0]])  # (D=3, d_k=2)
    >>> q, k, v = qkv_projections(x, w_q, np.eye(3)[:, :2], np.ones((3, 1)))
    >>> q, k, v
    (array([[1., 2.]]), array([[2., 0.]]), array([[3.]]))
    """
    x = val.as_real_array(x, "x", min_ndim=2)
    D = x.shape[-1]
    w_q, w_k, w_v = (_check_weight(w, n, D) for w, n in ((w_q, "w_q"), (w_k, "w_k"), (w_v, "w_v")))
    if w_q.shape[1] != w_k.shape[1]:
        raise ValueError(
            f"w_q 与 w_k 的列数 (d_k) 必须相等，q 和 k 才能做点积：w_q.shape={w_q.shape}, w_k.shape={w_k.shape}。"
            "（w_v 的列数 d_v 可以不同。）"
        )
    return x @ w_q, x @ w_k, x @ w_v  # (..., T, d_k), (..., T, d_k), (..., T, d_v)


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
        维数不是正数。

    Examples
    --------
    >>> import numpy as np
    >>> w_q, w_k, w_v = init_qkv_weights(512, 64, np.random.default_rng(0))
    >>> w_q.shape, w_v.shape
    ((512, 64), (512, 64))
    """
    d_model = val.positive_int(d_model, "d_model")
    d_k = val.positive_int(d_k, "d_k")
    d_v = d_k if d_v is None else val.positive_int(d_v, "d_v")
    rng = val.generator(rng)
    std = 1.0 / np.sqrt(d_model)
    w_q = rng.normal(0.0, std, size=(d_model, d_k))  # (D, d_k)
    w_k = rng.normal(0.0, std, size=(d_model, d_k))  # (D, d_k)
    w_v = rng.normal(0.0, std, size=(d_model, d_v))  # (D, d_v)
    return w_q, w_k, w_v


def vector_2d(length: float, angle_deg: float) -> np.ndarray:
    """平面上长度为 ``length``、与 x 轴正方向夹角为 ``angle_deg`` 度的向量。

    Parameters
    ----------
    length : float
        长度，>= 0。
    angle_deg : float
        角度（度），逆时针为正。

    Returns
    -------
    ndarray of shape (2,)

    Raises
    ------
    TypeError
        参数不是实数。
    ValueError
        参数不是有限数，或 ``length`` 为负。

    Examples
    --------
    >>> vector_2d(2.0, 90).round(6)
    array([0., 2.])
    """
    length = val.finite_real(length, "length")
    if length < 0:
        raise ValueError(f"length 不能是负数（长度 >= 0），收到的是 {length}。")
    theta = np.deg2rad(val.finite_real(angle_deg, "angle_deg"))
    return length * np.array([np.cos(theta), np.sin(theta)])  # (2,)


def with_key_length(k: np.ndarray, index: int, length: float) -> np.ndarray:
    """返回一组新的键：第 ``index`` 个键方向不变、长度改成 ``length``，其余不动（不修改输入）。

    Parameters
    ----------
    k : ndarray of shape (S, d_k)
    index : int
        要改的那个键的下标，0 <= index < S。
    length : float
        新长度，> 0。

    Returns
    -------
    ndarray of shape (S, d_k)

    Raises
    ------
    TypeError
        ``k`` 不是实数数组、``index`` 不是整数、``length`` 不是实数。
    ValueError
        ``k`` 不是二维、``index`` 越界、那个键是零向量（没有方向），或 ``length`` 不是正数。

    Examples
    --------
    >>> import numpy as np
    >>> with_key_length(np.array([[3.0, 4.0], [1.0, 0.0]]), 0, 10.0)
    array([[6., 8.],
           [1., 0.]])
    """
    k = val.as_real_array(k, "k", min_ndim=2)
    val.check_shape(k, "k", (None, None), "（每行一个键：S 行、d_k 列）")
    if isinstance(index, (bool, np.bool_)) or not isinstance(index, numbers.Integral):
        raise TypeError(f"index 必须是整数，收到的是 {val._describe(index)}。")
    if not 0 <= index < k.shape[0]:
        raise ValueError(f"index={index} 越界：k 只有 S={k.shape[0]} 个键，index 应在 [0, {k.shape[0] - 1}] 之内。")
    length = val.positive_real(length, "length")
    norm = np.linalg.norm(k[index])
    if norm == 0:
        raise ValueError(f"k 的第 {index} 个键是零向量：没有方向，无法只改长度。")
    rows = np.arange(k.shape[0])[:, None]  # (S, 1)
    return np.where(rows == index, k * (length / norm), k)  # (S, d_k)


def linear_readout(features: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, float]:
    """最简单的"读者"——线性回归（带常数项）——从 ``features`` 预测 ``target``，看它能答对多少。

    误差 = 残差平方和 / 目标的总平方和（都相对目标的平均值），也就是 1 − R²：
    0 表示全部答对；1 表示和"永远猜平均值"一样差。

    Parameters
    ----------
    features : ndarray of shape (N, F)
        N 个样本，每个样本 F 个数（例如注意力的输出）。
    target : ndarray of shape (N,)
        要回答的问题的正确答案。

    Returns
    -------
    prediction : ndarray of shape (N,)
        读者的回答。
    error : float
        在 [0, 1] 之间。

    Raises
    ------
    TypeError
        输入不是实数数组。
    ValueError
        形状不对、样本数少于 2、样本数对不上，或 ``target`` 全都一样（没有可解释的差异）。

    Examples
    --------
    >>> import numpy as np
    >>> f = np.array([[0.0], [1.0], [2.0], [3.0]])           # (N=4, F=1)
    >>> pred, err = linear_readout(f, 2 * f[:, 0] + 1)      # 完全线性：全对
    >>> pred.round(6), round(err, 6)
    (array([1., 3., 5., 7.]), 0.0)
    >>> round(linear_readout(np.ones((4, 1)), f[:, 0])[1], 6)   # 特征不变：只能猜平均
    1.0
    """
    features = val.as_real_array(features, "features")
    val.check_shape(features, "features", (None, None), "（N 个样本 × F 个特征）")
    target = val.as_real_array(target, "target")
    val.check_shape(target, "target", (features.shape[0],), f"（每个样本一个答案，共 N={features.shape[0]} 个）")
    if features.shape[0] < 2:
        raise ValueError(f"features 至少要有 2 个样本才能拟合，收到的 N={features.shape[0]}。")
    centered = target - target.mean()  # (N,)
    total = float(centered @ centered)
    if total == 0:
        raise ValueError("target 的所有值都相同：没有差异可以解释，误差无定义。")
    design = np.column_stack([np.ones(features.shape[0]), features])  # (N, 1 + F)
    coef, *_ = np.linalg.lstsq(design, target, rcond=None)  # (1 + F,)
    prediction = design @ coef  # (N,)
    residual = target - prediction  # (N,)
    return prediction, float(np.clip(residual @ residual / total, 0.0, 1.0))


def library_weights() -> tuple[np.ndarray, np.ndarray]:
    """V = K 实验里的两副眼镜（为讲解设计）。书的四个坐标是 [主题 a, 主题 b, 页数, 难度]。

    Returns
    -------
    w_k : ndarray of shape (4, 2)
        标签眼镜：只看两个主题坐标。
    w_v : ndarray of shape (4, 2)
        内容眼镜：只看页数和难度。

    Examples
    --------
    >>> w_k, w_v = library_weights()
    >>> (np.array([0.5, -1.0, 3.0, 2.0]) @ w_k).tolist(), (np.array([0.5, -1.0, 3.0, 2.0]) @ w_v).tolist()
    ([0.5, -1.0], [3.0, 2.0])
    """
    eye = np.eye(4)  # 每次新建，调用者改了也不影响别人
    return eye[:, :2], eye[:, 2:]  # (4, 2), (4, 2)


def library_experiment(num_shelves: int, num_books: int, rng: np.random.Generator, sharpness: float = 4.0) -> dict:
    """V = K 与 V 分开的对照实验：许多个书架，每次按主题借书，再问"借到的书有几页"。

    每本书 x = [主题 a, 主题 b, 页数, 难度]，四个数都独立服从标准正态分布（为讲解设计的坐标）。
    键 k = x W_K 只含主题（标签），值 v = x W_V 只含页数和难度（内容），d_k = d_v = 2。
    每个书架一张随机字条 q = sharpness × (随机方向)，做一次缩放点积注意力。

    Parameters
    ----------
    num_shelves : int
        书架（样本）个数 N，>= 2。
    num_books : int
        每个书架上的书数 S。
    rng : np.random.Generator
    sharpness : float
        字条的长度：越长，注意力越集中在最对口的那本书上。

    Returns
    -------
    dict
        ``books`` (N, S, 4)；``weights`` (N, S)；``tied`` (N, 2) 令 V = K 时的输出；
        ``separate`` (N, 2) V 单独投影时的输出；``pages`` (N,) 权重最大的那本书的页数（要回答的问题）。

    Raises
    ------
    TypeError
        参数类型不对。
    ValueError
        ``num_shelves`` < 2，``num_books`` 不是正整数，或 ``sharpness`` 不是正数。

    Examples
    --------
    >>> import numpy as np
    >>> r = library_experiment(500, 4, np.random.default_rng(0))
    >>> linear_readout(r["tied"], r["pages"])[1] > 0.9, linear_readout(r["separate"], r["pages"])[1] < 0.2
    (True, True)
    """
    num_shelves = val.positive_int(num_shelves, "num_shelves")
    if num_shelves < 2:
        raise ValueError(f"num_shelves 至少为 2 才能拟合读出，收到的是 {num_shelves}。")
    num_books = val.positive_int(num_books, "num_books")
    sharpness = val.positive_real(sharpness, "sharpness")
    rng = val.generator(rng)
    books = rng.standard_normal((num_shelves, num_books, 4))  # (N, S, D=4)
    direction = rng.standard_normal((num_shelves, 1, 2))  # (N, 1, d_k)
    q = sharpness * direction / np.linalg.norm(direction, axis=-1, keepdims=True)  # (N, 1, d_k)
    w_k, w_v = library_weights()
    k, v = books @ w_k, books @ w_v  # (N, S, 2), (N, S, 2)
    scores = (q @ np.swapaxes(k, -1, -2)) / np.sqrt(2.0)  # (N, 1, S)
    weights = _softmax(scores, axis=-1)  # (N, 1, S)
    best = np.argmax(weights[:, 0], axis=-1)  # (N,)
    return {
        "books": books,
        "weights": weights[:, 0],  # (N, S)
        "tied": (weights @ k)[:, 0],  # (N, 2)
        "separate": (weights @ v)[:, 0],  # (N, 2)
        "pages": books[np.arange(num_shelves), best, 2],  # (N,)
    }
