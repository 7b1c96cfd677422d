"""第 11 章的实验：同一段文字切成多少个词元、词表大小要付出什么，以及在 BPE 词元上重新训练第 9 章的小 GPT。

* ``book_bpe``：本书的 BPE——在第 9 章的训练文字上训练出的合并规则（考题不参与），``SIZES`` 是本章比较的词表大小；
* ``PARALLEL``：意思相同的中英文句子对（本章自己写的），各分词器在**同样的意思**上比词元数；
* ``vocab_sweep``：一份合并规则截到不同的词表大小（BPE 是贪心的：训练 k 条规则 = 更长的训练的前 k 条），
  每种大小下几段文字各切成几个词元；
* ``train_on_ids`` / ``bits_per_char``：第 9 章的小 GPT 换成任意一串词元编号来训练（同样的模型、优化器、训练循环），
  以及把损失换算成**每个字多少比特**——词元不一样长时，只有按字算才公平。

第 9 章的 ``tiny_gpt.train`` 从文字里数出字表；这里的词元编号由调用者给（例如 ``bpe.encode`` 的结果）。
本模块只依赖 NumPy 和本包的 ``core``、``lessons``。
"""

from __future__ import annotations

from functools import cache

import numpy as np

from .. import _validation as check
from . import bpe
from .corpus import held_out_split, load_corpus
from .gpt_model import GPTConfig, TinyGPT, init_gpt
from .optim import Run, train_loop
from .tiny_gpt import decaying_adam, loss_and_grads, mean_loss, windows

__all__ = ["book_bpe", "SIZES", "MAX_MERGES", "PARALLEL", "vocab_sweep", "rare_tokens", "train_on_ids", "bits_per_char"]

SIZES = (256, 512, 768, 1024, 1536, 2048, 3072, 4096)  # 本章比较的词表大小（256 = 只有字节，不合并）
MAX_MERGES = SIZES[-1] - 256


@cache
def book_bpe() -> tuple[tuple[int, int], ...]:
    """本书的 BPE：在本书正文的**训练文字**（``corpus.held_out_split`` 的训练部分，和第 9 章的小 GPT 读的一样）上
    训练 ``MAX_MERGES`` 条合并规则（``bpe.train``，不预切分）。考题从不参与，所以在考题上量的词元数是"没见过的文字"。
    一个进程里只算一次；返回只读的元组。

    Examples
    --------
    >>> merges = book_bpe()
    >>> len(merges), bpe.decode([256 + 4], merges)          # 第 5 条合并学出的词元：一个完整的汉字
    (3840, '的')
    """
    train_text, _ = held_out_split(load_corpus())
    return tuple(bpe.train(train_text, MAX_MERGES))


# 意思相同的中英文句子对：本章自己写的，不在本书的语料里。
PARALLEL = (
    ("注意力让每个词都能看到句子里的其他词。", "Attention lets every word look at the other words in the sentence."),
    ("模型一次只猜一个词元，猜完接上，再猜下一个。", "The model guesses one token at a time, appends it, and guesses again."),
    ("分词器把文字切成词元，再换成编号。", "The tokenizer cuts text into tokens and turns them into numbers."),
    ("上下文越长，注意力的计算就越贵。", "The longer the context, the more expensive attention becomes."),
    ("那只猫在沙发上睡了一整天。", "The cat slept on the sofa all day."),
    ("今天下午我们在图书馆见面，好吗？", "Shall we meet at the library this afternoon?"),
)


def _texts(texts: object) -> tuple[str, ...]:
    if isinstance(texts, str) or not isinstance(texts, (list, tuple)) or not texts:
        raise TypeError(f"texts 必须是非空的字符串列表（几段文字），收到的是 {check.describe(texts)}。")
    for i, t in enumerate(texts):
        if not isinstance(t, str) or not t:
            raise TypeError(f"texts[{i}] 必须是非空的字符串，收到的是 {check.describe(t)}。")
    return tuple(texts)


def vocab_sweep(merges: list[tuple[int, int]], sizes: tuple[int, ...], texts: tuple[str, ...]) -> np.ndarray:
    """每种词表大小下，每段文字切成几个词元：(len(sizes), len(texts)) 的整数数组。

    词表大小 V = 256 + 合并条数：用 ``merges`` 的前 V − 256 条编码（BPE 是贪心的，训练到 V 和训练到更大再截短，
    得到的前 V − 256 条规则完全一样）。

    Raises
    ------
    TypeError
        ``texts`` 不是非空字符串的列表，或 ``sizes`` 里有不是整数的项。
    ValueError
        某个词表大小小于 256 或大于 256 + len(merges)。

    Examples
    --------
    >>> merges = bpe.train("注意力注意", 10)
    >>> vocab_sweep(merges, (256, 261), ("注意力注意",)).tolist()      # 5 个字 = 15 个字节；合并 5 次后剩 5 个词元
    [[15], [5]]
    """
    texts = _texts(texts)
    merges = list(merges)
    out = np.zeros((len(sizes), len(texts)), dtype=np.int64)  # (S, N)
    for i, size in enumerate(sizes):
        size = check.positive_int(size, f"sizes[{i}]")
        if not 256 <= size <= 256 + len(merges):
            raise ValueError(f"sizes[{i}] = {size} 不在 [256, {256 + len(merges)}] 之内：词表 = 256 个字节 + "
                             f"最多 {len(merges)} 条合并规则。")
        out[i] = [len(bpe.encode(t, merges[:size - 256])) for t in texts]
    return out


def rare_tokens(ids: list[int], vocab_size: int, at_most: int) -> int:
    """词表里有几个词元在 ``ids``（例如训练文字的编码）里最多出现 ``at_most`` 次：它们的嵌入几乎学不到东西。

    Raises
    ------
    TypeError, ValueError
        ``vocab_size`` 或 ``at_most`` 不是正整数，或 ``ids`` 里有越界的编号。

    Examples
    --------
    >>> rare_tokens([0, 0, 0, 1, 2, 2], vocab_size=4, at_most=1)        # 编号 1 出现 1 次，编号 3 一次也没有
    2
    """
    V = check.positive_int(vocab_size, "vocab_size")
    at_most = check.positive_int(at_most, "at_most")
    ids = check.token_ids(np.asarray(ids), "ids", V)
    return int(np.count_nonzero(np.bincount(ids.ravel(), minlength=V) <= at_most))


def train_on_ids(rng: np.random.Generator, train_ids: np.ndarray, test_ids: np.ndarray, vocab_size: int,
                 steps: int = 300, batch_size: int = 4, context: int = 256, lr: float = 5e-3,
                 checkpoint_every: int = 20, d_model: int = 64, num_layers: int = 2, d_ff: int = 256,
                 num_heads: int = 4) -> Run:
    """第 9 章的小 GPT，在一串给定的词元编号上从零训练：和 ``tiny_gpt.train`` 同样的模型、同样的 Adam
    （学习率直线降到十分之一）、同样的训练循环，只是词元不再是一个个字，而是调用者编好的编号。

    每一步从 ``train_ids`` 里随机截 ``batch_size`` 段、每段 ``context`` 个词元；初始参数和每一批都从 ``rng`` 抽。

    Returns
    -------
    Run
        （只读）``losses`` (steps + 1,)、``checkpoint_steps`` (C,)、``checkpoints`` C 个 ``TinyGPT``、``config``、
        ``test_loss`` (C,)：每个检查点在 ``test_ids`` 上每个词元的平均损失（``tiny_gpt.mean_loss``）。

    Raises
    ------
    TypeError, ValueError
        编号越界或不是一维整数数组、训练文字不够一段 ``context``、尺寸不合法（见 ``GPTConfig``）、训练发散。
    """
    rng = check.generator(rng)
    config = GPTConfig(vocab_size, d_model, num_layers, num_heads, d_ff, context)
    train_ids = check.token_ids(np.asarray(train_ids), "train_ids", config.vocab_size)
    test_ids = check.token_ids(np.asarray(test_ids), "test_ids", config.vocab_size)
    model = init_gpt(config, rng)

    def batch_loss(params):
        return loss_and_grads(TinyGPT(config, params), *windows(train_ids, context, batch_size, rng))

    run = train_loop(model.params, batch_loss, decaying_adam(lr, steps), steps, checkpoint_every)
    models = [TinyGPT(config, params) for params in run["checkpoints"]]
    return run.with_fields(checkpoints=models, config=config,
                           test_loss=np.array([mean_loss(m, test_ids) for m in models]))


def bits_per_char(model: TinyGPT, ids: np.ndarray, num_chars: int) -> float:
    """一段文字上的**每字比特数**：模型猜这段文字的全部损失（自然对数，``tiny_gpt.mean_loss`` × 猜的词元数），
    换成以 2 为底，再除以这段文字的字数。

    每个词元的损失不能直接比：一个 BPE 词元常常是两三个字，猜中它比猜中一个字难，也值得多。按字摊开才公平。
    两种模型都不猜第一个词元（它前面什么也没有），所以分母是 ``num_chars`` − 1；BPE 的第一个词元若不止一个字，
    这一点点差别小于千分之一。

    Raises
    ------
    TypeError, ValueError
        ``num_chars`` 不是大于 1 的整数，或 ``ids`` 不是模型能读的编号（见 ``tiny_gpt.mean_loss``）。

    Examples
    --------
    >>> model = init_gpt(GPTConfig(4, d_model=8, num_layers=1, num_heads=2, d_ff=8, context=4), np.random.default_rng(0))
    >>> flat = TinyGPT(model.config, model.params | {"w_out": np.zeros((8, 4)), "b_out": np.zeros(4)})
    >>> round(bits_per_char(flat, np.array([0, 1, 2, 3, 0]), 5), 6)        # 4 个词元一样可能：每个 2 比特
    2.0
    """
    n = check.positive_int(num_chars, "num_chars")
    if n < 2:
        raise ValueError(f"num_chars 必须至少是 2（第一个字不猜，至少要猜一个字），收到的是 {n}。")
    ids = np.asarray(ids)
    loss = mean_loss(model, ids)
    predicted = ids.size - 1
    return float(loss * predicted / np.log(2) / (n - 1))
