"""core/decoding.py：next_token_probs（温度、top-k、top-p、贪心）。

四类测试：5 个词的词表上手算的例子；一个换了写法的参考实现（逐行循环、手写排序和累加）在随机打分上对照；
Hypothesis 性质（和为 1、没留下的恰好是 0、温度趋于 0 就是贪心、top_p = 1 与 top_k = V 什么也不改、并列）；
报错表 ERROR_CASES。
"""

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import transformer_lab as tl
from transformer_lab.core.decoding import check_knobs, next_token_probs, next_token_probs_unchecked

from helpers.errors import check_error

FIVE = np.array([2.0, 1.0, 0.0, 0.0, -1.0])  # 动手算用的 5 个词
E = [math.exp(x) for x in FIVE]  # e², e, 1, 1, e⁻¹


# ---------------------------------------------------------------- 1. 手算（5 个词）

def test_plain_softmax_by_hand():
    z = sum(E)
    np.testing.assert_allclose(next_token_probs(FIVE), [e / z for e in E], rtol=1e-14)
    np.testing.assert_allclose(next_token_probs(FIVE), [0.5923, 0.2179, 0.0802, 0.0802, 0.0295], atol=5e-5)


def test_temperature_divides_the_logits_by_hand():
    e_half = [math.exp(x / 2) for x in FIVE]  # 温度 2：打分减半
    np.testing.assert_allclose(next_token_probs(FIVE, temperature=2), [e / sum(e_half) for e in e_half], rtol=1e-14)
    e_cold = [math.exp(x / 0.5) for x in FIVE]  # 温度 0.5：打分翻倍
    np.testing.assert_allclose(next_token_probs(FIVE, temperature=0.5), [e / sum(e_cold) for e in e_cold], rtol=1e-14)


def test_top_k_keeps_the_k_largest_and_renormalizes():
    np.testing.assert_allclose(next_token_probs(FIVE, top_k=2), [E[0] / (E[0] + E[1]), E[1] / (E[0] + E[1]), 0, 0, 0],
                               rtol=1e-14)
    assert next_token_probs(FIVE, top_k=1).tolist() == [1.0, 0.0, 0.0, 0.0, 0.0]


def test_top_p_keeps_the_smallest_prefix_reaching_p():
    z = sum(E)
    # 名次概率 0.5923, 0.2179, 0.0802 (编号 2), 0.0802 (编号 3), 0.0295；累计 0.5923, 0.8103, 0.8904, 0.9706, 1
    assert np.count_nonzero(next_token_probs(FIVE, top_p=0.5)) == 1  # 0.5923 ≥ 0.5
    assert np.count_nonzero(next_token_probs(FIVE, top_p=0.8)) == 2  # 0.8103 ≥ 0.8
    three = next_token_probs(FIVE, top_p=0.85)  # 0.8103 < 0.85 ≤ 0.8904：3 个，并列的两个里留编号小的 2
    kept = z - E[3] - E[4]
    np.testing.assert_allclose(three, [E[0] / kept, E[1] / kept, E[2] / kept, 0, 0], rtol=1e-14)
    assert np.count_nonzero(next_token_probs(FIVE, top_p=0.95)) == 4
    assert np.count_nonzero(next_token_probs(FIVE, top_p=0.99)) == 5


def test_top_p_boundary_is_inclusive_when_the_sum_is_exact():
    flat = np.zeros(4)  # 每个 0.25，累加 0.25, 0.5, 0.75, 1 都是精确的二进制小数
    assert next_token_probs(flat, top_p=0.5).tolist() == [0.5, 0.5, 0.0, 0.0]  # 恰好 0.5 ≥ 0.5：两个就够
    np.testing.assert_allclose(next_token_probs(flat, top_p=0.5 + 1e-9), [1 / 3, 1 / 3, 1 / 3, 0], rtol=1e-15)


def test_top_p_acts_on_the_distribution_left_by_top_k():
    # 先 top_k=3：[e², e, 1] / (e² + e + 1) = 0.6652, 0.2447, 0.0900，累计 0.9099 ≥ 0.9，只留 2 个
    both = next_token_probs(FIVE, top_k=3, top_p=0.9)
    np.testing.assert_allclose(both, [E[0] / (E[0] + E[1]), E[1] / (E[0] + E[1]), 0, 0, 0], rtol=1e-14)
    assert np.count_nonzero(next_token_probs(FIVE, top_p=0.9)) == 4  # 在原分布上 0.9 要 4 个：顺序有关系


def test_greedy_puts_all_mass_on_the_argmax_lowest_index_on_ties():
    assert next_token_probs(FIVE, temperature=0).tolist() == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert next_token_probs(np.array([1.0, 3.0, 3.0]), temperature=0).tolist() == [0.0, 1.0, 0.0]
    assert next_token_probs(np.array([1.0, 3.0, 3.0]), temperature=0, top_k=1, top_p=0.1).tolist() == [0.0, 1.0, 0.0]


def test_top_k_ties_keep_the_lower_index():
    assert next_token_probs(np.zeros(4), top_k=2).tolist() == [0.5, 0.5, 0.0, 0.0]
    assert next_token_probs(np.array([0.0, 1.0, 1.0, 1.0]), top_k=2).tolist() == [0.0, 0.5, 0.5, 0.0]


def test_top_level_alias():
    assert tl.next_token_probs is next_token_probs


# ---------------------------------------------------------------- 2. 换一种写法的参考实现

def reference(logits, temperature=1.0, top_k=None, top_p=None):
    """逐行：Python 的 math.exp 算概率，(−打分, 编号) 排序定名次，手写循环累加。只接受 2 维 float64。"""
    out = np.zeros_like(logits)
    for r, row in enumerate(logits.tolist()):
        V = len(row)
        if temperature == 0:
            best = max(range(V), key=lambda i: (row[i], -i))
            out[r, best] = 1.0
            continue
        names = sorted(range(V), key=lambda i: (-row[i], i))  # 名次
        top = max(row)
        weight = {i: math.exp((row[i] - top) / temperature) for i in range(V)}
        kept = names[:top_k] if top_k is not None else names
        total = sum(weight[i] for i in kept)
        prob = {i: weight[i] / total for i in kept}
        if top_p is not None and top_p < 1:
            chosen, running = [], 0.0
            for i in kept:
                chosen.append(i)
                running += prob[i]
                if running >= top_p:
                    break
            total = sum(prob[i] for i in chosen)
            prob = {i: prob[i] / total for i in chosen}
        for i, p in prob.items():
            out[r, i] = p
    return out


def test_reference_can_fail():
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(3, 7))
    with pytest.raises(AssertionError):  # 换成 top_k=4 的参考，对不上 top_k=3 的结果
        np.testing.assert_allclose(next_token_probs(logits, top_k=3), reference(logits, top_k=4), atol=1e-12)
    with pytest.raises(AssertionError):  # 温度不同也对不上
        np.testing.assert_allclose(next_token_probs(logits, 0.7), reference(logits, 0.8), atol=1e-12)


@pytest.mark.parametrize("temperature", [0, 0.3, 1.0, 2.5])
@pytest.mark.parametrize("top_k", [None, 1, 3, 10])
@pytest.mark.parametrize("top_p", [None, 0.3, 0.75, 0.95, 1.0])
def test_matches_the_reference_on_random_logits(temperature, top_k, top_p):
    rng = np.random.default_rng(hash((temperature, top_k, top_p)) % 2**32)
    logits = rng.normal(scale=3.0, size=(6, 10))
    logits[0, 3] = logits[0, 7]  # 有一行带着并列
    np.testing.assert_allclose(next_token_probs(logits, temperature, top_k, top_p),
                               reference(logits, temperature, top_k, top_p), rtol=1e-12, atol=1e-15)


# ---------------------------------------------------------------- 3. 性质

LOGITS = hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=8),
                    elements=st.floats(-30, 30, allow_nan=False, allow_infinity=False))
TEMPERATURE = st.one_of(st.just(0.0), st.floats(0.05, 5.0))


@st.composite
def settings(draw):
    logits = draw(LOGITS)
    V = logits.shape[-1]
    return (logits, draw(TEMPERATURE), draw(st.one_of(st.none(), st.integers(1, V))),
            draw(st.one_of(st.none(), st.floats(0.01, 1.0))))


@given(settings())
def test_rows_are_probabilities_and_the_input_is_untouched(case):
    logits, t, k, p = case
    before = logits.copy()
    probs = next_token_probs(logits, t, k, p)
    assert probs.shape == logits.shape and probs.dtype == np.float64
    assert np.all(probs >= 0)
    np.testing.assert_allclose(probs.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(logits, before)


@given(settings())
def test_kept_set_is_a_prefix_of_the_ranking_and_the_rest_is_exactly_zero(case):
    logits, t, k, p = case
    assume(t > 0)
    probs = next_token_probs(logits, t, k, p).reshape(-1, logits.shape[-1])
    plain = next_token_probs(logits, t).reshape(-1, logits.shape[-1])
    for row, full, lg in zip(probs, plain, logits.reshape(-1, logits.shape[-1])):
        order = sorted(range(row.size), key=lambda i: (-lg[i], i))
        kept = [i for i in order if row[i] > 0]
        n = len(kept)
        assert kept == order[:n]  # 留下的（概率 > 0）正是名次最前的 n 个，其余恰好是 0
        if k is not None:
            assert n <= k
        if p is not None and p < 1:
            base = full[order[: k or row.size]] / full[order[: k or row.size]].sum()  # top-k 之后的分布
            assert base[:n].sum() >= p - 1e-12 or n == len(base)  # 留下的凑够了 p
            assert n == 1 or base[: n - 1].sum() < p + 1e-12  # 少留一个就不够：最少的那几个
        np.testing.assert_allclose(row[kept], full[kept] / full[kept].sum(), rtol=1e-10, atol=1e-300)


@given(LOGITS, st.floats(0.05, 5.0))
def test_top_p_one_and_top_k_v_change_nothing(logits, t):
    plain = next_token_probs(logits, t)
    np.testing.assert_array_equal(next_token_probs(logits, t, top_p=1.0), plain)
    np.testing.assert_allclose(next_token_probs(logits, t, top_k=logits.shape[-1]), plain, rtol=1e-15, atol=0)


@given(hnp.arrays(np.float64, st.integers(2, 8), elements=st.floats(-10, 10, allow_nan=False)))
def test_low_temperature_tends_to_greedy(logits):
    ranked = np.sort(logits)
    assume(ranked[-1] - ranked[-2] > 0.1)  # 唯一的最大值
    greedy = next_token_probs(logits, temperature=0)
    np.testing.assert_allclose(next_token_probs(logits, temperature=1e-3), greedy, rtol=0, atol=1e-40)
    peaks = [next_token_probs(logits, temperature=t).max() for t in (4.0, 1.0, 0.3, 0.1, 0.03)]
    assert all(a <= b + 1e-15 for a, b in zip(peaks, peaks[1:]))  # 温度越低，最高的那个概率越大


@given(LOGITS, TEMPERATURE, st.data())
def test_equal_logits_never_get_less_than_a_later_equal(logits, t, data):
    V = logits.shape[-1]
    assume(V >= 2)
    tied = np.concatenate([logits[..., :1], logits[..., :1], logits[..., 2:]], axis=-1)  # 编号 0 和 1 并列
    k = data.draw(st.one_of(st.none(), st.integers(1, V)))
    probs = next_token_probs(tied, t, k)
    assert np.all(probs[..., 0] >= probs[..., 1])
    if t > 0 and k is None:
        np.testing.assert_array_equal(probs[..., 0], probs[..., 1])  # 不筛时并列的概率相等


@given(settings())
def test_leading_axes_are_independent_rows(case):
    logits, t, k, p = case
    flat = logits.reshape(-1, logits.shape[-1])
    rows = np.stack([next_token_probs(r, t, k, p) for r in flat])
    np.testing.assert_array_equal(next_token_probs(logits, t, k, p).reshape(flat.shape), rows)


def test_dtype_float32_in_float32_out_and_integers_to_float64():
    assert next_token_probs(FIVE.astype(np.float32), 0.7, 3, 0.9).dtype == np.float32
    assert next_token_probs(FIVE.astype(np.float32), 0).dtype == np.float32
    assert next_token_probs(np.array([3, 1, 2])).dtype == np.float64


def test_huge_logits_and_tiny_temperatures_stay_finite():
    probs = next_token_probs(np.array([1e308, -1e308, 0.0]), temperature=1e-300)
    assert probs.tolist() == [1.0, 0.0, 0.0]


# ---------------------------------------------------------------- 3b. 任何浮点类型、任何温度：与 float64 的参照一致（issue 41 根因 1）

def _reference(x: np.ndarray, t: float) -> np.ndarray:
    """另一种写法的 float64 参照：p_i = 1 / Σ_j exp((x_j − x_i) / t)。不减最大值、不调用 softmax；
    exp 溢出成 inf 时 1 / inf = 0，正是那个词的概率。"""
    x = x.astype(np.float64)
    with np.errstate(over="ignore"):
        return np.array([1.0 / np.sum(np.exp((x - xi) / t)) for xi in x])


_DTYPES = [np.float16, np.float32, np.float64]
_TEMPERATURES = st.one_of(
    st.sampled_from([5e-324, 1e-320, 1e-300, 1e-46, 1e-45, 1e-8, 1e30, 1e308, 1.7976931348623157e308, 10**300]),
    st.floats(min_value=5e-324, max_value=1.7e308, allow_subnormal=True),
)


@st.composite
def _logits(draw):
    dtype = draw(st.sampled_from(_DTYPES))
    width = np.finfo(dtype).bits
    elements = st.floats(width=width, allow_nan=False, allow_infinity=False)
    return draw(hnp.arrays(dtype, st.integers(1, 8), elements=elements))


@given(_logits(), _TEMPERATURES)
def test_any_dtype_and_any_positive_temperature_match_a_float64_reference(x, t):
    """float16/32/64 的打分，5e-324 到 1.8e308 的温度（也有 Python 大整数）：概率有限、和为 1、名次不变、
    与 float64 参照相差不到该类型的精度。修之前 float32 配 1e-46 的温度得到 NaN。"""
    probs = next_token_probs(x, t)
    out = np.float32 if x.dtype != np.float64 else np.float64
    assert probs.dtype == out
    assert np.all(np.isfinite(probs)) and np.all(probs >= 0)
    eps = np.finfo(out).eps
    assert abs(float(probs.astype(np.float64).sum()) - 1) <= 4 * x.size * eps
    assert probs[np.argmax(x)] == probs.max()  # 打分最高的词概率最大
    order = np.argsort(x, kind="stable")
    assert np.all(np.diff(probs[order].astype(np.float64)) >= 0)  # 打分高的词概率不低于打分低的词
    rtol, atol = (1e-9, 1e-300) if out == np.float64 else (4e-7, 1e-38)
    np.testing.assert_allclose(probs, _reference(x, float(t)), rtol=rtol, atol=atol)


@given(_logits(), _TEMPERATURES, st.integers(1, 8), st.floats(0.01, 1.0))
def test_top_k_and_top_p_stay_probabilities_at_extreme_temperatures(x, t, k, p):
    probs = next_token_probs(x, t, top_k=min(k, x.size), top_p=p)
    assert np.all(np.isfinite(probs)) and probs[np.argmax(x)] == probs.max()
    assert abs(float(probs.astype(np.float64).sum()) - 1) <= 4 * x.size * np.finfo(probs.dtype).eps


@pytest.mark.parametrize("dtype", _DTYPES)
def test_a_temperature_below_the_dtype_is_the_greedy_limit(dtype):
    """float32 里 1e-46 会变成 0（NumPy 2 按数组的类型转温度）：修之前 0 / 0 = NaN。现在三种类型给出同一个答案。"""
    x = np.array([0.5, 2.0, -1.0, 2.0], dtype=dtype)
    for t in (1e-46, 5e-324):
        np.testing.assert_array_equal(next_token_probs(x, t), [0.0, 0.5, 0.0, 0.5])  # τ → 0 的极限：并列第一平分
    np.testing.assert_array_equal(next_token_probs(x, 0), [0.0, 1.0, 0.0, 0.0])  # τ = 0：贪心，并列取编号小的


def test_the_reference_is_not_the_code_under_test():
    """反证：参照确实能判出错来——直接在 float32 里除以被转成 0 的温度（修之前的算法），就与参照不符。"""
    x = np.array([2.0, 1.0, 0.0], dtype=np.float32)
    with np.errstate(all="ignore"):
        old = np.exp((x - x.max()) / np.float32(1e-46))
    assert not np.allclose(old / old.sum(), _reference(x, 1e-46))


# ---------------------------------------------------------------- 4. 报错

ERROR_CASES = [
    ("logits-list", lambda: next_token_probs([1.0, 2.0]), TypeError, "logits 必须是 NumPy 数组"),
    ("logits-bool", lambda: next_token_probs(np.array([True, False])), TypeError, "logits 的 dtype 必须是实数.*布尔"),
    ("logits-empty", lambda: next_token_probs(np.zeros(0)), ValueError, "logits 不能是空数组"),
    ("logits-scalar", lambda: next_token_probs(np.array(1.0)), ValueError, "logits 至少要有 1 维"),
    ("logits-nan", lambda: next_token_probs(np.array([1.0, np.nan])), ValueError, "logits 含有 NaN"),
    ("logits-inf", lambda: next_token_probs(np.array([1.0, -np.inf])), ValueError, "logits 含有 inf"),
    ("temperature-negative", lambda: next_token_probs(FIVE, temperature=-0.5), ValueError,
     r"temperature 必须是有限的非负实数.*-0\.5"),
    ("temperature-inf", lambda: next_token_probs(FIVE, temperature=np.inf), ValueError, "temperature 必须是有限"),
    ("temperature-nan", lambda: next_token_probs(FIVE, temperature=float("nan")), ValueError, "temperature 必须是有限"),
    ("temperature-bool", lambda: next_token_probs(FIVE, temperature=True), TypeError, "temperature 必须是实数.*bool"),
    ("temperature-str", lambda: next_token_probs(FIVE, temperature="0.7"), TypeError, "temperature 必须是实数"),
    ("temperature-huge-int", lambda: next_token_probs(FIVE, temperature=10**400), ValueError,
     "temperature 太大了，超出 float64 的范围.*401 位的整数"),
    ("knobs-named", lambda: check_knobs(-1.0, None, None, 5, temperature_name="temperatures[2]"), ValueError,
     r"temperatures\[2\] 必须是有限的非负实数"),
    ("top_k-zero", lambda: next_token_probs(FIVE, top_k=0), ValueError, r"top_k 必须在 \[1, V=5\] 之内.*0"),
    ("top_k-too-big", lambda: next_token_probs(FIVE, top_k=6), ValueError, r"top_k 必须在 \[1, V=5\].*6"),
    ("top_k-float", lambda: next_token_probs(FIVE, top_k=2.0), TypeError, "top_k 必须是整数或 None"),
    ("top_k-bool", lambda: next_token_probs(FIVE, top_k=True), TypeError, "top_k 必须是整数或 None.*bool"),
    ("top_p-zero", lambda: next_token_probs(FIVE, top_p=0), ValueError, r"top_p 必须在 \(0, 1\] 之内"),
    ("top_p-above-one", lambda: next_token_probs(FIVE, top_p=1.5), ValueError, r"top_p 必须在 \(0, 1\].*1\.5"),
    ("top_p-nan", lambda: next_token_probs(FIVE, top_p=float("nan")), ValueError, r"top_p 必须在 \(0, 1\]"),
    ("top_p-bool", lambda: next_token_probs(FIVE, top_p=True), TypeError, "top_p 必须是实数或 None.*bool"),
    ("top_p-str", lambda: next_token_probs(FIVE, top_p="0.9"), TypeError, "top_p 必须是实数或 None"),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors(case):
    _, fn, exc, pattern = case
    check_error(fn, exc, pattern)


@pytest.mark.parametrize("knobs", [(0.0, None, None), (1.0, None, None), (0.7, 3, None), (1.3, None, 0.8), (0.9, 4, 0.9)])
def test_the_unchecked_kernel_is_next_token_probs(knobs):
    """逐词生成在循环外用 check_knobs 查一次旋钮，每一步直接调用计算本身：结果逐位相同。"""
    logits = np.random.default_rng(4).normal(size=6) * 3
    np.testing.assert_array_equal(next_token_probs_unchecked(logits, *check_knobs(*knobs, 6)),
                                  next_token_probs(logits, *knobs))
    assert check_knobs(1, None, 1, 6) == (1.0, None, 1.0)
