"""中心差分 (central finite differences)：测试里唯一的数值梯度，以及拿它检查解析梯度的断言。

    ∂f/∂a_j ≈ (f(a + h e_j) − f(a − h e_j)) / 2h        截断误差 ~h²，舍入误差 ~|f|·1e-16 / h

它只调用前向函数 f，不调用任何反向代码，所以是反向传播的独立参照。h = 1e-6 时两种误差都在 1e-10 上下。
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["numeric_gradient", "assert_gradients_close"]


def numeric_gradient(f: Callable[[np.ndarray], object], a: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """``f`` 对数组 ``a`` 的中心差分，逐个元素前后各挪 ``h``；``a`` 本身不被改动。

    ``f(a)`` 是标量时返回梯度，形状与 ``a`` 相同；``f(a)`` 是数组时返回雅可比矩阵 (Jacobian)，
    形状 ``f(a).shape + a.shape``：``J[i..., j...] = ∂f(a)[i...] / ∂a[j...]``。
    """
    a = np.asarray(a, dtype=float)
    columns = []
    for j in np.ndindex(a.shape):
        plus, minus = a.copy(), a.copy()
        plus[j] += h
        minus[j] -= h
        columns.append((np.asarray(f(plus), dtype=float) - np.asarray(f(minus), dtype=float)) / (2 * h))
    if not columns:  # a 是空数组：没有可挪的元素
        return np.zeros(np.shape(f(a)) + a.shape)
    return np.stack(columns, axis=-1).reshape(columns[0].shape + a.shape)  # (*f(a).shape, *a.shape)


def assert_gradients_close(analytic: np.ndarray, numeric: np.ndarray, rtol: float = 1e-6, floor: float = 0.0,
                           name: str = "") -> float:
    """解析梯度与数值梯度整体的相对误差不超过 ``rtol``，返回这个相对误差。

    相对误差 = ‖解析 − 数值‖ / max(‖解析‖, ‖数值‖, floor)。梯度恰好为 0 时（例如永远是 0 的偏置梯度）
    差分只剩舍入噪声（约 1e-10），``floor`` 给分母一个下限，相当于要求绝对误差 ≤ rtol · floor；默认 0：纯相对。
    """
    analytic, numeric = np.asarray(analytic), np.asarray(numeric)
    assert analytic.shape == numeric.shape, f"{name} 梯度的形状不同：解析 {analytic.shape}，数值 {numeric.shape}"
    error = float(np.linalg.norm(analytic - numeric))
    scale = max(float(np.linalg.norm(analytic)), float(np.linalg.norm(numeric)), floor)
    rel = 0.0 if error == 0 else error / scale  # error > 0 时 scale > 0
    assert rel <= rtol, f"{name} 梯度的相对误差 {rel:.2e} 超过了 {rtol:.0e}（‖解析 − 数值‖ = {error:.2e}）"
    return rel
