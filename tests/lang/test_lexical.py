"""Lexical terminals the grammar writes differently from the SPARQL 1.1 text, for speed,
must still accept exactly the same characters."""

from __future__ import annotations

import re
from importlib.resources import files

# SPARQL 1.1 Query, grammar rule [164], as the recommendation lists it.
PN_CHARS_BASE = re.compile(
    "[A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff\u200c-\u200d"
    "\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd\U00010000-\U000effff]"
)


def test_pn_chars_base_written_as_its_complement_accepts_the_same_characters():
    grammar = files("sepia.lang").joinpath("sepia.lark").read_text(encoding="utf-8")
    line = next(x for x in grammar.splitlines() if x.startswith("PN_CHARS_BASE:"))
    ours = re.compile(line.split("/")[1])
    differ = [
        hex(c) for c in range(0x110000)
        if bool(ours.fullmatch(chr(c))) != bool(PN_CHARS_BASE.fullmatch(chr(c)))
    ]
    assert ours.pattern.startswith("[^") and differ == []
