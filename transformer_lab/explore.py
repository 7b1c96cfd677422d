"""本书的图：每张可交互图在章节里只需一行 ``tl.explore.xxx()``。

图的实现按章节放在 ``transformer_lab/figures/chNN_<notebook>.py`` 里。这里把它们一个个明确地导入：
``CATALOG`` 是全部可交互图（返回 ``Explorable`` 的一行式函数，按章节顺序），``FIGURES`` 是章节里的
静态图。新写一张可交互图，要在这里加一行导入并放进 ``CATALOG``——忘了的话，
``tests/test_explorables.py`` 会指出是哪一张。
"""

from __future__ import annotations

from typing import Callable

from .figures.ch01_rnn_vs_transformer import direct_attention_map, queue_vs_direct, rnn_memory_decay, timing_curves
from .figures.ch02_self_attention import attention_explorer, feature_heatmap, pronoun_shift, sentence_features
from .figures.ch03_qkv import dot_vs_cosine, key_length_attention, learned_glasses, readout_scatter, swapped_glasses
from .figures.ch04_four_steps import four_steps_shapes, scaling_saturation, sentence_attention, variance_growth
from .figures.ch05_multi_head import head_shape_tracer, head_specialisation, head_symmetry
from .figures.ch06_positional_encoding import clock_hands, pe_table, relative_dot, rope_scores
from .figures.ch07_complexity import cost_calculator, measured_scaling, memory_calculator
from .figures.ch08_transformer_layer import depth_gradients, layer_norm_steps, layer_walkthrough, reversal_training
from .figures.ch09_next_token import encoder_vs_decoder, generation_steps, next_token_bars, training_checkpoints
from .figures.ch10_real_model import pronoun_heads, real_attention, real_attention_zh, real_similarity, real_token_heads
from .figures.ch11_tokenization import bpe_merges, tokenizer_compare, vocab_costs
from .figures.ch12_real_gpt import gpt_attention_map, gpt_generation_steps, gpt_next_token
from .figures.ch13_assistant import dpo_beta, lora_ranks, sft_checkpoints
from .figures.machine import transformer_diagram
from .widgets.explorable import Explorable

CATALOG: tuple[Callable[..., Explorable], ...] = (
    rnn_memory_decay,
    queue_vs_direct,
    attention_explorer,
    pronoun_shift,
    dot_vs_cosine,
    key_length_attention,
    learned_glasses,
    scaling_saturation,
    head_shape_tracer,
    head_specialisation,
    head_symmetry,
    pe_table,
    clock_hands,
    relative_dot,
    rope_scores,
    cost_calculator,
    memory_calculator,
    layer_norm_steps,
    layer_walkthrough,
    depth_gradients,
    reversal_training,
    next_token_bars,
    training_checkpoints,
    generation_steps,
    real_attention,
    real_token_heads,
    real_similarity,
    real_attention_zh,
    pronoun_heads,
    bpe_merges,
    vocab_costs,
    tokenizer_compare,
    gpt_next_token,
    gpt_generation_steps,
    gpt_attention_map,
    sft_checkpoints,
    lora_ranks,
    dpo_beta,
)

FIGURES = (timing_curves, direct_attention_map, feature_heatmap, sentence_features, swapped_glasses, readout_scatter,
           sentence_attention, four_steps_shapes, variance_growth, measured_scaling, encoder_vs_decoder,
           transformer_diagram)

__all__ = ["CATALOG", "FIGURES", "catalog", *(f.__name__ for f in CATALOG + FIGURES)]


def catalog() -> dict[str, Callable[..., Explorable]]:
    """全部可交互图：名字 → 用默认参数构造它的函数（按章节顺序）。"""
    return {f.__name__: f for f in CATALOG}
