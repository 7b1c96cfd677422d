"""全书的总图 ``figures/machine.py``：方框的次序和章号、两种版式、解码器版、字不重叠、报错。"""

from __future__ import annotations

import pytest

from transformer_lab import chapters
from transformer_lab.figures import machine
from transformer_lab.plot.figure import MIN_FONT_PT, NARROW_WIDTH, WIDE_WIDTH

from helpers.errors import call, error_table_test

ORDER = ["embed", "attention", "add_norm_1", "ffn", "add_norm_2", "output"]


@pytest.fixture(scope="module")
def encoder():
    return machine.transformer_diagram()


@pytest.fixture(scope="module")
def decoder():
    return machine.transformer_diagram(decoder=True)


def _strings(ex, layout):
    return [t.text for t in ex.texts(layout)]


def test_boxes_go_bottom_up_in_the_order_data_flows():
    assert [b.key for b in machine._diagram_boxes()] == ORDER
    assert [b.in_layer for b in machine._diagram_boxes()] == [False, True, True, True, True, False]
    assert machine._diagram_boxes()[-1].shape_out == "(T, V)"  # 只有输出层把 D 维换成词表大小
    assert {b.shape_out for b in machine._diagram_boxes()[:-1]} == {"(T, D)"}


def test_every_box_names_chapters_that_are_in_the_book_and_the_check_can_fail(monkeypatch):
    known = set(chapters.numbers())
    assert all(set(b.chapters) <= known for b in machine._diagram_boxes())
    monkeypatch.setattr(chapters, "numbers", lambda: list(range(1, 9)))  # 书里只有 1–8 章时，指向第 9 章的方框报错
    with pytest.raises(ValueError, match=r"线性层 \+ softmax.*第 \[9\] 章"):
        machine._diagram_boxes()


def test_each_box_shows_its_name_and_its_chapter_label_in_both_layouts(encoder):
    for layout in ("wide", "narrow"):
        texts = _strings(encoder, layout)
        for box in machine._diagram_boxes():
            assert box.name in texts, (layout, box.name)
        # 章号的写法：连续的几章写成区间，不连续的用顿号
        assert "第 2–5 章" in texts and "第 1、6 章" in texts and "第 8 章" in texts


def test_the_wide_layout_explains_each_box_and_the_narrow_one_keeps_only_names(encoder):
    wide, narrow = _strings(encoder, "wide"), _strings(encoder, "narrow")
    whats = [b.what for b in machine._diagram_boxes()]
    assert all(w in wide for w in whats)
    assert not any(w in narrow for w in whats)
    assert encoder.layout("wide").size[0] <= WIDE_WIDTH and encoder.layout("narrow").size[0] <= NARROW_WIDTH
    assert len(encoder.layout("narrow").size) == 2 and encoder.layout("narrow").size[1] > encoder.layout("wide").size[1]


def test_the_decoder_swaps_only_the_attention_box(encoder, decoder):
    enc, dec = machine._diagram_boxes(), machine._diagram_boxes(decoder=True)
    changed = [a.key for a, b in zip(enc, dec) if a != b]
    assert changed == ["attention"]
    assert "因果掩码" in dec[1].name and "因果掩码" in decoder.alt_text()
    assert "因果掩码" not in encoder.alt_text()


def test_no_two_labels_overlap_and_every_label_is_big_enough(encoder, decoder):
    for ex in (encoder, decoder):
        for layout in ("wide", "narrow"):
            items = [t for t in ex.texts(layout) if t.text.strip()]
            assert min(t.size_pt for t in items) >= MIN_FONT_PT
            for i, a in enumerate(items):
                for b in items[i + 1:]:
                    ax0, ay0, ax1, ay1 = a.box
                    bx0, by0, bx1, by1 = b.box
                    overlap = min(ax1, bx1) - max(ax0, bx0) > 1 and min(ay1, by1) - max(ay0, by0) > 1
                    assert not overlap, (layout, a.text, b.text)


def test_alt_text_walks_through_every_box_with_its_chapter(encoder):
    alt = encoder.alt_text()
    for box in machine._diagram_boxes():
        assert box.name in alt
    assert "第 2–5 章" in alt and "(T, V)" in alt and "重复 N 次" in alt


ERROR_CASES = [
    ("transformer_diagram-decoder-not-bool", call(machine.transformer_diagram, decoder="yes"), TypeError,
     "decoder 必须是 True 或 False"),
    ("_diagram_boxes-decoder-not-bool", call(machine._diagram_boxes, 1), TypeError, "decoder 必须是 True 或 False"),
]
test_documented_errors = error_table_test(ERROR_CASES)
