"""图的两种版式在测试里的共用检查：单独画一张、取出画着的字、判断两种屏幕上都读得清。"""

from __future__ import annotations

from transformer_lab.plot.figure import NARROW_WIDTH, SCREEN_DPI, WIDE_WIDTH
from transformer_lab.widgets.blit import BlitFigure
from transformer_lab.widgets.static import read_player


def drawn(ex, layout, params=None):
    """这种版式的图，画到 ``params``（默认初始取值）：用公开的 ``BlitFigure`` 单独建一张，不碰 ex 的缓存。"""
    fig = BlitFigure(ex.view, ex.data, ex.start, ex.layout(layout))
    fig.draw(ex.start if params is None else params)
    return fig


def reads_on_both(ex) -> bool:
    """与 tests/test_explorables.py 相同的规则：宽版 ≤ 6.8 英寸、窄版 ≤ 3.6 英寸，最小的字电脑上 ≥ 12 px、手机上 ≥ 11 px。"""
    (data,) = read_player(ex.static_html())
    px = {k: data["text_px"][k] * min(ex.figure_pixels(k, SCREEN_DPI)[0], column) / ex.figure_pixels(k, ex.frame_dpi)[0]
          for k, column in (("wide", 688), ("narrow", 358))}
    return (ex.layout("wide").size[0] <= WIDE_WIDTH and ex.layout("narrow").size[0] <= NARROW_WIDTH
            and px["wide"] >= 12 and px["narrow"] >= 11)


def texts(ex, layout, params=None) -> list[str]:
    """这种版式的图画到 ``params`` 时，画着的每一段字。"""
    return [t.text for t in drawn(ex, layout, params).texts()]
