"""``trace-envs list | describe | play``: look at the registered envs and play an episode."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from trace_envs.safe_text import clean_text

from .app import app
from .env_args import (
    EnvOptionOption,
    ImportOption,
    check_env_options,
    import_modules,
    make_env,
    parse_options,
    resolve_env_id,
)
from .errors import as_usage_error
from .text import plural

ENV_ID_HELP = "An env id: a registered one (e.g. trace/order-cancel-v0, see `trace-envs list`) or MODULE:ENV_ID."
SEED_HELP = "Seed of the task (0 or more)."

console = Console()


@app.command("list")
def list_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print the list as JSON.")] = False,
) -> None:
    """List the registered trace/ envs with their capability and domain."""
    import trace_envs

    rows = [_list_row(env_id) for env_id in trace_envs.list_envs()]
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    # No outer edge and a short last header: an 80-column terminal fits every id and capability unbroken.
    table = Table(title="trace-envs environments", show_edge=False)
    table.add_column("env id", no_wrap=True)
    table.add_column("capability", no_wrap=True)
    table.add_column("domain", no_wrap=True)
    table.add_column("turns", justify="right")
    for row in rows:
        if row["capability"] is None:
            table.add_row(row["env_id"], "(target env)", "", "")
        else:
            table.add_row(row["env_id"], row["capability"], row["domain"], str(row["max_turns"]))
    console.print(table)


def _list_row(env_id: str) -> dict[str, Any]:
    """One row of ``list``: the env's registered kind and what its class declares (capability, domain, turn
    limit); a tau2 target declares no capability."""
    from trace_envs.core import declares_capability
    from trace_envs.registry import env_class, env_kind

    cls: Any = env_class(env_id)
    row: dict[str, Any] = {"env_id": env_id, "kind": env_kind(env_id), "capability": None, "domain": None}
    if not declares_capability(cls):
        return {**row, "max_turns": None}
    return {**row, "capability": cls.capability.name, "domain": cls.domain.name, "max_turns": cls.max_turns}


@app.command()
def describe(
    env_id: Annotated[str, typer.Argument(help=ENV_ID_HELP)],
    seed: Annotated[int, typer.Option(min=0, help=SEED_HELP)] = 0,
    option: EnvOptionOption = None,
    imports: ImportOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the description as JSON.")] = False,
) -> None:
    """Show an env's capability, tools, knobs and one example task."""
    import trace_envs
    from trace_envs.core import declares_capability
    from trace_envs.registry import env_class

    import_modules(imports)
    env_id = resolve_env_id(env_id)
    if not declares_capability(env_class(env_id)):
        raise typer.BadParameter(
            f"{env_id} is not a capability env (it declares no capability), so it has no example task to describe; "
            f"play it instead: trace-envs play {env_id}",
            param_hint="ENV_ID",
        )
    options = parse_options(option)
    check_env_options(env_id, options, "ENV_ID")
    description = trace_envs.describe(env_id, seed=seed, **options)
    if as_json:
        print(description.model_dump_json(indent=2))
        return
    console.print(Panel(description.capability_description, title=f"{env_id} — {description.capability}"))
    console.print(f"domain: [bold]{description.domain}[/]   max turns: {description.max_turns}")
    console.print(f"tools: {', '.join(description.tools)}")
    if description.knobs:
        knobs = Table(title="knobs")
        for column in ("name", "value", "description"):
            knobs.add_column(column)
        for knob in description.knobs:
            knobs.add_row(knob.name, json.dumps(knob.default), knob.description)
        console.print(knobs)
    example = description.example
    opening, goal = escape(example.opening), escape(example.goal)  # the env's text: no markup of its own
    console.print(Panel(f"[bold]user:[/] {opening}\n[bold]goal:[/] {goal}", title=f"example (seed {seed})"))
    for step in example.solution:
        console.print(f"  • {escape(step)}")
    console.print(f"required facts: {escape(str(example.required_facts))}")


@app.command()
def play(
    env_id: Annotated[str, typer.Argument(help=ENV_ID_HELP)],
    seed: Annotated[int, typer.Option(min=0, help=SEED_HELP)] = 0,
    policy: Annotated[
        str | None,
        typer.Option(
            "--policy",
            "-p",
            help="oracle | noop | random | flawed | flawed:<capability>[,...] | a model spec. "
            "Omit to type the agent's turns yourself.",
        ),
    ] = None,
    option: EnvOptionOption = None,
    imports: ImportOption = None,
) -> None:
    """Play one episode and print it as a transcript (interactive when no --policy is given)."""
    from trace_envs.llm import LLMError
    from trace_envs.rollout import Policy, make_policy

    import_modules(imports)
    env_id = resolve_env_id(env_id)
    options = parse_options(option)
    if policy is None and not sys.stdin.isatty():
        raise typer.BadParameter("no --policy given and stdin is not a terminal; pass e.g. --policy oracle")
    agent: Policy | None = None
    if policy:
        try:
            agent = make_policy(policy, seed=seed)
        except (ValueError, ModuleNotFoundError, LLMError, FileNotFoundError) as exc:
            raise as_usage_error(exc, "--policy") from None
    env = make_env(env_id, options)
    observation, info = env.reset(seed=seed)
    if agent is not None:
        try:
            agent.reset(env, observation, info)
        except (TypeError, ValueError) as exc:  # e.g. the oracle on an env without a reference solution
            raise typer.BadParameter(f"{policy} cannot play {env_id}: {exc}", param_hint="--policy") from None
    console.rule(f"{env_id}  seed {seed}  policy {policy or 'you'}")
    _print_message({"role": "user", "content": observation})
    turns = 0
    while True:
        action = agent.act(observation, info) if agent else _typed_turn()
        if action is None:
            console.print(f"[yellow]ended:[/] end of input (Ctrl-D) after {plural(turns, 'turn')}: unscored")
            env.close()
            return
        turns += 1
        observation, reward, terminated, truncated, info = env.step(action)
        step_messages = info.get("messages")
        if step_messages is None:  # an env without our structured messages: show the text exchange
            step_messages = [{"role": "assistant", "content": action}, {"role": "user", "content": observation}]
        for message in step_messages:
            _print_message(message)
        if terminated or truncated:
            break
    verdict = info.get("verdict", {})
    table = Table(title="verdict")
    table.add_column("item")
    table.add_column("value")
    table.add_row("ended", str(info.get("ended")))
    table.add_row("reward", f"{float(reward):.3f}")
    for key in ("success", "hash_match"):
        if key in verdict:
            table.add_row(key, str(verdict[key]))
    for fact, told in verdict.get("facts_told", {}).items():
        table.add_row(f"told: {fact}", str(told))
    console.print(table)
    env.close()


_STYLES = {"user": "green", "assistant": "cyan", "tool": "magenta"}


def _typed_turn() -> str | None:
    """The agent turn the user types at the prompt; None at the end of input (Ctrl-D), which ends the
    episode rather than aborting the command."""
    try:
        return console.input("[bold cyan]agent>[/] ")
    except EOFError:
        console.print()  # the prompt's line had no newline
        return None


def _print_message(message: dict[str, Any]) -> None:
    role = message["role"]
    if message.get("tool_calls"):
        for call in message["tool_calls"]:
            arguments = clean_text(json.dumps(call["arguments"], ensure_ascii=False))
            console.print(f"[cyan]assistant →[/] {escape(clean_text(call['name']))}({escape(arguments)})")
        return
    style = "red" if message.get("error") else _STYLES.get(role, "white")
    label = f"{role} ({escape(clean_text(str(message.get('name') or '')))})" if role == "tool" else role  # a box's name
    console.print(f"[{style}]{label}:[/] ", end="")
    console.print(clean_text(message.get("content") or ""), markup=False, highlight=False)  # the env's text
