"""pretrained/quant.py：把 GGUF 的块还原成 float32。

- 手工的块：字节用 ``struct.pack`` 一个字段一个字段地写，期望的浮点数手算（fp16 的 0.25、−1 都是精确的）；
- 慢参照：逐块、逐个权重地按 ggml 的公式（``ggml-common.h`` 的 block_q4_1 / block_q8_0）算，和向量化的实现逐位相同；
- 坏块（Hypothesis）：任意字节拼成的块，要么还原出有限的 float32 并与慢参照相同，要么是写明张量的中文 ValueError
  （刻度是 inf/NaN）；从不静默地给出 NaN；
- 真文件：SmolLM2 的 272 个张量都能还原，Q4_1 的权重只取每块 16 个值之一；报错表。
"""

import math
import struct
import zipfile

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from transformer_lab.pretrained import quant
from transformer_lab.pretrained.gguf import GGML_TYPES, read_gguf
from transformer_lab.pretrained.quant import dequantize

from helpers.errors import CHINESE, call, error_table_test
from helpers.real_models import real_wheel
from helpers.tiny_gguf import gguf_bytes

Q4_1, Q8_0 = GGML_TYPES[3].block, GGML_TYPES[8].block


def blocks_from(raw: bytes, dtype) -> np.ndarray:
    return np.frombuffer(raw, dtype)


def test_q4_1_block_by_hand():
    """d = 0.25，m = −1（fp16 0x3400、0xBC00）；第 j 字节 = (j+1 的低 4 位) | ((15 − j) << 4)。"""
    qs = bytes(((j + 1) & 0x0F) | ((15 - j) << 4) for j in range(16))
    raw = struct.pack("<HH", 0x3400, 0xBC00) + qs
    w = dequantize(blocks_from(raw, Q4_1), "Q4_1")
    expected = [((j + 1) % 16) * 0.25 - 1 for j in range(16)] + [(15 - j) * 0.25 - 1 for j in range(16)]
    assert w.dtype == np.float32 and w.tolist() == expected
    assert w[0] == -0.75 and w[15] == -1.0 and w[16] == 2.75  # 1·0.25 − 1；16 的低 4 位是 0；15·0.25 − 1


def test_q8_0_block_by_hand():
    """d = 0.5（fp16 0x3800）；qs = −16, −15, …, 15。"""
    raw = struct.pack("<H", 0x3800) + struct.pack("<32b", *range(-16, 16))
    w = dequantize(blocks_from(raw, Q8_0), "Q8_0")
    assert w.tolist() == [0.5 * q for q in range(-16, 16)]


def test_f16_and_f32_by_hand():
    raw16 = struct.pack("<3H", 0x3C00, 0xC000, 0x3555)  # 1、−2、0.333251953125
    assert dequantize(np.frombuffer(raw16, "<f2"), "F16").tolist() == [1.0, -2.0, 0.333251953125]
    w = dequantize(np.frombuffer(struct.pack("<2f", 1.5, -0.25), "<f4"), "F32")
    assert w.tolist() == [1.5, -0.25] and w.flags.writeable  # F32 也复制一份：可写，不指向文件的字节


def slow_reference(raw: bytes, kind: str) -> list[float]:
    """逐块、逐个权重（ggml 的 dequantize_row_q4_1 / q8_0）；块坏了返回 None。"""
    out = []
    size = {"Q4_1": 20, "Q8_0": 34}[kind]
    for b in range(len(raw) // size):
        block = raw[b * size:(b + 1) * size]
        if kind == "Q4_1":
            d, m = struct.unpack("<2e", block[:4])
            if not (math.isfinite(d) and math.isfinite(m)):
                return None
            qs = block[4:]
            out += [float(np.float32(np.float32(qs[j] & 0x0F) * np.float32(d)) + np.float32(m)) for j in range(16)]
            out += [float(np.float32(np.float32(qs[j] >> 4) * np.float32(d)) + np.float32(m)) for j in range(16)]
        else:
            (d,) = struct.unpack("<e", block[:2])
            if not math.isfinite(d):
                return None
            out += [float(np.float32(q) * np.float32(d)) for q in struct.unpack("<32b", block[2:])]
    return out


@given(st.sampled_from(["Q4_1", "Q8_0"]), st.integers(1, 4), st.data())
def test_any_bytes_give_the_slow_reference_or_a_chinese_error(kind, n_blocks, data):
    """任意字节（含 fp16 的 inf、NaN、次正规数）：和逐元素的参照逐位相同，或者报中文错。"""
    size = {"Q4_1": 20, "Q8_0": 34}[kind]
    raw = data.draw(st.binary(min_size=size * n_blocks, max_size=size * n_blocks))
    expected = slow_reference(raw, kind)
    blocks = blocks_from(raw, GGML_TYPES[{"Q4_1": 3, "Q8_0": 8}[kind]].block)
    if expected is None:
        with pytest.raises(ValueError, match=r"w\.bad 的 d（刻度）|w\.bad 的 m（最小值）") as info:
            dequantize(blocks, kind, "w.bad")
        assert CHINESE.search(str(info.value))
    else:
        w = dequantize(blocks, kind, "w.bad")
        assert np.isfinite(w).all() and w.tolist() == expected


@given(st.integers(0, 10**6), st.integers(1, 3), st.integers(1, 3))
def test_rows_of_blocks_keep_their_shape(seed, rows, per_row):
    rng = np.random.default_rng(seed)
    raw = b"".join(struct.pack("<2e", rng.uniform(0, 1), rng.uniform(-1, 0)) + rng.bytes(16)
                   for _ in range(rows * per_row))
    blocks = blocks_from(raw, Q4_1).reshape(rows, per_row)
    w = dequantize(blocks, "Q4_1")
    assert w.shape == (rows, 32 * per_row)
    assert w.reshape(-1).tolist() == slow_reference(raw, "Q4_1")


def test_tensor_reads_a_tiny_file():
    """一个 Q4_1 张量 (2, 32)（文件里的维度是 (32, 2)）和一个 F16 向量。"""
    q41 = b"".join(struct.pack("<HH", 0x3C00, 0) + bytes([0x10] * 16) for _ in range(2))  # d = 1，m = 0：低 0、高 1
    g = read_gguf(gguf_bytes([], [("w", (32, 2), 3, q41), ("b", (3,), 1, struct.pack("<3e", 1, 2, 3))]))
    assert quant.tensor(g, "w").tolist() == [[0.0] * 16 + [1.0] * 16] * 2
    assert quant.tensor(g, "b").tolist() == [1.0, 2.0, 3.0]


def test_every_tensor_of_the_real_file():
    path = real_wheel("SmolLM2-135M-Instruct")
    from transformer_lab.pretrained.registry import MODELS
    info = MODELS["SmolLM2-135M-Instruct"]
    with zipfile.ZipFile(path) as z:
        g = read_gguf(z.read(info.members["weights"]))
    w = quant.tensor(g, "blk.0.attn_q.weight")
    assert w.shape == (576, 576) and w.dtype == np.float32
    assert len(np.unique(w[0, :32])) <= 16  # 一块 32 个权重只有 16 种取值：4 位
    e = quant.tensor(g, "token_embd.weight")
    assert e.shape == (49152, 576) and len(np.unique(e[0, :32])) <= 32
    np.testing.assert_array_equal(quant.tensor(g, "output_norm.weight"), g.blocks("output_norm.weight"))


V, T = ValueError, TypeError
GOOD = blocks_from(struct.pack("<2e", 1, 0) + bytes(16), Q4_1)
ERROR_CASES = [
    ("kind-unknown", call(dequantize, GOOD, "Q4_0"), V, r"kind='Q4_0' 不存在"),
    ("blocks-type", call(dequantize, b"\0" * 20, "Q4_1"), T, r"blocks 必须是 NumPy 数组"),
    ("blocks-dtype", call(dequantize, GOOD, "Q8_0"), T, r"blocks 的 dtype 应是 Q8_0 的块"),
    ("d-inf", call(dequantize, blocks_from(struct.pack("<2e", math.inf, 0) + bytes(16), Q4_1), "Q4_1", "w"), V,
     r"w 的 d（刻度）里有 1 个 inf 或 NaN"),
    ("m-nan", call(dequantize, blocks_from(struct.pack("<2e", 1, math.nan) + bytes(16), Q4_1), "Q4_1"), V,
     r"张量 的 m（最小值）里有 1 个 inf 或 NaN"),
    ("f16-nan", call(dequantize, np.array([1, np.nan], "<f2"), "F16", "b"), V, r"b 的值里有 1 个 inf 或 NaN"),
    ("tensor-missing", call(quant.tensor, read_gguf(gguf_bytes([], [("b", (1,), 0, bytes(4))])), "w"), V,
     r"张量目录里没有 'w'"),
    ("tensor-q4-0", call(quant.tensor, read_gguf(gguf_bytes([], [("w", (32,), 2, bytes(18))])), "w"), V,
     r"张量 'w' 的类型是 Q4_0：本书只还原 F32、F16、Q4_1、Q8_0"),
]
test_documented_errors = error_table_test(ERROR_CASES)
