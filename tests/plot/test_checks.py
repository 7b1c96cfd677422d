"""plot/checks.py：要画的文字——标题里既有公式又有换行时逐行解析，不往 stderr 打日志；
几章的图共用的检查（热力图上的一句话的权重、对数图的横轴和纵轴）的手算例子和报错。"""

import numpy as np

from transformer_lab import plot
from transformer_lab.plot import checks

from helpers.errors import call, error_table_test


def test_multi_line_title_with_math_logs_nothing(caplog):
    # 标题里既有公式又有换行（第 3 章的"手工设计的示意"）：检查公式时要逐行解析，
    # 整段解析会让 matplotlib 把换行符当成缺字，往 stderr 打一条日志（notebook 的存档输出就对不上了）
    title = "原来的提问眼镜 $W_Q$\n（手工设计的示意，不是训练所得）"
    with caplog.at_level("WARNING", logger="matplotlib"):
        heat = plot.attention_heatmap(np.full((2, 2), 0.5), ["小猫", "鱼"], title=title)
        heat.image.axes.figure.canvas.draw()
    assert heat.image.axes.get_title() == title
    assert not caplog.records, [r.getMessage() for r in caplog.records]


# ---------------------------------------------------------------- 几章共用的：热力图上的一句话的权重、对数图的两条轴

def test_square_weights_accepts_the_edges_of_zero_to_one():
    w = np.array([[0.0, 1.0], [0.5, 0.5]])
    assert checks.square_weights(w, "weights", 2) is w  # 已经是 float 数组：原样返回，不复制
    assert checks.square_weights(np.eye(3, dtype=int), "w", 3).dtype == np.float64


def test_increasing_ints_and_positive_series_by_hand():
    np.testing.assert_array_equal(checks.increasing_ints(np.array([1, 4, 16]), "dims", "d_k"), [1.0, 4.0, 16.0])
    np.testing.assert_array_equal(checks.positive_series(np.array([1e-9, 2.0]), "t", 2, "用时"), [1e-9, 2.0])


VE, TE = ValueError, TypeError
ERROR_CASES = [
    ("square-shape", call(checks.square_weights, np.ones((2, 3)) / 3, "weights", 2), VE,
     r"^weights 的形状必须是 \(T, T\) = \(2, 2\)（tokens 有 2 个词），收到的是 \(2, 3\)"),
    ("square-negative", call(checks.square_weights, np.array([[-0.0, 1.0], [1.5, -0.5]]), "swapped", 2), VE,
     r"^swapped 是注意力权重，每个数都应在 \[0, 1\] 之内，收到的最小 -0.5、最大 1.5"),
    ("square-minus-zero", call(checks.square_weights, np.array([[-0.0, 2.0], [0.0, 0.0]]), "w", 2), VE,
     r"收到的最小 0、最大 2"),  # -0.0 不写成 "-0"
    ("square-list", call(checks.square_weights, [[1.0]], "weights", 1), TE, r"^weights 必须是 NumPy 数组"),
    ("square-1d", call(checks.square_weights, np.ones(2), "weights", 2), VE, r"^weights 至少要有 2 维"),
    ("ints-one", call(checks.increasing_ints, np.array([4]), "dims", "d_k"), VE,
     r"^dims 必须是至少 2 个、从小到大的正整数（d_k），收到的是 \[4(\.0)?\]"),
    ("ints-order", call(checks.increasing_ints, np.array([4, 1]), "dims", "d_k"), VE, r"收到的是 \[4(\.0)?, 1(\.0)?\]"),
    ("ints-repeat", call(checks.increasing_ints, np.array([1, 1]), "T", "长度"), VE, r"^T 必须是至少 2 个、从小到大"),
    ("ints-fraction", call(checks.increasing_ints, np.array([1.0, 2.5]), "T", "长度"), VE, r"^T 必须是.*正整数.*2\.5"),
    ("ints-zero", call(checks.increasing_ints, np.array([0, 1]), "T", "长度"), VE, r"^T 必须是.*正整数.*\[0(\.0)?, 1(\.0)?\]"),
    ("ints-2d", call(checks.increasing_ints, np.ones((2, 2)), "T", "长度"), VE, r"^T 必须是至少 2 个"),
    ("ints-nan", call(checks.increasing_ints, np.array([1.0, np.nan]), "T", "长度"), VE, r"^T 含有 NaN"),
    ("series-length", call(checks.positive_series, np.ones(3), "tim['rnn']", 7, "每个长度一个用时，秒"), VE,
     r"^tim\['rnn'\] 必须是 7 个正数（每个长度一个用时，秒；对数坐标画不出 ≤ 0 的数），收到的 shape=\(3,\)、最小值 1"),
    ("series-zero", call(checks.positive_series, np.array([0.0, 1.0]), "raw_var", 2, "方差"), VE, r"最小值 0"),
    ("series-negative", call(checks.positive_series, np.array([1.0, -2.0]), "raw_var", 2, "方差"), VE, r"最小值 -2"),
    ("series-list", call(checks.positive_series, [1.0, 2.0], "raw_var", 2, "方差"), TE, r"^raw_var 必须是 NumPy 数组"),
]
test_documented_errors = error_table_test(ERROR_CASES)
