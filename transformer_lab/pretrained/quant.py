"""解量化 (dequantization)：把 GGUF 里按块存的 4 位、8 位、16 位权重还原成 float32。

量化 (quantization) 是用更少的位数记一个权重：每 32 个权重一块，块里存一两个 fp16 的“刻度”，每个权重只记一个小整数。
块的布局照 ggml 的源码（``ggml-common.h`` 的 ``block_q4_1``、``block_q8_0``，``gguf-py/gguf/quants.py`` 的
``dequantize_blocks``），结构写在 ``gguf.GGML_TYPES`` 里::

    Q4_1  d (fp16) · m (fp16) · qs (16 字节)    w[j] = (qs[j] 的低 4 位) · d + m,  w[j + 16] = (qs[j] 的高 4 位) · d + m
    Q8_0  d (fp16) · qs (32 个 int8)             w[j] = qs[j] · d
    F16   一个 fp16 就是一个权重                  F32   一个 float32 就是一个权重（原样复制）

SmolLM2 的 30 层里每个矩阵是 Q4_1（每个权重 4 位，加上每块 4 字节的 d 和 m，平均 5 位），词嵌入表是 Q8_0（平均 8.5 位），
RMSNorm 的权重是 F32。

一块坏了（d、m 是 inf 或 NaN，F16/F32 的值是 inf 或 NaN）就报中文的 ``ValueError``，写明是哪个张量：
还原出来的 float32 一定是有限数（fp16 最大 65504，15 × 65504 + 65504 和 127 × 65504 都远在 float32 的范围里）。
本模块只依赖 NumPy（和本层的 ``gguf``）。形状字母：N 块数（或前导维度）。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from .gguf import GGML_TYPES, GGUF

__all__ = ["dequantize", "tensor", "KINDS"]

KINDS = tuple(t.name for t in GGML_TYPES.values() if t.name != "Q4_0")  # 本模块会还原的类型：F32、F16、Q4_1、Q8_0
_BLOCK = {t.name: t.block for t in GGML_TYPES.values()}


def _finite(x: np.ndarray, what: str, name: str) -> None:
    if not np.isfinite(x).all():
        bad = int(np.size(x) - np.count_nonzero(np.isfinite(x)))
        raise ValueError(f"{name} 的{what}里有 {bad} 个 inf 或 NaN：还原出来的权重不会是有限数。文件损坏了。")


def _q4_1(blocks: np.ndarray, name: str) -> np.ndarray:
    d = blocks["d"].astype(np.float32)[..., None]  # (..., N, 1) 每块的刻度
    m = blocks["m"].astype(np.float32)[..., None]  # (..., N, 1) 每块的最小值
    _finite(d, " d（刻度）", name)
    _finite(m, " m（最小值）", name)
    qs = blocks["qs"]  # (..., N, 16) 每字节两个 4 位数
    out = np.empty((*blocks.shape, 32), dtype=np.float32)  # (..., N, 32)
    np.multiply(qs & 0x0F, d, out=out[..., :16])  # 前 16 个权重：低 4 位 · d
    np.multiply(qs >> 4, d, out=out[..., 16:])  # 后 16 个权重：高 4 位 · d
    out += m  # 写进新数组：一遍乘、一遍加，不另造中间数组
    return out  # (..., N, 32)


def _q8_0(blocks: np.ndarray, name: str) -> np.ndarray:
    d = blocks["d"].astype(np.float32)[..., None]  # (..., N, 1)
    _finite(d, " d（刻度）", name)
    out = np.empty((*blocks.shape, 32), dtype=np.float32)  # (..., N, 32)
    np.multiply(blocks["qs"], d, out=out)  # int8 · float32 → float32
    return out


def _plain(values: np.ndarray, name: str) -> np.ndarray:
    out = values.astype(np.float32)  # 新数组：F32 也复制一份（只读的文件字节不能交给会改数组的代码）
    _finite(out, "值", name)
    return out


def dequantize(blocks: np.ndarray, kind: str, name: str = "张量") -> np.ndarray:
    """把 ``GGUF.blocks(name)`` 给出的原样数据还原成 float32。

    Parameters
    ----------
    blocks : ndarray
        F32/F16：形状 (..., n) 的 ``<f4``/``<f2`` 数组；Q4_1/Q8_0：形状 (..., N) 的块（结构体 dtype，见 ``gguf.GGML_TYPES``）。
    kind : {"F32", "F16", "Q4_1", "Q8_0"}
        ggml 的类型名（``TensorInfo.dtype``）。
    name : str, default "张量"
        报错里怎么称呼它（例如张量的名字）。

    Returns
    -------
    ndarray of float32
        F32/F16：与 ``blocks`` 同形状；量化的类型：(..., N × 32)，每块展开成 32 个数。新数组，可写。

    Raises
    ------
    TypeError
        ``blocks`` 不是 NumPy 数组，或 dtype 不是这种类型的块。
    ValueError
        ``kind`` 不认识，或刻度、值里有 inf/NaN（文件损坏了）。

    Examples
    --------
    一块 Q8_0：d = 0.5，qs = 0, 1, ..., 31，所以 w[j] = 0.5 j。

    >>> block = np.zeros(1, dtype=GGML_TYPES[8].block)
    >>> block["d"], block["qs"] = 0.5, np.arange(32)
    >>> dequantize(block, "Q8_0")[:4]
    array([0. , 0.5, 1. , 1.5], dtype=float32)

    一块 Q4_1：d = 0.25，m = −1；第 0 个字节 0x21 的低 4 位 1 是第 0 个权重，高 4 位 2 是第 16 个：
    1 × 0.25 − 1 = −0.75，2 × 0.25 − 1 = −0.5。

    >>> block = np.zeros(1, dtype=GGML_TYPES[3].block)
    >>> block["d"], block["m"], block["qs"][0, 0] = 0.25, -1.0, 0x21
    >>> w = dequantize(block, "Q4_1")
    >>> float(w[0]), float(w[16]), float(w[1])
    (-0.75, -0.5, -1.0)
    """
    kind = check.one_of(kind, "kind", KINDS)
    if not isinstance(blocks, np.ndarray):
        raise TypeError(f"blocks 必须是 NumPy 数组（GGUF.blocks 给出的原样数据），收到的是 {check.describe(blocks)}。")
    if blocks.dtype != _BLOCK[kind]:
        raise TypeError(f"blocks 的 dtype 应是 {kind} 的块 {_BLOCK[kind]}，收到的是 {blocks.dtype}。"
                        "提示：kind 要和张量目录里的类型一致（TensorInfo.dtype）。")
    if kind in ("F32", "F16"):
        return _plain(blocks, name)
    values = (_q4_1 if kind == "Q4_1" else _q8_0)(blocks, name)  # (..., N, 32)
    return values.reshape(*blocks.shape[:-1], -1)  # (..., N × 32)


def tensor(gguf: GGUF, name: str) -> np.ndarray:
    """GGUF 文件里一个张量的 float32 值，形状是张量目录里的形状（NumPy 的顺序，例如 ``token_embd.weight`` 是 (V, D)）。

    Raises
    ------
    ValueError
        没有这个张量、它的类型不是 ``KINDS`` 之一，或块坏了（见 ``dequantize``）。
    """
    blocks = gguf.blocks(name)
    info = gguf.tensors[name]
    if info.dtype not in KINDS:
        raise ValueError(f"{gguf.source} 里张量 {name!r} 的类型是 {info.dtype}：本书只还原 {'、'.join(KINDS)}。")
    return dequantize(blocks, info.dtype, f"{gguf.source} 里的张量 {name!r}").reshape(info.shape)
