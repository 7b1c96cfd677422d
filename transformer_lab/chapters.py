"""全书的章节表：章号 → notebook 的文件名、章名。书里只有这一张表。

加一章 = 在 ``CHAPTERS`` 里加一行（再在 ``_toc.yml`` 里列出这一章的 notebook，在前言的章节地图里加一行）。
别处需要章号、章名、notebook 文件名时都从这里取，不再手写“1 到 8”；这一章的图和题按名字找
（``figures/chNN_<notebook>.py``、``quiz/bank_chNN.py``），不用在别处登记；网站搜索的降权也读这张表
（``revisits``，建书时写进 ``book/_ext/search_scorer.js``）。``tests/test_chapters.py`` 把这张表和
``_toc.yml``、``notebooks/*.ipynb``（以及每一本的一级标题）、``figures/chNN_<notebook>.py``、
``tests/figures/``、每章的题库和前言的章节地图逐一核对，任何一处对不上都会失败。

本模块只依赖 ``_validation``，包里任何一层都可以导入它。
"""

from __future__ import annotations

from dataclasses import dataclass

from . import _validation as check

__all__ = ["Chapter", "CHAPTERS", "chapter", "numbers"]


@dataclass(frozen=True)
class Chapter:
    """一章。

    Parameters
    ----------
    number : int
        章号（从 1 起连续编号）。
    stem : str
        notebook 的文件名（不带 ``.ipynb``），例如 ``"04_four_steps"``；以两位章号开头。
    title : str
        notebook 的一级标题去掉开头的“第 N 章 ”，一字不差。
    short : str
        短章名（自测题的“回去看”链接里用）；按“：”分开的每一段都取自 ``title``。
    revisits : bool
        这一章是不是把前面讲过的概念放进新的场合里重看一遍（第 10 章：真模型），而不是讲新概念。
        网站搜索时这样的章和附录一样打九折：它几乎提到每个术语，打平时应该让讲这个术语的那一章排在前面。
    """

    number: int
    stem: str
    title: str
    short: str
    revisits: bool = False

    @property
    def docname(self) -> str:
        """这一章在书里的文档名（相对于仓库根目录，不带扩展名），也是 ``_toc.yml`` 里写的 ``file``。"""
        return f"notebooks/{self.stem}"

    @property
    def notebook(self) -> str:
        """这一章的 notebook，相对于仓库根目录的路径。"""
        return f"{self.docname}.ipynb"

    @property
    def heading(self) -> str:
        """notebook 的一级标题（不带 ``#``）。"""
        return f"第 {self.number} 章 {self.title}"

    @property
    def figures_module(self) -> str:
        """这一章的图所在的模块名（``transformer_lab/figures/`` 下，可能还没有）。"""
        return f"ch{self.stem}"

    @property
    def bank_module(self) -> str:
        """这一章的自测题库模块名（``transformer_lab/quiz/`` 下），例如 ``"bank_ch04"``。"""
        return f"bank_ch{self.number:02d}"


CHAPTERS: tuple[Chapter, ...] = (
    Chapter(1, "01_rnn_vs_transformer", "RNN 与 Transformer：传话游戏 vs 全员电话会议", "RNN 与 Transformer"),
    Chapter(2, "02_self_attention", "自注意力：“它”到底指谁", "自注意力"),
    Chapter(3, "03_qkv", "Q、K、V 三兄弟", "Q、K、V 三兄弟"),
    Chapter(4, "04_four_steps", "计算四步：点积 → 缩放 → Softmax → 加权求和", "计算四步"),
    Chapter(5, "05_multi_head", "多头注意力：多副眼镜看世界", "多头注意力"),
    Chapter(6, "06_positional_encoding", "位置编码：给每个词一个座位号", "位置编码"),
    Chapter(7, "07_complexity", "复杂度：圆桌握手的代价", "复杂度"),
    Chapter(8, "08_transformer_layer", "串起来：从一句话到一层 Transformer", "串起来：一层 Transformer"),
    Chapter(9, "09_next_token", "下一个词：从一层 Transformer 到一个会写字的小 GPT", "下一个词：小 GPT"),
    Chapter(10, "10_real_model", "真模型：一个真正训练过的 Transformer，在本书自己的 NumPy 里跑", "真模型", revisits=True),
    Chapter(11, "11_tokenization", "分词：文字怎样变成词元", "分词"),
    Chapter(12, "12_real_gpt", "真 GPT：一个真正预训练过的模型，在本书的 NumPy 里一个词一个词地写", "真 GPT"),
    Chapter(13, "13_assistant", "从接话到助手：预训练、指令微调、LoRA 和偏好", "从接话到助手"),
)


def numbers() -> tuple[int, ...]:
    """全书的章号，按顺序。

    >>> numbers()[:3]
    (1, 2, 3)
    """
    return tuple(c.number for c in CHAPTERS)


def chapter(number: object, name: str = "chapter") -> Chapter:
    """第 ``number`` 章。

    Parameters
    ----------
    number : int
        章号。
    name : str
        报错信息里这个参数的名字。

    Raises
    ------
    TypeError
        ``number`` 不是正整数（例如字符串 ``"4"``、``4.0`` 或 ``True``）。
    ValueError
        ``number`` 不是本书的章号。

    Examples
    --------
    >>> chapter(4).stem
    '04_four_steps'
    >>> chapter(4).notebook
    'notebooks/04_four_steps.ipynb'
    """
    n = check.positive_int(number, name)
    for c in CHAPTERS:
        if c.number == n:
            return c
    raise ValueError(f"{name} 必须是本书的章号 {CHAPTERS[0].number} 到 {CHAPTERS[-1].number} 之一，收到 {n}。")
