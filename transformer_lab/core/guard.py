"""反向传播的统一守卫 (guard)：每个公开的反向函数都经过这里，结果要么有限且正确，要么是一句中文的"溢出"。

反向传播对"从上游传来的梯度" G = ∂L/∂out 是**线性**的：把 G 乘以 c，每个梯度也恰好乘以 c。所以这里先把 G
除以 2^e（e 取自 G 的最大绝对值，让最大的元素落在 [0.5, 1) 里），算完再乘回 2^e。乘除 2 的整数次幂在浮点数里
是精确的（不碰到上溢和下溢时），所以平常的输入结果一个比特都不变；而 G 接近 float64 上限 (~1.8e308) 时，
中间结果（G·Wᵀ 的求和、g − Σ p⊙g ……）不再先溢出，真正的梯度有限就得到它。乘回 2^e 之后还不有限，
说明真正的梯度本身就超出了浮点数的范围：这时抛出写明是哪个函数、哪个梯度的 ValueError，而不是悄悄返回 inf/NaN。

本模块只依赖 NumPy。
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import _validation as check

__all__ = ["guarded_backward"]

Grads = np.ndarray | tuple[np.ndarray, ...] | dict[str, np.ndarray]


def guarded_backward(backward: Callable[[np.ndarray], Grads], grad_out: np.ndarray, where: str,
                     names: tuple[str, ...] = ()) -> Grads:
    """在守卫里调用 ``backward(grad_out)``：先把 ``grad_out`` 缩放到最大绝对值在 [0.5, 1) 里，算完再放大回去，
    并检查每个梯度都有限。

    Parameters
    ----------
    backward : callable
        反向计算核（输入已检查过），对 ``grad_out`` 线性；返回一个数组、一组数组或 {名字: 数组}。
    grad_out : ndarray
        上游梯度，已检查过是有限实数数组。
    where : str
        报错时写明的公开函数名，例如 ``"softmax_backward"``。
    names : tuple of str, optional
        ``backward`` 返回一组数组时每个数组的名字（返回字典时用字典的键，返回一个数组时默认叫 "梯度"）。

    Returns
    -------
    与 ``backward`` 的返回值同结构、同 dtype。

    Raises
    ------
    ValueError
        输入都有限，但真正的梯度超出了浮点数的范围（溢出）：信息写明函数名和梯度名。

    Examples
    --------
    >>> import numpy as np
    >>> guarded_backward(lambda g: (2 * g, g.sum()), np.array([1e308, 1e308]), "例子", ("a", "b"))
    Traceback (most recent call last):
        ...
    ValueError: 例子 的梯度 a 溢出：...
    >>> guarded_backward(lambda g: g - g.mean(), np.array([1.5e308, -1.5e308]), "例子")   # 直接算 g.mean() 会溢出
    array([ 1.5e+308, -1.5e+308])
    """
    peak = np.max(np.abs(grad_out))
    e = int(np.frexp(peak)[1]) if peak > 0 else 0  # peak = m · 2^e，m ∈ [0.5, 1)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        result = backward(np.ldexp(grad_out, -e))  # 最大元素在 [0.5, 1) 里：中间结果不会因为 G 太大而溢出
        if isinstance(result, dict):
            items = {k: np.ldexp(v, e) for k, v in result.items()}
        elif isinstance(result, tuple):
            items = dict(zip(names or tuple(f"#{i}" for i in range(len(result))), (np.ldexp(v, e) for v in result)))
        else:
            items = {names[0] if names else "": np.ldexp(result, e)}
    for name, g in items.items():
        label = f"{where} 的梯度 {name}" if name else f"{where} 的梯度"
        check.finite_result(g, label, "提示：真正的梯度已超出浮点数的范围；把损失或输入缩小几个数量级再试。")
    if isinstance(result, dict):
        return items
    values = tuple(items.values())
    return values if isinstance(result, tuple) else values[0]
