"""第 1 章的图讲的事实：RNN 的"传话"按 g 的幂衰减或爆炸；RNN 要排 T 轮队，注意力一步直达；
两张静态图（用时曲线、"他"看"小明"）画的就是给它的数。

可交互图的事实只用 ``ex.update``（算数据）；画图的约定在 tests/test_explorables.py 里对所有可交互图统一检查
（宽版的局部重画、两种版式的字号）。这里另外检查：窄版（手机）确实和宽版不同的地方、窄版的局部重画，
以及不在目录里的静态图的字号。
"""

import dataclasses

import numpy as np
import pytest

import transformer_lab as tl
from transformer_lab.core.rnn import input_jacobians

from helpers.errors import call, error_table_test
from helpers.layouts import drawn, reads_on_both, texts


@pytest.fixture
def memory(rendered):
    return rendered("rnn_memory_decay").ex


@pytest.fixture
def queue(rendered):
    return rendered("queue_vs_direct").ex


def test_memory_starts_at_the_chapter_values(memory):
    assert memory.start == {"gain": 0.9, "input_scale": 0.5}  # 正文讲的是 g = 0.9、输入强度 0.5


def test_memory_is_the_chapters_random_rnn(memory):
    """图里的 RNN 就是正文里的那个：tl.random_rnn(60, 4, 16, 种子 1)，W_hh = 0.9 Q，输入乘 0.5。"""
    q, w_xh, x = tl.random_rnn(60, 4, 16, np.random.default_rng(1))
    _, jac = input_jacobians(0.5 * x, w_xh, 0.9 * q)
    drawn = memory.update(gain=0.9, input_scale=0.5)
    np.testing.assert_allclose(drawn["influence"], np.linalg.norm(jac[:, 0], ord=2, axis=(-2, -1)))


def test_memory_facts_on_every_frame(memory):
    for params in memory.grid():
        drawn = memory.update(**params)
        g, lin = params["gain"], drawn["influence_linear"]
        np.testing.assert_allclose(lin, lin[0] * g ** np.arange(60), rtol=1e-9)  # 去掉 tanh：正好是 g 的幂
        assert np.all(drawn["influence"] <= lin * (1 + 1e-9))  # tanh 只会让影响力更小
        assert np.all(drawn["size"] <= 4.0)  # ‖h‖ <= √d_h = 4
        per_step = float(drawn["per_step"])  # 标题里的"平均每步乘上"：大于 1 恰好就是越传越大
        np.testing.assert_allclose(per_step ** 59, drawn["influence"][-1] / drawn["influence"][0], rtol=1e-9)
        assert (per_step > 1) == (drawn["influence"][-1] > drawn["influence"][0])


def test_memory_input_strength_decides_whether_g_above_1_explodes(memory):
    weak, strong = memory.update(gain=1.5, input_scale=0.1), memory.update(gain=1.5, input_scale=1.0)
    assert weak["influence"][-1] > 1 > strong["influence"][-1]  # 同样 g > 1：输入强弱决定涨落
    assert memory.update(gain=2.0, input_scale=0.1)["size_linear"][-1] > 1e10  # 去掉 tanh：笔记也爆炸


def test_memory_title_names_the_slider_values(memory):
    memory.update(gain=2.0, input_scale=0.1)
    assert "g = 2，输入强度 0.1" in memory.figure.get_suptitle()


def test_memory_headline_is_the_number_that_decides_growth(memory):
    """评审 C1-3：g=2、输入 1.0 时 tanh 斜率小却在涨；标题写的是真正决定涨落的"平均每步乘上"。"""
    for params, grows in (({"gain": 2.0, "input_scale": 1.0}, True), ({"gain": 1.5, "input_scale": 1.0}, False),
                          ({"gain": 0.9, "input_scale": 0.5}, False)):
        drawn = memory.update(**params)
        title = memory.figure.get_suptitle()
        assert f"平均每步乘上 {float(drawn['per_step']):.3f}" in title
        assert ("越传越大" in title) == grows == (drawn["influence"][-1] > drawn["influence"][0])


def test_memory_accepts_off_grid_values_from_the_live_slider(memory):
    lin = memory.update(gain=1.25, input_scale=0.3)["influence_linear"]
    np.testing.assert_allclose(lin, lin[0] * 1.25 ** np.arange(60), rtol=1e-9)


def test_queue_facts(queue):
    for params in queue.grid():
        T = params["T"]
        drawn = queue.update(**params)
        assert drawn["rnn_rounds"].max() == T and drawn["attention_rounds"].max() == 1  # T 轮 vs 1 轮
        assert drawn["rnn"].shape == drawn["attention"].shape == (T,)
        np.testing.assert_allclose(drawn["attention"].sum(), 1.0)
        np.testing.assert_allclose(drawn["rnn_share"].sum(), 1.0)  # 两条线都换成占比，才能画在同一根轴上
        np.testing.assert_allclose(drawn["rnn_share"] * drawn["rnn"].sum(), drawn["rnn"])
        assert drawn["attention"].argmax() == 0  # 最后一个词最看重第 1 个词（手工设计）
    short, long = queue.update(T=4), queue.update(T=64)
    assert long["rnn"][0] < 1e-6 * long["rnn"][-1] and long["attention"][0] > 0.5
    assert long["rnn"][0] < short["rnn"][0]  # 句子变长，RNN 里第 1 个词的影响变小


def test_queue_rnn_is_the_chapters_random_rnn(queue):
    q, w_xh, x = tl.random_rnn(64, 4, 16, np.random.default_rng(1))
    _, jac = input_jacobians(0.5 * x[:32], w_xh, 0.9 * q)  # 只读前 32 个词
    expected = np.linalg.norm(jac[31], ord=2, axis=(-2, -1))
    np.testing.assert_allclose(queue.update(T=32)["rnn"], expected, rtol=1e-12)


def test_memory_narrow_layout_stacks_the_panels_and_shortens_the_headline(memory):
    assert (memory.layout("narrow").nrows, memory.layout("narrow").ncols) == (2, 1)
    params = {"gain": 2.0, "input_scale": 1.0}
    drawn_wide = memory.update(**params)
    wide, narrow = drawn(memory, "wide", params).fig, drawn(memory, "narrow", params).fig
    for fig in (wide, narrow):  # 两种版式都写着决定涨落的那个数
        assert f"平均每步乘上 {float(drawn_wide['per_step']):.3f}" in fig.get_suptitle()
    assert "随机权重" in wide.get_suptitle() and "随机权重" not in narrow.get_suptitle()
    top, bottom = (ax.get_position() for ax in narrow.axes[:2])
    assert top.y0 > bottom.y1 and abs(top.x0 - bottom.x0) < 0.05  # 上下叠，不是左右排
    (legend,) = narrow.legends  # 两张子图共用一个图例，在图的下方
    assert legend.get_window_extent().y1 < bottom.y0 * narrow.bbox.height


def test_queue_narrow_layout_has_a_shorter_headline(queue):
    assert queue.layout("narrow").nrows == 2
    wide, narrow = drawn(queue, "wide", {"T": 64}).fig, drawn(queue, "narrow", {"T": 64}).fig
    assert "g = 0.9 的随机权重" in wide.get_suptitle() and "g = 0.9" not in narrow.get_suptitle()
    assert all(len(line) <= 24 for line in narrow.get_suptitle().split("\n"))


@pytest.mark.parametrize("layout", ["wide", "narrow"])
def test_queue_legend_covers_no_point_of_the_lines(queue, layout):
    """右图的图例在右下角：纵轴下到 1e-15，T = 64 时也压不到任何一个点（评审看图时发现过重叠）。"""
    fig = drawn(queue, layout, {"T": 64}).fig
    right = fig.axes[1]
    box = right.get_legend().get_window_extent()
    for line in right.lines[:2]:
        points = right.transData.transform(line.get_xydata())
        inside = (box.x0 <= points[:, 0]) & (points[:, 0] <= box.x1) & (box.y0 <= points[:, 1]) & (points[:, 1] <= box.y1)
        assert not inside.any(), f"{line.get_label()} 有 {inside.sum()} 个点在图例下面"


def blit_vs_full(fig) -> int:
    """局部重画出的这一帧与整张重画相差几个像素（``tests/helpers/blit_checks`` 的做法，这里用于窄版）。"""
    blitted = np.asarray(fig.fig.canvas.buffer_rgba()).copy()
    for a in fig.artists:
        a.set_animated(False)
    fig.fig.canvas.draw()
    return int(np.any(blitted != np.asarray(fig.fig.canvas.buffer_rgba()), axis=-1).sum())


@pytest.mark.parametrize("name", ["rnn_memory_decay", "queue_vs_direct"])
def test_narrow_blitted_frame_equals_full_redraw(rendered, name):
    ex = rendered(name).ex
    assert blit_vs_full(drawn(ex, "narrow", ex.grid()[-1])) == 0


def test_alt_texts_name_the_slider_values(memory, queue):
    assert "g = 1.5" in memory.alt_text(gain=1.5, input_scale=0.1) and "0.1" in memory.alt_text(gain=1.5, input_scale=0.1)
    assert "T = 48" in queue.alt_text(T=48)


# ---------------------------------------------------------------- 静态图：用时曲线

LENGTHS = np.array([16, 32, 64, 128, 256, 512, 1024])
TIM = {"T": LENGTHS,  # 手编的用时（秒）：RNN 与 T 成正比，注意力与 T² 成正比，不排队的 RNN 快 10 倍
       "rnn": 1e-5 * LENGTHS, "attention": 1e-7 * LENGTHS**2, "rnn_batched": 1e-6 * LENGTHS}


def test_timing_curves_draw_the_times_in_milliseconds():
    ex = tl.explore.timing_curves(TIM, d=64)
    assert ex.sliders == []
    drawn_ms = ex.update()
    np.testing.assert_allclose(drawn_ms["rnn_ms"][[0, -1]], [0.16, 10.24])  # 1e-5 s × 16 = 0.16 ms
    np.testing.assert_allclose(drawn_ms["attention_ms"][2], 0.4096)  # 1e-7 s × 64² = 0.4096 ms
    lines = ex.figure.axes[0].lines
    assert [line.get_label() for line in lines] == ["RNN（一步接一步）", "自注意力（一次批量乘法）", "假想：RNN 的乘加不排队"]
    np.testing.assert_allclose(lines[2].get_ydata(), 1e-3 * LENGTHS)
    assert "每个词 64 维" in ex.figure.axes[0].get_title()
    assert "维" not in tl.explore.timing_curves(TIM).figure.axes[0].get_title()  # 不给 d 就不写
    assert "T = 1024 时 10.2 毫秒" in ex.alt_text()


def test_timing_curves_narrow_layout_labels_every_other_length():
    ex = tl.explore.timing_curves(TIM)
    wide, narrow = texts(ex, "wide"), texts(ex, "narrow")
    assert {"16", "32", "64", "1024"} <= set(wide)
    assert {"16", "64", "256", "1024"} <= set(narrow) and not {"32", "128", "512"} & set(narrow)
    assert "用时随句子长度 T 的变化\n（单核）" in narrow and "用时随句子长度 T 的变化（单核）" in wide


def test_static_figures_read_on_a_phone_and_a_laptop():
    assert reads_on_both(tl.explore.timing_curves(TIM, d=64))
    assert reads_on_both(tl.explore.direct_attention_map(WEIGHTS, TOKENS))


def test_the_reading_check_can_fail():
    """反证：同一张用时图按改版前 notebook 里的大小（宽 6.2 英寸以外再放大到 12.5 英寸）画，电脑上的字就不够大。"""
    too_wide = dataclasses.replace(tl.explore.timing_curves(TIM), size=(12.5, 5.4))
    assert not reads_on_both(too_wide)


# ---------------------------------------------------------------- 静态图：“他”一步看到“小明”（第 1 章手工设计的例子）

TOKENS = ["小明", "去年", "在", "巴黎", "认识了", "一位", "爱烘焙", "的", "姑娘", "他"]
K = np.array([[2, 0, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0], [0, 0, 2, 0], [0, 0, 0, 2], [0, 0, 0, 0], [0, 0, 0, 1],
              [0, 0, 0, 0], [0, 2, 0, 0], [1, 0, 0, 0]], dtype=float)
Q = np.array([[0, 0, 0, 2], [0, 0, 0, 2], [0, 0, 2, 0], [0, 0, 0, 2], [2, 2, 0, 0], [0, 2, 0, 0], [0, 2, 0, 0],
              [0, 2, 0, 0], [0, 0, 0, 2], [3, 0, 0, 0]], dtype=float)
WEIGHTS = tl.scaled_dot_product_attention(Q, K, np.eye(10))[1]


def test_direct_map_draws_the_chapter_weights():
    """“他”的分数手算：q·k/√4 = 3（小明）、1.5（他自己）、其余 0，权重 e³/(e³ + e^1.5 + 8) = 0.617。"""
    e3, e15 = np.exp(3.0), np.exp(1.5)
    np.testing.assert_allclose(WEIGHTS[-1, [0, 9, 1]], np.array([e3, e15, 1.0]) / (e3 + e15 + 8))
    ex = tl.explore.direct_attention_map(WEIGHTS, TOKENS)
    np.testing.assert_array_equal(ex.figure.axes[0].images[0].get_array(), WEIGHTS)
    assert ex.figure.axes[0].get_title() == "“他”一步看到句首的“小明”\n（手工设计的示意，不是训练所得）"
    assert "把 0.62 的权重给了“小明”" in ex.alt_text() and "手工设计" in ex.alt_text()
    # 倒过来：最后一行是原来“小明”那一行，它的最大权重 0.41 给了“认识了”（不在句首，标题不写"句首的"）
    plain = tl.explore.direct_attention_map(WEIGHTS[::-1, ::-1], TOKENS[::-1], designed=False)
    assert plain.figure.axes[0].get_title() == "“小明”一步看到“认识了”" and "手工设计" not in plain.alt_text()


def test_direct_map_narrow_layout_writes_only_the_boxed_rows_big_weights():
    wide, narrow = texts(tl.explore.direct_attention_map(WEIGHTS, TOKENS), "wide"), \
        texts(tl.explore.direct_attention_map(WEIGHTS, TOKENS), "narrow")
    cells = lambda items: [t for t in items if t.startswith("0.") and len(t) == 4 and t not in ("0.2", "0.4")]
    assert len(cells(wide)) == 100  # 宽版 10 × 10 格都写数
    assert sorted(cells(narrow)) == ["0.14", "0.62"]  # 窄版只写“他”那一行 ≥ 0.1 的两格


# ---------------------------------------------------------------- 工厂的参数（滑块取值的检查属于可交互图引擎 widgets/，不在这里）

VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("memory-T-0", call(lambda: tl.explore.rnn_memory_decay(T=0)), VE, r"^T 必须是不小于 2 的整数（>= 2），收到的是 0"),
    ("rnn-decay-T-1", call(lambda: tl.explore.rnn_memory_decay(T=1)), VE, r"^T 必须是不小于 2 的整数.*1"),
    ("rnn-decay-d_h-0", call(lambda: tl.explore.rnn_memory_decay(d_h=0)), VE, r"^d_h 必须是正整数（>= 1），收到的是 0"),
    ("rnn-decay-T-huge", call(lambda: tl.explore.rnn_memory_decay(T=10**6)), VE, r"^T 必须在 \[2, 256\] 之内"),
    ("rnn-decay-seed-str", call(lambda: tl.explore.rnn_memory_decay(seed="a")), TE, r"^seed 必须是非负整数.*'a'"),
    ("queue-T_max-0", call(lambda: tl.explore.queue_vs_direct(T_max=0)), VE, r"^T_max 必须是不小于 8 的整数.*0"),
    ("queue-T_max-2", call(lambda: tl.explore.queue_vs_direct(T_max=2)), VE, r"^T_max 必须是不小于 8 的整数（>= 8），收到的是 2"),
    ("queue-T_max-huge", call(lambda: tl.explore.queue_vs_direct(T_max=257)), VE, r"^T_max 必须在 \[8, 256\] 之内.*257"),
    ("queue-gain-huge", call(lambda: tl.explore.queue_vs_direct(gain=1e6)), VE,
     r"^gain 必须在 \(0, 4\] 之内（再大曲线就超出纵轴、甚至溢出），收到的是 1e\+06"),
    ("queue-input-zero", call(lambda: tl.explore.queue_vs_direct(input_scale=0.0)), VE, r"^input_scale 必须是有限的正实数"),
    ("queue-seed-negative", call(lambda: tl.explore.queue_vs_direct(seed=-1)), VE, r"^seed 必须是非负整数.*-1"),
    ("timing-not-dict", call(tl.explore.timing_curves, [1, 2]), TE, r"^tim 必须是 tl.timing.time_rnn_vs_attention 返回的字典"),
    ("timing-missing-key", call(tl.explore.timing_curves, {"T": LENGTHS, "rnn": TIM["rnn"]}), VE,
     r"^tim 缺少键 \['attention', 'rnn_batched'\]"),
    ("timing-T-one", call(tl.explore.timing_curves, {**TIM, "T": np.array([16])}), VE, r"^tim\['T'\] 必须是至少 2 个"),
    ("timing-T-not-increasing", call(tl.explore.timing_curves, {**TIM, "T": LENGTHS[::-1]}), VE,
     r"^tim\['T'\] 必须是至少 2 个、从小到大的正整数"),
    ("timing-T-fraction", call(tl.explore.timing_curves, {**TIM, "T": LENGTHS + 0.5}), VE, r"^tim\['T'\] 必须是.*正整数"),
    ("timing-T-list", call(tl.explore.timing_curves, {**TIM, "T": [16, 32]}), TE, r"^tim\['T'\] 必须是 NumPy 数组"),
    ("timing-short", call(tl.explore.timing_curves, {**TIM, "rnn": TIM["rnn"][:3]}), VE,
     r"^tim\['rnn'\] 必须是 7 个正数.*shape=\(3,\)"),
    ("timing-zero", call(tl.explore.timing_curves, {**TIM, "attention": 0 * TIM["attention"]}), VE,
     r"^tim\['attention'\] 必须是 7 个正数.*最小值 0"),
    ("timing-nan", call(tl.explore.timing_curves, {**TIM, "rnn_batched": np.full(7, np.nan)}), VE,
     r"^tim\['rnn_batched'\] 含有 NaN"),
    ("timing-d-0", call(tl.explore.timing_curves, TIM, d=0), VE, r"^d 必须是正整数"),
    ("direct-shape", call(tl.explore.direct_attention_map, WEIGHTS[:3], TOKENS), VE,
     r"^weights 的形状必须是 \(T, T\) = \(10, 10\).*\(3, 10\)"),
    ("direct-one-token", call(tl.explore.direct_attention_map, np.ones((1, 1)), ["他"]), VE, r"至少 2 个"),
    ("direct-rows", call(tl.explore.direct_attention_map, 0.5 * WEIGHTS, TOKENS), VE, r"^weights 必须是注意力权重.*行和是 \[0.5,"),
    ("direct-negative", call(tl.explore.direct_attention_map, np.array([[1.5, -0.5], [0.5, 0.5]]), ["a", "b"]), VE,
     r"^weights 必须是注意力权重：每个数在 \[0, 1\] 里"),
    ("direct-tokens", call(tl.explore.direct_attention_map, WEIGHTS, "小明去年"), TE, r"^tokens 必须是字符串的列表"),
    ("direct-designed", call(tl.explore.direct_attention_map, WEIGHTS, TOKENS, designed="yes"), TE, r"^designed 必须是 bool"),
]
test_documented_errors = error_table_test(ERROR_CASES)
