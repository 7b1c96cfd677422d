"""pretrained/llama.py：SmolLM2 的前向（在测试自己写的小 Llama 上，``helpers/tiny_llama.py``）。

- 独立参照 ``helpers/llama_reference.py``（float64、逐个头的循环、在还原了次序的 W_q、W_k 上用前后两半的 RoPE、
  不用缓存）：小 Llama 的 ``logits`` 与它相差不到 1e-5（相对于最大的打分）；反证：参照里不还原次序就对不上；
- 缓存：提示词一次进、之后每次 1 个词元，最后一个位置的打分等于整段前向的对应行；出错时每层缓存都撤回；
- 尺寸读自元数据，坏的元数据给出写明文件的中文错误（报错表）。
"""

import numpy as np
import pytest

from transformer_lab.pretrained import llama

from helpers import llama_reference
from helpers.errors import call, error_table_test
from helpers.tiny_llama import D_FF, H_KV, TOKENS, D, H, L, loaded_tiny_llama, metadata

IDS = [3 + b for b in b"the cat sat"]


def test_config_from_the_metadata():
    config = loaded_tiny_llama().config
    assert (config.vocab_size, config.d_model, config.num_layers, config.num_heads, config.num_kv_heads,
            config.d_ff, config.context, config.d_k) == (len(TOKENS), D, L, H, H_KV, D_FF, 64, D // H)
    assert config.rope_base == 100000.0 and abs(config.eps - 1e-5) < 1e-12


def test_logits_match_the_independent_reference():
    model = loaded_tiny_llama()
    got = model.logits(IDS)
    want = llama_reference.reference_logits(model.state_dict, model.config, IDS)
    assert got.dtype == np.float32 and got.shape == (len(IDS), len(TOKENS))
    assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()


def test_the_reference_comparison_can_fail(monkeypatch):
    """反证：参照里不把 W_q、W_k 还原回原来的次序（直接用前后两半转），就对不上。"""
    model = loaded_tiny_llama()
    monkeypatch.setattr(llama_reference, "unpermute_rows", lambda w, heads: w)
    want = llama_reference.reference_logits(model.state_dict, model.config, IDS)
    assert np.abs(model.logits(IDS) - want).max() > 1e-3 * np.abs(want).max()


def test_cached_steps_equal_the_full_forward():
    model = loaded_tiny_llama()
    full = model.logits(IDS)
    tol = 1e-5 * np.abs(full).max()  # float32：两条路的乘加次序不同，差在舍入
    caches = model.new_caches(len(IDS))
    last, weights = model.feed_unchecked(np.array(IDS[:4]), caches)
    np.testing.assert_allclose(last, full[3], rtol=0, atol=tol)
    assert len(weights) == L and weights[0].shape == (H, 4, 4)
    for t in range(4, len(IDS)):
        last, weights = model.feed_unchecked(np.array(IDS[t:t + 1]), caches)
        np.testing.assert_allclose(last, full[t], rtol=0, atol=tol)
    assert weights[-1].shape == (H, 1, len(IDS)) and all(c.length == len(IDS) for c in caches)
    assert caches[0].keys.shape == (H_KV, len(IDS), D // H)  # 只存 H_kv 组


def test_a_failed_step_rolls_every_cache_back():
    model = loaded_tiny_llama()
    caches = model.new_caches(3)
    model.feed_unchecked(np.array(IDS[:2]), caches)
    with pytest.raises(IndexError):
        model.feed_unchecked(np.array([10**6]), caches)  # 越界的编号（unchecked：调用者本该查过）
    assert [c.length for c in caches] == [2] * L


def test_the_layers_are_views_of_the_state_dict():
    model = loaded_tiny_llama()
    layer = model.layers[1]
    assert np.shares_memory(layer.w_q, model.state_dict["blk.1.attn_q.weight"])
    assert layer.w_gate.shape == (D, D_FF) and layer.w_down.shape == (D_FF, D)
    assert not model.state_dict["blk.1.attn_q.weight"].flags.writeable


def meta(**overrides) -> dict:
    return {key: value for key, _, value, *_ in metadata(**overrides)}


V = ValueError
ERROR_CASES = [
    ("not-llama", call(llama.config_from_metadata, meta(**{"general.architecture": "gpt2"}), "x.gguf"), V,
     r"x\.gguf 的 general\.architecture 是 'gpt2'：本书只读 'llama'"),
    ("missing-key", call(llama.config_from_metadata, meta(**{"llama.block_count": None}), "x.gguf"), V,
     r"x\.gguf 的元数据里缺少 llama\.block_count"),
    ("bad-size", call(llama.config_from_metadata, meta(**{"llama.block_count": -1}), "x.gguf"), V,
     r"x\.gguf 里这些尺寸应是正整数.*llama\.block_count=-1"),
    ("bad-eps", call(llama.config_from_metadata, meta(**{"llama.attention.layer_norm_rms_epsilon": 2.0}), "x.gguf"),
     V, r"layer_norm_rms_epsilon=2\.0"),
    ("bad-base", call(llama.config_from_metadata, meta(**{"llama.rope.freq_base": 0.5}), "x.gguf"), V,
     r"llama\.rope\.freq_base=0\.5"),
    ("heads", call(llama.config_from_metadata, meta(**{"llama.attention.head_count_kv": 3}), "x.gguf"), V,
     r"x\.gguf 的头数对不上：.*H 要是 H_kv=3 的整数倍"),
    ("rope-dims", call(llama.config_from_metadata, meta(**{"llama.rope.dimension_count": 8}), "x.gguf"), V,
     r"llama\.rope\.dimension_count=8 要等于每头的维数"),
]
test_documented_errors = error_table_test(ERROR_CASES)
