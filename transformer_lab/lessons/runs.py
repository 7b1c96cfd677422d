"""本书有名有姓的几次实验：训练，以及重复很多次的测量。

每一次实验在一个进程里只算一次（``functools.cache``），而且算完存到硬盘上（``stored.py``：钥匙里有全部源代码的
哈希，代码一改就重算）——一次 ``python dev.py test`` 里执行同一章的几个进程（nbval、建网站、JupyterLab）和测试
进程共用同一份，读者第二次运行 notebook 时也不必再等训练。结果只读（数组不可写、字典是只读映射）。
章节的 notebook 和可交互图用的是同一份：notebook 先取出来、打印几行，再把它交给 ``tl.explore`` 的图；
图的默认参数也从这里取，所以不交也不会重算。

* ``glasses(seed)``：第 3 章，从随机的小眼镜开始学 W_Q、W_K（150 步）。
* ``heads(seed)``：第 5 章，两个头在同一份数据上的三次训练：随机起点、两头完全相同、两头只差 1e-6。
* ``head_counts(seed)``：第 5 章，同一份数据上 1、2、4、8、16 个头，各从两个随机起点训练。
* ``head_roles(seed)``：第 5 章，两个头从四个随机起点训练：哪个头去看前一个词。
* ``depth(seed)``：第 8 章，三种叠法 × 1–16 层 × 12 个随机种子的梯度长度和位置相似度。
* ``reversal(seed, use_pe)``：第 8 章，从零训练倒序任务的小 Transformer（有 / 去掉位置编码）。
* ``gpt(seed)``：第 9 章，在本书正文上从零训练小 GPT，每个检查点写几段字。
* ``bpe_gpt(seed)``：第 11 章，同一个小 GPT、同样的设置，改在本书 BPE 的词元上训练。
* ``sft(seed)``、``lora(seed)``、``dpo(seed)``：第 13 章，从 ``gpt()`` 训练好的模型出发，指令微调、LoRA、偏好训练。

``CHAPTER_RUNS`` 列出各章真正用到的每一份（函数和章里给的参数）；要把全部实验预先算好（JupyterLab 测试）、
或者在测试里把它们全换掉，都从这张表取（``compute_all``）。加一份实验：写好函数，再在表里加一行——
``tests/lessons/test_runs.py`` 核对每个带 ``seed`` 的实验都在表里，notebook 和图里的每一种调用也都在表里。

本模块只依赖 NumPy。
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from functools import cache

import numpy as np

from .. import _validation as check
from . import assistant, bpe, tiny_gpt
from .corpus import held_out_split, load_corpus
from .deep_stack import MODES, stack_profile
from .generation import checkpoint_samples, generate
from .head_training import head_gap, init_head_weights, relation_mass, train_heads, two_relation_task
from .learned_glasses import chapter3_example, learn_query_key
from .optim import Run
from .stored import stored
from .tiny_transformer import train
from .tokenization import book_bpe, train_on_ids

__all__ = ["glasses", "heads", "head_counts", "head_roles", "depth", "reversal", "gpt", "bpe_gpt", "CHAPTER_RUNS", "compute_all",
           "GLASSES_STEPS", "HEAD_STEPS",
           "HEAD_COUNTS", "HEAD_COUNT_SEEDS", "ROLE_SEEDS", "DEPTHS", "DEPTH_SEEDS", "REVERSAL_STEPS", "GPT", "GPT_PROMPTS",
           "BPE_GPT_VOCAB", "BPE_GPT_NEW", "sft", "lora", "dpo"]

GLASSES_STEPS, GLASSES_EVERY = 150, 15
HEAD_STEPS, HEAD_EVERY = 1200, 40
HEAD_COUNTS, HEAD_COUNT_SEEDS, ROLE_SEEDS = (1, 2, 4, 8, 16), (1, 2), (1, 2, 3, 4)
DEPTHS, DEPTH_SEEDS = (1, 2, 4, 8, 16), 12
REVERSAL_STEPS, REVERSAL_EVERY = 600, 30
# 第 9 章的小 GPT：这些设置让训练在单核上一分钟之内跑完（见 benchmarks/generation_speed.py）
GPT = {"steps": 300, "checkpoint_every": 20, "batch_size": 4, "context": 256, "lr": 5e-3, "d_model": 64,
       "num_layers": 2, "d_ff": 256, "num_heads": 4}
GPT_PROMPTS, GPT_SAMPLE_LENGTH, GPT_SAMPLE_TEMPERATURE = ("注意力", "每个词", "训练"), 40, 0.8
# 第 11 章：BPE 的词表 = 256 个字节 + 768 条合并，和第 9 章的字表（一千多个字）差不多大；每段写 32 个词元
BPE_GPT_VOCAB, BPE_GPT_NEW = 1024, 32


def _seed(seed: object) -> int:
    return check.seed(seed)


def _train_glasses(seed: int) -> Run:
    example = chapter3_example()
    return learn_query_key(example["x"], example["target"], np.random.default_rng(seed), steps=GLASSES_STEPS,
                           checkpoint_every=GLASSES_EVERY)


@cache
def _glasses(seed: int) -> Run:
    return stored("glasses", lambda: _train_glasses(seed), seed)


def glasses(seed: int = 0) -> Run:
    """第 3 章：从随机的小眼镜出发，学到设计好的注意力（``learned_glasses.learn_query_key``，150 步，每 15 步存档）。

    Examples
    --------
    >>> run = glasses()
    >>> int(run["checkpoint_steps"][-1]), run is glasses()            # 同一个进程里只算一次
    (150, True)
    """
    return _glasses(_seed(seed))


def _train_heads(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    task = two_relation_task(48, rng)
    D = task["x"].shape[-1]
    same = init_head_weights(D, 2, np.random.default_rng(seed + 1), identical=True)
    noise = np.random.default_rng(seed + 2)
    starts = {"random": init_head_weights(D, 2, np.random.default_rng(seed + 1)), "identical": same,
              "nudged": {n: w + 1e-6 * noise.normal(size=w.shape) for n, w in same.items()}}
    runs = {"task": task}
    for name, params in starts.items():
        run = train_heads(task, params, num_heads=2, lr=1.0, steps=HEAD_STEPS, checkpoint_every=HEAD_EVERY)
        mass = np.stack([relation_mass(w, task["prev"], task["partner"]) for w in run["weights"]])  # (C, H, 2)
        runs[name] = run.with_fields(mass=mass, gap=np.array([head_gap(p, 2) for p in run["checkpoints"]]))
    return runs


@cache
def _heads(seed: int) -> Mapping:
    return stored("heads", lambda: _train_heads(seed), seed)


def heads(seed: int = 0) -> Mapping:
    """第 5 章的三次训练（数据和初始权重都由 ``seed`` 决定，结果确定），同一份数据 ``task``。

    Returns
    -------
    Mapping（只读）
        ``task``（``two_relation_task(48, default_rng(seed))``）；``random``、``identical``、``nudged``：
        ``train_heads`` 的 Run（1200 步、每 40 步存档，学习率 1.0），另加 ``mass`` (C, H, 2) 每个检查点上
        两个头分别放在"前一个词""搭档"上的注意力、``gap`` (C,) 两头权重之差（最大绝对值）。
        ``random`` 的起点是 ``init_head_weights(16, 2, default_rng(seed + 1))``；``identical`` 让两个头一模一样；
        ``nudged`` 在它上面加 1e-6 × 标准正态（``default_rng(seed + 2)``）。
    """
    return _heads(_seed(seed))


def _train_head_counts(seed: int) -> dict:
    task = heads(seed)["task"]
    D = task["x"].shape[-1]
    losses = [[train_heads(task, init_head_weights(D, h, np.random.default_rng(s)), num_heads=h, steps=HEAD_STEPS,
                           checkpoint_every=HEAD_STEPS)["losses"][-1] for s in HEAD_COUNT_SEEDS] for h in HEAD_COUNTS]
    return {"heads": np.array(HEAD_COUNTS), "seeds": np.array(HEAD_COUNT_SEEDS), "losses": np.array(losses)}


@cache
def _head_counts(seed: int) -> Mapping:
    return stored("head_counts", lambda: _train_head_counts(seed), seed)


def head_counts(seed: int = 0) -> Mapping:
    """第 5 章"头越多越好吗"：``heads(seed)`` 的同一份数据上，``HEAD_COUNTS`` 里的每种头数（D = 16，d_k = 16 / 头数），
    各从 ``HEAD_COUNT_SEEDS`` 里的两个随机起点 ``init_head_weights(16, 头数, default_rng(种子))`` 训练
    ``HEAD_STEPS`` 步（``train_heads``，学习率 1.0）。

    Returns
    -------
    Mapping（只读）
        ``heads`` (5,)、``seeds`` (2,)，以及 ``losses`` (5, 2)：第 i 种头数、第 j 个起点训练完的损失。

    Examples
    --------
    >>> counts = head_counts()
    >>> counts["losses"].shape, int(counts["heads"][np.argmin(counts["losses"][:, 0])])   # 2 个头最好
    ((5, 2), 2)
    """
    return _head_counts(_seed(seed))


def _train_head_roles(seed: int) -> dict:
    task = heads(seed)["task"]
    D = task["x"].shape[-1]
    mass = [relation_mass(train_heads(task, init_head_weights(D, 2, np.random.default_rng(s)), num_heads=2,
                                      steps=HEAD_STEPS, checkpoint_every=HEAD_STEPS)["weights"][-1],
                          task["prev"], task["partner"]) for s in ROLE_SEEDS]
    return {"seeds": np.array(ROLE_SEEDS), "mass": np.array(mass)}


@cache
def _head_roles(seed: int) -> Mapping:
    return stored("head_roles", lambda: _train_head_roles(seed), seed)


def head_roles(seed: int = 0) -> Mapping:
    """第 5 章"每个头固定负责某种语法吗"：``heads(seed)`` 的同一份数据上，两个头从 ``ROLE_SEEDS`` 里的四个随机起点
    ``init_head_weights(16, 2, default_rng(种子))`` 各训练 ``HEAD_STEPS`` 步。

    Returns
    -------
    Mapping（只读）
        ``seeds`` (4,)，以及 ``mass`` (4, 2, 2)：第 i 个起点训练完，每个头 (第二维) 放在"前一个词""搭档" (第三维)
        上的平均注意力（``relation_mass``）。

    Examples
    --------
    >>> roles = head_roles()
    >>> [int(np.argmax(m[:, 0])) + 1 for m in roles["mass"]]   # 看前一个词的是几号头：随起点而变
    [1, 2, 1, 2]
    """
    return _head_roles(_seed(seed))


def _measure_depth(seed: int) -> dict:
    out = {}
    for mode in MODES:
        for N in DEPTHS:
            runs = [stack_profile(N, mode, np.random.default_rng(seed + s)) for s in range(DEPTH_SEEDS)]
            out[mode, N] = {k: np.stack([r[k] for r in runs]) for k in ("grad", "similarity")}
    return out


@cache
def _depth(seed: int) -> Mapping:
    return stored("depth", lambda: _measure_depth(seed), seed)


def depth(seed: int = 0) -> Mapping:
    """第 8 章：每种叠法 × 每个层数 × 12 个随机种子（``seed``, ..., ``seed + 11``）的 ``stack_profile``。

    Returns
    -------
    Mapping（只读）
        键 ``(mode, N)``，mode 是 ``deep_stack.MODES`` 之一，N 是 ``DEPTHS`` 之一；值
        ``{"grad": (12, N + 1), "similarity": (12, N + 1)}``。
    """
    return _depth(_seed(seed))


@cache
def _reversal(seed: int, use_pe: bool) -> Run:
    return stored("reversal", lambda: train(np.random.default_rng(seed), steps=REVERSAL_STEPS,
                                            checkpoint_every=REVERSAL_EVERY, use_pe=use_pe), seed, use_pe)


def reversal(seed: int = 0, use_pe: bool = True) -> Run:
    """第 8 章：从随机初始参数训练倒序任务（``tiny_transformer.train``，600 步，每 30 步存档），有或去掉位置编码。

    两次训练用同一个种子：同样的初始参数、同样的训练串和考题，唯一的不同是位置编码。
    """
    return _reversal(_seed(seed), check.boolean(use_pe, "use_pe"))


def _train_gpt(seed: int) -> Run:
    run = tiny_gpt.train(np.random.default_rng(seed), **GPT)
    samples = checkpoint_samples(run, GPT_PROMPTS, GPT_SAMPLE_LENGTH, GPT_SAMPLE_TEMPERATURE, seed)
    return run.with_fields(samples=samples, prompts=np.array(GPT_PROMPTS))


def _gpt_on_disk(run: Run) -> Run:
    """存进硬盘的样子（``stored`` 只存数组、数、字符串、字典）：每个模型拆成参数字典，config 拆成尺寸的字典。"""
    return run.with_fields(checkpoints=[m.params for m in run["checkpoints"]], config=run["config"].sizes())


def _gpt_from_disk(run: Run) -> Run:
    """``_gpt_on_disk`` 的逆：同一个 config 配上每一份参数，检查点又是模型。"""
    config = tiny_gpt.GPTConfig(**run["config"])
    return run.with_fields(checkpoints=[tiny_gpt.TinyGPT(config, p) for p in run["checkpoints"]], config=config)


@cache
def _gpt(seed: int) -> Run:
    # 语料是 .txt，不在源代码的哈希里：把它的摘要也放进钥匙，换了语料存档就重算
    digest = hashlib.sha256(load_corpus().encode()).hexdigest()[:16]
    return _gpt_from_disk(stored("gpt", lambda: _gpt_on_disk(_train_gpt(seed)), seed, digest))


def gpt(seed: int = 0) -> Run:
    """第 9 章：在本书正文（``corpus.load_corpus``）上从零训练小 GPT（``tiny_gpt.train``，设置见 ``GPT``：
    2 层、D = 64、4 个头、上下文 256 个字，300 步，每 20 步存档）。

    Returns
    -------
    Run
        （只读）``tiny_gpt.train`` 的全部字段（``checkpoints`` 是模型 ``TinyGPT``，尺寸在 ``config`` 里），另加
        ``samples`` (C, 3)：每个检查点接着 ``GPT_PROMPTS`` 里的三个提示词各写 40 个字（温度 0.8，每段都从
        ``default_rng(seed)`` 重新开始，差别只来自模型）；``prompts`` 这三个提示词。
    """
    return _gpt(_seed(seed))


def _train_bpe_gpt(seed: int) -> Run:
    merges = book_bpe()[:BPE_GPT_VOCAB - 256]
    train_text, test_text = held_out_split(load_corpus())  # 和第 9 章同一份训练文字、同一份考题
    train_ids, test_ids = (np.array(bpe.encode(t, merges)) for t in (train_text, test_text))
    run = train_on_ids(np.random.default_rng(seed), train_ids, test_ids, BPE_GPT_VOCAB, **GPT)
    model, samples = run["checkpoints"][-1], []
    for prompt in GPT_PROMPTS:  # 每段都从 default_rng(seed) 重新开始，和第 9 章一样
        out = generate(model, np.array(bpe.encode(prompt, merges)), BPE_GPT_NEW, np.random.default_rng(seed),
                       temperature=GPT_SAMPLE_TEMPERATURE)
        samples.append(prompt + bpe.decode(out["tokens"].tolist(), merges, errors="replace"))
    return run.with_fields(merges=np.array(merges), samples=np.array(samples), prompts=np.array(GPT_PROMPTS))


@cache
def _bpe_gpt(seed: int) -> Run:
    digest = hashlib.sha256(load_corpus().encode()).hexdigest()[:16]
    return _gpt_from_disk(stored("bpe_gpt", lambda: _gpt_on_disk(_train_bpe_gpt(seed)), seed, digest))


def bpe_gpt(seed: int = 0) -> Run:
    """第 11 章：第 9 章的小 GPT（同样的 ``GPT`` 设置、同一份训练文字和考题、同一个种子），改在本书的 BPE 词元上
    从零训练：词表 ``BPE_GPT_VOCAB`` = 256 个字节 + ``tokenization.book_bpe()`` 的前 768 条合并。

    Returns
    -------
    Run
        （只读）``tokenization.train_on_ids`` 的全部字段（``test_loss`` 是考题上**每个词元**的平均损失），另加
        ``merges`` (768, 2) 用到的合并规则；``samples`` (3,)：最后一个检查点接着 ``GPT_PROMPTS`` 各写
        ``BPE_GPT_NEW`` 个词元（温度 0.8，每段从 ``default_rng(seed)`` 重新开始；半个汉字显示成 �）；``prompts``。
    """
    return _bpe_gpt(_seed(seed))


def _pretrained() -> tuple[tiny_gpt.TinyGPT, str]:
    """第 13 章的起点：第 9 章的小 GPT（``gpt()``，种子 0）训练完的模型和它的字表。"""
    run = gpt()
    return run["checkpoints"][-1], run["chars"]


@cache
def _sft(seed: int) -> Mapping:
    return stored("sft", lambda: assistant.sft_experiment(*_pretrained(), seed), seed, _corpus_digest())


def sft(seed: int = 0) -> Mapping:
    """第 13 章：第 9 章的模型在本书的问答上做指令微调（全部参数，``assistant.sft_experiment``，设置 ``assistant.SFT``：
    200 步、每批 8 道题、只在答案上算损失），``seed`` 决定每一步抽哪几道题。

    Returns
    -------
    Mapping（只读）
        ``losses`` (201,)、``checkpoint_steps`` (11,)、``final`` 训练完的参数、``trainable`` 参数个数、
        ``fixed_answers`` (11, 3) 每个存档对 ``assistant.FIXED_TERMS`` 的回答、``scores``：每个存档在训练过的 /
        没训练过的题上格式对、答对的比例和平均字重合度（``trained_format`` (11,) ……，第 0 步就是预训练模型）、
        ``answers``、``pretrained_answers``：训练完 / 训练前对每道题的回答。
    """
    return _sft(_seed(seed))


def _sft_model(seed: int) -> tiny_gpt.TinyGPT:
    """``sft(seed)`` 训练完的模型：尺寸与第 9 章相同，参数是 ``sft(seed)["final"]``。"""
    return tiny_gpt.TinyGPT(_pretrained()[0].config, sft(seed)["final"])


@cache
def _lora(seed: int) -> Mapping:
    return stored("lora", lambda: assistant.lora_experiment(*_pretrained(), seed), seed, _corpus_digest())


def lora(seed: int = 0) -> Mapping:
    """第 13 章：同样的指令微调改用 LoRA（``assistant.lora_experiment``，设置 ``assistant.LORA``）：
    预训练的参数全部冻住，只训练注意力四个投影上的 A、B；``assistant.LORA_RANKS`` 里每个秩各一次，
    抽题的随机数与 ``sft(seed)`` 相同。

    Returns
    -------
    Mapping（只读）
        键 ``rank1``、``rank4`` ……；值有 ``losses`` (201,)、``trainable``、``lora`` 训练完的 A、B、``scores``（训练完的打分）。
    """
    return _lora(_seed(seed))


@cache
def _dpo(seed: int) -> Mapping:
    return stored("dpo", lambda: assistant.dpo_experiment(_sft_model(seed), _pretrained()[1]), seed, _corpus_digest())


def dpo(seed: int = 0) -> Mapping:
    """第 13 章：从 ``sft(seed)`` 训练完的模型出发（它也是参照模型）做 DPO（``assistant.dpo_experiment``，设置
    ``assistant.DPO``：100 步，每步用全部偏好对），``assistant.DPO_BETAS`` 里的每个 β 各一次。

    Returns
    -------
    Mapping（只读）
        键 ``beta0.1``、``beta0.5``、``beta2.0``；值有 ``losses`` (101,)、``margins`` (101, 12) 每一步每一对的
        log π(喜欢) − log π(不喜欢)、``ref_margins`` (12,)、``kl`` (11,) 每个存档离参照模型的平均 KL、
        ``wrong_answers`` (11,) 每个存档对"标错的那一对"那道题的贪心回答、``trained_right``、``trained_format``。
    """
    return _dpo(_seed(seed))


def _corpus_digest() -> str:
    return hashlib.sha256(load_corpus().encode()).hexdigest()[:16]


# 各章用到的每一份命名实验：(函数, 章里给它的参数)，没写 seed 的用默认种子。第 11 章把两个小 GPT 各多训练一次
# （种子 1），看两种词元的差别是不是比换一个种子的差别大。
CHAPTER_RUNS = ((glasses, {}), (heads, {}), (head_counts, {}), (head_roles, {}), (depth, {}),
                (reversal, {"use_pe": True}), (reversal, {"use_pe": False}), (gpt, {}), (bpe_gpt, {}),
                (gpt, {"seed": 1}), (bpe_gpt, {"seed": 1}), (sft, {}), (lora, {}), (dpo, {}))


def compute_all() -> None:
    """把 ``CHAPTER_RUNS`` 里的每一份都算好（硬盘上已经有的只是读一遍）。"""
    for run, kwargs in CHAPTER_RUNS:
        run(**kwargs)

