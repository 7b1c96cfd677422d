"""plot/checks.py：要画的文字——标题里既有公式又有换行时逐行解析，不往 stderr 打日志。"""

import numpy as np

from transformer_lab import plot


def test_multi_line_title_with_math_logs_nothing(caplog):
    # 标题里既有公式又有换行（第 3 章的"手工设计的示意"）：检查公式时要逐行解析，
    # 整段解析会让 matplotlib 把换行符当成缺字，往 stderr 打一条日志（notebook 的存档输出就对不上了）
    title = "原来的提问眼镜 $W_Q$\n（手工设计的示意，不是训练所得）"
    with caplog.at_level("WARNING", logger="matplotlib"):
        heat = plot.attention_heatmap(np.full((2, 2), 0.5), ["小猫", "鱼"], title=title)
        heat.image.axes.figure.canvas.draw()
    assert heat.image.axes.get_title() == title
    assert not caplog.records, [r.getMessage() for r in caplog.records]
