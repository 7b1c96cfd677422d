"""lessons/gpt_model.py：小 GPT 这个模型——尺寸 GPTConfig + 参数 = TinyGPT；创建时检查一次、参数只读；
init_gpt 的随机数用法（和改成 config 之前一模一样）；逐词生成的接口 new_caches / feed_unchecked 与整段前向相同。"""

import numpy as np
import pytest

from transformer_lab.core.encoder import init_encoder_params
from transformer_lab.lessons import gpt_model as gm
from transformer_lab.lessons import tiny_gpt

from helpers.errors import call, error_table_test

CONFIG = gm.GPTConfig(5, d_model=4, num_layers=2, num_heads=2, d_ff=4, context=5)


def model(seed=0, config=CONFIG):
    return gm.init_gpt(config, np.random.default_rng(seed))


def test_config_defaults_are_the_chapter_9_model_and_round_trip():
    config = gm.GPTConfig(1087)
    assert (config.d_model, config.num_layers, config.num_heads, config.d_ff, config.context) == (64, 2, 4, 256, 256)
    assert gm.GPTConfig(**config.sizes()) == config
    assert type(gm.GPTConfig(np.int64(7)).vocab_size) is int  # NumPy 的整数也收，存成 int


def test_init_draws_the_same_numbers_as_before_the_config():
    """init_gpt 按原来的顺序从 rng 抽数：字嵌入、位置嵌入、每层（init_encoder_params）、输出矩阵。"""
    config = gm.GPTConfig(6, d_model=8, num_layers=2, num_heads=2, d_ff=16, context=5)
    rng = np.random.default_rng(3)
    want = {"tok_embed": rng.normal(size=(6, 8)), "pos_embed": rng.normal(0.0, 0.1, size=(5, 8))}
    for layer in range(2):
        want |= {f"layer{layer}.{k}": w for k, w in init_encoder_params(8, 16, rng).items()}
    want |= {"lnf_gamma": np.ones(8), "lnf_beta": np.zeros(8), "w_out": rng.normal(0.0, 0.02, size=(8, 6)),
             "b_out": np.zeros(6)}
    got = gm.init_gpt(config, np.random.default_rng(3))
    assert list(got.params) == list(want) == list(config.shapes())
    for key in want:
        np.testing.assert_array_equal(got.params[key], want[key])


def test_params_are_checked_once_and_read_only():
    m = model()
    with pytest.raises(TypeError):
        m.params["w_out"] = np.zeros((4, 5))  # 只读映射
    assert gm.layer_params(m, 1)["w_1"] is m.params["layer1.w_1"]  # 各层的参数只是同一批数组，不复制
    before = {k: v.copy() for k, v in m.params.items()}
    changed = gm.TinyGPT(m.config, m.params | {"b_out": np.ones(5)})  # 要改参数就造一个新模型
    assert np.all(changed.params["b_out"] == 1) and all(np.array_equal(before[k], m.params[k]) for k in before)


def test_sizes_counts_the_parameters_by_hand():
    config = gm.GPTConfig(10, d_model=8, num_layers=1, num_heads=2, d_ff=16, context=5)
    assert gm.sizes(model(config=config)) == config.sizes() | {"parameters": 826}


def test_feeding_in_pieces_equals_the_full_forward():
    """生成接口：提示词一次读进去，之后一个字一个字读；每一步的打分和注意力都等于整段前向的那一行（1e-12）。"""
    m = model(1, gm.GPTConfig(7, d_model=8, num_layers=2, num_heads=4, d_ff=16, context=9))
    ids = np.array([3, 1, 4, 1, 5, 6, 2])
    caches = m.new_caches(7)
    logits, weights = m.feed_unchecked(ids[:3], caches)
    pieces = [(3, logits, weights)]
    for t in range(3, 7):
        logits, weights = m.feed_unchecked(ids[t:t + 1], caches)
        pieces.append((t + 1, logits, weights))
    assert [c.length for c in caches] == [7, 7]
    for S, logits, weights in pieces:
        full_logits, full_weights = tiny_gpt.forward(m, ids[:S])  # (S, V), (L, H, S, S)
        np.testing.assert_allclose(logits, full_logits[-1], rtol=0, atol=1e-12)
        for layer, w in enumerate(weights):
            np.testing.assert_allclose(w[:, -1], full_weights[layer, :, S - 1], rtol=0, atol=1e-12)


def test_the_piecewise_check_can_fail():
    m = model(1, gm.GPTConfig(7, d_model=8, num_layers=2, num_heads=4, d_ff=16, context=9))
    ids = np.array([3, 1, 4, 1])
    caches = m.new_caches(4)
    m.feed_unchecked(ids[1:3], caches)  # 少读了第 0 个字：位置和前文都错了
    logits, _ = m.feed_unchecked(ids[3:], caches)
    assert np.abs(logits - tiny_gpt.forward(m, ids)[0][-1]).max() > 1e-3


P = model()

ERROR_CASES = [
    ("config-zero", call(gm.GPTConfig, 0), ValueError, r"vocab_size 必须是正整数.*收到的是 0"),
    ("config-float", call(gm.GPTConfig, 10, d_model=8.0), TypeError, r"d_model 必须是正整数.*float 8\.0"),
    ("config-heads", call(gm.GPTConfig, 10, d_model=8, num_heads=3), ValueError, r"d_model=8 必须能被 num_heads=3 整除"),
    ("model-config-dict", call(gm.TinyGPT, {"vocab_size": 5}, dict(P.params)), TypeError,
     r"config 必须是 GPTConfig，收到的是 dict.*GPTConfig\(vocab_size=V"),
    ("model-params-list", call(gm.TinyGPT, CONFIG, [1]), TypeError, r"params 必须是参数字典.*list"),
    ("model-missing", call(gm.TinyGPT, CONFIG, {k: v for k, v in P.params.items() if k != "w_out"}), ValueError,
     r"params 的键与 config 对不上（L=2 层，应有 38 个）：多出 无、缺少 \['w_out'\]"),
    ("model-extra", call(gm.TinyGPT, CONFIG, P.params | {"layer0.extra": np.ones(4)}), ValueError,
     r"多出 \['layer0.extra'\]、缺少 无"),
    ("model-wrong-heads-count-of-layers", call(gm.TinyGPT, gm.GPTConfig(5, d_model=4, num_layers=3, num_heads=2, d_ff=4,
                                                                    context=5), P.params), ValueError,
     r"params 的键与 config 对不上（L=3 层.*缺少 \['layer2.w_q'"),
    ("model-shape", call(gm.TinyGPT, CONFIG, P.params | {"w_out": np.ones((3, 5))}), ValueError,
     r"params\['w_out'\] 的形状应为 \(4, 5\)，收到的是 \(3, 5\)"),
    ("model-nan", call(gm.TinyGPT, CONFIG, P.params | {"tok_embed": np.full((5, 4), np.nan)}), ValueError,
     r"params\['tok_embed'\] 含有 NaN"),
    ("init-old-signature", call(gm.init_gpt, 10, np.random.default_rng(0)), TypeError,
     r"config 必须是 GPTConfig.*旧写法 init_gpt\(V, rng, d_model=…\).*init_gpt\(GPTConfig\(vocab_size=V"),
    ("init-rng", call(gm.init_gpt, CONFIG, 0), TypeError, "rng 必须是 np.random.Generator"),
    ("init-vocab-memory", call(gm.init_gpt, gm.GPTConfig(10**9), np.random.default_rng(0)), ValueError,
     r"小 GPT 的参数（V=1000000000, D=64, 2 层, d_ff=256, context=256） 要占 .* GiB"),
    ("init-layers-memory", call(gm.init_gpt, gm.GPTConfig(10, num_layers=10**6), np.random.default_rng(0)), ValueError,
     r"1000000 层.* 要占"),
    ("init-context-memory", call(gm.init_gpt, gm.GPTConfig(10, context=10**9), np.random.default_rng(0)), ValueError,
     r"context=1000000000\） 要占"),
    ("sizes-dict", call(gm.sizes, dict(P.params)), TypeError, r"model 必须是小 GPT 的模型 TinyGPT.*dict"),
    ("layer-out-of-range", call(gm.layer_params, P, 5), ValueError, r"layer=5 越界：模型有 2 层"),
    ("layer-negative", call(gm.layer_params, P, -1), ValueError, r"layer=-1 越界"),
    ("layer-float", call(gm.layer_params, P, 1.0), TypeError, r"layer 必须是整数.*float 1\.0"),
    ("layer-params-list", call(gm.layer_params, [1], 0), TypeError, r"model 必须是小 GPT 的模型 TinyGPT.*list"),
    ("caches-longer-than-context", lambda: P.new_caches(6), ValueError, r"capacity=6 太大：模型最多看 context 个字，上限是 5"),
    ("caches-zero", lambda: P.new_caches(0), ValueError, r"capacity 必须是正整数"),
    ("start", call(gm.embed_positions, P, np.array([1, 2]), start=4), ValueError, r"从第 4 个位置起"),
    ("h-shape", call(gm.output_logits, P, np.ones((2, 3))), ValueError, "h 的形状"),
]
test_documented_errors = error_table_test(ERROR_CASES)
