"""把实验的结果存到硬盘上：同一份代码、同一个 NumPy，算过一次就不再重算。

一次 ``python dev.py test`` 里，同一章会被好几个进程执行（nbval、建网站、JupyterLab 测试，还有测试进程自己），
每个进程都从头训练一遍同样的模型就太浪费了。``stored(name, compute, *args)`` 先看硬盘上有没有这份结果：

* 有，而且是**同一份代码**算的：直接读出来；
* 没有：调用 ``compute()``，把结果写下来。

存放位置、"同一份代码"（文件名里的代码版本）、原子写入和旧版本的清理都在 ``_cache.py``（可交互图的帧也用它）。
钥匙 = 实验名 + 参数 + 代码版本。结果只含数组、数、字符串和它们组成的字典、列表、``Run``；读出来的也是只读的
（和 ``optim.freeze`` 一样）。本模块只依赖 NumPy 和标准库。
"""

from __future__ import annotations

import json
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


def decode(tree: Any, arrays: Mapping[str, np.ndarray]) -> Any:
    """``encode`` 的逆运算。"""
    (kind, body), = tree.items()
    if kind == "array":
        return arrays[f"a{body}"]
    if kind == "run":
        fields = {k: decode(v, arrays) for k, v in body.items()}
        return Run(fields.pop("losses"), fields.pop("checkpoint_steps"), fields.pop("checkpoints"), **fields)
    if kind == "map":
        return {decode(k, arrays): decode(v, arrays) for k, v in body}
    if kind == "tuple":
        return tuple(decode(v, arrays) for v in body)
    if kind == "list":
        return [decode(v, arrays) for v in body]
    return body


def _save(path, value: Any) -> None:
    arrays: list[np.ndarray] = []
    tree = encode(value, arrays)
    _cache.write_atomically(path, lambda handle: np.savez(
        handle, __tree__=np.array(json.dumps(tree, ensure_ascii=False)), **{f"a{i}": a for i, a in enumerate(arrays)}))


def _load(path) -> Any:
    with np.load(path, allow_pickle=False) as data:
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
    path = _cache.entry_path(folder, name, _cache.code_version(parts=RUN_PARTS), repr(args), SUFFIX)
    value = _read(path)
    if value is _MISSING:
        # 同时想要这份结果的别的进程（nbval、建网站、JupyterLab 的内核）在锁外面等；拿到锁后再看一眼：
        # 等的时候别人可能已经算好了
        with _cache.exclusive(folder / f"{name}.lock"):
            value = _read(path)
            if value is _MISSING:
                value = compute()
                try:
                    _save(path, value)
                    _cache.evict_old_versions(folder, name, SUFFIX)
                except OSError:
                    pass
    return freeze(value)


_MISSING = object()  # _read 的"硬盘上没有"（结果本身可以是 None）


def _read(path) -> Any:
    """硬盘上的结果；没有或坏了（比如被别的程序截断）时返回 ``_MISSING``，调用者重算并覆盖。"""
    if not path.exists():
        return _MISSING
    try:
        value = _load(path)
    except (OSError, ValueError, KeyError, json.JSONDecodeError):
        return _MISSING
    _cache.touch(path)
    return value
