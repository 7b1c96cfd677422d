"""自测小部件：把一份题库（纯数据）写成一段自给自足的 HTML——题目、选项、每个选项的反馈、讲解、
“先猜后看”的计算，全部预先写在 HTML 里（反馈先藏着），再加样式 ``quiz.css`` 和一小段判分脚本 ``quiz.js``。

没有内核、没有网络也能用：网站上的自测页由 ``book/_ext/self_test_page.py`` 在建网站时插入这段 HTML；
notebook 里 ``tl.self_test()`` 显示的是同一段 HTML（读者自己运行出来的输出是受信任的，脚本会运行）。
题面用普通的 Unicode 写数学（√d_k、QKᵀ），不依赖 MathJax。

输入是 ``transformer_lab.quiz.question.as_dicts`` 给出的字典列表；本模块只用标准库和 ``_validation``（链接检查），不导入题库。
每段文字都经过 ``_e`` 转义，每个属性值都经过 ``_tag``（它也用 ``_e``）——属性只在那一处写进 HTML；链接只许相对地址或 http(s)。
元素 id 的默认前缀由题目内容算出（同样的题，每次都是同样的 HTML）；同一页上放了两份一模一样的自测时，
``quiz.js`` 给后一份换一个前缀，两份互不干扰。
"""

from __future__ import annotations

import hashlib
import html
import json
from pathlib import Path

from .. import _validation as check

__all__ = ["render_html", "default_prefix", "SelfTest", "QUIZ_JS", "QUIZ_CSS", "KIND_NAMES", "FIELDS"]

QUIZ_JS = Path(__file__).with_name("quiz.js").read_text(encoding="utf-8")
QUIZ_CSS = Path(__file__).with_name("quiz.css").read_text(encoding="utf-8")
KIND_NAMES = {"choice": "单选", "number": "填数", "predict": "先猜后看"}
FIELDS = ("qid", "number", "group", "kind", "prompt", "choices", "why", "correct", "answer", "tolerance", "unit",
          "explain", "reveal", "chapter", "where", "href")  # as_dicts 给出的每道题的字段（tests/quiz 核对两边一致）


def _e(text: object) -> str:
    """写进 HTML 的每一段文字都经过这里：& < > " ' 全部转义，造不出标签。"""
    return html.escape(str(text), quote=True)


def _tag(name: str, *attrs: tuple[str, object]) -> str:
    """一个开始标签。每个属性值都经过 ``_e`` 转义（属性值只在这里写进 HTML）：关不掉引号、造不出属性或标签。
    值为 ``None`` 的属性只写名字（``hidden``）。

    >>> _tag("label", ("for", 'x"><script>'), ("hidden", None))
    '<label for="x&quot;&gt;&lt;script&gt;" hidden>'
    """
    return f"<{name}" + "".join(f" {key}" if value is None else f' {key}="{_e(value)}"' for key, value in attrs) + ">"


def _choices(q: dict, base: str) -> str:
    rows = []
    for i, text in enumerate(q["choices"]):
        rid = f"{base}-c{i}"
        rows.append(_tag("div", ("class", "tlq-choice"))
                    + _tag("input", ("type", "radio"), ("id", rid), ("name", base), ("value", i))
                    + _tag("label", ("for", rid)) + f"{_e(text)}</label></div>")
    return "".join(rows)


def _number_input(q: dict, base: str) -> str:
    unit = f"（单位：{_e(q['unit'])}）" if q["unit"] else ""
    return (_tag("div", ("class", "tlq-number")) + _tag("label", ("for", f"{base}-in")) + f"你的答案{unit}</label>"
            + _tag("input", ("type", "text"), ("inputmode", "decimal"), ("autocomplete", "off"), ("id", f"{base}-in"))
            + "</div>")


def _templates(q: dict) -> str:
    """提交后才显示的内容：每个选项的反馈、讲解、计算、链接回章节。全部藏着，由脚本复制进反馈区。"""
    parts = [_tag("div", ("hidden", None), ("class", "tlq-why"), ("data-choice", i)) + f"<p>{_e(w)}</p></div>"
             for i, w in enumerate(q["why"])]
    if q["explain"]:
        parts.append(_tag("div", ("hidden", None), ("class", "tlq-explain")) + f'<p>{_e(q["explain"])}</p></div>')
    if q["reveal"]:
        lines = "\n".join(_e(line) for line in q["reveal"])
        parts.append(_tag("div", ("hidden", None), ("class", "tlq-reveal")) + f"<p>算一算：</p><pre>{lines}</pre></div>")
    parts.append(_tag("div", ("hidden", None), ("class", "tlq-link")) + "<p>"
                 + _tag("a", ("href", check.safe_link(q["href"], "href"))) + f'回去看：{_e(q["where"])}</a></p></div>')
    return "".join(parts)


def _question(q: dict, prefix: str) -> str:
    base = f"{prefix}-{q['qid']}"
    meta = f"第 {q['number']} 题 · {q['group']} · {KIND_NAMES[q['kind']]} · 第 {q['chapter']} 章"
    body = _number_input(q, base) if q["kind"] == "number" else _choices(q, base)
    data = [("data-kind", q["kind"]), ("data-qid", q["qid"])]
    if q["kind"] == "number":
        data += [("data-answer", repr(q["answer"])), ("data-tolerance", repr(q["tolerance"]))]
    else:
        data += [("data-correct", q["correct"])]
    return (_tag("div", ("class", "tlq-q"), ("id", base), *data) + "<fieldset>"
            + "<legend>" + _tag("span", ("class", "tlq-meta")) + f'{_e(meta)}</span>{_e(q["prompt"])}</legend>{body}</fieldset>'
            + _tag("button", ("type", "button"), ("class", "tlq-submit"))
            + f'{"提交预测" if q["kind"] == "predict" else "提交答案"}</button>'
            + _tag("div", ("class", "tlq-feedback"), ("aria-live", "polite")) + f"</div>{_templates(q)}</div>")


def default_prefix(questions: list[dict]) -> str:
    """由题目内容算出的元素 id 前缀：``"tlq-"`` 加内容摘要的前 8 位十六进制数。同样的题 → 同样的前缀。

    >>> default_prefix([{"qid": "a"}]) == default_prefix([{"qid": "a"}]) != default_prefix([{"qid": "b"}])
    True
    """
    text = json.dumps(questions, ensure_ascii=False, sort_keys=True, default=repr)
    return "tlq-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def _check_fields(questions: list[dict]) -> None:
    """每道题都有 ``FIELDS`` 里的字段，``kind`` 是可选值之一，几组文字是列表（一个裸字符串会被拆成一个个字）。"""
    for i, q in enumerate(questions):
        missing = [key for key in FIELDS if key not in q]
        if missing:
            raise ValueError(f"questions[{i}] 缺少字段 {missing}：每道题要有 quiz.as_dicts 给出的全部字段 {list(FIELDS)}。")
        check.one_of(q["kind"], f"questions[{i}]['kind']", tuple(KIND_NAMES))
        for key in ("choices", "why", "reveal"):
            if not isinstance(q[key], list):
                raise TypeError(f"questions[{i}]['{key}'] 必须是字符串的列表（as_dicts 的写法），收到的是 {check.describe(q[key])}。")


def render_html(questions: list[dict], prefix: str | None = None) -> str:
    """一段自给自足的自测 HTML（样式、题目、判分脚本都在里面，不加载任何外部文件）。

    Parameters
    ----------
    questions : list of dict
        ``question.as_dicts`` 的结果。
    prefix : str, optional
        元素 id 的前缀；默认由题目内容算出（``default_prefix``）。

    Raises
    ------
    TypeError, ValueError
        ``questions`` 不是非空的字典列表，``prefix`` 不是只含字母、数字、连字符的字符串，
        某道题缺 ``as_dicts`` 给出的字段、``kind`` 不是可选值之一、``choices``/``why``/``reveal`` 不是列表，
        或某道题的链接 ``href`` 不是相对地址或 http(s)（例如 ``javascript:``）。
    """
    if not isinstance(questions, list) or not questions or not all(isinstance(q, dict) for q in questions):
        raise TypeError(f"questions 必须是非空的 dict 列表（quiz.as_dicts 的结果），收到 {type(questions).__name__}。")
    prefix = default_prefix(questions) if prefix is None else prefix
    if not isinstance(prefix, str) or not prefix.replace("-", "").isalnum() or not prefix.isascii():
        raise ValueError(f"prefix 只能含英文字母、数字和连字符，收到 {prefix!r}。")
    _check_fields(questions)
    total = len(questions)
    return (_tag("div", ("class", "tlq"), ("id", prefix), ("data-total", total)) + f"<style>{QUIZ_CSS}</style>"
            + _tag("p", ("class", "tlq-score"), ("role", "status"), ("aria-live", "polite")) + f"得分：0 / {total}（已答 0 题）</p>"
            + "".join(_question(q, prefix) for q in questions)
            + _tag("button", ("type", "button"), ("class", "tlq-reset")) + "全部清空，重新做</button>"
            f"<script>{QUIZ_JS}</script></div>")


class SelfTest:
    """在 notebook 里显示自测：Jupyter 显示对象时调用 ``_repr_html_``，得到和网站上同一段 HTML。"""

    def __init__(self, questions: list[dict]):
        self.html = render_html(questions)
        self.count = len(questions)

    def __repr__(self) -> str:  # 纯文字环境（没有 HTML 显示）里看到的样子；不含内存地址，输出可复现
        return f"自测：{self.count} 道题（在 JupyterLab 里显示为可以作答的小部件）"

    def _repr_html_(self) -> str:
        return self.html
