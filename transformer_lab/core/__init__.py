"""论文本身：与章节无关、只依赖 NumPy 的 Transformer 零件。常用函数也从 ``transformer_lab`` 顶层导出。"""
