"""Transformer 实验室 (transformer_lab)：本书所有章节共用的 NumPy 小工具包。

包里分五层，文件夹就是层（只许上层导入下层）::

    figures/   每章的可交互图（一章一个模块）           → lessons、core、plot、widgets
    lessons/   为讲解设计的数据和小实验（只依赖 NumPy） → core
    core/      论文本身：注意力、多头、位置编码……      （只依赖 NumPy）
    widgets/   可交互图的引擎（活滑块 / 静态帧）        → plot
    plot/      matplotlib 画图小函数                    （不导入任何数学模块）

另有 ``exercises/``（动手写：每章的练习和检查器，只依赖 NumPy，``tl.exercises``）。

顶层直接导出 ``core`` 里常用的函数，以及 ``lessons`` 各模块的短名字（``tl.toy_sentences``……），
让 notebook 里的代码保持简短。画图 ``tl.plotting`` 与交互图 ``tl.explore`` 按需加载
（第一次访问时才导入 matplotlib / ipywidgets）；第 10 章的真模型 ``tl.pretrained``（``pretrained/``，
只依赖 ``core``）也是第一次访问时才导入。
"""

from __future__ import annotations

import importlib

from . import exercises
from .core import similarity
from .core.attention import causal_mask, scaled_dot_product_attention, scaled_dot_product_attention_backward
from .core.decoding import next_token_probs
from .core.dpo import dpo_loss
from .core.embedding import embed, embedding_backward
from .core.encoder import encoder_layer, encoder_layer_backward, encoder_layer_steps, init_encoder_params
from .core.feed_forward import feed_forward, feed_forward_backward
from .core.gqa import grouped_query_attention
from .core.kv_cache import KVCache
from .core.layer_norm import layer_norm, layer_norm_backward
from .core.linear import linear_backward
from .core.lora import lora_linear, lora_merge
from .core.loss import cross_entropy, cross_entropy_backward
from .core.masked_loss import masked_cross_entropy, masked_cross_entropy_backward
from .core.multihead import merge_heads, multi_head_attention, multi_head_attention_backward, split_heads
from .core.positional import positional_frequencies, rope, sinusoidal_positional_encoding
from .core.qkv import init_qkv_weights, qkv_projections
from .core.rms_norm import rms_norm
from .core.rnn import input_jacobians, orthogonal_recurrent_weights, random_rnn, rnn_forward
from .core.rotary import rotary
from .core.similarity import cosine_similarity, dot
from .core.softmax import softmax, softmax_backward
from .core.swiglu import silu, swiglu
from .core.tiled import tiled_attention
from .lessons import (
    assistant,
    bpe,
    corpus,
    costs,
    deep_stack,
    dependency_graph,
    finetune,
    generation,
    geometry,
    gpt_myths,
    head_shapes,
    head_training,
    instructions,
    layer_story,
    learned_glasses,
    library,
    long_context,
    ngram,
    optim,
    positions,
    runs,
    saturation,
    scale,
    show,
    timing,
    tiny_gpt,
    tiny_transformer,
    tokenization,
    toy_lexicon,
    toy_sentences,
)

__all__ = [
    # core：论文本身
    "softmax",
    "causal_mask",
    "scaled_dot_product_attention",
    "split_heads",
    "merge_heads",
    "multi_head_attention",
    "qkv_projections",
    "init_qkv_weights",
    "sinusoidal_positional_encoding",
    "positional_frequencies",
    "rope",
    "rnn_forward",
    "orthogonal_recurrent_weights",
    "input_jacobians",
    "random_rnn",
    "dot",
    "cosine_similarity",
    "similarity",
    "tiled_attention",
    "KVCache",
    "layer_norm",
    "feed_forward",
    "embed",
    "encoder_layer",
    "encoder_layer_steps",
    "init_encoder_params",
    "next_token_probs",
    # core：第 12 章的真 GPT 新添的零件
    "rms_norm",
    "swiglu",
    "silu",
    "rotary",
    "grouped_query_attention",
    # core：反向传播（本书自己手写的梯度）
    "softmax_backward",
    "linear_backward",
    "scaled_dot_product_attention_backward",
    "multi_head_attention_backward",
    "layer_norm_backward",
    "feed_forward_backward",
    "embedding_backward",
    "cross_entropy",
    "cross_entropy_backward",
    "encoder_layer_backward",
    # core：第 13 章的三个损失和 LoRA
    "masked_cross_entropy",
    "masked_cross_entropy_backward",
    "lora_linear",
    "lora_merge",
    "dpo_loss",
    # lessons：各章的道具
    "dependency_graph",
    "costs",
    "timing",
    "long_context",
    "toy_lexicon",
    "toy_sentences",
    "geometry",
    "library",
    "saturation",
    "positions",
    "show",
    "head_shapes",
    "head_training",
    "learned_glasses",
    "deep_stack",
    "layer_story",
    "tiny_transformer",
    "optim",
    "runs",
    "corpus",
    "tiny_gpt",
    "generation",
    "tokenization",
    "gpt_myths",
    "ngram",
    "bpe",
    "scale",
    "instructions",
    "finetune",
    "assistant",
    # 全书自测（和网站上的自测页同一份题库）
    "self_test",
    # 动手写：每章的练习，自己检查并认出常见错误
    "exercises",
    # 按需加载
    "plotting",
    "explore",
    "pretrained",
]

__version__ = "0.2.0"

_LAZY = {"plotting": ".plot", "explore": ".explore", "pretrained": ".pretrained"}
_RENAMED = {  # 改过名的公开名字 → 现在的位置（旧名字给出中文提示，而不是英文的 AttributeError）
    "chapter_rnn": "tl.random_rnn（同样的参数，同样的结果）",
    "decode_multiply_adds": "tl.costs.decode_multiply_adds（所有数数都在 tl.costs 里）",
    "kv_cache_bytes": "tl.costs.kv_cache_bytes（所有数数都在 tl.costs 里）",
}


def self_test(chapter: int | None = None):
    """在 notebook 里做全书自测：和网站上“自测”页同一份题库、同一个小部件，不需要网络。

    ``chapter`` 为某一章的章号时只出这一章的题。每道题提交后立刻给出反馈、讲解和链接回相关的小节，并更新得分。
    详见 ``transformer_lab.quiz.self_test``。

    Raises
    ------
    TypeError
        ``chapter`` 不是正整数。
    ValueError
        ``chapter`` 不是本书的章号（``transformer_lab.chapters``）。
    """
    from .quiz import self_test as show_quiz

    return show_quiz(chapter)


def __getattr__(name: str):
    """按需导入 plotting / explore / pretrained，让只用数学函数的代码不必加载 matplotlib，也不必读模型文件。"""
    if name in _LAZY:
        return importlib.import_module(_LAZY[name], __name__)
    if name in _RENAMED:
        raise AttributeError(f"tl.{name} 已经改名或搬家，请改用 {_RENAMED[name]}。")
    raise AttributeError(f"模块 transformer_lab 没有属性 {name!r}")
