"""KV 缓存 (KV cache)：逐词生成时，把已经算过的键 (key) 和值 (value) 存起来，不再重算。

因果注意力里，第 t 个词只看它自己和之前的词。逐词生成第 t + 1 个词时，前 t 个词的 k、v 一点没变；
不用缓存就得把整段前文重新投影、重新算整张注意力表，用了缓存只需：

1. 把新词投影成 q、k、v（各 1 行）；
2. 把新词的 k、v 追加进缓存；
3. 新词的 q 与缓存里的全部键做注意力（1 × t 的一行分数，而不是 t × t 的整张表）。

这里的 ``KVCache`` 是本书唯一"有状态"的对象：缓存的意义就是记住过去，把状态藏起来反而说不清。
它在创建时一次性**预先分配**好 ``capacity`` 个位置：每步追加只是写进下一格（O(d)），而每步
``np.concatenate`` 长出新数组要把旧内容整个复制一遍（第 t 步复制 t 行，生成 T 个词总共复制
约 T²/2 行，正好把省下的功夫又花回去）。真实系统也是按最大上下文长度预先分配；满了就报错。

本模块只依赖 NumPy。形状字母：T 生成的词数，d_k 键长度，d_v 值长度，H 头数，D = d_model。
"""

from __future__ import annotations

import numpy as np

from .. import _validation as check
from .tiled import tiled_attention_unchecked

__all__ = ["KVCache"]


def _batch_shape(batch_shape: object) -> tuple[int, ...]:
    if not isinstance(batch_shape, tuple):
        raise TypeError(f"batch_shape 必须是正整数组成的元组，例如 () 或 (H,)，收到的是 {check.describe(batch_shape)}。")
    return tuple(check.positive_int(n, "batch_shape 的每一项") for n in batch_shape)


def _float_dtype(dtype: object) -> np.dtype:
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"dtype 必须是 np.float32 或 np.float64，收到的是 {dtype!r}。")
    return np.dtype(dtype)


class KVCache:
    """逐词生成用的 KV 缓存：预先分配 ``capacity`` 个位置，追加新词的 k、v，让新词的 q 看全部缓存。

    Parameters
    ----------
    capacity : int
        最多能存多少个词（最大上下文长度），正整数。
    d_k : int
        每个键的长度。
    d_v : int, optional
        每个值的长度，默认等于 ``d_k``。
    batch_shape : tuple of int, default ()
        k、v 前面的批维度，例如多头时是 ``(H,)``，带批次时是 ``(B, H)``。
    dtype : np.float32 or np.float64, default np.float64

    Raises
    ------
    TypeError
        参数类型不对。
    ValueError
        ``capacity``、``d_k``、``d_v`` 或批维度不是正数；预先分配的内存超过 2 GiB（``_validation.MAX_BYTES``）。

    Examples
    --------
    三个词逐个生成（单头，d_k = 1，scale = 1）：第 3 个词的 q = 1 看到分数 [0, 0, 1]。

    >>> import numpy as np
    >>> cache = KVCache(capacity=4, d_k=1)
    >>> ks, vs = [0.0, 0.0, 1.0], [1.0, 2.0, 3.0]
    >>> for t in range(3):
    ...     out = cache.step(np.array([[1.0]]), np.array([[ks[t]]]), np.array([[vs[t]]]), scale=1.0)
    >>> cache.length, cache.keys.shape
    (3, (3, 1))
    >>> e = np.e
    >>> out.round(4), round((1 + 2 + 3 * e) / (2 + e), 4)          # softmax([0, 0, 1]) · [1, 2, 3]
    (array([[2.3642]]), 2.3642)
    """

    def __init__(self, capacity: int, d_k: int, d_v: int | None = None, batch_shape: tuple = (),
                 dtype: type = np.float64) -> None:
        self.capacity = check.positive_int(capacity, "capacity")
        self.d_k = check.positive_int(d_k, "d_k")
        self.d_v = self.d_k if d_v is None else check.positive_int(d_v, "d_v")
        self.batch_shape = _batch_shape(batch_shape)
        dtype = _float_dtype(dtype)
        per_token = int(np.prod(self.batch_shape, dtype=object)) * (self.d_k + self.d_v)  # 每个位置存 k 与 v
        check.memory_budget(self.capacity * per_token, dtype.itemsize, f"KV 缓存（capacity={self.capacity}）")
        self._k = np.zeros(self.batch_shape + (self.capacity, self.d_k), dtype=dtype)  # (..., capacity, d_k)
        self._v = np.zeros(self.batch_shape + (self.capacity, self.d_v), dtype=dtype)  # (..., capacity, d_v)
        self.length = 0  # 已存的词数

    @property
    def keys(self) -> np.ndarray:
        """已存的键，只读视图，形状 (..., length, d_k)。"""
        view = self._k[..., : self.length, :]  # (..., length, d_k)
        view.flags.writeable = False
        return view

    @property
    def values(self) -> np.ndarray:
        """已存的值，只读视图，形状 (..., length, d_v)。"""
        view = self._v[..., : self.length, :]  # (..., length, d_v)
        view.flags.writeable = False
        return view

    @property
    def nbytes(self) -> int:
        """预先分配的内存（字节）：2 × capacity × d × 每个数的字节数 × 批大小（k 与 v 各一份）。"""
        return self._k.nbytes + self._v.nbytes

    def _check_token(self, x: object, name: str, width: int) -> np.ndarray:
        x = check.as_real_array(x, name, min_ndim=2)
        expected = self.batch_shape + (None, width)
        check.check_shape(x, name, expected, hint=f"提示：最后一维是 {'d_k' if name != 'v' else 'd_v'}={width}，"
                          f"前面的批维度是 batch_shape={self.batch_shape}。")
        return x

    def _fits(self, x: np.ndarray, name: str) -> np.ndarray:
        """转成缓存的 dtype；float64 的值超出 float32 的范围（约 ±3.4e38）时报错，而不是存进 inf。
        已经是缓存的 dtype 时直接用（不复制；有限性 ``_check_token`` 查过了）。"""
        if x.dtype == self._k.dtype:
            return x
        with np.errstate(over="ignore"):
            out = x.astype(self._k.dtype)
        if not np.all(np.isfinite(out)):
            raise ValueError(f"{name} 里有超出缓存 dtype={self._k.dtype} 范围的值（最大绝对值 {np.max(np.abs(x)):.3g}，"
                             f"{self._k.dtype} 最多约 {np.finfo(self._k.dtype).max:.3g}），存进去会变成 inf。"
                             "提示：用 dtype=np.float64 创建缓存，或先把输入缩小。")
        return out

    def _checked_kv(self, k: object, v: object) -> tuple[np.ndarray, np.ndarray]:
        """append 的全部检查（不写缓存）：形状、词数、容量、dtype 范围。"""
        k = self._check_token(k, "k", self.d_k)
        v = self._check_token(v, "v", self.d_v)
        n = k.shape[-2]
        if v.shape[-2] != n:
            raise ValueError(f"k 与 v 的词数必须相等：k.shape={k.shape}, v.shape={v.shape}。")
        if self.length + n > self.capacity:
            raise ValueError(
                f"KV 缓存已满：capacity={self.capacity}，已存 {self.length} 个词，放不下再追加的 {n} 个。"
                "提示：创建时把 capacity 设成要生成的总词数（最大上下文长度）。"
            )
        return self._fits(k, "k"), self._fits(v, "v")

    def append(self, k: np.ndarray, v: np.ndarray) -> None:
        """把 n 个新词的 k (..., n, d_k) 与 v (..., n, d_v) 写进缓存的下 n 格（通常 n = 1）。

        Raises ``ValueError``：形状不对、缓存放不下（已满），或值超出缓存 dtype 的范围（float32 约 ±3.4e38）。
        出错时缓存不变。
        """
        self.append_unchecked(*self._checked_kv(k, v))

    def append_unchecked(self, k: np.ndarray, v: np.ndarray) -> None:
        """``append`` 的写入本身（形状、容量已由调用者检查过）：直接写进预先分配的数组，不另做副本。
        逐词生成的一步（``core/decoder.py``）在循环外检查过缓存，之后每一步用它。"""
        n = k.shape[-2]
        self._k[..., self.length : self.length + n, :] = k  # (..., n, d_k) 写进缓存自己的数组
        self._v[..., self.length : self.length + n, :] = v  # (..., n, d_v)
        self.length += n

    def truncate(self, length: int) -> None:
        """撤回到只存前 ``length`` 个词（``length`` 不超过现在的词数）：后面那几格留在原处，但不再算数，
        下次追加会覆盖它们。一步计算中途出错时用它把缓存恢复成这一步之前的样子。

        Raises ``TypeError``、``ValueError``：``length`` 不是 [0, 现在的词数] 之内的整数。

        Examples
        --------
        >>> import numpy as np
        >>> cache = KVCache(capacity=3, d_k=1)
        >>> cache.append(np.ones((2, 1)), np.ones((2, 1)))
        >>> cache.truncate(1)
        >>> cache.length, cache.keys.shape
        (1, (1, 1))
        """
        self.length = check.int_in_range(length, "length", 0, self.length)

    def attend(self, q: np.ndarray, scale: float | None = None, block_size: int = 512) -> np.ndarray:
        """最后 n 个词的查询 q (..., n, d_k) 因果地看缓存里的全部键，返回 (..., n, d_v)。

        查询 i 看键 j <= i + (length - n)：即每个新词看它自己和它之前的所有词
        （分块计算，见 ``tiled_attention``）。

        Raises ``ValueError``：q 的形状不对、词数不在 [1, length] 之内，或分数 q·kᵀ × scale、输出溢出
        （与 ``tiled_attention`` 相同的检查）。
        """
        q = self._check_token(q, "q", self.d_k)
        if not 1 <= q.shape[-2] <= self.length:
            raise ValueError(f"q 的词数 n 必须在 [1, length={self.length}] 之内（先 append 再 attend），"
                             f"收到 q.shape={q.shape}。")
        scale = None if scale is None else check.positive_real(scale, "scale")
        block_size = check.positive_int(block_size, "block_size")
        with np.errstate(over="ignore", invalid="ignore"):  # 与 tiled_attention 相同：溢出时统一报错，不发警告
            out = tiled_attention_unchecked(q, self.keys, self.values, None, scale, True, block_size)  # (..., n, d_v)
        return check.finite_result(out, "KV 缓存注意力的输出（分数 q·kᵀ × scale 或加权求和）", check.OVERFLOW_HINT)

    def step(self, q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float | None = None) -> np.ndarray:
        """生成一步：``append(k, v)`` 然后 ``attend(q)``。q、k、v 形状 (..., n, d)（通常 n = 1），返回 (..., n, d_v)。

        要么全做、要么全不做：任何一步出错（形状、容量、q 的行数多于这次追加的词数、scale、溢出），
        缓存都保持调用前的样子。

        Raises ``ValueError``：与 ``append``、``attend`` 相同；q 的行数多于这次追加的 k、v 的词数。
        """
        q = self._check_token(q, "q", self.d_k)
        k, v = self._checked_kv(k, v)
        if q.shape[-2] > k.shape[-2]:
            raise ValueError(f"q 的行数 ({q.shape[-2]}) 不能多于这一步追加的词数 ({k.shape[-2]})：每个查询是一个新词，"
                             f"要带着它自己的 k、v。收到 q.shape={q.shape}, k.shape={k.shape}。"
                             "提示：要让更早的词再查一次，请用 attend。")
        scale = None if scale is None else check.positive_real(scale, "scale")
        before = self.length
        self.append_unchecked(k, v)  # 上面已检查过：不再查第二遍
        try:
            return self.attend(q, scale)  # (..., n, d_v)
        except ValueError:
            self.truncate(before)  # 溢出：撤回这次追加（多写的几格在 length 之外，等于没写）
            raise
