"""第 8 章的图：只检查本章的事实（通用的管道由 tests/test_explorables.py 检查）。

倒序训练在一个进程里只训练一次（``tl.runs.reversal`` 有缓存）；≥ 99% 和"去掉位置编码就学不会"都读它。"""

import re

import numpy as np
import pytest

import transformer_lab as tl
from transformer_lab.figures.ch08_transformer_layer import (
    PE_CHOICES,
    STAGES,
    depth_gradients,
    layer_walkthrough,
    reversal_training,
)


def test_trained_model_reverses_held_out_sequences():
    run = tl.runs.reversal(use_pe=True)
    token_acc, seq_acc = run["accuracy"][-1]
    assert seq_acc >= 0.99 and token_acc >= 0.99
    assert np.all(np.isfinite(run["losses"]))
    final = run["weights"][-1, 0]
    assert np.all(final.argmax(axis=-1) == np.arange(6)[::-1])  # 每一行最亮的格子在反对角线上


def test_without_positional_encoding_it_stays_near_the_best_bag_of_symbols_guess():
    run = tl.runs.reversal(use_pe=False)
    tokens = run["test"]["tokens"]
    counts = (tokens[:, :, None] == np.arange(8)).sum(axis=1)  # (N, V)
    best = np.mean([(counts - (np.arange(8) == tokens[:, [t]])).max(axis=1) / 5 for t in range(6)])
    token_acc, seq_acc = run["accuracy"][-1]
    assert token_acc <= best + 0.02 and seq_acc < 0.02  # 不看位置，最多只能猜"这一袋里最常见的符号"


def test_training_frames():
    ex = reversal_training()
    first, last = ex.update(pe=PE_CHOICES[0], step=0), ex.update(pe=PE_CHOICES[0], step=600)
    assert last["loss"][0] < 0.01 * first["loss"][0] and last["anti_diagonal"][0] > 0.5 > first["anti_diagonal"][0]
    assert ex.update(pe=PE_CHOICES[1], step=600)["accuracy"][1] < 0.02


def test_walkthrough_frames():
    ex = layer_walkthrough()
    out = ex.update(stage=STAGES[-1])
    np.testing.assert_allclose(out["stage"].mean(axis=-1), 0, atol=1e-12)
    assert ex.update(stage=STAGES[0])["pronoun_row"].sum() == 2.0  # 她：是代词、指女性


def test_depth_frames():
    ex = depth_gradients()
    plain, pre = ex.update(mode="无残差", depth=16), ex.update(mode="pre-LN", depth=16)
    assert plain["similarity"][-1] > 0.99 and pre["similarity"][-1] < 0.9
    assert np.all(pre["grad"][:, 0] > 1) and np.median(plain["grad"][:, 0]) < 1


def test_layer_norm_frames_ignore_the_shift_and_follow_gamma_beta():
    from transformer_lab.figures.ch08_transformer_layer import layer_norm_steps

    ex = layer_norm_steps()
    base = ex.update(shift=0.0, gamma=1.0, beta=0.0)
    np.testing.assert_allclose(base["x_hat"], np.array([-3, -1, 1, 3]) / np.sqrt(5 + 1e-5))  # 手算：μ = 5，σ² = 5
    for shift in (-6.0, 6.0):
        np.testing.assert_allclose(ex.update(shift=shift, gamma=1.0, beta=0.0)["x_hat"], base["x_hat"], atol=1e-12)
    scaled = ex.update(shift=6.0, gamma=2.0, beta=-1.0)
    np.testing.assert_allclose(scaled["y"], 2 * base["x_hat"] - 1, atol=1e-12)


def test_factories_take_the_precomputed_runs_and_check_them():
    """notebook 把自己算好的实验交给图：图直接用它（不重算）；交错了东西给出中文报错。"""
    with_pe, without_pe = tl.runs.reversal(use_pe=True), tl.runs.reversal(use_pe=False)
    ex = reversal_training(with_pe, without_pe)
    assert ex.data["runs"][PE_CHOICES[0]] is with_pe
    assert depth_gradients(tl.runs.depth()).data["profiles"] is tl.runs.depth()
    with pytest.raises(TypeError, match="with_pe 必须是一次训练的结果"):
        reversal_training({"losses": [1.0]})
    with pytest.raises(ValueError, match="without_pe 缺少字段 accuracy"):
        reversal_training(with_pe, tl.runs.glasses())
    with pytest.raises(TypeError, match="profiles 必须是 tl.runs.depth"):
        depth_gradients({"pre-LN": 1})


# ---------------------------------------------------------------- 两种版式：宽版给电脑，窄版给手机


def _texts(ex, params, layout):
    ex.png(params, layout=layout)  # 画到这组参数
    return [t.text for t in ex.texts(layout)]


def _grid(ex, layout):
    lay = ex.layout(layout)
    return lay.nrows, lay.ncols, lay.size


def test_layer_norm_steps_stacks_three_panels_and_names_the_dimensions_on_a_phone():
    from transformer_lab.figures.ch08_transformer_layer import layer_norm_steps

    ex = layer_norm_steps()
    assert _grid(ex, "wide") == (1, 3, (6.8, 3.2)) and _grid(ex, "narrow") == (3, 1, (3.6, 6.6))
    params = {"shift": 6.0, "gamma": 2.0, "beta": -1.0}
    wide, narrow = _texts(ex, params, "wide"), _texts(ex, params, "narrow")
    assert wide.count("1") == 3 and "第几维" in wide and "第 1 维" not in wide  # 宽版：每张图只写维号，下面一个总标题
    assert narrow.count("第 1 维") == 3 and "第几维" not in narrow
    assert "平移 6，γ = 2，β = -1：中间那张图不随平移变化\nLayerNorm 只看各维之间的相对高低" in wide
    assert "平移 6，γ = 2，β = -1\n中间那张图不随平移变化" in narrow


def test_layer_walkthrough_aligns_the_two_panels_and_writes_the_features_once_on_a_phone():
    from transformer_lab.figures.ch08_transformer_layer import STAGE_NOTES, STAGE_NOTES_SHORT

    ex = layer_walkthrough()
    assert _grid(ex, "wide") == (1, 2, (6.8, 3.9)) and _grid(ex, "narrow") == (2, 1, (3.6, 6.0))
    wide, narrow = _texts(ex, {"stage": STAGES[2]}, "wide"), _texts(ex, {"stage": STAGES[2]}, "narrow")
    assert wide.count("是动物") == 2 and narrow.count("是动物") == 1  # 窄版两张图的列对齐，特征名只写在下面
    assert f"第 3 步：{STAGES[2]}（权重为讲解而手工设计，不是训练出来的）\n{STAGE_NOTES[2]}" in wide
    assert f"第 3 步：{STAGES[2]}\n{STAGE_NOTES_SHORT[2]}" in narrow
    han = [len(re.findall(r"[\u4e00-\u9fff]", note)) for note in STAGE_NOTES_SHORT]  # 每条说明的汉字个数
    assert len(STAGE_NOTES_SHORT) == len(STAGES) and max(han) <= 16 and han[1] == 12  # 她听到描述活物是人是女性


def test_depth_gradients_stacks_and_shortens_the_panel_titles_on_a_phone():
    ex = depth_gradients()
    assert _grid(ex, "wide") == (1, 2, (6.8, 3.5)) and _grid(ex, "narrow") == (2, 1, (3.6, 6.4))
    params = {"mode": "pre-LN", "depth": 16}
    wide, narrow = _texts(ex, params, "wide"), _texts(ex, params, "narrow")
    median = np.median(tl.runs.depth()["pre-LN", 16]["grad"][:, 0])
    assert f"传到第 n 层的梯度：最底层中位数 {median:.2f}" in "\n".join(wide)
    assert f"梯度：最底层中位数 {median:.2f}" in "\n".join(narrow) and "传到第 n 层" not in "\n".join(narrow)
    assert "pre-LN，16 层（随机权重，没有训练）" in wide and "pre-LN，16 层（随机权重，没有训练）" in narrow


def test_reversal_training_stacks_three_panels_and_drops_the_token_accuracy_on_a_phone():
    ex = reversal_training()
    assert _grid(ex, "wide") == (1, 3, (6.8, 3.3)) and _grid(ex, "narrow") == (3, 1, (3.6, 7.8))
    params = {"pe": PE_CHOICES[0], "step": 600}
    wide, narrow = "\n".join(_texts(ex, params, "wide")), "\n".join(_texts(ex, params, "narrow"))
    assert "逐个符号正确率" in wide and "逐个符号正确率" not in narrow
    assert "整串全对 1.000" in wide and "整串全对 1.000" in narrow
    # 宽版一格太窄，键的标签 "0:G" 竖着写（外框高比宽大）；窄版横着写
    for layout, upright in (("wide", True), ("narrow", False)):
        # 热力图的横轴、纵轴都有 "0:G"：横轴那个在下面（外框的 y 更小，原点在左下角）
        label = min((t for t in ex.texts(layout) if t.text == "0:G"), key=lambda t: t.box[1])
        x0, y0, x1, y1 = label.box
        assert bool(y1 - y0 > x1 - x0) is upright, layout
