"""画图层：matplotlib 的画图小函数，不导入本包的任何数学模块。

每个函数接收数组和可选的 ``ax``，返回它画出的对象，从不调用 ``plt.show()``。需要随滑块变化的图，
返回一个带 ``set_values(...)`` 方法的小对象：只改数据，不重建图。``tl.plotting`` 就是本包。
"""

from .bars import Bars, weight_bars
from .figure import CJK_FONT, CMAP, BookFigure, new_figure, setup_fonts
from .heatmap import Heatmap, attention_heatmap, labelled_heatmap, text_color
from .lines import line_plot, scatter_vs_target

__all__ = ["CJK_FONT", "CMAP", "setup_fonts", "BookFigure", "new_figure", "text_color", "Heatmap",
           "labelled_heatmap", "attention_heatmap", "Bars", "weight_bars", "line_plot", "scatter_vs_target"]
