"""本书长出来的两份中文种子文档（``../shared/seeds/``，不在仓库里）的"指纹"：其中每一段连续 ``RUN`` 个汉字的
sha256 前 ``DIGEST_BYTES`` 个字节，排好序存在 ``tests/data/seed_runs.bin``。

测试拿正文里每一段连续 9 个汉字去比指纹，就能发现照抄种子原文的句子——仓库里却不必放种子原文。
种子文档在身边时（``SEEDS`` 存在），``python tests/helpers/seed_text.py`` 重新生成指纹文件，测试也会核对它没有过期。
"""

from __future__ import annotations

import bisect
import hashlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT.parent / "shared" / "seeds"
DIGESTS = ROOT / "tests" / "data" / "seed_runs.bin"
RUN = 9  # 连续几个汉字算"照抄"
DIGEST_BYTES = 6  # 48 位：正文约十万段 × 指纹约三万条，偶然撞上的期望次数约 1e-5
HAN = re.compile(r"[\u4e00-\u9fff]+")


def runs(text: str, n: int = RUN) -> set[str]:
    """``text`` 里每一段连续 ``n`` 个汉字（标点、字母、空格都会断开一段）。

    >>> sorted(runs("一二三四五六七八九十，甲乙", n=9))
    ['一二三四五六七八九', '二三四五六七八九十']
    """
    return {r[i:i + n] for r in HAN.findall(text) for i in range(len(r) - n + 1)}


def digest(run: str) -> bytes:
    return hashlib.sha256(run.encode("utf-8")).digest()[:DIGEST_BYTES]


def seed_digests(folder: Path = SEEDS) -> bytes:
    """种子文档里全部 9 字段的指纹，排好序、连在一起。"""
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(folder.iterdir()) if p.is_file())
    return b"".join(sorted({digest(r) for r in runs(text)}))


class SeedIndex:
    """读 ``DIGESTS``，回答"这一段在不在种子里"。"""

    def __init__(self, data: bytes):
        if len(data) % DIGEST_BYTES:
            raise ValueError(f"指纹文件长度 {len(data)} 不是 {DIGEST_BYTES} 的倍数：文件坏了，重新生成。")
        self.keys = [data[i:i + DIGEST_BYTES] for i in range(0, len(data), DIGEST_BYTES)]

    def __contains__(self, run: str) -> bool:
        key = digest(run)
        i = bisect.bisect_left(self.keys, key)
        return i < len(self.keys) and self.keys[i] == key

    def copied(self, text: str) -> list[str]:
        """``text`` 里出现在种子里的 9 字段（排好序）。"""
        return sorted(r for r in runs(text) if r in self)


if __name__ == "__main__":
    DIGESTS.parent.mkdir(parents=True, exist_ok=True)
    DIGESTS.write_bytes(seed_digests())
    print(f"{DIGESTS.relative_to(ROOT)}：{DIGESTS.stat().st_size // DIGEST_BYTES} 条指纹")
