"""pretrained/safetensors.py：测试自己写的小文件——读得对、只读需要的、不复制；每一种坏文件都有中文报错。"""

import json
import struct

import numpy as np

from transformer_lab.pretrained.safetensors import read_header, read_tensors

from helpers.errors import call, check_error, error_table_test
from helpers.tiny_models import safetensors_bytes

TENSORS = {"a": np.arange(6, dtype="<f4").reshape(2, 3), "ids": np.array([[0, 1, 2]], dtype="<i8"),
           "half": np.array([0.5, -2.0], dtype="<f2")}


def test_round_trip_keeps_names_shapes_dtypes_and_values():
    out = read_tensors(safetensors_bytes(TENSORS))
    assert list(out) == ["a", "ids", "half"]  # 顺序同文件，__metadata__ 不算张量
    for name, array in TENSORS.items():
        assert out[name].dtype == array.dtype and out[name].shape == array.shape
        np.testing.assert_array_equal(out[name], array)


def test_header_by_hand():
    """8 字节的小端长度，后面紧跟 JSON：手写一个文件，长度 = JSON 的字节数。"""
    text = json.dumps({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}).encode()
    data = struct.pack("<Q", len(text)) + text + struct.pack("<f", 2.5)
    header, start = read_header(data)
    assert start == 8 + len(text) and header["w"]["shape"] == [1]
    assert read_tensors(data)["w"].tolist() == [2.5]


def test_reads_only_what_is_asked_without_copying():
    data = safetensors_bytes(TENSORS)
    out = read_tensors(data, names=["ids"])
    assert list(out) == ["ids"]
    assert not out["ids"].flags.writeable  # 只读：看的是原来的字节
    assert np.shares_memory(out["ids"], np.frombuffer(data, np.uint8))


def test_a_broken_tensor_nobody_asks_for_still_rejects_the_file():
    """整个文件一起查（同参考实现）：只读 "a" 也不行，另一项的 dtype 不认识、字节范围与 "a" 重叠。"""
    data = safetensors_bytes(TENSORS, {"broken": {"dtype": "BF16", "shape": [1], "data_offsets": [0, 2]}})
    check_error(lambda: read_tensors(data, names=["a"]), ValueError, r"'broken' 的 dtype='BF16' 不支持")
    data = safetensors_bytes(TENSORS, {"broken": {"dtype": "F16", "shape": [1], "data_offsets": [0, 2]}})
    check_error(lambda: read_tensors(data, names=["a"]), ValueError, r"张量 '(a|broken)' 的数据从第 \d+ 字节开始，与.*重叠")


def test_source_name_appears_in_errors():
    err = check_error(lambda: read_tensors(b"", source="某个 wheel 里的 model.safetensors"), ValueError, r"太短")
    assert "某个 wheel 里的 model.safetensors" in str(err)


def good():
    return safetensors_bytes({"w": np.ones((2, 2), "<f4")})


def with_header(header: dict, payload: bytes = b"\0" * 16) -> bytes:
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + payload


ERROR_CASES = [
    ("too-short", lambda: read_tensors(b"\x01\x02"), ValueError, r"太短：只有 2 字节.*截断"),
    ("header-longer-than-file", lambda: read_tensors(struct.pack("<Q", 10_000) + b"{}"), ValueError,
     r"JSON 目录有 10000 字节，但文件一共只有 10 字节"),
    ("truncated-header", lambda: read_tensors(good()[:20]), ValueError, r"JSON 目录有 \d+ 字节.*截断"),
    ("bad-json", lambda: read_tensors(struct.pack("<Q", 3) + b"{x}"), ValueError, r"JSON 目录读不出来"),
    ("header-not-dict", lambda: read_tensors(struct.pack("<Q", 2) + b"[]"), ValueError, r"应是一个字典.*list"),
    ("bad-dtype", lambda: read_tensors(with_header({"w": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}})),
     ValueError, r"'w' 的 dtype='BF16' 不支持。能读的是：F64、F32"),
    ("size-mismatch", lambda: read_tensors(with_header({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})),
     ValueError, r"'w' 的字节数对不上：shape=\[3\]、dtype=F32 应占 12 字节，data_offsets=\[0, 8\] 却是 8 字节"),
    ("data-truncated", lambda: read_tensors(good()[:-4]), ValueError, r"'w' 的数据在第 \d+–\d+ 字节.*截断"),
    ("missing-tensor", lambda: read_tensors(good(), names=["w", "v", "u"]), ValueError,
     r"里没有这些张量：v、u。文件里有 1 个，例如 w"),
    ("incomplete-entry", lambda: read_tensors(with_header({"w": {"dtype": "F32"}})), ValueError,
     r"'w' 的说明不完整：需要 dtype、shape、data_offsets"),
    ("not-bytes", lambda: read_tensors("w"), TypeError, r"data 必须是 bytes.*str"),
    ("header-too-short", call(read_header, b"\x01\x02", source="x.safetensors"), ValueError,
     r"x\.safetensors 太短：只有 2 字节，连开头表示目录长度的 8 字节都不够。文件可能被截断了"),
    ("header-length-past-the-end", call(read_header, struct.pack("<Q", 10_000) + b"{}"), ValueError,
     r"safetensors 文件 的文件头说 JSON 目录有 10000 字节，但文件一共只有 10 字节：文件被截断了"),
    ("header-bad-json", call(read_header, struct.pack("<Q", 3) + b"{x}"), ValueError,
     r"safetensors 文件 的 JSON 目录读不出来（.*）：文件损坏，或者不是 safetensors 文件"),
    ("header-bad-utf8", call(read_header, struct.pack("<Q", 2) + b"\xff\xfe"), ValueError, r"JSON 目录读不出来"),
    ("header-a-list", call(read_header, struct.pack("<Q", 2) + b"[]"), ValueError,
     r"safetensors 文件 的 JSON 目录应是一个字典（名字 → 张量说明），收到的是 list"),
    ("header-too-large", call(read_header, struct.pack("<Q", 100_000_001) + b"{}"), ValueError,
     r"JSON 目录有 100000001 字节，超过了上限 100000000 字节"),
    ("header-duplicate-name", call(read_header, struct.pack("<Q", 16) + b'{"w": 1, "w": 2}'), ValueError,
     r"JSON 目录读不出来（名字重复：'w'）"),
    ("negative-shape", lambda: read_tensors(with_header({"w": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 0]}},
                                                        b"")), ValueError, r"'w' 的 shape 应是非负整数的列表，收到 \[-2\]"),
    ("float-shape", lambda: read_tensors(with_header({"w": {"dtype": "F32", "shape": [4.0], "data_offsets": [0, 16]}})),
     ValueError, r"'w' 的 shape 应是非负整数的列表，收到 \[4\.0\]"),
    ("bad-offsets", lambda: read_tensors(with_header({"w": {"dtype": "F32", "shape": [4], "data_offsets": [-4, 12]}})),
     ValueError, r"'w' 的 data_offsets 应是两个非负整数 \[开始, 结束\]，收到 \[-4, 12\]"),
    ("bad-metadata", lambda: read_tensors(safetensors_bytes({}, {"__metadata__": {"n": 1}})), ValueError,
     r"__metadata__ 应是字符串到字符串的字典，收到 \{'n': 1\}"),
    ("trailing-bytes", lambda: read_tensors(good() + b"\0\0"), ValueError, r"末尾多出 2 字节"),
    ("hole", lambda: read_tensors(with_header({"w": {"dtype": "F32", "shape": [3], "data_offsets": [4, 16]}})),
     ValueError, r"'w' 的数据从第 \d+ 字节开始，与数据区的开头之间空着 4 字节（最多允许 0）：字节范围中间不能有空洞"),
    ("overlap", lambda: read_tensors(with_header({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]},
                                                  "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}})),
     ValueError, r"'b' 的数据从第 \d+ 字节开始，与张量 'a'重叠"),
]
test_documented_errors = error_table_test(ERROR_CASES)
