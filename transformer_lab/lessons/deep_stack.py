"""为什么深的 Transformer 离不开残差连接：测一测梯度穿过 1、4、16 层以后还剩多少。

把 N 层随机初始化的编码器层叠起来，给最上面的输出一个随机的梯度 G（长度归一化成 1），
一层一层往回传，记下每一层输入处的梯度长度 ‖∂L/∂x_n‖；同时看每一层输出里，各个位置的向量彼此有多像
（都一样了，就说明每个词原来的"笔记"被冲掉了）。三种叠法::

    前归一化 (pre-LN)：   x_{n+1} = h + FFN(LN₂(h)),  h = x_n + MHA(LN₁(x_n))     （残差直路不经过 LN）
    后归一化 (post-LN)：  x_{n+1} = LN₂(h + FFN(h)),  h = LN₁(x_n + MHA(x_n))     （论文的写法）
    没有残差：            x_{n+1} = LN₂(FFN(h)),      h = LN₁(MHA(x_n))           （把两处 "x +" 去掉）

三种都是 ``core`` 的同一层（``encoder_layer_vjp``；没有残差的那种传 ``residual=False``），前向、反向都只写在那里。
权重都是随机的，不是训练出来的。
本模块只依赖 NumPy 和 ``core``。形状字母：T 位置，D = d_model。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from ..core.encoder import encoder_layer, encoder_layer_vjp, init_encoder_params

__all__ = ["MODES", "plain_layer", "position_similarity", "stack_profile"]

MODES = ("pre-LN", "post-LN", "无残差")


def plain_layer(x: np.ndarray, p: dict, num_heads: int) -> np.ndarray:
    """没有残差的一层：LN₂(FFN(LN₁(MHA(x))))（只用来做对照实验，真实模型不这样搭）。"""
    return encoder_layer(x, p, num_heads, residual=False)[0]  # (T, D)


def _layer(x, p, num_heads, mode):
    """一层的前向和反向函数：三种叠法都是 core 的同一层。"""
    out, _, backward = encoder_layer_vjp(x, p, num_heads, norm_first=mode == "pre-LN", residual=mode != "无残差")
    return out, backward  # (T, D)


def position_similarity(x: np.ndarray) -> float:
    """T 个位置的向量两两之间余弦相似度的平均（先减去各自的均值）。1 表示所有位置的"笔记"已经一模一样。

    每一行先除以它的最大绝对值（余弦不变），所以 1e±200 量级的行也能算对。

    Raises
    ------
    TypeError, ValueError
        ``x`` 不是二维实数数组、为空、含 NaN/inf，或少于 2 行。

    Examples
    --------
    >>> position_similarity(np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.1]]))      # 两行几乎同方向
    0.9999
    >>> position_similarity(np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]))      # 减去均值后方向相反
    -1.0
    """
    x = check.as_real_array(x, "x")
    check.check_shape(x, "x", (None, None), "（每行一个位置）")
    if x.shape[0] < 2:
        raise ValueError(f"x 至少要有 2 行（两两比较的位置），收到的 shape={x.shape}。")
    s = np.max(np.abs(x), axis=-1, keepdims=True)  # (T, 1) 先按行缩放：1e±200 的行平方后也不会上溢/下溢
    y = x / np.where(s > 0, s, 1)  # (T, D)，每个数在 [-1, 1] 里
    centered = y - y.mean(axis=-1, keepdims=True)  # (T, D)
    unit = centered / np.maximum(np.linalg.norm(centered, axis=-1, keepdims=True), 1e-300)  # (T, D)
    cos = unit @ unit.T  # (T, T)
    return round(float(cos[~np.eye(len(x), dtype=bool)].mean()), 4)


def stack_profile(num_layers: int, mode: str, rng: np.random.Generator, seq_len: int = 6, d_model: int = 16,
                  num_heads: int = 2) -> dict[str, np.ndarray]:
    """N 层随机编码器叠起来：梯度在每一层输入处的长度，以及每一层输出里各位置有多像。

    Parameters
    ----------
    num_layers : int
        N。
    mode : str
        ``"pre-LN"``、``"post-LN"`` 或 ``"无残差"``。
    rng : np.random.Generator
        决定输入、每层的权重和顶端的梯度方向。
    seq_len, d_model, num_heads : int
        T、D、H。

    Returns
    -------
    dict
        ``grad`` (N + 1,)：第 n 个数 = ‖∂L/∂x_n‖，x_0 是最底下的输入，x_N 是最上面的输出（那里的梯度长度定为 1）；
        ``similarity`` (N + 1,)：x_n 里各位置两两的平均余弦相似度（``position_similarity``）。

    Raises
    ------
    TypeError, ValueError
        参数不是正整数、``mode`` 不是三种之一、``rng`` 不是 Generator、D 不能被 H 整除，或 N 层要占的内存超过预算（2 GiB）。

    Examples
    --------
    >>> prof = stack_profile(2, "pre-LN", np.random.default_rng(0))
    >>> prof["grad"].shape, float(prof["grad"][-1])
    ((3,), 1.0)
    """
    N, mode = check.positive_int(num_layers, "num_layers"), check.one_of(mode, "mode", MODES)
    rng = check.generator(rng)
    T, D, H = (check.positive_int(v, n) for v, n in ((seq_len, "seq_len"), (d_model, "d_model"), (num_heads, "num_heads")))
    check.heads_divide(D, H, source="")
    check.memory_budget(N * (12 * D * D + 4 * H * T * T + 16 * T * D), 8,
                        f"{N} 层的权重和反向要留的中间结果（T={T}, D={D}, H={H}）")
    layers = [init_encoder_params(D, 4 * D, rng) for _ in range(N)]
    xs, backwards = [rng.normal(size=(T, D))], []  # x_0: (T, D)
    for p in layers:
        out, backward = _layer(xs[-1], p, H, mode)  # x_{n+1}: (T, D)
        xs.append(out)
        backwards.append(backward)
    grad = rng.normal(size=(T, D))
    grad = grad / np.linalg.norm(grad)  # (T, D)，长度 1
    norms = [1.0]
    for backward in reversed(backwards):
        grad = backward(grad)["x"]  # (T, D)
        norms.append(float(np.linalg.norm(grad)))
    return {"grad": np.array(norms[::-1]), "similarity": np.array([position_similarity(x) for x in xs])}
