"""transformer_lab 顶层（__init__.py）：改了名、搬了家的旧名字给出指向新家的中文报错；不存在的名字也说中文。"""

import transformer_lab as tl

from helpers.errors import error_table_test

AE = AttributeError
ERROR_CASES = [
    ("renamed-chapter_rnn", lambda: tl.chapter_rnn, AE, r"tl\.chapter_rnn 已经改名或搬家.*tl\.random_rnn"),
    ("renamed-decode", lambda: tl.decode_multiply_adds, AE,
     r"tl\.decode_multiply_adds 已经改名或搬家.*tl\.costs\.decode_multiply_adds"),
    ("renamed-kv-bytes", lambda: tl.kv_cache_bytes, AE, r"tl\.kv_cache_bytes 已经改名或搬家.*tl\.costs\.kv_cache_bytes"),
    ("unknown-attribute", lambda: tl.no_such_thing, AE, r"transformer_lab 没有属性 'no_such_thing'"),
]
test_documented_errors = error_table_test(ERROR_CASES)
