"""画布与中文字体：本书所有的图都从 ``new_figure`` 开始。

导入本模块时调用一次 ``setup_fonts()``：它改动 matplotlib 的全局设置 ``rcParams``，把中文字体
(Noto Sans CJK SC) 放在字体列表最前面。这是有意的全局状态——本书每张图都要中文字体。
本模块只依赖 matplotlib 与 NumPy，不导入本包的任何数学模块。
"""

from __future__ import annotations

import importlib.util
import io
import warnings
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib import font_manager
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["CJK_FONT", "CMAP", "setup_fonts", "BookFigure", "new_figure"]

CJK_FONT = "Noto Sans CJK SC"
CMAP = "viridis"  # 感知均匀，灰度打印也能分出深浅


def _bundled_font() -> Path | None:
    """mplfonts 包里自带的思源黑体 (Noto Sans CJK SC) 字体文件；没装 mplfonts 时返回 None。"""
    spec = importlib.util.find_spec("mplfonts")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "fonts" / "NotoSansCJKsc-Regular.otf"
    return path if path.exists() else None


def setup_fonts() -> str | None:
    """让 matplotlib 用中文字体：先用 mplfonts 自带的 Noto Sans CJK SC，找不到再用系统里的。

    中文字体放在字体列表最前面，DejaVu Sans 兜底西文和数学符号。

    Returns
    -------
    str or None
        用上的中文字体名；一个也没找到时返回 None 并发出警告。
    """
    path = _bundled_font()
    if path is not None:
        font_manager.fontManager.addfont(str(path))
    names = {f.name for f in font_manager.fontManager.ttflist}
    found = next((n for n in (CJK_FONT, "Noto Sans SC", "Source Han Sans SC", "WenQuanYi Zen Hei") if n in names), None)
    if found is None:
        warnings.warn(
            "没有找到中文字体，图中的汉字会显示成方框。请运行 pip install mplfonts，"
            "或安装系统字体（Debian/Ubuntu：sudo apt install fonts-noto-cjk）。",
            stacklevel=2,
        )
        return None
    matplotlib.rcParams["font.family"] = ["sans-serif"]
    matplotlib.rcParams["font.sans-serif"] = [found, "DejaVu Sans"]
    matplotlib.rcParams["axes.unicode_minus"] = False
    matplotlib.rcParams["mathtext.fontset"] = "dejavusans"
    return found


setup_fonts()


class BookFigure(Figure):
    """不经过 pyplot 的图：不会被 Jupyter 自动重复显示；作为单元格最后一个值时显示成 PNG。"""

    def to_png(self) -> bytes:
        """输出 PNG 字节（去掉版本号元数据，同样的图得到同样的字节）。

        先画一次让 constrained 排版稳定下来：第一次画时文字（例如色条的刻度）的大小还不知道，
        直接保存的话，第一次和第二次得到的字节不同。
        """
        self.canvas.draw()
        buf = io.BytesIO()
        self.savefig(buf, format="png", metadata={"Software": None})
        return buf.getvalue()

    def _repr_png_(self) -> bytes:
        return self.to_png()


def new_figure(width: float = 7.0, height: float = 3.6, ncols: int = 1, dpi: int = 100) -> tuple[BookFigure, list[Axes]]:
    """新建一张图和 ``ncols`` 个横排的子图。

    不经过 pyplot，所以反复更新也不会在 Jupyter 里多出一张图；需要显示时，把 ``fig`` 放在单元格最后一行。
    """
    fig = BookFigure(figsize=(width, height), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, list(np.atleast_1d(fig.subplots(1, ncols)))
