"""一个真正训练过的 BERT 编码器，用本书自己的 ``tl.core`` 函数一层层算出来。

BERT（以及它的小个子 MiniLM、多语言的 e5-small）就是第 8 章的那一层（后归一化 post-LN）叠 L 次，
前面加一层嵌入；唯一的不同是前馈网络的激活函数用 GELU::

    x₀ = LN(词嵌入[ids] + 位置嵌入[0..T-1] + 句子类型嵌入[0])            (嵌入层，ε 用模型自己的 1e-12)
    对每一层 ℓ = 1..L（就是 ``encoder_layer(x, p, H, eps=ε, activation="gelu")``）：
        a = MultiHead(x)                      (Q/K/V/O 都带偏置)
        h = LN₁(x + a)
        x = LN₂(h + FFN_GELU(h))

``hidden_states`` 是 x₀, x₁, …, x_L（L + 1 个），``attentions`` 是每层每个头的注意力权重。

权重的两种摆法：PyTorch 的线性层存的是 (out, in)，算的是 x Wᵀ；本书约定行向量 x @ W，W 是 (in, out)。
``layer_params`` 在载入时把每个矩阵转置一次（``.T`` 只是换个看法，不复制），得到和第 8 章
``encoder_layer`` 一样的 16 个参数名。

本模块只依赖 NumPy、``core`` 和参数检查 ``_validation``。形状字母：T 词元数，H 头数，D = d_model，d_ff 前馈隐藏层宽度，L 层数。
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from .. import _validation as check
from ..core.embedding import embed
from ..core.encoder import PARAM_KEYS, encoder_layer
from ..core.layer_norm import layer_norm

__all__ = ["BertConfig", "BertWeights", "CHECKPOINT_NAMES", "EMBEDDING_NAMES", "layer_params", "forward",
           "mean_pool"]

# 本书的参数名（与 core.encoder.PARAM_KEYS 相同）→ 检查点里第 i 层的名字 encoder.layer.{i}.<这里的后缀>
CHECKPOINT_NAMES = {
    "w_q": "attention.self.query.weight", "b_q": "attention.self.query.bias",
    "w_k": "attention.self.key.weight", "b_k": "attention.self.key.bias",
    "w_v": "attention.self.value.weight", "b_v": "attention.self.value.bias",
    "w_o": "attention.output.dense.weight", "b_o": "attention.output.dense.bias",
    "w_1": "intermediate.dense.weight", "b_1": "intermediate.dense.bias",
    "w_2": "output.dense.weight", "b_2": "output.dense.bias",
    "ln1_gamma": "attention.output.LayerNorm.weight", "ln1_beta": "attention.output.LayerNorm.bias",
    "ln2_gamma": "output.LayerNorm.weight", "ln2_beta": "output.LayerNorm.bias",
}
EMBEDDING_NAMES = {
    "word": "embeddings.word_embeddings.weight", "position": "embeddings.position_embeddings.weight",
    "token_type": "embeddings.token_type_embeddings.weight", "ln_gamma": "embeddings.LayerNorm.weight",
    "ln_beta": "embeddings.LayerNorm.bias",
}


@dataclass(frozen=True)
class BertConfig:
    """模型的尺寸：词表大小 V、宽度 D、层数 L、头数 H、前馈宽度 d_ff、最多几个位置、句子类型数、LayerNorm 的 ε。"""

    vocab_size: int
    d_model: int
    num_layers: int
    num_heads: int
    d_ff: int
    max_positions: int
    type_vocab_size: int
    eps: float

    def sizes(self) -> dict[str, int]:
        """交给 ``tl.costs.encoder_costs`` 的尺寸：``tl.costs.encoder_costs(T, **model.config.sizes())``。"""
        return {"vocab_size": self.vocab_size, "d_model": self.d_model, "num_layers": self.num_layers,
                "num_heads": self.num_heads, "d_ff": self.d_ff, "max_positions": self.max_positions,
                "type_vocab_size": self.type_vocab_size}


@dataclass(frozen=True)
class BertWeights:
    """算前向要用的全部权重，已经按本书的约定摆好。

    ``word_rows(ids)`` 取出词嵌入表里这些编号的行 (n, D)：fp32 的模型直接切片，4 位的模型只把这几行解量化
    （25 万行的表整个解开要 384 MB）。``layers[ℓ]`` 是第 ℓ 层的 16 个参数（``PARAM_KEYS``）。
    """

    word_rows: Callable[[np.ndarray], np.ndarray]
    position: np.ndarray  # (max_positions, D)
    token_type: np.ndarray  # (type_vocab_size, D)
    ln_gamma: np.ndarray  # (D,)
    ln_beta: np.ndarray  # (D,)
    layers: tuple[dict[str, np.ndarray], ...]


def layer_params(state_dict: Mapping[str, np.ndarray], layer: int) -> dict[str, np.ndarray]:
    """第 ``layer`` 层的 16 个参数，名字和摆法与第 8 章 ``encoder_layer`` 相同：矩阵转置成 (in, out)（不复制）。

    Examples
    --------
    >>> import numpy as np
    >>> sd = {f"encoder.layer.0.{name}": np.zeros((3, 2)) for name in CHECKPOINT_NAMES.values()}
    >>> p = layer_params(sd, 0)
    >>> p["w_q"].shape, np.shares_memory(p["w_q"], sd["encoder.layer.0.attention.self.query.weight"])
    ((2, 3), True)
    """
    prefix = f"encoder.layer.{layer}."
    params = {}
    for key in PARAM_KEYS:
        value = state_dict[prefix + CHECKPOINT_NAMES[key]]
        params[key] = value.T if key.startswith("w_") else value  # (out, in) → (in, out)
    return params


def forward(weights: BertWeights, config: BertConfig, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """一句话（编号 ``ids``，含句首句尾的特殊词元）走完整个编码器。

    Returns
    -------
    hidden_states : ndarray of shape (L + 1, T, D)
        第 0 个是嵌入层的输出，第 ℓ 个是第 ℓ 层的输出。
    attentions : ndarray of shape (L, H, T, T)
        第 ℓ 层第 h 个头里，第 t 个词元对第 s 个词元的注意力权重（每行和为 1）。
    """
    T = len(ids)
    unique, local = np.unique(ids, return_inverse=True)  # 只取用得到的那几行词嵌入
    x = (embed(local.reshape(T), weights.word_rows(unique))  # (T, D) 词是什么
         + embed(np.arange(T), weights.position)  # (T, D) 在第几个位置
         + embed(np.zeros(T, dtype=int), weights.token_type))  # (T, D) 第几句话（只有一句：全是 0）
    x = layer_norm(x, weights.ln_gamma, weights.ln_beta, config.eps)  # (T, D)
    hidden, attentions = [x], []
    for p in weights.layers:  # 第 8 章的 encoder_layer，只是前馈网络用 GELU
        x, w = encoder_layer(x, p, config.num_heads, eps=config.eps, activation="gelu")  # (T, D), (H, T, T)
        hidden.append(x)
        attentions.append(w)
    return np.stack(hidden), np.stack(attentions)  # (L + 1, T, D), (L, H, T, T)


def mean_pool(last_hidden: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """句向量：最后一层所有词元（含句首句尾）的平均，再缩成长度 1（这两个模型训练时就是这样用的）。

    Parameters
    ----------
    last_hidden : ndarray of shape (..., T, D)
        最后一层的输出（``hidden_states[-1]``）。
    mask : ndarray of bool, shape (..., T), optional
        只平均 True 的词元（几句话补齐到一样长时，补上的 [PAD] 记 False）。不给 = 全部词元。

    Raises
    ------
    TypeError
        ``last_hidden`` 不是实数数组；``mask`` 不是 bool 数组。
    ValueError
        ``last_hidden`` 不到 2 维、是空的或有 NaN/inf；``mask`` 的形状不是 (..., T)，或某一句全是 False
        （一个词元都不平均：0/0）；平均出来的向量长度是 0（缩不成长度 1：0/0）。

    Examples
    --------
    >>> import numpy as np
    >>> mean_pool(np.array([[3.0, 0.0], [3.0, 8.0]]))     # 平均 [3, 4]，长度 5
    array([0.6, 0.8])
    >>> mean_pool(np.array([[3.0, 4.0], [9.0, 9.0]]), mask=np.array([True, False]))   # 第二个是 [PAD]
    array([0.6, 0.8])
    """
    x = check.as_real_array(last_hidden, "last_hidden", min_ndim=2)  # (..., T, D)
    if mask is None:
        v = x.mean(axis=-2)  # (..., D)
    else:
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
            raise TypeError(f"mask 必须是 bool 类型的 NumPy 数组（True = 算进平均），收到的是 {check.describe(mask)}。")
        if mask.shape != x.shape[:-1]:
            raise ValueError(f"mask 的形状必须是 last_hidden 去掉最后一维的 {x.shape[:-1]}（每个词元一个），"
                             f"收到的是 {mask.shape}。")
        counts = mask.sum(axis=-1)  # (...,)
        if np.any(counts == 0):
            where = tuple(int(i) for i in np.argwhere(counts == 0)[0])
            raise ValueError(f"mask 在第 {where} 句全是 False：一个词元都不平均，平均值是 0/0。每句至少要有一个 True。")
        w = mask.astype(x.dtype)[..., None]  # (..., T, 1)
        v = (x * w).sum(axis=-2) / counts[..., None].astype(x.dtype)  # (..., D)
    length = np.linalg.norm(v, axis=-1, keepdims=True)  # (..., 1)
    if np.any(length == 0):
        raise ValueError("last_hidden 的平均向量长度是 0（例如各词元的向量正好相互抵消、或全是 0），"
                         "缩成长度 1 要除以 0：0/0。真模型的输出不会这样，请检查输入。")
    return v / length  # (..., D)
