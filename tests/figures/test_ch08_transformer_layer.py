"""第 8 章的图：只检查本章的事实（通用的管道由 tests/test_explorables.py 检查）。

倒序训练在一个进程里只训练一次（``tl.runs.reversal`` 有缓存）；≥ 99% 和"去掉位置编码就学不会"都读它。"""

import numpy as np
import pytest

import transformer_lab as tl
from transformer_lab.figures.ch08_transformer_layer import (PE_CHOICES, STAGES, depth_gradients, layer_walkthrough,
                                                             reversal_training)


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
