"""第 7 章的图：只查本章的事实（画出的数 == 公式、窄版真的不同），管线由 tests/test_explorables.py 统一测。"""

import numpy as np
import pytest

from transformer_lab import explore
from transformer_lab.lessons.costs import kv_cache_bytes

from helpers.errors import call, error_table_test


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


# ---------------------------------------------------------------- 两种版式


def _texts(ex, params, layout):
    ex.png(params, layout=layout)  # 画到这组参数
    return ex.texts(layout)


def _one(items, start):
    (item,) = [t for t in items if t.text.startswith(start)]
    return item


def test_cost_calculator_stacks_its_panels_and_breaks_the_title_on_a_phone(costs_ex):
    wide, narrow = costs_ex.layout("wide"), costs_ex.layout("narrow")
    assert (wide.nrows, wide.ncols, wide.size) == (1, 2, (6.8, 3.4))
    assert (narrow.nrows, narrow.ncols, narrow.size) == (2, 1, (3.6, 6.2))
    params = {"n": 4096, "d": 512}
    assert _one(_texts(costs_ex, params, "wide"), "n = 4,096").text == "n = 4,096，d = 512：注意力 / RNN = n / d = 8"
    assert _one(_texts(costs_ex, params, "narrow"), "n = 4,096").text == "n = 4,096，d = 512\n注意力 / RNN = n / d = 8"


def test_memory_calculator_puts_the_legend_under_the_axes_on_a_phone(memory_ex):
    """宽版：图例在坐标轴里（右下角，高于横轴标题）；窄版：图例在整张图最下面（低于横轴标题）。"""
    params = {"n": 8192, "num_layers": 32}
    for layout, below in (("wide", False), ("narrow", True)):
        items = _texts(memory_ex, params, layout)
        legend, xlabel = _one(items, "KV 缓存，float16"), _one(items, "序列长度 n")
        assert bool(legend.box[3] < xlabel.box[1]) is below, layout  # 外框 y1 < y0：整段字在横轴标题下面
        title = _one(items, "n = 8,192")
        assert ("\n" in title.text) is (layout == "narrow")
        assert "KV 缓存 4 GiB" in title.text and "256 MiB（float32）" in title.text


# ---------------------------------------------------------------- 实测的用时与内存（静态图）

N3 = np.array([256.0, 512.0, 1024.0])


def _measured(**override):
    """手算得出斜率的假测量：普通注意力 ∝ n²、分块注意力的内存不随 n 变、RNN ∝ n。"""
    m = {"n": N3, "attention_seconds": 1e-6 * N3**2, "attention_bytes": 4 * N3**2,
         "tiled_seconds": 2e-6 * N3**2, "tiled_bytes": np.full(3, 5e5),
         "rnn_seconds": 3e-4 * N3, "rnn_bytes": 64 * N3}
    return {**m, **override}


def test_measured_scaling_draws_the_measurements_and_their_slopes():
    ex = explore.measured_scaling(_measured())
    assert ex.sliders == []  # 静态图
    drawn = ex.update()
    np.testing.assert_array_equal(drawn["n"], N3)
    np.testing.assert_array_equal(drawn["attention_bytes"], [262144.0, 1048576.0, 4194304.0])  # 4·256² …
    np.testing.assert_allclose(drawn["slopes"], [[2, 2], [2, 0], [1, 1]], atol=1e-9)  # 行：注意力、分块、RNN
    legend = [t.text for t in ex.texts("wide") if "斜率" in t.text]
    assert sorted(legend) == sorted(["普通注意力（斜率 2.00）", "分块注意力（斜率 2.00）", "RNN（斜率 1.00）",
                                     "普通注意力（斜率 2.00）", "分块注意力（斜率 0.00）", "RNN（斜率 1.00）"])
    assert "分块注意力：用时斜率 2.00、内存斜率 0.00；RNN：用时斜率 1.00" in ex.alt_text()


def test_measured_scaling_fits_a_noisy_line_like_polyfit():
    """不是恰好的幂函数时，斜率 = log–log 坐标里的最小二乘直线（独立地用 np.polyfit 算一遍）。"""
    y = np.array([1.0, 3.0, 5.0])
    drawn = explore.measured_scaling(_measured(rnn_seconds=y)).update()
    assert drawn["slopes"][2, 0] == pytest.approx(np.polyfit(np.log(N3), np.log(y), 1)[0])
    # 手算：三个等距的 log n，最小二乘斜率 = (log 5 − log 1) / (2·log 2) = log₂5 / 2 ≈ 1.161
    assert drawn["slopes"][2, 0] == pytest.approx(np.log2(5) / 2) and round(drawn["slopes"][2, 0], 3) == 1.161


def test_measured_scaling_stacks_its_two_panels_on_a_phone():
    ex = explore.measured_scaling(_measured())
    assert (ex.layout("wide").nrows, ex.layout("wide").ncols, ex.layout("wide").size) == (1, 2, (6.8, 3.3))
    assert (ex.layout("narrow").nrows, ex.layout("narrow").ncols, ex.layout("narrow").size) == (2, 1, (3.6, 6.2))
    for layout in ("wide", "narrow"):
        items = ex.texts(layout)
        time_title, memory_title = _one(items, "用时"), _one(items, "峰值额外内存")
        stacked = bool(memory_title.box[3] < time_title.box[1])  # 内存那张图整个在用时那张图的标题下面
        assert stacked is (layout == "narrow"), layout


ERROR_CASES = [
    ("memory-d_model-zero", lambda: explore.memory_calculator(0), ValueError, r"d_model 必须是正整数"),
    ("memory-d_model-too-big", lambda: explore.memory_calculator(2**17), ValueError, r"d_model 必须在 \[1, 65536\]"),
    ("memory-d_model-float", lambda: explore.memory_calculator(64.0), TypeError, r"d_model 必须是正整数.*float"),
    ("measured-not-a-dict", call(explore.measured_scaling, [1, 2]), TypeError,
     r"measured 必须是 tl.timing.measure_scaling 返回的字典.*list"),
    ("measured-missing-field", call(explore.measured_scaling, {"n": N3}), ValueError,
     r"measured 缺少字段 attention_seconds, attention_bytes, tiled_seconds"),
    ("measured-list-column", call(explore.measured_scaling, _measured(rnn_bytes=[1.0, 2.0, 3.0])), TypeError,
     r"measured\['rnn_bytes'\]"),
    ("measured-one-length", call(explore.measured_scaling, _measured(n=np.full(3, 256.0))), ValueError,
     r"measured\['n'\] 至少要有 2 个不同的长度.*\[256\.0, 256\.0, 256\.0\]"),
    ("measured-zero", call(explore.measured_scaling, _measured(tiled_bytes=np.array([1.0, 0.0, 2.0]))), ValueError,
     r"measured\['tiled_bytes'\] 必须是与 n 等长 \(3\) 的正数.*最小值 0"),
    ("measured-short-column", call(explore.measured_scaling, _measured(rnn_seconds=np.ones(2))), ValueError,
     r"measured\['rnn_seconds'\] 必须是与 n 等长 \(3\) 的正数.*shape=\(2,\)"),
    ("measured-nan", call(explore.measured_scaling, _measured(attention_seconds=np.array([1.0, np.nan, 2.0]))),
     ValueError, r"measured\['attention_seconds'\].*NaN"),
]

test_documented_errors = error_table_test(ERROR_CASES)
