"""硬盘缓存的共用部分：放在哪里、"同一份代码"怎么认、怎么写才不会留下半个文件、旧版本怎么清理。

两处用它：``lessons/stored.py`` 存训练好的实验结果，``widgets/static.py`` 存可交互图预先画好的帧。
一次 ``python dev.py test`` 里同一章会被好几个进程执行（nbval、建网站、JupyterLab、测试进程自己），
算过一次就让别的进程直接读。

* **存放位置**：环境变量 ``TRANSFORMER_LAB_CACHE`` 指定的文件夹；没有就用用户的缓存目录（Linux
  ``~/.cache/transformer-lab``，macOS ``~/Library/Caches/transformer-lab``，Windows ``%LOCALAPPDATA%``）。
  设 ``TRANSFORMER_LAB_CACHE=off`` 就完全不读不写。删掉这个文件夹也没关系：下次再算一遍。
* **同一份代码**：文件名里写着代码版本 = 结果所依赖的那部分源文件 + NumPy、Python 版本 + 机器架构 + 浮点运算
  走的那一档指令（再加上调用者给的版本号，比如画图时的 matplotlib 版本）的哈希。依赖哪部分由调用者列出（``parts``）：实验结果
  只依赖 ``core/``、``lessons/``、``data/`` 和两个共用的底层模块，改一道测验题或一张图就不必重新训练；可交互图的帧
  依赖它自己那一章的图模块和它下面的各层，不依赖别章的图。列出的部分必须覆盖代码真正能导入的一切——
  ``tests/test_layering.py`` 按分层规则（它的 ``ALLOWED``）检查这一点。没列 ``parts`` 就是整个包。
* **不留半个文件**：先写临时文件再改名（改名是原子的），几个进程同时写也没关系。
* **不信文件的内容**：``write_sealed`` 在内容前面写一行"封条"：完整的钥匙、代码版本、内容的长度和 sha256。
  ``read_sealed`` 读回时一样一样核对，对不上（截断、改了一个字节、别的钥匙的文件被复制成这个名字、旧格式的文件）
  就当没有，调用者重算并覆盖——不抛原始异常，也不拿别的结果冒充。
* **只算一次**：``exclusive(锁文件)`` 让同一台机器上的几个进程排队；一个进程在算的时候，别的进程等它写完再读，
  而不是各算一遍（有 ``fcntl`` 的系统上，即 Linux、macOS；Windows 上不排队，最多重复算一遍）。
* **不越攒越多**：同一种东西只留最近用过的 ``KEEP_VERSIONS`` 个代码版本。

本模块只依赖标准库和 NumPy（只读它的版本号）。
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import platform
import sys
import tempfile
import types
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import BinaryIO

import numpy as np

__all__ = ["CACHE_ENV", "KEEP_VERSIONS", "ARITHMETIC_ENV", "cache_folder", "arithmetic", "code_version", "source_digest", "entry_path",
           "write_atomically", "write_sealed", "read_sealed", "SEAL", "is_png_base64", "exclusive", "touch", "evict_old_versions", "fingerprint"]

CACHE_ENV = "TRANSFORMER_LAB_CACHE"
KEEP_VERSIONS = 3  # 每种东西最多留几个代码版本（最近用过的几个），更早的删掉
PACKAGE = Path(__file__).resolve().parent
_HEX12 = "?" * 12


def cache_folder() -> Path | None:
    """缓存文件夹；``TRANSFORMER_LAB_CACHE=off`` 时为 None。"""
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


SOURCE_SUFFIXES = {".py", ".js", ".css", ".txt"}


def source_digest(root: Path, parts: tuple[str, ...] | None = None) -> str:
    """``root`` 下源文件（.py/.js/.css）和数据（.txt）内容的哈希；``parts`` 是相对 ``root`` 的文件或文件夹
    （如 ``("core", "_validation.py")``），None 表示全部。列出的部分一个也不存在时报错（多半是写错了名字）。"""
    files = sorted(p for p in root.rglob("*") if p.suffix in SOURCE_SUFFIXES and "__pycache__" not in p.parts)
    if parts is not None:
        missing = [part for part in parts if not (root / part).exists()]
        if missing:
            raise ValueError(f"parts 里的 {missing} 在 {root} 下不存在：应当是包里真有的文件或文件夹。")
        chosen = [root / part for part in parts]
        files = [f for f in files if any(f == c or c in f.parents for c in chosen)]
    h = hashlib.sha256()
    for path in files:
        h.update(path.relative_to(root).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


@cache
def _package_digest(parts: tuple[str, ...] | None) -> str:
    """本包的 ``source_digest``（同一个进程里每组 ``parts`` 只算一次）。"""
    return source_digest(PACKAGE, parts)


# 决定浮点运算走哪一档指令的环境变量（``dev.py`` 的 ``same_arithmetic`` 设定它们）：同一台机器上设与不设，
# 算出的最后一位可能不同，存下的结果不能混用。
ARITHMETIC_ENV = ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES")


def arithmetic() -> tuple[str, ...]:
    """``ARITHMETIC_ENV`` 里每个变量的当前值（没设的是空字符串）。"""
    return tuple(os.environ.get(name, "") for name in ARITHMETIC_ENV)


def code_version(*extra: str, parts: tuple[str, ...] | None = None) -> str:
    """代码版本（12 位十六进制）：包里 ``parts`` 那部分源文件（None：全部）、NumPy、Python、机器架构、
    浮点运算走的那一档指令（``arithmetic()``），再加上 ``extra``。"""
    items = [_package_digest(None if parts is None else tuple(sorted(parts))), np.__version__,
             f"{sys.version_info[0]}.{sys.version_info[1]}", platform.machine(), *arithmetic(), *extra]
    return hashlib.sha256("\n".join(items).encode()).hexdigest()[:12]


def entry_path(folder: Path, kind: str, version: str, key: str, suffix: str) -> Path:
    """``<kind>-<代码版本>-<key 的哈希>.<suffix>``：文件名里分开写代码版本，才认得出哪些是旧版本留下的。"""
    return folder / f"{kind}-{version}-{hashlib.sha256(key.encode()).hexdigest()[:12]}{suffix}"


def write_atomically(path: Path, write: Callable[[BinaryIO], None]) -> None:
    """``write(文件)`` 写进临时文件，写完再改名成 ``path``：别的进程要么看不到，要么看到完整的文件。"""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


# 封好的缓存文件的第一行（格式名和格式的版本）；旧格式（没有封条）的文件第一行对不上，当作没有
SEAL = b"transformer-lab sealed cache 1\n"
_SEAL_LINE_LIMIT = 1 << 20  # 封条那一行最长多少字节（钥匙很长也够用）；更长的文件不是本模块写的


def write_sealed(path: Path, key: str, version: str, payload: bytes) -> None:
    """把 ``payload`` 原子地写成封好的缓存文件：``SEAL``、一行 JSON 封条（``key``、``version``、长度、sha256），
    然后是内容本身。``read_sealed`` 用同样的 ``key`` 和 ``version`` 才读得回来。"""
    seal = json.dumps({"key": key, "version": version, "size": len(payload),
                       "sha256": hashlib.sha256(payload).hexdigest()}, ensure_ascii=True).encode("ascii") + b"\n"

    def write(handle: BinaryIO) -> None:
        handle.write(SEAL)
        handle.write(seal)
        handle.write(payload)

    write_atomically(path, write)


def read_sealed(path: Path, key: str, version: str) -> bytes | None:
    """``write_sealed`` 写下的内容；文件不存在、读不了、不是封好的文件（旧格式）、钥匙或代码版本不同、长度或
    sha256 对不上时都是 None（调用者重算并覆盖）。从不抛异常。

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "x.bin"
    >>> write_sealed(path, "钥匙", "0123456789ab", b"payload")
    >>> read_sealed(path, "钥匙", "0123456789ab"), read_sealed(path, "别的钥匙", "0123456789ab")
    (b'payload', None)
    >>> path.write_bytes(path.read_bytes()[:-1]) and read_sealed(path, "钥匙", "0123456789ab") is None
    True
    """
    try:
        with open(path, "rb") as handle:
            if handle.read(len(SEAL)) != SEAL:
                return None
            line = handle.readline(_SEAL_LINE_LIMIT)
            if not line.endswith(b"\n"):
                return None
            seal = json.loads(line)
            if not isinstance(seal, dict) or seal.get("key") != key or seal.get("version") != version:
                return None
            size, digest = seal.get("size"), seal.get("sha256")
            # 先比长度再读：声称很长的坏封条不会让我们读进一大块内存
            if type(size) is not int or os.fstat(handle.fileno()).st_size - handle.tell() != size:
                return None
            payload = handle.read(size)
    except (OSError, ValueError, RecursionError):  # ValueError 包括 JSONDecodeError 和 UnicodeDecodeError
        return None
    if len(payload) != size or not isinstance(digest, str) or hashlib.sha256(payload).hexdigest() != digest:
        return None
    return payload


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def is_png_base64(frame: object) -> bool:
    """``frame`` 是 base64 写的 PNG：只由 base64 的字母组成（引号、空格、尖括号都进不了 ``src``/``srcset``），
    解出来以 PNG 的文件签名开头。可交互图的帧缓存（``widgets/static.py``）只收这样的帧。

    >>> is_png_base64("iVBORw0KGgo="), is_png_base64('x" onerror="alert(1)'), is_png_base64("R0lGODlh")
    (True, False, False)
    """
    if not isinstance(frame, str):
        return False
    try:
        return base64.b64decode(frame, validate=True).startswith(PNG_SIGNATURE)
    except ValueError:  # binascii.Error 和非 ASCII 的字符
        return False


@contextlib.contextmanager
def exclusive(lock: Path):
    """拿到文件锁 ``lock`` 才往下走：同一台机器上同时想算同一样东西的几个进程，一个一个来。
    锁文件建不了（只读的文件夹）或系统没有 ``fcntl`` 时不排队。"""
    try:
        import fcntl
        lock.parent.mkdir(parents=True, exist_ok=True)
        handle = open(lock, "a")
    except (ImportError, OSError):
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def touch(path: Path) -> None:
    """记下"最近用过"（清理旧版本时按文件的修改时间排先后）。"""
    try:
        os.utime(path)
    except OSError:
        pass


def evict_old_versions(folder: Path, kind: str, suffix: str, keep: int = KEEP_VERSIONS) -> None:
    """``kind`` 这种文件只留最近用过的 ``keep`` 个代码版本（按修改时间），其余的删掉。"""
    files = list(folder.glob(f"{kind}-{_HEX12}-{_HEX12}{suffix}"))
    start = len(kind) + 1
    newest: dict[str, float] = {}
    for path in files:
        version = path.name[start:start + 12]
        try:
            newest[version] = max(newest.get(version, 0.0), path.stat().st_mtime)
        except OSError:
            continue
    kept = set(sorted(newest, key=newest.get, reverse=True)[:keep])
    for path in files:
        if path.name[start:start + 12] not in kept:
            try:
                path.unlink()
            except OSError:
                pass  # 别的进程刚删掉，或没有权限：不影响结果


def fingerprint(value) -> str | None:
    """``value`` 的内容指纹（十六进制 sha256）：数组按 dtype、形状和每个字节，字典、列表、元组逐项，数和字符串按值；
    本包里在模块顶层定义的函数（例如图的数据里那个写标题的函数）按名字和它的字节码、常量、默认值。

    只认这几种类型；别的对象（它的 ``repr`` 未必写出全部内容）返回 None，调用者就不用缓存——宁可重算，
    也不拿错的结果。函数也一样：闭包（结果取决于捕获的变量）、lambda 和嵌套函数、包外（notebook 里）定义的
    函数都返回 None。

    Examples
    --------
    >>> import numpy as np
    >>> fingerprint({"w": np.eye(2)}) == fingerprint({"w": np.eye(2)}), fingerprint({"w": np.eye(2) * 2})[:4] != ""
    (True, True)
    >>> fingerprint({"w": np.eye(2)}) == fingerprint({"w": np.eye(2) * 2}), fingerprint(object())
    (False, None)
    >>> fingerprint({"f": code_version}) == fingerprint({"f": code_version}), fingerprint({"f": lambda: 1})
    (True, None)
    """
    h = hashlib.sha256()

    def feed_code(code: types.CodeType) -> None:
        h.update(f"code {code.co_name} {code.co_names} {code.co_varnames}|".encode())
        h.update(code.co_code)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                feed_code(const)
            else:  # 字面量（数、字符串、None、它们的元组和 frozenset）：repr 写出全部内容
                h.update(f"const {const!r}|".encode())

    def feed(v) -> bool:
        if isinstance(v, types.FunctionType):
            if (v.__closure__ or "<" in v.__qualname__ or not v.__module__.startswith("transformer_lab.")
                    or not (feed(v.__defaults__) and feed(v.__kwdefaults__))):
                return False
            h.update(f"function {v.__module__}.{v.__qualname__}|".encode())
            feed_code(v.__code__)
            return True
        if isinstance(v, np.ndarray):
            if v.dtype.kind == "O":
                return False
            h.update(f"array {v.dtype.str} {v.shape}|".encode())
            h.update(np.ascontiguousarray(v).tobytes())
            return True
        if isinstance(v, np.generic):
            h.update(f"scalar {v.dtype.str} {v.item()!r}|".encode())
            return True
        if v is None or isinstance(v, (bool, int, float, str)):
            h.update(f"{type(v).__name__} {v!r}|".encode())
            return True
        if isinstance(v, (list, tuple)):
            h.update(f"{type(v).__name__} {len(v)}(".encode())
            return all(feed(x) for x in v) and not h.update(b")")
        if hasattr(v, "keys") and hasattr(v, "__getitem__"):  # 字典和 Mapping（包括训练记录 Run）
            h.update(f"map {type(v).__name__} {len(v)}(".encode())
            return all(feed(k) and feed(v[k]) for k in v.keys()) and not h.update(b")")
        return False

    return h.hexdigest() if feed(value) else None

