"""第 6 章的练习：正弦位置编码和 RoPE。每个常见错误一种（或几种）错误写法，都在这里独立写出，
必须被认成恰好那个错误；独立写的正确写法（两层循环、exp-log 的写法、复数、逐行旋转矩阵……）必须通过。"""

from __future__ import annotations

import math

import numpy as np
import pytest

import transformer_lab as tl

from helpers.exercises import assert_status

# ---------------------------------------------------------------- positional_encoding：错误写法表


def pe_loops(num_positions, d_model, swap=False, column_exponent=None):
    """按公式逐个元素写；swap 把 sin/cos 对调，column_exponent(j) 给出第 j 列的指数分子（默认是它那一对的 2i）。"""
    pe = np.zeros((num_positions, d_model))
    for p in range(num_positions):
        for j in range(d_model):
            top = column_exponent(j) if column_exponent else 2 * (j // 2)
            angle = p / math.pow(10000, top / d_model)
            use_sin = (j % 2 == 0) != swap
            pe[p, j] = math.sin(angle) if use_sin else math.cos(angle)
    return pe


def pe_concatenated(num_positions, d_model):
    angles = np.outer(np.arange(num_positions), 10000.0 ** (-np.arange(d_model // 2) * 2 / d_model))
    return np.hstack([np.sin(angles), np.cos(angles)])


@pytest.mark.parametrize("fn, diagnosis", [
    (lambda n, d: pe_loops(n, d, swap=True), "sin_cos_swapped"),
    (lambda n, d: pe_loops(n, d, column_exponent=lambda j: j), "exponent_uses_column"),
    (lambda n, d: pe_loops(n, d, column_exponent=lambda j: 2 * j), "exponent_uses_column"),
    (pe_concatenated, "halves_not_interleaved"),
], ids=["swapped", "column-j", "column-2j", "halves"])
def test_positional_encoding_mistakes(fn, diagnosis):
    assert_status("positional_encoding", fn, "failed", diagnosis)


def pe_torch_tutorial(num_positions, d_model):
    position = np.arange(num_positions, dtype=float)[:, None]
    div_term = np.exp(np.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))   # exp-log 写法
    pe = np.zeros((num_positions, d_model))
    pe[:, 0::2] = np.sin(position * div_term)
    pe[:, 1::2] = np.cos(position * div_term)
    return pe


def pe_complex(num_positions, d_model):
    angles = np.arange(num_positions)[:, None] * 10000.0 ** (-np.arange(0, d_model, 2) / d_model)
    z = np.exp(1j * angles)                                   # cos + i·sin
    return np.stack([z.imag, z.real], axis=-1).reshape(num_positions, d_model)


@pytest.mark.parametrize("fn", [pe_loops, pe_torch_tutorial, pe_complex, tl.sinusoidal_positional_encoding],
                         ids=["loops", "exp-log", "complex", "package"])
def test_positional_encoding_correct_variants_pass(fn):
    assert_status("positional_encoding", fn, "passed")


def test_positional_encoding_hand_worked_numbers_in_message():
    fb = tl.exercises.check("positional_encoding", lambda n, d: pe_loops(n, d, swap=True))
    assert "[0.8415 0.5403 0.01   1.    ]" in fb.message   # 第 6 章手算的位置 1：sin 1, cos 1, sin 0.01, cos 0.01


# ---------------------------------------------------------------- rope：错误写法表


def rope_complex(x, sign=1.0, first=0):
    """每一对 (x_2i, x_2i+1) 看成复数 x_2i + i·x_2i+1，乘 e^{i·sign·(first+p)·ω_i} 就是转 (first+p)·ω_i。"""
    T, d = x.shape
    angles = (first + np.arange(T))[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
    z = (x[:, 0::2] + 1j * x[:, 1::2]) * np.exp(1j * sign * angles)
    return np.stack([z.real, z.imag], axis=-1).reshape(T, d)


def rope_rotate_half(x):
    T, d = x.shape
    angles = np.arange(T)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
    cos, sin = np.cos(np.hstack([angles, angles])), np.sin(np.hstack([angles, angles]))
    x1, x2 = x[:, :d // 2], x[:, d // 2:]
    return x * cos + np.hstack([-x2, x1]) * sin


@pytest.mark.parametrize("fn, diagnosis", [
    (lambda x: rope_complex(x, sign=-1.0), "rotates_backwards"),
    (rope_rotate_half, "halves_not_interleaved"),
    (lambda x: rope_complex(x, first=1), "positions_from_one"),
], ids=["backwards", "rotate-half", "from-one"])
def test_rope_mistakes(fn, diagnosis):
    assert_status("rope", fn, "failed", diagnosis)


def rope_matrices(x):
    """逐行乘第 6 章的旋转矩阵：行向量 x[p] 乘 R_p（块 [[cos, sin], [-sin, cos]]）。"""
    T, d = x.shape
    out = np.zeros((T, d))
    for p in range(T):
        R = np.zeros((d, d))
        for i in range(d // 2):
            c, s = math.cos(p / 10000 ** (2 * i / d)), math.sin(p / 10000 ** (2 * i / d))
            R[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, s], [-s, c]]
        out[p] = x[p] @ R
    return out


@pytest.mark.parametrize("fn", [rope_complex, rope_matrices, tl.rope], ids=["complex", "matrices", "package-float32"])
def test_rope_correct_variants_pass(fn):
    assert_status("rope", fn, "passed")


def test_rope_in_place_is_mutation():
    def in_place(x):
        out = rope_complex(x)
        x[...] = out
        return x
    assert_status("rope", in_place, "failed", "mutates_input")
