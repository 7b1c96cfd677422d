"""每章的图，一章一个模块（``chNN_<notebook>.py``，与 ``notebooks/`` 里的文件同名）。

一张可交互图 = 一个画图对象（建一次图，``update`` 只改数据）+ 滑块说明，由 ``tl.explore`` 明确导出。
"""
