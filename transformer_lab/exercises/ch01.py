"""第 1 章的练习：RNN 改写一次笔记（一步），以及一个词一个词读完整句话（一步接一步的循环）。

每个常见错误都附一份“错误的写法”，检查时在同样的输入上重算，读者的结果和它处处一样就报告这个错误。
"""

from __future__ import annotations

import numpy as np

from .checker import Case, Exercise, Mistake

__all__ = ["EXERCISES"]


# ---------------------------------------------------------------- rnn_step：改写一次笔记


def rnn_step(x_t, h_prev, w_xh, w_hh):
    # h_t = tanh(x_t W_xh + h_{t-1} W_hh)：新词乘一个矩阵，旧笔记乘一个矩阵，加起来再过 tanh
    return np.tanh(x_t @ w_xh + h_prev @ w_hh)    # (d_h,)


def _step_cases(rng: np.random.Generator) -> list[Case]:
    one, half = np.array([[1.0]]), np.array([[0.5]])
    r = lambda *shape: rng.normal(size=shape)  # noqa: E731
    f32 = lambda *shape: rng.normal(size=shape).astype(np.float32)  # noqa: E731
    return [
        Case("手算的例子：第 1 步，x = [1]，h = [0]", (np.array([1.0]), np.array([0.0]), one, half)),
        Case("手算的例子：第 2 步，x = [0]，h = [0.7616]", (np.array([0.0]), np.array([0.7616]), one, half)),
        Case("随机：d_in = 3，d_h = 4", (r(3), r(4), r(3, 4) * 0.5, r(4, 4) * 0.5)),
        Case("随机：d_in = 5，d_h = 2", (r(5), r(2), r(5, 2) * 0.5, r(2, 2) * 0.5)),
        Case("很大的数：tanh 接近 ±1", (r(3) * 100, r(4), r(3, 4), r(4, 4))),
        Case("float32 的输入", (f32(4), f32(3), f32(4, 3), f32(3, 3)), rtol=1e-5, atol=1e-6),
    ]


RNN_STEP = Exercise(
    name="rnn_step",
    chapter=1,
    signature="rnn_step(x_t, h_prev, w_xh, w_hh)",
    task="RNN 读一个词、改写一次笔记：h_t = tanh(x_t W_xh + h_prev W_hh)。x_t 的形状 (d_in,)，h_prev (d_h,)，"
         "w_xh (d_in, d_h)，w_hh (d_h, d_h)；返回新笔记 h_t，形状 (d_h,)。",
    solution=rnn_step,
    cases=_step_cases,
    mistakes=(
        Mistake("no_tanh", "忘了 tanh",
                "没有 tanh，笔记就是一串矩阵乘法的结果，可以越来越大、没有边；tanh 把每个数压在 -1 到 1 之间，"
                "也正是它的斜率 1 - h² 让远处的词的影响越传越小。",
                "把加起来的结果整个放进 np.tanh(...)。",
                (lambda x_t, h_prev, w_xh, w_hh: x_t @ w_xh + h_prev @ w_hh,)),
        Mistake("ignores_h_prev", "没有用上旧笔记",
                "RNN 的新笔记要由新词和旧笔记 h_prev 一起决定；只看新词，每一步都从白纸开始，前面读过的全忘了。",
                "加上 h_prev @ w_hh 这一项。",
                (lambda x_t, h_prev, w_xh, w_hh: np.tanh(x_t @ w_xh),)),
        Mistake("w_hh_transposed", "循环权重用反了方向（w_hh @ h_prev）",
                "本书的向量是行向量，写成 h_prev @ w_hh；有的教科书用列向量，写成 W h。把 W h 原样搬过来"
                "（w_hh @ h_prev）等于用了 w_hh 的转置，w_hh 不对称时结果就不同。",
                "行向量在左边：h_prev @ w_hh（x_t @ w_xh 也一样）。",
                (lambda x_t, h_prev, w_xh, w_hh: np.tanh(x_t @ w_xh + w_hh @ h_prev),
                 lambda x_t, h_prev, w_xh, w_hh: np.tanh(w_xh.T @ x_t + w_hh @ h_prev))),
    ),
    hints=(
        "只有一行：新词乘 w_xh，旧笔记乘 w_hh，两者相加，再过 np.tanh。",
        "本书的向量是行向量：写 x_t @ w_xh 和 h_prev @ w_hh，形状 (d_in,) @ (d_in, d_h) → (d_h,)。",
        "return np.tanh(x_t @ w_xh + h_prev @ w_hh)",
    ),
)


# ---------------------------------------------------------------- rnn_forward：一个词一个词地读


def rnn_forward(x, w_xh, w_hh):
    h = np.zeros(w_hh.shape[0])                   # (d_h,) 空白笔记 h_0 = 0
    notes = []
    for t in range(x.shape[0]):                   # 只能一步一步来：第 t 步要用第 t-1 步的笔记
        h = np.tanh(x[t] @ w_xh + h @ w_hh)       # (d_h,) 改写笔记
        notes.append(h)                           # 记下改写之后的笔记 h_t
    return np.array(notes)                        # (T, d_h)


def _no_recurrence(x, w_xh, w_hh):
    return np.tanh(x @ w_xh)                      # 假装不用等：每一步都当旧笔记是空白


def _shifted(x, w_xh, w_hh):
    h, notes = np.zeros(w_hh.shape[0]), []
    for t in range(x.shape[0]):
        notes.append(h)                           # 先记下（改写之前的）笔记，再改写
        h = np.tanh(x[t] @ w_xh + h @ w_hh)
    return np.array(notes)


def _last_only(x, w_xh, w_hh):
    return rnn_forward(x, w_xh, w_hh)[-1]         # (d_h,) 只交出最后一页


def _forward_cases(rng: np.random.Generator) -> list[Case]:
    r = lambda *shape: rng.normal(size=shape)  # noqa: E731
    f32 = lambda *shape: rng.normal(size=shape).astype(np.float32)  # noqa: E731
    return [
        Case("手算的例子：四个词，只有第 1 个是 1", (np.array([[1.0], [0.0], [0.0], [0.0]]),
                                                   np.array([[1.0]]), np.array([[0.5]]))),
        Case("随机：T = 5，d_in = 3，d_h = 4", (r(5, 3), r(3, 4) * 0.5, r(4, 4) * 0.5)),
        Case("随机：T = 7，d_in = 2，d_h = 3", (r(7, 2), r(2, 3), r(3, 3))),
        Case("只有一个词：T = 1", (r(1, 3), r(3, 2), r(2, 2))),
        Case("很大的数：笔记被“写满”", (r(6, 2) * 50, r(2, 3), r(3, 3) * 5)),
        Case("float32 的输入", (f32(5, 4), f32(4, 3), f32(3, 3)), rtol=1e-5, atol=1e-6),
    ]


RNN_FORWARD = Exercise(
    name="rnn_forward",
    chapter=1,
    signature="rnn_forward(x, w_xh, w_hh)",
    task="让 RNN 一个词一个词读完整句话：笔记从全 0 开始，第 t 步 h_t = tanh(x_t W_xh + h_{t-1} W_hh)。"
         "x 的形状 (T, d_in)；返回每一步改写之后的笔记，摞成 (T, d_h)，第 t 行是 h_t。",
    solution=rnn_forward,
    cases=_forward_cases,
    mistakes=(
        Mistake("no_recurrence", "没有把旧笔记传下去",
                "每一步都当旧笔记是空白（或者一次算完 np.tanh(x @ w_xh)），前面的词就影响不到后面的笔记了。"
                "RNN 慢就慢在这里：第 t 步必须等第 t-1 步的笔记写完，这一步省不掉。",
                "循环里用上一轮算出的 h：h = np.tanh(x[t] @ w_xh + h @ w_hh)，并且让 h 一直传到下一轮。",
                (_no_recurrence,)),
        Mistake("states_shifted", "记下的是改写之前的笔记",
                "第 t 行应该是读完第 t 个词之后的笔记 h_t；你先把旧笔记存起来再改写，于是第一行是空白的 h_0，"
                "最后一个词的笔记 h_T 反而没有存下来。",
                "先改写 h，再 append(h)。",
                (_shifted,)),
        Mistake("only_last_state", "只交出了最后一页笔记",
                "要的是每一步的笔记 (T, d_h)，不只是读完整句之后的那一页 (d_h,)。",
                "每改写一次就把 h 放进一个列表，最后 return np.array(列表)。",
                (_last_only,)),
    ),
    hints=(
        "笔记从全 0 开始：h = np.zeros(d_h)，d_h 是 w_hh 的行数；然后 for t in range(T) 一步一步改写。",
        "每一步：h = np.tanh(x[t] @ w_xh + h @ w_hh)，改写之后再把 h 记进一个列表。",
        "最后 return np.array(列表)，形状 (T, d_h)；第 1 章的手算例子应该得到 [0.7616, 0.3634, 0.1797, 0.0896]。",
    ),
)

EXERCISES = (RNN_STEP, RNN_FORWARD)
