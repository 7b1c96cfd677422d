"""_cache.py：缓存放在哪里、代码版本、原子写入、旧版本的清理（实验结果和可交互图的帧共用这一套）。"""

from __future__ import annotations

import os

import pytest

from transformer_lab import _cache


def test_the_folder_follows_the_environment_variable(monkeypatch, tmp_path):
    monkeypatch.setenv(_cache.CACHE_ENV, str(tmp_path))
    assert _cache.cache_folder() == tmp_path
    for off in ("off", "OFF", "0", "no"):
        monkeypatch.setenv(_cache.CACHE_ENV, off)
        assert _cache.cache_folder() is None
    monkeypatch.delenv(_cache.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if os.name == "posix" and os.uname().sysname == "Linux":
        assert _cache.cache_folder() == tmp_path / "xdg" / "transformer-lab"


def test_the_code_version_is_12_hex_digits_and_changes_with_extra_parts():
    v = _cache.code_version()
    assert len(v) == 12 and int(v, 16) >= 0 and v == _cache.code_version()
    assert _cache.code_version("matplotlib 3.11") != v != _cache.code_version("matplotlib 3.10")


def test_the_code_version_changes_with_the_arithmetic_path(monkeypatch):
    """同一台机器上，设与不设 dev.py 的 ``same_arithmetic`` 那两个变量，算出的最后一位可能不同：结果不能混用。"""
    for name in _cache.ARITHMETIC_ENV:
        monkeypatch.delenv(name, raising=False)
    plain = _cache.code_version()
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    pinned = _cache.code_version()
    monkeypatch.setenv("NPY_DISABLE_CPU_FEATURES", "X86_V4")
    assert len({plain, pinned, _cache.code_version()}) == 3
    monkeypatch.delenv("OPENBLAS_CORETYPE")
    monkeypatch.delenv("NPY_DISABLE_CPU_FEATURES")
    assert _cache.code_version() == plain


def test_the_code_version_of_some_parts_ignores_edits_elsewhere(tmp_path):
    """只算 ``parts`` 那部分：改了别处，版本不变；改了其中一个文件（或加了一个），版本就变。"""
    for rel, text in {"core/a.py": "x = 1", "quiz/q.py": "q = 1", "data/c.txt": "语料", "_validation.py": "v = 1"}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    parts = ("core", "data", "_validation.py")
    before, whole = _cache.source_digest(tmp_path, parts), _cache.source_digest(tmp_path)
    (tmp_path / "quiz/q.py").write_text("q = 2", encoding="utf-8")
    assert _cache.source_digest(tmp_path, parts) == before
    assert _cache.source_digest(tmp_path) != whole
    (tmp_path / "data/c.txt").write_text("语料！", encoding="utf-8")
    assert _cache.source_digest(tmp_path, parts) != before
    middle = _cache.source_digest(tmp_path, parts)
    (tmp_path / "core/b.py").write_text("", encoding="utf-8")
    assert _cache.source_digest(tmp_path, parts) != middle
    with pytest.raises(ValueError, match="corr"):
        _cache.source_digest(tmp_path, ("corr",))


def test_entry_paths_separate_kind_version_and_key(tmp_path):
    a = _cache.entry_path(tmp_path, "帧", "0123456789ab", "k1", ".json")
    assert a.parent == tmp_path and a.name.startswith("帧-0123456789ab-") and a.suffix == ".json"
    assert a != _cache.entry_path(tmp_path, "帧", "0123456789ab", "k2", ".json")
    assert a == _cache.entry_path(tmp_path, "帧", "0123456789ab", "k1", ".json")


def test_a_failed_write_leaves_neither_a_half_file_nor_a_temporary_one(tmp_path):
    path = tmp_path / "sub" / "x.bin"

    def broken(handle):
        handle.write(b"half")
        raise OSError("磁盘满了")

    with pytest.raises(OSError):
        _cache.write_atomically(path, broken)
    assert not path.exists() and list((tmp_path / "sub").iterdir()) == []
    _cache.write_atomically(path, lambda handle: handle.write(b"whole"))
    assert path.read_bytes() == b"whole"


def _write(folder, kind, version, key, age):
    path = _cache.entry_path(folder, kind, version, key, ".bin")
    path.write_bytes(b"x")
    os.utime(path, (0, 1_000_000 - age))
    return path


def test_only_the_most_recently_used_versions_of_one_kind_are_kept(tmp_path):
    """每个版本两个文件；v2 最久没用，被删掉；v1 虽然先写，刚用过（touch）就留下；别的种类不动。"""
    for age, version in ((40, "1" * 12), (30, "2" * 12), (20, "3" * 12), (10, "4" * 12)):
        for key in ("a", "b"):
            _write(tmp_path, "帧", version, key, age)
    other = _write(tmp_path, "别的", "9" * 12, "a", 999)
    newest_of_v1 = _cache.entry_path(tmp_path, "帧", "1" * 12, "a", ".bin")
    _cache.touch(newest_of_v1)
    _cache.evict_old_versions(tmp_path, "帧", ".bin")
    left = sorted({p.name.split("-")[1] for p in tmp_path.glob("帧-*.bin")})
    assert left == ["1" * 12, "3" * 12, "4" * 12] and len(list(tmp_path.glob("帧-*.bin"))) == 6
    assert other.exists()


def test_the_eviction_check_can_fail(tmp_path):
    """反证：keep=4 时四个版本都留着——上面那个测试看到的删除确实来自 keep=3。"""
    for age, version in ((40, "1" * 12), (30, "2" * 12), (20, "3" * 12), (10, "4" * 12)):
        _write(tmp_path, "帧", version, "a", age)
    _cache.evict_old_versions(tmp_path, "帧", ".bin", keep=4)
    assert len(list(tmp_path.glob("帧-*.bin"))) == 4


def _package_function(body: str, module: str = "transformer_lab.figures.fake", default: str = "False"):
    """一个看起来定义在本包模块顶层的函数（``__module__`` 是 ``module``），函数体是 ``body``。"""
    namespace = {"__name__": module}
    exec(f"def caption(step, narrow={default}):\n    return {body}", namespace)
    return namespace["caption"]


def test_package_functions_are_fingerprinted_by_their_code_and_other_functions_are_refused():
    first = _package_function("f'第 {step} 步'")
    assert _cache.fingerprint({"caption": first}) == _cache.fingerprint({"caption": _package_function("f'第 {step} 步'")})
    different = [_package_function("f'第 {step} 次'"), _package_function("f'第 {step + 1} 步'"),
                 _package_function("f'第 {step} 步'", default="True")]
    prints = {_cache.fingerprint({"caption": f}) for f in [first, *different]}
    assert None not in prints and len(prints) == 4  # 改一个字、一个运算、一个默认值，指纹都变

    def nested(step):
        return step

    namespace = {"__name__": "transformer_lab.figures.fake"}
    exec("def make(offset):\n    def caption(step):\n        return step + offset\n    return caption", namespace)
    closure = namespace["make"](1)
    closure.__qualname__ = "caption"  # 名字看起来在顶层，结果却取决于捕获的 offset
    refused = [closure, _package_function("step", module="__main__"), nested, lambda step: step,
               _package_function("step", default="object()")]
    assert all(_cache.fingerprint({"caption": f}) is None for f in refused)


def test_figures_whose_data_hold_a_caption_function_are_cached(rendered):
    """第 5 章的两张训练图的数据里有一个写标题的函数：以前指纹不认函数，它们每次都重画（各约 9 秒）。"""
    assert all(rendered(name).ex.cache_key() is not None for name in ("head_specialisation", "head_symmetry"))
