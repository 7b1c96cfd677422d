"""``widgets/slider.py``：滑块的默认值、显示名和取值检查（构造时的报错在文件末尾的表里）。"""

from __future__ import annotations

import numpy as np
import pytest

from transformer_lab.widgets.slider import Slider

from helpers.errors import call, check_error, error_table_test


def test_slider_starts_at_its_default_or_the_middle():
    assert Slider("n", (1, 2, 3, 4, 5)).start == 3
    assert Slider("n", (1, 2, 3, 4)).start == 3  # 偶数个取值：正中间偏右的那个（下标 4 // 2）
    assert Slider("n", (1, 2, 3), default=1).start == 1


def test_shown_name_and_values_become_a_tuple():
    s = Slider("d_k", [1, 2], label="每个向量的长度 d_k")
    assert s.shown == "每个向量的长度 d_k" and Slider("d_k", (1, 2)).shown == "d_k"
    assert s.values == (1, 2) and isinstance(s.values, tuple)


@pytest.mark.parametrize("values, integral", [
    ((1, 2, 4), True), ((np.int64(1), np.int64(2)), True), ((1, 2.5), False), ((True, False), False), (("a", "b"), False),
], ids=["ints", "numpy-ints", "float", "bools", "strings"])
def test_integral_means_every_value_is_a_true_integer(values, integral):
    assert Slider("n", values).integral is integral


def test_slider_check_keeps_ints_and_float_values():
    assert Slider("n", (1, 4), continuous=True).check(np.int64(3)) == 3
    assert type(Slider("n", (1, 4), continuous=True).check(np.int64(3))) is int
    assert Slider("g", (0.5, 2.0), continuous=True).check(1) == 1  # 浮点滑块收整数：在范围内就行
    assert Slider("g", (0.5, 2.0), continuous=True).check(0.75) == 0.75
    assert Slider("w", ("a", "b")).check("b") == "b"


@pytest.mark.parametrize("slider, value, exc, pattern", [
    (Slider("n", (1, 2, 4)), 3, ValueError, r"滑块 n=3 不在它的取值里。可选：1、2、4"),
    (Slider("n", (1, 4), continuous=True), True, TypeError, r"滑块 n 只取整数.*True"),
    (Slider("n", (1, 4), continuous=True), 5, ValueError, r"滑块 n=5 超出范围：应在 \[1, 4\] 之内"),
    (Slider("n", (1, 4), continuous=True), 2.5, TypeError, r"滑块 n 只取整数，收到的是 float 2.5"),
    (Slider("g", (0.5, 2.0), continuous=True), float("nan"), ValueError, r"滑块 g=nan 超出范围"),
    (Slider("g", (0.5, 2.0), continuous=True), "1", TypeError, r"滑块 g 只取实数，收到的是 str '1'"),
    (Slider("w", ("1", "2")), 1, ValueError, r"滑块 w=1 不在它的取值里"),  # "1" 不等于 1
    (Slider("w", (0.0, 1.0)), True, ValueError, r"滑块 w=True 不在它的取值里"),  # True 不等于 1.0
    (Slider("w", (0.0, 1.0)), "1.0", ValueError, r"滑块 w='1.0' 不在它的取值里"),
], ids=["off-grid", "bool-for-int", "above-range", "float-for-int", "nan", "string-for-real", "int-for-string",
        "bool-for-float", "string-for-float"])
def test_slider_check_rejects(slider, value, exc, pattern):
    check_error(lambda: slider.check(value), exc, pattern)


def test_every_grid_value_passes_its_own_check():
    for s in (Slider("n", (1, 2, 4)), Slider("g", (0.5, 2.0), continuous=True), Slider("w", ("a", "b")),
              Slider("b", (True, False))):
        assert [s.check(v) for v in s.values] == list(s.values)


VE, TE = ValueError, TypeError

# 引擎统一检查的滑块取值与构造参数
ERROR_CASES = [
    ("slider-one-value", call(Slider, "d_k", (1,)), VE, r"滑块 d_k 至少要有 2 个取值"),
    ("slider-no-values", call(Slider, "d_k", ()), VE, r"滑块 d_k 至少要有 2 个取值"),
    ("slider-default-not-in-grid", call(Slider, "d_k", (1, 2, 4), default=3), VE, r"默认值 3 不在网格"),
    ("slider-continuous-strings", call(Slider, "a", ("x", "y"), continuous=True), TE, r"连续滑块 a 的取值必须都是数"),
    ("slider-name-not-identifier", call(Slider, "a b", (1, 2)), TE, r"滑块的名字必须是合法的参数名.*'a b'"),
    ("slider-continuous-string", call(Slider, "a", (1, 2), continuous="yes"), TE, r"滑块 a 的 continuous 必须是 bool.*'yes'"),
    ("slider-continuous-int", call(Slider, "a", (1, 2), continuous=1), TE, r"continuous 必须是 bool.*int 1"),
    ("slider-step-zero", call(Slider, "a", (1, 2), step=0), VE, r"滑块 a 的 step（活滑块每格走多少）必须是有限的正数.*0"),
    ("slider-step-string", call(Slider, "a", (1, 2), step="x"), VE, r"step.*必须是有限的正数.*'x'"),
    ("slider-value-nan", call(Slider, "a", (1, float("nan"))), VE, r"滑块 a 的取值必须都是有限的数"),
    ("slider-duplicate-values", call(Slider, "a", (1, 2, 1)), VE, r"滑块 a 的取值有重复：\(1, 2, 1\)"),
]
test_documented_errors = error_table_test(ERROR_CASES)
