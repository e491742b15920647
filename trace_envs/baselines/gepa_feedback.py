"""What GEPA's reflection model reads about one episode: the task, the transcript and the verifier's verdict in
words. A failed episode says what the verifier missed (state, facts, reads), so the reflection can name the
behaviour the instructions should ask for."""

from __future__ import annotations

from typing import Any

from trace_envs.core import render_transcript
from trace_envs.rollout import EpisodeRecord

TRANSCRIPT_CHARS = 6000
"""Default size of one transcript shown to the reflection model (the middle is cut beyond it)."""


def clip_middle(text: str, limit: int) -> str:
    """``text`` with its middle cut out past ``limit`` characters (the opening and the ending matter most)."""
    if len(text) <= limit:
        return text
    keep = max(0, limit - 40) // 2
    return f"{text[:keep]}\n… [{len(text) - 2 * keep} characters cut] …\n{text[len(text) - keep :]}"


def opening_message(record: EpisodeRecord) -> str:
    """The user's first message of the episode ('' if there is none)."""
    return next((str(m.get("content") or "") for m in record.messages if m.get("role") == "user"), "")


def verdict_feedback(record: EpisodeRecord) -> str:
    """The episode's outcome in sentences: reward, why it ended, and each check of the verdict that failed."""
    if record.error is not None:
        return f"The episode crashed and scored 0: {record.error.strip().splitlines()[0]}"
    outcome = "succeeded" if record.success else "failed"
    lines = [f"The episode {outcome} with reward {record.reward:.2f} (1.0 is a full success)."]
    if record.ended in ("max_turns", "max_steps", "truncated"):
        lines.append("The agent ran out of turns before the conversation ended, which scores 0.")
    verdict: dict[str, Any] = record.verdict
    if verdict.get("hash_match") is False:
        lines.append(
            "The final database state differs from the expected one: a required write was missing or wrong, "
            "or a write was made that the policy forbids."
        )
    missing_facts = [fact for fact, told in (verdict.get("facts_told") or {}).items() if not told]
    if missing_facts:
        lines.append("The agent never told the user: " + "; ".join(missing_facts) + ".")
    missing_reads = [read for read, done in (verdict.get("reads_done") or {}).items() if not done]
    if missing_reads:
        lines.append("The agent never looked up (required before answering): " + "; ".join(missing_reads) + ".")
    if record.components:
        scores = ", ".join(f"{name}={value:.2f}" for name, value in sorted(record.components.items()))
        lines.append(f"Verifier components: {scores}.")
    return " ".join(lines)


def reflection_example(record: EpisodeRecord, transcript_chars: int = TRANSCRIPT_CHARS) -> dict[str, Any]:
    """One record of GEPA's reflective dataset (its recommended keys: inputs, outputs, feedback)."""
    return {
        "Inputs": {
            "environment": f"{record.env_id} (seed {record.seed})",
            "user's opening message": opening_message(record),
        },
        "Generated Outputs": clip_middle(render_transcript(record.messages), transcript_chars),  # type: ignore[arg-type]
        "Feedback": verdict_feedback(record),
    }
