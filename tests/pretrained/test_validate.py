"""pretrained/validate.py：模型文件的结构检查。

- 性质测试（Hypothesis）：把一个小的合法 safetensors 文件随机弄坏（截断、翻转一个字节、交换/重叠偏移量、
  放大声明的大小、负的或巨大的形状、末尾多字节、中间留空洞），每一种要么被拒绝（中文 ValueError，写明文件名），
  要么仍然合法、并且读出来与下面另写的最小参考读取器（按 huggingface/safetensors 的规则）逐字节一样；
- E5S1 文件随机截断、翻转：只会得到中文 ValueError，不会有别的异常；
- 压缩炸弹：声明的解压后大小超过预算的文件，不解压就拒绝；
- 报错表。
"""

import io
import json
import struct
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from transformer_lab.pretrained import e5s1, validate
from transformer_lab.pretrained.safetensors import read_tensors
from transformer_lab.pretrained.validate import Span, check_spans, parse_json, read_member

from helpers.damage import damage
from helpers.errors import CHINESE, call, check_error, error_table_test
from helpers.tiny_models import e5s1_bytes

SOURCE = "坏文件.safetensors"
TENSORS = {"a": np.arange(6, dtype="<f4").reshape(2, 3), "ids": np.array([[7, -1]], dtype="<i8"),
           "h": np.array([0.5, -2.0, 3.0], dtype="<f2"), "empty": np.zeros((0, 4), "<f4")}
CODES = {np.dtype("<f4"): "F32", np.dtype("<i8"): "I64", np.dtype("<f2"): "F16"}


def build(header: dict, body: bytes) -> bytes:
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + body


def valid_parts() -> tuple[dict, bytes]:
    """一个合法文件的目录和数据区（写得与 helpers.tiny_models 不同：数据区倒着摆，目录顺序不按偏移量）。"""
    header, body = {"__metadata__": {"format": "pt"}}, b""
    for name, array in reversed(TENSORS.items()):
        raw = array.tobytes()
        header[name] = {"dtype": CODES[array.dtype], "shape": list(array.shape),
                        "data_offsets": [len(body), len(body) + len(raw)]}
        body += raw
    return dict(sorted(header.items())), body


# ---------------------------------------------------------------- 独立的最小参考读取器

ITEMSIZE = {"F64": 8, "F32": 4, "F16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1}


def reference_read(buf: bytes) -> dict | None:
    """按 safetensors 参考实现的规则读：合法就返回 名字 → (dtype 名, 形状, 原始字节)，否则 None。"""
    if len(buf) < 8:
        return None
    n = int.from_bytes(buf[:8], "little")
    if n > 100_000_000 or n + 8 > len(buf):
        return None

    def pairs(items):
        if len({k for k, _ in items}) < len(items):
            raise ValueError("dup")
        return dict(items)

    try:
        head = json.loads(str(buf[8:8 + n], "utf-8"), object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return None
    if type(head) is not dict:
        return None
    meta = head.pop("__metadata__", None)
    if meta is not None and (type(meta) is not dict or any(type(v) is not str for v in meta.values())):
        return None
    body = buf[8 + n:]
    rows = []
    for name, info in head.items():
        if type(info) is not dict or type(info.get("dtype")) is not str or info["dtype"] not in ITEMSIZE:
            return None
        shape, offs = info.get("shape"), info.get("data_offsets")
        if type(shape) is not list or any(type(d) is not int or d < 0 for d in shape):
            return None
        if type(offs) is not list or len(offs) != 2 or any(type(o) is not int or o < 0 for o in offs):
            return None
        rows.append((offs[0], offs[1], name, info["dtype"], tuple(shape)))
    rows.sort(key=lambda r: (r[0], r[1]))
    expected_start = 0
    for begin, end, _, code, shape in rows:  # Metadata::validate：首尾相接，字节数 = 元素个数 × 大小
        if begin != expected_start or end < begin:
            return None
        elements = 1
        for d in shape:
            elements *= d
        if end - begin != elements * ITEMSIZE[code]:
            return None
        expected_start = end
    if expected_start != len(body):  # read_metadata：最后一个偏移量必须正好是文件末尾
        return None
    return {name: (code, shape, bytes(body[begin:end])) for begin, end, name, code, shape in rows}


def test_reference_reader_can_fail():
    """反证：参考读取器自己也拒绝重叠、空洞、末尾多字节，接受合法文件。"""
    header, body = valid_parts()
    assert reference_read(build(header, body)) is not None
    assert reference_read(build(header, body + b"\0")) is None
    h = json.loads(json.dumps(header))
    h["a"]["data_offsets"] = [0, 24]
    assert reference_read(build(h, body)) is None


# ---------------------------------------------------------------- 随机弄坏文件

def mutate_header(header: dict, body: bytes, kind: str, i: int, delta: int) -> tuple[dict, bytes]:
    h = json.loads(json.dumps(header))
    names = [k for k in h if k != "__metadata__"]
    a, b = names[i % len(names)], names[(i + 1) % len(names)]
    if kind == "swap":  # 交换两个张量的偏移量
        h[a]["data_offsets"], h[b]["data_offsets"] = h[b]["data_offsets"], h[a]["data_offsets"]
    elif kind == "overlap":  # 把一个张量挪到另一个的位置上
        start = h[b]["data_offsets"][0]
        size = h[a]["data_offsets"][1] - h[a]["data_offsets"][0]
        h[a]["data_offsets"] = [start, start + size]
    elif kind == "inflate":  # 声明的大小变大（形状和结束位置一起）
        h[a]["shape"] = [d + delta for d in h[a]["shape"]] or [delta]
        h[a]["data_offsets"][1] += delta * 4
    elif kind == "negative":
        h[a]["shape"] = [-delta, *h[a]["shape"][1:]]
    elif kind == "huge":
        h[a]["shape"] = [2**62 + delta, 2**62]
    elif kind == "float-shape":
        h[a]["shape"] = [float(d) for d in h[a]["shape"]]
    elif kind == "trailing":
        body = body + bytes(delta)
    elif kind == "hole":  # 把 a 之后的数据整体后移，中间留 delta 个字节
        cut = h[a]["data_offsets"][1]
        body = body[:cut] + bytes(delta) + body[cut:]
        for k in names:
            if h[k]["data_offsets"][0] >= cut and k != a:
                h[k]["data_offsets"] = [o + delta for o in h[k]["data_offsets"]]
    elif kind == "dtype":
        h[a]["dtype"] = ["BF16", "F8", "I64", "F16", 3][delta % 5]
    elif kind == "offsets":
        h[a]["data_offsets"] = [[-1, 0], [0], [1.5, 2], "0,4", [delta, delta - 1]][delta % 5]
    elif kind == "metadata":
        h["__metadata__"] = [{"x": 1}, "pt", None, {"format": "pt"}][delta % 4]
    return h, body


CORRUPTIONS = st.one_of(
    st.tuples(st.just("truncate"), st.integers(0, 10_000), st.just(0)),
    st.tuples(st.just("flip"), st.integers(0, 10_000), st.integers(1, 255)),
    st.tuples(st.sampled_from(["swap", "overlap", "inflate", "negative", "huge", "float-shape", "trailing", "hole",
                               "dtype", "offsets", "metadata"]), st.integers(0, 7), st.integers(1, 9)),
)


def corrupt(corruption) -> bytes:
    kind, i, delta = corruption
    header, body = valid_parts()
    data = build(header, body)
    if kind == "truncate":
        return data[:i % len(data)]
    if kind == "flip":
        j = i % len(data)
        return data[:j] + bytes([data[j] ^ delta]) + data[j + 1:]
    return build(*mutate_header(header, body, kind, i, delta))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(CORRUPTIONS)
def test_corrupted_safetensors_is_rejected_in_chinese_or_read_like_the_reference(corruption):
    data = corrupt(corruption)
    expected = reference_read(data)
    try:
        out = read_tensors(data, source=SOURCE)
    except ValueError as err:
        assert type(err) is ValueError and SOURCE in str(err) and CHINESE.search(str(err)), err
        assert expected is None, f"参考读取器接受了这个文件，本书的读取器却拒绝：{err}"
        return
    assert expected is not None, "本书的读取器接受了参考实现拒绝的文件"
    assert set(out) == set(expected)
    for name, (code, shape, raw) in expected.items():
        assert CODES.get(out[name].dtype, code) == code and out[name].shape == shape
        assert out[name].tobytes() == raw


def test_valid_file_reads_back_exactly():
    header, body = valid_parts()
    out = read_tensors(build(header, body), source=SOURCE)
    for name, array in TENSORS.items():
        np.testing.assert_array_equal(out[name], array)
        assert out[name].dtype == array.dtype and out[name].shape == array.shape


@pytest.mark.parametrize("kind", ["overlap", "negative", "huge", "trailing", "hole", "float-shape"])
def test_each_structural_defect_is_rejected(kind):
    """反证式的具体例子：每一类都必须被拒绝（旧的读取器接受了 overlap、trailing、hole）。"""
    header, body = valid_parts()
    data = build(*mutate_header(header, body, kind, 0, 3))
    assert reference_read(data) is None
    check_error(lambda: read_tensors(data, source=SOURCE), ValueError, "坏文件")


E5 = e5s1_bytes(np.random.default_rng(0))[0]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(E5) - 1), st.integers(0, 255), st.booleans())
@example(71, 128, False)  # 分词器字节串的长度（<Q）的最高位翻转：2⁶³ 让 struct 抛出 struct.error（Hypothesis 找到的）
def test_corrupted_e5s1_only_raises_chinese_value_errors(position, xor, truncate):
    data = damage(E5, position, xor, truncate)
    try:
        f = e5s1.read_e5s1(data, source="坏的.e5s1")
    except ValueError as err:
        assert type(err) is ValueError and "坏的.e5s1" in str(err) and CHINESE.search(str(err)), err
        return
    spans = sorted((offset, offset + nbytes) for _, _, offset, nbytes in f.directory.values())
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])) and spans[-1][1] <= len(data)
    for name in f.directory:
        try:
            f.tensor(name)
        except ValueError as err:
            assert CHINESE.search(str(err))


def test_e5s1_overlapping_tensors_are_rejected():
    """把最后一个张量的偏移量改成与前一个重叠：旧的读取器只查“不越界”，会接受。"""
    f = e5s1.read_e5s1(E5)
    last = max(f.directory, key=lambda n: f.directory[n][2])
    kind, elements, offset, nbytes = f.directory[last]
    old = struct.pack("<BIQQ", kind, elements, offset, nbytes)
    assert E5.count(old) == 1
    bad = E5.replace(old, struct.pack("<BIQQ", kind, elements, offset - 4, nbytes))[:-4]
    check_error(lambda: e5s1.read_e5s1(bad), ValueError, rf"'{last}' 的数据从第 \d+ 字节开始，与.*重叠")


# ---------------------------------------------------------------- zip：先看声明的大小

def zipped(files: dict[str, bytes]) -> zipfile.ZipFile:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return zipfile.ZipFile(io.BytesIO(buf.getvalue()))


def test_zip_bomb_is_rejected_without_inflating(monkeypatch):
    """1 MB 的零压缩后只有 1 KB；预算 100 KB 时，按声明的大小就拒绝——ZipFile.open 根本不被调用。"""
    z = zipped({"m/model.safetensors": bytes(1_000_000)})
    assert z.getinfo("m/model.safetensors").compress_size < 5_000

    def no_inflating(*args, **kwargs):
        raise AssertionError("不该解压")

    monkeypatch.setattr(zipfile.ZipFile, "open", no_inflating)
    check_error(lambda: read_member(z, "m/model.safetensors", "x.whl", budget=100_000), ValueError,
                r"x\.whl 里的 m/model\.safetensors 声明解压后有 1000000 字节，超过了内存预算 100000 字节")


def test_member_within_budget_reads_exactly():
    z = zipped({"a.txt": b"hello" * 100})
    assert read_member(z, "a.txt", "x.whl", budget=500) == b"hello" * 100


def test_default_budget_is_read_at_call_time(monkeypatch):
    monkeypatch.setattr(validate, "MAX_MEMBER_BYTES", 10)
    check_error(lambda: read_member(zipped({"a": bytes(11)}), "a", "w.whl"), ValueError, r"超过了内存预算 10 字节")


def damaged_zip() -> zipfile.ZipFile:
    """数据区里压缩的字节被改坏（目录还在）：解压时 zlib 或 CRC 出错。"""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("w.bin", bytes(range(256)) * 64)
    raw = bytearray(buf.getvalue())
    for j in range(40, 200):
        raw[j] ^= 0x5A
    return zipfile.ZipFile(io.BytesIO(bytes(raw)))


ERROR_CASES = [
    ("member-missing", lambda: read_member(zipped({"a": b""}), "b/c.json", "x.whl"), ValueError,
     r"x\.whl 里没有 b/c\.json：这不是本书核对过的那个 wheel"),
    ("member-over-budget", lambda: read_member(zipped({"a": bytes(50)}), "a", "x.whl", budget=49), ValueError,
     r"x\.whl 里的 a 声明解压后有 50 字节，超过了内存预算 49 字节：没有解压它"),
    ("member-damaged", lambda: read_member(damaged_zip(), "w.bin", "x.whl"), ValueError,
     r"x\.whl 里的 w\.bin 解压失败（.*）：wheel 损坏了"),
    ("json-bad", call(parse_json, b"{x", "w.whl 里的 config.json"), ValueError,
     r"w\.whl 里的 config\.json 不是合法的 JSON（.*）：文件损坏了"),
    ("json-not-utf8", call(parse_json, b"\xff", "c.json"), ValueError, r"c\.json 不是合法的 JSON"),
    ("json-not-dict", call(parse_json, b"[1]", "c.json"), ValueError, r"c\.json 的最外层应是一个字典.*list"),
    ("spans-negative-shape", call(check_spans, [Span("w", np.dtype("<f4"), (-1,), 0, 0)], 0, 0, "f"), ValueError,
     r"f 里张量 'w' 的形状应是非负整数的列表，收到 \(-1,\)"),
    ("spans-bad-range", call(check_spans, [Span("w", np.dtype("<f4"), (1,), 8, 4)], 0, 8, "f"), ValueError,
     r"'w' 的字节范围应是两个整数 0 ≤ 开始 ≤ 结束，收到 \[8, 4\]"),
    ("spans-size", call(check_spans, [Span("w", np.dtype("<f4"), (3,), 0, 8)], 0, 8, "f"), ValueError,
     r"'w' 的字节数对不上：形状 \[3\]、每个元素 4 字节应占 12 字节，字节范围 \[0, 8\) 却是 8 字节"),
    ("spans-overlap", call(check_spans, [Span("a", np.dtype("u1"), (4,), 0, 4), Span("b", np.dtype("u1"), (2,), 2, 4)],
                           0, 4, "f"), ValueError, r"'b' 的数据从第 2 字节开始，与张量 'a'重叠（那里到第 4 字节为止）"),
    ("spans-hole", call(check_spans, [Span("a", np.dtype("u1"), (2,), 0, 2), Span("b", np.dtype("u1"), (2,), 3, 5)],
                        0, 5, "f"), ValueError, r"'b' 的数据从第 3 字节开始，与张量 'a'之间空着 1 字节（最多允许 0）"),
    ("spans-late-start", call(check_spans, [Span("a", np.dtype("u1"), (2,), 10, 12)], 8, 12, "f"), ValueError,
     r"与数据区的开头之间空着 2 字节"),
    ("spans-truncated", call(check_spans, [Span("a", np.dtype("u1"), (4,), 0, 4)], 0, 3, "f"), ValueError,
     r"'a' 的数据在第 0–4 字节，但文件只有 3 字节：文件被截断了"),
    ("spans-trailing", call(check_spans, [Span("a", np.dtype("u1"), (4,), 0, 4)], 0, 6, "f"), ValueError,
     r"f 的最后一段数据在第 4 字节结束，文件却有 6 字节：末尾多出 2 字节"),
]
test_documented_errors = error_table_test(ERROR_CASES)
