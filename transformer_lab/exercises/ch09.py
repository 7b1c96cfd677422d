"""第 9 章的练习：下一个词的概率（温度、top-k、top-p，规则和 ``tl.next_token_probs`` 相同），以及交叉熵损失。

每个常见错误都附一份（或几份）“错误的写法”，检查时在同样的输入上重算，读者的结果和它处处一样就报告这个错误。
测试输入的设计：温度不是 1（乘和除才不一样）、top-k/top-p 真的剪掉了词（不重新归一化才看得出来）、
top-p 的门槛落在两个词之间（漏掉“跨过门槛的那个词”才看得出来）；交叉熵有不止一个位置（求和和平均才不一样）、
有负的打分（log 负数是 nan）、有很大的打分（不减最大值就溢出）。
"""

from __future__ import annotations

import numpy as np

from .checker import Case, Exercise, Mistake

__all__ = ["EXERCISES"]


# ---------------------------------------------------------------- next_token_probs


def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
    logits = np.asarray(logits, dtype=float)
    V = len(logits)
    if temperature == 0:                                  # 贪心：全部概率给打分最高的词（并列时给编号小的）
        return (np.arange(V) == np.argmax(logits)).astype(float)
    z = (logits - logits.max()) / temperature             # (V,) 先减最大值（不溢出），再除以温度
    probs = np.exp(z) / np.exp(z).sum()                   # (V,) softmax
    order = np.argsort(-logits, kind="stable")            # (V,) 名次：打分从高到低，并列时编号小的在前
    if top_k is not None:
        keep = np.isin(np.arange(V), order[:top_k])       # (V,) 只留前 k 名
        probs = np.where(keep, probs, 0.0)
        probs = probs / probs.sum()                       # 重新归一化
    if top_p is not None:
        ranked = probs[order]                             # (V,) 按名次排好的概率
        before = np.concatenate([[0.0], np.cumsum(ranked)[:-1]])   # (V,) 排在它前面的概率之和
        keep = np.isin(np.arange(V), order[before < top_p])        # 前面的加起来还不到 p，它就留下
        probs = np.where(keep, probs, 0.0)
        probs = probs / probs.sum()                       # 重新归一化
    return probs


def _ntp(logits, temperature=1.0, top_k=None, top_p=None, multiply=False, greedy=True,
         renormalise=True, crossing=True):
    """下一个词概率的各种写法（包括写错的）。"""
    logits = np.asarray(logits, dtype=float)
    V = len(logits)
    if temperature == 0 and greedy:
        return (np.arange(V) == np.argmax(logits)).astype(float)
    z = logits * temperature if multiply else logits / temperature
    probs = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    order = np.argsort(-logits, kind="stable")
    if top_k is not None:
        probs = np.where(np.isin(np.arange(V), order[:top_k]), probs, 0.0)
        probs = probs / probs.sum() if renormalise else probs
    if top_p is not None:
        total = np.cumsum(probs[order])
        before = np.concatenate([[0.0], total[:-1]]) if crossing else total
        probs = np.where(np.isin(np.arange(V), order[before < top_p]), probs, 0.0)
        probs = probs / probs.sum() if renormalise else probs
    return probs


def _ntp_cases(rng: np.random.Generator) -> list[Case]:
    five = np.array([2.0, 1.0, 0.0, 0.0, -1.0])
    chapter = np.array([3.0, 1.5, 0.0, -0.5, -2.0])     # 第 9 章 5 个字的小字表：h @ W_out
    big = rng.normal(scale=2.0, size=30)
    return [
        Case("手算的例子：logits = [2, 1, 0, 0, -1]", (five,)),
        Case("手算的例子：温度 2", (five,), {"temperature": 2.0}),
        Case("手算的例子：温度 0.5", (five,), {"temperature": 0.5}),
        Case("手算的例子：top-k = 2", (five,), {"top_k": 2}),
        Case("手算的例子：top-p = 0.85（前两名合计 0.81，还要第 3 名）", (five,), {"top_p": 0.85}),
        Case("第 9 章的小字表：top-p = 0.9", (chapter,), {"top_p": 0.9}),
        Case("温度 0：贪心", (chapter,), {"temperature": 0.0}),
        Case("随机：30 个词，温度 0.7，top-k = 10，top-p = 0.8", (big,),
             {"temperature": 0.7, "top_k": 10, "top_p": 0.8}),
        Case("随机：30 个词，温度 1.5，top-p = 0.6", (big,), {"temperature": 1.5, "top_p": 0.6}),
        Case("第 1 名一个就超过 p：top-p = 0.5", (chapter,), {"top_p": 0.5}),
        Case("打分并列：top-k = 2（并列时编号小的排前面）", (np.array([1.0, 3.0, 0.0, 3.0, 3.0]),), {"top_k": 2}),
        Case("很大的打分：[1000, 1001, 999]", (np.array([1000.0, 1001.0, 999.0]),)),
        Case("float32 的打分：温度 0.8，top-k = 4", (rng.normal(size=8).astype(np.float32),),
             {"temperature": 0.8, "top_k": 4}, rtol=2e-6, atol=1e-7),
    ]


NEXT_TOKEN_PROBS = Exercise(
    name="next_token_probs",
    chapter=9,
    signature="next_token_probs(logits, temperature=1.0, top_k=None, top_p=None)",
    task="下一个词的概率：logits 是一维数组 (V,)。先 softmax(logits / temperature)（temperature = 0 表示贪心：全部概率"
         "给打分最高的词，并列时给编号小的）；给了 top_k 就只留名次前 k 的词；再给了 top_p，就在（top-k 之后重新归一化的）"
         "分布上从第 1 名往下加，留到累计概率第一次 ≥ top_p 的那个词为止。剪掉的词概率是 0，留下的重新归一化。"
         "名次按打分从高到低，并列时编号小的在前。返回 (V,) 的概率，和 tl.next_token_probs 的规则一样。",
    solution=next_token_probs,
    cases=_ntp_cases,
    mistakes=(
        Mistake("temperature_multiplies", "打分乘以了温度",
                "温度要除：softmax(logits / τ)。τ < 1 时除以它让差距变大、更保守；你乘以 τ，方向正好反了"
                "（温度 2 反而更尖）。",
                "写 logits / temperature；temperature = 0 单独处理成贪心。",
                (lambda logits, temperature=1.0, top_k=None, top_p=None:
                    _ntp(logits, temperature, top_k, top_p, multiply=True),
                 lambda logits, temperature=1.0, top_k=None, top_p=None:
                    _ntp(logits, temperature, top_k, top_p, multiply=True, greedy=False))),
        Mistake("not_renormalised", "剪掉以后没有重新归一化",
                "top-k、top-p 把一部分词的概率设成 0 以后，留下的加起来不到 1，还不是概率分布；"
                "要按比例放大，让它们加起来重新等于 1。",
                "每次剪完写 probs = probs / probs.sum()。",
                (lambda logits, temperature=1.0, top_k=None, top_p=None:
                    _ntp(logits, temperature, top_k, top_p, renormalise=False),)),
        Mistake("top_p_excludes_crossing", "top-p 漏掉了跨过门槛的那个词",
                "top-p 要留到累计概率第一次 ≥ p 的那个词为止（包括它）。你只留了“累计 < p”的词，"
                "跨过门槛的那个被丢掉，留下的加起来不到 p；第 1 名一个就超过 p 时，一个词都不剩（0/0 = nan）。",
                "判断“排在它前面的那些词之和 < p”，而不是“连它一起的累计和 < p”。",
                (lambda logits, temperature=1.0, top_k=None, top_p=None:
                    _ntp(logits, temperature, top_k, top_p, crossing=False),)),
    ),
    hints=(
        "顺序固定：除以温度 → softmax → top-k（剪掉、重新归一化）→ top-p（剪掉、重新归一化）。temperature == 0 先单独处理。",
        "名次：order = np.argsort(-logits, kind='stable')，order[:top_k] 就是前 k 名的编号。",
        "top-p：按名次排好的概率 ranked = probs[order]，“排在它前面的之和” = np.cumsum(ranked) 往右挪一格"
        "（前面补 0）；这个和 < top_p 的词都留下。",
    ),
)


# ---------------------------------------------------------------- cross_entropy


def cross_entropy(logits, targets):
    shifted = logits - logits.max(axis=-1, keepdims=True)                # (T, V) 减最大值，e^x 不溢出
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))   # (T, V) log softmax
    picked = log_probs[np.arange(len(targets)), targets]                 # (T,) 每个位置正确答案的 log 概率
    return float(-picked.mean())                                         # 取负号，对所有位置求平均


def _ce(logits, targets, how="right"):
    """交叉熵的各种写法（包括写错的）。"""
    rows = np.arange(len(targets))
    if how == "log_of_logits":
        return float(-np.log(logits[rows, targets]).mean())
    if how == "overflow":
        e = np.exp(logits)
        return float(-np.log(e[rows, targets] / e.sum(axis=-1)).mean())
    if how == "overflow_lse":
        return float(-(logits[rows, targets] - np.log(np.exp(logits).sum(axis=-1))).mean())
    shifted = logits - logits.max(axis=-1, keepdims=True)
    picked = (shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True)))[rows, targets]
    if how == "no_minus":
        return float(picked.mean())
    if how == "sum":
        return float(-picked.sum())
    return float(-picked.mean())


def _ce_cases(rng: np.random.Generator) -> list[Case]:
    return [
        Case("手算的例子：打分全是 0，T = 2，V = 4（答案 log 4）", (np.zeros((2, 4)), np.array([0, 3]))),
        Case("手算的例子：打分都是正数", (np.array([[2.0, 1.0, 0.5], [0.5, 3.0, 1.0]]), np.array([0, 2]))),
        Case("随机：T = 6，V = 10（有正有负）", (rng.normal(size=(6, 10)), rng.integers(0, 10, size=6))),
        Case("只有一个位置：T = 1", (rng.normal(size=(1, 5)), np.array([4]))),
        Case("很大的打分：[1000, 1001, 999]", (np.array([[1000.0, 1001.0, 999.0], [1000.0, 990.0, 1002.0]]),
                                               np.array([1, 0]))),
        Case("很小的打分：[-1000, -1002, -1001]", (np.array([[-1000.0, -1002.0, -1001.0]] * 3), np.array([0, 1, 2]))),
        Case("float32 的打分：T = 5，V = 7", (rng.normal(scale=3.0, size=(5, 7)).astype(np.float32), rng.integers(0, 7, size=5)),
             rtol=2e-6, atol=1e-6),
    ]


CROSS_ENTROPY = Exercise(
    name="cross_entropy",
    chapter=9,
    signature="cross_entropy(logits, targets)",
    task="交叉熵损失：logits 的形状 (T, V)，每个位置对 V 个词的打分；targets 是 (T,) 的整数，每个位置正确的词编号。"
         "每个位置先 softmax 成概率，取正确那个词的 −log 概率，再对 T 个位置求平均，返回一个数 (float)。"
         "打分很大（比如 1000）时也不能溢出。",
    solution=cross_entropy,
    cases=_ce_cases,
    mistakes=(
        Mistake("log_of_logits", "直接对打分取了 log（没有 softmax）",
                "打分 (logits) 还不是概率：可以是负数（log 负数是 nan）、可以大于 1，加起来也不是 1。"
                "要先 softmax 成概率，再取 log。",
                "先算 log softmax：shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))，再挑出正确答案那一格。",
                (lambda logits, targets: _ce(logits, targets, "log_of_logits"),)),
        Mistake("no_minus", "忘了负号",
                "概率不超过 1，log 概率不大于 0；损失是 −log p，越猜越准越接近 0。你的结果是负数，"
                "训练时“让损失变小”就成了“让正确答案的概率变小”。",
                "最后取负号：-picked.mean()。",
                (lambda logits, targets: _ce(logits, targets, "no_minus"),)),
        Mistake("sum_not_mean", "对位置求和，没有求平均",
                "损失是每个位置的 −log p 的平均：这样损失的大小和一段文字有多长无关，"
                "瞎猜时正好是 log V（第 9 章）。你的结果是平均值的 T 倍。",
                "用 .mean()，不是 .sum()。",
                (lambda logits, targets: _ce(logits, targets, "sum"),)),
        Mistake("overflow", "没有减最大值，打分大时溢出",
                "e^1000 超出了 float64 的范围（约 1.8e308），变成 inf，inf/inf = nan；打分很负时 e^x 变成 0，"
                "log 0 = -inf。数学上 log softmax(z) = (z − m) − log Σ e^(z − m)，减去每行的最大值 m 就不会溢出（log-sum-exp）。",
                "先 shifted = logits - logits.max(axis=-1, keepdims=True)，再用 shifted 算 log softmax。",
                (lambda logits, targets: _ce(logits, targets, "overflow"),
                 lambda logits, targets: _ce(logits, targets, "overflow_lse"))),
    ),
    hints=(
        "每个位置：p = softmax(logits[t])，损失 = −log p[targets[t]]；最后对 T 个位置求平均。",
        "挑出每个位置正确答案那一格：log_probs[np.arange(T), targets]，形状 (T,)。",
        "不溢出的 log softmax：shifted = logits - logits.max(axis=-1, keepdims=True)，"
        "log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))。",
    ),
)

EXERCISES = (NEXT_TOKEN_PROBS, CROSS_ENTROPY)
