"""反向传播的速度：反向时间 / 前向时间（同一次运行里测，打印比值；目标 ≤ 3×）；以及第 5 章一次训练的用时（目标 ≤ 2 s）。

    python -m benchmarks.backward_speed

形状：T = 256, D = 512, H = 8（d_k = 64）。
- 缩放点积注意力：q, k, v 为 (H, T, d_k) —— 也就是多头注意力内部每个头的形状；另测一个单头 (T, D)。
- 多头注意力：x (T, D)，四个 (D, D) 权重和偏置，自注意力，因果掩码。
每项取多次运行的中位数。反向包括重新计算前向的权重（没有缓存）。

为什么大约 2～2.5×：前向是 2 次矩阵乘 (q kᵀ, P v) 加一次 softmax；反向要重算 q kᵀ 和 softmax，
再做 4 次矩阵乘 (Pᵀ G, G vᵀ, ∂S k, ∂Sᵀ q)，共 5 次矩阵乘。矩阵乘占大头时（单头 d_k = 512）比值接近 5/2；
多头时每个头的 d_k = 64，逐元素的 softmax 占的比重更大，比值更低。
目标 (≤ 3×) 针对题目给的形状 T = 256, D = 512, H = 8；单头那一行只作参考。
"""

import numpy as np

from benchmarks import _harness  # noqa: F401  单线程 BLAS：须在导入 NumPy 之前
from benchmarks._harness import alternate, best
from transformer_lab.core.attention import (
    causal_mask,
    scaled_dot_product_attention,
    scaled_dot_product_attention_backward,
)
from transformer_lab.core.multihead import multi_head_attention, multi_head_attention_backward

T, D, H = 256, 512, 8
REPEATS = 25


def ratio(name, forward, backward, repeats=REPEATS):
    f, b = alternate({"forward": forward, "backward": backward}, repeats).values()  # 交替测，负载变化对两者一样
    print(f"{name:<46s} 前向 {f * 1e3:7.2f} ms   反向 {b * 1e3:7.2f} ms   反向/前向 = {b / f:.2f}×")
    return b / f


def main():
    rng = np.random.default_rng(0)
    mask = causal_mask(T)  # (T, T)
    results = {}
    for label, shape in ((f"(H={H}, T={T}, d_k={D // H})", (H, T, D // H)), (f"单头参考 (T={T}, d_k={D})", (T, D))):
        q, k, v, g = rng.normal(size=(4, *shape))  # 每个 shape
        results[label] = ratio(
            f"scaled_dot_product_attention {label}",
            lambda: scaled_dot_product_attention(q, k, v, mask=mask),
            lambda: scaled_dot_product_attention_backward(q, k, v, g, mask=mask),
        )
    x, grad_out = rng.normal(size=(2, T, D))  # (T, D)
    ws = dict(zip(("w_q", "w_k", "w_v", "w_o"), rng.normal(size=(4, D, D)) / np.sqrt(D)))  # 每个 (D, D)
    bs = dict(zip(("b_q", "b_k", "b_v", "b_o"), rng.normal(size=(4, D))))  # 每个 (D,)
    results["mha"] = ratio(
        f"multi_head_attention (T={T}, D={D}, H={H})",
        lambda: multi_head_attention(x, num_heads=H, mask=mask, **ws, **bs),
        lambda: multi_head_attention_backward(x, grad_out=grad_out, num_heads=H, mask=mask, **ws, **bs),
    )
    worst = max(r for label, r in results.items() if not label.startswith("单头"))
    print(f"T={T}, D={D}, H={H} 的最大比值 {worst:.2f}×（目标 ≤ 3×）：{'达标' if worst <= 3 else '未达标'}")
    training_run_seconds()


def training_run_seconds():
    """第 5 章一次训练（2 个头、48 句、1200 步）用多少秒；目标：单核 ≤ 2 s。另打印它相当于几次前向+反向。"""
    from transformer_lab.lessons.head_training import init_head_weights, train_heads, two_relation_task

    task = two_relation_task(48, np.random.default_rng(0))
    fastest = best({"train": lambda: train_heads(task, init_head_weights(16, 2, np.random.default_rng(1)), steps=1200)},
                   3)["train"]  # 取最快的一次：共享 CPU 上别人的负载只会让它变慢
    print(f"第 5 章一次训练（1200 步）：{fastest:.2f} s（目标 ≤ 2 s，单线程 BLAS）：{'达标' if fastest <= 2 else '未达标'}")


if __name__ == "__main__":
    main()
