"""lessons/show.py：给一行数配上名字，方便 notebook 打印。"""

import numpy as np

from transformer_lab.lessons.show import labelled


def test_labelled_rounds_and_keeps_order():
    out = labelled(("animal", "street", "it"), np.array([0.73849, 0.02381, 0.0]), digits=2)
    assert list(out.items()) == [("animal", 0.74), ("street", 0.02), ("it", 0.0)]
    assert all(type(v) is float for v in out.values())  # 打印出来是 0.74，不是 np.float64(0.74)


def test_labelled_can_skip_zeros():
    assert labelled(["a", "b", "c"], np.array([1.0, 0.0, -2.5]), skip_zeros=True) == {"a": 1.0, "c": -2.5}
