"""解码 (decoding)：把模型对下一个词的打分 (logits) 变成"下一个词取谁"的概率，外加三个旋钮。

    温度 (temperature) τ：     p = softmax(logits / τ)            τ < 1 更尖（更保守），τ > 1 更平（更大胆）
    top-k：                     只留概率最大的 k 个词，其余记 0，留下的重新归一化（加起来还是 1）
    top-p（核采样 nucleus）：  按概率从大到小排，留最少的几个词，使它们的概率之和 ≥ p；再重新归一化
    τ = 0：                     贪心 (greedy)：全部概率给打分最高的词（并列时给编号最小的）

三步的顺序固定：先除以温度，再 top-k，再在 top-k 留下（并重新归一化）的分布上做 top-p。
**模型知道的东西都在 logits 里**：温度、top-k、top-p 只改"怎么从中挑"，不改 logits 本身，
也不改词的先后名次（温度 > 0 时，打分高的词概率永远不低于打分低的词）。

本模块只依赖 NumPy。形状字母：V 词表大小。
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import _validation as check
from .softmax import softmax_unchecked

__all__ = ["next_token_probs", "check_knobs", "next_token_probs_unchecked"]


def _temperature(t: object, name: str) -> float:
    t = check.finite_real(t, name)  # 类型（bool 不算）、NaN、±inf、大到超出 float64 的 Python 整数都在这里报错
    if t < 0:
        raise ValueError(f"{name} 必须是有限的非负实数（0 表示贪心，只取打分最高的词），收到的是 {t}。"
                         "提示：常用 0.5 到 1.5；1 就是模型原来的分布。")
    return t


def _top_k(k: object, V: int) -> int | None:
    if k is None:
        return None
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
        raise TypeError(f"top_k 必须是整数或 None，收到的是 {check.describe(k)}。")
    if not 1 <= k <= V:
        raise ValueError(f"top_k 必须在 [1, V={V}] 之内（至少留 1 个词，最多留下整个词表），收到的是 {k}。")
    return int(k)


def _top_p(p: object) -> float | None:
    if p is None:
        return None
    if isinstance(p, (bool, np.bool_)) or not isinstance(p, numbers.Real):
        raise TypeError(f"top_p 必须是实数或 None，收到的是 {check.describe(p)}。")
    p = float(p)
    if not 0 < p <= 1:  # NaN 也在这里被拒绝
        raise ValueError(f"top_p 必须在 (0, 1] 之内（留下的词的概率之和至少是 top_p），收到的是 {p}。"
                         "提示：常用 0.9；1 表示不筛。")
    return p


def _greedy(x: np.ndarray) -> np.ndarray:
    """全部概率给每行打分最高的词；np.argmax 在并列时取编号最小的那个。"""
    best = np.argmax(x, axis=-1)[..., None]  # (..., 1)
    return (np.arange(x.shape[-1]) == best).astype(x.dtype)  # (..., V)


def _renormalize(p: np.ndarray, keep: np.ndarray) -> np.ndarray:
    kept = np.where(keep, p, 0)  # (..., V) 没留下的词恰好是 0
    return kept / kept.sum(axis=-1, keepdims=True)  # (..., V) 留下的至少有一个正数（名次第一的那个）


def next_token_probs(
    logits: np.ndarray,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
) -> np.ndarray:
    """下一个词的概率：softmax(logits / 温度)，再按 top-k、top-p 只留一部分词并重新归一化。

    沿最后一维计算，前面可以有任意多维（例如每个位置、每个批次一行）。名次按打分从高到低排，
    打分相同时编号小的排前面：top-k 正好留 k 个词，top-p 留"从第 1 名起、累计概率第一次 ≥ p"为止的那些词
    （至少 1 个）。``top_p=1`` 什么也不筛。

    Parameters
    ----------
    logits : ndarray of shape (..., V)
        模型对词表里每个词的打分（还没过 softmax），必须都是有限实数。
    temperature : float, default 1.0
        > 0 时 logits 先除以它；== 0 表示贪心：全部概率给打分最高的词（并列时给编号最小的）。
        计算一律在 float64 里做，所以再小的正温度（例如 1e-300，对 float16、float32 的打分也一样）都不会得到 NaN：
        它给出 τ → 0 的极限，概率平分给并列第一的词。
    top_k : int, optional
        只留名次前 k 的词，1 <= k <= V。
    top_p : float, optional
        只留累计概率第一次达到 p 的那几个词，0 < p <= 1。

    Returns
    -------
    ndarray of shape (..., V)
        每行和为 1；没留下的词恰好是 0。float32、float64 的 dtype 不变，整数输入得到 float64（float16 升为 float32）。

    Raises
    ------
    TypeError
        ``logits`` 不是实数 NumPy 数组（bool 也不算）；``temperature``、``top_k``、``top_p`` 类型不对（bool 不算数）。
    ValueError
        ``logits`` 为空或含 NaN/inf；``temperature`` 为负、不是有限数或是大到超出 float64 的整数；``top_k`` 不在 [1, V]；``top_p`` 不在 (0, 1]。

    Examples
    --------
    五个词的打分 [2, 1, 0, 0, -1]（动手算：e² ≈ 7.389，e¹ ≈ 2.718，e⁰ = 1，e⁻¹ ≈ 0.368，合计 ≈ 12.475）：

    >>> import numpy as np
    >>> logits = np.array([2.0, 1.0, 0.0, 0.0, -1.0])
    >>> next_token_probs(logits).round(4)
    array([0.5923, 0.2179, 0.0802, 0.0802, 0.0295])
    >>> next_token_probs(logits, top_k=2).round(4)            # 只留前两名：7.389 / (7.389 + 2.718)
    array([0.7311, 0.2689, 0.    , 0.    , 0.    ])
    >>> next_token_probs(logits, top_p=0.85).round(4)         # 0.5923 + 0.2179 = 0.81 < 0.85：再加第 3 名（编号 2）
    array([0.6652, 0.2447, 0.09  , 0.    , 0.    ])
    >>> next_token_probs(logits, temperature=0)               # 贪心
    array([1., 0., 0., 0., 0.])
    >>> next_token_probs(logits, temperature=2).round(4)      # 温度 2：打分减半，分布更平
    array([0.3898, 0.2364, 0.1434, 0.1434, 0.087 ])
    """
    x = check.as_real_array(logits, "logits", min_ndim=1)  # (..., V) 整数 → float64，float32 保持
    return next_token_probs_unchecked(x, *check_knobs(temperature, top_k, top_p, x.shape[-1]))


def check_knobs(temperature: object, top_k: object, top_p: object, V: int,
                temperature_name: str = "temperature") -> tuple[float, int | None, float | None]:
    """三个旋钮的检查（规则同 ``next_token_probs``），返回 ``(temperature, top_k, top_p)``。逐词生成在循环外查一次。

    ``temperature_name`` 是报错里温度的名字（调用者传进来的参数名，例如 ``"temperatures[2]"``）。

    Raises
    ------
    TypeError, ValueError
        同 ``next_token_probs`` 对三个旋钮的报错。
    """
    return _temperature(temperature, temperature_name), _top_k(top_k, V), _top_p(top_p)


def next_token_probs_unchecked(x: np.ndarray, t: float, k: int | None, p: float | None) -> np.ndarray:
    """``next_token_probs`` 的计算本身（打分和旋钮都已检查过，见 ``check_knobs``）。"""
    out_dtype = check.float_dtype(x.dtype)  # 结果的 dtype：float32、float64 不变，float16 升为 float32
    if t == 0:
        return _greedy(x).astype(out_dtype, copy=False)  # (..., V)
    probs = _tempered_softmax(x, t)  # (..., V) float64
    if k is None and (p is None or p == 1):
        return probs.astype(out_dtype, copy=False)  # 不筛
    V = x.shape[-1]
    order = np.argsort(-x, axis=-1, kind="stable")  # (..., V) 名次：按原始打分从高到低，并列时编号小的在前
    rank = np.empty_like(order)  # (..., V) 每个词排第几（0 = 第 1 名）：order 的逆排列
    np.put_along_axis(rank, order, np.broadcast_to(np.arange(V), order.shape), axis=-1)  # 写进新数组
    if k is not None:
        probs = _renormalize(probs, rank < k)  # (..., V) 只留前 k 名
    if p is not None and p < 1:
        ranked = np.take_along_axis(probs, order, axis=-1)  # (..., V) 按名次排好的概率
        total = np.cumsum(ranked, axis=-1)  # (..., V) 从第 1 名累加到这一名
        before = np.concatenate([np.zeros_like(total[..., :1]), total[..., :-1]], axis=-1)  # (..., V) 排在它前面的之和
        keep_ranked = before < p  # (..., V) 前面的加起来还不到 p，它就要留下；第 1 名前面是 0，总会留下
        probs = _renormalize(probs, np.take_along_axis(keep_ranked, rank, axis=-1))  # (..., V)
    return probs.astype(out_dtype, copy=False)


def _tempered_softmax(x: np.ndarray, t: float) -> np.ndarray:
    """softmax(x / t)，**一律在 float64 里算**，返回 float64。

    温度是 Python 的 float64；按 NumPy 2 的规则，它与 float32/float16 数组相除时先被转成数组的类型，
    1e-46 这样的温度在 float32 里就成了 0，0 / 0 = NaN。所以先把打分转成 float64（float16、float32 的值在 float64
    里都是精确的），先减最大值再除以温度：最大的那个恰好是 0，其余是负数，极小的温度只会让它们溢出成 -inf
    （概率恰好是 0），也就是 τ → 0 的极限：概率平分给并列第一的那几个词。
    """
    x64 = x.astype(np.float64, copy=False)  # (..., V) float64 的输入不复制，结果与以前逐位相同
    with np.errstate(over="ignore"):  # 溢出只会是 负数 / 极小的温度 → -inf，正是想要的
        scaled = (x64 - x64.max(axis=-1, keepdims=True)) / t  # (..., V)，最大值处是 0
    return softmax_unchecked(scaled, axis=-1)  # (..., V)
