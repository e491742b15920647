"""Text that comes from an env module (gate findings, exception messages, generated task text), made safe to
print, store or put in a prompt.

A module controls that text, and a terminal obeys the control sequences inside it: an OSC 52 sequence
writes the clipboard, CSI sequences move the cursor and repaint lines (a fake "passed" row over a failed
one), a carriage return overwrites a line. :func:`clean_text` removes every escape sequence and control
character except newline and tab, before such text reaches a terminal, a file or a repair prompt.
"""

from __future__ import annotations

import re

_SEQUENCES = re.compile(
    r"""
    (?:\x1b\[|\x9b) [\x30-\x3f]* [\x20-\x2f]* [\x40-\x7e]?          # CSI: cursor moves, colours, erasing
  | (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]) .*? (?:\x07|\x1b\\|\x9c|$)  # OSC, DCS, SOS, PM, APC strings
  | \x1b [\x20-\x2f]* [\x30-\x7e]?                                 # any other escape sequence
    """,
    re.VERBOSE | re.DOTALL,
)
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""C0 controls except tab (``\\x09``) and newline (``\\x0a``), DEL, the C1 controls and the bidirectional
overrides and isolates (which reorder what a terminal shows)."""


def clean_text(text: str) -> str:
    """``text`` without escape sequences (CSI, OSC such as OSC 52 clipboard writes, DCS, ...) and without
    control characters other than newline and tab; ``\\r\\n`` becomes ``\\n``."""
    text = text.replace("\r\n", "\n")
    return _CONTROLS.sub("", _SEQUENCES.sub("", text))
