"""第 3 章的图书馆实验：V 为什么不能直接等于 K，以及用来评判它的"线性读者"。

书的四个坐标 [主题 a, 主题 b, 页数, 难度] 是为讲解设计的；注意力本身调用 ``core.attention``。
本模块只依赖 NumPy。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from ..core.attention import attend

__all__ = ["linear_readout", "library_weights", "library_experiment"]


MAX_BOOKS = check.MAX_ELEMENTS // 4  # 书的总数上限（内存：每本书 4 个数）


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
    features = check.as_real_array(features, "features")
    check.check_shape(features, "features", (None, None), "（N 个样本 × F 个特征）")
    target = check.as_real_array(target, "target")
    check.check_shape(target, "target", (features.shape[0],), f"（每个样本一个答案，共 N={features.shape[0]} 个）")
    if features.shape[0] < 2:
        raise ValueError(f"features 至少要有 2 个样本才能拟合，收到的 N={features.shape[0]}。")
    if np.all(target == target[0]):
        raise ValueError("target 的所有值都相同：没有差异可以解释，误差无定义。")
    # 先缩放（结果不变）：目标除以它的最大绝对值，每个特征除以它那一列的最大绝对值——
    # 1e300 的目标平方后不会上溢成 inf，1e-200 的平方后也不会下溢成 0
    t_scale = np.max(np.abs(target))
    f_scale = np.max(np.abs(features), axis=0)  # (F,)
    t, f = target / t_scale, features / np.where(f_scale > 0, f_scale, 1.0)  # (N,), (N, F)
    centered = t - t.mean()  # (N,)
    total = float(centered @ centered)  # > 0：t 不全相同，最大的 |t| 是 1
    design = np.column_stack([np.ones(features.shape[0]), f])  # (N, 1 + F)
    coef, *_ = np.linalg.lstsq(design, t, rcond=None)  # (1 + F,)
    fitted = design @ coef  # (N,) 缩放后的回答
    residual = t - fitted  # (N,)
    with np.errstate(over="ignore"):
        prediction = check.finite_result(fitted * t_scale, "读者的回答", check.OVERFLOW_HINT)  # (N,)
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
    每个书架一次随机的查询 q（检索词） = sharpness × (随机方向)，做一次缩放点积注意力。

    Parameters
    ----------
    num_shelves : int
        书架（样本）个数 N，>= 2。
    num_books : int
        每个书架上的书数 S。
    rng : np.random.Generator
    sharpness : float
        查询的长度：越长，注意力越集中在最对口的那本书上。

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
        ``num_shelves`` < 2，``num_books`` 不是正整数，书的总数超过 2.5e7，或 ``sharpness`` 不是正数。

    Examples
    --------
    >>> import numpy as np
    >>> r = library_experiment(500, 4, np.random.default_rng(0))
    >>> linear_readout(r["tied"], r["pages"])[1] > 0.9, linear_readout(r["separate"], r["pages"])[1] < 0.2
    (True, True)
    """
    num_shelves = check.positive_int(num_shelves, "num_shelves")
    if num_shelves < 2:
        raise ValueError(f"num_shelves 至少为 2 才能拟合读出，收到的是 {num_shelves}。")
    num_books = check.positive_int(num_books, "num_books")
    check.at_most(num_shelves * num_books, "num_shelves × num_books", MAX_BOOKS, "每本书要存 4 个数")
    sharpness = check.positive_real(sharpness, "sharpness")
    rng = check.generator(rng)
    books = rng.standard_normal((num_shelves, num_books, 4))  # (N, S, D=4)
    direction = rng.standard_normal((num_shelves, 1, 2))  # (N, 1, d_k)
    q = sharpness * direction / np.linalg.norm(direction, axis=-1, keepdims=True)  # (N, 1, d_k)
    w_k, w_v = library_weights()
    k, v = books @ w_k, books @ w_v  # (N, S, 2), (N, S, 2)
    tied, weights = attend(q, k, k)  # 令 V = K：(N, 1, 2), (N, 1, S)，默认缩放 1/√d_k = 1/√2
    best = np.argmax(weights[:, 0], axis=-1)  # (N,)
    return {
        "books": books,
        "weights": weights[:, 0],  # (N, S)
        "tied": tied[:, 0],  # (N, 2)
        "separate": (weights @ v)[:, 0],  # (N, 2)
        "pages": books[np.arange(num_shelves), best, 2],  # (N,)
    }
