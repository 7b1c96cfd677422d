"""第 7 章的可交互图：只查本章的事实（画出的数 == 公式），管线由 tests/test_explorables.py 统一测。"""

import numpy as np
import pytest

from conftest import error_table_test
from transformer_lab import explore
from transformer_lab.lessons.costs import kv_cache_bytes


@pytest.fixture(scope="module")
def costs_ex():
    return explore.cost_calculator()


@pytest.fixture(scope="module")
def memory_ex():
    return explore.memory_calculator()


@pytest.mark.parametrize("n, d", [(256, 256), (4096, 512), (131072, 4096), (1000, 300)])  # 含网格之间的值
def test_cost_calculator_draws_the_formulas(costs_ex, n, d):
    drawn = costs_ex.update(n=n, d=d)
    assert drawn["attention"] == 2 * n * n * d and drawn["rnn"] == 2 * n * d * d
    assert drawn["feedforward"] == 8 * n * d * d and drawn["crossover"] == d
    np.testing.assert_allclose(drawn["share"], np.array([2 * n * n * d, 4 * n * d * d, 8 * n * d * d])
                               / (2 * n * n * d + 12 * n * d * d))


def test_cost_calculator_crossover_at_n_equals_d(costs_ex):
    drawn = costs_ex.update(n=512, d=512)
    assert drawn["attention"] == drawn["rnn"]
    np.testing.assert_allclose(drawn["share"], [1 / 7, 2 / 7, 4 / 7])  # 2 : 4 : 8


def test_memory_calculator_draws_the_formulas(memory_ex):
    a, b = memory_ex.update(n=8192, num_layers=32), memory_ex.update(n=16384, num_layers=32)
    assert a["float32"] == 8192 * 8192 * 4 and a["float16"] == 8192 * 8192 * 2
    assert a["kv"] == 4 * 2**30 == kv_cache_bytes(8192, 4096, 32, np.float16)  # 2·32·8192·4096·2 字节
    assert b["float32"] == 4 * a["float32"] and b["kv"] == 2 * a["kv"]  # 平方 对 线性


def test_memory_calculator_layers_scale_the_cache_only(memory_ex):
    one, eighty = memory_ex.update(n=4096, num_layers=1), memory_ex.update(n=4096, num_layers=80)
    assert eighty["kv"] == 80 * one["kv"] and eighty["float16"] == one["float16"]


ERROR_CASES = [
    ("memory-d_model-zero", lambda: explore.memory_calculator(0), ValueError, r"d_model 必须是正整数"),
    ("memory-d_model-too-big", lambda: explore.memory_calculator(2**17), ValueError, r"d_model 必须在 \[1, 65536\]"),
    ("memory-d_model-float", lambda: explore.memory_calculator(64.0), TypeError, r"d_model 必须是正整数.*float"),
]

test_documented_errors = error_table_test(ERROR_CASES)
