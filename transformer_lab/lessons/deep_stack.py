"""为什么深的 Transformer 离不开残差连接：测一测梯度穿过 1、4、16 层以后还剩多少。

把 N 层随机初始化的编码器层叠起来，给最上面的输出一个随机的梯度 G（长度归一化成 1），
一层一层往回传，记下每一层输入处的梯度长度 ‖∂L/∂x_n‖；同时看每一层输出里，各个位置的向量彼此有多像
（都一样了，就说明每个词原来的"笔记"被冲掉了）。三种叠法::

    前归一化 (pre-LN)：   x_{n+1} = h + FFN(LN₂(h)),  h = x_n + MHA(LN₁(x_n))     （残差直路不经过 LN）
    后归一化 (post-LN)：  x_{n+1} = LN₂(h + FFN(h)),  h = LN₁(x_n + MHA(x_n))     （论文的写法）
    没有残差：            x_{n+1} = LN₂(FFN(h)),      h = LN₁(MHA(x_n))           （把两处 "x +" 去掉）

前两种用 ``core`` 的 ``encoder_layer_backward``；没有残差的那种由同样的零件（``layer_norm_backward``、
``feed_forward_backward``、``multi_head_attention_backward``）接成。权重都是随机的，不是训练出来的。
本模块只依赖 NumPy 和 ``core``。形状字母：T 位置，D = d_model。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from ..core.encoder_backward import encoder_layer_backward
from ..core.layer import encoder_layer, feed_forward, init_encoder_params, layer_norm
from ..core.layer_backward import feed_forward_backward, layer_norm_backward
from ..core.multihead import multi_head_attention
from ..core.multihead_backward import multi_head_attention_backward

__all__ = ["MODES", "plain_layer", "position_similarity", "stack_profile"]

MODES = ("pre-LN", "post-LN", "无残差")
_MHA = ("w_q", "w_k", "w_v", "w_o")
_FFN = ("w_1", "b_1", "w_2", "b_2")


def plain_layer(x: np.ndarray, p: dict, num_heads: int) -> np.ndarray:
    """没有残差的一层：LN₂(FFN(LN₁(MHA(x))))（只用来做对照实验，真实模型不这样搭）。"""
    a, _ = multi_head_attention(x, *(p[k] for k in _MHA), num_heads)  # (T, D)
    h = layer_norm(a, p["ln1_gamma"], p["ln1_beta"])  # (T, D)
    return layer_norm(feed_forward(h, *(p[k] for k in _FFN)), p["ln2_gamma"], p["ln2_beta"])  # (T, D)


def _plain_backward(x, p, grad, num_heads):
    a, _ = multi_head_attention(x, *(p[k] for k in _MHA), num_heads)  # (T, D)
    h = layer_norm(a, p["ln1_gamma"], p["ln1_beta"])  # (T, D)
    f = feed_forward(h, *(p[k] for k in _FFN))  # (T, D)
    df = layer_norm_backward(f, p["ln2_gamma"], grad)[0]  # (T, D)
    dh = feed_forward_backward(h, *(p[k] for k in _FFN), df)["x"]  # (T, D)
    da = layer_norm_backward(a, p["ln1_gamma"], dh)[0]  # (T, D)
    return multi_head_attention_backward(x, *(p[k] for k in _MHA), da, num_heads)["x"]  # (T, D)


def _step(x, p, num_heads, mode):
    if mode == "无残差":
        return plain_layer(x, p, num_heads)
    return encoder_layer(x, p, num_heads, norm_first=mode == "pre-LN")[0]


def _back(x, p, grad, num_heads, mode):
    if mode == "无残差":
        return _plain_backward(x, p, grad, num_heads)
    return encoder_layer_backward(x, p, grad, num_heads, norm_first=mode == "pre-LN")["x"]


def position_similarity(x: np.ndarray) -> float:
    """T 个位置的向量两两之间余弦相似度的平均（先减去各自的均值）。1 表示所有位置的"笔记"已经一模一样。

    Examples
    --------
    >>> position_similarity(np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.1]]))      # 两行几乎同方向
    0.9999
    >>> position_similarity(np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]))      # 减去均值后方向相反
    -1.0
    """
    x = check.as_real_array(x, "x")
    check.check_shape(x, "x", (None, None), "（每行一个位置）")
    centered = x - x.mean(axis=-1, keepdims=True)  # (T, D)
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
        参数不是正整数、``mode`` 不是三种之一、``rng`` 不是 Generator、D 不能被 H 整除。

    Examples
    --------
    >>> prof = stack_profile(2, "pre-LN", np.random.default_rng(0))
    >>> prof["grad"].shape, float(prof["grad"][-1])
    ((3,), 1.0)
    """
    N, mode = check.positive_int(num_layers, "num_layers"), check.one_of(mode, "mode", MODES)
    rng = check.generator(rng)
    T, D, H = (check.positive_int(v, n) for v, n in ((seq_len, "seq_len"), (d_model, "d_model"), (num_heads, "num_heads")))
    if D % H:
        raise ValueError(f"d_model={D} 必须能被 num_heads={H} 整除（例如 16 = 2 × 8）。")
    layers = [init_encoder_params(D, 4 * D, rng) for _ in range(N)]
    xs = [rng.normal(size=(T, D))]  # x_0: (T, D)
    for p in layers:
        xs.append(_step(xs[-1], p, H, mode))  # x_{n+1}: (T, D)
    grad = rng.normal(size=(T, D))
    grad = grad / np.linalg.norm(grad)  # (T, D)，长度 1
    norms = [1.0]
    for x, p in zip(reversed(xs[:-1]), reversed(layers)):
        grad = _back(x, p, grad, H, mode)  # (T, D)
        norms.append(float(np.linalg.norm(grad)))
    return {"grad": np.array(norms[::-1]), "similarity": np.array([position_similarity(x) for x in xs])}
