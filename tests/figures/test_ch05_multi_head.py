"""第 5 章的图：只检查本章的事实（通用的管道由 tests/test_explorables.py 检查）。"""

import numpy as np

from transformer_lab.figures.ch05_multi_head import (
    _tracer_cell,
    _tracer_slots,
    head_shape_tracer,
    head_specialisation,
    head_symmetry,
)


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


# ---------------------------------------------------------------- 两种版式（宽版给电脑，窄版给手机）

def _texts(ex, layout, **params):
    """这种版式画出 ``params`` 那一帧后图里的每一段字。"""
    ex.png({**ex.start, **params}, layout=layout)
    return [t.text for t in ex.texts(layout)]


def _boxes(ex, layout, names):
    """``names`` 里每段字（第一次出现的那段）的外框（像素，原点在左下角）。"""
    items = {}
    for t in ex.texts(layout):
        items.setdefault(t.text, t.box)
    return [items[n] for n in names]


def test_tracer_narrow_layout_stacks_three_rows_and_shortens_the_title():
    ex = head_shape_tracer()
    wide, narrow = _texts(ex, "wide", D=16, H=2), _texts(ex, "narrow", D=16, H=2)
    assert any("示例数字是随机的" in t for t in wide) and not any("示例数字是随机的" in t for t in narrow)
    assert any("（数字随机）" in t for t in narrow)
    assert len({top for (_, top, _, _) in _tracer_slots(True).values()}) == 3  # 窄版三行
    assert len({top for (_, top, _, _) in _tracer_slots(False).values()}) == 1  # 宽版一行
    # 画出来也是这样：窄版 X 的形状在 W_O 的形状上面（像素 y 朝上），宽版两者在同一高度
    names = ["X\n(4, 16)", "$W_O$\n(16, 16)"]
    (x_n, wo_n), (x_w, wo_w) = _boxes(ex, "narrow", names), _boxes(ex, "wide", names)
    assert x_n[1] > wo_n[3] and abs(x_w[1] - wo_w[1]) < 2


def test_tracer_cells_fit_their_slots_for_every_d():
    for narrow in (False, True):
        for D in (8, 16, 24, 32):
            c = _tracer_cell(narrow, D, 4)
            for name, (_, _, w, h) in _tracer_slots(narrow).items():
                assert D * c <= h + 1e-12 and c * (D if name == "W_O" else 4) <= 0.85 * w + 1e-12


def test_training_views_stack_the_loss_curve_under_the_heatmaps_on_a_phone():
    for make in (head_specialisation, head_symmetry):
        ex = make()
        box = {}
        for layout in ("wide", "narrow"):
            texts = _texts(ex, layout)
            title = next(t for t in texts if t.startswith("第 1200 步"))
            assert ("\n" in title) == (layout == "narrow")  # 窄版总标题分两行
            box[layout] = dict(zip(("head1", "head2", "steps"), _boxes(
                ex, layout, [next(t for t in texts if t.startswith(f"头 {h}")) for h in (1, 2)] + ["训练步数"])))
        n, w = box["narrow"], box["wide"]
        assert n["steps"][3] < min(n["head1"][1], n["head2"][1])  # 窄版：曲线（的横轴名）在两张热力图下面
        assert abs(n["head1"][1] - n["head2"][1]) < 2 and n["head1"][2] < n["head2"][0]  # 两张热力图并排，好对比
        assert w["head1"][2] < w["head2"][0] < w["head2"][2] < w["steps"][0]  # 宽版：三张横排


def test_symmetry_caption_writes_the_gap_readably():
    ex = head_symmetry()
    captions = {}
    for start in ("完全相同", "只差一点点"):
        texts = _texts(ex, "wide", start=start, step=1200)
        captions[start] = next(t for t in texts if t.startswith("第 1200 步"))
    gap = ex.update(start="只差一点点", step=1200)["gap"][0]
    assert captions["完全相同"].endswith("= 0（恰好为 0）")
    assert gap > 1 and captions["只差一点点"].endswith(f"= {gap:.2f}")  # 大于 0.01 的差不写成 e 记号
