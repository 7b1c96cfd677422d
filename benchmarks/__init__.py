"""速度与体积的测量脚本（``python dev.py bench``，或 ``python -m benchmarks.<名字>`` 只跑一个）。"""
