"""写书和测书用的工具（不属于读者安装的工具包 ``transformer_lab``，包也从不导入它们）。

* ``env``：``dev.py`` 的各条命令给子进程定下的环境（单线程、统一的浮点指令、批量运行的内存设置）、虚拟环境、
  钉死版本的依赖 (``constraints.txt``)；
* ``refresh``：重新运行 notebook 并把输出写回 ``.ipynb``；
* ``site``：构建网站、判断能否重用上次的构建、在本机端口上提供网站、启动系统里的 Chromium；
* ``lab``：启动 JupyterLab、在浏览器里打开 notebook、运行所有单元格。

测试（``pyproject.toml`` 的 ``pythonpath``）和基准脚本（``python dev.py bench``）都用 ``import tools.xxx`` 导入，
不改 ``sys.path``。
"""
