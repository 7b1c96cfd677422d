"""有内核时的活滑块：ipywidgets 滑块 + 一张 PNG 图片控件，拖动时只更新数据、重绘同一张图。

``static.py`` 的对称兄弟：同一个 Explorable（按鸭子类型使用），同一个 view 画出的图。
"""

from __future__ import annotations

import ipywidgets as widgets
import traitlets


class FigureImage(widgets.Image):
    """显示一帧图的图片控件；``tooltip`` 成为 <img> 的 title，也就是读屏软件读出的名字。

    ipywidgets 的 Image 没有 ``description``，可它的前端（jupyterlab_widgets 3.0.x 的
    ``DOMWidgetView.updateTooltip``）一设 tooltip 就去读 ``description.length``，于是在 JupyterLab 4 里
    整张图换成一个控件报错框（ipywidgets PR #3921 修这个，尚未发布）。
    这里补上一个同步到前端的空 ``description``：前端读到 0，就把 tooltip 写成 <img title>。
    ``tests/site/test_jupyterlab.py`` 在真的 JupyterLab 里检查它，也检查换回原版 Image 时测试会失败。
    """

    # 报错框上的原文是 "Click to show javascript error."（写在注释里，不算书里用到的英文词）
    description = traitlets.Unicode("").tag(sync=True)


def _control(s):
    """为一个 Slider 造对应的 ipywidgets 控件。"""
    style = {"description_width": "initial"}
    layout = widgets.Layout(width="420px")
    if s.continuous:
        lo, hi = min(s.values), max(s.values)
        cls = widgets.IntSlider if all(isinstance(v, int) for v in s.values) else widgets.FloatSlider
        return cls(value=s.start, min=lo, max=hi, step=s.step, description=s.shown,
                   continuous_update=True, style=style, layout=layout)
    return widgets.SelectionSlider(options=[(str(v), v) for v in s.values], value=s.start,
                                   description=s.shown, continuous_update=True, style=style, layout=layout)


def live_widget(ex) -> widgets.VBox:
    """把 Explorable 变成 ipywidgets：拖动任何滑块都当场重算、重绘。

    替代文字写进图片控件的 ``tooltip``：它会同步到浏览器，成为 <img> 的 title 属性，
    读屏软件把它当作图片的名字读出来（ipywidgets 的 Image 没有 alt 属性可设；见 ``FigureImage``）。
    """
    controls = [_control(s) for s in ex.sliders]
    image = FigureImage(format="png", layout=widgets.Layout(max_width="100%"))

    def redraw(_change=None):
        params = {s.name: c.value for s, c in zip(ex.sliders, controls)}
        image.value = ex.png(params)
        image.tooltip = ex.alt_text(**params)

    for control in controls:
        control.observe(redraw, names="value")
    redraw()
    return widgets.VBox([image, *controls])
