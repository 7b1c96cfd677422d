"""全书的总图 ``figures/machine.py``：两种机器的方框次序和章号、编码器不画“下一个词的概率”、解码器是 pre-LN
并且有 LN_f、两种版式、原论文那一句说明、字不重叠、报错。"""

from __future__ import annotations

import pytest

from transformer_lab import chapters
from transformer_lab.figures import machine
from transformer_lab.plot.figure import MIN_FONT_PT, NARROW_WIDTH, WIDE_WIDTH

from helpers.errors import call, error_table_test

ENCODER_ORDER = ["embed", "attention", "add_norm_1", "ffn", "add_norm_2"]
DECODER_ORDER = ["embed", "ln_1", "attention", "add_1", "ln_2", "ffn", "add_2", "ln_f", "output"]
NEXT_WORD = ("概率", "下一个", "softmax", "词表", "字表", r"\mathcal{V}", "(T, V)")  # 编码器的图里一个都不能有
OPERATIONS = ("attention", "ffn")


@pytest.fixture(scope="module")
def encoder():
    return machine.transformer_diagram()


@pytest.fixture(scope="module")
def decoder():
    return machine.transformer_diagram(decoder=True)


@pytest.fixture(scope="module")
def modern():
    return machine.transformer_diagram(decoder=True, modern=True)


def _strings(ex, layout):
    return [t.text for t in ex.texts(layout)]


def _flat(ex, layout):
    """图里所有的字连成一串（折行的换行符去掉，方便找整句）。"""
    return "".join(_strings(ex, layout)).replace("\n", "")


def _is_norm(box):
    return "归一化" in box.name


def _pre_ln_problems(m):
    """按第 9 章 ``lessons/gpt_model.py`` 的小 GPT 检查一种画法，返回不对的地方（空列表 = 是 pre-LN 且有 LN_f）。

    pre-LN：每道工序（注意力、前馈网络）前面紧挨着一个层归一化，残差从这个层归一化**下面**分出来（直路上没有 LN），
    加进紧挨在工序后面的“残差相加”——这个方框只相加，不再归一化。N 层之后、输出层之前是 LN_f。
    """
    keys, problems = [b.key for b in m.boxes], []
    for op in OPERATIONS:
        i = keys.index(op)
        if not _is_norm(m.boxes[i - 1]):
            problems.append(f"{op} 前面不是层归一化")
        skip = next((s for s in m.skips if s[1] == keys[min(i + 1, len(keys) - 1)]), None)
        if skip is None or skip[0] != keys[i - 1]:
            problems.append(f"{op} 的残差不是从它前面的层归一化下面分出来的")
        if _is_norm(m.boxes[i + 1]):
            problems.append(f"{op} 后面相加的方框里还有层归一化（post-LN）")
    last_layer = max(i for i, b in enumerate(m.boxes) if b.in_layer)
    after = m.boxes[last_layer + 1:]
    if not (after and _is_norm(after[0]) and "LN}_f" in after[0].name and not after[0].in_layer):
        problems.append("叠完 N 层之后没有 LN_f")
    if not (after and after[-1].key == "output"):
        problems.append("最上面不是输出层")
    return problems


def test_the_encoder_is_the_post_ln_stack_and_ends_in_vectors_not_next_word_probabilities(encoder):
    m = machine.ENCODER
    assert [b.key for b in m.boxes] == ENCODER_ORDER
    assert [b.in_layer for b in m.boxes] == [False, True, True, True, True]
    assert {b.shape_out for b in m.boxes} == {"(T, D)"}  # 没有哪一步换成词表大小
    assert m.skips == (("attention", "add_norm_1"), ("ffn", "add_norm_2"))  # post-LN：先相加再归一化
    assert m.result == m.result_short == "每个位置一个新向量"
    for layout in ("wide", "narrow"):
        texts = _flat(encoder, layout)
        assert "每个位置一个新向量" in texts and "BERT 用它猜被遮住的词" in texts and "倒序模型" in texts
        assert [w for w in NEXT_WORD if w in texts] == [], layout
    alt = encoder.alt_text()
    assert [w for w in NEXT_WORD if w in alt] == [] and "post-LN" in alt


def test_the_decoder_is_chapter_nine_gpt_pre_ln_with_a_final_ln(decoder):
    m = machine.DECODER
    assert [b.key for b in m.boxes] == DECODER_ORDER
    assert _pre_ln_problems(m) == []
    assert m.boxes[-1].shape_out == r"(T, $|\mathcal{V}|$)"  # 字表大小写成 |𝒱|，不是 V（V 是值）
    assert {b.shape_out for b in m.boxes[:-1]} == {"(T, D)"}
    for layout in ("wide", "narrow"):
        texts = _strings(decoder, layout)
        assert r"最后的层归一化 $\mathrm{LN}_f$" in texts and r"(T, $|\mathcal{V}|$)" in texts
        assert "(T, V)" not in texts
    assert "每个位置：下一个字是字表里每个字的概率" in _strings(decoder, "wide")
    assert "每个位置：下一个字的概率" in _strings(decoder, "narrow")
    assert "LN_f" in decoder.alt_text() and "pre-LN" in decoder.alt_text() and "$" not in decoder.alt_text()


def test_the_pre_ln_check_catches_post_ln_a_missing_ln_f_and_a_residual_through_the_ln():
    assert len(_pre_ln_problems(machine.ENCODER)) >= 3  # 编码器是 post-LN，也没有 LN_f
    boxes = machine.DECODER.boxes
    no_final = machine.Machine(**{**vars(machine.DECODER), "boxes": boxes[:7] + boxes[8:]})
    assert _pre_ln_problems(no_final) == ["叠完 N 层之后没有 LN_f"]
    through_ln = machine.Machine(**{**vars(machine.DECODER), "skips": (("embed", "add_1"), ("ln_2", "add_2"))})
    assert _pre_ln_problems(through_ln) == ["attention 的残差不是从它前面的层归一化下面分出来的"]
    post = [b if not b.key.startswith("add") else machine.Box(b.key, "残差相加 + 层归一化", b.chapters, b.what,
                                                              b.shape_out, True) for b in boxes]
    assert len(_pre_ln_problems(machine.Machine(**{**vars(machine.DECODER), "boxes": tuple(post)}))) == 2


def test_every_box_names_chapters_that_are_in_the_book_and_the_check_can_fail(monkeypatch):
    known = set(chapters.numbers())
    for decoder in (False, True):
        assert all(set(b.chapters) <= known for b in machine._machine(decoder).boxes)
    assert machine._machine(False).boxes[0].chapters == (1, 6)  # 编码器一章也不指向第 9 章：1–8 章就画得出来
    monkeypatch.setattr(chapters, "numbers", lambda: list(range(1, 9)))  # 书里只有 1–8 章时，指向第 9 章的方框报错
    machine._machine(False)
    with pytest.raises(ValueError, match=r"字嵌入 \+ 位置表.*第 \[9\] 章"):
        machine._machine(True)


def test_chapter_labels_cite_where_each_part_is_computed(encoder, decoder):
    assert machine._chapter_label((3, 2, 5, 4)) == "第 2–5 章" and machine._chapter_label((1, 6, 9)) == "第 1、6、9 章"
    assert machine._chapter_label((7, 8)) == "第 7、8 章" and machine._chapter_label((2, 3, 4, 5, 7, 8)) == "第 2–5、7、8 章"
    causal = next(b for b in machine.DECODER.boxes if b.key == "attention")
    assert "因果掩码" in causal.name and {7, 8} <= set(causal.chapters)  # 因果掩码第 7 章第一次用，第 8 章接进一层
    for ex, labels in ((encoder, ("第 2–5 章", "第 1、6 章", "第 8 章")),
                       (decoder, ("第 2–5、7、8 章", "第 1、6、9 章", "第 9 章", "第 4、9 章"))):
        for layout in ("wide", "narrow"):
            texts = _strings(ex, layout)
            assert all(label in texts for label in labels), (layout, labels)


def test_each_box_shows_its_name_and_each_arrow_its_shape_in_both_layouts(encoder, decoder):
    for ex, m in ((encoder, machine.ENCODER), (decoder, machine.DECODER)):
        for layout in ("wide", "narrow"):
            texts = _strings(ex, layout)
            assert all(b.name in texts for b in m.boxes), layout
            assert texts.count("(T, D)") == sum(b.shape_out == "(T, D)" for b in m.boxes), layout


def test_both_versions_say_the_original_paper_is_an_encoder_decoder_with_cross_attention(encoder, decoder):
    assert "编码器–解码器" in machine.ORIGINAL and "交叉注意力" in machine.ORIGINAL and "第 8 章" in machine.ORIGINAL
    for ex in (encoder, decoder):
        for layout in ("wide", "narrow"):
            assert machine.ORIGINAL in _flat(ex, layout), layout
        assert machine.ORIGINAL in ex.alt_text()


def test_the_wide_layout_explains_each_box_and_the_narrow_one_keeps_only_names(encoder, decoder):
    for ex, m in ((encoder, machine.ENCODER), (decoder, machine.DECODER)):
        wide, narrow = _strings(ex, "wide"), _strings(ex, "narrow")
        whats = [b.what for b in m.boxes]
        assert all(w in wide for w in whats)
        assert not any(w in narrow for w in whats)
        assert ex.layout("wide").size[0] <= WIDE_WIDTH and ex.layout("narrow").size[0] <= NARROW_WIDTH
        assert ex.layout("narrow").size[1] > ex.layout("wide").size[1]


def test_no_two_labels_overlap_and_every_label_is_big_enough(encoder, decoder, modern):
    for ex in (encoder, decoder, modern):
        for layout in ("wide", "narrow"):
            items = [t for t in ex.texts(layout) if t.text.strip()]
            assert min(t.size_pt for t in items) >= MIN_FONT_PT
            width, height = ex.figure_pixels(layout)
            for i, a in enumerate(items):
                ax0, ay0, ax1, ay1 = a.box
                assert ax0 >= 0 and ay0 >= 0 and ax1 <= width and ay1 <= height, (layout, a.text)  # 没有字出界
                for b in items[i + 1:]:
                    bx0, by0, bx1, by1 = b.box
                    overlap = min(ax1, bx1) - max(ax0, bx0) > 1 and min(ay1, by1) - max(ay0, by0) > 1
                    assert not overlap, (layout, a.text, b.text)


def test_alt_text_walks_through_every_box_with_its_chapter(encoder, decoder, modern):
    for ex, m in ((encoder, machine.ENCODER), (decoder, machine.DECODER), (modern, machine.MODERN)):
        alt = ex.alt_text()
        assert all(b.name.split(" $")[0] in alt for b in m.boxes)
        assert m.result in alt and "重复 N 次" in alt
    assert "第 2–5 章" in encoder.alt_text() and "(T, |𝒱|)" in decoder.alt_text()
    assert "中间 4 个方框组成一层" in encoder.alt_text() and "中间 6 个方框组成一层" in decoder.alt_text()


def test_the_modern_machine_is_chapter_twelve_smollm2(modern):
    """第 12 章的真 GPT：和第 9 章同样的次序、同样是 pre-LN 带 LN_f；五个零件换了名字，并且指向第 12 章。"""
    m = machine.MODERN
    assert [b.key for b in m.boxes] == DECODER_ORDER and _pre_ln_problems(m) == []
    names = " ".join(b.name for b in m.boxes)
    for part in ("RMSNorm", "SwiGLU", "分组查询注意力", "RoPE", "词嵌入表"):
        assert part in names, part
    assert "位置表" not in names.replace("没有位置表", "")  # 没有学出来的位置表：位置交给 RoPE
    assert all(12 in b.chapters for b in m.boxes if b.key not in ("add_1", "add_2"))
    assert modern.title.endswith("第 12 章的真 GPT") and "SmolLM2" in modern.alt_text()
    for layout in ("wide", "narrow"):
        texts = _strings(modern, layout)
        assert all(b.name in texts for b in m.boxes), layout
    modern.static_html()  # 两种版式都画得出来：字伸出画布时这里就报错


ERROR_CASES = [
    ("transformer_diagram-decoder-not-bool", call(machine.transformer_diagram, decoder="yes"), TypeError,
     "decoder 必须是 True 或 False"),
    ("_machine-decoder-not-bool", call(machine._machine, 1), TypeError, "decoder 必须是 True 或 False"),
    ("transformer_diagram-modern-not-bool", call(machine.transformer_diagram, decoder=True, modern=1), TypeError,
     "modern 必须是 True 或 False"),
    ("transformer_diagram-modern-encoder", call(machine.transformer_diagram, modern=True), ValueError,
     "modern=True 画的是第 12 章的真 GPT，它只有解码器"),
    ("_machine-modern-encoder", call(machine._machine, False, True), ValueError, "请同时传 decoder=True"),
]
test_documented_errors = error_table_test(ERROR_CASES)
