"""第 5 章的图：只检查本章的事实（通用的管道由 tests/test_explorables.py 检查）。"""

import numpy as np

from transformer_lab.figures.ch05_multi_head import head_shape_tracer, head_specialisation, head_symmetry


def test_shape_tracer_shapes_follow_sliders():
    ex = head_shape_tracer()
    for D, H in [(8, 1), (16, 2), (32, 8)]:
        drawn = ex.update(D=D, H=H)
        assert drawn["q"].shape == (H, 4, D // H) and drawn["weights"].shape == (H, 4, 4)
        assert drawn["concat"].shape == drawn["out"].shape == (4, D)
        np.testing.assert_allclose(drawn["concat"] @ drawn["W_O"], drawn["out"])
        assert drawn["mixed_dims"][0] == (D if H > 1 else 0)  # 随机的 W_O：每个输出维都混了全部头


def test_specialisation_frames_show_heads_diverging():
    ex = head_specialisation()
    first, last = ex.update(step=0), ex.update(step=1200)
    assert np.all(first["mass"] < 0.3)
    assert last["mass"].max(axis=0).min() >= 0.8  # 两种关系各有一个头 ≥ 0.8
    assert last["loss"][0] < 0.01 * first["loss"][0]


def test_symmetry_frames():
    ex = head_symmetry()
    same = ex.update(start="完全相同", step=1200)
    assert same["gap"][0] == 0.0 and np.array_equal(same["weights"][0], same["weights"][1])
    split = ex.update(start="只差一点点", step=1200)
    assert split["gap"][0] > 1.0 and split["loss"][0] < 0.1 * same["loss"][0]
