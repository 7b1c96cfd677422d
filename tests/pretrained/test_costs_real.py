"""lessons/costs.py 新加的两个函数：手算的小例子、与 state dict 里真数出来的参数个数相同、与前向里每个矩阵乘法的规模相同。"""

import numpy as np
import pytest

from transformer_lab.lessons import costs
from transformer_lab.pretrained import load

from helpers.errors import error_table_test
from helpers.tiny_models import tiny_bert


def test_encoder_parameters_by_hand():
    """V = 10，P = 4，2 种句子类型，D = 2，L = 1，d_ff = 3：
    嵌入 (10 + 4 + 2)·2 + 2·2 = 36；注意力 4·2² + 4·2 = 24；前馈 2·2·3 + 3 + 2 = 17；LayerNorm 4·2 = 8；pooler 2² + 2 = 6。"""
    p = costs.encoder_parameters(10, 2, 1, 3, max_positions=4, pooler=True)
    assert p == {"embeddings": 36, "attention": 24, "feed_forward": 17, "layer_norms": 8, "pooler": 6, "total": 91}
    assert costs.encoder_parameters(10, 2, 2, 3, max_positions=4)["total"] == 36 + 2 * (24 + 17 + 8)


def test_parameters_equal_the_tiny_checkpoint(tmp_path):
    info, sd = tiny_bert(tmp_path, np.random.default_rng(0))
    model = load(info, tmp_path)
    counted = sum(v.size for v in model.state_dict.values() if v.dtype.kind == "f")
    sizes = model.config.sizes()
    assert costs.encoder_parameters(sizes["vocab_size"], sizes["d_model"], sizes["num_layers"], sizes["d_ff"],
                                    sizes["max_positions"], pooler=True)["total"] == counted


def test_parameters_equal_the_real_checkpoints(minilm, e5):
    counted = sum(v.size for v in minilm.state_dict.values() if v.dtype.kind == "f")
    assert counted == 22_713_216  # all-MiniLM-L6-v2：22.7 M（含用不到的 pooler）
    c = minilm.config
    assert costs.encoder_parameters(c.vocab_size, c.d_model, c.num_layers, c.d_ff, pooler=True)["total"] == counted
    c = e5.config  # 4 位文件里没有 pooler，词嵌入表不在 state_dict 里（25 万 × 384）
    counted = sum(v.size for v in e5.state_dict.values()) + c.vocab_size * c.d_model
    assert costs.encoder_parameters(c.vocab_size, c.d_model, c.num_layers, c.d_ff)["total"] == counted == 117_505_920


def count_matmul_multiply_adds(T, D, L, H, d_ff):
    """照前向一步步数：每个 (m × k) @ (k × n) 是 m·k·n 次乘加。"""
    d_k, total = D // H, 0
    for _ in range(L):
        total += 4 * T * D * D  # Q、K、V、W_O 四个投影
        total += H * (T * d_k * T + T * T * d_k)  # 每个头：q kᵀ、weights v
        total += T * D * d_ff + T * d_ff * D  # 前馈两层
    return total


@pytest.mark.parametrize("T", [1, 7, 32])
def test_encoder_costs_count_every_matmul(T):
    c = costs.encoder_costs(T, 30522, 384, 6, 12, 1536)
    assert c["multiply_adds"] == count_matmul_multiply_adds(T, 384, 6, 12, 1536)
    assert c["multiply_adds_per_token"] * T == c["multiply_adds"]
    assert c["kv_cache_bytes"] == 2 * 6 * T * 384 * 4
    assert c["weight_bytes"] == 4 * c["parameters"]["total"]
    assert costs.encoder_costs(T, 30522, 384, 6, 12, 1536, dtype="float16")["weight_bytes"] == c["weight_bytes"] // 2


def test_costs_from_model_config(minilm):
    c = costs.encoder_costs(32, **minilm.config.sizes())
    assert c["multiply_adds_per_token"] == 10_764_288 and c["parameters"]["total"] == 22_565_376


def test_decoder_parameters_by_hand():
    """V = 10，D = 4，L = 1，H = 2（d_k = 2），H_kv = 1，d_ff = 3：
    嵌入 10·4 = 40；注意力 W_q、W_o 各 4·4，W_k、W_v 各 4·(1·2)：2·16 + 2·8 = 48；SwiGLU 3·4·3 = 36；
    RMSNorm 每层 2·4，最后 4：12。"""
    p = costs.decoder_parameters(10, 4, 1, 2, 1, 3)
    assert p == {"embeddings": 40, "output": 0, "attention": 48, "feed_forward": 36, "norms": 12, "total": 136}
    untied = costs.decoder_parameters(10, 4, 2, 2, 2, 3, tied=False)   # 不共用输出矩阵、多头（H_kv = H）、两层
    assert untied == {"embeddings": 40, "output": 40, "attention": 2 * 64, "feed_forward": 72, "norms": 20,
                      "total": 300}


def test_decoder_parameters_equal_the_real_checkpoint(smollm2):
    """SmolLM2-135M：与 state dict 里逐个张量数出来的个数相同（GGUF 里没有单独的输出矩阵：共用词嵌入表）。"""
    c = smollm2.config
    counted = sum(v.size for v in smollm2.state_dict.values())
    p = costs.decoder_parameters(c.vocab_size, c.d_model, c.num_layers, c.num_heads, c.num_kv_heads, c.d_ff)
    assert p["total"] == counted == 134_515_008
    assert "output.weight" not in smollm2.state_dict
    k_rows = smollm2.state_dict["blk.0.attn_k.weight"].size
    assert p["attention"] == c.num_layers * (2 * c.d_model**2 + 2 * k_rows)


ERROR_CASES = [
    ("decoder-kv-heads", lambda: costs.decoder_parameters(10, 576, 1, 9, 2, 8), ValueError,
     r"num_heads=9 必须能被 num_kv_heads=2 整除"),
    ("decoder-heads", lambda: costs.decoder_parameters(10, 10, 1, 3, 1, 8), ValueError,
     r"d_model=10 必须能被 num_heads=3 整除"),
    ("decoder-tied", lambda: costs.decoder_parameters(10, 4, 1, 2, 1, 3, tied="yes"), TypeError, r"tied 必须是 bool"),
    ("decoder-vocab", lambda: costs.decoder_parameters(0, 4, 1, 2, 1, 3), ValueError, r"vocab_size 必须是正整数.*0"),
    ("parameters-vocab", lambda: costs.encoder_parameters(0, 4, 1, 8), ValueError, r"vocab_size 必须是正整数.*0"),
    ("parameters-pooler", lambda: costs.encoder_parameters(4, 4, 1, 8, pooler=1), TypeError, r"pooler 必须是 bool"),
    ("costs-heads", lambda: costs.encoder_costs(4, 10, 10, 1, 3, 8), ValueError, r"D=10 必须能被 num_heads=3 整除"),
    ("costs-dtype", lambda: costs.encoder_costs(4, 10, 8, 1, 2, 8, dtype="int8"), ValueError, r"dtype 必须是 float64"),
    ("costs-T", lambda: costs.encoder_costs(0, 10, 8, 1, 2, 8), ValueError, r"T 必须是正整数"),
]
test_documented_errors = error_table_test(ERROR_CASES)
