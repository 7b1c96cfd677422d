"""lessons/show.py：给一行数配上名字，方便 notebook 打印。"""

import numpy as np

from transformer_lab.lessons.show import labelled

from helpers.errors import call, error_table_test


def test_labelled_rounds_and_keeps_order():
    out = labelled(("animal", "street", "it"), np.array([0.73849, 0.02381, 0.0]), digits=2)
    assert list(out.items()) == [("animal", 0.74), ("street", 0.02), ("it", 0.0)]
    assert all(type(v) is float for v in out.values())  # 打印出来是 0.74，不是 np.float64(0.74)


def test_labelled_can_skip_zeros():
    assert labelled(["a", "b", "c"], np.array([1.0, 0.0, -2.5]), skip_zeros=True) == {"a": 1.0, "c": -2.5}


VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("labelled-length", call(labelled, ["a"], np.ones(2)), VE, r"values 的形状应为 \(1,?\).*\(2,\)"),
    ("labelled-list", call(labelled, ["a"], [1.0]), TE, r"values 必须是 NumPy 数组.*list"),
    ("labelled-digits-negative", call(labelled, ["a"], np.ones(1), digits=-1), VE, r"digits 必须是非负整数.*-1"),
    ("labelled-digits-huge", call(labelled, ["a"], np.ones(1), digits=100), VE, r"digits=100 太大"),
    ("labelled-labels-str", call(labelled, "a", np.ones(1)), TE, r"labels 必须是字符串的列表或元组.*'a'"),
    ("labelled-skip-zeros-str", call(labelled, ["a"], np.ones(1), skip_zeros="no"), TE, r"skip_zeros 必须是 bool"),
]
test_documented_errors = error_table_test(ERROR_CASES)
