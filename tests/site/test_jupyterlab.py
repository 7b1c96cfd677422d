"""JupyterLab 测试：读者在自己电脑上运行本书的地方。

启动一个用完即扔的 JupyterLab（和 ``python dev.py lab`` 同样的选项：中文界面、不弹新闻、仓库根目录），
用系统里的 Chromium 打开**每一章**，菜单 运行 → 运行所有单元格，然后像读者一样检查：

* 每张可交互图都显示成活的图片（不是 “Click to show javascript error”），图片有读屏软件能读出的名字；
* 每个滑块用键盘拖动（聚焦手柄，按 End / Home）之后，图的像素真的变了；
* 没有控件报错、没有 stderr 或报错输出、控制台没有报错（白名单见 ``tools.lab.CONSOLE_ALLOWED``，每条都写明原因）；
* 渲染出来的 Markdown 里没有 MyST 原始写法（``:::{``、``{term}``、```` ```{ ````）；小测验是折叠的，点开能展开；
* 没有弹窗、没有通知，菜单是中文；页面没有请求 127.0.0.1 以外的任何地址；仓库里的 notebook 没有被改写。

``test_the_checks_catch_a_broken_notebook`` 用 ``tests/fixtures/lab_broken.ipynb`` 证明这些检查会失败：
它换回有 tooltip 缺陷的原版 ``ipywidgets.Image``、放一张拖了也不变的图、一个 ``{term}`` 角色和一段原始写法。

所有 notebook 在同一个 JupyterLab 里同时运行（各自一个内核）：各章开在同一个标签页里（像读者在一个窗口里开着
好几章，前端只启动一次），反证 notebook 另开一页。找不到 Chromium 时跳过。
"""

from __future__ import annotations

import hashlib
import re

import pytest

import transformer_lab as tl

from helpers.exercises import starter
from helpers.slow import slow_fixture
from tools.lab import NOTEBOOKS, RAW_MYST, ROOT, jupyterlab, open_notebook, open_page, run_in_lab, warm_stored_runs

FIXTURE = ROOT / "tests" / "fixtures" / "lab_broken.ipynb"
CHAPTERS = [p.stem for p in NOTEBOOKS]
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


def _digest(paths) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


@slow_fixture(scope="module")
def lab(browser, tmp_path_factory):
    """在 JupyterLab 里运行全部章节和反证 notebook，返回 {名字: LabReport}，以及运行前后 notebook 的摘要。

    ``browser`` 是 tests/site/conftest.py 里全体浏览器测试共用的 Chromium（找不到时整个文件跳过）。"""
    before = _digest([*NOTEBOOKS, FIXTURE])
    warm_stored_runs()
    with jupyterlab(tmp_path_factory.mktemp("jupyterlab")) as base:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        reports = run_in_lab(context, base, [NOTEBOOKS, [FIXTURE]], frame_timeout_s={FIXTURE.stem: 5})
        context.close()
    return reports, before, _digest([*NOTEBOOKS, FIXTURE])


@pytest.mark.parametrize("name", CHAPTERS)
def test_chapter_runs_in_jupyterlab(lab, name):
    r = lab[0][name]
    assert not r.dialogs, f"{name}：出现了弹窗或通知：{r.dialogs}"
    assert not r.error_outputs, f"{name}：有单元格报错：{r.error_outputs}"
    assert r.cells_run == r.cells, f"{name}：{r.cells} 个代码单元格只运行了 {r.cells_run} 个"
    assert r.expected, f"{name}：存档里没有可交互图的预览（先运行 python dev.py refresh）"
    assert r.live_images == len(r.expected), f"{name}：{len(r.expected)} 张可交互图，显示出来的活图只有 {r.live_images} 张"
    assert all(n.strip() for n in r.image_names), f"{name}：有活图没有名字（<img title>）：{r.image_names}"
    moved = [(m.figure, m.slider) for m in r.moves]
    assert moved == [(i, j) for i, n in enumerate(r.expected) for j in range(n)], f"{name}：拖动过的滑块 {moved}"
    frozen = [(m.figure, m.slider, m.key) for m in r.moves if not m.changed]
    assert not frozen, f"{name}：这些滑块拖动后图没有变：{frozen}"
    assert r.widget_errors == 0, f"{name}：{r.widget_errors} 个控件显示 “Click to show javascript error”"
    assert not r.stderr_outputs, f"{name}：{r.stderr_outputs}"
    assert not r.raw_myst, f"{name}：渲染后的文字里有 MyST 原始写法 {r.raw_myst}"
    assert r.folded_dropdowns > 0 and r.dropdown_opens, f"{name}：小测验没有折叠，或点开后没有展开"


def test_no_console_errors_and_no_outside_requests(lab):
    """各章开在同一个标签页里，控制台和网络请求是它们共用的：整页没有报错（白名单见 ``CONSOLE_ALLOWED``）、
    没有请求 127.0.0.1 以外的地址。"""
    log = lab[0][CHAPTERS[0]].page
    assert all(lab[0][name].page is log for name in CHAPTERS)
    assert not log.console_errors(), f"浏览器控制台报错：{log.console_errors()[:5]}"
    assert not log.external, f"页面请求了外部地址：{log.external[:5]}"


def test_jupyterlab_speaks_chinese(lab):
    menus = {r.menu for r in lab[0].values()}
    assert len(menus) == 1 and "文件" in next(iter(menus)) and not LATIN_WORD.search(next(iter(menus))), menus


def test_running_does_not_write_the_notebooks(lab):
    """Run All 改了界面里的输出；测试关掉了自动保存，仓库里的文件必须原封不动。"""
    _, before, after = lab
    assert before == after


def test_the_checks_catch_a_broken_notebook(lab):
    """反证：上面每一类检查都会在 lab_broken.ipynb 上失败。"""
    r = lab[0][FIXTURE.stem]
    assert r.widget_errors == 1  # 原版 ipywidgets.Image + tooltip：前端读 description.length 出错
    assert r.live_images == 1  # 只有那张"不会动的图"是活的
    assert [m.changed for m in r.moves] == [False]  # 它的滑块拖了也不换像素
    assert r.page is not lab[0][CHAPTERS[0]].page  # 单独一页：它的报错不算到各章头上
    assert any("Cross reference target was not found: term-词元" in m for m in r.page.console_errors())
    assert any("Could not create a view for model id" in m for m in r.page.console_errors())
    assert r.raw_myst == ["{dropdown}"]


def test_only_the_known_server_race_excuses_a_500_in_the_console():
    """jupyter_server 启动内核时的那处竞争（``tools.lab.SERVER_RACE_CONSOLE``）：记下几次这样的回应，就放过几条
    500 的提示；别的报错、多出来的 500 照样算。"""
    from types import SimpleNamespace

    from tools.lab import SERVER_RACE_CONSOLE, LabPage, _server_race

    def response(url, status=500, method="GET"):
        return SimpleNamespace(url=url, status=status, request=SimpleNamespace(method=method))

    assert _server_race(response("http://127.0.0.1:1/api/kernels?17")) and _server_race(response("http://h/api/kernels/ab"))
    assert not any(_server_race(r) for r in (response("http://h/api/kernels?1", status=404),
                                              response("http://h/api/kernels", method="POST"),
                                              response("http://h/api/contents/notebooks/a.ipynb"),
                                              response("http://h/api/kernels/ab/channels?session_id=1")))

    line = f"{SERVER_RACE_CONSOLE} (Internal Server Error)"
    report = LabPage(console=[line, "TypeError: x is undefined", line])
    assert report.console_errors() == [line, "TypeError: x is undefined", line]
    report.known_server_races = ["http://127.0.0.1:1/api/kernels?1"]
    assert report.console_errors() == ["TypeError: x is undefined", line]
    report.known_server_races.append("http://127.0.0.1:1/api/kernels/abc?2")
    assert report.console_errors() == ["TypeError: x is undefined"]


def test_a_run_that_stopped_early_counts_as_finished_and_one_that_never_started_does_not():
    """等待的规则（不需要浏览器）：Run All 停在报错或弹窗处也算"跑完"（测试再带着原因失败），不干等到超时；
    还在排队的、内核忙的、一个单元格都没执行的，都不算。页面上的指示灯卡在 busy、服务器却说内核空闲时，
    以服务器为准。"""
    from tools.lab import _finished, _stalled

    base = {"status": "idle", "kernel": "idle", "cells": 5, "numbered": 5, "queued": 0, "errors": 0, "dialogs": []}
    assert _finished(base)
    assert _finished({**base, "numbered": 2, "errors": 1})  # 第 3 个单元格报错，Run All 停下
    assert _finished({**base, "numbered": 0, "dialogs": ["内核重启中"]})
    assert _finished({**base, "status": "busy"})  # 指示灯没更新，服务器说空闲
    assert _finished({**base, "kernel": None})  # 服务器那边查不到（指示灯说空闲）
    assert not _finished({**base, "numbered": 0}) and _stalled({**base, "numbered": 0})  # Run All 没接上：补点
    assert _stalled({**base, "numbered": 1})  # 跑了一个就停了、没有报错：补点
    assert not _stalled(base) and not _stalled({**base, "numbered": 1, "queued": 4})
    assert not _stalled({**base, "numbered": 2, "errors": 1})  # 停在报错处：原因看得见，不补点
    assert not _stalled({**base, "numbered": 2, "status": "busy", "kernel": "busy"})
    assert not _finished({**base, "numbered": 2})  # 停下了却看不出原因：继续等（超时报出页面状态）
    assert not _finished({**base, "numbered": 4, "queued": 1})
    assert not _finished({**base, "status": "busy", "kernel": "busy"})
    assert not _finished({**base, "cells": 0, "numbered": 0})  # 页面还没渲染出单元格


# ---------------------------------------------------------------- 动手写：在 JupyterLab 里写练习、检查

WRONG_SOFTMAX = "def softmax(z):\n    return np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)\n"
RIGHT_SOFTMAX = ("def softmax(z):\n    e = np.exp(z - z.max(axis=-1, keepdims=True))\n"
                 "    return e / e.sum(axis=-1, keepdims=True)\n")


def _write_and_check(view, starter_cell, check_cell, code: str) -> str:
    """像读者那样：点进起始代码的格子，全选，写进 ``code``，Shift+Enter 运行它（光标跳到检查格子），再 Shift+Enter
    运行检查；等检查格子的输出换成新的反馈，返回输出的文字。"""
    page = view.page
    before = check_cell.locator(".jp-OutputArea-output").inner_text()
    editor = starter_cell.locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(code)  # 像粘贴一样原样写入（逐键输入时编辑器会自动缩进、自动补括号）
    assert editor.inner_text().strip() == code.strip()
    page.keyboard.press("Shift+Enter")
    page.keyboard.press("Shift+Enter")
    page.wait_for_function("([el, old]) => { const t = el.innerText;"
                           " return t.includes('练习 softmax') && !t.includes('还没有写') && t !== old; }",
                           arg=[check_cell.locator(".jp-OutputArea").element_handle(), before], timeout=60_000)
    return check_cell.locator(".jp-OutputArea-output").inner_text()


@slow_fixture(scope="module")
def exercise_in_lab(browser, tmp_path_factory):
    """在一个新的 JupyterLab 里打开第 4 章（不 Run All），只运行第一个代码单元格（导入），然后在 softmax 的起始代码里
    先写一个没有减去最大值的 softmax、再写一个对的，各运行一次检查。返回两次的反馈文字、截图和控制台记录。"""
    shots = tmp_path_factory.mktemp("exercise-shots")
    notebook = next(p for p in NOTEBOOKS if p.stem == "04_four_steps")
    with jupyterlab(tmp_path_factory.mktemp("jupyterlab-exercise")) as base:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page, log = open_page(context, base)
        view, _ = open_notebook(page, base, notebook, workspace="exercise", run_all=False)
        cells = view.locator(".jp-CodeCell")
        cells.first.locator(".cm-content").click()
        page.keyboard.press("Shift+Enter")  # 第一个代码单元格：import numpy as np、import transformer_lab as tl
        starter_cell = cells.filter(has_text="def softmax(z):").first
        check_cell = cells.filter(has_text='tl.exercises.check("softmax", softmax)').first
        stored = check_cell.locator(".jp-OutputArea-output").inner_text()
        wrong = _write_and_check(view, starter_cell, check_cell, WRONG_SOFTMAX)
        wrong_html = check_cell.locator(".tl-feedback").first.get_attribute("class")
        check_cell.screenshot(path=str(shots / "feedback-wrong.png"))
        right = _write_and_check(view, starter_cell, check_cell, RIGHT_SOFTMAX)
        right_html = check_cell.locator(".tl-feedback").first.get_attribute("class")
        check_cell.screenshot(path=str(shots / "feedback-right.png"))
        answer = view.locator(".jp-MarkdownCell details").filter(has_text="参考答案").first
        folded = answer.evaluate("d => d.open")
        answer.locator("summary").click()
        shown = answer.evaluate("d => [d.open, d.querySelector('pre, code') ? d.innerText : '']")
        answer.screenshot(path=str(shots / "solution-open.png"))
        context.close()
    return {"stored": stored, "expected_stored": str(tl.exercises.check("softmax", starter("softmax"))),
            "wrong": wrong, "right": right, "classes": (wrong_html, right_html), "log": log, "shots": shots,
            "solution": (folded, *shown)}


def test_a_reader_writes_a_wrong_then_a_right_softmax_in_jupyterlab(exercise_in_lab):
    """在真的 JupyterLab 里：打开时检查格子显示存档的“还没有写”；写一个没有减去最大值的 softmax，反馈是中文的
    “还不对”，点名 no_max_shift，还说了为什么；改对以后，反馈是“通过”。"""
    r = exercise_in_lab
    assert r["stored"].strip().splitlines()[0] == r["expected_stored"].splitlines()[0] == "… 练习 softmax：还没有写"
    assert "✗ 练习 softmax：还不对" in r["wrong"] and "no_max_shift" in r["wrong"]
    assert "没有先减去最大值" in r["wrong"] and "溢出" in r["wrong"] and "[0.2689 0.7311]" in r["wrong"]
    assert "✓ 练习 softmax：通过" in r["right"] and "no_max_shift" not in r["right"]
    assert r["classes"] == ("tl-feedback tl-feedback-failed", "tl-feedback tl-feedback-passed")
    assert not r["log"].console_errors(), r["log"].console_errors()[:5]
    assert not r["log"].external, r["log"].external[:5]
    assert (r["shots"] / "feedback-wrong.png").stat().st_size > 0
    folded, opened, text = r["solution"]  # 参考答案折叠着，点开是渲染好的代码块，没有原样的 MyST 写法
    assert not folded and opened and "def softmax(z):" in text and not any(m in text for m in RAW_MYST)
