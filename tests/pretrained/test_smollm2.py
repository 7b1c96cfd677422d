"""第 12 章的真 GPT：SmolLM2-135M-Instruct（fixture ``smollm2``：wheel 不在时本地跳过，CI 里失败）。

- ``logits`` 与独立参照（``helpers/llama_reference.py``：float64、逐个头、还原次序后用前后两半的 RoPE、不用缓存）
  在一句短提示词上相差不到最大打分的 1e-5（实测约 3e-6），每个位置的 argmax 相同；
- 贪心生成用不用 KV 缓存逐个相同，写出的是通顺的英文（"Paris"）；
- state_dict：GGUF 里的 272 个张量，名字原样，float32，只读；config 读自元数据；
- 对话模板：和 jinja2 按文件里的模板原文渲染出的文字相同；中文：每个汉字约两个词元。
"""

import jinja2
import numpy as np

from helpers.llama_reference import reference_logits

PROMPT = "The capital of France is"


def test_config_and_state_dict(smollm2):
    c = smollm2.config
    assert (c.vocab_size, c.d_model, c.num_layers, c.num_heads, c.num_kv_heads, c.d_ff, c.context) == (
        49152, 576, 30, 9, 3, 1536, 8192)
    assert c.rope_base == 100000.0 and abs(c.eps - 1e-5) < 1e-9
    sd = smollm2.state_dict
    assert len(sd) == 272 and all(a.dtype == np.float32 and not a.flags.writeable for a in sd.values())
    assert sd["token_embd.weight"].shape == (49152, 576) and sd["blk.0.attn_k.weight"].shape == (192, 576)
    assert sum(a.size for a in sd.values()) == 134_515_008  # 1.35 亿个参数（输出层与词嵌入表共用，不重复算）


def test_logits_match_the_independent_reference(smollm2):
    ids = smollm2.encode("The capital of France is Paris, and")
    got = smollm2.logits(ids)
    want = reference_logits(smollm2.state_dict, smollm2.config, ids)
    assert got.dtype == np.float32 and got.shape == (len(ids), 49152)
    assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()
    assert (got.argmax(axis=1) == want.argmax(axis=1)).all()


def test_greedy_generation_with_and_without_the_cache(smollm2):
    ids = smollm2.encode(PROMPT)
    new = smollm2.generate(ids, 6)
    assert new == smollm2.generate(ids, 6, use_cache=False)
    assert smollm2.decode(new).startswith(" Paris")


def test_chat_template_and_answer(smollm2):
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    template = smollm2.metadata["tokenizer.chat_template"]
    ids = smollm2.chat(messages)
    assert smollm2.decode(ids) == jinja2.Template(template).render(messages=messages, add_generation_prompt=True)
    answer = smollm2.generate(ids, 20)
    assert answer[-1] == 2 and "Paris" in smollm2.decode(answer)  # 以 <|im_end|> 结束


def test_chinese_is_about_two_tokens_per_character(smollm2):
    text = "注意力机制让模型在写每一个字时回头看前文。"
    ids = smollm2.encode(text)
    assert smollm2.decode(ids) == text and 1.5 < len(ids) / len(text) < 2.5
