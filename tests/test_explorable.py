"""可交互图：活模式 (update / png / widget) 与静态网页模式 (static_html)。

前半部分对 tl.explore.catalog() 里的每一张图都成立；后半部分是第 4 章 scaling_saturation 的具体检查。
"""

import base64
import html as html_lib
import json
import re
import warnings

import numpy as np
import pytest

import transformer_lab as tl
from transformer_lab.explorable import Slider

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
DK_VALUES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]


@pytest.fixture(scope="module", params=sorted(tl.explore.catalog()))
def any_ex(request):
    return tl.explore.catalog()[request.param]()


@pytest.fixture(scope="module")
def ex():
    return tl.explore.scaling_saturation()


def _page(explorable):
    """static_html() 的文本和内嵌的 JSON 数据 (sliders / frames / alts)。"""
    text = explorable.static_html()
    blobs = re.findall(r'<script type="application/json" class="tlx-data">(.*?)</script>', text, flags=re.S)
    assert len(blobs) == 1
    return text, json.loads(blobs[0])  # json 会把 "<\/" 还原成 "</"


# ---------------------------------------------------------------- 每一张可交互图


def test_catalog_lists_every_figures_module_export():
    from transformer_lab.explore import _MODULES

    exported = {name for module in _MODULES for name in module.__all__}
    assert exported == set(tl.explore.catalog()) and exported


def test_every_grid_point_updates_and_renders_without_warnings(any_ex):
    """扫描：网格上每一个取值都能画——不抛异常、不出警告、没有 NaN。"""
    for params in any_ex.grid():
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # 缺字、溢出、除零……任何警告都算失败
            drawn = any_ex.update(**params)
            png = any_ex.png(**params)
        assert png.startswith(PNG_SIGNATURE)
        for key, value in drawn.items():
            assert np.all(np.isfinite(value)), f"{params}: {key}"


def test_static_html_structure(any_ex):
    text, data = _page(any_ex)
    inputs = re.findall(r"<input\b[^>]*>", text)
    assert len(inputs) == len(any_ex.sliders)
    for inp, s in zip(inputs, any_ex.sliders):
        assert 'type="range"' in inp and 'min="0"' in inp and f'max="{len(s.values) - 1}"' in inp
        assert f'value="{s.values.index(s.start)}"' in inp
    n = len(any_ex.grid())
    assert len(data["frames"]) == len(data["alts"]) == n
    assert len(set(data["alts"])) == n  # 每一帧的替代文字都不同
    assert len(set(data["frames"])) == n, "不同的参数组合画出了一模一样的帧"
    assert [spec["values"] for spec in data["sliders"]] == [[str(v) for v in s.values] for s in any_ex.sliders]
    assert all(base64.b64decode(frame).startswith(PNG_SIGNATURE) for frame in data["frames"])


def test_static_html_works_offline(any_ex):
    text, _ = _page(any_ex)
    # base64 里不会出现冒号，所以查 "http:" / "https:" 不会被图片数据误伤
    assert not re.search(r"https?:", text)
    assert all(src.startswith("data:") for src in re.findall(r'src="([^"]*)"', text))


def test_live_widget_redraws_on_every_slider(any_ex):
    image, *controls = any_ex.widget().children
    assert len(controls) == len(any_ex.sliders)
    for control, slider in zip(controls, any_ex.sliders):
        before = bytes(image.value)
        control.value = slider.values[0] if control.value != slider.values[0] else slider.values[-1]
        assert bytes(image.value) != before, f"拖动 {slider.name} 后图没有变"


# ---------------------------------------------------------------- 第 4 章：scaling_saturation


def test_grid_has_ten_values_of_d_k(ex):
    assert ex.grid() == [{"d_k": d} for d in DK_VALUES]


def test_unscaled_and_scaled_agree_only_when_d_k_is_1(ex):
    small, large = ex.update(d_k=1), ex.update(d_k=512)
    np.testing.assert_array_equal(small["raw"], small["scaled"])  # √1 = 1：两边一样
    assert large["raw"].max() > large["scaled"].max()  # 不缩放时更"尖"
    np.testing.assert_allclose([large["raw"].sum(), large["scaled"].sum()], 1.0, rtol=1e-12)


def test_scaling_page_details(ex):
    text, data = _page(ex)
    inputs = re.findall(r"<input\b[^>]*>", text)
    assert len(inputs) == 1 and 'type="range"' in inputs[0] and 'max="9"' in inputs[0]
    assert 'value="6"' in inputs[0]  # 默认 d_k = 64 是网格里的第 7 个值
    assert data["sliders"] == [{"label": "d_k", "values": [str(d) for d in DK_VALUES]}]
    assert len(data["frames"]) == 10
    assert all(f"d_k = {d} " in alt for d, alt in zip(DK_VALUES, data["alts"]))
    assert data["frames"][0] != data["frames"][9]  # d_k = 1 和 d_k = 512 画出来不一样
    shown = re.search(r'<img src="data:image/png;base64,([^"]+)" alt="([^"]*)"', text)
    assert shown.group(1) == data["frames"][6] and html_lib.unescape(shown.group(2)) == data["alts"][6]


def test_describe_mentions_d_k(ex):
    text = ex.describe()
    assert "d_k" in text and "512" in text and ex.title in text
    assert ex._repr_mimebundle_()["text/plain"] == text


@pytest.mark.parametrize("kwargs, pattern", [
    (dict(values=(1,)), r"至少要有 2 个取值"),
    (dict(values=()), r"至少要有 2 个取值"),
    (dict(values=(1, 2, 4), default=3), r"默认值 3 不在网格"),
], ids=["one-value", "no-values", "default-not-in-grid"])
def test_slider_rejects_bad_grids(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        Slider("d_k", **kwargs)


@pytest.mark.parametrize("kwargs, exc, pattern", [
    (dict(num_keys=0), ValueError, r"num_keys 必须是正整数.*0"),
    (dict(num_keys=2.5), TypeError, r"num_keys 必须是正整数.*float"),
    (dict(seed=-1), ValueError, r"seed 必须是非负整数.*-1"),
    (dict(seed="a"), TypeError, r"seed 必须是非负整数.*字符串"),
], ids=["num_keys-0", "num_keys-float", "seed-negative", "seed-string"])
def test_scaling_saturation_rejects_bad_arguments(kwargs, exc, pattern):
    with pytest.raises(exc, match=pattern):
        tl.explore.scaling_saturation(**kwargs)


def test_slider_start_is_default_or_middle():
    assert Slider("n", (1, 2, 3, 4, 5)).start == 3
    assert Slider("n", (1, 2, 3), default=1).start == 1


def test_live_widget_draws_the_same_png(ex):
    widget = ex.widget()
    image, slider = widget.children
    assert slider.value == 64 and slider.min == 1 and slider.max == 512
    assert bytes(image.value) == ex.png(d_k=64) and bytes(image.value).startswith(PNG_SIGNATURE)
    slider.value = 512  # 拖动滑块 → 当场重画
    assert bytes(image.value) == ex.png(d_k=512) and "d_k = 512" in image.description
