"""分组查询注意力 (grouped-query attention, GQA)：好几个查询头共用一组键和值（Ainslie et al., 2023）。

第 5 章的多头注意力里每个头都有自己的 q、k、v。GQA 只给 H_kv 个头算 k、v，每 G = H / H_kv 个查询头共用一组：
SmolLM2 有 9 个查询头、3 个键值头，查询头 0、1、2 看键值头 0，3、4、5 看键值头 1，6、7、8 看键值头 2。
好处在第 7 章的 KV 缓存上：每个词只存 H_kv 组 k、v，缓存小 G 倍（SmolLM2：3 倍）。H_kv = H 就是普通的多头，
H_kv = 1 叫多查询注意力 (multi-query attention, MQA)。

这里**不另写注意力**：把查询头排成 (H_kv, G) 两维，键和值插一个长度 1 的维度，交给第 4 章的 ``attention.attend``，
广播 (broadcast) 让同一组的 G 个查询头看同一份 k、v（不复制）。逐词生成时 k、v 存在第 7 章的 ``KVCache`` 里
（批维度 ``(H_kv,)``）：``cached_grouped_attention`` 追加新词的 k、v，再让新词的 q 看缓存里的全部词。

本模块只依赖 NumPy。形状字母：H 查询头数，H_kv 键值头数，G = H / H_kv，T 查询位置数，S 键位置数，d_k 每头维数。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from .attention import attend
from .kv_cache import KVCache

__all__ = ["grouped_query_attention", "grouped_attend", "cached_grouped_attention", "new_rows_mask"]


def grouped_attend(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None = None,
                   scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """GQA 的计算本身（输入已检查过）：q (..., H, T, d_k)，k、v (..., H_kv, S, d)；mask 可广播到 (T, S)。"""
    H, T = q.shape[-3], q.shape[-2]
    H_kv = k.shape[-3]
    grouped = q.reshape(*q.shape[:-3], H_kv, H // H_kv, T, q.shape[-1])  # (..., H_kv, G, T, d_k)
    out, weights = attend(grouped, k[..., None, :, :], v[..., None, :, :], mask, scale)  # (..., H_kv, G, T, d_v)
    return (out.reshape(*q.shape[:-1], v.shape[-1]),  # (..., H, T, d_v)
            weights.reshape(*q.shape[:-1], k.shape[-2]))  # (..., H, T, S)


def grouped_query_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None = None,
                            scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """分组查询注意力：查询头 h 看键值头 h // G（G = H / H_kv），每个头做一次缩放点积注意力。

    Parameters
    ----------
    q : ndarray of shape (..., H, T, d_k)
        查询，H 个头。
    k : ndarray of shape (..., H_kv, S, d_k)
    v : ndarray of shape (..., H_kv, S, d_v)
        键和值，H_kv 个头；H 必须是 H_kv 的整数倍。
    mask : ndarray of bool, broadcastable to (T, S), optional
        True = 允许关注（例如 ``causal_mask(T)``），每行至少一个 True；所有头共用。
    scale : float, optional
        默认 ``1 / √d_k``。

    Returns
    -------
    out : ndarray of shape (..., H, T, d_v)
    weights : ndarray of shape (..., H, T, S)
        每个查询头的注意力权重，每行和为 1。

    Raises
    ------
    TypeError
        输入不是实数数组，或 mask 不是 bool 数组。
    ValueError
        少于 3 维、H 不是 H_kv 的整数倍、前导维度或 d_k、S 对不上、含 NaN/inf、mask 形状不对或某行全是 False，
        ``scale`` 不是正数，或分数溢出。

    Examples
    --------
    两个查询头共用一个键值头（H = 2，H_kv = 1）：两个头的 q 不同，看同样两个键，权重就不同。

    >>> q = np.array([[[1.0, 0.0]], [[0.0, 1.0]]])     # (H=2, T=1, d_k=2)
    >>> k = np.array([[[1.0, 0.0], [0.0, 1.0]]])       # (H_kv=1, S=2, d_k=2)
    >>> v = np.array([[[10.0], [20.0]]])               # (H_kv=1, S=2, d_v=1)
    >>> out, w = grouped_query_attention(q, k, v, scale=1.0)
    >>> w.round(4)                                     # softmax([1, 0])、softmax([0, 1])
    array([[[0.7311, 0.2689]],
    <BLANKLINE>
           [[0.2689, 0.7311]]])
    >>> out.round(2)
    array([[[12.69]],
    <BLANKLINE>
           [[17.31]]])
    """
    q = check.as_real_array(q, "q", min_ndim=3)
    k = check.as_real_array(k, "k", min_ndim=3)
    v = check.as_real_array(v, "v", min_ndim=3)
    H, H_kv = q.shape[-3], k.shape[-3]
    if q.shape[:-3] != k.shape[:-3] or k.shape[:-2] != v.shape[:-2] or H % H_kv:
        raise ValueError(f"q 的头数 H 必须是 k、v 的头数 H_kv 的整数倍（例如 9 = 3 × 3），前导维度和 S 都要一致："
                         f"q.shape={q.shape}, k.shape={k.shape}, v.shape={v.shape}。")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q 与 k 的最后一维 (d_k) 必须相等，才能做点积：q.shape={q.shape}, k.shape={k.shape}。")
    if mask is not None:
        mask = check.as_mask(mask, "mask", (q.shape[-2], k.shape[-2]))
    scale = None if scale is None else check.positive_real(scale, "scale")
    return grouped_attend(q, k, v, mask, scale)


def new_rows_mask(n: int, S: int) -> np.ndarray | None:
    """n 个新词接在 S − n 个旧词之后：新词 i 看键 j ≤ i + (S − n)。只有 1 个新词时它什么都能看，返回 None。

    >>> new_rows_mask(2, 4).astype(int)                # 2 个新词，前面有 2 个旧词
    array([[1, 1, 1, 0],
           [1, 1, 1, 1]])
    """
    if n == 1:
        return None
    return np.arange(S)[None, :] <= np.arange(n)[:, None] + (S - n)  # (n, S)


def cached_grouped_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray,
                             cache: KVCache) -> tuple[np.ndarray, np.ndarray]:
    """逐词生成的一步 GQA：把 n 个新词的 k、v 追加进 ``cache``，再让它们的 q 因果地看缓存里的全部 S 个词。

    Parameters
    ----------
    q : ndarray of shape (H, n, d_k)
    k : ndarray of shape (H_kv, n, d_k)
    v : ndarray of shape (H_kv, n, d_v)
    cache : KVCache
        批维度 ``(H_kv,)`` 的缓存（第 7 章）。只存 H_kv 组：比每个查询头一组小 G 倍。

    Returns
    -------
    out : ndarray of shape (H, n, d_v)
    weights : ndarray of shape (H, n, S)

    Raises
    ------
    TypeError
        ``cache`` 不是 KVCache，或输入不是实数数组。
    ValueError
        形状与缓存对不上、缓存放不下、H 不是 H_kv 的整数倍，或分数溢出。出错时缓存不变。

    Examples
    --------
    >>> cache = KVCache(capacity=4, d_k=2, batch_shape=(1,))
    >>> q, k, v = np.ones((2, 3, 2)), np.zeros((1, 3, 2)), np.arange(3.0).reshape(1, 3, 1) * np.ones(2)
    >>> out, w = cached_grouped_attention(q, k, v, cache)  # 3 个词一起进：因果的三角形
    >>> w[0].round(3), cache.length
    (array([[1.   , 0.   , 0.   ],
           [0.5  , 0.5  , 0.   ],
           [0.333, 0.333, 0.333]]), 3)
    """
    if not isinstance(cache, KVCache):
        raise TypeError(f"cache 必须是 KVCache（批维度 (H_kv,)），收到的是 {check.describe(cache)}。")
    q = check.as_real_array(q, "q", min_ndim=3)
    before = cache.length
    cache.append(k, v)  # 检查形状、容量（出错时缓存不变）
    try:
        return grouped_query_attention(q, cache.keys, cache.values, new_rows_mask(q.shape[-2], cache.length))
    except BaseException:
        cache.truncate(before)  # 要么全做、要么全不做
        raise
