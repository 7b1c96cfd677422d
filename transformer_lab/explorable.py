"""可交互图的机制：一个画图对象 + 若干滑块 → 在 JupyterLab 里是活的 ipywidgets，在静态网页上也能拖。

做法：
* 画图对象 (view) 只建一次图，之后每次拖动只调用 ``view.update(**参数)`` 改数据；
* 有内核 (kernel) 时显示 ipywidgets 滑块，任意取值都当场重算；
* 同时把每个滑块网格上的每个取值预先画成一帧 PNG，连同一小段内嵌脚本写进 ``text/html``：
  没有内核、没有网络的静态网页上，拖动滑块就是换帧。两种模式由同一个 view 画出。

依赖方向：本模块导入 plotting（从而 matplotlib）；ipywidgets 只在需要活滑块时才导入。
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import itertools
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

import numpy as np
from PIL import Image

from .plotting import new_figure

__all__ = ["Slider", "Explorable"]

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


class View(Protocol):
    """画图对象：构造时建图，``update`` 只改数据并返回本次画出的数组（供检查）。

    可选属性 ``artists``：随滑块变化的那些图元 (artist) 的列表。给出它，拖动时就只重画这些图元，
    坐标轴、刻度等不变的部分画一次后缓存起来（blitting），快好几倍。
    """

    def update(self, **params: Any) -> dict[str, np.ndarray]: ...


@dataclass(frozen=True)
class Slider:
    """一个滑块。``values`` 是静态网页上预先画好的网格；``continuous=True`` 时活滑块可取区间内任意值。"""

    name: str
    values: tuple
    label: str = ""
    default: Any = None
    continuous: bool = False
    step: float = 1

    def __post_init__(self):
        if len(self.values) < 2:
            raise ValueError(f"滑块 {self.name} 至少要有 2 个取值，收到的是 {self.values!r}。")
        if self.default is not None and self.default not in self.values:
            raise ValueError(f"滑块 {self.name} 的默认值 {self.default!r} 不在网格 {self.values!r} 里。")

    @property
    def shown(self) -> str:
        return self.label or self.name

    @property
    def start(self) -> Any:
        return self.values[len(self.values) // 2] if self.default is None else self.default


@dataclass
class Explorable:
    """一张可交互图。在 Jupyter 里直接作为单元格的最后一个值显示即可。

    Parameters
    ----------
    make_view : callable
        ``make_view(fig, axes, **params) -> View``，只调用一次。
    sliders : list of Slider
    title : str
        图的标题（也用于无障碍标签）。
    alt : str
        每一帧的替代文字 (alt text) 模板，可用 ``{参数名}`` 占位，例如 ``"d_k = {d_k} 时的权重"``。
    size : (float, float)
        图的宽和高（英寸）。
    ncols : int
        子图个数（横排）。
    """

    make_view: Callable[..., View]
    sliders: list[Slider]
    title: str
    alt: str
    size: tuple[float, float] = (8.0, 3.4)
    ncols: int = 1
    _state: dict = field(default_factory=dict, repr=False)

    def _view(self) -> tuple[Any, View]:
        if "view" not in self._state:
            fig, axes = new_figure(*self.size, ncols=self.ncols)
            params = {s.name: s.start for s in self.sliders}
            view = self.make_view(fig, axes, **params)
            fig.canvas.draw()  # 排版只算一次：之后拖动滑块只改数据，不再重新排版
            fig.set_layout_engine("none")
            for artist in getattr(view, "artists", ()):
                artist.set_animated(True)  # 背景里不画它们
            fig.canvas.draw()
            self._state.update(fig=fig, view=view, background=fig.canvas.copy_from_bbox(fig.bbox))
        return self._state["fig"], self._state["view"]

    def render(self, **params: Any) -> dict[str, np.ndarray]:
        """更新到给定参数并画到画布上：有 ``view.artists`` 时只重画变化的图元，否则整张重画。"""
        fig, view = self._view()
        drawn = view.update(**params)
        artists = getattr(view, "artists", None)
        if artists:
            fig.canvas.restore_region(self._state["background"])
            for artist in artists:
                fig.draw_artist(artist)
        else:
            fig.canvas.draw()
        return drawn

    def update(self, **params: Any) -> dict[str, np.ndarray]:
        """把图更新到给定参数（不重建图），返回画出的数组。"""
        return self._view()[1].update(**params)

    def png(self, **params: Any) -> bytes:
        """更新到给定参数并输出 PNG 字节（活滑块用：压缩得快，不求最小）。"""
        self.render(**params)
        return _encode(self._state["fig"].canvas, compress_level=1)

    def grid(self) -> list[dict[str, Any]]:
        """静态网页上要预先画的所有参数组合（第一个滑块变化最慢）。"""
        names = [s.name for s in self.sliders]
        return [dict(zip(names, combo)) for combo in itertools.product(*(s.values for s in self.sliders))]

    def frame(self, **params: Any) -> bytes:
        """静态网页用的帧：同一张图压成 256 色调色板 PNG，体积约为普通 PNG 的 2/5，肉眼看不出差别。"""
        self.render(**params)
        return _encode(self._state["fig"].canvas, palette=True)

    def alt_text(self, params: dict[str, Any]) -> str:
        return self.alt.format(**params)

    def static_html(self) -> str:
        """不需要内核和网络的 HTML：所有帧 + 原生 range 滑块 + 一小段换帧脚本。"""
        if "html" not in self._state:
            self._state["html"] = _static_html(self)
        return self._state["html"]

    def widget(self):
        """有内核时的活滑块（ipywidgets）。"""
        from ._live import live_widget

        return live_widget(self)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, Any]:
        bundle = {"text/plain": self.describe(), "text/html": self.static_html()}
        if _has_kernel():  # 有内核：再附上活滑块；JupyterLab 优先显示它，静态网页用 text/html
            bundle[WIDGET_MIME] = self.widget()._repr_mimebundle_()[WIDGET_MIME]
        return bundle

    def describe(self) -> str:
        parts = [f"{s.shown} ∈ {{{', '.join(map(str, s.values))}}}" for s in self.sliders]
        return f"可交互图「{self.title}」：" + "；".join(parts)


def _encode(canvas, compress_level: int = 6, palette: bool = False) -> bytes:
    """把画布当前的像素编码成 PNG。"""
    image = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba()).convert("RGB")
    if palette:
        image = image.quantize(colors=256)
    buf = io.BytesIO()
    image.save(buf, format="PNG", compress_level=compress_level, optimize=palette)
    return buf.getvalue()


def _has_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


_SCRIPT = """(function () {
  document.querySelectorAll(".tlx:not([data-ready])").forEach(function (root) {
    root.setAttribute("data-ready", "1");
    var data = JSON.parse(root.querySelector("script.tlx-data").textContent);
    var img = root.querySelector("img"), inputs = root.querySelectorAll("input.tlx-range");
    var outputs = root.querySelectorAll("output");
    function show() {
      var idx = 0;
      inputs.forEach(function (inp, i) {
        var s = data.sliders[i], v = s.values[Number(inp.value)];
        idx = idx * s.values.length + Number(inp.value);
        outputs[i].textContent = v;
        inp.setAttribute("aria-valuetext", s.label + " = " + v);
      });
      img.src = data.urls ? data.urls[idx] : "data:image/png;base64," + data.frames[idx];
      img.alt = data.alts[idx];
      root.setAttribute("data-frame", idx);
    }
    inputs.forEach(function (inp) { inp.addEventListener("input", show); });
    if (data.urls) {  // 网站上帧是单独的文件：图快进入视野时再预取，页面首次加载只下载第一帧
      var prefetch = function () { data.urls.forEach(function (u) { new Image().src = u; }); };
      if (!("IntersectionObserver" in window)) { prefetch(); return; }
      var seen = new IntersectionObserver(function (entries) {
        if (entries.some(function (e) { return e.isIntersecting; })) { seen.disconnect(); prefetch(); }
      }, {rootMargin: "600px"});
      seen.observe(root);
    }
  });
})();"""


def _static_html(ex: Explorable) -> str:
    grid = ex.grid()
    frames = [base64.b64encode(ex.frame(**p)).decode("ascii") for p in grid]
    alts = [ex.alt_text(p) for p in grid]
    sliders = [{"label": s.shown, "values": [str(v) for v in s.values]} for s in ex.sliders]
    start = {s.name: s.start for s in ex.sliders}
    idx = grid.index(start)
    uid = "tlx-" + hashlib.sha1(ex.title.encode()).hexdigest()[:8]
    data = json.dumps({"sliders": sliders, "frames": frames, "alts": alts}).replace("</", "<\\/")
    controls = []
    for i, s in enumerate(ex.sliders):
        pos = s.values.index(s.start)
        sid = f"{uid}-{i}"
        controls.append(
            f'<div class="tlx-control" style="display:flex;align-items:center;gap:0.8em;margin:0.3em 0">'
            f'<label for="{sid}" style="min-width:7em;font-family:monospace">{html.escape(s.shown)} = '
            f'<output for="{sid}">{html.escape(str(s.start))}</output></label>'
            f'<input class="tlx-range" id="{sid}" type="range" min="0" max="{len(s.values) - 1}" step="1" '
            f'value="{pos}" style="width:min(24em,60%)" '
            f'aria-valuetext="{html.escape(s.shown)} = {html.escape(str(s.start))}"></div>'
        )
    return (
        f'<div class="tlx" id="{uid}" role="group" aria-label="{html.escape(ex.title)}" data-frame="{idx}">'
        f'<img src="data:image/png;base64,{frames[idx]}" alt="{html.escape(alts[idx])}" '
        f'style="max-width:100%;height:auto">'
        f'{"".join(controls)}'
        f'<script type="application/json" class="tlx-data">{data}</script>'
        f"<script>{_SCRIPT}</script></div>"
    )
