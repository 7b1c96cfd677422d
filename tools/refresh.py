"""``python3 dev.py refresh``：重新运行 notebook，把输出写回 ``.ipynb``。

存档是确定的：不存运行时刻、去掉 ipywidgets 的输出与状态（存档里只留静态帧和文字）、相邻的同名 stream 合成一段，
同样的输入刷新两次逐字节相同，notebook 的 diff 只显示真正的变化。
"""

from __future__ import annotations

from pathlib import Path

from .env import KERNEL_ENCRYPTION, ROOT

__all__ = ["merge_streams", "refresh"]


def merge_streams(outputs: list) -> list:
    """相邻的同名 stream 输出（连续几次 print）合成一段。内核有时把连续的打印分成两段发出，有时合成一段（看机器
    忙闲），不合并的话每次刷新，存档都无端多出几行差异。nbval 比较之前也会合并 stream（``coalesce_streams``），
    所以合并不影响 nbval 的比较。"""
    merged: list = []
    for output in outputs:
        last = merged[-1] if merged else None
        if (last is not None and output.get("output_type") == "stream" and last.get("output_type") == "stream"
                and last.get("name") == output.get("name")):
            last["text"] = last["text"] + output["text"]
        else:
            merged.append(output)
    return merged


def refresh(paths: list[Path]) -> None:
    """依次运行 ``paths`` 里的 notebook（空列表：notebooks/ 下的全部）并写回输出。"""
    import nbformat
    from nbclient import NotebookClient
    from traitlets.config import Config

    for path in paths or sorted((ROOT / "notebooks").glob("*.ipynb")):
        print(f"==> 运行 {path.relative_to(ROOT)}", flush=True)
        nb = nbformat.read(path, as_version=4)
        NotebookClient(nb, timeout=600, kernel_name="python3", store_widget_state=False, record_timing=False,
                       resources={"metadata": {"path": str(path.parent)}},
                       config=Config({"KernelManager": {"transport_encryption": KERNEL_ENCRYPTION}})).execute()
        for cell in nb.cells:
            cell.metadata.pop("execution", None)  # 不存运行时刻：同样的输入，存档就逐字节相同
            for output in cell.get("outputs", []):
                output.get("data", {}).pop("application/vnd.jupyter.widget-view+json", None)
            if cell.get("outputs"):
                cell.outputs = merge_streams(cell.outputs)
        nb.metadata.pop("widgets", None)
        nbformat.write(nb, path)
