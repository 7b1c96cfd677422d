"""仓库根目录的 dev.py：``refresh`` 写回存档前把相邻的同名 stream 输出合成一段（``merge_streams``）。"""

import importlib.util
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("dev", ROOT / "dev.py")
dev = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dev)


def stream(name: str, text: str):
    return nbformat.v4.new_output("stream", name=name, text=text)


def test_adjacent_prints_become_one_stream_and_the_order_is_kept():
    figure = nbformat.v4.new_output("display_data", data={"text/plain": "图"})
    outputs = [stream("stdout", "第 1 行\n"), stream("stdout", "第 2 行\n"), stream("stderr", "警告\n"),
               stream("stdout", "第 3 行\n"), figure, stream("stdout", "第 4 行\n"), stream("stdout", "第 5 行\n")]
    merged = dev.merge_streams(outputs)
    assert [(o["output_type"], o.get("name"), o.get("text")) for o in merged] == [
        ("stream", "stdout", "第 1 行\n第 2 行\n"), ("stream", "stderr", "警告\n"), ("stream", "stdout", "第 3 行\n"),
        ("display_data", None, None), ("stream", "stdout", "第 4 行\n第 5 行\n")]


def test_a_split_and_an_unsplit_run_are_stored_the_same():
    """同一个单元格，内核一次分两段发、一次一段发：合并后存档逐字相同。"""
    split = dev.merge_streams([stream("stdout", "甲\n"), stream("stdout", "乙\n")])
    whole = dev.merge_streams([stream("stdout", "甲\n乙\n")])
    assert split == whole
