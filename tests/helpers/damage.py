"""把一个好文件弄坏的两种办法，缓存和模型文件的性质测试共用：截断在某处，或把某一个字节换成别的值。"""

from __future__ import annotations

from hypothesis import strategies as st


def damage(good: bytes, at: int, xor: int, truncate: bool) -> bytes:
    """``truncate`` 时只留前 ``at`` 个字节；否则第 ``at`` 个字节与 ``xor`` 异或（``xor`` 为 0 时原样不动）。

    >>> damage(b"abc", 1, 0, True), damage(b"abc", 1, 1, False)
    (b'a', b'acc')
    """
    return good[:at] if truncate else good[:at] + bytes([good[at] ^ xor]) + good[at + 1:]


def draw_damage(data, good: bytes) -> bytes:
    """用 Hypothesis 的 ``data`` 抽一种弄坏的办法：截断到比原来短，或把一个字节改成一个**不同**的值。"""
    if data.draw(st.booleans(), label="截断"):
        return damage(good, data.draw(st.integers(0, len(good) - 1), label="长度"), 0, True)
    at, xor = data.draw(st.integers(0, len(good) - 1), label="位置"), data.draw(st.integers(1, 255), label="异或")
    return damage(good, at, xor, False)
