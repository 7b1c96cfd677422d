"""测试自己写的小 GGUF 文件：用 ``struct.pack`` 一个字段一个字段地写（和包里的读取器没有共同代码），给读取器的
手算例子、坏文件的性质测试和报错表用。格式见 ggml 的 docs/gguf.md（第 3 版，小端）。"""

from __future__ import annotations

import struct

import numpy as np

# 值的类型码
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
FORMATS = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f", BOOL: "<B", U64: "<Q",
           I64: "<q", F64: "<d"}


def gguf_string(s: str | bytes) -> bytes:
    raw = s.encode("utf-8") if isinstance(s, str) else s
    return struct.pack("<Q", len(raw)) + raw


def gguf_value(kind: int, value, inner: int | None = None) -> bytes:
    """一个值（不带类型码）；数组写 ``inner``（元素的类型码）、长度和元素。"""
    if kind == STRING:
        return gguf_string(value)
    if kind == ARRAY:
        (inner_kind, inner_inner) = inner if isinstance(inner, tuple) else (inner, None)
        return struct.pack("<IQ", inner_kind, len(value)) + b"".join(gguf_value(inner_kind, v, inner_inner) for v in value)
    return struct.pack(FORMATS[kind], value)


def gguf_bytes(metadata: list[tuple], tensors: list[tuple], alignment: int = 32, version: int = 3,
               write_alignment: bool = False, tail: bytes = b"") -> bytes:
    """``metadata``：(键, 类型码, 值[, 数组元素的类型码])；``tensors``：(名字, 维度（文件的顺序，第 0 维最快）, ggml 类型码,
    原始字节[, 偏移])。偏移不写时按对齐依次排；数据区从目录之后对齐的位置开始。``tail`` 接在最后。"""
    meta = list(metadata) + ([("general.alignment", U32, alignment)] if write_alignment else [])
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(meta))
    for key, kind, value, *inner in meta:
        out += gguf_string(key) + struct.pack("<I", kind) + gguf_value(kind, value, inner[0] if inner else None)
    offsets, position = [], 0
    for t in tensors:
        offset = t[4] if len(t) > 4 else position
        offsets.append(offset)
        position = offset + len(t[3])
        position += (-position) % alignment
    for (name, dims, type_id, *_), offset in zip(tensors, offsets):
        out += gguf_string(name) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims)
        out += struct.pack("<IQ", type_id, offset)
    out += bytes((-len(out)) % alignment)
    body = bytearray()
    for (_, _, _, raw, *_), offset in zip(tensors, offsets):
        body += bytes(max(0, offset - len(body)))
        body[offset:offset + len(raw)] = raw
    return out + bytes(body) + tail


def q8_0_block(d: float, qs: list[int]) -> bytes:
    """一个 Q8_0 块：fp16 的 d，32 个 int8。"""
    return np.float16(d).tobytes() + np.array(qs, dtype=np.int8).tobytes()


def q4_1_block(d: float, m: float, nibbles: list[int]) -> bytes:
    """一个 Q4_1 块：fp16 的 d 和 m，32 个 4 位数打包成 16 字节（第 j 字节低 4 位是第 j 个，高 4 位是第 j + 16 个）。"""
    low, high = np.array(nibbles[:16], np.uint8), np.array(nibbles[16:], np.uint8)
    return np.float16(d).tobytes() + np.float16(m).tobytes() + (low | (high << 4)).astype(np.uint8).tobytes()


def small_gguf() -> bytes:
    """一个什么都有一点的小文件：每种标量、字符串、字符串数组、嵌套数组；F32 (2, 3)、Q8_0 一块、Q4_1 两块。"""
    metadata = [
        ("general.architecture", STRING, "llama"), ("a.u8", U8, 200), ("a.i8", I8, -5), ("a.u16", U16, 60000),
        ("a.i16", I16, -300), ("a.u32", U32, 4_000_000_000), ("a.i32", I32, -7), ("a.f32", F32, 0.5),
        ("a.bool", BOOL, 1), ("a.u64", U64, 2**40), ("a.i64", I64, -(2**40)), ("a.f64", F64, 0.25),
        ("tokenizer.ggml.tokens", ARRAY, ["Ġthe", "注意", ""], STRING),
        ("a.nested", ARRAY, [[1, 2], [3]], (ARRAY, I32)),
    ]
    f32 = np.arange(6, dtype="<f4").tobytes()
    q8 = q8_0_block(0.5, list(range(-16, 16)))
    q41 = q4_1_block(0.25, -1.0, list(range(16)) * 2) + q4_1_block(2.0, 0.0, [15] * 32)
    tensors = [("w.f32", (3, 2), 0, f32), ("w.q8", (32,), 8, q8), ("w.q41", (64, 1), 3, q41)]
    return gguf_bytes(metadata, tensors)
