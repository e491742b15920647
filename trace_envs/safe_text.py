"""The sanitizer for text an env module controls (:mod:`trace_envs.core.safe_text`, where it lives so that the box
may use it too): :func:`shown` for what a person sees, :func:`clean_text` for what is stored or prompted."""

from trace_envs.core.safe_text import clean_text, shown

__all__ = ["clean_text", "shown"]
