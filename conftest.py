"""整个仓库的 pytest 入口检查（tests/、包里的 doctest、notebooks/ 的 nbval 都经过这里）：不在统一的浮点指令上就
拒绝启动。存档的输出只在 ``tools.env.same_arithmetic()`` 那一档指令上逐字重现，而这些变量必须在 NumPy 载入之前
设好，测试进程没法自己补上——所以与其让几十个数值测试莫名其妙地失败，不如一开始就用中文说清楚（``dev.py`` 会设好）。
"""

import pytest

from tools.env import arithmetic_advice, missing_arithmetic


def pytest_configure(config):
    missing = missing_arithmetic()
    if missing:
        raise pytest.UsageError(arithmetic_advice(missing))
