"""可交互图的模型：一个画图对象 (view) + 若干滑块 (Slider) = 一张 ``Explorable``。

同一个 view 画出两种滑块，它们是对称的两兄弟：

* ``live.py``：有内核 (kernel) 时的 ipywidgets 滑块，任意取值都当场重算；
* ``static.py``：没有内核时（静态网站、还没运行的 notebook），预先画好的帧 + 一小段换帧脚本。

两者都经过本模块画每一帧：先检查滑块取值（``check_params``），再交给 ``blit.py`` 局部重画、编码成 PNG。

view 的约定（由本模块在构造时检查，而不是靠作者记住）：

* ``View(fig, axes, layout, **data)`` 只建一次图，``data`` 是这张图固定不变的数据；``layout`` 是版式
  （``plot.figure.Layout``）：宽版（电脑）子图横排，窄版（手机）同样的子图竖着排，图窄一半。同一个 view 画两种版式，
  按 ``layout.narrow`` 决定标题写长写短、刻度放几个；图里最小的字不小于 ``plot.figure.MIN_FONT_PT``；
* ``update(**滑块取值)`` 只改数据，返回本次画出的数组；参数名必须和滑块的名字一一对应。
  几张图共用一个 view、滑块却不同时，写成 ``update(self, **params)``（可以另有几个具名参数，
  它们也必须是滑块名）：引擎照样只传滑块名、照样先检查每个取值；
  第一次 ``update`` 由引擎调用，view 的构造函数不要自己调用；
* 可选属性 ``artists``：随滑块变化的图元。给出它，拖动时就只重画这些图元（blitting），
  坐标轴、刻度等不变的部分画一次后缓存起来，快好几倍。

静态网页上每张图最多预先画 ``FRAME_CAP`` 帧（``max_frames`` 可为个别图放宽），由 ``static.py`` 检查。
没有滑块的 Explorable 就是一张静态图：同样画两种版式，网站按屏幕宽度挑一张；notebook 里显示成一张 PNG。

依赖方向：本模块导入 ``slider``、``blit``（从而 ``plot``、matplotlib 和 PIL）；ipywidgets 只在需要活滑块时才导入。
"""

from __future__ import annotations

import inspect
import itertools
import math
import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol

import numpy as np

from .. import _validation as check
from .._cache import fingerprint
from ..plot.figure import NARROW, NARROW_WIDTH, SCREEN_DPI, WIDE, Layout, TextItem
from .blit import BlitFigure
from .slider import Slider

__all__ = ["BOOK_BUILD_ENV", "FRAME_CAP", "FRAME_DPI", "LIVE_DPI", "Slider", "Explorable", "View", "building_book"]

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
# 建书的开关：book/_ext/explorable_frames.py 在构建进程里设为 "1"，执行 notebook 的内核继承它（见 building_book）。
BOOK_BUILD_ENV = "TRANSFORMER_LAB_BOOK_BUILD"

# 静态网页上一张图最多预先画多少帧（网格上所有组合的个数）：帧数决定页面体积和建书时间。
# 42 是写下它时全书最大的网格（dot_vs_cosine、reversal_training）。确有需要的图写 Explorable(..., max_frames=...)。
FRAME_CAP = 42
# 分辨率：静态网页的帧用 150 dpi（高清屏上也清楚；字在屏幕上多大与 dpi 无关，见 plot.figure），
# 活滑块每拖一下都要重新编码 PNG，用 100 dpi（= 屏幕上的显示比例 SCREEN_DPI）更快。
FRAME_DPI, LIVE_DPI = 150, SCREEN_DPI


class View(Protocol):
    """画图对象：构造时建图，``update`` 只改数据并返回本次画出的数组（供检查）。"""

    def update(self, **params: Any) -> dict[str, np.ndarray]: ...


def _check_view(view: type, sliders: list[Slider]) -> None:
    """view 必须是类；``update`` 的参数必须正好是滑块的名字，或者带 ``**params``（具名的那几个也得是滑块名）。"""
    if not inspect.isclass(view) or not callable(getattr(view, "update", None)):
        raise TypeError(f"view 必须是一个带 update 方法的类，收到的是 {view!r}。")
    if "layout" not in inspect.signature(view.__init__).parameters:
        raise TypeError(f"{view.__name__}.__init__ 必须有参数 layout（版式：宽版给电脑、窄版给手机，"
                        "见 plot.figure.Layout）：同一个 view 要画出两种版式。")
    params = list(inspect.signature(view.update).parameters.values())[1:]  # 去掉 self
    named = [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    names = [s.name for s in sliders]
    if any(p.kind is p.VAR_KEYWORD for p in params):
        unknown = [n for n in named if n not in names]
        if unknown:
            raise ValueError(
                f"{view.__name__}.update 的具名参数 ({', '.join(unknown)}) 不是滑块的名字 (滑块：{', '.join(names)})："
                "带 **params 的 update 收下全部滑块，另写出来的参数也必须是其中之一。"
            )
    elif sorted(named) != sorted(names):
        raise ValueError(
            f"{view.__name__}.update 的参数 ({', '.join(named)}) 与滑块 ({', '.join(names)}) 不一致："
            "每个滑块对应 update 的一个同名参数，不多不少（几张图共用一个 view 时可以写 update(self, **params)）。"
        )


MAX_PANELS, MAX_INCHES, MAX_DPI = 12, 40.0, 600  # 子图个数、图的宽高（英寸）、分辨率的上限：再大多半是写错了，还会耗尽内存


def _check_size(size: Any, name: str) -> None:
    """图的 (宽, 高)，单位英寸：两个 (0, 40] 之间的有限实数。"""
    if not isinstance(size, (tuple, list)) or len(size) != 2:
        raise TypeError(f"{name} 必须是 (宽, 高) 两个数（英寸），收到的是 {check.describe(size)}。")
    for value, what in zip(size, ("宽", "高")):
        value = check.positive_real(value, f"{name} 的{what}")
        if value > MAX_INCHES:
            raise ValueError(f"{name} 的{what} {value} 英寸太大：上限是 {MAX_INCHES:g} 英寸（屏幕上约 {MAX_INCHES * SCREEN_DPI:.0f} px）。")


def _check_max_frames(max_frames: Any) -> None:
    """``max_frames``：静态网页上最多预先画多少帧，必须是正整数。"""
    if isinstance(max_frames, bool) or not isinstance(max_frames, int):
        raise TypeError(f"max_frames 必须是整数（静态网页上最多预先画多少帧），收到的是 {type(max_frames).__name__} "
                        f"{max_frames!r}。")
    if max_frames < 1:
        raise ValueError(f"max_frames 必须 ≥ 1（静态网页上最多预先画多少帧），收到的是 {max_frames}。")


@dataclass(eq=False)  # 两张图只在是同一个对象时才相等：data 里的数组没法逐项比较
class Explorable:
    """一张可交互图。在 Jupyter 里直接作为单元格的最后一个值显示即可。

    Parameters
    ----------
    view : type
        画图对象的类：``view(fig, axes, layout=版式, **data)`` 建图（每种版式只调用一次），
        ``update(**滑块取值)`` 改数据。
    sliders : list of Slider
        可以是空列表：没有滑块就是一张静态图。
    title : str
        图的标题（也用于无障碍标签）。
    alt : str
        每一帧的替代文字 (alt text) 模板，可用 ``{参数名}`` 占位，例如 ``"d_k = {d_k} 时的权重"``。
    data : mapping
        传给 view 构造函数的固定数据（算好的数组、设计好的参数）。
    size : (float, float)
        宽版（电脑）图的宽和高（英寸）。宽不超过 ``plot.figure.WIDE_WIDTH``，字才在电脑上够大。
    ncols : int
        子图个数（宽版横排，窄版竖排）。
    narrow_size : (float, float), optional
        窄版（手机）图的宽和高（英寸），宽不超过 ``plot.figure.NARROW_WIDTH``。默认：宽
        ``NARROW_WIDTH``，每个子图保持宽版里的长宽比，竖着排。
    max_frames : int
        静态网页上最多预先画多少帧，默认 ``FRAME_CAP``；网格更大的图要在这里写明。

    Raises
    ------
    TypeError, ValueError
        ``view`` 不是带 ``update`` 的类，``update`` 的参数与滑块名不一致，``alt`` 模板用了没有的名字，
        ``title``/``alt`` 不是非空字符串，``sliders`` 不是 Slider 的列表，``ncols``、``max_frames`` 不是正整数，
        ``ncols`` 超过 12，``size``/``narrow_size`` 不是 (0, 40] 英寸里的两个数，``data`` 不是字典，
        或 ``frame_dpi`` 不是 [1, 600] 里的整数。

    Examples
    --------
    >>> class Line:
    ...     def __init__(self, fig, axes, layout, slope_max):
    ...         self.line, = axes[0].plot([0, 1], [0, 0])
    ...         axes[0].set_ylim(0, slope_max)
    ...         self.artists = [self.line]
    ...     def update(self, a):
    ...         self.line.set_ydata([0, a])
    ...         return {"y": np.array([0, a])}
    >>> ex = Explorable(Line, [Slider("a", (1, 2, 3))], title="直线", alt="斜率 {a}", data={"slope_max": 3})
    >>> ex.grid(), ex.frame_count
    ([{'a': 1}, {'a': 2}, {'a': 3}], 3)
    >>> ex.update(a=3)["y"].tolist(), ex.alt_text(a=3)
    ([0, 3], '斜率 3')
    """

    view: type
    sliders: list[Slider]
    title: str
    alt: str
    data: Mapping[str, Any] = field(default_factory=dict)
    size: tuple[float, float] = (8.0, 3.4)
    ncols: int = 1
    max_frames: int = FRAME_CAP
    narrow_size: tuple[float, float] | None = None
    frame_dpi: int = FRAME_DPI
    _drawings: dict = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self):
        for name in ("title", "alt"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise TypeError(f"{name} 必须是非空的字符串（{'图的标题' if name == 'title' else '替代文字的模板'}），"
                                f"收到的是 {check.describe(value)}。")
        if not isinstance(self.sliders, (list, tuple)) or not all(isinstance(s, Slider) for s in self.sliders):
            raise TypeError(f"sliders 必须是 Slider 的列表（没有滑块就写 []），收到的是 {check.describe(self.sliders)}。")
        check.at_most(check.positive_int(self.ncols, "ncols"), "ncols", MAX_PANELS, "一张图的子图太多，手机上一格都看不清")
        _check_size(self.size, "size")
        if self.narrow_size is not None:
            _check_size(self.narrow_size, "narrow_size")
        if not isinstance(self.data, Mapping):
            raise TypeError(f"data 必须是字典（传给 view 构造函数的固定数据），收到的是 {check.describe(self.data)}。")
        check.int_in_range(self.frame_dpi, "frame_dpi", 1, MAX_DPI)
        _check_view(self.view, self.sliders)
        _check_max_frames(self.max_frames)
        try:
            self.alt.format(**self.start)
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(f"alt 模板 {self.alt!r} 用了滑块里没有的占位符或格式有误（{exc!r}）："
                             f"只能用 {{{'}、{'.join(s.name for s in self.sliders)}}} 这些名字。") from None

    # ---------------------------------------------------------------- 网格与取值（不建图）

    @property
    def start(self) -> dict[str, Any]:
        """打开图时各滑块的取值。"""
        return {s.name: s.start for s in self.sliders}

    def grid(self) -> list[dict[str, Any]]:
        """静态网页上要预先画的所有参数组合（第一个滑块变化最慢）。"""
        names = [s.name for s in self.sliders]
        return [dict(zip(names, combo)) for combo in itertools.product(*(s.values for s in self.sliders))]

    @property
    def frame_count(self) -> int:
        """``len(grid())``：各滑块网格大小的乘积。"""
        return math.prod(len(s.values) for s in self.sliders)

    def check_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """检查一组滑块取值：名字不多不少，每个值都合法（见 ``Slider.check``）；返回检查后的取值。

        所有更新都先经过这里，所以任何 view 都不会收到网格外、范围外或类型不对的值。
        """
        names = [s.name for s in self.sliders]
        missing, extra = [n for n in names if n not in params], [n for n in params if n not in names]
        if missing or extra:
            raise TypeError(
                f"「{self.title}」的滑块是 {', '.join(names)}：" + (f"缺少 {', '.join(missing)}；" if missing else "")
                + (f"没有名为 {', '.join(extra)} 的滑块。" if extra else "")
            )
        return {s.name: s.check(params[s.name]) for s in self.sliders}

    def alt_text(self, **params: Any) -> str:
        """给定参数时这一帧的替代文字。"""
        return self.alt.format(**self.check_params(params))

    def describe(self) -> str:
        """一行文字说明：图名和每个滑块的网格。"""
        if not self.sliders:
            return f"图「{self.title}」"
        parts = [f"{s.shown} ∈ {{{', '.join(map(str, s.values))}}}" for s in self.sliders]
        return f"可交互图「{self.title}」：" + "；".join(parts)

    # ---------------------------------------------------------------- 版式

    def layout(self, name: str = WIDE, dpi: int = LIVE_DPI) -> Layout:
        """``"wide"``（电脑：子图横排，大小 ``size``）或 ``"narrow"``（手机：同样的子图竖排，大小 ``narrow_size``）。"""
        if name == WIDE:
            return Layout(WIDE, tuple(self.size), 1, self.ncols, dpi)
        if name != NARROW:
            raise ValueError(f"layout 必须是 {WIDE!r}（电脑）或 {NARROW!r}（手机），收到的是 {name!r}。")
        if self.narrow_size is not None:
            return Layout(NARROW, tuple(self.narrow_size), self.ncols, 1, dpi)
        panel_w, panel_h = self.size[0] / self.ncols, self.size[1]
        return Layout(NARROW, (NARROW_WIDTH, round(self.ncols * panel_h * NARROW_WIDTH / panel_w, 2)), self.ncols, 1, dpi)

    # ---------------------------------------------------------------- 画图（第一次用到时建图，见 blit.py）

    def _drawn(self, layout: str = WIDE, dpi: int = LIVE_DPI) -> BlitFigure:
        """这种版式、这个分辨率的图（第一次用到时建好，之后一直用它）。"""
        key = (layout, dpi)
        if key not in self._drawings:
            self._drawings[key] = BlitFigure(self.view, self.data, self.start, self.layout(layout, dpi))
        return self._drawings[key]

    @property
    def figure(self):
        """这张图（宽版、活滑块的分辨率）的 matplotlib Figure（建一次，之后拖动只改数据）。"""
        return self._drawn().fig

    @property
    def artists(self) -> tuple:
        """拖动时要重画的图元（view 的 ``artists`` 加上画在它们上面的不变图元）；view 没给出时为空（每次整张重画）。"""
        return self._drawn().artists

    def update(self, **params: Any) -> dict[str, np.ndarray]:
        """把图更新到给定参数（不重建图，也不画到画布上），返回画出的数组。

        Raises
        ------
        TypeError, ValueError
            滑块名不对、值不在网格里或超出连续滑块的范围、整数滑块收到非整数。
        """
        params = self.check_params(params)
        return self._drawn().view.update(**params)

    def render(self, **params: Any) -> dict[str, np.ndarray]:
        """更新到给定参数并画到画布上：有 ``artists`` 时只重画变化的图元，否则整张重画。"""
        params = self.check_params(params)
        return self._drawn().draw(params)

    def png(self, params: Mapping[str, Any], palette: bool = False, layout: str = WIDE, dpi: int = LIVE_DPI) -> bytes:
        """更新到 ``params`` 并输出这种版式的 PNG 字节（``palette=True``：静态网页的帧，256 色，见 ``blit.encode_png``）。"""
        params = self.check_params(params)
        drawing = self._drawn(layout, dpi)
        drawing.draw(params)
        return drawing.png(palette=palette)

    def texts(self, layout: str = WIDE, dpi: int = LIVE_DPI) -> list[TextItem]:
        """这种版式的图此刻画着的每一段字（字号、外框），见 ``plot.figure.text_items``。"""
        return self._drawn(layout, dpi).texts()

    def figure_pixels(self, layout: str = WIDE, dpi: int = LIVE_DPI) -> tuple[int, int]:
        """这种版式的图有多少像素（宽、高）：英寸 × dpi，不用真的建图。"""
        return self.layout(layout, dpi).pixels

    def cache_key(self) -> str | None:
        """这张图全部帧的钥匙（``static.py`` 按它把帧存到硬盘上）：画图的类、固定数据的内容、滑块、大小和 dpi
        都一样，画出来的帧就一样（包的代码另由 ``_cache.code_version`` 管）。画图的类不在本包里（notebook、测试
        里临时写的），或固定数据里有认不出内容的对象时，返回 None：不缓存。"""
        data = fingerprint(dict(self.data))
        if data is None or not self.view.__module__.startswith("transformer_lab."):
            return None
        return "\n".join([f"{self.view.__module__}.{self.view.__qualname__}", data, repr(self.sliders),
                          repr((self.size, self.ncols, self.narrow_size, self.frame_dpi)), self.title, self.alt])

    # ---------------------------------------------------------------- 在 Jupyter 里显示

    def static_html(self, all_frames: bool = True) -> str:
        """不需要内核和网络的 HTML（见 ``static.py``）；``all_frames=False`` 时只有初始那一帧的预览。"""
        from .static import render_html

        return render_html(self, all_frames=all_frames)

    def widget(self):
        """有内核时的活滑块（ipywidgets，见 ``live.py``）。"""
        from .live import live_widget

        return live_widget(self)

    def _repr_mimebundle_(self, include=None, exclude=None) -> tuple[dict[str, Any], dict[str, Any]]:
        """Jupyter 显示这张图时给的几种格式 (MIME bundle)，按场合分两种：

        * **有读者的内核**（JupyterLab）：有滑块的图给活滑块（ipywidgets）和初始帧的静态预览（``text/html``，
          带一句“运行后可以拖动滑块”；存进 notebook 的就是它，因为 ``dev.py refresh`` 去掉了活滑块）；
          没有滑块的图给一张 PNG。
        * **建书的内核**（``building_book()``）**和没有内核时**：全部帧写进 HTML 播放器（网站用它），另附初始帧的宽版
          ``image/png``（LaTeX/PDF 只认图片）；不建活滑块——建书时没人拖它，建了也只是白画一张图。

        PNG 就是播放器里那一帧（``first_frame_b64``，从帧缓存里取，不另画）。有读者的内核里有滑块的图不附 PNG：
        存档里的预览已经带着这一帧，再附一份，十章的 notebook 要多 1.2 MB；JupyterLab 也不会显示它
        （text/html 排在 image/png 前面，不受信任的 notebook 里两者都算“安全”，仍是 text/html）。
        """
        from .static import first_frame_b64

        live = _has_kernel() and not building_book()
        bundle: dict[str, Any] = {"text/plain": self.describe()}
        if self.sliders or not live:
            bundle["text/html"] = self.static_html(all_frames=not live)
        if live and self.sliders:  # 有人拖：活滑块（JupyterLab 优先显示它）
            bundle[WIDGET_MIME] = self.widget()._repr_mimebundle_()[WIDGET_MIME]
            return bundle, {}
        bundle["image/png"] = first_frame_b64(self)  # 在 HTML 之后取：全部帧刚进了缓存，这里只是读出来
        # PNG 按 frame_dpi 画得清楚；显示宽度按 LIVE_DPI 算，和活图一样大（1 英寸约 100 px），字号才对
        return bundle, {"image/png": {"width": self.figure_pixels(WIDE, LIVE_DPI)[0]}}


def building_book() -> bool:
    """这个进程是不是在为建书执行 notebook：``BOOK_BUILD_ENV`` 是 ``"1"``。

    开关由 ``book/_ext/explorable_frames.py`` 在构建进程里打开；执行 notebook 的内核是构建进程的子进程，
    继承它的环境变量。myst-nb 执行 notebook（jupyter-cache → nbclient）时没有别的办法告诉内核什么：
    不能给内核另设环境变量，也不能在第一个单元格之前先运行一段代码。
    """
    return os.environ.get(BOOK_BUILD_ENV) == "1"


def _has_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None
