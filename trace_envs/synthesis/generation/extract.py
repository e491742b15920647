"""Take the module out of a generator's reply: one fenced Python block (the output format the prompt asks
for). A reply without one, or with several, fails as the ``format`` gate, whose report goes back to the
generator like any other."""

from __future__ import annotations

import re

from ..gates.ast_names import parse_module
from ..gates.reports import Finding, GateResult

FENCE = re.compile(r"^```[ \t]*([\w+-]*)[^\n]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
PYTHON_TAGS = ("python", "py", "python3", "")


def extract_module(reply: str) -> tuple[str | None, GateResult]:
    """``(source, result)``: the module's source (None when the reply does not hold exactly one) and the
    ``format`` gate's result."""
    blocks = [body for tag, body in FENCE.findall(reply) if tag.lower() in PYTHON_TAGS]
    if len(blocks) == 1:
        return blocks[0], GateResult(gate="format", status="passed")
    if not blocks and reply.strip() and _parses(reply):
        return reply, GateResult(gate="format", status="passed", details={"note": "unfenced reply read as the module"})
    if blocks:
        finding = Finding(
            rule="several-modules",
            message=f"the reply holds {len(blocks)} fenced Python blocks; which one is the module is ambiguous.",
            fix="Answer with exactly one fenced ```python block holding the whole module, and nothing else.",
        )
    else:
        finding = Finding(
            rule="no-module",
            message="the reply holds no fenced ```python block (it may have been cut off before the closing fence).",
            fix="Answer with exactly one fenced ```python block holding the whole module, and nothing else.",
        )
    return None, GateResult(gate="format", status="failed", findings=[finding])


def _parses(text: str) -> bool:
    try:
        parse_module(text)
    except (SyntaxError, ValueError):
        return False
    return True
