"""把实验的结果存到硬盘上：同一份代码、同一个 NumPy，算过一次就不再重算。

一次 ``python dev.py test`` 里，同一章会被好几个进程执行（nbval、建网站、JupyterLab 测试，还有测试进程自己），
每个进程都从头训练一遍同样的模型就太浪费了。``stored(name, compute, *args)`` 先看硬盘上有没有这份结果：

* 有，而且是**同一份代码**算的：直接读出来；
* 没有：调用 ``compute()``，把结果写下来。

存放位置、"同一份代码"（文件名里的代码版本）、原子写入和旧版本的清理都在 ``_cache.py``（可交互图的帧也用它）。
钥匙 = 实验名 + 参数 + 代码版本。文件是封好的（``_cache.write_sealed``）：封条里写着完整的钥匙、代码版本和内容的
sha256，读回时对不上（截断、改了字节、别的实验的文件、旧格式）就重算并覆盖，不抛异常，也不拿别的结果冒充。结果只含数组、数、字符串和它们组成的字典、列表、``Run``；读出来的也是只读的
（和 ``optim.freeze`` 一样）。本模块只依赖 NumPy 和标准库。
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .. import _cache
from .._cache import CACHE_ENV, cache_folder
from .optim import Run, freeze

__all__ = ["stored", "cache_folder", "encode", "decode", "CACHE_ENV", "RUN_PARTS"]

SUFFIX = ".npz"
# 存下的实验结果依赖包里的哪些部分（``_cache.code_version`` 的 ``parts``）：lessons 层按分层规则只能导入
# core、_validation、_cache，训练语料在 data/。改了别处（测验题、图、网页），结果照旧可用，不必重新训练。
RUN_PARTS = ("core", "lessons", "data", "_validation.py", "_cache.py")


# ---------------------------------------------------------------- 结构 ↔ (JSON 描述, 数组)

def encode(value: Any, arrays: list[np.ndarray]) -> Any:
    """把结果拆成能写进 JSON 的描述，数组放进 ``arrays``（描述里记下标）。"""
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "O":
            raise TypeError("结果里有 object 数组，不能安全地存到硬盘上（只存数、字符串组成的数组）。")
        arrays.append(value)
        return {"array": len(arrays) - 1}
    if isinstance(value, Run):
        return {"run": {k: encode(v, arrays) for k, v in value.items()}}
    if isinstance(value, Mapping):
        return {"map": [[encode(k, arrays), encode(v, arrays)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {"tuple": [encode(v, arrays) for v in value]}
    if isinstance(value, list):
        return {"list": [encode(v, arrays) for v in value]}
    if isinstance(value, (np.generic,)):
        return {"scalar": value.item()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"scalar": value}
    raise TypeError(f"结果里有存不下的类型 {type(value).__name__}：只支持数组、数、字符串、字典、列表和 Run。")


_KINDS = ("array", "run", "map", "tuple", "list", "scalar")


def decode(tree: Any, arrays: Mapping[str, np.ndarray]) -> Any:
    """``encode`` 的逆运算。描述的结构不对（不认识的种类、缺的数组、不是数也不是字符串的值）时报 ValueError，
    ``stored`` 据此重算。"""
    if not (isinstance(tree, dict) and len(tree) == 1 and next(iter(tree)) in _KINDS):
        raise ValueError(f"tree 应当是只有一项、种类为 {_KINDS} 之一的字典，收到的是 {str(tree)[:80]}。")
    (kind, body), = tree.items()
    if kind == "array":
        if type(body) is not int or f"a{body}" not in arrays:
            raise ValueError(f"tree 里的数组编号应当是存在的下标，收到的是 {body!r}。")
        return arrays[f"a{body}"]
    if kind == "scalar":
        if not (body is None or isinstance(body, (bool, int, float, str))):
            raise ValueError(f"tree 里的 scalar 应当是数、字符串或 None，收到的是 {type(body).__name__}。")
        return body
    if kind == "run":
        if not isinstance(body, dict):
            raise ValueError(f"tree 里的 run 应当是字典，收到的是 {type(body).__name__}。")
        fields = {k: decode(v, arrays) for k, v in body.items()}
        return Run(fields.pop("losses"), fields.pop("checkpoint_steps"), fields.pop("checkpoints"), **fields)
    if not isinstance(body, list):
        raise ValueError(f"tree 里的 {kind} 应当是列表，收到的是 {type(body).__name__}。")
    if kind == "map":
        if not all(isinstance(pair, list) and len(pair) == 2 for pair in body):
            raise ValueError("tree 里的 map 应当是 [键, 值] 对的列表。")
        return {decode(k, arrays): decode(v, arrays) for k, v in body}
    if kind == "tuple":
        return tuple(decode(v, arrays) for v in body)
    return [decode(v, arrays) for v in body]


def _key(name: str, args: tuple) -> str:
    """写进缓存文件封条的完整钥匙（文件名里只有它的哈希）。"""
    return f"{name}\n{args!r}"


def _save(path, key: str, version: str, value: Any) -> None:
    """把结果写成封好的缓存文件（``_cache.write_sealed``）：内容是一个 ``.npz``，封条里有钥匙、代码版本和校验和。"""
    arrays: list[np.ndarray] = []
    tree = encode(value, arrays)
    buffer = io.BytesIO()
    np.savez(buffer, __tree__=np.array(json.dumps(tree, ensure_ascii=False)), **{f"a{i}": a for i, a in enumerate(arrays)})
    _cache.write_sealed(path, key, version, buffer.getvalue())


def _load(payload: bytes) -> Any:
    with np.load(io.BytesIO(payload), allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files if k != "__tree__"}
        return decode(json.loads(str(data["__tree__"])), arrays)


def stored(name: str, compute: Callable[[], Any], *args: Any) -> Any:
    """``compute()`` 的结果（只读）：硬盘上有同一份代码算的就读出来，没有就算一次并存下。

    ``args`` 是决定结果的参数（例如种子），和 ``name`` 一起组成钥匙。写不进去（只读的文件系统、磁盘满）时
    照样返回算出的结果，只是下次还要再算。

    Examples
    --------
    >>> import os, tempfile
    >>> os.environ["TRANSFORMER_LAB_CACHE"] = tempfile.mkdtemp()
    >>> calls = []
    >>> first = stored("示例", lambda: calls.append(1) or {"x": np.arange(3)}, 0)
    >>> again = stored("示例", lambda: calls.append(1) or {"x": np.arange(3)}, 0)
    >>> len(calls), again["x"].tolist(), again["x"].flags.writeable
    (1, [0, 1, 2], False)
    >>> del os.environ["TRANSFORMER_LAB_CACHE"]
    """
    folder = cache_folder()
    if folder is None:
        return freeze(compute())
    version, key = _cache.code_version(parts=RUN_PARTS), _key(name, args)
    path = _cache.entry_path(folder, name, version, repr(args), SUFFIX)
    value = _read(path, key, version)
    if value is _MISSING:
        # 同时想要这份结果的别的进程（nbval、建网站、JupyterLab 的内核）在锁外面等；拿到锁后再看一眼：
        # 等的时候别人可能已经算好了
        with _cache.exclusive(folder / f"{name}.lock"):
            value = _read(path, key, version)
            if value is _MISSING:
                value = compute()
                try:
                    _save(path, key, version, value)
                    _cache.evict_old_versions(folder, name, SUFFIX)
                except OSError:
                    pass
    return freeze(value)


_MISSING = object()  # _read 的"硬盘上没有"（结果本身可以是 None）


def _read(path, key: str, version: str) -> Any:
    """硬盘上的结果；没有、不是这把钥匙和这份代码写的（封条对不上）、内容坏了（截断、改了字节）或结构不对时
    返回 ``_MISSING``，调用者重算并覆盖。从不把读文件的异常（``BadZipFile``、``EOFError`` ……）抛给调用者。"""
    payload = _cache.read_sealed(path, key, version)
    if payload is None:
        return _MISSING
    try:
        value = _load(payload)
    except (OSError, EOFError, ValueError, KeyError, TypeError, IndexError, RecursionError, zipfile.BadZipFile):
        return _MISSING  # 校验和对得上、结构却不对：只可能是有意伪造的文件，同样重算
    _cache.touch(path)
    return value
