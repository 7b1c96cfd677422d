"""第 12 章的练习：RMSNorm、把 RoPE 用到一个向量上。每个常见错误一种（或几种）错误写法，都在这里独立写出，
必须被认成恰好那个错误；独立写的正确写法（循环、复数乘法、先转整行再取一行……）必须通过；参考答案和
``core.rms_norm``、``core.rotary`` 逐个输入一致（那两个是另外写的，带缩放、float32 的处理）。

检查走 ``tl.exercises.check``（``helpers.exercises.assert_status``），和读者在 notebook 里用的是同一个入口；
参考答案通过、起始代码是 not_attempted、每个错误写法认得出、乱写的函数有中文说明，由 ``tests/exercises/test_checker.py``
对每一章的练习统一检查。
"""

from __future__ import annotations

import numpy as np
import pytest

from transformer_lab.core.rms_norm import rms_norm as core_rms_norm
from transformer_lab.core.rotary import rotary, rotary_halves
from transformer_lab.exercises import ch12

from helpers.exercises import assert_status

EXERCISES = {ex.name: ex for ex in ch12.EXERCISES}


def test_chapter_12_exercises_are_loaded():
    import transformer_lab as tl
    assert list(tl.exercises.for_chapter(12)) == ["rms_norm", "apply_rope"]


def test_ids_are_distinct_and_each_exercise_has_two():
    for ex in ch12.EXERCISES:
        ids = [m.id for m in ex.mistakes]
        assert len(ids) >= 2 and len(set(ids)) == len(ids)
        assert ex.chapter == 12 and len(ex.hints) == 3


# ---------------------------------------------------------------- rms_norm


def test_rms_norm_agrees_with_core_on_every_case():
    for case in EXERCISES["rms_norm"].test_cases():
        x, w, eps = case.args
        np.testing.assert_allclose(ch12.rms_norm(x, w, eps), core_rms_norm(x, w, eps), rtol=2e-5, atol=1e-6)


def test_rms_norm_hand_worked():
    # mean(x²) = (9 + 16) / 2 = 12.5，√12.5 = 3.5355…
    np.testing.assert_allclose(ch12.rms_norm(np.array([3.0, 4.0]), np.ones(2), 0.0), [3 / 12.5**0.5, 4 / 12.5**0.5])


def rms_loops(x, weight, eps):
    flat = np.asarray(x, dtype=np.float64).reshape(-1, x.shape[-1])
    out = np.empty(flat.shape)
    for r, row in enumerate(flat):
        root = (sum(v * v for v in row) / len(row) + eps) ** 0.5
        for c, v in enumerate(row):
            out[r, c] = weight[c] * v / root
    return out.reshape(x.shape)


def rms_via_norm(x, weight, eps):
    d = x.shape[-1]
    return weight * x / np.sqrt(np.linalg.norm(x, axis=-1, keepdims=True) ** 2 / d + eps)


@pytest.mark.parametrize("fn", [rms_loops, rms_via_norm])
def test_rms_norm_correct_variants_pass(fn):
    assert_status("rms_norm", fn, "passed")


def rms_layer_norm(x, weight, eps):
    c = x - np.mean(x, axis=-1, keepdims=True)
    return weight * c / np.sqrt(np.var(x, axis=-1, keepdims=True) + eps)


def rms_eps_outside(x, weight, eps):
    return weight * x / (np.sqrt(np.mean(x**2, axis=-1, keepdims=True)) + eps)


def rms_no_sqrt(x, weight, eps):
    return weight * x / (np.mean(x**2, axis=-1, keepdims=True) + eps)


def rms_columns(x, weight, eps):
    return weight * x / np.sqrt(np.mean(x**2, axis=0, keepdims=True) + eps)


def rms_no_weight(x, weight, eps):
    return x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + eps)


@pytest.mark.parametrize("fn, diagnosis", [
    (rms_layer_norm, "subtracts_mean"), (rms_eps_outside, "eps_outside_sqrt"), (rms_no_sqrt, "no_sqrt"),
    (rms_columns, "wrong_axis"), (rms_no_weight, "forgot_weight"),
], ids=lambda x: x if isinstance(x, str) else "")
def test_rms_norm_mistakes(fn, diagnosis):
    assert_status("rms_norm", fn, "failed", diagnosis)


def test_rms_norm_in_place_is_mutation():
    def in_place(x, weight, eps):
        x /= np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + eps)
        return x * weight
    assert_status("rms_norm", in_place, "failed", "mutates_input")


# ---------------------------------------------------------------- apply_rope


def test_apply_rope_agrees_with_core_on_every_case():
    for case in EXERCISES["apply_rope"].test_cases():
        x, position, base = case.args
        expected = rotary(x[None, :], start=position, base=base)[0]
        np.testing.assert_allclose(ch12.apply_rope(x, position, base), expected, rtol=2e-5, atol=1e-6)


def test_apply_rope_hand_worked():
    # 位置 2、d = 4、base = 10000：ω = [1, 0.01]，第一对转 2 弧度，第二对转 0.02 弧度
    out = ch12.apply_rope(np.array([1.0, 0.0, 1.0, 0.0]), 2, 10000.0)
    np.testing.assert_allclose(out, [np.cos(2), np.sin(2), np.cos(0.02), np.sin(0.02)])


def rope_complex(x, position, base):
    d = x.shape[-1]
    z = x[0::2] + 1j * x[1::2]                             # 每一对当成一个复数
    z = z * np.exp(1j * position * base ** (-np.arange(0, d, 2) / d))
    out = np.empty(d)
    out[0::2], out[1::2] = z.real, z.imag
    return out


def rope_from_table(x, position, base):
    rows = np.tile(np.asarray(x, dtype=np.float64), (position + 1, 1))
    return rotary(rows, start=0, base=base)[position]      # 整张表从位置 0 转起，取第 position 行


@pytest.mark.parametrize("fn", [rope_complex, rope_from_table])
def test_apply_rope_correct_variants_pass(fn):
    assert_status("apply_rope", fn, "passed")


def rope_backwards(x, position, base):
    return rope_complex(x, -position, base)


def rope_halves(x, position, base):
    return rotary_halves(np.asarray(x, dtype=np.float64)[None, :], start=position, base=base)[0]


def rope_pair_index(x, position, base):
    d = x.shape[-1]
    z = (x[0::2] + 1j * x[1::2]) * np.exp(1j * position * base ** (-np.arange(d // 2) / d))
    out = np.empty(d)
    out[0::2], out[1::2] = z.real, z.imag
    return out


def rope_base_fixed(x, position, base):
    return rope_complex(x, position, 10000.0)


@pytest.mark.parametrize("fn, diagnosis", [
    (rope_backwards, "rotates_backwards"), (rope_halves, "halves_not_interleaved"),
    (rope_pair_index, "exponent_uses_pair_index"), (rope_base_fixed, "base_ignored"),
], ids=lambda x: x if isinstance(x, str) else "")
def test_apply_rope_mistakes(fn, diagnosis):
    assert_status("apply_rope", fn, "failed", diagnosis)


def test_apply_rope_keeps_the_length():
    rng = np.random.default_rng(0)
    x = rng.normal(size=64)
    for position in (0, 1, 100, 8191):
        assert np.linalg.norm(ch12.apply_rope(x, position, 100000.0)) == pytest.approx(np.linalg.norm(x), rel=1e-12)


def test_apply_rope_in_place_is_mutation():
    def in_place(x, position, base):
        x[:] = rope_complex(x, position, base)
        return x
    assert_status("apply_rope", in_place, "failed", "mutates_input")


@pytest.mark.parametrize("name", list(EXERCISES))
@pytest.mark.parametrize("fn, status", [
    (lambda *a, **k: None, "failed"), (lambda *a, **k: "答案", "failed"), (42, "error"),
], ids=["returns-none", "string", "not-a-function"])
def test_garbage_gets_an_explanation(name, fn, status):
    assert_status(name, fn, status)
