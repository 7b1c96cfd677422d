"""``widgets/live.py``：有内核时的活滑块——ipywidgets 控件、同步到浏览器的状态、与引擎画出的 PNG 一致。

书里每张图的活滑块在 tests/test_explorables.py；真的 JupyterLab 里的检查在 tests/site/test_jupyterlab.py。
"""

from __future__ import annotations

import ipywidgets as widgets

from transformer_lab.widgets.explorable import Explorable, Slider
from transformer_lab.widgets.live import FigureImage

from helpers.tiny_view import tiny

PNG = b"\x89PNG\r\n\x1a\n"


def test_the_image_is_a_figure_image_with_an_empty_description_and_the_alt_text_as_tooltip():
    """``FigureImage`` 补上一个同步的空 description（jupyterlab_widgets 3.0.x 的前端一设 tooltip 就读它）。"""
    image, control = tiny().widget().children
    assert type(image) is FigureImage and isinstance(image, widgets.Image)
    state = image.get_state()
    assert state["description"] == "" and state["tooltip"] == "斜率 2" and state["format"] == "png"
    assert "description" not in widgets.Image().get_state()  # 原版 Image 没有它：这正是要补的


def test_live_widget_shows_the_same_png_as_the_engine():
    ex = tiny()
    image, control = ex.widget().children
    assert bytes(image.value) == ex.png(ex.start)
    control.value = 3
    assert bytes(image.value) == ex.png({"a": 3}) and image.get_state()["tooltip"] == "斜率 3"


def test_discrete_sliders_become_selection_sliders():
    ex = tiny(label="斜率 a", values=(1, 2, 4))
    box = ex.widget()
    image, control = box.children
    assert isinstance(box, widgets.VBox) and type(control) is widgets.SelectionSlider
    assert control.options == (("1", 1), ("2", 2), ("4", 4)) and control.value == 2 and control.description == "斜率 a"
    assert control.continuous_update is True


def test_continuous_sliders_are_int_or_float_sliders_over_the_whole_range():
    ex = Explorable(_Two, [Slider("n", (1, 8), continuous=True), Slider("g", (0.5, 2.0), continuous=True, step=0.25)],
                    title="t", alt="n = {n}, g = {g}", size=(2.0, 1.5))
    image, n, g = ex.widget().children
    assert type(n) is widgets.IntSlider and (n.min, n.max, n.value) == (1, 8, 8)
    assert type(g) is widgets.FloatSlider and (g.min, g.max, g.step, g.value) == (0.5, 2.0, 0.25, 2.0)
    n.value = 3  # 网格之间的值：活滑块当场重算
    g.value = 0.75
    assert image.get_state()["tooltip"] == "n = 3, g = 0.75" and bytes(image.value).startswith(PNG)


class _Two:
    def __init__(self, fig, axes, layout):
        self.line, = axes[0].plot([0, 1], [0, 0])
        axes[0].set_ylim(0, 16)
        self.artists = [self.line]

    def update(self, n, g):
        self.line.set_ydata([0, n * g])
        return {}
