"""把实验的结果存到硬盘上：同一份代码、同一个 NumPy，算过一次就不再重算。

一次 ``python dev.py test`` 里，同一章会被好几个进程执行（nbval、建网站、JupyterLab 测试，还有测试进程自己），
每个进程都从头训练一遍同样的模型就太浪费了。``stored(name, compute, *args)`` 先看硬盘上有没有这份结果：

* 有，而且是**同一份代码**算的：直接读出来；
* 没有：调用 ``compute()``，把结果写下来（先写临时文件再改名，几个进程同时写也不会留下半个文件）。

"同一份代码"由钥匙保证：钥匙 = 实验名 + 参数 + ``transformer_lab`` 全部源文件的哈希 + NumPy 版本 + Python 版本 +
机器架构。改了包里任何一行代码、换了 NumPy，钥匙就变了，旧结果不会被误用（浮点数的结果也可能随 NumPy 变）。
结果只含数组、数、字符串和它们组成的字典、列表、``Run``；读出来的也是只读的（和 ``optim.freeze`` 一样）。

存放位置：环境变量 ``TRANSFORMER_LAB_CACHE`` 指定的文件夹；没有就用用户的缓存目录
（Linux ``~/.cache/transformer-lab``，macOS ``~/Library/Caches/transformer-lab``，Windows ``%LOCALAPPDATA%``）。
设 ``TRANSFORMER_LAB_CACHE=off`` 就完全不读不写（每次都重算）。删掉这个文件夹也没关系：下次再算一遍。
每个实验只留最近用过的 ``KEEP_VERSIONS`` 份代码版本的结果，改代码改得再多，硬盘上也不会越攒越多。
本模块只依赖 NumPy 和标准库。
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
import tempfile
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from .optim import Run, freeze

__all__ = ["stored", "cache_folder", "encode", "decode", "CACHE_ENV"]

CACHE_ENV = "TRANSFORMER_LAB_CACHE"
PACKAGE = Path(__file__).resolve().parents[1]


def cache_folder() -> Path | None:
    """结果存放的文件夹；``TRANSFORMER_LAB_CACHE=off`` 时为 None。"""
    chosen = os.environ.get(CACHE_ENV, "")
    if chosen.lower() in ("off", "0", "no"):
        return None
    if chosen:
        return Path(chosen)
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local"))
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "transformer-lab"


@cache
def _code_digest() -> str:
    """``transformer_lab`` 全部 .py 文件内容的哈希（同一个进程里只算一次）。"""
    h = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py")):
        h.update(path.relative_to(PACKAGE).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


KEEP_VERSIONS = 3  # 每个实验最多留几份代码版本的结果（最近用过的几份），更早的删掉，硬盘不会越攒越多


def _version() -> str:
    """代码版本：包的源文件 + NumPy + Python + 机器架构。"""
    parts = [_code_digest(), np.__version__, f"{sys.version_info[0]}.{sys.version_info[1]}", platform.machine()]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:12]


def _path(folder: Path, name: str, args: tuple) -> Path:
    """``<实验名>-<代码版本>-<参数>.npz``：文件名里分开写代码版本，才认得出哪些是旧版本留下的。"""
    return folder / f"{name}-{_version()}-{hashlib.sha256(repr(args).encode()).hexdigest()[:12]}.npz"


def _evict_old_versions(folder: Path, name: str) -> None:
    """同一个实验只留最近用过的 ``KEEP_VERSIONS`` 份代码版本（按文件的修改时间），其余的删掉。"""
    versions: dict[str, float] = {}
    files = list(folder.glob(f"{name}-????????????-????????????.npz"))
    for path in files:
        version = path.name[len(name) + 1:len(name) + 13]
        try:
            versions[version] = max(versions.get(version, 0.0), path.stat().st_mtime)
        except OSError:
            continue
    keep = set(sorted(versions, key=versions.get, reverse=True)[:KEEP_VERSIONS])
    for path in files:
        if path.name[len(name) + 1:len(name) + 13] not in keep:
            try:
                path.unlink()
            except OSError:
                pass  # 别的进程刚删掉，或没有权限：不影响结果


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


def _save(path: Path, value: Any) -> None:
    arrays: list[np.ndarray] = []
    tree = encode(value, arrays)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            np.savez(handle, __tree__=np.array(json.dumps(tree, ensure_ascii=False)),
                     **{f"a{i}": a for i, a in enumerate(arrays)})
        os.replace(tmp, path)  # 改名是原子的：别的进程要么看不到，要么看到完整的文件
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _load(path: Path) -> Any:
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
    path = _path(folder, name, args)
    if path.exists():
        try:
            value = _load(path)
            os.utime(path)  # 记下"最近用过"：清理旧版本时按它排先后
            return freeze(value)
        except (OSError, ValueError, KeyError, json.JSONDecodeError):
            pass  # 坏文件（比如被别的程序截断）：当作没有，重算并覆盖
    value = compute()
    try:
        _save(path, value)
        _evict_old_versions(folder, name)
    except OSError:
        pass
    return freeze(value)
