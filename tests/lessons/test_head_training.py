"""头是练出来的：任务数据、分工（训练后两个头的注意力图相差很大）和对称性（相同的头之差恰为 0）。梯度下降循环本身在 test_optim.py。"""

import numpy as np
import pytest

from transformer_lab.core.multihead import multi_head_attention
from transformer_lab.lessons.head_training import (
    WEIGHT_NAMES,
    head_gap,
    head_pieces,
    init_head_weights,
    relation_mass,
    train_heads,
    two_relation_task,
)

from helpers.errors import error_table_test


@pytest.fixture(scope="module")
def task():
    return two_relation_task(48, np.random.default_rng(0))


def test_task_targets_by_hand():
    data = two_relation_task(3, np.random.default_rng(1))
    x, y, tokens = data["x"], data["y"], data["tokens"]
    for n in range(3):
        for t in range(6):
            p = (t - 1) % 6
            assert np.array_equal(y[n, t, :2], x[n, p, -2:])  # 前一个词的内容
            j = data["partner"][n, t]
            assert j != t and tokens[n, j].lower() == tokens[n, t].lower() and tokens[n, j] != tokens[n, t]
            assert np.array_equal(y[n, t, 2:], x[n, j, -2:])  # 搭档的内容
        assert sorted(np.argmax(x[n, :, 8:14], axis=-1)) == list(range(6))  # 位置独热


def test_training_is_deterministic_and_loss_falls(task):
    a = train_heads(task, init_head_weights(16, 2, np.random.default_rng(1)), steps=60, checkpoint_every=30)
    b = train_heads(task, init_head_weights(16, 2, np.random.default_rng(1)), steps=60, checkpoint_every=30)
    assert np.array_equal(a["losses"], b["losses"])
    assert a["losses"][-1] < 0.8 * a["losses"][0]


@pytest.fixture(scope="module")
def heads():
    """第 5 章的三次 1200 步训练（``runs.heads()``：随机起点、两头一样、两头差 1e-6），和章节、可交互图共用同一份。
    它就是下面这些 ``train_heads`` 的结果，由 test_the_stored_runs_are_the_trainings_chapter_5_describes 当场训练核对。"""
    from transformer_lab.lessons import runs

    return runs.heads()


def test_heads_specialise_from_random_start(task, heads):
    """随机起点（``default_rng(1)``）训练 1200 步后：一个头 ≥ 0.8 的注意力放在前一个词上，另一个头 ≥ 0.8 放在搭档上；
    两张图平均每格相差 ≥ 0.1；开始时没有分工（每种关系都只分到约 1/6）。"""
    run = heads["random"]
    assert np.array_equal(heads["task"]["x"], task["x"])
    mass = relation_mass(run["weights"][-1], task["prev"], task["partner"])  # (H, 2)
    start = relation_mass(run["weights"][0], task["prev"], task["partner"])
    assert np.all(start < 0.3)
    prev_head = int(np.argmax(mass[:, 0]))
    assert mass[prev_head, 0] >= 0.8 and mass[1 - prev_head, 1] >= 0.8
    diff = np.abs(run["weights"][-1][:, 0] - run["weights"][-1][:, 1]).mean()
    assert diff >= 0.1
    assert run["losses"][-1] < 0.01


def test_every_random_start_splits_the_two_relations_between_the_two_heads():
    """``runs.head_roles()``：四个随机起点各训练 1200 步，每次两种关系都由不同的头接下（≥ 0.7），哪个头接哪种随起点而变。"""
    from transformer_lab.lessons import runs

    mass = runs.head_roles()["mass"]  # (起点, H, 关系)
    for m in mass:
        prev_head, partner_head = np.argmax(m, axis=0)
        assert prev_head != partner_head and m[prev_head, 0] >= 0.7 and m[partner_head, 1] >= 0.7
    assert len({int(np.argmax(m[:, 0])) for m in mass}) == 2


def test_identical_heads_stay_identical_and_stall(heads):
    run = heads["identical"]
    assert head_gap(run["checkpoints"][0], 2) == 0.0
    assert len(run["checkpoints"]) == 31 and all(head_gap(p, 2) == 0.0 for p in run["checkpoints"])  # 恰好为 0，每个检查点
    assert np.array_equal(run["weights"][:, :, 0], run["weights"][:, :, 1])
    assert run["losses"][-1] > 10 * heads["random"]["losses"][-1]  # 停在高得多的损失上


def test_tiny_difference_grows_until_heads_split(task, heads):
    run = heads["nudged"]
    assert 0 < head_gap(run["checkpoints"][0], 2) < 1e-5
    assert head_gap(run["checkpoints"][-1], 2) > 1.0
    mass = relation_mass(run["weights"][-1], task["prev"], task["partner"])
    assert mass[:, 0].max() > 0.7 and mass[:, 1].max() > 0.7 and np.argmax(mass[:, 0]) != np.argmax(mass[:, 1])


def test_head_pieces_add_up_to_the_output():
    """参考实现：四个权重随机时，各头的那一份加起来 = multi_head_attention 的输出。"""
    rng = np.random.default_rng(3)
    w = {n: rng.normal(size=(8, 8)) for n in WEIGHT_NAMES}
    x = rng.normal(size=(2, 5, 8))  # (N, T, D)
    pieces = head_pieces(w, x, 4)  # (H, N, T, D)
    assert pieces.shape == (4, 2, 5, 8)
    np.testing.assert_allclose(pieces.sum(axis=0), multi_head_attention(x, *(w[n] for n in WEIGHT_NAMES), 4)[0],
                               atol=1e-12)


def test_head_pieces_with_identity_w_o_stay_in_their_own_dims():
    rng = np.random.default_rng(4)
    w = {**{n: rng.normal(size=(6, 6)) for n in WEIGHT_NAMES}, "w_o": np.eye(6)}
    pieces = head_pieces(w, rng.normal(size=(3, 6)), 3)  # (H=3, T=3, D=6)
    for h in range(3):
        outside = np.delete(pieces[h], [2 * h, 2 * h + 1], axis=-1)
        assert np.all(outside == 0) and np.any(pieces[h][:, 2 * h:2 * h + 2] != 0)


def test_frozen_identity_w_o_leaves_one_head_idle(task):
    """W_O 定在单位矩阵上重新训练：W_O 一位不变；头 2 的输出落在损失不看的维上，它一直不偏心（约 1/6）；
    同一起点让 W_O 也训练，损失低得多。"""
    start = {**init_head_weights(16, 2, np.random.default_rng(1)), "w_o": np.eye(16)}
    frozen = train_heads(task, start, steps=1200, checkpoint_every=400, train_w_o=False)
    assert all(np.array_equal(p["w_o"], np.eye(16)) for p in frozen["checkpoints"])
    mass = relation_mass(frozen["weights"][-1], task["prev"], task["partner"])
    assert np.all(np.abs(mass[1] - 1 / 6) < 0.05)  # 头 2：两种关系都只分到约六分之一
    pieces = head_pieces(frozen["checkpoints"][-1], task["x"], 2)
    assert np.all(pieces[1][..., :4] == 0)  # 头 2 对损失看的前 4 维一点贡献也没有
    trained = train_heads(task, start, steps=1200, checkpoint_every=1200)  # 同一起点，W_O 也训练
    assert not np.allclose(trained["checkpoints"][-1]["w_o"], np.eye(16))
    assert frozen["losses"][-1] > 0.2 > 10 * trained["losses"][-1]


def test_relation_mass_by_hand():
    T = 6
    prev = (np.arange(T) - 1) % T
    partner = np.array([[3, 4, 5, 0, 1, 2]])
    w = np.zeros((1, 2, T, T))
    w[0, 0, np.arange(T), prev] = 1.0  # 头 1 全看前一个词
    w[0, 1, np.arange(T), partner[0]] = 1.0  # 头 2 全看搭档
    np.testing.assert_allclose(relation_mass(w, prev, partner), [[1.0, 0.0], [0.0, 1.0]])


ERROR_CASES = [
    ("task-pairs", lambda: two_relation_task(2, np.random.default_rng(0), num_pairs=2), ValueError, "num_pairs 至少是 3"),
    ("task-rng", lambda: two_relation_task(2, 0), TypeError, "rng"),
    ("init-divisible", lambda: init_head_weights(15, 2, np.random.default_rng(0)), ValueError, "整除"),
    ("train-heads-divisible", lambda: train_heads(two_relation_task(2, np.random.default_rng(0)),
                                                  init_head_weights(16, 2, np.random.default_rng(0)), num_heads=3, steps=1),
     ValueError, r"d_model=16 必须能被 num_heads=3 整除"),
    ("train-heads-lr", lambda: train_heads(two_relation_task(2, np.random.default_rng(0)),
                                           init_head_weights(16, 2, np.random.default_rng(0)), lr=0.0, steps=1),
     ValueError, r"lr 必须是有限的正实数.*0\.0"),
    ("train-heads-w-o-flag", lambda: train_heads(two_relation_task(2, np.random.default_rng(0)),
                                                 init_head_weights(16, 2, np.random.default_rng(0)), steps=1,
                                                 train_w_o="no"),
     TypeError, r"train_w_o 必须是 bool（True 或 False），收到的是 字符串 'no'"),
    ("pieces-params", lambda: head_pieces({"w_q": np.eye(4)}, np.eye(4), 2), TypeError,
     r"params 必须是含 w_q, w_k, w_v, w_o 的字典"),
    ("mass-shape", lambda: relation_mass(np.zeros((1, 2, 6, 6)), np.arange(5), np.zeros((1, 6), int)),
     ValueError, "prev"),
    ("gap-heads", lambda: head_gap({n: np.eye(4) for n in WEIGHT_NAMES}, 3), ValueError, "num_heads=3"),
    ("mass-prev-out-of-range", lambda: relation_mass(np.zeros((1, 2, 3, 3)), np.array([0, 1, 5]), np.zeros((1, 3), int)),
     ValueError, r"prev 越界：句子只有 T=3 个位置.*\[0, 2\]"),
    ("mass-partner-float", lambda: relation_mass(np.zeros((1, 2, 3, 3)), np.arange(3), np.zeros((1, 3))), TypeError,
     r"partner 是词的编号，dtype 必须是整数"),
    ("mass-prev-list", lambda: relation_mass(np.zeros((1, 2, 3, 3)), [0, 0, 1], np.zeros((1, 3), int)), TypeError,
     r"prev 必须是整数 NumPy 数组"),
    ("mass-no-distinct-row", lambda: relation_mass(np.zeros((1, 1, 2, 2)), np.zeros(2, int), np.zeros((1, 2), int)),
     ValueError, r"每一行的搭档都恰好是前一个词.*0/0"),
    ("gap-params-missing", lambda: head_gap({"w_q": np.eye(4)}, 2), TypeError, r"params 必须是含 w_q, w_k, w_v, w_o 的字典"),
    ("gap-params-list", lambda: head_gap([np.eye(4)], 2), TypeError, r"params 必须是含 .* 的字典.*list"),
    ("task-memory", lambda: two_relation_task(10**9, np.random.default_rng(0)), ValueError,
     r"1000000000 句的任务数据（num_pairs=4, value_dim=2） 要占 .* GiB 内存"),
    ("init-memory", lambda: init_head_weights(10**6, 2, np.random.default_rng(0)), ValueError, r"四个 D × D 的权重（D=1000000） 要占"),
    ("init-scale-overflow", lambda: init_head_weights(4, 2, np.random.default_rng(0), scale=1e308), ValueError,
     r"随机权重（scale=1e\+308） 溢出.*scale 多在 0\.01 到 1 之间"),
    ("train-task-none", lambda: train_heads(None, init_head_weights(16, 2, np.random.default_rng(0)), steps=1), TypeError,
     r"task 必须是含 x、y 的字典.*NoneType"),
    ("train-task-no-y", lambda: train_heads({"x": np.ones((2, 6, 16))}, init_head_weights(16, 2, np.random.default_rng(0)),
                                            steps=1), TypeError, r"task 必须是含 x、y 的字典.*\['x'\]"),
    ("train-task-y-rows", lambda: train_heads({"x": np.ones((2, 6, 16)), "y": np.ones((1, 6, 4))},
                                              init_head_weights(16, 2, np.random.default_rng(0)), steps=1), ValueError,
     r"task\['y'\] 的形状应为 \(2, 6, 任意\)，收到的是 \(1, 6, 4\)"),
    ("train-task-y-wide", lambda: train_heads({"x": np.ones((2, 6, 4)), "y": np.ones((2, 6, 6))},
                                              init_head_weights(4, 2, np.random.default_rng(0)), steps=1), ValueError,
     r"task\['y'\] 的最后一维 6 不能超过 task\['x'\] 的 D=4"),
    ("mass-5d", lambda: relation_mass(np.ones((1, 1, 2, 3, 3)), np.arange(3), np.zeros((1, 3), int)), ValueError,
     r"weights 的形状应为 \(任意, 任意, 任意, 任意\)，收到的是 \(1, 1, 2, 3, 3\)"),
    ("mass-not-square", lambda: relation_mass(np.ones((1, 2, 6, 3)), np.arange(6), np.zeros((1, 6), int)), ValueError,
     r"最后两维要相等.*\(1, 2, 6, 3\)"),
]

test_documented_errors = error_table_test(ERROR_CASES)


def test_the_stored_runs_are_the_trainings_chapter_5_describes(task, heads):
    """``runs.heads`` / ``runs.head_counts`` / ``runs.head_roles``（第 5 章的训练、"头越多越好""每个头固定负责某种语法"
    两段）就是正文说的那几次 ``train_heads``：直接训练两次比较——两个头、起点 ``default_rng(1)`` 同时是 ``heads`` 的
    ``random``、``head_roles`` 的第一个起点和 ``head_counts`` 里 2 个头的第一格；4 个头、起点 2 是 ``head_counts`` 的另一格。
    结果只读。"""
    from transformer_lab.lessons import runs

    counts, roles = runs.head_counts(), runs.head_roles()
    assert counts["heads"].tolist() == [1, 2, 4, 8, 16] and counts["losses"].shape == (5, 2)
    assert roles["seeds"].tolist() == [1, 2, 3, 4] and counts["seeds"].tolist() == [1, 2]
    four = train_heads(task, init_head_weights(16, 4, np.random.default_rng(2)), num_heads=4, checkpoint_every=1200)
    assert counts["losses"][2, 1] == four["losses"][-1]
    two = train_heads(task, init_head_weights(16, 2, np.random.default_rng(1)), checkpoint_every=40)
    np.testing.assert_array_equal(heads["random"]["losses"], two["losses"])
    np.testing.assert_array_equal(heads["random"]["weights"], two["weights"])
    assert counts["losses"][1, 0] == two["losses"][-1]
    np.testing.assert_array_equal(roles["mass"][0], relation_mass(two["weights"][-1], task["prev"], task["partner"]))
    assert not counts["losses"].flags.writeable and not roles["mass"].flags.writeable
    assert not heads["random"]["weights"].flags.writeable
