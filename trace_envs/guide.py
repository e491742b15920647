"""The writing-an-env guide, rendered from the code it describes so that it never drifts.

``env_guide()`` fills ``templates/guide/writing_an_env.md.jinja`` with the smallest shipped env (whole, read
from its module), one line per :data:`HOOKS` entry, the fields of ``Task``,
``UserScript`` and ``Capability``, the methods of ``Plan`` and the scripted user's cue words, each from its
docstring or field description. The same text is what an env-generation prompt embeds;
``docs/writing-an-env.md`` is it verbatim (``python -m trace_envs.guide --write docs/writing-an-env.md``).
"""

from __future__ import annotations

import argparse
import ast
import inspect
import re
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

EXAMPLE_ENV = "trace/retail-order-cancel-v0"
"""The env the guide shows whole: the starter, on the retail target, importing only its kit."""


MODULE_MAX_LINES = 300
"""The layout's length limit of an env module: ``len(source.splitlines())``, every physical line of the file
(docstring, comments and blank lines included). tests/generated_envs/test_layout.py holds the shipped modules
to it; the synthesis gates do not count lines."""
STARTER_MAX_LINES = 100
"""The same limit for the two starters (``order_cancel.py``, ``retail_order_cancel.py``), which the guide shows."""
FUNCTION_MAX_LINES = 60
"""The layout's limit of one function or method: ``end_lineno - lineno + 1`` of its ``def`` (decorators out)."""
SOURCE_CHARS_CAP = 300_000
"""The static gate's only size limit (``MAX_SOURCE_CHARS``; the guide may not import synthesis, so a test keeps
the two equal)."""
GAMING_SOURCE_SEEDS = 10
"""How many seeds past the checked ones give the gaming policies their candidate answers (the property suite's
``CONSTANT_ANSWER_SOURCES``; a test keeps the two equal)."""


HOOKS: tuple[str, ...] = (
    "capability", "domain", "max_turns", "generate", "Knobs", "tool_names", "policy", "instructions",
    "choose_domain", "policy_text", "make_user",
)  # fmt: skip
"""What a capability env sets or overrides, in the order the writing-an-env guide lists them; the base
class does everything else (seeding, the conversation, the scripted user, the tools, the verifier)."""


def _one_line(doc: str | None) -> str:
    """The first paragraph of a docstring, on one line, with Markdown code spans."""
    return " ".join(inspect.cleandoc(doc or "").split("\n\n")[0].split()).replace("``", "`")


def _type_text(annotation: Any) -> str:
    """A type as written in code: ``str``, ``list[ToolCall | str]`` (module paths dropped)."""
    if isinstance(annotation, type) and not getattr(annotation, "__args__", None):
        return annotation.__name__
    text = re.sub(r"\b(?:[a-z_][\w]*\.)+([A-Za-z_]\w*)", r"\1", str(annotation))
    return text.replace("NoneType", "None")


def attribute_docs(cls: type) -> dict[str, tuple[str, str]]:
    """``name -> (annotation, docstring)`` of the class-body attributes of ``cls`` and its bases that carry an
    attribute docstring (the string right after the assignment), nearest class first."""
    found: dict[str, tuple[str, str]] = {}
    for klass in cls.__mro__:
        if klass is object:
            continue
        try:
            body = ast.parse(inspect.cleandoc("\n" + inspect.getsource(klass))).body[0]
        except (OSError, TypeError, SyntaxError):
            continue
        assert isinstance(body, ast.ClassDef)
        for node, after in zip(body.body, body.body[1:], strict=False):
            if not (isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)):
                continue
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                name, annotation = node.target.id, ast.unparse(node.annotation)
            elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                name, annotation = node.targets[0].id, ""
            else:
                continue
            annotation = re.sub(r"^ClassVar\[(.*)\]$", r"\1", annotation)
            found.setdefault(name, (annotation, _one_line(str(after.value.value))))
    return found


def hook_lines(cls: type) -> list[dict[str, str]]:
    """One entry per hook of ``cls``: its name, signature or type, and one line of documentation."""
    attributes = attribute_docs(cls)
    lines = []
    for name in HOOKS:
        member = inspect.getattr_static(cls, name, None)
        if isinstance(member, property):
            returns = inspect.signature(member.fget).return_annotation if member.fget else "Any"
            doc, shape = _one_line(member.__doc__), f": {returns} (property)"
        elif inspect.isfunction(member):
            doc, shape = _one_line(member.__doc__), _signature(member)
        else:
            annotation, doc = attributes.get(name, ("", ""))
            shape = f": {annotation}" if annotation else ""
        if not doc:
            raise ValueError(f"{cls.__name__}.{name} is a hook without a docstring; the guide needs one line")
        lines.append({"name": name, "shape": shape, "doc": doc})
    return lines


def _signature(function: Any) -> str:
    """``(rng: random.Random) -> Task``: the signature without ``self`` (annotations are postponed strings)."""
    signature = inspect.signature(function)
    parameters = [p for p in signature.parameters.values() if p.name != "self"]
    return re.sub(r"'([^']*)'", r"\1", str(signature.replace(parameters=parameters)))


def field_lines(model: type[BaseModel]) -> list[dict[str, str]]:
    """One entry per field of a pydantic model: name, type, whether it is required, its description."""
    lines = []
    for name, info in model.model_fields.items():
        if not info.description:
            raise ValueError(f"{model.__name__}.{name} has no description; the guide needs one line")
        required = str(info.is_required())
        lines.append({"name": name, "type": _type_text(info.annotation), "required": required, "doc": info.description})
    return lines


def method_lines(cls: type, names: tuple[str, ...]) -> list[dict[str, str]]:
    """One entry per named public method: name, signature, one line of its docstring."""
    return [
        {"name": name, "shape": _signature(getattr(cls, name)), "doc": _one_line(getattr(cls, name).__doc__)}
        for name in names
    ]


def helper_docs(references: tuple[str, ...]) -> list[dict[str, Any]]:
    """One entry per ``"module:attribute"`` helper: its import line, signature and whole docstring; a class
    also lists its public methods the same way (what the generation prompt shows of a target's helpers)."""
    from trace_envs.registry import resolve

    entries = []
    for reference in references:
        module, name = reference.split(":")
        helper = resolve(reference)
        if not callable(helper):
            raise ValueError(f"{reference} is not a function or class; the prompt documents callables")
        doc = inspect.getdoc(helper)
        if not doc:
            raise ValueError(f"{reference} is a documented helper without a docstring; write one")
        methods: list[dict[str, str]] = []
        if isinstance(helper, type):
            for method_name, method in vars(helper).items():
                if not method_name.startswith("_") and callable(getattr(helper, method_name)):
                    method_doc = inspect.getdoc(getattr(helper, method_name)) or ""
                    if not method_doc:
                        raise ValueError(f"{reference}.{method_name} has no docstring; write one")
                    methods.append({"name": method_name, "shape": _signature(method), "doc": method_doc})
        shape = _signature(helper)  # a class: its constructor's
        entries.append({"name": name, "module": module, "shape": shape, "doc": doc, "methods": methods})
    return entries


def example_source() -> tuple[str, str]:
    """The repository path and the whole source of the example env's module."""
    from trace_envs.registry import env_class

    module = inspect.getmodule(env_class(EXAMPLE_ENV))
    assert module is not None and module.__file__ is not None
    path = Path(module.__file__)
    return f"{module.__name__.replace('.', '/')}.py", path.read_text(encoding="utf-8").rstrip("\n")


def env_guide() -> str:
    """The writing-an-env guide as Markdown."""
    from trace_envs.core import CONFIRM_CUES, REQUEST_CUES, Capability, CapabilityEnv, Plan, Task, UserFact, UserScript
    from trace_envs.core.templates import render_template
    from trace_envs.domains import toy_shop

    path, source = example_source()
    return (
        render_template(
            "guide/writing_an_env.md.jinja",
            example_path=path,
            example=source,
            example_lines=len(source.splitlines()),
            domain_lines=len(inspect.getsource(toy_shop).splitlines()),
            hooks=hook_lines(CapabilityEnv),
            task_fields=field_lines(Task),
            script_fields=field_lines(UserScript),
            fact_fields=field_lines(UserFact),
            capability_fields=field_lines(Capability),
            plan_methods=method_lines(Plan, ("call", "attempt", "peek", "ask", "confirm", "say", "task")),
            request_cues=REQUEST_CUES,
            confirm_cues=CONFIRM_CUES,
            module_max_lines=MODULE_MAX_LINES,
            starter_max_lines=STARTER_MAX_LINES,
            function_max_lines=FUNCTION_MAX_LINES,
            gaming_source_seeds=GAMING_SOURCE_SEEDS,
            max_source_chars=f"{SOURCE_CHARS_CAP:,}",
        ).rstrip("\n")
        + "\n"
    )


def main(argv: list[str] | None = None) -> None:
    """Print the guide, or write it to a file (``--write docs/writing-an-env.md``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--write", type=Path, help="write the guide to this file instead of printing it")
    args = parser.parse_args(argv)
    text = env_guide()
    if args.write is None:
        sys.stdout.write(text)
    else:
        args.write.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
