"""检查结果 ``Feedback``：通过没有、认出了哪个常见错误、给读者的中文说明；在 notebook 里显示成一个彩色小框。

本模块只用标准库。
"""

from __future__ import annotations

import html
from dataclasses import dataclass

__all__ = ["Feedback", "STATUSES", "Text"]

STATUSES = ("passed", "failed", "not_attempted", "error")
_LOOK = {  # 状态 → (标记, 标题里的说法, 边框颜色, 背景颜色)；颜色在亮色和暗色主题下都读得清
    "passed": ("✓", "通过", "#2e7d32", "rgba(46, 125, 50, 0.10)"),
    "failed": ("✗", "还不对", "#c62828", "rgba(198, 40, 40, 0.08)"),
    "not_attempted": ("…", "还没有写", "#757575", "rgba(117, 117, 117, 0.10)"),
    "error": ("!", "运行出错", "#e65100", "rgba(230, 81, 0, 0.10)"),
}


class Text(str):
    """一段给人读的文字（提示、参考答案）：notebook 里直接显示内容，而不是带引号和 ``\\n`` 的字符串。"""

    def _repr_pretty_(self, p, cycle: bool) -> None:  # IPython 显示纯文字时调用
        p.text(str(self))


@dataclass(frozen=True)
class Feedback:
    """``tl.exercises.check`` 的结果。

    Attributes
    ----------
    name : str
        练习的名字（例如 ``"softmax"``）。
    status : str
        ``"passed"``（全部测试通过）、``"failed"``（结果不对）、``"not_attempted"``（还是起始代码）、
        ``"error"``（运行时出错，或传进来的不是函数）。
    diagnosis : str or None
        认出的常见错误的编号（例如 ``"no_max_shift"``、``"mutates_input"``），认不出时为 ``None``。
    message : str
        中文说明：期望什么、得到什么（形状、一个小例子的数值）、差多少；认出常见错误时写明它叫什么、为什么错、怎么改。
    """

    name: str
    status: str
    diagnosis: str | None
    message: str

    @property
    def passed(self) -> bool:
        """全部测试都通过了吗？"""
        return self.status == "passed"

    @property
    def title(self) -> str:
        mark, said, _, _ = _LOOK[self.status]
        return f"{mark} 练习 {self.name}：{said}"

    def __str__(self) -> str:
        return f"{self.title}\n{self.message}"

    def __repr__(self) -> str:  # 纯文字环境看到的样子：和 str 一样，输出可复现（不含内存地址）
        return str(self)

    def _repr_pretty_(self, p, cycle: bool) -> None:
        p.text(str(self))

    def _repr_html_(self) -> str:
        _, _, border, background = _LOOK[self.status]
        body = html.escape(self.message)
        return (f'<div class="tl-feedback tl-feedback-{self.status}" style="border-left: 4px solid {border}; '
                f'background: {background}; padding: 0.5em 0.8em; margin: 0.3em 0; line-height: 1.6;">'
                f'<strong style="color: {border};">{html.escape(self.title)}</strong>'
                f'<pre style="white-space: pre-wrap; margin: 0.3em 0 0 0; background: transparent; '
                f'font-family: inherit;">{body}</pre></div>')
