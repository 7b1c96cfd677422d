"""Transformer 实验室 (transformer_lab)：本书所有章节共用的 NumPy 小工具包。

数学部分（本模块顶层导出的函数）只依赖 NumPy；画图 ``tl.plotting`` 与交互图 ``tl.explore``
按需加载（第一次访问时才导入 matplotlib / ipywidgets）。
"""

from __future__ import annotations

import importlib

from .attention import causal_mask, scaled_dot_product_attention, softmax
from .multihead import merge_heads, multi_head_attention, split_heads
from .positional import sinusoidal_positional_encoding
from .rnn import rnn_forward
from .similarity import cosine_similarity, dot
from . import costs, projections, recurrence, scaling, similarity, toy_sentences

__all__ = [
    "softmax",
    "causal_mask",
    "scaled_dot_product_attention",
    "split_heads",
    "merge_heads",
    "multi_head_attention",
    "sinusoidal_positional_encoding",
    "rnn_forward",
    "dot",
    "cosine_similarity",
    "scaling",
    "similarity",
    "recurrence",
    "costs",
    "toy_sentences",
    "projections",
    "plotting",
    "explore",
]

__version__ = "0.1.0"

_LAZY = {"plotting", "explore"}


def __getattr__(name: str):
    """按需导入 plotting / explore，让只用数学函数的代码不必加载 matplotlib。"""
    if name in _LAZY:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"模块 transformer_lab 没有属性 {name!r}")
