"""第 6 章的图讲的事实：PE 表就是公式；指针尖 = (sin, cos) 这一对；二进制计数器低位在前；
位置编码的相似度只取决于相隔多远，相隔 0 时为 1。

只用 ``ex.update``（算数据，不画图）；画图的约定在 tests/test_explorables.py 里对所有图统一检查。
"""

import math

import numpy as np
import pytest

import transformer_lab as tl

from helpers.errors import error_table_test


@pytest.fixture
def table(rendered):
    return rendered("pe_table").ex


@pytest.fixture
def clock(rendered):
    return rendered("clock_hands").ex


@pytest.fixture
def rel(rendered):
    return rendered("relative_dot").ex


def test_table_is_the_formula_and_the_vector_is_its_row(table):
    drawn = table.update(T=16, d_model=64, position=15)
    assert drawn["pe"].shape == (16, 64)
    p, i = 15, 3  # 位置 15、第 3 对：PE[15, 6] = sin(15 / 10000^(6/64))
    assert math.isclose(drawn["vector"][2 * i], math.sin(p / 10000 ** (2 * i / 64)), rel_tol=1e-12)
    assert math.isclose(drawn["vector"][2 * i + 1], math.cos(p / 10000 ** (2 * i / 64)), rel_tol=1e-12)
    np.testing.assert_array_equal(drawn["curves"][0], drawn["pe"][:, 0])


def test_table_live_slider_takes_any_integer_position_between_grid_points(table):
    a = table.update(T=32, d_model=16, position=7)["vector"]  # 7 不在静态网格 (0, 5, 10, 15) 里
    np.testing.assert_allclose(a, tl.sinusoidal_positional_encoding(8, 16)[7])
    b = table.update(T=32, d_model=16, position=np.int64(7))["vector"]
    np.testing.assert_array_equal(a, b)


def test_clock_tips_are_the_sin_cos_pairs(clock):
    drawn = clock.update(position=13)
    pe = tl.sinusoidal_positional_encoding(14, 16)
    np.testing.assert_allclose(drawn["tips"].ravel(), pe[13], atol=1e-12)  # 指针尖 (x, y) = (sin, cos)
    assert drawn["bits"].tolist() == [1, 0, 1, 1, 0]  # 13 = 01101，低位在前
    np.testing.assert_allclose(drawn["turns"][0], 13 / (2 * math.pi))  # 最快的指针：每个位置转 1 弧度


def test_fast_hands_move_more_than_slow_ones(clock):
    turns = clock.update(position=31)["turns"]
    assert np.all(np.diff(turns) < 0)


def test_similarity_depends_only_on_offset_and_is_one_on_the_diagonal(rel):
    drawn = rel.update(d_model=64, base=10000.0)
    sim = drawn["similarity"]
    np.testing.assert_allclose(np.diag(sim), 1.0)
    for k in (1, 5, 20):
        np.testing.assert_allclose(np.diagonal(sim, k), drawn["curve"][k], atol=1e-12)


def test_smaller_base_forgets_distance_faster(rel):
    slow = rel.update(d_model=64, base=10000.0)["curve"]
    fast = rel.update(d_model=64, base=10.0)["curve"]
    assert fast[10] < slow[10]  # base 小，所有指针都转得快，远处的位置很快变得"不像"


@pytest.fixture
def rope_ex(rendered):
    return rendered("rope_scores").ex


def test_rope_score_is_the_same_when_both_words_move_together(rope_ex):
    scores = [rope_ex.update(start=s, gap=3)["score"][0] for s in (0, 5, 17, 24)]
    np.testing.assert_allclose(scores, scores[0], atol=1e-12)
    first = rope_ex.update(start=5, gap=3)
    assert (first["m"][0], first["n"][0]) == (8, 5)
    back = rope_ex.update(start=5, gap=-3)  # 先后对调：m = 5, n = 8
    assert (back["m"][0], back["n"][0]) == (5, 8)


def test_rope_scores_match_tl_rope_directly(rope_ex):
    q, k = np.random.default_rng(0).normal(size=(2, 8))  # 与图里同一个种子
    drawn = rope_ex.update(start=4, gap=2)
    rq, rk = tl.rope(np.tile(q, (32, 1))), tl.rope(np.tile(k, (32, 1)))
    assert math.isclose(drawn["score"][0], rq[6] @ rk[4], rel_tol=1e-12)


# ---------------------------------------------------------------- 两种版式（宽版给电脑，窄版给手机）

def _texts(ex, layout, **params):
    """这种版式画出 ``params`` 那一帧后图里的每一段字：内容 → 外框（像素，原点在左下角；同样的字取第一段）。"""
    ex.png({**ex.start, **params}, layout=layout)
    items = {}
    for t in ex.texts(layout):
        items.setdefault(t.text, t.box)
    return items


def _find(items, start):
    return next(box for text, box in items.items() if text.startswith(start))


def _title(items, start):
    return next(text for text in items if text.startswith(start))


def _below(upper, lower):
    """``lower`` 整段在 ``upper`` 下面（像素 y 朝上）。"""
    return lower[3] < upper[1]


def test_table_narrow_stacks_the_three_panels_and_breaks_the_formula():
    ex = tl.explore.pe_table()
    wide, narrow = _texts(ex, "wide"), _texts(ex, "narrow")
    assert _title(wide, "正弦位置编码").count("\n") == 1 and _title(narrow, "正弦位置编码").count("\n") == 2
    heat, curves, vec = (_find(narrow, s) for s in ("PE 表", "几列随位置", "位置 p = 5 的"))
    assert _below(heat, curves) and _below(curves, vec)  # 窄版：从上到下
    heat, curves, vec = (_find(wide, s) for s in ("PE 表", "几列随位置", "位置 p = 5 的"))
    assert heat[2] < curves[0] and _below(curves, vec)  # 宽版：热力图在左，右边上下两张


def test_clock_plan_narrow_is_three_a_row_with_a_horizontal_counter():
    from transformer_lab.figures.ch06_positional_encoding import _clock_plan

    wide, narrow = _clock_plan(False), _clock_plan(True)
    assert len({y for _, y in wide["centers"]}) == 2 and len({y for _, y in narrow["centers"]}) == 3
    assert len({x for x, _ in wide["bits"]}) == 1 and len({y for _, y in narrow["bits"]}) == 1  # 竖排 / 横排
    assert narrow["bits"][0][0] > narrow["bits"][-1][0]  # 窄版高位在左：低位（第 0 位）在最右
    assert wide["bits"][0][1] > wide["bits"][-1][1]  # 宽版高位在上（y 朝下）：第 0 位在最下
    assert narrow["r"] > wide["r"]  # 手机上指针更大
    for plan in (wide, narrow):
        W, H = plan["size"]
        assert all(plan["r"] <= x <= W - plan["r"] and y + plan["r"] < H for x, y in plan["centers"])


def test_clock_narrow_draws_the_reading_key_in_the_spare_cell():
    ex = tl.explore.clock_hands()
    assert any(t.startswith("指针尖：") for t in _texts(ex, "narrow"))
    assert not any(t.startswith("指针尖：") for t in _texts(ex, "wide"))


def test_relative_dot_and_rope_narrow_stack_panels_with_two_line_titles():
    cases = (("relative_dot", "$PE(p)", "相隔 1 个位置", "d_model = "), ("rope_scores", r"$\mathrm{rope}", "p − p′", "RoPE"))
    for name, heat_start, line_start, title_start in cases:
        ex = tl.explore.catalog()[name]()
        wide, narrow = _texts(ex, "wide"), _texts(ex, "narrow")
        assert _below(_find(narrow, heat_start), _find(narrow, line_start))  # 窄版：热力图在上，曲线在下
        assert _find(wide, heat_start)[2] < _find(wide, line_start)[2]  # 宽版：左右排
        assert "\n" in _title(narrow, title_start) and "\n" not in _title(wide, title_start)
    assert "随机的 q, k" not in _title(_texts(tl.explore.rope_scores(), "narrow"), "RoPE")


def test_relative_dot_names_the_second_position_p_prime_not_q():
    ex = tl.explore.relative_dot()
    for layout in ("wide", "narrow"):
        texts = _texts(ex, layout)
        assert "位置 $p'$" in texts and not any("PE(q)" in t or "位置 q" in t for t in texts)  # q 在书里是查询


ERROR_CASES = [
    ("ch06-pe-table-base", lambda: tl.explore.pe_table(base=1.0), ValueError, r"base 必须大于 1"),
    ("ch06-rope-seed", lambda: tl.explore.rope_scores(seed=-1), ValueError, r"seed 必须是非负整数"),
]

test_documented_errors = error_table_test(ERROR_CASES)
