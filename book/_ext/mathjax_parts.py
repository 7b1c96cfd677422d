"""MathJax 只装排公式要用的组件，不用 sphinx-mathjax-offline 默认的合订本 ``tex-chtml.js``。

合订本 1.16 MB，其中 0.43 MB 是右键菜单 (``ui/menu``)，菜单里全是英文，手机读者也用不着。改由同一目录里的
``startup.js``（MathJax 的加载器）按 ``loader.load`` 装 ``COMPONENTS``，合计约 0.76 MB：

- ``input/tex``：TeX 输入，带 ams、newcommand 等常用宏包；别的宏包（如 ``\\boldsymbol``）用到时从同一目录自动加载；
- ``output/chtml``：排成 HTML + CSS（字体也在同一目录）；
- ``a11y/assistive-mml``：每个公式旁边放一份隐藏的 MathML，读屏软件读得出公式。

sphinx-mathjax-offline 在它的 ``setup`` 里直接写死 ``mathjax_path``，``_config.yml`` 里的同名设置因此不起作用，
所以在 ``config-inited``（所有扩展装好之后、读文档之前的有文档事件）里改。Jupyter Book 生成的
``mathjax3_config``（``options.processHtmlClass`` 等）保留，只加上 ``loader``。构建结束时检查这些组件文件真的
随网站发布了：sphinx-mathjax-offline 换了目录结构时，建网站直接失败，而不是发布一个排不出公式的网站。

右键菜单组件原本还顺带做一件事：给每个公式加 ``tabindex="0"``。窄屏上放不下的独立公式可以横着滚动，只有能
用键盘聚焦，没有鼠标的读者才滚得动它（axe 规则 ``scrollable-region-focusable``）。``FOCUS_JS`` 在排版完成后给
每个独立公式补上 ``tabindex="0"``，和 Sphinx 自己的 MathJax 脚本一样，只加在有公式的页面上。
"""

from __future__ import annotations

from pathlib import Path

from sphinx.errors import ExtensionError

MATHJAX_PATH = "mathjax/startup.js"
COMPONENTS = ("input/tex", "output/chtml", "a11y/assistive-mml")
# 排版完成后（MathJax.startup.promise），独立公式都能用 Tab 聚焦。MathJax 的脚本是 defer 的，DOMContentLoaded
# 时它已经执行过，MathJax.startup 就在那里。
FOCUS_JS = ("document.addEventListener('DOMContentLoaded', function () {"
            " if (!(window.MathJax && MathJax.startup && MathJax.startup.promise)) { return; }"
            " MathJax.startup.promise.then(function () {"
            " document.querySelectorAll('mjx-container[display=\"true\"]:not([tabindex])')"
            ".forEach(function (m) { m.setAttribute('tabindex', '0'); }); }); });")


def choose_components(app, config) -> None:
    config.mathjax_path = MATHJAX_PATH
    settings = dict(config.mathjax3_config or {})
    settings["loader"] = {**settings.get("loader", {}), "load": list(COMPONENTS)}
    config.mathjax3_config = settings


def add_focus_script(app, pagename, templatename, context, doctree) -> None:
    if app.builder.format == "html" and app.env.get_domain("math").has_equations(pagename):
        app.builder.add_js_file("", body=FOCUS_JS)


def missing_components(outdir: Path) -> list[str]:
    """网站的 ``_static`` 里缺的 MathJax 文件（加载器和 ``COMPONENTS``）。"""
    static = outdir / "_static"
    wanted = [MATHJAX_PATH, *(f"mathjax/{part}.js" for part in COMPONENTS)]
    return [name for name in wanted if not (static / name).is_file()]


def check_published(app, exception) -> None:
    if exception is None and app.builder.format == "html":
        missing = missing_components(Path(app.outdir))
        if missing:
            raise ExtensionError(f"MathJax 的这些文件没有随网站发布：{missing}（应由 sphinx-mathjax-offline 复制到 "
                                 "_static/mathjax；它的目录结构变了的话，改 book/_ext/mathjax_parts.py 的 COMPONENTS）")


def setup(app):
    app.connect("config-inited", choose_components)
    app.connect("html-page-context", add_focus_script)
    # sphinx-mathjax-offline 在 build-finished（默认优先级 500）才复制 MathJax：排在它之后检查
    app.connect("build-finished", check_published, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
