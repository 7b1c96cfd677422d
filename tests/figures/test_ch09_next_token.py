"""第 9 章的图讲的事实：三个旋钮只重新分配概率；训练让考试损失从瞎猜 (log|V|) 往下走，旁边是两张计数表的对照线；
生成的每一步，最新的字只看缓存里的字，缓存每步多一格，还没写的字不标出来；编码器与解码器只差一个因果掩码。

只用 ``ex.update``（算数据，不画图）；画图的约定在 tests/test_explorables.py 里对所有图统一检查。
小 GPT 在一个进程里只训练一次（``tl.runs.gpt`` 有缓存）。
"""

import numpy as np
import pytest

import transformer_lab as tl
from transformer_lab.figures.ch09_next_token import (
    BAR_PROMPT,
    GEN_NEW,
    GEN_PROMPT,
    NO_LIMIT,
    SHOWN,
    TEMPERATURES,
    TOP_KS,
    TOP_PS,
    _show_char,
    encoder_vs_decoder,
    generation_steps,
    next_token_bars,
    training_checkpoints,
)
from transformer_lab.plot.figure import NARROW_WIDTH, WIDE_WIDTH

from helpers.errors import call, error_table_test


@pytest.fixture(scope="module")
def run():
    return tl.runs.gpt()


@pytest.fixture(scope="module")
def bars(run):
    return next_token_bars(run)


def reference_probs(logits, temperature, top_k, top_p):
    """另一种写法：一个一个字地排队、累加，和 core.decoding 的实现不共用代码。"""
    if temperature == 0:
        out = np.zeros_like(logits)
        out[int(np.argmax(logits))] = 1.0
        return out
    z = np.exp((logits - logits.max()) / temperature)
    p = z / z.sum()
    order = sorted(range(len(p)), key=lambda i: (-p[i], i))
    order = order[:top_k] if top_k is not None else order  # 先 top-k
    mass = sum(p[i] for i in order)  # top-p 看的是 top-k 之后重新归一的概率
    keep, total = [], 0.0
    for i in order:
        keep.append(i)
        total += p[i] / mass
        if total >= top_p:
            break
    kept = np.zeros_like(p)
    kept[keep] = p[keep]
    return kept / kept.sum()


def test_bars_follow_an_independent_reference_on_every_frame(bars):
    logits = bars.data["logits"]
    for params in bars.grid():
        out = bars.update(**params)
        k = None if params["top_k"] == NO_LIMIT else params["top_k"]
        want = reference_probs(logits, params["temperature"], k, params["top_p"])
        np.testing.assert_allclose(out["probs"], want, atol=1e-12)
        assert out["kept"][0] == np.count_nonzero(want)


def test_bars_hand_checked_cases(bars):
    greedy = bars.update(temperature=0.0, top_k=NO_LIMIT, top_p=1.0)
    assert greedy["kept"][0] == 1 and greedy["shown"][0] == 1.0 and greedy["shown"][1:].sum() == 0
    full = bars.update(temperature=1.0, top_k=NO_LIMIT, top_p=1.0)["probs"]
    top2 = bars.update(temperature=1.0, top_k=2, top_p=1.0)
    a, b = np.sort(full)[::-1][:2]
    np.testing.assert_allclose(np.sort(top2["probs"])[::-1][:2], [a / (a + b), b / (a + b)], atol=1e-12)
    assert top2["kept"][0] == 2
    hot = bars.update(temperature=2.0, top_k=NO_LIMIT, top_p=1.0)["shown"]
    assert hot[0] < full.max()  # 温度高，最高的一根变矮
    assert np.all(np.diff(bars.update(temperature=1.0, top_k=5, top_p=0.9)["shown"]) <= 0)  # 名次不变


def test_bars_show_the_most_likely_characters_in_order(run, bars):
    probs = tl.softmax(tl.generation.next_token_logits(run["checkpoints"][-1], run["chars"], BAR_PROMPT))
    shown = bars.update(temperature=1.0, top_k=NO_LIMIT, top_p=1.0)["shown"]
    np.testing.assert_allclose(shown, np.sort(probs)[::-1][:SHOWN], atol=1e-12)


def test_training_starts_at_a_blind_guess_and_goes_down(run):
    ex = training_checkpoints(run)
    steps = [int(s) for s in run["checkpoint_steps"]]
    first, last = ex.update(step=steps[0]), ex.update(step=steps[-1])
    log_v = np.log(len(run["chars"]))
    assert abs(first["test_loss"][0] - log_v) < 0.1  # 输出矩阵很小：一开始就是瞎猜
    assert last["test_loss"][0] < log_v - 2.0  # 考试（没读过的文字）上也学到了东西
    assert first["checkpoint"][0] == 0 and last["checkpoint"][0] == len(steps) - 1
    texts = ex.texts(layout="wide")  # 画出来的三段字：提示词加上它写的字（换行显示成 ⏎）
    for prompt, sample in zip(run["prompts"], run["samples"][-1]):
        assert any(t.text.startswith(f"【{prompt}】") for t in texts)
        assert str(sample).startswith(str(prompt)) and len(sample) == len(prompt) + 40


def test_loss_figure_draws_both_counting_baselines(run):
    """两条横线就是 ngram.baseline_losses 在同一份考题上的损失；图例里写的困惑度是 e 的这个数次方。"""
    ex = training_checkpoints(run)
    losses = tl.ngram.baseline_losses(tl.corpus.load_corpus())
    assert ex.data["baselines"] == losses
    assert losses["二元表"] < losses["一元表"] < np.log(len(run["chars"]))
    for layout in ("wide", "narrow"):
        texts = [t.text for t in ex.texts(layout=layout)]
        for name, loss in losses.items():
            assert any(name in t and f"困惑度 {np.exp(loss):.0f}" in t for t in texts), (layout, name)


def test_generation_steps_label_only_characters_already_written(run):
    """轴下只标已经在缓存里的字（两张图各一遍），后面罩着灰色写"还没写"；最后一步没有还没写的格子了。"""
    ex = generation_steps(run)
    text = tl.generation.generate_text(run["checkpoints"][-1], run["chars"], GEN_PROMPT, GEN_NEW)
    for step in (1, GEN_NEW):
        n = int(ex.update(step=step)["cache_length"][0])
        assert ex.update(step=step)["labelled"][0] == n
        ex.png({"step": step})
        drawn = [t.text for t in ex.texts(layout="wide")]
        single = [t for t in drawn if len(t) == 1]  # 一个字的字样只有轴下的字（刻度是 "0.0"、"第 1 层" 这样的）
        assert sorted(single) == sorted([_show_char(c) for c in text[:n]] * 2)
        assert drawn.count("还没写") == (2 if n < len(GEN_PROMPT) + GEN_NEW - 1 else 0)  # 最后一步读进第 12 个字，画满了


def test_generation_steps_match_a_full_causal_recomputation(run):
    ex = generation_steps(run)
    model, chars = run["checkpoints"][-1], run["chars"]
    text = tl.generation.generate_text(model, chars, GEN_PROMPT, GEN_NEW)
    _, weights = tl.tiny_gpt.hidden_states(model, tl.corpus.encode(text[:-1], chars))  # (L, H, T, T) 整段重算
    for step in range(1, GEN_NEW + 1):
        out = ex.update(step=step)
        n = len(GEN_PROMPT) + step - 1
        assert out["cache_length"][0] == n
        assert chars[int(out["token"][0])] == text[n]
        np.testing.assert_allclose(out["weights"][:n], weights[-1, :, n - 1, :n].mean(axis=0), atol=1e-12)
        assert np.all(out["weights"][n:] == 0)  # 还没写出来的字：注意力恰好是 0
        assert abs(out["weights"].sum() - 1) < 1e-12


def test_encoder_sees_everything_decoder_only_the_past():
    ex = encoder_vs_decoder()
    assert ex.sliders == [] and ex.frame_count == 1
    out = ex.update()
    assert out["encoder"].all()
    assert np.array_equal(out["decoder"], np.tril(np.ones((5, 5), dtype=bool)))


def test_layouts_fit_the_page_and_the_phone(run):
    for ex in (next_token_bars(run), training_checkpoints(run), generation_steps(run), encoder_vs_decoder()):
        assert ex.layout("wide").size[0] <= WIDE_WIDTH and ex.layout("narrow").size[0] <= NARROW_WIDTH
        assert ex.layout("narrow").size[1] >= ex.layout("wide").size[1]  # 手机上竖着排，图更高
        assert ex.frame_count <= ex.max_frames


def test_narrow_bar_title_is_shorter(run):
    """手机上标题写短：最长的一行文字在窄版里比宽版短（画出来的文字，从图里读出）。"""
    ex = next_token_bars(run)
    longest = {name: max(len(t.text) for t in ex.texts(layout=name)) for name in ("wide", "narrow")}
    assert longest["narrow"] < longest["wide"]


def test_show_char_makes_invisible_characters_visible():
    assert [_show_char(c) for c in "a\n 字"] == ["a", "⏎", "␣", "字"]


def test_slider_grids():
    assert TEMPERATURES[0] == 0.0 and TOP_KS[0] == NO_LIMIT and TOP_PS[0] == 1.0


# ---------------------------------------------------------------- 工厂的参数（滑块取值的检查属于可交互图引擎 widgets/，不在这里）

VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("bars-run-dict", call(next_token_bars, {"losses": [1.0]}), TE, r"^run 必须是一次训练的结果"),
    ("bars-run-missing", call(lambda: next_token_bars(tl.runs.glasses())), VE, r"^run 缺少字段 test_loss"),
    ("bars-prompt-int", call(lambda: next_token_bars(tl.runs.gpt(), 3)), TE, r"^prompt 必须是非空的字符串.*3"),
    ("bars-prompt-empty", call(lambda: next_token_bars(tl.runs.gpt(), "")), TE, r"^prompt 必须是非空的字符串"),
    ("checkpoints-run-list", call(training_checkpoints, [1, 2]), TE, r"^run 必须是一次训练的结果"),
    ("steps-num_new-0", call(lambda: generation_steps(tl.runs.gpt(), num_new=0)), VE, r"^num_new 必须是正整数"),
    ("steps-num_new-str", call(lambda: generation_steps(tl.runs.gpt(), num_new="3")), TE, r"^num_new 必须是正整数"),
    ("bars-prompt-none-no-run", call(next_token_bars, prompt=None), TE, r"^prompt 必须是非空的字符串.*NoneType"),
    ("steps-prompt-none-no-run", call(generation_steps, prompt=None), TE, r"^prompt 必须是非空的字符串.*NoneType"),
    ("steps-num_new-huge", call(generation_steps, num_new=10**9), VE, r"^num_new=1000000000 太大：每写一个字是静态网页上的一帧，上限是 42"),
]
test_documented_errors = error_table_test(ERROR_CASES)
