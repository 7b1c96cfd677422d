"""读 safetensors 文件：一个 JSON 目录 + 一整块原始字节，用 NumPy 直接“看”成数组。

文件的格式（https://github.com/huggingface/safetensors）::

    [8 字节：小端无符号整数 N] [N 字节：JSON 目录] [数据区：所有张量的字节首尾相接]

JSON 目录里每个张量一项 ``"名字": {"dtype": "F32", "shape": [30522, 384], "data_offsets": [开始, 结束]}``，
偏移量从数据区开头算起；另有一项 ``"__metadata__"``（字符串到字符串的说明，可以没有）。
读一个张量就是 ``np.frombuffer(数据区, dtype, count, offset).reshape(shape)``：不复制，也不能改
（NumPy 看的是只读的 bytes，所以得到的数组是只读的）。读之前整个文件按参考实现的规则检查一遍
（``validate.check_spans``：字节范围首尾相接、不重叠、不越界、没有空洞、末尾没有多余的字节）。

本模块只依赖 NumPy 和标准库。
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Iterable

import numpy as np

from .validate import Span, check_spans, view

__all__ = ["DTYPES", "MAX_HEADER_BYTES", "read_header", "read_tensors"]

# safetensors 的 dtype 名字 → NumPy 的类型（小端）。本书的模型只用到 F32（权重）和 I64（位置编号）。
DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1", "U8": "u1",
          "BOOL": "?"}


MAX_HEADER_BYTES = 100_000_000  # JSON 目录最多这么长（同参考实现 huggingface/safetensors 的 MAX_HEADER_SIZE）


def _no_duplicates(pairs: list) -> dict:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        twice = sorted({k for k in keys if keys.count(k) > 1})
        raise ValueError(f"名字重复：{'、'.join(map(repr, twice))}")
    return dict(pairs)


def read_header(data: bytes, source: str = "safetensors 文件") -> tuple[dict, int]:
    """解析文件头：返回 (JSON 目录, 数据区的起点)。``source`` 写进报错，说明是哪个文件。

    目录的长度先和上限 ``MAX_HEADER_BYTES`` 比，再和文件长度比，然后才读它。

    Raises
    ------
    ValueError
        文件不到 8 字节、头的长度超过上限或超出文件、JSON 坏了（含重复的名字）、或目录不是字典。
    """
    if len(data) < 8:
        raise ValueError(f"{source} 太短：只有 {len(data)} 字节，连开头表示目录长度的 8 字节都不够。文件可能被截断了。")
    (n,) = struct.unpack("<Q", bytes(data[:8]))
    if n > MAX_HEADER_BYTES:
        raise ValueError(f"{source} 的文件头说 JSON 目录有 {n} 字节，超过了上限 {MAX_HEADER_BYTES} 字节："
                         "文件损坏，或者它根本不是 safetensors 文件。")
    if 8 + n > len(data):
        raise ValueError(f"{source} 的文件头说 JSON 目录有 {n} 字节，但文件一共只有 {len(data)} 字节：文件被截断了，"
                         "或者它根本不是 safetensors 文件。")
    try:
        header = json.loads(bytes(data[8:8 + n]).decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError) as err:  # JSONDecodeError 是 ValueError
        raise ValueError(f"{source} 的 JSON 目录读不出来（{err}）：文件损坏，或者不是 safetensors 文件。") from None
    if not isinstance(header, dict):
        raise ValueError(f"{source} 的 JSON 目录应是一个字典（名字 → 张量说明），收到的是 {type(header).__name__}。")
    return header, 8 + n


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _span(start: int, name: str, entry: object, source: str) -> Span:
    """目录里的一项 → ``Span``（字节范围换算成在整个文件里的位置）；这里只查这一项自己的写法。"""
    if not isinstance(entry, dict) or not {"dtype", "shape", "data_offsets"} <= set(entry):
        raise ValueError(f"{source} 里张量 {name!r} 的说明不完整：需要 dtype、shape、data_offsets 三项，收到 {entry!r}。")
    dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise ValueError(f"{source} 里张量 {name!r} 的 dtype={dtype!r} 不支持。能读的是：{'、'.join(DTYPES)}。")
    if not isinstance(shape, list) or not all(_is_int(d) and d >= 0 for d in shape):
        raise ValueError(f"{source} 里张量 {name!r} 的 shape 应是非负整数的列表，收到 {shape!r}。")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(_is_int(o) and o >= 0 for o in offsets)):
        raise ValueError(f"{source} 里张量 {name!r} 的 data_offsets 应是两个非负整数 [开始, 结束]，收到 {offsets!r}。")
    begin, end = offsets
    itemsize = np.dtype(DTYPES[dtype]).itemsize
    count = math.prod(shape)
    if end - begin != count * itemsize:
        raise ValueError(f"{source} 里张量 {name!r} 的字节数对不上：shape={list(shape)}、dtype={dtype} 应占 "
                         f"{count * itemsize} 字节，data_offsets={[begin, end]} 却是 {end - begin} 字节。")
    return Span(name, np.dtype(DTYPES[dtype]), tuple(shape), start + begin, start + end)


def _check_metadata(value: object, source: str) -> None:
    if value is not None and not (isinstance(value, dict)
                                  and all(isinstance(v, str) for v in value.values())):
        raise ValueError(f"{source} 的 __metadata__ 应是字符串到字符串的字典，收到 {value!r}。")


def read_tensors(data: bytes, names: Iterable[str] | None = None, source: str = "safetensors 文件"
                 ) -> dict[str, np.ndarray]:
    """读出张量：``names=None`` 时全部，否则只读这几个（其余的字节不碰）。数组是只读的、不复制。

    Parameters
    ----------
    data : bytes
        整个 safetensors 文件的内容。
    names : iterable of str, optional
        要读的张量名字。
    source : str
        报错里怎么称呼这个文件。

    Returns
    -------
    dict[str, ndarray]
        名字 → 数组，顺序同文件目录（或 ``names``）。

    Raises
    ------
    TypeError
        ``data`` 不是 bytes。
    ValueError
        文件头坏了（见 ``read_header``）、某个张量的说明不完整、dtype 不支持、shape 或 data_offsets 不是非负整数、
        字节数与 shape 对不上、``__metadata__`` 不是字符串字典、字节范围重叠、乱序越界或有空洞、数据超出文件、
        末尾有多余的字节（整个文件都按 ``validate.check_spans`` 查，不只是要读的张量），
        或 ``names`` 里有文件中没有的张量（列出缺哪些）。

    Examples
    --------
    >>> import json, struct, numpy as np
    >>> header = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
    >>> data = struct.pack("<Q", len(header)) + header + np.array([1.5, -2.0], "<f4").tobytes()
    >>> read_tensors(data)["w"]
    array([ 1.5, -2. ], dtype=float32)
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data 必须是 bytes（整个文件的内容），收到的是 {type(data).__name__}。")
    data = bytes(data)
    header, start = read_header(data, source)
    _check_metadata(header.pop("__metadata__", None), source)
    spans = {name: _span(start, name, entry, source) for name, entry in header.items()}
    check_spans(spans.values(), start, len(data), source)  # 整个文件一起查：首尾相接、不越界、末尾没有多余字节
    wanted = list(header) if names is None else list(names)
    missing = [n for n in wanted if n not in header]
    if missing:
        raise ValueError(f"{source} 里没有这些张量：{'、'.join(missing)}。文件里有 {len(header)} 个，"
                         f"例如 {'、'.join(list(header)[:3])}。")
    return {name: view(data, spans[name]) for name in wanted}
