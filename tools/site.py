"""浏览器测试与基准脚本共用的小工具：构建网站（一次测试运行只建一次）、在本机端口上提供它、找到系统里的
Chromium、在网站自己的搜索页上搜索、收集页面上的界面文字。pytest fixture 在 tests/site/conftest.py。"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import quote

from transformer_lab._cache import exclusive

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
# 无头、无沙箱（CI 以 root 运行），关掉 Chromium 自己的后台联网（本机网络是封闭的），域名解析只认 127.0.0.1
# （页面路由还会再拦一次外部请求）；不冻结后台标签页（JupyterLab 测试同时开几个标签页，后台页里的点击、滚动
# 要等浏览器的绘制帧）。
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
                 "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
                 "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                 "--disable-backgrounding-occluded-windows"]
NO_CHROMIUM = ("没有找到 Chromium。安装：sudo apt-get install chromium fonts-noto-cjk，"
               "或设置环境变量 CHROMIUM_PATH 指向 Chromium/Chrome 可执行文件。")


def chromium_path() -> str | None:
    """系统里的 Chromium：优先环境变量 CHROMIUM_PATH，再找 PATH 上的 chromium / google-chrome。"""
    candidates = [os.environ.get("CHROMIUM_PATH"), shutil.which("chromium"), shutil.which("chromium-browser"),
                  shutil.which("google-chrome")]
    return next((c for c in candidates if c and Path(c).exists()), None)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # 不把每个请求打印出来
        pass


class _QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        """浏览器没读完就关掉连接（换页、测试拦下了请求）是常事，不打印整段 BrokenPipeError；别的错照常报。"""
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


@contextlib.contextmanager
def serve(directory: Path = HTML):
    """在 127.0.0.1 的随机端口上提供 ``directory``，产出网址前缀。"""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    srv = _QuietServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_port}"
    finally:
        srv.shutdown()


def pages(site: Path = HTML) -> list[Path]:
    """书里的正文页面（不含搜索页、索引页和 index.html 跳转页）。"""
    return sorted(p for p in site.rglob("*.html")
                  if not p.name.startswith(("search", "genindex", "index")) and "_static" not in p.parts)


def block_outside(page, base: str, blocked: list[str]) -> None:
    """记下一切不属于本站（``base``）的请求（进 ``blocked``）；它们到不了外面：浏览器启动时的
    ``--host-resolver-rules``（``CHROMIUM_ARGS``）让 127.0.0.1 以外的主机名一律解析失败，请求在浏览器里就失败了。

    只听请求事件，不用 ``page.route`` 拦截：Playwright 一开拦截就关掉浏览器的 HTTP 缓存，而且每个请求都要停下来
    等驱动放行——同一个标签页里连开十几页时，每页的样式表、脚本和 MathJax 都要重新下载、重新编译。"""
    own = (f"{base}/", "data:", "blob:")

    def seen(request):
        if not request.url.startswith(own) and request.url != base:
            blocked.append(request.url)

    page.on("request", seen)


def open_tab(browser, base: str, **options):
    """新的浏览器环境（``options`` 交给 ``browser.new_context``：视口、像素比、触屏……）里的一个标签页：一切非本站请求
    （浏览器拦下，见 ``block_outside``）记进 ``page.external``，控制台报错和页面异常记进 ``page.errors``；``page.base`` 是网站地址。
    用完 ``page.context.close()``。"""
    context = browser.new_context(**({"viewport": {"width": 1280, "height": 900}} | options))
    page = context.new_page()
    page.external, page.errors, page.base = [], [], base
    block_outside(page, base, page.external)
    page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    return page


# 从头到尾滚一遍页面：每次 400 px、停 30 ms，让播放器的 IntersectionObserver 看见每一张图。不要一次滚一屏：
# 那样每张图只在视野里停 30 ms，机器忙时观察者来不及报，它的下一帧就没预取（一次完整测试里这样漏过 3 帧）
def assert_clean(page) -> None:
    """``open_tab`` 开的标签页没有试图访问外部地址、控制台没有报错。"""
    assert not page.external, f"页面试图访问外部地址：{page.external}"
    assert not page.errors, f"浏览器控制台报错：{page.errors}"


def closed_clean(page) -> None:
    """``assert_clean`` 之后关掉这个标签页的浏览器环境。"""
    assert_clean(page)
    page.context.close()


SCROLL_JS = """async () => {
  for (let y = 0; y < document.body.scrollHeight; y += 400) {
    window.scrollTo(0, y); await new Promise(r => setTimeout(r, 30));
  }
}"""
# 等 MathJax 排完版：它的组件和字体在页面 load 之后才按需加载
TYPESET_JS = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
}"""


def weigh(page, url: str) -> tuple[list[tuple[str, bytes]], list[tuple[str, bytes]]]:
    """打开 ``url``，等 MathJax 排完版、网络静下来，记下到这时收到的每个回应 (网址, 内容)；再不碰滑块从头滚到尾、
    等网络静下来，再记一次。返回 (打开时, 滚完后)。手机上每章字节上限的测试 (test_phone.py) 和
    benchmarks/site_benchmarks.py 量的是同一件事，都用它。"""
    bodies: list[tuple[str, bytes]] = []
    page.on("response", lambda r: bodies.append((r.url, r.body())) if r.ok else None)
    page.goto(url, wait_until="networkidle")
    page.evaluate(TYPESET_JS)
    page.wait_for_load_state("networkidle")
    first = list(bodies)
    page.evaluate(SCROLL_JS)
    page.wait_for_load_state("networkidle")
    return first, list(bodies)


# ---------------------------------------------------------------- 图在屏幕上的字号（test_site.py 电脑、test_phone.py 手机）

PHONE, LAPTOP = {"width": 390, "height": 844}, {"width": 1280, "height": 900}
MIN_PX = {390: 11, 1280: 12}

# 每张图：正在显示的版式、最小的字在屏幕上有几个 CSS px；以及正文里不属于可交互图的 <img>
MEASURE_JS = """async () => {
  const out = [], stray = [];
  for (const root of document.querySelectorAll('.tlx')) {
    const img = root.querySelector('img');
    root.scrollIntoView();
    if (!img.complete) await new Promise(r => img.addEventListener('load', r, {once: true}));
    const data = JSON.parse(root.querySelector('script.tlx-data').textContent);
    const narrow = matchMedia(data.media).matches, layout = narrow ? 'narrow' : 'wide';
    const urls = data.urls ? data.urls[layout] : [];
    out.push({title: root.getAttribute('aria-label'), layout, natural: img.naturalWidth, shown: img.clientWidth,
              text_px: data.text_px[layout], css_px: data.text_px[layout] * img.clientWidth / img.naturalWidth,
              right_file: urls.some(u => img.currentSrc.endsWith(u.replace(/^(\\.\\.\\/)+/, '')))});
  }
  for (const img of document.querySelectorAll('main img, article img')) {
    if (!img.closest('.tlx')) stray.push(img.getAttribute('src'));
  }
  return {figures: out, stray};
}"""



def figure_problems(found: dict, width: int, where: str) -> list[str]:
    """``MEASURE_JS`` 量到的一页（``found``）在 ``width`` px 宽的屏幕上有什么问题：显示了另一种版式或别的文件、
    最小的字不到 ``MIN_PX``、正文里有不是可交互图的 <img>。每条是一句中文。"""
    problems, expected = [], "narrow" if width < 700 else "wide"
    for fig in found["figures"]:
        if fig["layout"] != expected or not fig["right_file"]:
            problems.append(f"{where}「{fig['title']}」显示的是 {fig['layout']}（应为 {expected}）")
        if fig["css_px"] < MIN_PX[width]:
            problems.append(f"{where}「{fig['title']}」：最小的字 {fig['css_px']:.1f} px，要 ≥ {MIN_PX[width]}"
                            f"（PNG 上 {fig['text_px']} px，图宽 {fig['natural']} px 显示成 {fig['shown']} px）")
    if found["stray"]:
        problems.append(f"{where}：正文里有不是可交互图（没有两种版式、量不出字号）的图片 {found['stray']}")
    return problems


def frame_names(site: Path = HTML) -> tuple[set[str], set[str]]:
    """网站上宽版、窄版两套帧的文件名。"""
    wide, narrow = set(), set()
    for path in pages(site):
        for blob in re.findall(r'<script type="application/json" class="tlx-data">(.*?)</script>',
                               path.read_text(encoding="utf-8"), re.S):
            data = json.loads(blob)
            wide |= {u.split("/")[-1] for u in data["urls"]["wide"]}
            narrow |= {u.split("/")[-1] for u in data["urls"]["narrow"]}
    return wide, narrow


# 浏览器里：等 MathJax 排完版，点开所有折叠块，数一数每个公式是否都变成了 mjx-container。
MATH_REPORT_JS = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
  const drops = [...document.querySelectorAll('details')];
  for (const d of drops) { d.open = true; }
  for (const b of document.querySelectorAll('.toggle-hidden, button.toggle-button')) { b.click && b.click(); }
  await new Promise(r => setTimeout(r, 300));
  const math = [...document.querySelectorAll('.math')];
  const bare = math.filter(m => !m.querySelector('mjx-container')).map(m => m.textContent.slice(0, 60));
  const inDrops = drops.map(d => d.querySelectorAll('.math').length);
  const renderedInDrops = drops.map(d => d.querySelectorAll('.math mjx-container').length);
  const visible = drops.map(d => [...d.querySelectorAll('mjx-container')]
      .filter(c => c.getBoundingClientRect().width > 0).length);
  return {math: math.length, bare, drops: drops.length, inDrops, renderedInDrops, visible};
}"""


# ---------------------------------------------------------------- 构建：一次测试运行只建一次

BUILD_STAMP = ROOT / "_build" / ".site-test-build.json"


# 仓库里建网站时不读的文件：只改了它们，建出来的还是同一个网站
NOT_BOOK_INPUTS = ("tests/", "benchmarks/", ".ci/", "README.md", ".gitignore", "conftest.py", "tools/site.py",
                   "tools/lab.py", "tools/refresh.py", "tools/pdf_checks.py")


def book_inputs(root: Path = ROOT) -> str | None:
    """建网站读到的一切的摘要（十六进制 sha256）：git 知道的每个文件（跟踪的和没被忽略的新文件，``NOT_BOOK_INPUTS``
    除外）的路径和内容，装好的每个 Python 包的版本，Python 的版本，这台机器有没有排 PDF 的 TeX。
    第 10 章的模型文件被 .gitignore 忽略，它们由 ``pretrained/registry.py`` 钉死的 sha256 决定（``dev.py`` 每次都核对），registry.py 在摘要里。
    没有 git（下载的压缩包）时返回 None。"""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                                capture_output=True, check=True).stdout.decode("utf-8")
    except (OSError, subprocess.CalledProcessError):
        return None
    from importlib import metadata

    h = hashlib.sha256()
    for rel in sorted(set(listed.split("\0")) - {""}):
        if rel.startswith(NOT_BOOK_INPUTS):
            continue
        path = root / rel
        content = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "（已删除）"
        h.update(f"{rel}\0{content}\n".encode())
    # 去重：仓库根目录在 sys.path 上时（python -m pytest -n 0），可编辑安装留下的 transformer_lab.egg-info 会让本包
    # 出现两次，xdist 的工作进程里却只有一次——同一份输入不能因为怎么启动 pytest 而算出两个摘要
    for dist in sorted({f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions()}):
        h.update(f"{dist}\n".encode())
    h.update(sys.version.encode())
    # 有没有 TeX 也是输入：有 TeX 时 dev.py book 先生成 PDF，网站里就多了它和两个下载链接（tools/pdf.py）
    from tools.pdf import missing_tools

    h.update(f"tex={not missing_tools()}\n".encode())
    return h.hexdigest()


def build_warnings(log: str) -> list[str]:
    """构建日志里 jupyter-book 自己的警告。只看它的那一段：dev.py 在它前面可能先装依赖，pip 的提示（比如本机
    pip 配置里不存在的额外索引）不是书的构建警告。"""
    start = log.rfind("jupyter_book.cli.main")
    return [line for line in (log[start:] if start >= 0 else log).splitlines() if "WARNING:" in line]


def _built_at() -> int | None:
    """``_build/html`` 最近一次建成的时刻：Sphinx 每次构建都重写 searchindex.js。"""
    try:
        return (HTML / "searchindex.js").stat().st_mtime_ns
    except OSError:
        return None


def reusable(record: dict, run: str, inputs: str | None, built_at: int | None) -> bool:
    """``_build/.site-test-build.json`` 里记下的那次构建（``record``）能不能给这一次测试运行（``run``）用：
    同一次运行里别的进程建的，能；上一次运行建的，要零警告地建成、建网站读到的一切（``inputs``）没变、
    ``_build/html`` 之后没被重建过（``built_at``）。"""
    if record.get("run") == run:
        return True
    return (inputs is not None and record.get("inputs") == inputs and record.get("returncode") == 0
            and not build_warnings(record.get("log", "")) and built_at is not None and record.get("built_at") == built_at)


def build_site() -> tuple[int, str]:
    """用 README 里的命令 (``python dev.py book``) 构建网站，返回 (退出码, 日志)。

    同一次 pytest 运行里（包括 xdist 的各个工作进程）只真正构建一次：第一个进程构建并把结果记进
    ``_build/.site-test-build.json``，其余进程等它建完后读这个记录。

    上一次测试建的网站，如果建的时候零警告、之后 ``_build/html`` 没有被别的构建改写、建网站读到的一切
    （``book_inputs``）也都没变，就直接拿来测：同样的输入建出同样的网站（执行 notebook、画帧都是确定的），
    只改了测试、基准脚本或 README 时不必再花几分钟重建。书里任何一个字、包里任何一行、任何一个依赖的版本变了，
    都会重建。"""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"pid-{os.getpid()}"
    with exclusive(ROOT / "_build" / ".site-test-build.lock"):  # 与包的硬盘缓存同一把锁
        inputs = book_inputs()
        if BUILD_STAMP.exists():
            record = json.loads(BUILD_STAMP.read_text(encoding="utf-8"))
            if reusable(record, run, inputs, _built_at()):
                BUILD_STAMP.write_text(json.dumps({**record, "run": run}, ensure_ascii=False), encoding="utf-8")
                return record["returncode"], record["log"]
        # stderr 并进 stdout，保持先后次序：pip 装依赖时的提示在 jupyter-book 的输出之前
        proc = subprocess.run([sys.executable, "dev.py", "book"], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        record = {"run": run, "returncode": proc.returncode, "log": proc.stdout, "inputs": inputs, "built_at": _built_at()}
        BUILD_STAMP.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
        return record["returncode"], record["log"]


# ---------------------------------------------------------------- 搜索

def search(page, query: str) -> list[str]:
    """在网站自己的搜索页上搜 ``query``，按显示顺序返回结果页面的文件名（不含目录和 .html），去掉重复。"""
    page.goto(f"{page.base}/search.html?q={quote(query)}")
    page.wait_for_function("() => (document.querySelector('#search-results p.search-summary') || {}).innerText")
    hrefs = page.locator("#search-results ul.search li a").evaluate_all("els => els.map(e => e.getAttribute('href'))")
    names = [Path(h.split("#")[0].split("?")[0]).stem for h in hrefs]
    return list(dict.fromkeys(names))


# 在已经打开的搜索页上直接调 Sphinx 的搜索：searchtools.js 的 _parseQuery（分词用本书的 zh_search.js）和
# _performSearch（打分用 search_scorer.js），搜索页显示结果时走的就是这两步，只是不再去取每条结果的摘要，
# 几十个查询共用一次页面加载。搜索页从数组末尾往前显示（_displayNextItem 每次 pop 一条），所以反过来就是显示顺序。
RANKED_JS = """q => {
  const [query, terms, excluded, highlighted, objects] = Search._parseQuery(q);
  return Search._performSearch(query, terms, excluded, highlighted, objects).reverse().map(r => r[0]);
}"""


def search_page(page) -> None:
    """打开搜索页，等索引载入：之后可以用 ``ranked`` 连续查询。"""
    page.goto(f"{page.base}/search.html")
    page.wait_for_function("() => typeof Search !== \"undefined\" && Search.hasIndex()")


def ranked(page, query: str) -> list[str]:
    """在 ``search_page`` 打开的页面上搜 ``query``：和 ``search`` 一样按显示顺序返回结果页面的文件名，去掉重复。"""
    return list(dict.fromkeys(Path(doc).name for doc in page.evaluate(RANKED_JS, query)))


# ---------------------------------------------------------------- 界面语言

# 拉丁字母词；带下划线的代码名字（next_token_probs）算一个词：主题界面的 "next" 不会因为书里有
# tl.next_token_probs 就被放过
LATIN_WORD = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z]{2,}(?:_[A-Za-z0-9]+)*")
KEY_NAMES = {"Ctrl", "pdf", "md", "ipynb"}  # 键盘上印的键名（搜索按钮旁的 Ctrl+K）和下载菜单里的文件格式 (.pdf .md)


def book_words() -> set[str]:
    """本书自己用到的拉丁字母词（区分大小写）：notebook 的文字和代码、book/ 下的 Markdown、书名，
    以及可交互图的文字（替代文字、滑块名称）所在的 transformer_lab/figures 和 widgets。
    页面上出现、却不在这里的英文词，只可能来自主题或扩展的界面。"""
    sources = [*(ROOT / "notebooks").glob("*.ipynb"), *(ROOT / "book").glob("*.md"),
               *(ROOT / "transformer_lab" / "figures").glob("*.py"), *(ROOT / "transformer_lab" / "widgets").glob("*.py")]
    config = (ROOT / "_config.yml").read_text(encoding="utf-8")
    words = set(KEY_NAMES) | set(LATIN_WORD.findall(re.search(r"^title:(.*)$", config, re.M).group(1)))
    for path in sources:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".ipynb":
            text = "\n".join("".join(cell["source"]) for cell in json.loads(text)["cells"])
        elif path.suffix == ".py":  # 只取字符串常量（图上的文字都在这里），不取函数名之类的代码
            text = "\n".join(node.value for node in ast.walk(ast.parse(text))
                             if isinstance(node, ast.Constant) and isinstance(node.value, str))
        words.update(LATIN_WORD.findall(text))
    return words


# 页面上所有读者能看到或读屏软件会读出的文字：文本节点和 title / aria-label / alt / placeholder 等属性，
# 每条是 [出处, 文字]。
# 不算脚本、样式、公式（MathJax 排版的符号）、代码单元格的输出（那是程序打印的内容，不是界面），
# 以及搜索结果里摘出来的正文片段（截断处可能把网址切成 “tps://…” 这样的半个词，它们是书的内容，不是界面）。
UI_TEXT_JS = """() => {
  const skip = "script, style, noscript, template, mjx-container, .math, .cell_output, .output, #search-results p.context";
  const out = [];
  const walker = document.createTreeWalker(document.documentElement, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.parentElement && !n.parentElement.closest(skip) && n.textContent.trim()) out.push(["文字", n.textContent.trim()]);
  }
  const attrs = ["title", "aria-label", "alt", "placeholder", "data-bs-title", "aria-description", "value"];
  for (const el of document.querySelectorAll("*")) {
    if (el.closest(skip)) continue;
    for (const a of attrs) {
      if (a === "value" && !(el.tagName === "INPUT" && ["button", "submit", "reset"].includes(el.type))) continue;
      const v = el.getAttribute(a);
      if (v && v.trim()) out.push([a, v.trim()]);
    }
  }
  return out;
}"""
