"""第 13 章第一节：真模型有多大、读了多少文字、训练要算多少次，本书的小 GPT 放在旁边比。

* ``PUBLISHED``：几个读者听说过的模型（GPT-2、GPT-3、LLaMA 2、Qwen2.5、DeepSeek-V3、SmolLM2-135M），每个数都写明
  出处：论文或报告的标题、arXiv 编号（或网址）、数字在哪张表哪一节。论文没有给出的数存 ``None`` 并说明原因，不拿估计冒充。
  一个系列有好几种尺寸的，只列一种，``variant`` 里说明列的是哪一种。
* ``book_gpt()``：第 9 章的小 GPT——参数个数由它的尺寸 (``GPTConfig``) 数出来，训练读过的字数 = 步数 × 每批段数 × 每段字数
  （``runs.GPT``），语料多大（``corpus.load_corpus``、``held_out_split``）。都是算出来的，不是抄的。
* 算力：``training_flops``（6·N·D 法则），``time_training_step`` 在读者自己的电脑上量一步训练，``on_this_computer``
  把每个模型的 6·N·D 折算成读者的电脑要算多久，``readable_duration`` 写成"秒 / 分钟 / 小时 / 天 / 年 / 约 N 万年"。
* 数据：``book_tokens()`` 本书语料有多少字、多少个第 11 章的 BPE 词元；``data_ratio`` 真模型读的是它的多少倍；
  ``PRETRAINING_DATA`` 预训练数据是什么（网页、书、百科、代码……），带出处。

本模块只依赖 NumPy 和本包。时间只在 ``time_training_step`` 里量（时钟可以换成假的，测试因此是确定的）。
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np

from .. import _validation as check
from . import bpe
from .corpus import held_out_split, load_corpus, vocabulary
from .costs import decoder_parameters
from .gpt_model import GPTConfig, TinyGPT, init_gpt
from .optim import adam
from .runs import BPE_GPT_VOCAB, GPT
from .tiny_gpt import loss_and_grads
from .tokenization import book_bpe

__all__ = ["Source", "PublishedModel", "PUBLISHED", "PRETRAINING_DATA", "GPT3_REPORTED_FLOPS", "GPT3_REPORTED_PF_DAYS",
           "book_gpt", "training_flops", "time_training_step", "on_this_computer", "duration_parts", "readable_duration",
           "book_tokens", "data_ratio"]


@dataclass(frozen=True)
class Source:
    """一个数字的出处：``cite`` 作者和年份，``title`` 论文或报告的标题，``url`` arXiv 或网址，
    ``where`` 每个数在哪里（字段名 → "Table 2" 这样的位置）。"""

    cite: str
    title: str
    url: str
    where: dict[str, str]


@dataclass(frozen=True)
class PublishedModel:
    """表里的一行。``parameters`` 是总参数；``active_parameters`` 是每个词元真正参与计算的参数（稠密模型两者相同，
    混合专家 (MoE) 模型只用其中几位"专家"）；``tokens`` 训练读过的词元数（论文没有给出时为 ``None``，``note`` 说明）；
    ``context`` 上下文长度（词元）；``variant`` 这个系列有哪几种尺寸、列的是哪一种。"""

    name: str
    organisation: str
    year: int
    parameters: int
    active_parameters: int
    tokens: int | None
    context: int
    variant: str
    note: str
    source: Source

    @property
    def moe(self) -> bool:
        """是不是混合专家模型（每个词元只用一部分参数）。"""
        return self.active_parameters != self.parameters


_B, _T = 10**9, 10**12  # 十亿 (billion)、万亿 (trillion)

_GPT2 = PublishedModel(
    "GPT-2", "OpenAI", 2019, 1542 * 10**6, 1542 * 10**6, None, 1024,
    "论文训练了 117M、345M、762M、1542M 四种尺寸（Table 2），列的是最大的 1542M（论文里叫 GPT-2 的就是它）。",
    "训练词元数：论文没有给出。只说训练数据 WebText 是 800 多万篇网页、约 40 GB 文字（§2.1），没有说训练了多少个词元、"
    "读了几遍，所以算不出 6·N·D。",
    Source("Radford et al. 2019", "Language Models are Unsupervised Multitask Learners",
           "https://cdn.openai.com/better-language-models/language_models_are_unsupervised_multitask_learners.pdf",
           {"parameters": "Table 2", "context": "§2.3（上下文从 512 加到 1024 个词元）",
            "tokens": "论文没有给出（§2.1 只给出 WebText 约 40 GB、800 多万篇文档）"}))
_GPT3 = PublishedModel(
    "GPT-3", "OpenAI", 2020, 175 * _B, 175 * _B, 300 * _B, 2048,
    "论文训练了 125M 到 175B 共 8 种尺寸（Table 2.1），列的是最大的 175B。",
    "论文 Table D.1 给出 175B 的训练算力 3.64E+03 petaflop/s-days = 3.14E+23 FLOPs，可以拿来核对 6·N·D。",
    Source("Brown et al. 2020", "Language Models are Few-Shot Learners", "https://arxiv.org/abs/2005.14165",
           {"parameters": "Table 2.1", "tokens": "§2.2 与 Table 2.2（所有模型都训练了 3000 亿个词元）",
            "context": "§2.1（n_ctx = 2048）", "compute": "Table D.1"}))
_LLAMA2 = PublishedModel(
    "LLaMA 2", "Meta", 2023, 70 * _B, 70 * _B, 2 * _T, 4096,
    "一个系列：7B、13B、70B（Table 1；三种都读了 2.0T 个词元、上下文 4k），列的是最大的 70B。70B 是论文的写法（约数）。",
    "词元数只算预训练数据（Table 1 的说明）；之后的指令微调和 RLHF 另算。",
    Source("Touvron et al. 2023", "Llama 2: Open Foundation and Fine-Tuned Chat Models", "https://arxiv.org/abs/2307.09288",
           {"parameters": "Table 1", "tokens": "Table 1（2.0T）", "context": "Table 1（4k）"}))
_QWEN25 = PublishedModel(
    "Qwen2.5", "阿里巴巴 (Qwen Team)", 2024, 72 * _B, 72 * _B, 18 * _T, 128 * 1024,
    "开放权重的稠密模型有 0.5B、1.5B、3B、7B、14B、32B、72B 七种，列的是最大的 72B；72B 是报告里的名字（约数）。",
    "18T 是整个系列的预训练数据量（从 Qwen2 的 7T 加到 18T）。上下文 128K 是 Table 1 给 72B 写的长度（一次最多生成 8K）。",
    Source("Qwen Team 2024", "Qwen2.5 Technical Report", "https://arxiv.org/abs/2412.15115",
           {"parameters": "Table 1（模型名）", "tokens": "摘要与 §3.1（18 trillion tokens）", "context": "Table 1（128K / 8K）"}))
_DEEPSEEK_V3 = PublishedModel(
    "DeepSeek-V3", "DeepSeek (深度求索)", 2024, 671 * _B, 37 * _B, 14_800 * _B, 128 * 1024,
    "只有一种尺寸。混合专家 (MoE)：总共 671B 个参数，每个词元只激活其中 37B。",
    "预训练用 4K 的上下文，之后分两步扩展到 32K、128K（§4.3）。",
    Source("DeepSeek-AI 2024", "DeepSeek-V3 Technical Report", "https://arxiv.org/abs/2412.19437",
           {"parameters": "摘要（671B 总参数，每个词元激活 37B）", "tokens": "摘要（14.8T）",
            "context": "§4.3 长上下文扩展（128K）"}))
_SMOL = decoder_parameters(49152, 576, 30, 9, 3, 1536)["total"]  # 第 12 章：与载入的权重逐个张量相等
_SMOLLM2 = PublishedModel(
    "SmolLM2-135M", "Hugging Face", 2025, _SMOL, _SMOL, 2 * _T, 8192,
    "一个系列：135M、360M、1.7B（论文的主角 1.7B 读了约 11T 个词元），列的是第 12 章运行的 135M。",
    f"参数个数 {_SMOL:,} 是按 config.json 的尺寸数出来的（costs.decoder_parameters，第 12 章核对过等于载入的权重）；"
    "名字里的 135M 是它的约数。2T 词元来自模型卡（论文摘要里的约 11T 说的是 1.7B）；"
    "上下文 8192 是 config.json 的 max_position_embeddings。",
    Source("Allal et al. 2025", "SmolLM2: When Smol Goes Big -- Data-Centric Training of a Small Language Model",
           "https://arxiv.org/abs/2502.02737",
           {"parameters": "config.json（https://huggingface.co/HuggingFaceTB/SmolLM2-135M）",
            "tokens": "模型卡 https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct 的 Training 一节"
                      "（Pretraining tokens: 2T；Instruct 版是在这个预训练模型上微调的）",
            "context": "config.json（max_position_embeddings = 8192）"}))

PUBLISHED = (_GPT2, _GPT3, _LLAMA2, _QWEN25, _DEEPSEEK_V3, _SMOLLM2)

# GPT-3 论文 Table D.1：175B 的训练算力。1 petaflop/s-day = 1e15 次/秒 × 86400 秒 = 8.64e19 次。
GPT3_REPORTED_PF_DAYS, GPT3_REPORTED_FLOPS = 3.64e3, 3.14e23

# 预训练数据是什么：GPT-3 的配方（Table 2.2：每一份有多少词元、训练时占多少比例），以及新一些的模型读的几类文字。
PRETRAINING_DATA = {
    "gpt3_mix": (("Common Crawl（过滤后的网页）", 410 * _B, 0.60), ("WebText2（Reddit 上有人点赞的链接指向的网页）", 19 * _B, 0.22),
                 ("Books1（书）", 12 * _B, 0.08), ("Books2（书）", 55 * _B, 0.08), ("英文维基百科", 3 * _B, 0.03)),
    "gpt3_source": "Brown et al. 2020, arXiv:2005.14165, Table 2.2（比例之和按论文四舍五入，不正好是 1）",
    "kinds": (("网页", "从公开网页抓来、再用规则和分类器过滤掉低质量的部分：量最大（GPT-3 的 60%；SmolLM2 的 FineWeb-Edu、DCLM）"),
              ("书和百科", "文字质量高、知识密集，训练时常被多读几遍（GPT-3 的 Books1/2、维基百科）"),
              ("代码", "GitHub 等处的程序（SmolLM2 的 Stack-Edu；Qwen2.5 预训练时专门加进了更好的代码和数学数据）"),
              ("数学和合成数据", "数学网页、由别的模型写出的题目和解答（SmolLM2 的 FineMath；Qwen2.5 的合成数据）")),
    "kinds_source": "Brown et al. 2020 §2.2；Allal et al. 2025（arXiv:2502.02737）摘要与预训练数据集一节；"
                    "Qwen Team 2024（arXiv:2412.15115）§3.1 预训练数据",
}


def _config() -> GPTConfig:
    sizes = {k: GPT[k] for k in ("d_model", "num_layers", "num_heads", "d_ff", "context")}
    return GPTConfig(len(vocabulary(load_corpus())), **sizes)


def book_gpt() -> dict[str, int]:
    """第 9 章的小 GPT 有多大、读了多少字（由 ``runs.GPT`` 的设置和语料算出，不训练）。

    Returns
    -------
    dict of int
        ``parameters`` 参数个数（``GPTConfig.shapes()`` 逐个相乘再相加），``vocab_size`` 字表大小，``context`` 上下文长度，
        ``tokens_per_step`` 每一步读的字数（每批段数 × 每段字数），``characters_seen`` 整个训练读过的字数（× 步数，
        同一个字可能被读好几遍），``corpus_characters`` 语料的字符数（含换行），``train_characters``、
        ``held_out_characters`` 训练文字和考题各多少字符（``held_out_split``，和第 9 章一样）。

    Examples
    --------
    >>> gpt = book_gpt()
    >>> gpt["tokens_per_step"], gpt["characters_seen"]        # 4 段 × 256 个字；再 × 300 步
    (1024, 307200)
    """
    config, text = _config(), load_corpus()
    train, held_out = held_out_split(text)
    per_step = GPT["batch_size"] * GPT["context"]
    return {"parameters": int(sum(np.prod(s) for s in config.shapes().values())), "vocab_size": config.vocab_size,
            "context": config.context, "tokens_per_step": per_step, "characters_seen": per_step * GPT["steps"],
            "corpus_characters": len(text), "train_characters": len(train), "held_out_characters": len(held_out)}


def training_flops(params: float, tokens: float) -> float:
    """训练要算多少次浮点运算：6·N·D（N 参数个数，D 训练读过的词元数）。

    每个词元经过每个参数：前向一次乘加 = 2 次运算，反向算两份梯度（对输入、对参数）约是前向的两倍 = 4 次，合计 6 次。
    注意力分数那部分不在里面（上下文不太长时只占几个百分点）。混合专家 (MoE) 模型要传**每个词元激活的参数**
    （``active_parameters``）：没被选中的专家这个词元根本不经过，不花算力。

    Raises
    ------
    TypeError, ValueError
        ``params`` 或 ``tokens`` 不是有限的正实数。

    Examples
    --------
    >>> training_flops(100, 1000)                           # 6 × 100 × 1000
    600000.0
    >>> f"{training_flops(175e9, 300e9):.3g}"                 # GPT-3：论文 Table D.1 写的是 3.14E+23
    '3.15e+23'
    """
    return 6.0 * check.positive_real(params, "params") * check.positive_real(tokens, "tokens")


def _median_step(step: Callable[[], None], repeats: int, clock: Callable[[], float]) -> np.ndarray:
    times = []
    for _ in range(repeats):
        start = clock()
        step()
        times.append(clock() - start)
    times = np.array(times, dtype=float)
    if not np.all(np.isfinite(times)) or np.any(times <= 0):
        raise ValueError(f"clock 量出的时间必须都是正数（时钟要一直往前走），收到的是 {times.tolist()}。"
                         "提示：用 time.perf_counter。")
    return times


def time_training_step(rng: np.random.Generator, config: GPTConfig | None = None, batch_size: int | None = None,
                       repeats: int = 5, clock: Callable[[], float] = time.perf_counter) -> dict:
    """在这台电脑上量第 9 章的小 GPT 训练一步要多久：一批随机字编号 → ``tiny_gpt.loss_and_grads`` → Adam 走一步。

    先不计时地走一步（让内存分配好），再走 ``repeats`` 步、每步前后各读一次 ``clock``，取中位数（不怕偶尔被别的程序打断）。
    一步算了 6·N·(每步词元数) 次运算，除以用时就是这台电脑实际达到的每秒运算次数 (FLOP/s)。

    Parameters
    ----------
    rng : np.random.Generator
        初始参数和这批字编号从它抽（用时只和形状有关，和是哪些字无关）。
    config : GPTConfig, optional
        模型的尺寸；默认是第 9 章的（``runs.GPT``，字表大小由语料决定）。
    batch_size : int, optional
        每批几段；默认 ``runs.GPT["batch_size"]``（4）。每段 ``config.context`` 个字。
    repeats : int
        计时几步（取中位数）。
    clock : callable
        返回秒数的时钟，默认 ``time.perf_counter``；测试里换成假的时钟，结果就是确定的。

    Returns
    -------
    dict
        ``times`` (repeats,) 每步用时（秒）；``seconds`` 中位数；``parameters`` N；``tokens_per_step``；
        ``flops_per_step`` = 6·N·每步词元数；``flops_per_second`` = 它 ÷ ``seconds``。

    Raises
    ------
    TypeError, ValueError
        ``rng`` 不是 Generator、``config`` 不是 GPTConfig、``batch_size`` 或 ``repeats`` 不是正整数、
        ``clock`` 不能调用，或量出的时间不是正数。
    """
    rng = check.generator(rng)
    config = _config() if config is None else config
    if not isinstance(config, GPTConfig):
        raise TypeError(f"config 必须是 GPTConfig（或不传，用第 9 章的尺寸），收到的是 {check.describe(config)}。")
    N = check.positive_int(GPT["batch_size"] if batch_size is None else batch_size, "batch_size")
    repeats = check.positive_int(repeats, "repeats")
    if not callable(clock):
        raise TypeError(f"clock 必须是可以调用的时钟（例如 time.perf_counter），收到的是 {check.describe(clock)}。")
    model, T = init_gpt(config, rng), config.context
    ids = rng.integers(0, config.vocab_size, size=(N, T + 1))  # (N, T + 1)
    tokens, targets = ids[:, :-1], ids[:, 1:]  # (N, T), (N, T) 往后错一位
    state = {"params": dict(model.params), "adam": {}}

    def step() -> None:
        _, grads = loss_and_grads(TinyGPT(config, state["params"]), tokens, targets)
        state["params"], state["adam"] = adam(state["params"], grads, state["adam"], lr=GPT["lr"])

    step()  # 热身，不计时
    times = _median_step(step, repeats, clock)
    parameters = int(sum(w.size for w in model.params.values()))
    flops = 6 * parameters * N * T
    seconds = float(np.median(times))
    return {"times": times, "seconds": seconds, "parameters": parameters, "tokens_per_step": N * T,
            "flops_per_step": flops, "flops_per_second": flops / seconds}


def on_this_computer(flops_per_second: float, models: tuple[PublishedModel, ...] = PUBLISHED) -> list[dict]:
    """每个模型的训练算力（6·N·D，MoE 用激活参数）按这台电脑每秒 ``flops_per_second`` 次要算多久。

    Returns
    -------
    list of dict
        每个模型一项：``name``、``flops``（论文没给词元数时为 ``None``）、``seconds``（同上）、``readable``
        （``readable_duration`` 的写法，或"论文没有给出训练词元数，算不出"）。

    Raises
    ------
    TypeError, ValueError
        ``flops_per_second`` 不是有限的正实数，或 ``models`` 里有一项不是 PublishedModel。

    Examples
    --------
    >>> row = on_this_computer(1e9)[1]                        # GPT-3，每秒十亿次
    >>> row["name"], row["readable"]
    ('GPT-3', '约 999 万年')
    """
    speed = check.positive_real(flops_per_second, "flops_per_second")
    rows = []
    for m in models:
        if not isinstance(m, PublishedModel):
            raise TypeError(f"models 里每一项都必须是 PublishedModel（例如 scale.PUBLISHED 里的），收到的是 {check.describe(m)}。")
        flops = None if m.tokens is None else training_flops(m.active_parameters, m.tokens)
        seconds = None if flops is None else flops / speed
        rows.append({"name": m.name, "flops": flops, "seconds": seconds,
                     "readable": "论文没有给出训练词元数，算不出" if seconds is None else readable_duration(seconds)})
    return rows


_YEAR = 365 * 86400  # 一年按 365 天算
_UNITS = (("秒", 1), ("分钟", 60), ("小时", 3600), ("天", 86400), ("年", _YEAR), ("万年", 10**4 * _YEAR),
          ("亿年", 10**8 * _YEAR))


def duration_parts(seconds: float) -> tuple[float, str, int]:
    """``readable_duration`` 用的三样：数值（不到 10 保留一位小数，否则取整）、单位、一个单位是多少秒。

    单位是不超过 ``seconds`` 的最大那个（不到 1 秒用"秒"）；数值 × 单位的秒数随 ``seconds`` 单调不减。

    Raises
    ------
    TypeError, ValueError
        ``seconds`` 不是实数，或是负数、NaN、无穷大。

    Examples
    --------
    >>> duration_parts(90), duration_parts(59.97)            # 59.97 秒四舍五入成 60 秒，还不到 1 分钟
    ((1.5, '分钟', 60), (60.0, '秒', 1))
    """
    s = check.finite_real(seconds, "seconds")
    if s < 0:
        raise ValueError(f"seconds 是一段时间，不能是负数，收到的是 {s}。")
    name, size = [u for u in _UNITS if s >= u[1]][-1] if s >= 1 else _UNITS[0]
    v = s / size
    return (round(v, 1) if v < 10 else float(round(v))), name, size


def readable_duration(seconds: float) -> str:
    """把秒数写成读者一眼能懂的中文：秒、分钟、小时、天、年；一万年起写"约 N 万年"，一亿年起写"约 N 亿年"。

    不到 10 保留一位小数，否则取整（``duration_parts``）。

    Raises
    ------
    TypeError, ValueError
        ``seconds`` 不是实数，或是负数、NaN、无穷大。

    Examples
    --------
    >>> [readable_duration(s) for s in (0.5, 42, 150, 7200, 3 * 86400)]
    ['0.5 秒', '42 秒', '2.5 分钟', '2.0 小时', '3.0 天']
    >>> year = 365 * 86400
    >>> readable_duration(10 * year), readable_duration(3.6e4 * year), readable_duration(2.5e8 * year)
    ('10 年', '约 3.6 万年', '约 2.5 亿年')
    """
    value, name, _ = duration_parts(seconds)
    text = f"{value:.1f}" if value < 10 else f"{value:.0f}"
    return f"约 {text} {name}" if name.endswith("万年") or name.endswith("亿年") else f"{text} {name}"


@cache
def book_tokens() -> dict[str, int]:
    """本书语料有多少：字符（第 9 章的小 GPT 一个字一个词元）、UTF-8 字节，以及第 11 章的 BPE 词元
    （``tokenization.book_bpe()`` 的前 ``BPE_GPT_VOCAB - 256`` 条合并，词表 1024，和 ``runs.bpe_gpt`` 一样）。
    只数训练文字（``held_out_split`` 的训练部分）：和小 GPT 读的一样。同一个进程里只算一次。

    Returns
    -------
    dict of int
        ``characters``、``bytes``、``bpe_tokens``。
    """
    train, _ = held_out_split(load_corpus())
    merges = book_bpe()[:BPE_GPT_VOCAB - 256]
    return {"characters": len(train), "bytes": len(train.encode("utf-8")), "bpe_tokens": len(bpe.encode(train, merges))}


def data_ratio(tokens: float, book: float) -> float:
    """真模型读的词元数是本书语料的多少倍（``tokens / book``）。

    Raises
    ------
    TypeError, ValueError
        ``tokens`` 或 ``book`` 不是有限的正实数（论文没给词元数的模型，``tokens`` 是 None，不能比）。

    Examples
    --------
    >>> data_ratio(2e12, 50_000)                              # 2T 个词元 ÷ 5 万个词元
    40000000.0
    """
    return check.positive_real(tokens, "tokens") / check.positive_real(book, "book")
