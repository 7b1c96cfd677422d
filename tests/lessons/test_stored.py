"""lessons/stored.py：实验结果存到硬盘上再读回来，要和算出来的一模一样；钥匙变了就重算；坏文件、关掉缓存都能应付。"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from transformer_lab import _cache
from transformer_lab.lessons import stored as st
from transformer_lab.lessons.optim import Run

from helpers.damage import draw_damage


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv(st.CACHE_ENV, str(tmp_path))
    return tmp_path


def nested():
    run = Run([3.0, 2.0, 1.0], [0, 2], [{"w": np.arange(4.0)}, {"w": np.ones(4)}], weights=np.eye(2),
              test={"tokens": np.array([[1, 2], [3, 4]])})
    return {"task": {"tokens": np.array([["甲", "乙"], ["丙", "丁"]]), "n": 48}, ("pre-LN", 16): {"grad": np.zeros((2, 3))},
            "runs": [run, run], "pair": (np.float64(0.5), "字", None, True)}


def assert_same(a, b):
    """两份结果逐项相同：同样的结构、同样的数组（dtype 也一样）。"""
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    elif isinstance(a, (dict, type({}.items()))) or hasattr(a, "keys"):
        assert set(a) == set(b)
        for k in a:
            assert_same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    else:
        assert a == b and type(a) is type(b) or (isinstance(a, np.generic) and a.item() == b)


def test_round_trip_keeps_structure_and_values(folder):
    value = nested()
    first = st.stored("往返", nested, 0)
    again = st.stored("往返", lambda: pytest.fail("第二次不该重算"), 0)
    assert_same(value, first)
    assert_same(value, again)
    assert isinstance(again["runs"][0], Run) and again["runs"][0].at(2) == 1
    assert isinstance(next(k for k in again if isinstance(k, tuple)), tuple)  # 元组做键：读回来还是元组
    assert not again["task"]["tokens"].flags.writeable  # 读回来的也是只读的


def test_the_round_trip_check_can_fail():
    with pytest.raises(AssertionError):
        assert_same({"x": np.arange(3)}, {"x": np.arange(3.0)})  # dtype 不同也算不同
    with pytest.raises(AssertionError):
        assert_same({"x": (1, 2)}, {"x": (1, 3)})


def test_different_arguments_or_code_give_a_different_file(folder, monkeypatch):
    st.stored("钥匙", lambda: np.zeros(1), 0)
    st.stored("钥匙", lambda: np.zeros(1), 1)
    assert len(list(folder.glob("钥匙-*.npz"))) == 2
    monkeypatch.setattr(_cache, "code_version", lambda *extra, **parts: "0123456789ab")
    calls = []
    st.stored("钥匙", lambda: calls.append(1) or np.zeros(1), 0)
    assert calls == [1] and len(list(folder.glob("钥匙-*.npz"))) == 3  # 代码一改就重算，不用旧结果


def test_old_code_versions_are_cleaned_up_when_a_new_one_is_stored(folder, monkeypatch):
    """清理的规则本身在 tests/test_cache.py 里测；这里只看 stored 真的调用了它：第 4 个代码版本写下时，最早的没了。"""
    for version in ("aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc", "dddddddddddd"):
        monkeypatch.setattr(_cache, "code_version", lambda *extra, v=version, **parts: v)
        st.stored("清理", lambda: np.zeros(1), 0)
        for path in folder.glob("清理-*.npz"):
            os.utime(path, (0, path.stat().st_mtime - 1))  # 先写的更旧（同一秒里写下的也排得开）
    assert sorted(p.name.split("-")[1] for p in folder.glob("清理-*.npz")) == ["b" * 12, "c" * 12, "d" * 12]


def test_a_corrupted_file_is_recomputed(folder):
    st.stored("坏文件", lambda: np.arange(3), 0)
    (path,) = folder.glob("坏文件-*.npz")
    path.write_bytes(b"\x00\x01 truncated")
    assert st.stored("坏文件", lambda: np.arange(5), 0).tolist() == [0, 1, 2, 3, 4]


def test_off_means_always_compute(monkeypatch, tmp_path):
    monkeypatch.setenv(st.CACHE_ENV, "off")
    calls = []
    for _ in range(2):
        st.stored("关掉", lambda: calls.append(1) or np.zeros(1), 0)
    assert calls == [1, 1] and st.cache_folder() is None


def test_object_arrays_and_unknown_types_are_refused(folder):
    with pytest.raises(TypeError, match="object 数组"):
        st.stored("对象", lambda: np.array([{"a": 1}], dtype=object), 0)
    with pytest.raises(TypeError, match="存不下的类型 set"):
        st.stored("集合", lambda: {"s": {1, 2}}, 0)


def test_the_book_runs_come_back_equal_to_a_fresh_computation(folder, monkeypatch):
    """第 3 章的训练：存下来再读回的，与关掉缓存直接算的逐项相同。"""
    from transformer_lab.lessons import runs

    fresh = runs._train_glasses(0)
    first = st.stored("glasses", lambda: runs._train_glasses(0), 0)
    again = st.stored("glasses", lambda: pytest.fail("不该重算"), 0)
    assert again["seconds"] == first["seconds"]  # 读回的是当初训练时量的用时，不是读文件的用时
    # 用时每次训练都不同，其余每一项都必须相同
    without = lambda run: {k: v for k, v in run.items() if k != "seconds"}
    assert_same(without(fresh), without(first))
    assert_same(without(fresh), without(again))


WAIT_AND_COUNT = """
import sys, time
from pathlib import Path
from transformer_lab.lessons.stored import stored
log, me = Path(sys.argv[1]), sys.argv[2]
def compute():
    with log.open("a") as f:
        f.write("算了一次\\n")
    if me == "第一个":  # 算得慢：一直算到第二个进程也来要同一份结果，再多算半秒
        deadline = time.monotonic() + 60
        while not (log.parent / "第二个来了").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
    return {"x": 42}
if me == "第二个":
    (log.parent / "第二个来了").touch()
print(stored("排队", compute, 0)["x"])
"""


@pytest.mark.skipif(os.name != "posix", reason="只在有 fcntl 的系统上排队")
def test_two_processes_wanting_the_same_run_compute_it_once(folder, tmp_path):
    """两个进程同时要同一份还没算过的结果：第一个在算（一直算到第二个也来要），第二个在锁外等它写完再读，
    而不是各算一遍。没有锁时日志里会有两行。"""
    log = tmp_path / "log.txt"
    env = {**os.environ, "TRANSFORMER_LAB_CACHE": str(folder)}

    def start(who):
        return subprocess.Popen([sys.executable, "-c", WAIT_AND_COUNT, str(log), who], env=env,
                                stdout=subprocess.PIPE, text=True)

    first = start("第一个")
    deadline = time.monotonic() + 60
    while not log.exists() and time.monotonic() < deadline:  # 第一个已经开始算了
        time.sleep(0.05)
    second = start("第二个")
    outputs = [p.communicate(timeout=120)[0].strip() for p in (first, second)]
    assert outputs == ["42", "42"]
    assert log.read_text(encoding="utf-8").splitlines() == ["算了一次"]


def test_a_result_that_is_none_is_stored_too(folder):
    calls = []
    assert st.stored("空", lambda: calls.append(1), 0) is None
    assert st.stored("空", lambda: calls.append(1), 0) is None and calls == [1]


# ---------------------------------------------------------------- 坏掉的、冒名的、旧格式的缓存文件（issue 41 第 9 条）

def counting(value_of):
    """一个数着调用次数的 compute：``calls`` 记下每次调用，返回 ``value_of()``（每次新算的一份）。"""
    calls = []
    return calls, lambda: calls.append(1) or value_of()


def only_file(folder, name):
    (path,) = folder.glob(f"{name}-*.npz")
    return path


def length_classes(good: bytes) -> dict[str, int]:
    """截断的位置按文件的各段分类：空文件、格式行里、封条那一行里、刚好只剩封条、内容里、只差最后一个字节。"""
    line_end = good.index(b"\n", len(_cache.SEAL)) + 1
    return {"空文件": 0, "一个字节": 1, "格式行差一个字节": len(_cache.SEAL) - 1, "只有格式行": len(_cache.SEAL),
            "封条一半": (len(_cache.SEAL) + line_end) // 2, "封条差换行": line_end - 1, "只有封条": line_end,
            "内容一半": (line_end + len(good)) // 2, "差最后一个字节": len(good) - 1}


def test_the_length_classes_cover_every_part_of_the_file(folder):
    st.stored("分段", nested, 0)
    good = only_file(folder, "分段").read_bytes()
    cuts = sorted(length_classes(good).values())
    assert cuts[0] == 0 and cuts[-1] == len(good) - 1 and len(set(cuts)) == len(cuts)  # 各段互不相同


@pytest.mark.parametrize("where", ["空文件", "一个字节", "格式行差一个字节", "只有格式行", "封条一半", "封条差换行",
                                   "只有封条", "内容一半", "差最后一个字节"])
def test_a_file_truncated_anywhere_is_recomputed_and_overwritten(folder, where):
    st.stored("截断", nested, 0)
    path = only_file(folder, "截断")
    good = path.read_bytes()
    path.write_bytes(good[:length_classes(good)[where]])
    calls, compute = counting(nested)
    assert_same(nested(), st.stored("截断", compute, 0))
    assert calls == [1] and path.read_bytes()[:len(_cache.SEAL)] == _cache.SEAL  # 重算了，也覆盖了坏文件
    assert_same(nested(), st.stored("截断", lambda: pytest.fail("覆盖之后不该再算"), 0))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=hs.data())
def test_any_truncation_or_flipped_byte_gives_the_fresh_result_and_never_raises(folder, data):
    """截断在任意位置、任意一个字节改成任意别的值：读到的总是与重新计算的相同，没有异常漏出来。（改的是封条里
    JSON 的空白时文件仍然完好，可以不重算；所以这里只要求结果相同、最多算一次。）"""
    path = folder / "性质.npz"
    if not path.exists():
        st.stored("性质", nested, 0)
        only_file(folder, "性质").rename(path)
    good = path.read_bytes()
    bad = draw_damage(data, good)
    for old in folder.glob("性质-*.npz"):
        old.unlink()
    target = _cache.entry_path(folder, "性质", _cache.code_version(parts=st.RUN_PARTS), repr((0,)), st.SUFFIX)
    target.write_bytes(bad)
    calls, compute = counting(nested)
    assert_same(nested(), st.stored("性质", compute, 0))
    assert len(calls) <= 1


def test_another_keys_valid_file_is_not_served_as_this_result(folder):
    """另一个实验（别的参数、别的名字）的完好文件被复制成这把钥匙的文件名：读出来的是这把钥匙重算的结果。"""
    st.stored("冒名", lambda: {"x": np.arange(3) + 1}, 1)
    st.stored("别的实验", lambda: {"x": np.arange(3) + 7}, 0)
    st.stored("冒名", lambda: {"x": np.arange(3)}, 0)
    mine = _cache.entry_path(folder, "冒名", _cache.code_version(parts=st.RUN_PARTS), repr((0,)), st.SUFFIX)
    others = [p for p in folder.glob("*.npz") if p != mine]
    assert len(others) == 2
    for other in others:
        mine.write_bytes(other.read_bytes())
        calls, compute = counting(lambda: {"x": np.arange(3)})
        assert st.stored("冒名", compute, 0)["x"].tolist() == [0, 1, 2] and calls == [1]


def test_a_file_of_another_code_version_under_this_name_is_recomputed(folder, monkeypatch):
    """旧代码版本写的完好文件被改名成新版本的文件名（封条里的代码版本对不上）：重算。"""
    monkeypatch.setattr(_cache, "code_version", lambda *extra, **parts: "a" * 12)
    st.stored("版本", lambda: np.arange(3) * 2, 0)
    old = only_file(folder, "版本")
    monkeypatch.setattr(_cache, "code_version", lambda *extra, **parts: "b" * 12)
    old.rename(folder / old.name.replace("a" * 12, "b" * 12))
    calls, compute = counting(lambda: np.arange(3))
    assert st.stored("版本", compute, 0).tolist() == [0, 1, 2] and calls == [1]


def old_format_save(path, value):
    """修复之前的 ``_save``：整个文件就是一个 .npz，没有封条。"""
    arrays = []
    tree = st.encode(value, arrays)
    np.savez(path, __tree__=np.array(json.dumps(tree, ensure_ascii=False)), **{f"a{i}": a for i, a in enumerate(arrays)})


def test_an_old_format_file_is_treated_as_stale_and_rewritten(folder):
    st.stored("旧格式", nested, 0)
    path = only_file(folder, "旧格式")
    with path.open("wb") as handle:
        old_format_save(handle, {"x": np.arange(9)})  # 今天的代码写下的样子，内容不同
    calls, compute = counting(nested)
    assert_same(nested(), st.stored("旧格式", compute, 0))
    assert calls == [1] and path.read_bytes().startswith(_cache.SEAL)


def test_a_good_file_is_used_without_computing_again(folder):
    """反面：完好的文件照样直接读，不重算（数调用次数）。"""
    calls, compute = counting(nested)
    st.stored("完好", compute, 0)
    for _ in range(3):
        assert_same(nested(), st.stored("完好", compute, 0))
    assert calls == [1]


def test_a_sealed_file_whose_structure_is_wrong_is_recomputed(folder):
    """封条、校验和都对（有意伪造的），内容的结构却不对：不认识的种类、缺的数组、不是 .npz——都重算，不抛异常。"""
    st.stored("结构", lambda: np.arange(3), 0)
    path = only_file(folder, "结构")
    key, version = st._key("结构", (0,)), _cache.code_version(parts=st.RUN_PARTS)

    def npz(tree, **arrays):
        buffer = io.BytesIO()
        np.savez(buffer, __tree__=np.array(json.dumps(tree)), **arrays)
        return buffer.getvalue()

    for payload in (npz({"pickle": 1}), npz({"array": 3}, a0=np.zeros(2)), npz({"array": 0, "list": []}),
                    npz({"map": [[{"list": []}, {"scalar": 1}]]}), npz({"run": {"losses": {"scalar": 1}}}),
                    npz({"scalar": {"a": 1}}), b"not a zip", npz({"array": 0}, a0=np.array([{"a": 1}], dtype=object))):
        _cache.write_sealed(path, key, version, payload)
        calls, compute = counting(lambda: np.arange(3))
        assert st.stored("结构", compute, 0).tolist() == [0, 1, 2] and calls == [1]
