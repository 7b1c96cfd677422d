"""叠很多层：梯度长度与位置相似度。无残差那种叠法的反向由零件接成，这里对中心差分检查它。"""

import numpy as np
import pytest

from transformer_lab.core.layer import init_encoder_params
from transformer_lab.lessons import deep_stack as ds


def test_plain_layer_backward_matches_finite_differences():
    rng = np.random.default_rng(0)
    p, x, g = init_encoder_params(4, 8, rng), rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    grad = ds._plain_backward(x, p, g, 2)
    h = 1e-6
    num = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[idx] = h
        num[idx] = (np.sum(ds.plain_layer(x + e, p, 2) * g) - np.sum(ds.plain_layer(x - e, p, 2) * g)) / (2 * h)
    assert np.linalg.norm(grad - num) <= 1e-6 * (np.linalg.norm(grad) + np.linalg.norm(num))


@pytest.mark.parametrize("mode", ds.MODES)
def test_profile_shapes_and_top_gradient(mode):
    prof = ds.stack_profile(3, mode, np.random.default_rng(0))
    assert prof["grad"].shape == prof["similarity"].shape == (4,)
    assert prof["grad"][-1] == 1.0 and np.all(prof["grad"] > 0)


def test_without_residual_all_positions_end_up_with_the_same_note():
    sims = {m: np.mean([ds.stack_profile(4, m, np.random.default_rng(s))["similarity"][-1] for s in range(6)])
            for m in ds.MODES}
    assert sims["无残差"] > 0.99 > 0.8 > sims["pre-LN"]


def test_position_similarity_by_hand():
    assert ds.position_similarity(np.array([[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [-1.0, 0.0, 1.0]])) == pytest.approx(-1 / 3, abs=1e-4)


def test_bad_mode():
    with pytest.raises(ValueError, match="mode"):
        ds.stack_profile(2, "residual", np.random.default_rng(0))
