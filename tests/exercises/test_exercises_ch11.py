"""第 11 章的练习：数相邻的对、合并一次。每个常见错误一种错误写法，都在这里独立写出，必须被认成恰好那个错误；
独立写的正确写法（Counter、下标循环、递归、字符串替换……）必须通过；参考答案和 ``tl.bpe`` 的同名函数逐个输入一致。"""

from __future__ import annotations

from collections import Counter

import pytest

import transformer_lab as tl

from helpers.exercises import assert_status, shown_solution

# ---------------------------------------------------------------- pair_counts


def pairs_set(ids):
    return dict.fromkeys(zip(ids, ids[1:]), 1)


def pairs_short(ids):
    out = {}
    for i in range(len(ids) - 2):
        out[(ids[i], ids[i + 1])] = out.get((ids[i], ids[i + 1]), 0) + 1
    return out


def pairs_ring(ids):
    out = {}
    for i in range(len(ids)):
        if len(ids) > 1:
            p = (ids[i], ids[(i + 1) % len(ids)])
            out[p] = out.get(p, 0) + 1
    return out


@pytest.mark.parametrize("fn, diagnosis", [
    (pairs_set, "presence_not_count"), (pairs_short, "misses_last_pair"), (pairs_ring, "wraps_around"),
], ids=lambda x: x if isinstance(x, str) else "")
def test_pair_counts_mistakes(fn, diagnosis):
    assert_status("pair_counts", fn, "failed", diagnosis)


def test_pair_counts_non_overlapping_is_named():
    def non_overlapping(ids):
        out = {}
        for pair in set(zip(ids, ids[1:])):
            n, i = 0, 0
            while i < len(ids) - 1:
                if (ids[i], ids[i + 1]) == pair:
                    n, i = n + 1, i + 2
                else:
                    i += 1
            out[pair] = n
        return out
    assert_status("pair_counts", non_overlapping, "failed", "no_overlap")


@pytest.mark.parametrize("fn", [
    lambda ids: dict(Counter(zip(ids, ids[1:]))),
    lambda ids: Counter((ids[i], ids[i + 1]) for i in range(len(ids) - 1)),
    lambda ids: tl.bpe.pair_counts(ids),
], ids=["counter", "index-loop", "tl.bpe"])
def test_pair_counts_correct_variants_pass(fn):
    assert_status("pair_counts", fn, "passed")


# ---------------------------------------------------------------- merge


def merge_recursive(ids, pair, new_id):
    if len(ids) < 2:
        return list(ids)
    if (ids[0], ids[1]) == tuple(pair):
        return [new_id] + merge_recursive(ids[2:], pair, new_id)
    return [ids[0]] + merge_recursive(ids[1:], pair, new_id)


def merge_no_skip(ids, pair, new_id):
    out = []
    for i in range(len(ids)):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
        else:
            out.append(ids[i])
    return out


def merge_until_second_last(ids, pair, new_id):
    out, i = [], 0
    while i < len(ids) - 1:
        if ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def merge_once(ids, pair, new_id):
    ids = list(ids)
    for i in range(len(ids) - 1):
        if ids[i:i + 2] == list(pair):
            ids[i:i + 2] = [new_id]
            break
    return ids


def merge_backwards(ids, pair, new_id):
    out, i = [], len(ids) - 1
    while i >= 0:
        if i >= 1 and ids[i - 1] == pair[0] and ids[i] == pair[1]:
            out.append(new_id)
            i -= 2
        else:
            out.append(ids[i])
            i -= 1
    return out[::-1]


@pytest.mark.parametrize("fn, diagnosis", [
    (merge_no_skip, "overlapping"), (merge_until_second_last, "drops_last"), (merge_once, "first_only"),
    (merge_backwards, "right_to_left"),
], ids=lambda x: x if isinstance(x, str) else "")
def test_merge_mistakes(fn, diagnosis):
    assert_status("merge", fn, "failed", diagnosis)


@pytest.mark.parametrize("fn", [merge_recursive, lambda ids, pair, new_id: tl.bpe.merge(ids, pair, new_id)],
                         ids=["recursive", "tl.bpe"])
def test_merge_correct_variants_pass(fn):
    assert_status("merge", fn, "passed")


def test_solutions_agree_with_the_package_on_every_case():
    for name, package in (("pair_counts", tl.bpe.pair_counts), ("merge", tl.bpe.merge)):
        solution = shown_solution(name)
        for case in tl.exercises.exercise(name).test_cases():
            assert solution(*case.args) == package(*case.args), (name, case.label)


def test_chapter_11_lists_both_exercises():
    assert tl.exercises.for_chapter(11) == ["pair_counts", "merge"]


def test_wrong_answer_message_shows_the_hand_example():
    fb = tl.exercises.check("merge", merge_no_skip)
    assert "aaab" in fb.message and "[256, 97, 98]" in fb.message and "换完只往后走了一步" in fb.message
