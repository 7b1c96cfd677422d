"""plot/shape_diagram.py：四步形状图的排法（格子多大、七个数组和箭头放在哪）和照着排法画图。

排法只看形状和字宽，所以这里用第 4 章的例子和几组形状检查它许诺的几何关系：放得进版式的宽度、数组互不重叠、
第 2 步不改形状（同一列）、手机上第 3 步拐弯……；画图则检查七个数组按 ``ARRAYS`` 的顺序画在排好的格子里。
"""

import itertools

import numpy as np
import pytest

from transformer_lab.plot.figure import NARROW_WIDTH, WIDE_WIDTH, new_figure
from transformer_lab.plot.shape_diagram import ARRAYS, CELL_MAX, STEPS, cell_text, draw_four_steps, plan_four_steps

TOKENS = ["小猫", "睡了", "因为", "它", "累了"]


def _plan(T, d_k, S, d_v, narrow, numbers=("0.65",), query=None, keys=None):
    query = query or [f"q{i}" for i in range(T)]
    keys = keys or [f"k{j}" for j in range(S)]
    return plan_four_steps((T, d_k), (S, d_v), query, keys, list(numbers), narrow=narrow)


def _boxes(plan, T, d_k, S, d_v):
    """七个数组各占的方框 (x0, y0, x1, y1)，英寸，y 朝下。"""
    dims = {"q": (T, d_k), "k_t": (d_k, S), "scores": (T, S), "scaled": (T, S), "weights": (T, S), "v": (S, d_v),
            "out": (T, d_v)}
    c = plan.cell
    return {k: (x, y, x + dims[k][1] * c, y + dims[k][0] * c) for k, (x, y) in plan.at.items()}


def test_cell_text_drops_trailing_zeros_and_minus_zero():
    assert [cell_text(x) for x in (2.0, 0.5, 0.649, -0.001, -1.25, 10.0)] == ["2", "0.5", "0.65", "0", "-1.25", "10"]


@pytest.mark.parametrize("T, d_k, S, d_v", [(2, 4, 5, 3), (5, 4, 5, 3), (3, 6, 7, 2), (1, 1, 1, 1), (12, 12, 12, 12)])
@pytest.mark.parametrize("narrow", [False, True], ids=["wide", "narrow"])
def test_the_plan_fits_the_layout_and_no_two_arrays_overlap(T, d_k, S, d_v, narrow):
    plan = _plan(T, d_k, S, d_v, narrow)
    assert plan.size[0] <= (NARROW_WIDTH if narrow else WIDE_WIDTH) + 0.01
    assert 0 < plan.cell <= CELL_MAX
    boxes = _boxes(plan, T, d_k, S, d_v)
    assert set(boxes) == set(ARRAYS)
    for (a, (ax0, ay0, ax1, ay1)), (b, (bx0, by0, bx1, by1)) in itertools.combinations(boxes.items(), 2):
        assert ax1 <= bx0 or bx1 <= ax0 or ay1 <= by0 or by1 <= ay0, (a, b)  # 不重叠
    for x0, y0, x1, y1 in boxes.values():
        assert 0 < x0 and x1 < plan.size[0] and plan.title_y < y0 and y1 < plan.size[1]  # 都在图里、在标题下面
    assert plan.at["scores"][0] == plan.at["scaled"][0] == plan.at["k_t"][0]  # 第 1、2 步不改列
    assert plan.at["v"][0] == plan.at["out"][0] and plan.at["v"][1] < plan.at["out"][1]  # V 在输出正上方
    assert plan.at["q"][1] == plan.at["scores"][1]  # Q 与分数表同一行（手算矩阵乘法的摆法）


def test_wide_puts_the_weights_under_the_scores_and_narrow_turns_the_third_arrow():
    wide, narrow = _plan(2, 4, 5, 3, False), _plan(2, 4, 5, 3, True)
    assert wide.at["weights"][0] == wide.at["scores"][0] and len(wide.arrows[2][0]) == 2
    assert narrow.at["weights"][0] == narrow.at["q"][0] and len(narrow.arrows[2][0]) == 3  # 拐到左下角
    for plan in (wide, narrow):
        assert [label for _, _, label, _ in plan.arrows] == list(STEPS)
    assert "\n" not in wide.title and narrow.title.count("\n") == 1
    assert wide.title.startswith("四步的形状：T = 2 个查询，S = 5 个键和值，$d_k$ = 4，$d_v$ = 3")


def test_words_sit_beside_q_weights_v_and_above_k_t():
    plan = _plan(2, 4, 5, 3, False, query=TOKENS[3:], keys=TOKENS)
    assert [t for _, t, _ in plan.tokens] == [*TOKENS[3:], *TOKENS[3:], *TOKENS, *TOKENS]  # Q、权重、V、Kᵀ
    (x, y), _, how = plan.tokens[0]
    assert x < plan.at["q"][0] and how["ha"] == "right"  # Q 的第一行左边
    assert y == pytest.approx(plan.at["q"][1] + 0.5 * plan.cell)
    (x, y), _, how = plan.tokens[-1]
    assert y < plan.at["k_t"][1] and how["va"] == "bottom"  # Kᵀ 最后一列上面


def test_numbers_are_dropped_only_when_the_widest_does_not_fit_a_cell():
    assert _plan(3, 6, 7, 2, False, numbers=["0.65"]).numbers
    crowded = _plan(3, 6, 7, 2, True, numbers=["-12345.67"])
    assert not crowded.numbers and crowded.title.endswith("格子太小，不写数值")


def test_draw_puts_each_array_in_its_cells():
    rng = np.random.default_rng(0)
    arrays = {"q": rng.normal(size=(2, 4)), "k_t": rng.normal(size=(4, 5)), "scores": rng.normal(size=(2, 5)),
              "scaled": rng.normal(size=(2, 5)), "weights": rng.uniform(size=(2, 5)), "v": rng.normal(size=(5, 3)),
              "out": rng.normal(size=(2, 3))}
    plan = _plan(2, 4, 5, 3, False, numbers=["-2.5"])
    fig, (ax,) = new_figure(*plan.size)
    draw_four_steps(ax, plan, arrays)
    fig.canvas.draw()  # 排版引擎关掉了：画过之后坐标轴仍占满整张图
    assert ax.get_position().bounds == pytest.approx((0.0, 0.0, 1.0, 1.0)) and not ax.axison
    assert ax.get_xlim() == (0, plan.size[0]) and ax.get_ylim() == (plan.size[1], 0)  # 一个单位 = 1 英寸，y 朝下
    for image, name in zip(ax.images, ARRAYS, strict=True):
        np.testing.assert_array_equal(image.get_array(), arrays[name])
        (x0, y0), c = plan.at[name], plan.cell
        rows, cols = arrays[name].shape
        assert image.get_extent() == pytest.approx([x0, x0 + cols * c, y0 + rows * c, y0])
    texts = [t.get_text() for t in ax.texts]
    assert plan.title in texts and all(step in texts for step in STEPS)
    assert cell_text(arrays["weights"][1, 2]) in texts  # 格子里写着数
