"""The parse gate's text rules: what the gates read is exactly what Python executes.

Python decodes a source file by its coding cookie (``# -*- coding: utf-7 -*-`` in the first two lines) or a
byte-order mark, so a cookie can make the importer run code that a reader of the UTF-8 text sees as a
comment. A module is therefore plain UTF-8 with no cookie at all (not even ``utf-8``: one is never
needed, PEP 3120 made UTF-8 the default, and refusing them all leaves nothing to get wrong), no BOM and
no byte that is not UTF-8. Files are read with :func:`read_module`, which keeps invalid bytes visible (as
surrogate escapes) so that the parse gate can name their line instead of the reader failing.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

from .reports import Finding

BOM = "\ufeff"
COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=]", re.MULTILINE)
"""A coding declaration as Python's tokenizer looks for it (PEP 263), whatever encoding it names."""
SURROGATE = re.compile("[\ud800-\udfff]")
"""A byte that was not UTF-8, as ``errors="surrogateescape"`` keeps it (U+DC80..U+DCFF), or another lone
surrogate, which no UTF-8 file can hold."""


def read_module(path: str | Path) -> str:
    """A module file's text, decoded as UTF-8 with invalid bytes kept as surrogate escapes (the parse gate
    refuses them by line); :func:`module_bytes` gives the file's bytes back exactly."""
    return Path(path).read_bytes().decode("utf-8", errors="surrogateescape")


def module_bytes(source: str) -> bytes:
    """The bytes of ``source`` as a file holds them (the inverse of :func:`read_module`; other lone
    surrogates, which the parse gate refuses, are kept as their code points)."""
    try:
        return source.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError:
        return source.encode("utf-8", errors="surrogatepass")


def source_text_findings(source: str) -> list[Finding]:
    """A BOM, a coding cookie or a non-UTF-8 byte, each named by its line with the fix."""
    findings = []
    if source.startswith(BOM):
        findings.append(
            Finding(
                rule="byte-order-mark",
                line=1,
                subject="BOM",
                message="the module starts with a byte-order mark, which changes how Python decodes it.",
                fix="Save the module as plain UTF-8 without a BOM.",
            )
        )
    head = "\n".join(source.lstrip(BOM).splitlines()[:2])
    for number, line in enumerate(head.splitlines(), start=1):
        if COOKIE.match(line):
            findings.append(
                Finding(
                    rule="coding-cookie",
                    line=number,
                    subject=line.strip()[:60],
                    message="a coding declaration makes Python decode the module otherwise than the gates read it.",
                    fix="Delete the coding line: modules are UTF-8 and need none.",
                )
            )
    findings += _invalid_bytes(source)
    if not findings and _declared_encoding(source) != "utf-8":
        findings.append(
            Finding(
                rule="coding-cookie",
                line=1,
                message="Python would not decode the module as UTF-8.",
                fix="Delete any coding line and save the module as plain UTF-8.",
            )
        )
    return findings


def _invalid_bytes(source: str) -> list[Finding]:
    """One finding per line that holds bytes which are not UTF-8 (the first three lines named)."""
    findings = []
    for number, line in enumerate(source.splitlines(), start=1):
        found = SURROGATE.search(line)
        if found is None:
            continue
        code = ord(found.group())
        findings.append(
            Finding(
                rule="not-utf8",
                line=number,
                subject=f"byte 0x{code - 0xDC00:02x}" if code >= 0xDC80 else f"U+{code:04X}",
                message="the line holds a byte that is not UTF-8, which Python refuses or decodes otherwise.",
                fix="Save the module as UTF-8 text.",
            )
        )
        if len(findings) == 3:
            break
    return findings


def _declared_encoding(source: str) -> str:
    """The encoding Python's importer would use for these bytes (``tokenize.detect_encoding``)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(module_bytes(source)).readline)
    except SyntaxError:
        return "unknown"
    return encoding
