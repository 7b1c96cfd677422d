"""设计好的一层：小明/小红那句话。检查故事里说的每一件事都真的算得出来。"""

import numpy as np

import transformer_lab as tl
from transformer_lab.lessons import layer_story as ls
from transformer_lab.lessons.toy_lexicon import ENTITY, FEATURES

from helpers.errors import call, error_table_test

F = {f: i for i, f in enumerate(FEATURES)}


def test_heads_find_the_clue_and_the_female_noun():
    st = ls.story_steps("她饿了")
    t = st["pronoun"]
    assert [st["tokens"][int(st["weights"][h, t].argmax())] for h in range(2)] == ["饿了", "小红"]
    assert st["weights"][:, t].max(axis=-1).min() > 0.9


def test_every_stage_matches_the_core_layer_and_layer_norm_rows():
    st = ls.story_steps()
    x, a, u, h, f, v, out = st["stages"]
    np.testing.assert_allclose(out, tl.encoder_layer(x, ls.story_params(), 2)[0], atol=1e-12)
    np.testing.assert_allclose(u, x + a)
    for m in (h, out):
        np.testing.assert_allclose(m.mean(axis=-1), 0, atol=1e-12)
        np.testing.assert_allclose(m.var(axis=-1), 1, atol=3e-3)  # ε = 1e-5：特征很少的行方差略小于 1


def test_residual_keeps_the_pronoun_and_ffn_pushes_food_and_place_down():
    st, bare = ls.story_steps(), ls.story_steps(residual=False)
    t = st["pronoun"]
    assert st["stages"][2][t, F["是代词"]] == 1.0 and bare["stages"][2][t, F["是代词"]] == 0.0
    ffn = st["stages"][4][t]
    assert ffn[F["是食物"]] < 0 and ffn[F["是地点"]] < 0 and np.count_nonzero(ffn) == 2
    entity = [F[e] for e in ENTITY]
    out = st["stages"][-1][t, entity]
    scores = {noun: float(out @ tl.toy_sentences.embed([noun])[0, entity]) for noun in ("小明", "苹果", "小红")}
    assert max(scores, key=scores.get) == "小红"


def test_params_are_fresh_copies():
    p = ls.story_params()
    p["w_q"][0, 0] = 99.0
    assert ls.story_params()["w_q"][0, 0] == 0.0


ERROR_CASES = [
    ("layer_story-variant", call(ls.story_steps, "她很甜"), ValueError, r"variant='她很甜' 不存在.*她饿了"),
]
test_documented_errors = error_table_test(ERROR_CASES)
