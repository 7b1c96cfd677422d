"""第 4 章的图讲的事实：d_k 越大，不除以 √d_k 的 softmax 越"尖"、梯度越小；d_k = 1 时两边一样。

只用 ``ex.update``（算数据，不画图）；画图的约定在 tests/test_explorables.py 里对所有图统一检查。
"""

import numpy as np
import pytest

import transformer_lab as tl


@pytest.fixture
def ex(rendered):
    return rendered("scaling_saturation").ex


def test_unscaled_and_scaled_agree_only_when_d_k_is_1(ex):
    small, large = ex.update(d_k=1), ex.update(d_k=512)
    np.testing.assert_array_equal(small["raw"], small["scaled"])  # √1 = 1：两边一样
    assert large["raw"].max() > large["scaled"].max()  # 不缩放时更"尖"
    assert large["grad_raw"] < large["grad_scaled"]  # ……梯度也更小（饱和）
    np.testing.assert_allclose([large["raw"].sum(), large["scaled"].sum()], 1.0, rtol=1e-12)


def test_unscaled_weights_get_sharper_as_d_k_grows(ex):
    peaks = [ex.update(d_k=d)["raw"].max() for d in (1, 16, 512)]
    assert peaks[0] < peaks[1] < peaks[2] and peaks[2] > 0.9


def test_starts_at_the_chapter_value(ex):
    assert ex.start == {"d_k": 64}  # 正文用的 d_k = 64（论文的每头维数）


def test_alt_text_counts_the_keys_it_was_given():
    """评审发现的 bug：替代文字曾经写死"8 个键"。"""
    small = tl.explore.scaling_saturation(num_keys=4)
    assert "4 个键" in small.alt_text(d_k=64) and "8 个键" not in small.alt_text(d_k=64)
    assert small.update(d_k=64)["raw"].shape == (4,)
