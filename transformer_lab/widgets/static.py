"""没有内核时的滑块：所有帧 + 原生 range 滑块 + 一小段换帧脚本（``player.js``），写成一段 HTML。

本模块是这种 HTML 格式唯一的主人：生成它（``render_html``）、在建网站时把帧搬成文件
（``externalize_frames``）、以及读回它（``read_player``，测试和基准脚本用）都在这里。

格式::

    <div class="tlx" id="tlx-…" role="group" aria-label="图名" data-frame="初始帧号">
      <a class="tlx-zoom" title="…">                （建网站时帧成了文件，才有 href：点图在新标签页里看大图）
        <picture><source media="窄屏" srcset="窄版初始帧"><img src="宽版初始帧" alt="…"></picture>
      </a>
      <div class="tlx-control"><label for="…">名字 = <output>值</output></label><input class="tlx-range" …></div> …
      <script type="application/json" class="tlx-data">{"sliders": …, "frames"|"urls": {"wide": …, "narrow": …},
                                                      "alts": …, "media": …, "text_px": {"wide": …, "narrow": …}}</script>
      <script>player.js</script>
    </div>

**两种版式**：每一帧画两次，宽版给电脑、窄版给手机（见 ``plot.figure.Layout``）。``<picture>`` 让浏览器按屏幕
宽度（``NARROW_MEDIA``）只下载其中一种；换帧脚本也只预取正在显示的那一种（先只取再拨一格能看到的几帧，读者碰了这张图才取其余的）。``text_px`` 是这种版式里最小的字
在 PNG 上有几个像素（网站测试拿它和图在屏幕上的实际宽度算出字在屏幕上多大）。画任何一帧时有字伸出了图外，
就报出图名和那段字（中文的 ``ValueError``），而不是悄悄截掉半个字。

帧的顺序与 ``Explorable.grid()`` 相同（第一个滑块变化最慢），帧数不超过 ``ex.max_frames``（默认
``explorable.FRAME_CAP``）。没有滑块的图（静态图）只有一帧，没有滑块控件。只有初始帧的预览（存进 notebook 的
那种）是 ``<div class="tlx-preview">``：一张宽版图和一句说明，没有滑块、没有脚本。

样式在 ``player.css``，写进各元素的 style 属性（原因见那个文件的开头）；换帧脚本在 ``player.js``。
页面之外读这种格式的代码（``benchmarks/site_benchmarks.py`` 在浏览器里取各帧的地址）用这里的
``FRAME_SOURCES_JS``，不要自己再写一遍。
"""

from __future__ import annotations

import base64
import collections
import functools
import hashlib
import html
import json
import math
import re
import unicodedata
from pathlib import Path
from types import MappingProxyType

import matplotlib
import PIL
from matplotlib import font_manager

from .. import _cache
from .. import _validation as check
from ..plot.figure import SCREEN_DPI

__all__ = ["FRAME_SOURCES_JS", "FRAME_PARTS", "frames_kind", "NARROW_MEDIA", "PLAYER_JS", "STYLES", "LAYOUTS",
           "frame_parts", "drawing_stack", "first_frame_b64", "render_html", "externalize_frames", "read_player"]

PLAYER_JS = Path(__file__).with_name("player.js").read_text(encoding="utf-8")

LAYOUTS = ("wide", "narrow")  # 每一帧画两种版式（plot.figure.WIDE / NARROW）
NARROW_MEDIA = "(max-width: 699.98px)"  # 这么窄的屏幕（手机、竖着的平板）用窄版；再宽就用宽版

# 在浏览器里读一个播放器（.tlx 元素）全部帧的图片地址，写成一个 JS 函数：建网站之前是 base64 帧 (frames)，
# 之后是 _static/tlx/ 下的文件 (urls)；``layout`` 不给时取这块屏幕正在显示的版式。基准脚本把它嵌进自己的页内脚本；
# 格式变了只改本模块和 player.js。
FRAME_SOURCES_JS = ("(root, layout) => { const data = JSON.parse(root.querySelector('script.tlx-data').textContent); "
                    "const name = layout || (matchMedia(data.media).matches ? 'narrow' : 'wide'); "
                    "return data.urls ? data.urls[name] : data.frames[name].map(f => 'data:image/png;base64,' + f); }")

_DATA_OPEN = '<script type="application/json" class="tlx-data">'
_DATA = re.compile(f"({re.escape(_DATA_OPEN)})(.*?)(</script>)", re.S)
# 一个播放器从开头到数据块：开头里有初始帧（<source srcset> 窄版、<img src> 宽版），数据块里有全部帧
_PLAYER = re.compile(f'(<div class="tlx"[^>]*>)(.*?)({re.escape(_DATA_OPEN)})(.*?)(</script>)', re.S)
_INLINE = re.compile(r'(srcset|src)="data:image/png;base64,[^"]+"')


def _parse_css(text: str) -> dict[str, str]:
    """``player.css`` → {选择器: style 属性的值}。只认 "选择器 { 声明; … }"（见那个文件的开头）。"""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    rules = {}
    for selector, body in re.findall(r"([^{}]+)\{([^{}]*)\}", text):
        declarations = (d.split(":", 1) for d in body.split(";") if d.strip())
        rules[" ".join(selector.split())] = ";".join(f"{k.strip()}:{v.strip()}" for k, v in declarations)
    return rules


STYLES = MappingProxyType(_parse_css(Path(__file__).with_name("player.css").read_text(encoding="utf-8")))  # 只读

# 元素 id（<label for> 要用）= 标题的哈希 + 这张图在本进程里第几次写成 HTML。只能这样数：同一张图在一页上
# 显示两次时，两段 HTML 的输入完全相同，id 却必须不同。按标题分开数，一张图的 id 就不随别的图画了几次而变。
_renders: collections.Counter[str] = collections.Counter()


def _element_id(title: str) -> str:
    digest = hashlib.sha1(title.encode()).hexdigest()[:8]
    _renders[digest] += 1
    return f"tlx-{digest}-{_renders[digest]}"


def _json_for_html(data: dict) -> str:
    """写进 <script> 的 JSON：转义 < > &，标签文字里即使有 "</script>" 或 "<!--" 也关不掉这段脚本。"""
    text = json.dumps(data, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _b64(png: bytes) -> str:
    return base64.b64encode(png).decode("ascii")


def render_html(ex, all_frames: bool = True) -> str:
    """把一张 Explorable 写成不需要内核和网络的 HTML（``ex`` 按鸭子类型使用，本模块不导入它的类）。

    ``all_frames=False`` 时只画初始那一帧的宽版，写成一张静态预览图加一句说明。

    Raises
    ------
    ValueError
        ``all_frames=True`` 而网格的帧数 ``ex.frame_count`` 超过 ``ex.max_frames``（一帧都不画就报错）；
        画某一帧时有字伸出了图外（报出图名、版式和那段字）。
    """
    start = ex.start
    if not all_frames:
        hint = (f'静态预览：运行这个单元格后可以拖动滑块（{html.escape("；".join(s.shown for s in ex.sliders))}）。'
                if ex.sliders else "")
        return (
            f'<div class="tlx-preview" role="figure" aria-label="{html.escape(ex.title)}">'
            f'<img src="data:image/png;base64,{first_frame_b64(ex)}" '
            f'alt="{html.escape(ex.alt_text(**start))}" {_display_size(ex, "wide")} style="{STYLES[".tlx-preview img"]}">'
            + (f'<p style="{STYLES[".tlx-preview p"]}">{hint}</p>' if hint else "") + "</div>"
        )
    _check_frame_count(ex)
    grid = ex.grid()
    frames, text_px = _all_frames(ex, grid)
    alts = [ex.alt_text(**p) for p in grid]
    idx = grid.index(start)
    uid = _element_id(ex.title)
    sliders = [{"label": s.shown, "values": [str(v) for v in s.values]} for s in ex.sliders]
    data = _json_for_html({"sliders": sliders, "frames": frames, "alts": alts, "media": NARROW_MEDIA,
                           "text_px": text_px})
    controls = "".join(_control(f"{uid}-{i}", s) for i, s in enumerate(ex.sliders))
    return (
        f'<div class="tlx" id="{uid}" role="group" aria-label="{html.escape(ex.title)}" data-frame="{idx}">'
        f'<a class="tlx-zoom" title="点一下，在新标签页里看大图" target="_blank" rel="noopener" '
        f'style="{STYLES[".tlx-zoom"]}">'
        f'<picture><source media="{NARROW_MEDIA}" srcset="data:image/png;base64,{frames["narrow"][idx]}" '
        f'{_display_size(ex, "narrow")}>'
        f'<img src="data:image/png;base64,{frames["wide"][idx]}" alt="{html.escape(alts[idx])}" '
        f'{_display_size(ex, "wide")} style="{STYLES[".tlx img"]}"></picture></a>{controls}'
        f"{_DATA_OPEN}{data}</script>"
        f"<script>{PLAYER_JS}</script></div>"
    )


def _draw_all_frames(ex, grid) -> tuple[dict[str, list[str]], dict[str, float]]:
    """两种版式的每一帧（base64 的 PNG）和每种版式最小的字在 PNG 上有几个像素。"""
    frames, text_px = {}, {}
    for layout in LAYOUTS:
        frames[layout], smallest = [], float("inf")
        for p in grid:
            png = ex.png(p, palette=True, layout=layout, dpi=ex.frame_dpi)
            smallest = min(smallest, _smallest_text(ex, layout, p))
            frames[layout].append(_b64(png))
        text_px[layout] = round(smallest * ex.frame_dpi / 72, 2)
    return frames, text_px


# 帧依赖包里的哪些部分（除了画它的那个模块本身）：图模块按分层规则能导入的各层（见 tests/test_layering.py
# 的 ALLOWED["figures"]，以及它们再往下导入的），和 data/。别章的图模块、测验、顶层的 explore.py 不在其中。
FRAME_PARTS = ("core", "lessons", "data", "plot", "widgets", "pretrained", "chapters.py", "_validation.py", "_cache.py")


def frame_parts(module: str) -> tuple[str, ...]:
    """画图模块 ``module``（如 ``transformer_lab.figures.ch05_multi_head``）的帧依赖的部分：``FRAME_PARTS``
    加上它自己的文件和所在包的 ``__init__.py``（不在本包里的模块只有 ``FRAME_PARTS``）。

    >>> frame_parts("transformer_lab.figures.ch05_multi_head")[-2:]
    ('figures/ch05_multi_head.py', 'figures/__init__.py')
    """
    package, *inner = module.split(".")
    own = []
    if package == "transformer_lab" and inner:
        own.append("/".join(inner) + ".py")
        if len(inner) > 1:
            own.append("/".join(inner[:-1]) + "/__init__.py")
    return tuple(dict.fromkeys([*FRAME_PARTS, *own]))


def frames_kind(module: str) -> str:
    """缓存里一个画图模块的帧的"种类"名（``_cache.entry_path`` 的 ``kind``），例如 ``frames_ch05_multi_head``。

    每个画图模块的帧有自己的代码版本（``frame_parts``），所以也要有自己的种类：``evict_old_versions`` 按种类只留
    最近的几个版本，十章共用一个种类时，写第 6 章的帧就会把第 5 章的删掉，缓存形同虚设。

    >>> frames_kind("transformer_lab.figures.ch05_multi_head"), frames_kind("helpers.tiny-view")
    ('frames_ch05_multi_head', 'frames_tiny_view')
    """
    return "frames_" + re.sub(r"[^0-9A-Za-z_]", "_", module.rsplit(".", 1)[-1])


def _frames_file(ex) -> tuple[Path, str, str] | None:
    """这张图全部帧在硬盘缓存里的文件（可能还不存在）、钥匙和代码版本（都写进文件的封条，``_cache.write_sealed``）；
    不缓存的图（``ex.cache_key()`` 为 None）或关掉了缓存时为 None。
    钥匙是 ``ex.cache_key()`` 加上包的代码版本和画图的那一套软件（``drawing_stack``）。"""
    key, folder = ex.cache_key(), _cache.cache_folder()
    if key is None or folder is None:
        return None
    version = _cache.code_version(*drawing_stack(), parts=frame_parts(ex.view.__module__))
    return _cache.entry_path(folder, frames_kind(ex.view.__module__), version, key, ".json"), key, version


def drawing_stack() -> tuple[str, ...]:
    """画帧的那一套软件，写进帧缓存的钥匙：matplotlib（排版、画图）、Pillow（把每一帧压成 256 色的 PNG，
    ``blit.encode_png``）和中文字体文件（每个字的形状）。哪一样升级了，画出的帧都可能不同，缓存里的旧帧就不能再用。

    字体按 matplotlib 真正用的那个文件（``font_manager.findfont``）的内容算摘要，不只看字体名：mplfonts 换了
    字体文件，或者系统里的字体顶替了它，钥匙都会变。每个文件在一个进程里只读一次（约 16 MB）。
    """
    name = matplotlib.rcParams["font.sans-serif"][0]
    path = font_manager.findfont(font_manager.FontProperties(family=name))
    return f"matplotlib {matplotlib.__version__}", f"Pillow {PIL.__version__}", f"font {name} {_file_digest(path)}"


@functools.cache
def _file_digest(path: str) -> str:
    """文件内容的 sha256（前 16 位）；同一个进程里每个文件只算一次。"""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()[:16]


def _valid_frames(saved: object, count: int) -> bool:
    """缓存里读出的 ``{"frames": …, "text_px": …}`` 形状对不对：每种版式正好 ``count`` 帧，每帧都是 PNG，
    每种版式的最小字号是有限的数。"""
    if not isinstance(saved, dict) or not isinstance(saved.get("frames"), dict) or not isinstance(saved.get("text_px"), dict):
        return False
    frames, text_px = saved["frames"], saved["text_px"]
    for layout in LAYOUTS:
        px = text_px.get(layout)
        if not (isinstance(frames.get(layout), list) and len(frames[layout]) == count
                and all(_cache.is_png_base64(f) for f in frames[layout])):
            return False
        if isinstance(px, bool) or not isinstance(px, (int, float)) or not math.isfinite(px):
            return False
    return True


def _read_frames(entry: tuple[Path, str, str], grid) -> tuple[dict[str, list[str]], dict[str, float]] | None:
    """缓存文件里的帧和字号；没有、封条对不上（别的钥匙、别的代码版本、截断、改了字节、旧格式）、帧数对不上网格、
    或有一帧不是 PNG 时为 None（调用者重画并覆盖）。"""
    path, key, version = entry
    payload = _cache.read_sealed(path, key, version)
    if payload is None:
        return None
    try:
        saved = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    if not _valid_frames(saved, len(grid)):
        return None
    _cache.touch(path)
    return ({layout: saved["frames"][layout] for layout in LAYOUTS},
            {layout: saved["text_px"][layout] for layout in LAYOUTS})


def _all_frames(ex, grid) -> tuple[dict[str, list[str]], dict[str, float]]:
    """``_draw_all_frames``，画过的从硬盘缓存里读（``_cache.py``）：建网站的内核和测试进程画的是同一批图，
    谁先画谁存，另一个直接读（同一个画图模块的帧有一把文件锁，同时到的进程排队，不会两个一起画）。"""
    entry = _frames_file(ex)
    if entry is None:
        return _draw_all_frames(ex, grid)
    path, key, version = entry
    kind = frames_kind(ex.view.__module__)
    # 一个模块的帧一次只让一个进程画：建网站的内核和测试进程常常同时要同一张图，后到的等着，然后直接读
    with _cache.exclusive(path.parent / f"{kind}.lock"):
        saved = _read_frames(entry, grid)
        if saved is not None:
            return saved
        frames, text_px = _draw_all_frames(ex, grid)
        try:
            text = json.dumps({"frames": frames, "text_px": text_px}).encode("utf-8")
            _cache.write_sealed(path, key, version, text)
            _cache.evict_old_versions(path.parent, kind, ".json")
            _cache.evict_old_versions(path.parent, "frames", ".json", keep=0)  # 各章共用一种的旧缓存文件（改名之前的）
        except OSError:
            pass
    return frames, text_px


def first_frame_b64(ex) -> str:
    """初始那一帧的宽版（``frame_dpi``、256 色的 PNG，base64 文字）：notebook 里的静态预览、没有滑块的图的 PNG。

    全部帧已经在硬盘缓存里（建过网站、跑过测试）时直接取出那一帧，不另外建图重画——一章的 notebook 里每张图
    都要这一帧，建图排版是画一帧里最费时的一步。缓存里的帧和当场画的逐字节相同（同一个 view、同样的局部重画，
    ``tests/widgets/test_static.py`` 检查）。缓存里没有时只画这一帧，不为它画全部帧；也不等别的进程的锁：
    缓存文件总是整个写好再改名的。"""
    grid = ex.grid()
    entry = _frames_file(ex)
    saved = None if entry is None else _read_frames(entry, grid)
    if saved is not None:
        return saved[0]["wide"][grid.index(ex.start)]
    return _b64(ex.png(ex.start, palette=True, layout="wide", dpi=ex.frame_dpi))


def _display_size(ex, layout: str) -> str:
    """图在网页上显示多大：1 英寸 = 100 CSS px（``SCREEN_DPI``，和 JupyterLab 里的活图一样），栏比它窄时再按比例缩小。
    PNG 按 ``frame_dpi`` 画得更细，所以显示尺寸要写明，不然浏览器按 PNG 的像素数显示、图就大了 1.5 倍。"""
    width, height = ex.figure_pixels(layout=layout, dpi=SCREEN_DPI)
    return f'width="{width}" height="{height}"'


def _smallest_text(ex, layout: str, params) -> float:
    """这一帧里最小的字号 (pt)；有字伸出了图外就报错（画出来的只会是半截字）。"""
    items = ex.texts(layout=layout, dpi=ex.frame_dpi)
    width, height = ex.figure_pixels(layout=layout, dpi=ex.frame_dpi)
    for item in items:
        if item.outside(width, height):
            where = "、".join(f"{k}={v}" for k, v in params.items()) or "（没有滑块）"
            raise ValueError(
                f"「{ex.title}」的{'窄版（手机）' if layout == 'narrow' else '宽版（电脑）'}里，文字「{item.text}」"
                f"伸出了图外（{where} 这一帧；图 {width}×{height} 像素，这段字占 x {item.box[0]:.0f}–{item.box[2]:.0f}、"
                f"y {item.box[1]:.0f}–{item.box[3]:.0f}）。请缩短这段字、换行，或在这种版式里给它留出地方。")
    return min((item.size_pt for item in items), default=float("inf"))


def _check_frame_count(ex) -> None:
    """一帧都还没画之前，先确认网格不超过这张图的帧数上限。"""
    if ex.frame_count > ex.max_frames:
        sizes = " × ".join(f"{s.name} 的 {len(s.values)} 个取值" for s in ex.sliders)
        raise ValueError(
            f"「{ex.title}」要预先画 {ex.frame_count} 帧（{sizes}），超过了上限 max_frames={ex.max_frames}："
            "静态网页的体积和建书时间随帧数增长。请减少滑块的取值；确有必要时在 Explorable(..., max_frames=...) 里写明。"
        )


def _width(text: str) -> int:
    """等宽字体里一段文字占几个 ch：汉字等全角字符占 2 个，其余占 1 个。"""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _control(sid: str, s) -> str:
    """一个原生 range 滑块和它的标签；滑块的值是网格里的下标。

    显示数值的 <output> 按最长的取值留足宽度：数值变长时，滑块不会往右挪（否则拖着拖着就脱手了）。
    """
    shown, value = html.escape(s.shown), html.escape(str(s.start))
    widest = max(_width(str(v)) for v in s.values)
    return (
        f'<div class="tlx-control" style="{STYLES[".tlx-control"]}">'
        f'<label for="{sid}" style="{STYLES[".tlx-control label"]}">{shown} = '
        f'<output for="{sid}" style="{STYLES[".tlx-control output"]};min-width:{widest}ch">{value}</output></label>'
        f'<input class="tlx-range" id="{sid}" type="range" min="0" max="{len(s.values) - 1}" step="1" '
        f'value="{s.values.index(s.start)}" style="{STYLES[".tlx-range"]}" aria-valuetext="{shown} = {value}"></div>'
    )


def read_player(page: str) -> list[dict]:
    """读出一段 HTML 里每个滑块播放器的数据（``sliders``、``frames`` 或 ``urls``、``alts``）。"""
    return [json.loads(m.group(2)) for m in _DATA.finditer(page)]


def _save(frame_b64: str, folder: Path) -> str:
    raw = base64.b64decode(frame_b64)
    name = hashlib.sha1(raw).hexdigest()[:16] + ".png"
    (folder / name).write_bytes(raw)
    return name


def externalize_frames(page: str, folder: Path, prefix: str) -> str:
    """把 HTML 里每个播放器的 base64 帧写成 ``folder`` 里的文件（文件名是内容哈希），换成 ``prefix + 文件名``。

    网页首次加载只下载每张图正在显示的那种版式的当前帧；图快进入视野时预取每个滑块左右一格的帧，读者碰了这张图
    才取其余的帧，近的先取（见 ``player.js``），
    而且省掉了 base64 多出的三分之一。帧成了文件，点图才能在新标签页里打开大图（``<a class="tlx-zoom" href>``）。
    对已经换过的页面再做一次，结果不变。``prefix`` 只许相对地址或 http(s)，写进属性时转义。

    Raises
    ------
    TypeError, ValueError
        ``prefix`` 不是字符串，或带有 http(s) 以外的协议（例如 ``javascript:``）。
    """
    prefix = check.safe_link(prefix, "prefix")

    def swap(m):
        data = json.loads(m.group(4))
        if "frames" not in data:  # 已经换成文件了（没加 --all 的第二次构建只重写改过的页，其余页会再经过这里）
            return m.group(0)
        data["urls"] = {name: [prefix + _save(f, folder) for f in frames] for name, frames in data.pop("frames").items()}
        idx = int(re.search(r'data-frame="(\d+)"', m.group(1)).group(1))
        first = {"srcset": data["urls"]["narrow"][idx], "src": data["urls"]["wide"][idx]}
        head = _INLINE.sub(lambda k: f'{k.group(1)}="{html.escape(first[k.group(1)], quote=True)}"', m.group(2))
        head = head.replace('<a class="tlx-zoom" ', f'<a class="tlx-zoom" href="{html.escape(first["src"], quote=True)}" ', 1)
        return m.group(1) + head + m.group(3) + _json_for_html(data) + m.group(5)

    return _PLAYER.sub(swap, page)
