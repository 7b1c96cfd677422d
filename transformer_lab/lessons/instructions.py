"""第 13 章的指令数据：本书自己写的问答和偏好对，把它们变成带损失掩码的训练批，以及给回答打分。

数据在 ``instruction_data.py``（随包发布）：术语取自本书的术语表 ``book/glossary.md``，
答案是为这一章重新写的短句。三部分：

* ``trained``：用来指令微调的问答；
* ``held_out``：从来不训练，只用来考（``tests/lessons/test_instructions.py`` 核对两部分没有重叠）；
* ``preferences``：同一个问题的两份回答，``chosen`` 是标注的人更喜欢的，``rejected`` 是不喜欢的。
  最后一对故意标错了：喜欢的那份是错的（"每行加起来等于二"）。

一道题写成一行（第 9 章的小 GPT 一个字一个编号，每个字都在它的字表里，测试核对）::

    问：什么是注意力？答：按相关程度给别的词分权重，再取回信息。⏎
    └──────── 提示 (prompt) ────────┘└──────── 答案，算损失 ────────┘

``sft_batch`` 把几道题补齐成一样长，损失掩码只在答案的字（和结尾的换行）上是 True。``answer`` 用贪心生成回答，
``grade`` 判"格式对不对""内容对不对"（规则见 ``grade``）。本模块只依赖 NumPy 和标准库。
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from functools import cache
from types import MappingProxyType

import numpy as np

from .. import _validation as check
from .corpus import encode
from .generation import generate_text
from .instruction_data import HELD_OUT, PREFERENCES, TRAINED

__all__ = ["load_instructions", "prompt", "full_text", "sft_batch", "answer", "first_line", "char_f1", "grade",
           "RIGHT_AT", "MAX_ANSWER", "END"]

END = "\n"  # 一道题的答案以换行结束：模型学会了"答完就停"
MAX_ANSWER = 48  # 生成回答最多写几个字（最长的参考答案 19 个字）
RIGHT_AT = 0.6  # 回答和参考答案的字重合度 (char_f1) 到这个数，才算"答对"


@cache
def _load() -> Mapping:
    def rows(items, keys):
        return tuple(MappingProxyType(dict(zip(keys, item))) for item in items)

    return MappingProxyType({"trained": rows(TRAINED, ("term", "answer")), "held_out": rows(HELD_OUT, ("term", "answer")),
                             "preferences": rows(PREFERENCES, ("term", "chosen", "rejected"))})


def load_instructions() -> Mapping:
    """随包发布的指令数据（只读）：``trained``、``held_out``、``preferences`` 三部分，每项是一个只读字典。

    Examples
    --------
    >>> data = load_instructions()
    >>> len(data["trained"]), len(data["held_out"]), len(data["preferences"])
    (40, 12, 12)
    >>> data["trained"][7]["term"], data["trained"][7]["answer"]
    ('注意力', '按相关程度给别的词分权重，再取回信息。')
    """
    return _load()


def prompt(term: str) -> str:
    """一道题的提示：``问：什么是{term}？答：``。

    Raises
    ------
    ValueError
        ``term`` 不是非空字符串。

    Examples
    --------
    >>> prompt("注意力")
    '问：什么是注意力？答：'
    """
    return f"问：什么是{check.nonempty_text(term, 'term')}？答："


def full_text(term: str, answer_text: str) -> str:
    """一整道题：提示 + 答案 + 换行。"""
    return prompt(term) + check.nonempty_text(answer_text, "answer_text") + END


def sft_batch(pairs: Sequence[tuple[str, str]], chars: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """几道题 (术语, 答案) → 训练批 ``(tokens, targets, loss_mask)``，都是 (N, T)。

    ``targets`` 是 ``tokens`` 往后错一位；``loss_mask[i, t]`` 为 True 当且仅当 ``targets[i, t]`` 是第 i 道题答案里的字
    （含结尾的换行）。短的题在末尾补上换行的编号，补的位置掩码是 False：因果注意力里后面的字影响不到前面，补齐不改变结果。

    Raises
    ------
    TypeError, ValueError
        ``pairs`` 为空或不是 (术语, 答案) 的序列、``chars`` 不是字符串、有字表里没有的字。

    Examples
    --------
    >>> tokens, targets, mask = sft_batch([("A", "B")], "\\nABa？问什么是答：")
    >>> len("问：什么是A？答：B\\n"), tokens.shape, mask.astype(int).tolist()      # 只有"B"和换行算损失
    (11, (1, 10), [[0, 0, 0, 0, 0, 0, 0, 0, 1, 1]])
    """
    pairs = check.nonempty_sequence(pairs, "pairs", "[('注意力', '按相关程度……')]")
    if not isinstance(chars, str):
        raise TypeError(f"chars 必须是字表字符串，收到的是 {check.describe(chars)}。")
    rows, starts = [], []
    for item in pairs:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise TypeError(f"pairs 的每一项必须是 (术语, 答案) 两个字符串，收到的是 {check.describe(item)}。")
        rows.append(encode(full_text(*item), chars))
        starts.append(len(prompt(item[0])))  # 答案的第一个字在第几个位置
    T = max(len(r) for r in rows) - 1
    pad = encode(END, chars)[0]
    ids = np.stack([np.concatenate([r, np.full(T + 1 - len(r), pad)]) for r in rows])  # (N, T + 1)
    position = np.arange(T)  # (T,) targets[:, t] 是第 t + 1 个字
    length = np.array([len(r) for r in rows])[:, None]  # (N, 1)
    mask = (position + 1 >= np.array(starts)[:, None]) & (position + 1 < length)  # (N, T)
    return ids[:, :-1], ids[:, 1:], mask


def answer(model, chars: str, term: str) -> str:
    """贪心地回答一道题：接着 ``prompt(term)`` 写 ``MAX_ANSWER`` 个字，原样返回（``first_line`` 截到第一个换行）。

    Raises
    ------
    TypeError, ValueError
        与 ``generation.generate_text`` 相同。
    """
    return generate_text(model, chars, prompt(term), MAX_ANSWER)[len(prompt(term)):]


def first_line(raw: str) -> str:
    """回答的第一行（第一个换行之前）：模型"答完"的部分。

    Examples
    --------
    >>> first_line("每个词交出去的内容。\\n问：什么是")
    '每个词交出去的内容。'
    """
    return raw.split(END)[0]


def char_f1(reply: str, reference: str) -> float:
    """两段文字按字的重合度 (F1)：把每段看成一袋字（重复的字算几次），共有的字数 c，
    精确率 c / len(reply)，召回率 c / len(reference)，F1 是两者的调和平均。完全相同是 1，没有共同的字是 0。

    Raises
    ------
    TypeError
        参数不是字符串。

    Examples
    --------
    >>> char_f1("加起来等于一", "加起来等于一"), char_f1("我不知道", "加起来等于一"), round(char_f1("等于一", "加起来等于一"), 4)
    (1.0, 0.0, 0.6667)
    """
    if not isinstance(reply, str) or not isinstance(reference, str):
        raise TypeError(f"reply 和 reference 都必须是字符串，收到的是 {check.describe(reply)} 和 {check.describe(reference)}。")
    common = sum((Counter(reply) & Counter(reference)).values())
    return 0.0 if common == 0 else 2 * common / (len(reply) + len(reference))


def grade(raw: str, reference: str) -> dict[str, object]:
    """给一个回答（``answer`` 的原样输出）打分，规则是机械的：

    * **格式对**：模型自己停了下来（``MAX_ANSWER`` 个字之内写出了换行），第一行不是空的、以句号"。"结尾，
      而且没有混进下一道题（不含"问："）。
    * **答对**：第一行和参考答案的字重合度 ``char_f1`` ≥ ``RIGHT_AT``（0.6）。这个标准不看意思，只看用字：
      同义的改写可能判错，抄对一大半的错话可能判对——所以本章同时给出"抄问题"这样的对照。

    Returns
    -------
    dict
        ``format``（bool）、``right``（bool）、``f1``（float）。

    Raises
    ------
    TypeError
        参数不是字符串。

    Examples
    --------
    >>> grade("每个词真正交出去的内容。\\n问：", "每个词真正交出去的内容。")
    {'format': True, 'right': True, 'f1': 1.0}
    >>> grade("的的的的的的", "每个词真正交出去的内容。")["format"]          # 没停下来
    False
    """
    if not isinstance(raw, str):
        raise TypeError(f"raw 必须是字符串（answer 的输出），收到的是 {check.describe(raw)}。")
    line = first_line(raw)
    f1 = char_f1(line, reference)
    well_formed = END in raw and line.endswith("。") and "问：" not in line
    return {"format": well_formed, "right": f1 >= RIGHT_AT, "f1": f1}
