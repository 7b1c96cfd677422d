"""读 GGUF 文件（llama.cpp / ggml 的模型格式）：元数据 (metadata) 的全部键值，和张量目录（名字、形状、类型、位置）。

格式（ggml 的 docs/gguf.md，第 3 版；全部小端）::

    "GGUF"  u32 版本 (3)  u64 张量个数  u64 键值个数
    键值 × n：字符串 键、u32 值的类型、值        字符串 = u64 字节数 + UTF-8 字节（没有结尾的 0）
              值的类型：0 u8、1 i8、2 u16、3 i16、4 u32、5 i32、6 f32、7 bool、8 字符串、9 数组、10 u64、11 i64、12 f64
              数组 = u32 元素的类型、u64 元素个数、元素 × 个数（可以嵌套）
    张量目录 × n：字符串 名字、u32 维数、u64 × 维数（第 0 维变化最快）、u32 ggml 类型、u64 偏移（从数据区开头算）
    填充到 general.alignment（默认 32）的整数倍，然后是数据区：每个张量的偏移都是对齐的整数倍

量化类型按块存：Q4_0、Q4_1、Q8_0 都是 32 个权重一块（``GGML_TYPES`` 里有每块的结构）。张量的形状在这里按 NumPy
的习惯写（和文件里的维度顺序相反：``token_embd.weight`` 在文件里是 (576, 49152)，这里是 (49152, 576)，一行一个词元）；
``GGUF.blocks(name)`` 给出它原样的字节（量化的张量是一行行的块，还没还原成浮点数——还原留给第 12 章）。

按 issue 41 的规则：个数、字符串长度先和上限、和剩下的字节数比，再读；类型只认识 ``GGML_TYPES`` 里的；
张量的字节范围整体交给 ``validate.check_spans``（首尾相接、不重叠、不越界，对齐留出的空隙最多 alignment − 1 字节）；
每条报错都是中文，写明是哪个文件。本模块只依赖 NumPy 和标准库。
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from .validate import Span, check_spans, view

__all__ = ["GGML_TYPES", "GGMLType", "TensorInfo", "GGUF", "read_gguf", "MAX_COUNT", "MAX_STRING_BYTES", "MAX_DIMS"]


@dataclass(frozen=True)
class GGMLType:
    """一种 ggml 张量类型：名字、一块的 NumPy 结构（非量化的类型一块就是一个数）、一块有几个数。"""

    name: str
    block: np.dtype
    per_block: int


GGML_TYPES = {
    0: GGMLType("F32", np.dtype("<f4"), 1),
    1: GGMLType("F16", np.dtype("<f2"), 1),
    2: GGMLType("Q4_0", np.dtype([("d", "<f2"), ("qs", "u1", (16,))]), 32),  # w = (4 位 − 8)·d
    3: GGMLType("Q4_1", np.dtype([("d", "<f2"), ("m", "<f2"), ("qs", "u1", (16,))]), 32),  # w = 4 位·d + m
    8: GGMLType("Q8_0", np.dtype([("d", "<f2"), ("qs", "i1", (32,))]), 32),  # w = 8 位·d
}

MAX_COUNT = 1_000_000  # 张量个数、键值个数、一个数组的元素个数的上限（SmolLM2：272 个张量、33 个键值、49152 个词元）
MAX_STRING_BYTES = 16 * 1024**2  # 一个字符串最多 16 MiB（最长的是对话模板，约 1 KB）
MAX_KEY_BYTES = 65_535  # 规范：键最多 2^16 − 1 字节
MAX_NAME_BYTES = 64  # 规范：张量名字最多 64 字节
MAX_DIMS = 4  # ggml 的张量最多 4 维
MAX_DEPTH = 4  # 数组里套数组最多几层（规范允许嵌套；再深多半是坏文件）
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 10: "<Q", 11: "<q", 12: "<d"}
_BOOL, _STRING, _ARRAY = 7, 8, 9
_MIN_BYTES = {**{t: struct.calcsize(f) for t, f in _SCALARS.items()}, _BOOL: 1, _STRING: 8, _ARRAY: 12}


@dataclass(frozen=True)
class TensorInfo:
    """张量目录里的一项。``shape`` 按 NumPy 的顺序（最后一维变化最快），``offset`` 从文件开头算，``nbytes`` 是字节数。"""

    name: str
    shape: tuple[int, ...]
    dtype: str
    offset: int
    nbytes: int


@dataclass(frozen=True)
class GGUF:
    """读好的 GGUF 文件：版本、元数据（键 → 值；数组是 Python 的列表）、张量目录、对齐、原始字节和文件的称呼。"""

    version: int
    metadata: MappingProxyType
    tensors: MappingProxyType  # 名字 → TensorInfo，按文件里的顺序
    alignment: int
    data: bytes
    source: str

    def blocks(self, name: str) -> np.ndarray:
        """一个张量原样的数据（只读视图，不复制）：F32/F16 是形状 ``shape`` 的数组，量化的类型是
        ``(*shape[:-1], shape[-1] // 32)`` 个块（结构见 ``GGML_TYPES``）。

        Raises
        ------
        ValueError
            没有这个张量。
        """
        if name not in self.tensors:
            raise ValueError(f"{self.source} 的张量目录里没有 {name!r}（共 {len(self.tensors)} 个，"
                             f"例如 {'、'.join(list(self.tensors)[:3])}）。")
        return view(self.data, _span(self.tensors[name]))


def _ggml_type(name: str) -> GGMLType:
    return next(t for t in GGML_TYPES.values() if t.name == name)


def _span(info: TensorInfo) -> Span:
    kind = _ggml_type(info.dtype)
    shape = (*info.shape[:-1], info.shape[-1] // kind.per_block) if info.shape else ()
    return Span(info.name, kind.block, shape, info.offset, info.offset + info.nbytes)


class _Reader:
    """从头往后读；每次读之前先看剩下的字节够不够，个数和长度先和上限比。"""

    def __init__(self, data: bytes, source: str) -> None:
        self.data, self.pos, self.source = data, 0, source

    def fail(self, what: str) -> ValueError:
        return ValueError(f"{self.source} {what}（在第 {self.pos} 字节处）。文件损坏了，或者不是 GGUF 文件。")

    def take(self, fmt: str):
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            raise ValueError(f"{self.source} 被截断了：读到第 {self.pos} 字节时还需要 {size} 字节，"
                             f"文件只有 {len(self.data)} 字节。")
        out = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return out[0] if len(out) == 1 else out

    def count(self, what: str, min_bytes: int, fmt: str = "<Q") -> int:
        """一个个数：不超过 ``MAX_COUNT``，也不超过剩下的字节按每个至少 ``min_bytes`` 字节算能放下的个数。"""
        n = self.take(fmt)
        room = (len(self.data) - self.pos) // max(min_bytes, 1)
        if n > MAX_COUNT or n > room:
            raise self.fail(f"的{what}是 {n}，超过了上限 {MAX_COUNT} 或剩下的字节能放下的 {room} 个")
        return n

    def string(self, what: str, limit: int = MAX_STRING_BYTES) -> str:
        n = self.take("<Q")
        if n > limit or n > len(self.data) - self.pos:
            raise self.fail(f"里{what}的长度是 {n} 字节，超过了上限 {limit} 或剩下的 {len(self.data) - self.pos} 字节")
        raw = self.data[self.pos:self.pos + n]
        self.pos += n
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self.fail(f"里{what}不是合法的 UTF-8") from None

    def value(self, kind: int, key: str, depth: int = 0):
        if kind in _SCALARS:
            return self.take(_SCALARS[kind])
        if kind == _BOOL:
            b = self.take("<B")
            if b > 1:
                raise self.fail(f"里键 {key!r} 的布尔值是 {b}：只能是 0 或 1")
            return bool(b)
        if kind == _STRING:
            return self.string(f"键 {key!r} 的字符串")
        if kind == _ARRAY and depth < MAX_DEPTH:
            inner = self.take("<I")
            if inner not in _MIN_BYTES:
                raise self.fail(f"里键 {key!r} 的数组元素类型码是 {inner}：只认识 0–12")
            n = self.count(f"键 {key!r} 的数组长度", _MIN_BYTES[inner])
            return [self.value(inner, key, depth + 1) for _ in range(n)]
        raise self.fail(f"里键 {key!r} 的值类型码是 {kind}：只认识 0–12（数组最多套 {MAX_DEPTH} 层）")


def read_gguf(data: bytes, source: str = "GGUF 文件") -> GGUF:
    """解析整个 GGUF 文件：全部元数据和张量目录（张量的数据不复制、不还原）。``source`` 写进报错。

    Raises
    ------
    TypeError
        ``data`` 不是 bytes。
    ValueError
        开头不是 "GGUF"、版本不是 3、文件被截断、个数或长度超过上限、字符串不是 UTF-8、键或张量名字重复、
        值的类型码不认识、布尔值不是 0/1、对齐不是 8 的正整数倍、维数超过 4、张量类型不认识、第 0 维不是块大小的
        整数倍、偏移没有对齐、字节范围重叠乱序越界或有空洞，或末尾有多余的字节。
    """
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"data 必须是 bytes（GGUF 文件的内容），收到的是 {type(data).__name__}。")
    data = bytes(data)
    r = _Reader(data, source)
    if data[:4] != b"GGUF":
        raise ValueError(f"{source} 不是 GGUF 文件：开头 4 字节应是 b'GGUF'，收到的是 {data[:4]!r}。")
    r.take("<4s")
    version = r.take("<I")
    if version != 3:
        raise r.fail(f"的版本是 {version}：本书只读第 3 版")
    n_tensors = r.count("张量个数", 8 + 4 + 8 + 4 + 8)
    n_kv = r.count("键值个数", 8 + 4 + 1)
    metadata = {}
    for _ in range(n_kv):
        key = r.string("键", MAX_KEY_BYTES)
        if key in metadata:
            raise r.fail(f"里键 {key!r} 出现了两次")
        metadata[key] = r.value(r.take("<I"), key)
    alignment = metadata.get("general.alignment", 32)
    if type(alignment) is not int or alignment <= 0 or alignment % 8:
        raise r.fail(f"的 general.alignment 是 {alignment!r}：应是 8 的正整数倍")
    entries = [_tensor_entry(r) for _ in range(n_tensors)]
    data_start = r.pos + (-r.pos) % alignment
    tensors = {}
    for name, dims, type_id, offset in entries:
        if name in tensors:
            raise ValueError(f"{source} 的张量目录里 {name!r} 出现了两次。")
        tensors[name] = _tensor_info(name, dims, type_id, offset, data_start, alignment, source)
    check_spans([_span(t) for t in tensors.values()], data_start, len(data), source, padding=alignment - 1)
    return GGUF(version, MappingProxyType(metadata), MappingProxyType(tensors), alignment, data, source)


def _tensor_entry(r: _Reader) -> tuple[str, tuple[int, ...], int, int]:
    name = r.string("张量的名字", MAX_NAME_BYTES)
    n_dims = r.take("<I")
    if not 1 <= n_dims <= MAX_DIMS:
        raise r.fail(f"里张量 {name!r} 的维数是 {n_dims}：应在 1 到 {MAX_DIMS} 之间")
    dims = r.take(f"<{n_dims}Q")
    dims = dims if isinstance(dims, tuple) else (dims,)
    type_id, offset = r.take("<IQ")
    return name, dims, type_id, offset


def _tensor_info(name: str, dims: tuple[int, ...], type_id: int, offset: int, data_start: int, alignment: int,
                 source: str) -> TensorInfo:
    """目录里的一项 → ``TensorInfo``：类型认识、第 0 维是块大小的整数倍、偏移对齐；字节数按形状和类型算。"""
    if type_id not in GGML_TYPES:
        known = "、".join(f"{k}（{t.name}）" for k, t in GGML_TYPES.items())
        raise ValueError(f"{source} 里张量 {name!r} 的类型码是 {type_id}：只认识 {known}。")
    kind = GGML_TYPES[type_id]
    if dims[0] % kind.per_block:
        raise ValueError(f"{source} 里张量 {name!r} 的第 0 维是 {dims[0]}：{kind.name} 按 {kind.per_block} 个一块存，"
                         "它必须是块大小的整数倍。")
    if offset % alignment:
        raise ValueError(f"{source} 里张量 {name!r} 的偏移 {offset} 不是对齐 {alignment} 的整数倍。")
    count = 1
    for d in dims:
        count *= d  # Python 的整数不会溢出；太大时 check_spans 会发现它超出文件
    nbytes = count // kind.per_block * kind.block.itemsize
    return TensorInfo(name, tuple(reversed(dims)), kind.name, data_start + offset, nbytes)
