"""Which optional extra installs a module, so that a command (or the pipeline's preflight) that needs one says
how to install it."""

from __future__ import annotations

EXTRA_OF_MODULE = {
    "typer": "cli",
    "rich": "cli",
    "yaml": "cli",
    "anthropic": "llm",
    "openai": "llm",
    "aiohttp": "llm",
    "torch": "train",
    "transformers": "train",
    "tokenizers": "train",
    "trl": "train",
    "peft": "train",
    "datasets": "train",
    "accelerate": "train",
    "safetensors": "train",
    "gguf": "train",
    "matplotlib": "analysis",
    "pandas": "analysis",
    "hypothesis": "dev",
    "vllm": "serve",
    "gepa": "gepa",
}
"""Top-level module name -> the trace-envs extra that installs it (see pyproject.toml)."""


def install_hint(extra: str) -> str:
    """The pip command that installs ``extra`` (printed as plain text: rich would read ``[extra]`` as markup)."""
    return f'pip install "trace-envs[{extra}]"'


def missing_modules(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported here (found without importing them)."""
    import importlib.util

    return [
        name for name, owner in EXTRA_OF_MODULE.items() if owner == extra and importlib.util.find_spec(name) is None
    ]


def missing_extra(exc: BaseException) -> str | None:
    """One line naming the missing module and the extra to install, or None when ``exc`` (or what caused
    it) is not a missing optional dependency of ours."""
    seen: BaseException | None = exc
    for _ in range(10):  # the cause chain is short; the bound guards against a cycle
        if seen is None:
            break
        if isinstance(seen, ModuleNotFoundError) and seen.name:
            extra = EXTRA_OF_MODULE.get(seen.name.partition(".")[0])
            if extra is not None:
                return f"needs the '{extra}' extra ({seen.name} is not installed): {install_hint(extra)}"
        seen = seen.__cause__ or seen.__context__
    if isinstance(exc, ModuleNotFoundError) and "pip install" in str(exc):
        return str(exc)  # our own wrappers already name the extra
    return None
