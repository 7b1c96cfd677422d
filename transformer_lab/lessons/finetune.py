"""第 13 章：在第 9 章预训练好的小 GPT 上做指令微调（全部参数 / LoRA）和偏好训练 (DPO)。

三种训练走的是同一条路——第 9 章的前向和本书手写的反向（``tiny_gpt.logits_vjp``），同一个训练循环
（``optim.train_loop``）和 Adam。不同的只有"损失是什么、梯度给谁"::

    指令微调 (SFT)   损失 = 只在答案的字上的交叉熵（core.masked_loss）            梯度给全部参数
    LoRA             同一个损失；W_Q、W_K、W_V、W_O 换成 W + (α/r)·A B（core.lora）  梯度只给 A、B（W 冻住）
    DPO              损失 = core.dpo.dpo_loss（喜欢的回答 vs 不喜欢的，对照参照模型）  梯度给全部参数

"一段回答的对数概率" log π(y | x) 是答案里每个字的 log 概率之和（``sequence_logp_vjp``），它对 logits 的梯度是
掩码 × (独热 − softmax)，再交给同一个反向。模型离参照模型有多远用每个答案位置上的 KL 散度量（``kl_from``）。
所有随机数来自传入的 ``rng``。本模块只依赖 NumPy 和 ``core``。
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .. import _validation as check
from ..core.dpo import dpo_loss
from ..core.lora import lora_grads, lora_merge
from ..core.loss import log_softmax_unchecked
from ..core.masked_loss import masked_cross_entropy, masked_cross_entropy_backward
from .instructions import sft_batch
from .optim import Run, adam_step, train_loop
from .tiny_gpt import TinyGPT, check_model, logits_vjp

__all__ = ["LORA_TARGETS", "sft_loss_and_grads", "init_lora", "merge_lora", "lora_loss_and_grads", "finetune",
           "sequence_logp_vjp", "kl_from", "dpo_train"]

LORA_TARGETS = ("w_q", "w_k", "w_v", "w_o")  # LoRA 改哪几个矩阵：每层注意力的四个投影


def sft_loss_and_grads(model: TinyGPT, tokens: np.ndarray, targets: np.ndarray,
                       loss_mask: np.ndarray) -> tuple[float, dict[str, np.ndarray]]:
    """只在答案上算的交叉熵，和它对全部参数的梯度：损失对 logits 的梯度交给第 9 章的同一个反向。

    Raises
    ------
    TypeError, ValueError
        ``model`` 不是 TinyGPT、``tokens`` 越界或过长、``targets``/``loss_mask`` 不合法（见 ``masked_cross_entropy``）。
    """
    logits, backward = logits_vjp(model, tokens)  # (N, T, V)
    loss = masked_cross_entropy(logits, targets, loss_mask)
    return loss, backward(masked_cross_entropy_backward(logits, targets, loss_mask))


def init_lora(model: TinyGPT, rank: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """每层 ``LORA_TARGETS`` 里的每个 D×D 矩阵配一对 A (D, r)、B (r, D)：A ~ N(0, 1/D)，B = 0（一开始改动是 0）。

    Raises
    ------
    TypeError, ValueError
        ``model`` 不是 TinyGPT、``rank`` 不是 1 到 D 之间的整数、``rng`` 不是 Generator。

    Examples
    --------
    >>> from transformer_lab.lessons.tiny_gpt import GPTConfig, init_gpt
    >>> model = init_gpt(GPTConfig(10, d_model=8, num_layers=2, num_heads=2, d_ff=16, context=5), np.random.default_rng(0))
    >>> lora = init_lora(model, 2, np.random.default_rng(1))
    >>> len(lora), lora["layer0.w_q.a"].shape, lora["layer0.w_q.b"].shape, float(abs(lora["layer1.w_o.b"]).sum())
    (16, (8, 2), (2, 8), 0.0)
    """
    config = check_model(model).config
    D = config.d_model
    rank, rng = check.int_in_range(rank, "rank", 1, D), check.generator(rng)
    lora = {}
    for layer in range(config.num_layers):
        for k in LORA_TARGETS:
            lora[f"layer{layer}.{k}.a"] = rng.normal(0.0, 1.0 / np.sqrt(D), size=(D, rank))  # (D, r)
            lora[f"layer{layer}.{k}.b"] = np.zeros((rank, D))  # (r, D)
    return lora


def merge_lora(model: TinyGPT, lora: Mapping[str, np.ndarray], alpha: float) -> TinyGPT:
    """把 LoRA 的改动折回模型：每个被改的矩阵换成 W + (α/r)·A B，得到一个普通的 TinyGPT（一样大、一样快）。

    Raises
    ------
    TypeError, ValueError
        ``model`` 不是 TinyGPT、``lora`` 缺键或形状不对（见 ``core.lora.lora_merge``）。
    """
    model = check_model(model)
    if not isinstance(lora, Mapping):
        raise TypeError(f"lora 必须是 init_lora 给出的字典，收到的是 {check.describe(lora)}。")
    merged = dict(model.params)
    for name in _targets(model):
        if f"{name}.a" not in lora or f"{name}.b" not in lora:
            raise ValueError(f"lora 缺少 {name}.a 或 {name}.b：每个被改的矩阵都要有一对 A、B（用 init_lora 生成）。")
        merged[name] = lora_merge(model.params[name], lora[f"{name}.a"], lora[f"{name}.b"], alpha)
    return TinyGPT(model.config, merged)


def _targets(model: TinyGPT) -> list[str]:
    return [f"layer{layer}.{k}" for layer in range(model.config.num_layers) for k in LORA_TARGETS]


def lora_loss_and_grads(model: TinyGPT, lora: Mapping[str, np.ndarray], alpha: float, tokens: np.ndarray,
                        targets: np.ndarray, loss_mask: np.ndarray) -> tuple[float, dict[str, np.ndarray]]:
    """LoRA 的一步：合并后的模型算损失和全部梯度（同一个反向），再用链式法则只交出对 A、B 的梯度。

    Raises
    ------
    TypeError, ValueError
        与 ``merge_lora``、``sft_loss_and_grads`` 相同。
    """
    loss, grads = sft_loss_and_grads(merge_lora(model, lora, alpha), tokens, targets, loss_mask)
    out = {}
    for name in _targets(model):
        g = lora_grads(grads[name], lora[f"{name}.a"], lora[f"{name}.b"], alpha)
        out[f"{name}.a"], out[f"{name}.b"] = g["a"], g["b"]
    return loss, out


def finetune(model: TinyGPT, chars: str, pairs: Sequence[tuple[str, str]], rng: np.random.Generator, steps: int,
             lr: float, batch_size: int = 8, checkpoint_every: int = 20, rank: int | None = None,
             alpha: float = 8.0, lora_rng: np.random.Generator | None = None) -> Run:
    """指令微调：每一步从 ``pairs`` 里不放回地抽 ``batch_size`` 道题，只在答案上算损失，Adam 走一步。

    ``rank`` 是 None 时训练全部参数；给了秩就是 LoRA：冻住 ``model`` 的全部参数，只训练注意力四个投影上的 A、B
    （初始值从 ``lora_rng`` 抽）。两种做法用同一个 ``rng`` 抽题：同一个种子，每一步看到的是同样的题。

    Returns
    -------
    Run
        （只读）``losses`` (steps + 1,)；``checkpoints``：全部参数时是每一份参数字典，LoRA 时是每一份 A、B 的字典；
        ``trainable``：要训练的数的个数。

    Raises
    ------
    TypeError, ValueError
        ``model`` 不是 TinyGPT、``pairs`` 里有字表之外的字、``batch_size`` 大于题数、LoRA 却没给 ``lora_rng``，
        以及 ``train_loop`` 的报错（步数、发散）。
    """
    model, rng = check_model(model), check.generator(rng)
    batch_size = check.int_in_range(batch_size, "batch_size", 1, len(pairs))
    pairs = list(pairs)

    def batch():
        return sft_batch([pairs[i] for i in rng.choice(len(pairs), batch_size, replace=False)], chars)

    if rank is None:
        def loss_fn(params):
            return sft_loss_and_grads(TinyGPT(model.config, params), *batch())
        start = model.params
    else:
        if lora_rng is None:
            raise ValueError("LoRA（给了 rank）要从 lora_rng 抽 A 的初始值：请传 lora_rng=np.random.default_rng(种子)。")
        start = init_lora(model, rank, lora_rng)

        def loss_fn(params):
            return lora_loss_and_grads(model, params, alpha, *batch())
    run = train_loop(start, loss_fn, adam_step(lr), steps, checkpoint_every)
    return run.with_fields(trainable=int(sum(w.size for w in start.values())))


def sequence_logp_vjp(model: TinyGPT, tokens: np.ndarray, targets: np.ndarray, loss_mask: np.ndarray):
    """每一段回答的对数概率 log π(y | x) = Σ_{答案位置 t} log softmax(logits_t)[target_t]，和它的反向函数。

    返回 ``(logp (N,), backward)``；``backward(g)`` 把损失对每段对数概率的梯度 g (N,) 传回全部参数：
    对 logits 的梯度是 g_i · mask_it · (onehot − softmax)，再交给 ``tiny_gpt.logits_vjp`` 的反向。

    Raises
    ------
    TypeError, ValueError
        ``model`` 不是 TinyGPT、``tokens`` 越界或过长。
    """
    logits, backward = logits_vjp(model, tokens)  # (N, T, V)
    log_p = log_softmax_unchecked(logits)  # (N, T, V)
    picked = np.take_along_axis(log_p, targets[..., None], axis=-1)[..., 0]  # (N, T)
    logp = np.where(loss_mask, picked, 0.0).sum(axis=-1)  # (N,)
    onehot = np.arange(logits.shape[-1]) == targets[..., None]  # (N, T, V)

    def back(g: np.ndarray) -> dict[str, np.ndarray]:
        return backward(g[:, None, None] * np.where(loss_mask[..., None], onehot - np.exp(log_p), 0.0))

    return logp, back


def kl_from(model: TinyGPT, reference: TinyGPT, tokens: np.ndarray, loss_mask: np.ndarray) -> float:
    """模型离参照模型有多远：答案位置上下一个字的分布的 KL(π ‖ π_ref) 的平均（单位：nat，一样时是 0）。

    Raises
    ------
    TypeError, ValueError
        某个模型不是 TinyGPT、``tokens`` 越界或过长。
    """
    log_p = log_softmax_unchecked(logits_vjp(model, tokens)[0])  # (N, T, V)
    log_q = log_softmax_unchecked(logits_vjp(reference, tokens)[0])  # (N, T, V)
    kl = (np.exp(log_p) * (log_p - log_q)).sum(axis=-1)  # (N, T)
    return float(kl[loss_mask].mean())


def dpo_train(policy: TinyGPT, chars: str, preferences: Sequence[Mapping[str, str]], beta: float, steps: int,
              lr: float, checkpoint_every: int = 10) -> Run:
    """DPO：从 ``policy``（也是冻住的参照模型 π_ref）出发，每一步用全部偏好对算 ``dpo_loss``，Adam 走一步。

    Returns
    -------
    Run
        （只读）``losses`` (steps + 1,)；``checkpoints`` 参数字典；``margins`` (steps + 1, N)：每一步每一对的
        log π(y_w) − log π(y_l)（喜欢的减不喜欢的）；``ref_margins`` (N,)：参照模型的同一个数。

    Raises
    ------
    TypeError, ValueError
        ``policy`` 不是 TinyGPT、偏好对里有字表之外的字、``beta`` 不是正数，以及 ``train_loop`` 的报错。
    """
    reference = check_model(policy)
    beta = check.positive_real(beta, "beta")
    chosen = sft_batch([(p["term"], p["chosen"]) for p in preferences], chars)
    rejected = sft_batch([(p["term"], p["rejected"]) for p in preferences], chars)
    ref_w, ref_l = sequence_logp_vjp(reference, *chosen)[0], sequence_logp_vjp(reference, *rejected)[0]
    margins = []

    def loss_fn(params):
        model = TinyGPT(reference.config, params)
        (pw, back_w), (pl, back_l) = sequence_logp_vjp(model, *chosen), sequence_logp_vjp(model, *rejected)
        margins.append(pw - pl)
        loss, g_w, g_l = dpo_loss(pw, pl, ref_w, ref_l, beta)
        grads_w, grads_l = back_w(g_w), back_l(g_l)
        return loss, {k: grads_w[k] + grads_l[k] for k in grads_w}

    run = train_loop(reference.params, loss_fn, adam_step(lr), steps, checkpoint_every)
    return run.with_fields(margins=np.array(margins), ref_margins=ref_w - ref_l)
