"""分块注意力 (tiled attention)：用在线 softmax (online softmax) 一块一块地算注意力，不存 T × S 的分数矩阵。

普通的注意力先算出整张 T × S 的分数表，再逐行 softmax。T = S = 8192 时，光这一张 float64 的表就要
8192 × 8192 × 8 字节 = 512 MiB。FlashAttention 的想法是：键 (key) 分成长度为 ``block_size`` 的小块，
每个查询只记三样"流水账"，看完一块就更新一次，从不需要整张表：

- ``m``   目前见过的最大分数 (running max)，形状 (..., T, 1)
- ``l``   目前的 Σ e^{s_j - m} (running sum)，形状 (..., T, 1)
- ``acc`` 目前的 Σ e^{s_j - m} v_j (running output)，形状 (..., T, d_v)

推导（一行查询，一块新分数 s_blk、对应的值 v_blk）：

1. 新的最大值 m_new = max(m_old, max(s_blk))。
2. 旧账是按 e^{s - m_old} 记的；要换成按 e^{s - m_new} 记，每一项乘同一个数
   α = e^{m_old - m_new} ≤ 1（因为 e^{s - m_new} = e^{s - m_old} · e^{m_old - m_new}）。
3. l_new = α · l_old + Σ_j e^{s_blk,j - m_new}；acc_new = α · acc_old + Σ_j e^{s_blk,j - m_new} v_blk,j。
4. 所有块看完后 out = acc / l。分子分母都按同一个 m 记账，m 约掉，正好是 softmax(s) · v。

小数字走一遍（一个查询，四个键，分数 s = [0, 0, 1, 0]，值 v = [1, 2, 3, 4]，每块 2 个键）：

- 第 1 块 s = [0, 0]：m = 0，l = e^0 + e^0 = 2，acc = 1·1 + 1·2 = 3。
- 第 2 块 s = [1, 0] 把最大值抬到 1：α = e^{0-1} ≈ 0.3679，
  l = 0.3679·2 + e^0 + e^{-1} ≈ 2.1036，acc = 0.3679·3 + 1·3 + 0.3679·4 ≈ 5.5752。
- out = 5.5752 / 2.1036 ≈ 2.6502，与整行 softmax([0, 0, 1, 0]) · v 相同。

本模块只依赖 NumPy。形状字母：T 查询位置数，S 键位置数，d_k 查询/键长度，d_v 值长度。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from .attention import check_qkv

__all__ = ["tiled_attention", "tiled_attention_unchecked"]


def _check_causal_rows(mask: np.ndarray | None, T: int, S: int) -> None:
    """causal=True 时，每个查询 i 只能看键 j <= i + (S - T)；与 mask 合起来后每行仍要至少一个 True。"""
    if T > S:
        raise ValueError(
            f"causal=True 要求 T <= S，收到 T={T}, S={S}：第 0 个查询只能看键 j <= 0 + (S - T) = {S - T}，"
            "一个键也没有。提示：因果对齐是\"最后一个查询对齐最后一个键\"。"
        )
    if mask is None:
        return
    first = np.argmax(mask, axis=-1)  # (..., T) 每行第一个 True 的位置（as_mask 已保证每行有 True）
    blocked = first > np.arange(T) + (S - T)  # (..., T)
    if np.any(blocked):
        where = tuple(int(i) for i in np.argwhere(blocked)[0])
        raise ValueError(
            f"mask 与 causal=True 合起来后，位置 {where} 的一整行都是 False：这个查询允许看的键都在它的\"未来\"。"
            "每一行至少要有一个 True。"
        )


def _online_update(m, l, acc, s, v_blk):
    """在线 softmax 的一步（推导见模块说明）。m、l: (..., t, 1)；acc: (..., t, d_v)；s: (..., t, b)；v_blk: (..., b, d_v)。

    ``s``、``l``、``acc`` 都是本模块自己分配的临时数组，这里**就地**改写它们（从不碰调用者的输入）：
    在 (t, b) 的分数块上每多分配一次、多走一遍，都是两次矩阵乘之外的额外时间。
    整块被掩掉的行 (s 全是 -inf) 不变：用 m_safe 代替 -inf 做减法，避免 -inf - (-inf) = NaN。
    """
    m_new = np.maximum(m, np.max(s, axis=-1, keepdims=True))  # (..., t, 1)
    m_safe = np.where(np.isneginf(m_new), 0.0, m_new)  # (..., t, 1) 仍是 -inf 的行用 0 代替
    alpha = np.exp(m - m_safe)  # (..., t, 1) 旧账的折算系数 α = e^{m_old - m_new}，m_old = -inf 时为 0
    p = np.exp(np.subtract(s, m_safe, out=s), out=s)  # (..., t, b) 就地 e^{s - m_new}；掩掉的位置 e^{-inf} = 0
    l *= alpha  # (..., t, 1) 旧账打折
    l += np.sum(p, axis=-1, keepdims=True)  # (..., t, 1) 记上新块
    acc *= alpha  # (..., t, d_v)
    acc += p @ v_blk  # (..., t, d_v)
    return m_new, l, acc


def _tile_mask(mask, causal, rows: slice, cols: slice, offset: int):
    """这一小块 (t × b) 的掩码；不需要掩码时返回 None。"""
    tile = None if mask is None else mask[..., rows, cols]  # (..., t, b)
    if causal and cols.stop - 1 > rows.start + offset:  # 块里有键在某个查询的"未来"
        i = np.arange(rows.start, rows.stop)[:, None]  # (t, 1)
        j = np.arange(cols.start, cols.stop)[None, :]  # (1, b)
        seen = j <= i + offset  # (t, b) True = 不在未来，可以看
        tile = seen if tile is None else tile & seen  # (..., t, b)
    return tile


def _row_parts(rows: slice, cols: slice, causal: bool, offset: int, parts: int = 4) -> list[slice]:
    """跨过对角线的键块里，把查询行再切成至多 ``parts`` 段：靠上的段看到的键更少，右边"未来"的那一截不算。"""
    if not causal or cols.stop - 1 <= rows.start + offset:  # 整块都不在任何查询的"未来"
        return [rows]
    edges = np.linspace(rows.start, rows.stop, min(parts, rows.stop - rows.start) + 1).astype(int)
    return [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]


def _query_block(q_blk, k_t, v, mask, causal: bool, rows: slice, block: int, offset: int, out_rows) -> None:
    """一块已乘过 scale 的查询 (rows) 依次看各个键块，结果写进 out_rows (..., t, d_v)。

    k_t = kᵀ，形状 (..., d_k, S)；offset = S - T（因果对齐：查询 i 看键 j <= i + offset）。
    """
    S, t, dtype = k_t.shape[-1], rows.stop - rows.start, out_rows.dtype
    m = np.full(out_rows.shape[:-1] + (1,), -np.inf, dtype=dtype)  # (..., t, 1)
    l = np.zeros(out_rows.shape[:-1] + (1,), dtype=dtype)  # (..., t, 1)
    acc = np.zeros(out_rows.shape, dtype=dtype)  # (..., t, d_v)
    buf = np.empty(out_rows.shape[:-2] + (t, min(block, S)), dtype=dtype)  # (..., t, b) 一块分数的缓冲区
    stop = min(S, rows.stop + offset) if causal else S  # 整块都在"未来"的键块直接跳过
    for j0 in range(0, stop, block):
        for sub in _row_parts(rows, slice(j0, min(j0 + block, stop)), causal, offset):
            cols = slice(j0, min(j0 + block, stop, sub.stop + offset) if causal else min(j0 + block, S))
            if cols.stop <= j0:  # 这一段查询在这个键块里一个键也看不到
                continue
            r = slice(sub.start - rows.start, sub.stop - rows.start)  # 块内的行号
            s = np.matmul(q_blk[..., r, :], k_t[..., cols], out=buf[..., r, : cols.stop - j0])  # (..., t', b')
            tile = _tile_mask(mask, causal, sub, cols, offset)
            if tile is not None:
                np.copyto(s, -np.inf, where=~tile)  # (..., t', b') 就地把不许看的位置设成 -inf
            m_new, _, _ = _online_update(m[..., r, :], l[..., r, :], acc[..., r, :], s, v[..., cols, :])
            m[..., r, :] = m_new  # l、acc 的这几行已就地更新
    np.divide(acc, l, out=out_rows)  # (..., t, d_v) 每行至少看了一个键，l > 0


def tiled_attention_unchecked(q, k, v, mask, scale, causal: bool, block: int) -> np.ndarray:
    """分块注意力的计算核（不做检查；KV 缓存也用它）。查询也按 ``block`` 分块，临时数组最大只有 (..., block, block)。"""
    scale = q.shape[-1] ** -0.5 if scale is None else scale  # Python float：不会把 float32 提升成 float64
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    dtype = np.result_type(q.dtype, k.dtype, v.dtype)
    out = np.empty(batch + (q.shape[-2], v.shape[-1]), dtype=dtype)  # (..., T, d_v)
    k_t = np.swapaxes(k, -1, -2)  # (..., d_k, S) 只是视图，不复制
    for i0 in range(0, q.shape[-2], block):
        rows = slice(i0, min(i0 + block, q.shape[-2]))
        q_blk = q[..., rows, :] * scale  # (..., t, d_k) 先缩放 q：t × d_k 次乘法，比缩放 t × S 个分数省
        _query_block(q_blk, k_t, v, mask, causal, rows, block, k.shape[-2] - q.shape[-2], out[..., rows, :])
    return out  # (..., T, d_v)


def tiled_attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    mask: np.ndarray | None = None,
    scale: float | None = None,
    causal: bool = False,
    block_size: int = 512,
) -> np.ndarray:
    """分块注意力 (tiled attention)：结果等于 softmax(q kᵀ · scale) v，但从不构造 T × S 的分数矩阵。

    查询和键都切成长度 ``block_size`` 的块；每个查询块依次看各个键块，用在线 softmax
    （见模块说明的推导）更新 running max ``m``、running sum ``l`` 和 running output ``acc``。
    临时数组最大是 (..., block_size, block_size)，所以额外内存与 T × S 无关。

    与 ``scaled_dot_product_attention`` 不同，这里**只返回 out，不返回注意力权重**：权重本身就是
    T × S 的矩阵，返回它就等于把省下的内存又花掉了——分块的意义正在于不把它造出来。

    Parameters
    ----------
    q : ndarray of shape (..., T, d_k)
        查询 (query)。
    k : ndarray of shape (..., S, d_k)
        键 (key)。
    v : ndarray of shape (..., S, d_v)
        值 (value)。前面的批维度 (batch dims) 可以互相广播。
    mask : ndarray of bool, broadcastable to (..., T, S), optional
        True = 允许关注。每一行至少要有一个 True（与 ``causal`` 合起来之后也是）。
    scale : float, optional
        分数乘的系数，默认 ``1 / √d_k``。
    causal : bool, default False
        True 时查询 i 只能看键 j <= i + (S - T)：最后一个查询对齐最后一个键，这正是带 KV 缓存
        逐词生成时的对齐方式（T 个新词接在 S - T 个旧词之后）。T == S 时就是下三角 ``causal_mask(T)``。
        整块都在对角线上方的键块直接跳过，不算；跨过对角线的键块再把查询行切成至多 4 段，
        每段只算到它最后一行能看的键为止（少算右上角那一截）。要求 T <= S。
    block_size : int, default 512
        每块的查询数和键数，正整数；不必整除 T 或 S，也可以比它们大（那就只有一块）。
        临时的分数块是 (..., block_size, block_size)：默认 512 时每个头 512 × 512 × 8 字节 = 2 MiB，
        与 T、S 无关。块太小，Python 循环和逐块的小操作就占了大头（在本书的测量里，H = 8、T = 2048 时
        block_size = 128 比 512 慢约四成）；块太大，省内存的好处就少了。

    Returns
    -------
    out : ndarray of shape (..., T, d_v)
        与 ``scaled_dot_product_attention(q, k, v, mask, scale)[0]`` 相同（float64 下相对误差约 1e-15）。
        float32 输入得到 float32 输出。

    Raises
    ------
    TypeError
        输入不是实数 NumPy 数组、mask 不是 bool 数组、``causal`` 不是 bool，或 ``block_size`` 不是整数。
    ValueError
        形状不匹配、数组为空、含 NaN/inf、mask 某行全为 False（含与 causal 合起来后）、
        causal=True 而 T > S、scale 不是正数，或 ``block_size`` <= 0。

    Examples
    --------
    模块说明里的小例子：分数 [0, 0, 1, 0]，每块 2 个键，第 2 块把最大值从 0 抬到 1。

    >>> import numpy as np
    >>> s, vals = np.array([0.0, 0.0, 1.0, 0.0]), np.array([1.0, 2.0, 3.0, 4.0])
    >>> m1 = s[:2].max()                                          # 第 1 块
    >>> l1, acc1 = np.exp(s[:2] - m1).sum(), np.exp(s[:2] - m1) @ vals[:2]
    >>> float(m1), float(l1), float(acc1)
    (0.0, 2.0, 3.0)
    >>> m2 = max(m1, s[2:].max())                                 # 第 2 块：最大值变成 1
    >>> alpha = np.exp(m1 - m2)                                   # 旧账打折 e^{0-1}
    >>> l2 = alpha * l1 + np.exp(s[2:] - m2).sum()
    >>> acc2 = alpha * acc1 + np.exp(s[2:] - m2) @ vals[2:]
    >>> round(float(alpha), 4), round(float(l2), 4), round(float(acc2), 4)
    (0.3679, 2.1036, 5.5752)
    >>> round(float(acc2 / l2), 4)
    2.6502
    >>> q = np.array([[1.0]])                                     # (T=1, d_k=1)
    >>> k = np.array([[0.0], [0.0], [1.0], [0.0]])                # (S=4, d_k=1)：q·k 正好是 s
    >>> tiled_attention(q, k, vals[:, None], scale=1.0, block_size=2).round(4)
    array([[2.6502]])
    """
    q, k, v, mask, scale = check_qkv(q, k, v, mask, scale)
    block_size = check.positive_int(block_size, "block_size")
    causal = check.boolean(causal, "causal")
    if causal:
        _check_causal_rows(mask, q.shape[-2], k.shape[-2])
    with np.errstate(over="ignore", invalid="ignore"):  # 分数溢出时下面统一报错，不让 NumPy 发警告
        out = tiled_attention_unchecked(q, k, v, mask, scale, causal, block_size)  # (..., T, d_v)
    return check.finite_result(out, "分块注意力的输出（分数 q·kᵀ × scale 或加权求和）", check.OVERFLOW_HINT)
