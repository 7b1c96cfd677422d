"""_validation.py 里几章的图共用的检查：写在图上的字、有上限的正实数（原来各自写在 figures/ch01、ch03、ch04 里）。

其余的检查由用到它们的公开函数的报错表测（tests/core、tests/lessons ……）。
"""

import numpy as np

from transformer_lab import _validation as check

from helpers.errors import call, error_table_test


def test_nonempty_text_returns_the_text_unchanged():
    for text in ("小猫睡了", " 前后有空格 ", "$d_k$"):
        assert check.nonempty_text(text, "title") is text


def test_positive_real_up_to_accepts_the_upper_bound_and_numpy_numbers():
    assert check.positive_real_up_to(4, "gain", 4.0, "再大就溢出") == 4.0
    assert check.positive_real_up_to(np.float32(0.5), "gain", 4.0, "再大就溢出") == 0.5
    assert isinstance(check.positive_real_up_to(1, "gain", 4.0, "再大就溢出"), float)


def test_fraction_accepts_both_ends_and_numpy_numbers():
    """[0, 1] 的两端都收；NumPy 的数变成 Python float（原来是 pretrained/measures.py 里的 _fraction）。"""
    assert check.fraction(0, "p") == 0.0 and check.fraction(1, "p") == 1.0
    assert type(check.fraction(np.float32(0.5), "p")) is float


VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("fraction-above", call(check.fraction, 1.5, "threshold", "注意力的份量"), VE,
     r"^threshold 是注意力的份量，必须在 0 到 1 之间，收到的是 1\.5。"),
    ("fraction-negative", call(check.fraction, -0.1, "p"), VE, r"^p 是一个比例，必须在 0 到 1 之间，收到的是 -0\.1"),
    ("fraction-nan", call(check.fraction, np.nan, "p"), VE, r"^p 必须是有限实数，收到的是 nan"),
    ("fraction-bool", call(check.fraction, True, "p"), TE, r"^p 必须是实数.*bool"),
    ("fraction-str", call(check.fraction, "0.5", "p"), TE, r"^p 必须是实数.*'0\.5'"),
    ("text-empty", call(check.nonempty_text, "", "note"), VE, r"^note 必须是非空的字符串（写在图上），收到的是 字符串 ''"),
    ("text-blank", call(check.nonempty_text, " \n ", "title"), VE, r"^title 必须是非空的字符串"),
    ("text-none", call(check.nonempty_text, None, "note"), TE, r"^note 必须是非空的字符串.*NoneType"),
    ("text-list", call(check.nonempty_text, ["a"], "titles"), TE, r"^titles 必须是非空的字符串.*list"),
    ("up-to-above", call(check.positive_real_up_to, 4.5, "gain", 4.0, "再大曲线就超出纵轴"), VE,
     r"^gain 必须在 \(0, 4\] 之内（再大曲线就超出纵轴），收到的是 4\.5。"),
    ("up-to-zero", call(check.positive_real_up_to, 0, "gain", 4.0, "再大就溢出"), VE, r"^gain 必须是有限的正实数 \(> 0\)"),
    ("up-to-inf", call(check.positive_real_up_to, np.inf, "gain", 4.0, "再大就溢出"), VE, r"^gain 必须是有限的正实数"),
    ("up-to-bool", call(check.positive_real_up_to, True, "gain", 4.0, "再大就溢出"), TE, r"^gain 必须是正实数.*bool"),
]
test_documented_errors = error_table_test(ERROR_CASES)
