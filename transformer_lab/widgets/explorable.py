"""可交互图的模型：一个画图对象 (view) + 若干滑块 (Slider) = 一张 ``Explorable``。

同一个 view 画出两种滑块，它们是对称的两兄弟：

* ``live.py``：有内核 (kernel) 时的 ipywidgets 滑块，任意取值都当场重算；
* ``static.py``：没有内核时（静态网站、还没运行的 notebook），预先画好的帧 + 一小段换帧脚本。

view 的约定（由本模块在构造时检查，而不是靠作者记住）：

* ``View(fig, axes, **data)`` 只建一次图，``data`` 是这张图固定不变的数据；
* ``update(**滑块取值)`` 只改数据，返回本次画出的数组；参数名必须和滑块的名字一一对应；
  第一次 ``update`` 由本模块调用，view 的构造函数不要自己调用；
* 可选属性 ``artists``：随滑块变化的图元。给出它，拖动时就只重画这些图元（blitting），
  坐标轴、刻度等不变的部分画一次后缓存起来，快好几倍。

依赖方向：本模块导入 ``plot``（从而 matplotlib）和 PIL；ipywidgets 只在需要活滑块时才导入。
"""

from __future__ import annotations

import inspect
import io
import itertools
import numbers
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol

import numpy as np
from matplotlib.axis import Axis
from PIL import Image

from ..plot.figure import new_figure

__all__ = ["Slider", "Explorable", "View"]

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


class View(Protocol):
    """画图对象：构造时建图，``update`` 只改数据并返回本次画出的数组（供检查）。"""

    def update(self, **params: Any) -> dict[str, np.ndarray]: ...


@dataclass(frozen=True)
class Slider:
    """一个滑块。``values`` 是静态网页上预先画好的网格；``continuous=True`` 时活滑块可取区间内任意值。

    Examples
    --------
    >>> Slider("d_k", (1, 2, 4)).start          # 没给默认值：取网格正中间的那个
    2
    >>> Slider("d_k", (1, 2, 4), label="每个向量的长度 d_k", default=4).shown
    '每个向量的长度 d_k'
    """

    name: str
    values: tuple
    label: str = ""
    default: Any = None
    continuous: bool = False
    step: float = 1

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise TypeError(f"滑块的名字必须是合法的参数名（字符串），收到的是 {self.name!r}。")
        if not isinstance(self.values, (tuple, list)):
            raise TypeError(f"滑块 {self.name} 的 values 必须是元组或列表，收到的是 {type(self.values).__name__}。")
        object.__setattr__(self, "values", tuple(self.values))  # 冻结的 dataclass：统一存成元组
        if self.continuous and not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in self.values):
            raise TypeError(f"连续滑块 {self.name} 的取值必须都是数，收到的是 {self.values!r}。")
        if len(self.values) < 2:
            raise ValueError(f"滑块 {self.name} 至少要有 2 个取值，收到的是 {self.values!r}。")
        if self.default is not None and self.default not in self.values:
            raise ValueError(f"滑块 {self.name} 的默认值 {self.default!r} 不在网格 {self.values!r} 里。")

    @property
    def shown(self) -> str:
        """滑块旁边显示的名字。"""
        return self.label or self.name

    @property
    def start(self) -> Any:
        """打开图时滑块所在的值。"""
        return self.values[len(self.values) // 2] if self.default is None else self.default

    @property
    def integral(self) -> bool:
        """网格全是整数时，滑块只取整数（连续滑块也是 IntSlider）。"""
        return all(isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)) for v in self.values)

    def check(self, value: Any) -> Any:
        """检查一个滑块取值并返回它：离散滑块必须是网格里的值；连续滑块必须在 [最小, 最大] 之内；整数滑块只收整数。

        >>> Slider("d_k", (1, 2, 4), continuous=True).check(3)
        3
        >>> Slider("d_k", (1, 2, 4), continuous=True).check(2.7)
        Traceback (most recent call last):
        ...
        TypeError: 滑块 d_k 只取整数，收到的是 float 2.7。
        """
        if self.integral and (isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral)):
            raise TypeError(f"滑块 {self.name} 只取整数，收到的是 {type(value).__name__} {value!r}。")
        if not self.continuous:
            if not any(_same(value, v) for v in self.values):
                raise ValueError(f"滑块 {self.name}={value!r} 不在它的取值里。可选：{'、'.join(map(repr, self.values))}。")
            return value
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise TypeError(f"滑块 {self.name} 只取实数，收到的是 {type(value).__name__} {value!r}。")
        x, lo, hi = float(value), min(self.values), max(self.values)
        if not lo <= x <= hi:  # NaN 也不在范围内
            raise ValueError(f"滑块 {self.name}={value!r} 超出范围：应在 [{lo}, {hi}] 之内。")
        return int(value) if self.integral else value  # 浮点滑块原样返回：帧的文字与网格值一致


def _same(value: Any, v: Any) -> bool:
    """网格值比较：同为字符串或同为数，且相等（"1" 不等于 1，True 不等于 1）。"""
    if isinstance(value, (bool, np.bool_)) != isinstance(v, (bool, np.bool_)):
        return False
    if isinstance(v, str) or isinstance(value, str):
        return isinstance(value, str) and isinstance(v, str) and value == v
    return isinstance(value, numbers.Real) and value == v


def _check_view(view: type, sliders: list[Slider]) -> None:
    """view 必须是类，``update`` 的参数必须正好是滑块的名字。"""
    if not inspect.isclass(view) or not callable(getattr(view, "update", None)):
        raise TypeError(f"view 必须是一个带 update 方法的类，收到的是 {view!r}。")
    params = list(inspect.signature(view.update).parameters)[1:]  # 去掉 self
    names = [s.name for s in sliders]
    if sorted(params) != sorted(names):
        raise ValueError(
            f"{view.__name__}.update 的参数 ({', '.join(params)}) 与滑块 ({', '.join(names)}) 不一致："
            "每个滑块对应 update 的一个同名参数，不多不少。"
        )


@dataclass
class Explorable:
    """一张可交互图。在 Jupyter 里直接作为单元格的最后一个值显示即可。

    Parameters
    ----------
    view : type
        画图对象的类：``view(fig, axes, **data)`` 建图（只调用一次），``update(**滑块取值)`` 改数据。
    sliders : list of Slider
    title : str
        图的标题（也用于无障碍标签）。
    alt : str
        每一帧的替代文字 (alt text) 模板，可用 ``{参数名}`` 占位，例如 ``"d_k = {d_k} 时的权重"``。
    data : mapping
        传给 view 构造函数的固定数据（算好的数组、设计好的参数）。
    size : (float, float)
        图的宽和高（英寸）。
    ncols : int
        子图个数（横排）。

    Raises
    ------
    TypeError, ValueError
        ``view`` 不是带 ``update`` 的类，或 ``update`` 的参数与滑块名不一致。

    Examples
    --------
    >>> class Line:
    ...     def __init__(self, fig, axes, slope_max):
    ...         self.line, = axes[0].plot([0, 1], [0, 0])
    ...         axes[0].set_ylim(0, slope_max)
    ...         self.artists = [self.line]
    ...     def update(self, a):
    ...         self.line.set_ydata([0, a])
    ...         return {"y": np.array([0, a])}
    >>> ex = Explorable(Line, [Slider("a", (1, 2, 3))], title="直线", alt="斜率 {a}", data={"slope_max": 3})
    >>> ex.grid()
    [{'a': 1}, {'a': 2}, {'a': 3}]
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
    _built: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self):
        _check_view(self.view, self.sliders)
        try:
            self.alt.format(**self.start)
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(f"alt 模板 {self.alt!r} 用了滑块里没有的占位符或格式有误（{exc!r}）："
                             f"只能用 {{{'}、{'.join(s.name for s in self.sliders)}}} 这些名字。") from None

    @property
    def start(self) -> dict[str, Any]:
        """打开图时各滑块的取值。"""
        return {s.name: s.start for s in self.sliders}

    def _build(self) -> dict:
        """第一次用到时建图：构造 view，画到初始取值，排版一次，缓存不变的背景。"""
        if not self._built:
            fig, axes = new_figure(*self.size, ncols=self.ncols)
            view = self.view(fig, axes, **self.data)
            view.update(**self.start)
            fig.canvas.draw()  # 排版只算一次：之后拖动滑块只改数据，不再重新排版
            fig.set_layout_engine("none")
            artists = _blit_order(fig, tuple(getattr(view, "artists", ())))
            for artist in artists:
                artist.set_animated(True)  # 背景里不画它们
            fig.canvas.draw()
            background = fig.canvas.copy_from_bbox(fig.bbox) if artists else None
            self._built.update(fig=fig, view=view, artists=artists, background=background)
        return self._built

    @property
    def figure(self):
        """这张图的 matplotlib Figure（建一次，之后拖动只改数据）。"""
        return self._build()["fig"]

    @property
    def artists(self) -> tuple:
        """随滑块变化、拖动时要重画的图元；view 没给出时为空（每次整张重画）。"""
        return self._build()["artists"]

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

    def update(self, **params: Any) -> dict[str, np.ndarray]:
        """把图更新到给定参数（不重建图，也不画到画布上），返回画出的数组。

        Raises
        ------
        TypeError, ValueError
            滑块名不对、值不在网格里或超出连续滑块的范围、整数滑块收到非整数。
        """
        params = self.check_params(params)
        return self._build()["view"].update(**params)

    def render(self, **params: Any) -> dict[str, np.ndarray]:
        """更新到给定参数并画到画布上：有 ``artists`` 时只重画变化的图元，否则整张重画。"""
        params = self.check_params(params)
        built = self._build()
        drawn = built["view"].update(**params)
        if built["artists"]:
            fig = built["fig"]
            fig.canvas.restore_region(built["background"])
            for artist in built["artists"]:
                fig.draw_artist(artist)
        else:
            built["fig"].canvas.draw()
        return drawn

    def png(self, params: Mapping[str, Any], palette: bool = False) -> bytes:
        """更新到 ``params`` 并输出 PNG 字节。

        ``palette=False``：活滑块用，压缩得快；``palette=True``：静态网页的帧，压成 256 色调色板，
        体积约为普通 PNG 的 2/5，肉眼看不出差别。
        """
        self.render(**params)
        canvas = self._build()["fig"].canvas
        image = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba()).convert("RGB")
        if palette:
            image = image.quantize(colors=256)
        buf = io.BytesIO()
        image.save(buf, format="PNG", compress_level=6 if palette else 1, optimize=palette)
        return buf.getvalue()

    def grid(self) -> list[dict[str, Any]]:
        """静态网页上要预先画的所有参数组合（第一个滑块变化最慢）。"""
        names = [s.name for s in self.sliders]
        return [dict(zip(names, combo)) for combo in itertools.product(*(s.values for s in self.sliders))]

    def alt_text(self, **params: Any) -> str:
        """给定参数时这一帧的替代文字。"""
        return self.alt.format(**self.check_params(params))

    def describe(self) -> str:
        """一行文字说明：图名和每个滑块的网格。"""
        parts = [f"{s.shown} ∈ {{{', '.join(map(str, s.values))}}}" for s in self.sliders]
        return f"可交互图「{self.title}」：" + "；".join(parts)

    def static_html(self, all_frames: bool = True) -> str:
        """不需要内核和网络的 HTML（见 ``static.py``）；``all_frames=False`` 时只有初始那一帧的预览。"""
        from .static import render_html

        return render_html(self, all_frames=all_frames)

    def widget(self):
        """有内核时的活滑块（ipywidgets，见 ``live.py``）。"""
        from .live import live_widget

        return live_widget(self)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, Any]:
        from .static import wants_all_frames

        live = _has_kernel()
        bundle = {"text/plain": self.describe(), "text/html": self.static_html(all_frames=wants_all_frames(live))}
        if live:  # 有内核：再附上活滑块；JupyterLab 优先显示它，静态网页用 text/html
            bundle[WIDGET_MIME] = self.widget()._repr_mimebundle_()[WIDGET_MIME]
        return bundle


def _blit_order(fig, listed: tuple) -> tuple:
    """拖动时要重画的图元，按整张重画时的先后顺序排好。

    除了 view 列出的会变的图元，同一个子图里画在它们**上面**的不变图元（坐标轴边框、静态曲线、图例……）
    也要跟着重画：否则会变的图元会盖住它们，局部重画出的帧就和整张重画的不一样。
    matplotlib 在子图里按 zorder 从小到大画（zorder 相同时按加入的先后），这里用同样的规则。
    """
    if not listed:
        return ()
    chosen = {id(a) for a in listed}
    order = []
    for ax in fig.axes:
        children = [a for a in ax.get_children()  # 列出的图元一律算上（可能此刻隐藏、之后才显示）
                    if a is not ax.patch and (id(a) in chosen or (a.get_visible() and not _outside(a)))]
        children = sorted(children, key=lambda a: a.get_zorder())  # sorted 是稳定的：同 zorder 保持加入顺序
        first = next((i for i, a in enumerate(children) if id(a) in chosen), None)
        if first is not None:
            order += children[first:]
    inside = {id(a) for a in order}
    return (*order, *(a for a in listed if id(a) not in inside))  # 图级别的图元（总标题）画在最后


def _outside(artist) -> bool:
    """没有网格线的坐标轴 (Axis)：刻度和刻度标签都画在子图外面，会变的图元盖不到它，不必每次重画（重画刻度文字最费时）。"""
    return isinstance(artist, Axis) and not any(line.get_visible() for line in artist.get_gridlines())


def _has_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None
