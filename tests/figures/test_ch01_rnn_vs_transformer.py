"""第 1 章的图讲的事实：RNN 的"传话"按 g 的幂衰减或爆炸；RNN 要排 T 轮队，注意力一步直达。

只用 ``ex.update``（算数据，不画图）；画图的约定在 tests/test_explorables.py 里对所有图统一检查。
"""

import numpy as np
import pytest
from conftest import call, error_table_test

import transformer_lab as tl
from transformer_lab.core.rnn import input_jacobians


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


def test_alt_texts_name_the_slider_values(memory, queue):
    assert "g = 1.5" in memory.alt_text(gain=1.5, input_scale=0.1) and "0.1" in memory.alt_text(gain=1.5, input_scale=0.1)
    assert "T = 48" in queue.alt_text(T=48)


# ---------------------------------------------------------------- 工厂的参数（滑块取值的检查属于可交互图引擎 widgets/，不在这里）

VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("memory-T-0", call(lambda: tl.explore.rnn_memory_decay(T=0)), VE, r"T 必须是正整数.*0"),
    ("rnn-decay-T-huge", call(lambda: tl.explore.rnn_memory_decay(T=10**6)), VE, r"^T 必须在 \[2, 256\] 之内"),
    ("rnn-decay-seed-str", call(lambda: tl.explore.rnn_memory_decay(seed="a")), TE, r"^seed 必须是非负整数.*'a'"),
    ("queue-T_max-0", call(lambda: tl.explore.queue_vs_direct(T_max=0)), VE, r"^T_max 必须是正整数.*0"),
    ("queue-T_max-2", call(lambda: tl.explore.queue_vs_direct(T_max=2)), VE, r"^T_max 必须在 \[8, 256\] 之内.*2"),
    ("queue-gain-huge", call(lambda: tl.explore.queue_vs_direct(gain=1e6)), VE, r"^gain 必须在 \(0, 4\] 之内"),
    ("queue-seed-negative", call(lambda: tl.explore.queue_vs_direct(seed=-1)), VE, r"^seed 必须是非负整数.*-1"),
]
test_documented_errors = error_table_test(ERROR_CASES)
