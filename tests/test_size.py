"""模块的大小：包里每个 ``.py`` 模块不超过 400 行（STYLE.md：一个模块一个主意，约 300 行）。

超过 400 行的模块只能写进 ``ALLOWLIST``（模块 → 登记时的行数），而这张表只许变短：表里的模块比登记的行数更长、
已经不超过 400 行（该从表里删掉了），或者已经不存在，测试都失败。不在表里的新模块一超过 400 行就失败。
变短的办法是把通用的帮手搬到它该在的下层（画图的搬进 ``plot/``，检查搬进 ``_validation``，NumPy 计算搬进
``lessons/``），而不是把几行挤成一行。行数就是 ``wc -l`` 数的行数（空行、注释、文档字符串都算）。
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "transformer_lab"
LIMIT = 400

# 超过 LIMIT 的模块 → 登记时的行数（只许变短；降到 LIMIT 以内就删掉那一项）。现在是空的：包里没有超过 400 行的模块。
ALLOWLIST: dict[str, int] = {}


def line_count(path: Path) -> int:
    """文件有几行（与 ``wc -l`` 相同，最后一行没有换行符也算一行）。"""
    return len(path.read_text(encoding="utf-8").splitlines())


def size_problems(root: Path, allowlist: dict[str, int], limit: int = LIMIT) -> list[str]:
    """``root`` 下每个 ``.py`` 模块对照上限 ``limit`` 和 ``allowlist``（相对路径 → 登记的行数），返回问题（空 = 没问题）。"""
    sizes = {path.relative_to(root).as_posix(): line_count(path) for path in sorted(root.rglob("*.py"))}
    problems = []
    for rel, n in sizes.items():
        if rel not in allowlist:
            if n > limit:
                problems.append(f"{rel} 有 {n} 行，超过了上限 {limit} 行：把通用的帮手搬到下层（plot/、_validation、lessons/），"
                                "不要把几行挤成一行")
        elif n > allowlist[rel]:
            problems.append(f"{rel} 有 {n} 行，比 ALLOWLIST 登记的 {allowlist[rel]} 行还长：表里的模块只许变短"
                            f"（上限 {limit} 行）")
        elif n <= limit:
            problems.append(f"{rel} 只有 {n} 行了，不超过上限 {limit} 行：请把它从 ALLOWLIST 里删掉（这张表只许变短）")
    problems += [f"ALLOWLIST 里的 {rel}（登记 {count} 行）已经不存在：请删掉这一项"
                 for rel, count in allowlist.items() if rel not in sizes]
    return problems


def test_every_module_is_at_most_400_lines():
    problems = size_problems(PKG, ALLOWLIST)
    assert not problems, "\n".join(problems)


def test_the_allowlist_only_names_modules_over_the_limit():
    """表里的每一项都真的超过上限、而且不超过登记的行数（与上面的检查同一规则，这里直接看数）。"""
    for rel, count in ALLOWLIST.items():
        assert LIMIT < line_count(PKG / rel) <= count, rel


# ---------------------------------------------------------------- 反证：每种失败都真的会报出来

def _write(folder: Path, rel: str, lines: int) -> None:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"x{i} = {i}\n" for i in range(lines)), encoding="utf-8")


@pytest.fixture
def package(tmp_path) -> Path:
    """一个假的包：一个 400 行（正好到上限）、一个 401 行（在表里登记了 410 行）、一个 10 行的子文件夹模块。"""
    _write(tmp_path, "at_limit.py", 400)
    _write(tmp_path, "figures/long.py", 401)
    _write(tmp_path, "core/small.py", 10)
    return tmp_path


def test_line_count_is_wc_l(tmp_path):
    (tmp_path / "a.py").write_text("a = 1\n\n# 注释\nb = 2", encoding="utf-8")  # 最后一行没有换行符
    assert line_count(tmp_path / "a.py") == 4


def test_a_module_at_the_limit_or_listed_and_not_grown_passes(package):
    assert size_problems(package, {"figures/long.py": 410}) == []
    assert size_problems(package, {"figures/long.py": 401}) == []


def test_a_new_module_over_the_limit_fails(package):
    _write(package, "lessons/new.py", 401)
    assert size_problems(package, {"figures/long.py": 410}) == [
        "lessons/new.py 有 401 行，超过了上限 400 行：把通用的帮手搬到下层（plot/、_validation、lessons/），不要把几行挤成一行"]


def test_an_unlisted_module_over_the_limit_fails(package):
    (problem,) = size_problems(package, {})
    assert problem.startswith("figures/long.py 有 401 行，超过了上限 400 行")


def test_a_listed_module_that_grew_fails(package):
    assert size_problems(package, {"figures/long.py": 401, "at_limit.py": 399}) == [
        "at_limit.py 有 400 行，比 ALLOWLIST 登记的 399 行还长：表里的模块只许变短（上限 400 行）"]
    _write(package, "figures/long.py", 411)
    assert size_problems(package, {"figures/long.py": 410}) == [
        "figures/long.py 有 411 行，比 ALLOWLIST 登记的 410 行还长：表里的模块只许变短（上限 400 行）"]


def test_a_listed_module_back_under_the_limit_must_leave_the_list(package):
    _write(package, "figures/long.py", 400)
    assert size_problems(package, {"figures/long.py": 410}) == [
        "figures/long.py 只有 400 行了，不超过上限 400 行：请把它从 ALLOWLIST 里删掉（这张表只许变短）"]


def test_a_listed_module_that_no_longer_exists_fails(package):
    assert size_problems(package, {"figures/long.py": 410, "lessons/gone.py": 423}) == [
        "ALLOWLIST 里的 lessons/gone.py（登记 423 行）已经不存在：请删掉这一项"]


def test_the_limit_is_a_parameter(package):
    (problem,) = size_problems(package, {"figures/long.py": 410}, limit=300)
    assert problem == "at_limit.py 有 400 行，超过了上限 300 行：把通用的帮手搬到下层（plot/、_validation、lessons/），不要把几行挤成一行"
