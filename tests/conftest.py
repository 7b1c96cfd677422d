"""测试共用设置：Hypothesis 配置 (profile)。

默认用 "ci"（每个性质 50 个例子、不计时限）；本地想多跑可以 HYPOTHESIS_PROFILE=dev pytest。
"""

import os

from hypothesis import settings

settings.register_profile("ci", max_examples=50, deadline=None)
settings.register_profile("dev", max_examples=300, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
