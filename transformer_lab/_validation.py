"""输入检查 (input validation) 的集中地。

所有公开函数在入口处调用这里的帮手函数；出错时抛出 ``TypeError`` 或 ``ValueError``，
中文信息写明：哪个参数、规则是什么、期望什么、实际收到什么，能给提示时再加一句提示。
本模块只依赖 NumPy。
"""

from __future__ import annotations

import numbers
import re
from urllib.parse import urlsplit

import numpy as np

__all__: list[str] = []


def describe(x: object) -> str:
    """给报错信息用的简短描述：类型，以及数组的形状和 dtype。"""
    if isinstance(x, np.ndarray):
        return f"np.ndarray(shape={x.shape}, dtype={x.dtype})"
    if isinstance(x, str):
        return f"字符串 {x!r}"
    return f"{type(x).__name__} {x!r}" if np.isscalar(x) else type(x).__name__


def as_real_array(x: object, name: str, *, min_ndim: int = 0) -> np.ndarray:
    """检查 ``x`` 是实数 NumPy 数组，并返回浮点版本（float32/float64 保持，整数转 float64）。

    规则：必须是 ``np.ndarray``；dtype 必须是整数或浮点数（不能是 bool、复数、字符串、object）；
    至少 ``min_ndim`` 维；不能有长度为 0 的维度；不能含 NaN 或 ±inf。
    """
    if not isinstance(x, np.ndarray):
        raise TypeError(
            f"{name} 必须是 NumPy 数组 (np.ndarray)，收到的是 {describe(x)}。"
            f"提示：先用 np.asarray({name}, dtype=float) 转换。"
        )
    x = plain_array(x, name)
    kind = x.dtype.kind
    if kind not in "iuf":
        raise TypeError(
            f"{name} 的 dtype 必须是实数（整数或浮点数），收到的是 dtype={x.dtype}"
            f"（{'复数' if kind == 'c' else '布尔' if kind == 'b' else '字符串' if kind in 'SU' else '非数值'}）。"
        )
    if x.ndim < min_ndim:
        raise ValueError(f"{name} 至少要有 {min_ndim} 维，收到的是 {x.ndim} 维，shape={x.shape}。")
    if 0 in x.shape:
        raise ValueError(f"{name} 不能是空数组（某一维长度为 0），收到的 shape={x.shape}。")
    out = x.astype(float_dtype(x.dtype), copy=False)
    if not np.all(np.isfinite(out)):
        bad = "NaN" if np.any(np.isnan(out)) else "inf"
        raise ValueError(f"{name} 含有 {bad}，期望所有元素都是有限实数。请先检查上游计算。")
    return out


def plain_array(x: np.ndarray, name: str) -> np.ndarray:
    """ndarray 的子类：掩码数组 (np.ma.MaskedArray) 拒绝并提示 ``filled``；其余（np.matrix、memmap ……）转成普通数组。

    子类会改掉运算的含义（np.matrix 的 ``*`` 是矩阵乘法，掩码数组的运算跳过被掩掉的元素），所以一律先转换。
    """
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(
            f"{name} 是掩码数组 (np.ma.MaskedArray)：被掩掉的元素该当作什么值，本书不替你猜。"
            f"提示：先用 {name}.filled(0.0)（或别的填充值）换成普通数组；注意力里要\"不许看\"某些位置，请用 mask 参数。"
        )
    return np.asarray(x) if type(x) is not np.ndarray else x


def finite_result(x: np.ndarray, what: str, hint: str = "") -> np.ndarray:
    """计算结果必须有限：输入都是有限数，但中间结果超出了浮点数的范围（溢出成 inf，或 inf − inf = NaN）。

    调用方在 ``np.errstate(over="ignore", invalid="ignore")`` 里计算（不让 NumPy 发 RuntimeWarning），再用它检查。
    """
    if not np.all(np.isfinite(x)):
        raise ValueError(
            f"{what} 溢出：输入都是有限数，但结果超出了浮点数能表示的范围"
            f"（float64 约 ±1.8e308，float32 约 ±3.4e38），得到了 inf 或 NaN。{hint}"
        )
    return x


OVERFLOW_HINT = "提示：把输入缩小到合理的量级（例如先标准化），float32 的输入可先转成 float64。"
SCALE_HINT = "提示：随机权重的 scale 多在 0.01 到 1 之间；scale × 随机数超出了 float64 的范围。"


def float_dtype(dtype: np.dtype) -> np.dtype:
    """计算用的浮点类型：整数转 float64，float32/float64 保持，更窄的浮点（float16）升到 float32。"""
    return np.dtype(np.float64) if dtype.kind in "iu" else np.result_type(dtype, np.float32)


def check_shape(x: np.ndarray, name: str, expected: tuple, hint: str = "") -> None:
    """检查 ``x.shape == expected``（expected 中的 None 表示这一维任意）。"""
    ok = x.ndim == len(expected) and all(e is None or e == s for e, s in zip(expected, x.shape))
    if not ok:
        shown = "(" + ", ".join("任意" if e is None else str(e) for e in expected) + ("," if len(expected) == 1 else "") + ")"
        raise ValueError(f"{name} 的形状应为 {shown}，收到的是 {x.shape}。{hint}")


def positive_int(n: object, name: str) -> int:
    """检查 ``n`` 是正整数（Python int 或 NumPy 整数，不接受 bool 和浮点数）。"""
    return _int_at_least(n, name, 1, "正整数")


MAX_ELEMENTS = 100_000_000  # 一个数组最多这么多个元素（float64 约 800 MB）：再大就会耗尽内存


MAX_BYTES = 2 * 1024**3  # 一次分配的内存预算：2 GiB。再大多半是参数写错了，而且会耗尽读者电脑的内存


def memory_budget(n_elements: int, itemsize: int, what: str, hint: str = "") -> None:
    """分配之前先算要多少内存：超过 ``MAX_BYTES``（2 GiB）就报错，写明会占多少和 ``hint``（该调小哪个参数）。"""
    need = int(n_elements) * int(itemsize)
    if need > MAX_BYTES:
        raise ValueError(f"{what} 要占 {need / 1024**3:.3g} GiB 内存（{n_elements} 个数 × {itemsize} 字节），"
                         f"超过了本书的预算 {MAX_BYTES / 1024**3:.0f} GiB。"
                         + (hint or "提示：把尺寸调小一些（例如 capacity、vocab_size、d_model）。"))


def at_most(n: int, name: str, limit: int, why: str) -> int:
    """整数参数的上限（已检查过是整数）：太大时会耗尽内存或算上几个小时，``why`` 说明为什么。"""
    if n > limit:
        raise ValueError(f"{name}={n} 太大：{why}，上限是 {limit}。")
    return n


def nonnegative_int(n: object, name: str) -> int:
    """检查 ``n`` 是非负整数（例如随机种子）。"""
    return _int_at_least(n, name, 0, "非负整数")


MAX_SEED = 2**32 - 1  # 随机种子的上限：本书的种子都是 0、1 这样的小整数，再大多半是写错了


def seed(s: object, name: str = "seed") -> int:
    """随机种子：[0, 2³² − 1] 里的整数（不收 bool、浮点数、None）。所有可交互图和 ``tl.runs`` 的实验都经过这里。

    NumPy 本身收任意大的非负整数，但本书的种子都是小整数：2**70 这样的数多半是写错了，
    而且一个新种子就意味着重新训练（几分钟）。
    """
    s = _int_at_least(s, name, 0, "非负整数")
    if s > MAX_SEED:
        raise ValueError(f"{name} 必须是非负整数且不超过 2³² − 1 = {MAX_SEED}，收到的是 {s}。"
                         "提示：本书的种子都是 0、1 这样的小整数；换一个种子，训练会重做一遍。")
    return s


def _int_at_least(n: object, name: str, low: int, what: str) -> int:
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Integral):
        raise TypeError(f"{name} 必须是{what}，收到的是 {describe(n)}。")
    if n < low:
        raise ValueError(f"{name} 必须是{what}（>= {low}），收到的是 {n}。")
    return int(n)


def _real_number(x: object, name: str, what: str) -> float:
    """类型检查：Python 或 NumPy 的整数、浮点数（不接受 bool）。"""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} 必须是{what}，收到的是 {describe(x)}。")
    try:
        return float(x)
    except OverflowError:  # 例如 10**400：Python 整数可以任意大，float64 最多约 1.8e308
        raise ValueError(f"{name} 太大了，超出 float64 的范围（约 ±1.8e308）：收到一个 {len(str(abs(int(x))))} 位的整数。") from None


def finite_real(x: object, name: str) -> float:
    """检查 ``x`` 是有限实数。"""
    x = _real_number(x, name, "实数")
    if not np.isfinite(x):
        raise ValueError(f"{name} 必须是有限实数，收到的是 {x}。")
    return x


def positive_real(x: object, name: str) -> float:
    """检查 ``x`` 是有限的正实数。"""
    x = _real_number(x, name, "正实数")
    if not np.isfinite(x) or x <= 0:
        raise ValueError(f"{name} 必须是有限的正实数 (> 0)，收到的是 {x}。")
    return x


def fraction(x: object, name: str, what: str = "一个比例") -> float:
    """[0, 1] 里的有限实数（份量、比例、阈值），不收 bool、字符串、NaN；``what`` 说明它是什么（写进报错）。

    >>> fraction(0.25, "threshold"), fraction(1, "min_mass", "注意力的份量")
    (0.25, 1.0)
    >>> fraction(1.5, "threshold", "注意力的份量")
    Traceback (most recent call last):
    ValueError: threshold 是注意力的份量，必须在 0 到 1 之间，收到的是 1.5。
    """
    x = finite_real(x, name)
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"{name} 是{what}，必须在 0 到 1 之间，收到的是 {x}。")
    return x


def positive_real_up_to(x: object, name: str, high: float, why: str) -> float:
    """(0, high] 里的实数；``why`` 说明为什么不能更大（写在报错的括号里）。"""
    x = positive_real(x, name)
    if x > high:
        raise ValueError(f"{name} 必须在 (0, {high:g}] 之内（{why}），收到的是 {x:g}。")
    return x


_INVISIBLE = re.compile(r"[\x00-\x20\x7f]")  # 浏览器解析网址前丢掉的控制字符和空白："java\tscript:" 也是 javascript:


def safe_link(url: object, name: str) -> str:
    """写进网页的链接 (href/src) 只许相对地址或 http(s)：``javascript:``、``data:`` 这类能执行脚本的协议一律拒绝。

    返回原来的字符串（还没转义：写进属性时再 ``html.escape(..., quote=True)``）。
    """
    if not isinstance(url, str):
        raise TypeError(f"{name} 必须是字符串（相对地址或 http(s) 网址），收到的是 {describe(url)}。")
    scheme = urlsplit(_INVISIBLE.sub("", url)).scheme.lower()
    if scheme not in ("", "http", "https"):
        raise ValueError(f"{name} 只能是相对地址或 http(s) 网址：收到 {url!r}（协议 {scheme!r}）。"
                         "提示：javascript:、data: 这类地址点开会执行脚本。")
    return url


def decay_rate(x: object, name: str) -> float:
    """滑动平均的衰减率 β（Adam 的 beta1、beta2）：[0, 1) 里的实数。

    β = 1 时旧值永远不变、新梯度一点也掺不进去，偏差修正 1 − βᵗ = 0 还会让参数变成 0/0 = NaN；β < 0 没有意义。
    """
    x = _real_number(x, name, "[0, 1) 里的实数")
    if not 0 <= x < 1:
        raise ValueError(f"{name} 必须在 [0, 1) 之内（滑动平均每步留下多少旧值），收到的是 {x}。"
                         f"提示：常用 beta1=0.9、beta2=0.999；等于 1 时偏差修正 1 − βᵗ = 0，参数会变成 NaN。")
    return x


def one_of(value: object, name: str, valid: tuple[str, ...]) -> str:
    """检查 ``value`` 是 ``valid`` 里的一个字符串；报错时列出全部合法取值。"""
    shown = "、".join(repr(v) for v in valid)
    if not isinstance(value, str):
        raise TypeError(f"{name} 必须是字符串，收到的是 {describe(value)}。可选：{shown}。")
    if value not in valid:
        raise ValueError(f"{name}={value!r} 不存在。可选：{shown}。")
    return value


def generator(rng: object, name: str = "rng") -> np.random.Generator:
    """检查随机数来源是 ``np.random.Generator``（本书从不用全局随机种子）。"""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"{name} 必须是 np.random.Generator，收到的是 {type(rng).__name__}。提示：{name} = np.random.default_rng(0)。"
        )
    return rng


def broadcast_batch(shapes: dict[str, tuple[int, ...]]) -> tuple[int, ...]:
    """检查各参数的批维度 (batch dims) 能否广播，返回广播后的批形状。"""
    try:
        return np.broadcast_shapes(*shapes.values())
    except ValueError:
        shown = ", ".join(f"{k} 的批维度 {v}" for k, v in shapes.items())
        raise ValueError(f"批维度无法广播 (broadcast)：{shown}。除最后两维外，其余维度须相等或为 1。") from None


def as_mask(mask: object, name: str, target: tuple[int, ...]) -> np.ndarray:
    """检查掩码 (mask)：bool 数组，能广播到 ``target``，且每一行至少允许看一个位置。"""
    if not isinstance(mask, np.ndarray):
        raise TypeError(f"{name} 必须是 bool 类型的 NumPy 数组，收到的是 {describe(mask)}。")
    mask = plain_array(mask, name)
    if mask.dtype != np.bool_:
        raise TypeError(
            f"{name} 的 dtype 必须是 bool（True = 允许关注），收到的是 dtype={mask.dtype}。"
            f"提示：可用 {name}.astype(bool) 或比较运算得到 bool 数组。"
        )
    try:
        full = np.broadcast_to(mask, target)
    except ValueError:
        raise ValueError(
            f"{name} 的形状 {mask.shape} 无法广播到注意力分数的形状 (..., T, S) = {target}。"
        ) from None
    blocked = ~np.any(full, axis=-1)
    if np.any(blocked):
        where = tuple(int(i) for i in np.argwhere(blocked)[0])
        raise ValueError(
            f"{name} 在位置 {where} 的一整行都是 False：这个查询 (query) 一个键 (key) 也不能看，"
            f"softmax 会得到 0/0 = NaN。每一行至少要有一个 True。"
        )
    return full


def as_scores(x: object, name: str, axis: object) -> np.ndarray:
    """softmax 的输入：实数 NumPy 数组，允许 -inf（被掩掉的位置），但沿 ``axis`` 每行至少一个有限值。"""
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{name} 必须是 NumPy 数组 (np.ndarray)，收到的是 {describe(x)}。"
                        f"提示：先用 np.asarray({name}, dtype=float) 转换。")
    x = plain_array(x, name)
    as_real_array(np.where(np.isneginf(x), 0, x) if x.dtype.kind == "f" else x, name)  # -inf 之外必须是有限实数
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis 必须是整数，收到的是 {describe(axis)}。")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis={axis} 越界：{name} 只有 {x.ndim} 维，axis 应在 [{-x.ndim}, {x.ndim - 1}] 之内。")
    x = x.astype(float_dtype(x.dtype), copy=False)
    if np.any(np.all(np.isneginf(x), axis=axis)):
        raise ValueError(f"{name} 沿 axis={axis} 有一整行都是 -inf：softmax 会得到 0/0 = NaN。每行至少要有一个有限值。")
    return x


def index(i: object, name: str, size: int, what: str) -> int:
    """0 <= i < size 的整数下标；``what`` 说明 size 数的是什么（例如 "k 只有 S=3 个键"）。"""
    if isinstance(i, (bool, np.bool_)) or not isinstance(i, numbers.Integral):
        raise TypeError(f"{name} 必须是整数，收到的是 {describe(i)}。")
    if not 0 <= i < size:
        raise ValueError(f"{name}={i} 越界：{what}，{name} 应在 [0, {size - 1}] 之内。")
    return int(i)


def nonempty_sequence(x: object, name: str, example: str) -> list:
    """非空的列表或元组（例如一串序列长度），返回列表；``example`` 是给读者看的正确写法。"""
    if not isinstance(x, (tuple, list)) or len(x) == 0:
        raise ValueError(f"{name} 必须是非空的元组或列表，例如 {example}，收到的是 {x!r}。")
    return list(x)


def string_list(x: object, name: str) -> tuple[str, ...]:
    """非空的字符串列表或元组（例如一串词），返回元组。"""
    if not isinstance(x, (list, tuple)) or not all(isinstance(t, str) for t in x):
        raise TypeError(f"{name} 必须是字符串的列表或元组，收到的是 {describe(x)}。")
    if len(x) == 0:
        raise ValueError(f"{name} 不能为空：至少要有一个词。")
    return tuple(x)


def nonempty_text(s: object, name: str) -> str:
    """要写在图上的一段字（标题、说明）：非空、不全是空白的字符串。"""
    if not isinstance(s, str) or not s.strip():
        raise (TypeError if not isinstance(s, str) else ValueError)(
            f"{name} 必须是非空的字符串（写在图上），收到的是 {describe(s)}。")
    return s


def boolean(x: object, name: str) -> bool:
    """开关参数：只收 True 或 False（不收 0/1、字符串——它们多半是传错了位置的参数）。"""
    if not isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} 必须是 bool（True 或 False），收到的是 {describe(x)}。")
    return bool(x)


def int_in_range(n: object, name: str, low: int, high: int) -> int:
    """[low, high] 之间的整数（bool 不算）。"""
    n = _int_at_least(n, name, low, "正整数" if low == 1 else f"不小于 {low} 的整数")
    if n > high:
        raise ValueError(f"{name} 必须在 [{low}, {high}] 之内，收到的是 {n}。")
    return n


def heads_divide(d_model: int, num_heads: int, source: str = "x 的最后一维", name: str = "d_model") -> None:
    """多头注意力的规则：d_model 必须能被头数整除（每个头分到 d_k = d_model / H 维）。

    ``source`` 说明 d_model 从哪里来（"x 的最后一维"；直接是调用者的参数时传 ""），``name`` 是它在报错里的名字。
    """
    if d_model % num_heads:
        where = f"{source} " if source else ""
        raise ValueError(f"{where}{name}={d_model} 必须能被 num_heads={num_heads} 整除（例如 512 = 8 × 64）。")


def token_ids(ids: object, name: str, vocab_size: int, what: str = "") -> np.ndarray:
    """词编号 (token ids)：整数 NumPy 数组，非空，每个值在 [0, vocab_size) 之内；返回 np.intp 版本。

    掩码数组拒绝（被掩掉的编号该当哪个词，不替你猜）；int8、uint16 这类窄整数转成 np.intp，
    之后拿编号做加减（下一个词、偏移）不会回绕 (wrap)，例如 int8 的 127 + 1 不会变成 -128。
    """
    if not isinstance(ids, np.ndarray):
        raise TypeError(f"{name} 必须是整数 NumPy 数组，收到的是 {describe(ids)}。"
                        f"提示：np.asarray({name}, dtype=int)。")
    ids = plain_array(ids, name)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"{name} 是词的编号，dtype 必须是整数，收到的是 dtype={ids.dtype}。"
                        f"提示：{name}.astype(int)（先确认里面都是整数）。")
    if ids.size == 0:
        raise ValueError(f"{name} 不能是空数组，收到的 shape={ids.shape}。")
    bad = (ids < 0) | (ids >= vocab_size)
    if np.any(bad):
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} 越界：{what or f'词表只有 V={vocab_size} 个词'}，编号应在 [0, {vocab_size - 1}] 之内，"
                         f"收到位置 {where} 的值 {int(ids[where])}。")
    return ids.astype(np.intp, copy=False)  # 都在 [0, V) 里：转换不会丢值


def vector(v: object, name: str, length: int, hint: str = "") -> np.ndarray:
    """长度为 ``length`` 的一维实数数组（LayerNorm 的 γ、β，偏置……）。"""
    v = as_real_array(v, name)
    check_shape(v, name, (length,), hint or f"（长度必须等于 x 的最后一维 D={length}）")
    return v


def grad_like(grad_out: object, shape: tuple[int, ...], name: str = "grad_out") -> np.ndarray:
    """反向函数收到的梯度：实数数组，形状必须等于前向输出的形状。"""
    grad_out = as_real_array(grad_out, name)
    check_shape(grad_out, name, shape, f"（{name} 是损失对前向输出的梯度，必须与前向输出同形状）")
    return grad_out
