"""Text that comes from an env module (gate findings, exception messages, generated task text), made safe to
print, store or put in a prompt.

A module controls that text, and a terminal obeys the control sequences inside it: an OSC 52 sequence
writes the clipboard, OSC 0/2 sets the window title, OSC 8 makes a link, CSI sequences move the cursor and
repaint lines (a fake "passed" row over a failed one), a carriage return overwrites a line, and a newline
starts a row of its own (a fake gate row under the real ones). Two functions, one per use:

- :func:`shown` is the one sanitizer for every place a person sees such text (CLI errors, validate findings
  and tables, progress lines, the report): text with no control character is shown as it is; any other is
  shown as one quoted line with every control character escaped (``"boom\\n\\x1b]52;c;..."``), so what
  the module tried is visible and nothing of it acts on the terminal.
- :func:`clean_text` removes escape sequences and control characters but keeps newlines and tabs: for text
  that is stored or put in a prompt, where its layout matters and no terminal reads it.
"""

from __future__ import annotations

import re as _re

_SEQUENCES = _re.compile(
    r"""
    (?:\x1b\[|\x9b) [\x30-\x3f]* [\x20-\x2f]* [\x40-\x7e]?          # CSI: cursor moves, colours, erasing
  | (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]) .*? (?:\x07|\x1b\\|\x9c|$)  # OSC, DCS, SOS, PM, APC strings
  | \x1b [\x20-\x2f]* [\x30-\x7e]?                                 # any other escape sequence
    """,
    _re.VERBOSE | _re.DOTALL,
)
_CONTROLS = _re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""C0 controls except tab (``\\x09``) and newline (``\\x0a``), DEL, the C1 controls and the bidirectional
overrides and isolates (which reorder what a terminal shows)."""


def clean_text(text: str) -> str:
    """``text`` without escape sequences (CSI, OSC such as OSC 52 clipboard writes, DCS, ...) and without
    control characters other than newline and tab; ``\\r\\n`` becomes ``\\n``."""
    text = text.replace("\r\n", "\n")
    return _CONTROLS.sub("", _SEQUENCES.sub("", text))


_SHOWN = _re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""Every character :func:`shown` escapes: C0 (newline and tab included), DEL, C1, the line and paragraph
separators and the bidirectional overrides and isolates."""
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: _re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(text: str, limit: int | None = None) -> str:
    """``text`` as a person may see it on a terminal: as it is when it holds no control character, else as
    one double-quoted line with backslashes and quotes escaped and every control character written out
    (``\\n``, ``\\x1b``, ``\\u202e``); cut to ``limit`` characters (before quoting) with an ellipsis."""
    if limit is not None and len(text) > limit:
        text = text[: max(0, limit - 1)] + "…"
    if not _SHOWN.search(text):
        return text
    body = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + _SHOWN.sub(_escape, body) + '"'
