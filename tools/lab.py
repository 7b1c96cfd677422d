"""JupyterLab 浏览器测试的工具：在 127.0.0.1 上启动一个用完即扔的 JupyterLab，用系统里的 Chromium 打开
notebook、Run All，然后收集读者会看到的一切（活滑块的图、拖动后的新图、控件报错、控制台报错、没渲染的
MyST、弹窗），写成一份 ``LabReport``。断言在 ``tests/site/test_jupyterlab.py`` 里。

JupyterLab 的启动选项和 ``python dev.py lab`` 相同（``tools.env.LAB_OPTIONS``：项目自己的设置默认值、仓库根目录），
另加几项只属于测试的：随机端口、不要 token、一次性的配置/运行时/用户设置/工作区目录，以及关掉自动保存
（Run All 改了 notebook 的输出，测试不能把它们写回仓库），检查点 (.ipynb_checkpoints) 也放进一次性目录；
还让页面露出 ``window.jupyterapp``（``expose_app_in_browser``），好在一页里打开几章、切换标签。
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from tools.env import LAB_OPTIONS, ROOT
from tools.site import block_outside

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# 只属于测试的用户设置（写进一次性的用户设置目录）：不自动保存，免得把 Run All 的输出写回仓库。
TEST_USER_SETTINGS = {"@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False}}

# 控制台报错的白名单：每一条都要说明为什么它不是读者能看到的问题。
CONSOLE_ALLOWED: tuple[str, ...] = (
    # jupyterlab-myst 2.6：Run All 走到一个 Markdown 单元格时，它先把 Markdown 渲染好，再去内核里算行内表达式
    # ({eval})；这时若内核还没接上，就抛出这一句（本书没有行内表达式，Markdown 已经渲染完，测试另查没有原样
    # 显示的 MyST 写法）。它会让那一次 Run All 停下：测试在点 Run All 之前等内核接上（``_wait_connected``），
    # 停下了也会补点（``_stalled``）；读者那边，内核接上之前点 Run All 同样会停，再点一次即可。
    "Session has no kernel.",
)

# jupyter_server 2.x 的一处竞争：新内核先登记进内核表，等它启动完才写上 last_activity；这中间（CI 里约一两秒）
# 有标签页来问内核列表（GET /api/kernels，JupyterLab 每隔几秒问一次），服务器读 last_activity 出错，回 500，
# 浏览器控制台记一句 "Failed to load resource: … 500"。JupyterLab 下一次再问就好了，读者什么也看不到。测试记下
# 每一个这样的回应（``known_server_races``），控制台里同样多条 500 的提示才不算报错：别的 500 照样算。
SERVER_RACE_CONSOLE = "Failed to load resource: the server responded with a status of 500"


def _server_race(response) -> bool:
    """是不是上面那处竞争的回应：GET 内核列表或某个内核的信息，回 500。"""
    path = response.url.split("?")[0]
    return response.status == 500 and response.request.method == "GET" and "/api/kernels" in path and "/channels" not in path


# 读者不该看到的 MyST 原始写法（渲染后的 Markdown 文字里）
RAW_MYST = (":::{", "{term}", "```{", "{doc}", "{dropdown}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_until_up(proc: subprocess.Popen, base: str, tmp: Path) -> bool:
    """等 JupyterLab 应答（最多 120 秒）：应答了返回 True；进程先退出了返回 False；超时报错。"""
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(f"{base}/api/status", timeout=2).close()
            return True
        except OSError:
            if proc.poll() is not None:
                return False
            if time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("JupyterLab 没能启动：\n" + (tmp / "jupyterlab.log").read_text()[-3000:]) from None
            time.sleep(0.3)


@contextlib.contextmanager
def jupyterlab(tmp: Path):
    """启动 JupyterLab（一次性的目录都在 ``tmp`` 下），产出网址前缀；结束时关掉服务器和它的内核。"""
    dirs = {name: tmp / name for name in ("config", "runtime", "data", "user-settings", "workspaces", "checkpoints")}
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    for rel, value in TEST_USER_SETTINGS.items():
        path = dirs["user-settings"] / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value), encoding="utf-8")
    cmd = [sys.executable, "-m", "jupyterlab", *LAB_OPTIONS, "--no-browser", "--ip=127.0.0.1",
           "--ServerApp.token=", "--ServerApp.password=", "--ServerApp.port_retries=0",
           f"--LabApp.user_settings_dir={dirs['user-settings']}", f"--LabApp.workspaces_dir={dirs['workspaces']}",
           f"--FileCheckpoints.checkpoint_dir={dirs['checkpoints']}",  # 检查点也不落在仓库里
           "--LabApp.expose_app_in_browser=True"]  # window.jupyterapp：在同一页里再打开一个 notebook、切换标签
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # CI 以 root 运行
        cmd.append("--allow-root")
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(dirs["config"]), "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
           "JUPYTER_DATA_DIR": str(dirs["data"]), "JUPYTER_PLATFORM_DIRS": "1"}
    # 先找一个空端口再交给 JupyterLab：这中间别的进程（另一个测试进程里浏览器的连接）可能正好占了它，
    # JupyterLab 就报 “port … is not available” 退出。那就换一个端口再启动，最多三次。
    for attempt in range(3):
        port = _free_port()
        log = open(tmp / "jupyterlab.log", "w", encoding="utf-8")
        proc = subprocess.Popen([*cmd, f"--port={port}"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        if _wait_until_up(proc, base, tmp):
            break
        log.close()
        if attempt == 2 or "is not available" not in (tmp / "jupyterlab.log").read_text():
            raise RuntimeError("JupyterLab 没能启动：\n" + (tmp / "jupyterlab.log").read_text()[-3000:])
    try:
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def warm_stored_runs() -> None:
    """先把各章要用的训练结果算好存下（``runs.CHAPTER_RUNS``，存在硬盘缓存里；已经有了就只是读一遍）。

    JupyterLab 里十一个内核同时跑，只有两个核心；要是第 9 章的小 GPT 这时才在其中一个内核里训练，它要和另外
    十个内核抢 CPU，一次运行里十分钟也没训完。读者第一次打开第 9 章时训练的也是这同一份结果（代码路径一样）。"""
    from transformer_lab.lessons import runs

    runs.compute_all()


def expected_explorables(path: Path) -> list[int]:
    """notebook 里的可交互图，每张有几个滑块：存档里每张图留着一张静态预览（``tlx-preview``），
    预览下面那句说明列出了滑块的名字（“可以拖动滑块（名字；名字）”）。"""
    nb = nbformat.read(path, as_version=4)
    previews = [out["data"]["text/html"] for cell in nb.cells for out in cell.get("outputs", [])
                if 'class="tlx-preview"' in out.get("data", {}).get("text/html", "")]
    return [len(re.search(r"可以拖动滑块（(.*)）。</p>", html_).group(1).split("；")) for html_ in previews]


@dataclass
class SliderMove:
    """拖动一个滑块：第几张图、第几个滑块、按了哪个键、图有没有换、换图用了多久（秒）。"""

    figure: int
    slider: int
    key: str
    changed: bool
    seconds: float


@dataclass
class LabPage:
    """一个标签页里记下的、不属于哪一个 notebook 的东西：控制台报错、外部请求、服务器那处竞争的回应。
    同一页里的几个 notebook 共用一份。"""

    console: list[str] = field(default_factory=list)
    known_server_races: list[str] = field(default_factory=list)  # 见 SERVER_RACE_CONSOLE
    external: list[str] = field(default_factory=list)

    def console_errors(self) -> list[str]:
        """控制台报错，去掉白名单里的，再去掉和 ``known_server_races`` 一样多条的 500 提示。"""
        errors = [m for m in self.console if not any(allowed in m for allowed in CONSOLE_ALLOWED)]
        for _ in self.known_server_races:
            race = next((m for m in errors if m.startswith(SERVER_RACE_CONSOLE)), None)
            if race is not None:
                errors.remove(race)
        return errors


@dataclass
class LabReport:
    """一个 notebook 在 JupyterLab 里 Run All 之后，读者看到的东西。"""

    name: str
    expected: list[int] = field(default_factory=list)  # 每张可交互图的滑块个数（来自存档里的预览）
    page: LabPage = field(default_factory=LabPage)  # 它所在的标签页（和同一页里的别的 notebook 共用）
    run_seconds: float = 0.0
    cells: int = 0  # 代码单元格个数
    cells_run: int = 0  # 其中有执行编号的（Run All 之后应该等于 cells）
    live_images: int = 0
    image_names: list[str] = field(default_factory=list)
    first_image_seconds: float = 0.0
    moves: list[SliderMove] = field(default_factory=list)
    widget_errors: int = 0
    stderr_outputs: list[str] = field(default_factory=list)
    error_outputs: list[str] = field(default_factory=list)
    raw_myst: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    menu: str = ""
    folded_dropdowns: int = 0
    dropdown_opens: bool = False


@dataclass
class Opened:
    """标签页 ``page`` 里打开着的一个 notebook：``root`` 是它那一块（NotebookPanel）的 CSS 选择器。"""

    page: object
    root: str
    panel_id: str

    def locator(self, selector: str):
        return self.page.locator(f"{self.root} {selector}")

    def activate(self) -> None:
        """切到这个 notebook 的标签（同一页里别的 notebook 藏起来），菜单命令和按键都落到它上面。"""
        self.page.evaluate(_ACTIVATE_JS, self.panel_id)


# 页面里收集状态的脚本（都只读 DOM）。``root`` 是一个 notebook 那一块的选择器；弹窗、菜单属于整页。
# _STATE_JS 一次读完同一页里几个 notebook（``roots``）的状态：等待时每一轮每页只往返一次。
_STATE_JS = """roots => roots.map(root => {
  const nb = document.querySelector(root);
  const status = nb.querySelector('.jp-Notebook-ExecutionIndicator');
  const prompts = [...nb.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(p => p.textContent.trim());
  // 折起来的代码单元格（metadata.jupyter.source_hidden，第 8 章的“深入一点”）只剩一个占位条，DOM 里看不到它的执行编号：
  // 编号从 notebook 的模型里读（window.jupyterapp），读不到时退回 DOM。
  const app = window.jupyterapp;
  const panel = app ? [...app.shell.widgets('main')].find(w => w.node === nb) : null;
  const model = panel && panel.content && panel.content.model;
  const counts = [];
  if (model) for (let i = 0; i < model.cells.length; i++) {
    const cell = model.cells.get(i);
    if (cell.type === 'code') counts.push(cell.executionCount);
  }
  return {
    status: status ? status.getAttribute('data-status') : null,
    cells: model ? counts.length : prompts.length,
    numbered: model ? counts.filter(n => typeof n === 'number' && n > 0).length
                    : prompts.filter(p => /^\\[\\d+\\]/.test(p)).length,
    queued: prompts.filter(p => p.startsWith('[*]')).length,
    errors: nb.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"]').length,
    dialogs: [...document.querySelectorAll('.jp-Dialog')].map(e => e.textContent.trim().slice(0, 300)),
  };
})"""
_OUTPUTS_JS = """root => {
  const nb = document.querySelector(root);
  const text = sel => [...nb.querySelectorAll(sel)].map(e => e.textContent.trim().slice(0, 300));
  return {
    stderr: text('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'),
    errors: text('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"]'),
    widgetErrors: nb.querySelectorAll('.jupyter-widgets-error-widget').length,
    markdown: [...nb.querySelectorAll('.jp-MarkdownCell .jp-MarkdownOutput, .jp-MarkdownCell .myst')]
                .map(e => e.textContent),
    dialogs: [...document.querySelectorAll('.jp-Dialog, .Toastify__toast, .jp-toast')].map(e => e.textContent.trim()),
    menu: [...document.querySelectorAll('.lm-MenuBar-itemLabel')].map(e => e.textContent).join(' '),
    dropdowns: [...nb.querySelectorAll('.jp-MarkdownCell details')].map(d => d.open),
  };
}"""
# 找到打开 ``path`` 的那一块，给它的节点记上名字（之后的选择器靠它），返回它的 id；还没打开时返回 null。
# window.jupyterapp 要有 --LabApp.expose_app_in_browser（只在测试里开）。
_MARK_PANEL_JS = """([path, name]) => {
  const app = window.jupyterapp;
  if (!app) return null;
  for (const w of app.shell.widgets('main')) {
    if (w.context && w.context.path === path) { w.node.dataset.tlNotebook = name; return w.id; }
  }
  return null;
}"""
_ACTIVATE_JS = "id => { window.jupyterapp.shell.activateById(id); }"


def open_page(context, base: str) -> tuple[object, LabPage]:
    """新标签页：记下控制台报错、服务器那处竞争的回应，拦下外部请求。"""
    page, log = context.new_page(), LabPage()
    page.on("console", lambda m: log.console.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: log.console.append(f"pageerror: {e} {e.stack or ''}"[:600]))
    page.on("response", lambda r: log.known_server_races.append(r.url) if _server_race(r) else None)
    block_outside(page, base, log.external)
    return page, log


def open_notebook(page, base: str, path: Path, workspace: str = "tests", run_all: bool = True) -> tuple[Opened, float]:
    """在标签页 ``page`` 里打开 notebook，等内核就绪，点 Run All（``run_all=False`` 时不点：测试自己挑单元格运行）。
    页面还是空的就先载入 JupyterLab（工作区 ``workspace``），已经载入了就像读者在文件浏览器里双击那样再打开一个
    （docmanager:open）：一页里开几个 notebook 只启动一次 JupyterLab 的前端。

    返回 ``(Opened, 点击的时刻)``（``time.monotonic()``）。"""
    rel = path.relative_to(ROOT).as_posix()
    if page.url.startswith(base):
        page.evaluate("p => { window.jupyterapp.commands.execute('docmanager:open', {path: p}); }", rel)
    else:
        page.goto(f"{base}/lab/workspaces/{workspace}/tree/{rel}")
    panel_id = page.wait_for_function(_MARK_PANEL_JS, arg=[rel, path.stem], timeout=120_000).json_value()
    view = Opened(page, f'[data-tl-notebook="{path.stem}"]', panel_id)
    page.wait_for_selector(f"{view.root} .jp-Cell", timeout=120_000)
    page.wait_for_function("root => { const s = document.querySelector(root + ' .jp-Notebook-ExecutionIndicator');"
                           " return s && s.getAttribute('data-status') === 'idle'; }", arg=view.root, timeout=120_000)
    _wait_connected(page, base, path.stem)
    clicked = time.monotonic()
    view.activate()
    if run_all:
        _run_all(page)
    return view, clicked


def _wait_connected(page, base: str, name: str, timeout_s: float = 120) -> None:
    """等到服务器看见这个 notebook 的内核已经空闲、而且页面连上了它（``connections`` ≥ 1）。页面上的指示灯
    先亮成 idle、内核却还没接上时点 Run All，jupyterlab-myst 在第一个 Markdown 单元格处抛出
    "Session has no kernel."，Run All 就停在那里（一次运行里第 1 章只跑了第一个单元格）。

    等待用 ``page.wait_for_timeout`` 而不是 ``time.sleep``：Playwright 的同步接口只在我们调用它时才处理事件和
    回调（记下外部请求、控制台消息）——睡着时它们都挂着。"""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        kernel = kernels(base).get(name)
        if kernel and kernel["execution_state"] == "idle" and kernel.get("connections", 0) >= 1:
            return
        page.wait_for_timeout(200)
    raise AssertionError(f"{name}：{timeout_s:.0f} 秒内内核没有就绪（服务器上的内核：{kernels(base).get(name)}）")


def _run_all(page) -> None:
    """菜单 运行 → 运行所有单元格（按命令名找菜单项，不依赖界面语言）。"""
    for item in page.locator(".lm-MenuBar-item").all():
        item.click()
        entry = page.locator("li.lm-Menu-item[data-command='runmenu:run-all']")
        if entry.count():
            entry.first.click()
            return
        page.keyboard.press("Escape")
    raise AssertionError("菜单里找不到“运行所有单元格”(runmenu:run-all)")


def kernels(base: str) -> dict[str, dict]:
    """服务器那一侧每个 notebook 的内核：{notebook 名: /api/sessions 里的 kernel（execution_state、connections……）}。

    页面上的执行指示灯 (``.jp-Notebook-ExecutionIndicator``) 不可靠：打开时内核还没接上它就亮 idle；机器很忙时
    它偶尔停在 busy 不再更新（一次 CI 里，第 1 章的 29 个单元格都跑完了，指示灯却 600 秒没变回 idle）。
    服务器记下的内核状态才是准的。"""
    with urllib.request.urlopen(f"{base}/api/sessions", timeout=10) as response:
        sessions = json.load(response)
    return {Path(s["path"]).stem: s["kernel"] for s in sessions if s.get("kernel")}


def _idle(state: dict) -> bool:
    """页面上的指示灯或服务器，任一个说内核空闲。"""
    return state["status"] == "idle" or state.get("kernel") == "idle"


def _stalled(state: dict) -> bool:
    """Run All 没接上或半路停了、又看不出原因：内核空闲、没有排队的单元格、没有报错和对话框，却还有单元格没有
    执行编号（打开 notebook 时提示符都是空的 ``[ ]``，存档里的编号不显示）。这样的状态持续一阵就再点一次 Run All。"""
    return (_idle(state) and state["cells"] > 0 and not state["queued"] and not state["errors"] and not state["dialogs"]
            and state["numbered"] < state["cells"])


def _finished(state: dict) -> bool:
    """跑完了：内核空闲（页面上的指示灯或服务器，任一个说空闲）、没有排队的单元格 ([*])，而且要么每个代码单元格
    都有执行编号，要么停下来的原因看得见（报错输出让 Run All 停在那里，或者弹出了对话框）——这两种情况由测试
    带着原因判为失败，而不是干等到超时。"""
    return (_idle(state) and state["cells"] > 0 and not state["queued"]
            and (state["numbered"] == state["cells"] or state["errors"] > 0 or bool(state["dialogs"])))


def wait_all_done(views: dict[str, Opened], started: dict, base: str, timeout_s: float = 600,
                  stall_s: float = 60, retries: int = 2, poll_s: float = 0.5) -> dict[str, float]:
    """每隔 ``poll_s`` 秒查看每个 notebook，直到它们都跑完（见 ``_finished``）；返回各自用了几秒（从点下 Run All
    算起，精确到 ``poll_s``）。

    Run All 偶尔没接上或半路停下（见 ``_stalled``）：这样的状态 ``stall_s`` 秒没有变化，就再点一次 Run All，
    最多补点 ``retries`` 次（从头重跑不改变结果：每章的随机数都由固定的种子给出）。超时的报错写明每个没跑完的
    notebook 停在哪里。"""
    done: dict[str, float] = {}
    clicks = dict.fromkeys(views, 0)
    last_change, seen = dict(started), {}
    deadline = time.monotonic() + timeout_s
    while len(done) < len(views):
        states = {}
        states_now = {name: kernel["execution_state"] for name, kernel in kernels(base).items()}
        waiting = [name for name in views if name not in done]
        on_page: dict[object, list[str]] = {}
        for name in waiting:
            on_page.setdefault(views[name].page, []).append(name)
        for page, names in on_page.items():
            for name, state in zip(names, page.evaluate(_STATE_JS, [views[n].root for n in names])):
                states[name] = {**state, "kernel": states_now.get(name)}
        for name in waiting:
            view, state = views[name], states[name]
            progress = (state["numbered"], state["queued"], state["kernel"], state["status"])
            if seen.get(name) != progress:
                seen[name], last_change[name] = progress, time.monotonic()
            if _finished(state):
                done[name] = time.monotonic() - started[name]
            elif _stalled(state) and clicks[name] < retries and time.monotonic() - last_change[name] > stall_s:
                clicks[name] += 1
                last_change[name] = time.monotonic()
                view.page.bring_to_front()
                view.activate()
                _run_all(view.page)
        if time.monotonic() > deadline:
            raise AssertionError(f"这些 notebook 在 {timeout_s:.0f} 秒内没跑完（页面状态；补点过 Run All 的次数 "
                                 f"{ {n: c for n, c in clicks.items() if c} }）：{states}")
        next(iter(views.values())).page.wait_for_timeout(poll_s * 1000)  # 等的同时让 Playwright 处理各页的事件回调
    return done


# 图片此刻的 (src, 像素摘要)。像素摘要：把 <img> 画到画布上，对像素做 FNV-1a 哈希。只比 src 不够——换一帧时 src
# 总会变成新的 blob，哪怕像素一模一样（滑块没起作用）。同一个 src 的摘要只算一次（记在 img 元素上）：等新帧时
# 每 20 ms 看一眼，大多时候 src 没变，不必每次都把一两百万个像素重新哈希一遍。
_FRAME_JS = """img => {
  if (!img.complete || !img.naturalWidth) return [img.src || "", ""];
  if (img._tlDigest && img._tlDigest[0] === img.src) return img._tlDigest;
  const c = document.createElement("canvas");
  c.width = img.naturalWidth; c.height = img.naturalHeight;
  const ctx = c.getContext("2d");
  ctx.drawImage(img, 0, 0);
  const data = ctx.getImageData(0, 0, c.width, c.height).data;
  let h = 2166136261;
  for (let i = 0; i < data.length; i++) { h ^= data[i]; h = Math.imul(h, 16777619); }
  img._tlDigest = [img.src, `${c.width}x${c.height}:${h >>> 0}`];
  return img._tlDigest;
}"""
# 等到图片换成像素不同的一帧（在页面里轮询，不经过 Python）：src 变了、像素却没变的那一帧不算数，接着等。
_NEW_FRAME_JS = f"""([img, old]) => {{
  const [src, digest] = ({_FRAME_JS})(img);
  return src !== "" && src !== old[0] && digest !== "" && digest !== old[1];
}}"""


def _wait_new_frame(page, img, old: list[str], start: float, timeout_s: float = 40) -> tuple[bool, float]:
    """等图片 ``img``（ElementHandle）换成像素不同的一帧：返回（换了没有，从 ``start`` 算起的用时）。超时算没变。

    src 变了、像素却没变的那一帧不算数，接着等：滑块一次按键，前端有时先后发出两次取值，先到的那次可能还是
    原来的画面（一次 CI 里第 1 章的第二个滑块就这样被误判成“拖了不变”）。真的不变的滑块照样会等到超时、判为失败。
    上限放得宽（40 秒）：CI 里十几个内核和别的测试抢两个核时，第 10 章的大图偶尔要十几秒才换帧；
    这里只判断“换没换”，换帧有多快由 benchmarks/jupyterlab_timing.py 量。

    轮询在页面里做（``wait_for_function``，每 20 ms 一次）：每看一眼都从 Python 发一次选择器查询的话，
    Playwright 要在十章、十几万个节点里把整条选择器重新解析一遍——这个测试的浏览器时间里，一半花在这上面。"""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout  # 只在真开浏览器时导入（收集测试时不必）

    remaining_ms = max(1.0, (timeout_s - (time.monotonic() - start)) * 1000)
    try:
        page.wait_for_function(_NEW_FRAME_JS, arg=[img, old], polling=20, timeout=remaining_ms)
    except PlaywrightTimeout:
        return False, timeout_s
    return True, time.monotonic() - start


def _press(page, handle, key: str, tries: int = 2) -> None:
    """聚焦滑块手柄（ElementHandle）、按 ``key``。手柄的 ``aria-valuenow`` 2 秒内没变（按键没落到手柄上，例如焦点被
    别的输出抢走），就再聚焦、再按一次，最多 ``tries`` 次。滑块值变了、图却没变，才是 ``move_sliders`` 要抓的问题。"""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    before = handle.get_attribute("aria-valuenow")
    for _ in range(tries):
        handle.focus()
        page.keyboard.press(key)
        try:
            page.wait_for_function("([h, v]) => h.getAttribute('aria-valuenow') !== v", arg=[handle, before],
                                   polling=50, timeout=2000)
            return
        except PlaywrightTimeout:
            continue


def move_sliders(view: Opened, report: LabReport, timeout_s: float = 40) -> None:
    """每张活图的每个滑块：聚焦滑块的手柄，按 End（已经在最右就按 Home），看图的像素有没有变（最多等 ``timeout_s`` 秒）。

    图、图片和手柄都只找一次（ElementHandle），之后直接拿着它们操作。"""
    if report.dialogs:
        return
    page = view.page
    widgets = view.locator(".jp-OutputArea-output .widget-vbox").filter(has=page.locator("img.widget-image"))
    for i, widget in enumerate(widgets.element_handles()):
        widget.scroll_into_view_if_needed()
        img = widget.query_selector("img.widget-image")
        for j, handle in enumerate(widget.query_selector_all(".noUi-handle")):
            old = img.evaluate(_FRAME_JS)
            at_end = handle.evaluate("h => h.getAttribute('aria-valuenow') === h.getAttribute('aria-valuemax')")
            key = "Home" if at_end else "End"
            start = time.monotonic()
            _press(page, handle, key)
            changed, seconds = _wait_new_frame(page, img, old, start, timeout_s)
            report.moves.append(SliderMove(i, j, key, changed, seconds))


# Run All 之后读一个 notebook 里的活图：每张显示出来没有（已载入、有像素）、叫什么（title 是读屏软件读的名字）。
_IMAGES_JS = """root => [...document.querySelectorAll(root + ' .jp-OutputArea-output img.widget-image')]
  .map(img => ({live: img.complete && img.naturalWidth > 0, name: img.title}))"""


def inspect(view: Opened, report: LabReport) -> None:
    """Run All 之后：活图、控件报错、stderr、没渲染的 MyST、弹窗、菜单语言、小测验折叠。"""
    page = view.page
    state = page.evaluate(_STATE_JS, [view.root])[0]
    report.cells, report.cells_run = state["cells"], state["numbered"]
    images = page.evaluate(_IMAGES_JS, view.root)
    report.live_images = sum(1 for image in images if image["live"])
    report.image_names = [image["name"] for image in images]
    state = page.evaluate(_OUTPUTS_JS, view.root)
    report.widget_errors = state["widgetErrors"]
    report.stderr_outputs, report.error_outputs = state["stderr"], state["errors"]
    report.raw_myst = sorted({m for text in state["markdown"] for m in RAW_MYST if m in text})
    report.dialogs, report.menu = state["dialogs"], state["menu"]
    report.folded_dropdowns = sum(1 for is_open in state["dropdowns"] if not is_open)
    if report.dialogs:  # 弹窗挡住了页面：不再点击（否则只会超时），让测试带着弹窗的文字失败
        return
    summary = page.query_selector(f"{view.root} .jp-MarkdownCell details > summary")
    if summary:  # 点开第一道题，答案要真的展开
        summary.scroll_into_view_if_needed()
        summary.click()
        report.dropdown_opens = summary.evaluate("s => s.parentElement.open")


def run_in_lab(context, base: str, groups: list[list[Path]],
               frame_timeout_s: dict[str, float] | None = None) -> dict[str, LabReport]:
    """在同一个 JupyterLab 里同时打开并运行这些 notebook（内核并行地跑），然后逐个检查、拖动滑块。

    ``groups`` 里每一组 notebook 开在同一个标签页里（像读者在一个 JupyterLab 窗口里开着好几章），一页只启动一次
    前端：一章一页时，十一页的前端各自启动、各自隔几秒问一次服务器，这个测试多花约 45 CPU 秒（350 → 305，
    2 核机器上单独量）。各组之间互不相干
    （反证 notebook 单独一页，它故意引出的控制台报错不会算到各章头上）。

    ``frame_timeout_s``：{notebook 名: 拖动滑块后最多等几秒换图}，没写的等 40 秒。反证 notebook 里那张图拖了本来就
    不会变，给它几秒就够了（活的滑块换图不到半秒），不必每次干等 40 秒。"""
    reports, views, clicked = {}, {}, {}
    for number, paths in enumerate(groups):
        page, log = open_page(context, base)
        for p in paths:
            reports[p.stem] = LabReport(p.stem, expected=expected_explorables(p), page=log)
            views[p.stem], clicked[p.stem] = open_notebook(page, base, p, workspace=f"tests-{number}")
    for name, seconds in wait_all_done(views, clicked, base).items():
        reports[name].run_seconds = seconds
    for name, view in views.items():
        view.page.bring_to_front()
        view.activate()
        inspect(view, reports[name])
        move_sliders(view, reports[name], (frame_timeout_s or {}).get(name, 40))
    return reports
