"""GRPO + LoRA on capability envs with TRL's ``GRPOTrainer(environment_factory=...)`` (through
:class:`~trace_envs.training.grpo.TraceGRPOTrainer`, which adds constant-group dropping/resampling and hint prompts).

One dataset row per seed; TRL repeats each row ``num_generations`` times, so every group of K
rollouts starts from the same seed (checked on every batch). Rewards are the env's verifier reward
(the bridge's ``get_reward``). Tool results and the user's replies come back as tool messages, which
TRL's ``tool_mask`` removes from the loss. The adapter directory gets ``trace_adapter.json``, written
at every logging step, and checkpoints under ``checkpoints/`` so a killed run resumes.

Under ``torchrun``/``accelerate launch`` with W processes, TRL's sampler hands each process G / W of the step's
groups (distinct seeds); the group counts are gathered in :class:`~.grpo.TraceGRPOTrainer`, so the metadata's
counts are the world's, and only the main process writes files or prints. A rerun resumes on any W.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

from trace_envs.core import EnvProtocol, declares_capability
from trace_envs.llm.tool_template import adapt_tool_template

from .bridge import TRLEnvironment, env_capability, make_conversation_env, trl_environment
from .config import TrainConfig
from .episodes import build_rows, oracle_conversation, prompt_for_seed
from .library_warnings import known_library_warnings
from .metadata import AdapterMetadata, EpisodeExample, StepGroups, load_metadata, save_metadata
from .spot_checks import spot_checked_rows

ProgressFn = Callable[[int, int, dict[str, Any]], None]


def final_message(completion: Sequence[dict[str, Any]]) -> str | None:
    """The rollout's closing plain assistant message (``None`` when it ended on a tool call or result)."""
    if not completion:
        return None
    last = completion[-1]
    if last.get("role") != "assistant" or last.get("tool_calls"):
        return None
    content = last.get("content")
    return content if isinstance(content, str) else None


class GroupTracker:
    """Closes every rollout's episode, checks group seeds, logs the share of this process's groups with
    identical rewards, and keeps the first successful transcript. Called by TRL as a reward function of weight 0
    (it runs before the envs' ``get_reward`` columns); its own value is 1 when the model ended the
    rollout itself with a plain message, 0 when it ran out of tool rounds, turns or tokens. (The run's world
    totals of groups are :attr:`~.grpo.TraceGRPOTrainer.step_groups`.)"""

    def __init__(self, num_generations: int, max_completion_length: int):
        self.num_generations = num_generations
        self.max_completion_length = max_completion_length
        self.example: EpisodeExample | None = None
        self.env_errors = 0
        """Rollouts whose env failed (an exception, a box error, a reward out of range: scored 0), all steps."""
        self.__name__ = "episode_closed"

    def __call__(
        self,
        prompts: list[Any],
        completions: list[Any],
        completion_ids: list[list[int]] | None = None,
        environments: list[TRLEnvironment] | None = None,
        seed: list[int] | None = None,
        log_metric: Callable[[str, float], None] | None = None,
        **_: Any,
    ) -> list[float]:
        if environments is None:
            raise RuntimeError("GroupTracker needs TRL's environment_factory rollouts (no environments were passed)")
        finals = [final_message(c) for c in completions]
        rewards = [env._finish(text) for env, text in zip(environments, finals, strict=True)]
        seeds = [env._seed for env in environments]
        if seed is not None and [int(s) for s in seed] != seeds:
            raise RuntimeError(f"env seeds {seeds} differ from the rows' seeds {list(seed)}")
        k = self.num_generations
        identical = 0
        groups = len(rewards) // k if len(rewards) % k == 0 else 0
        for g in range(groups):
            block = range(g * k, (g + 1) * k)
            if len({(type(environments[i]), seeds[i]) for i in block}) != 1:
                raise RuntimeError(f"group {g} mixes start states: seeds {[seeds[i] for i in block]}")
            identical += len({rewards[i] for i in block}) == 1
        for env, reward in zip(environments, rewards, strict=True):
            if reward >= 1.0 and self.example is None:
                self.example = EpisodeExample(
                    env_id=env.env_id,
                    seed=int(env._seed or 0),
                    reward=reward,
                    source="policy",
                    transcript=env._transcript,
                )
        errors = sum(env._error is not None for env in environments)
        self.env_errors += errors
        if log_metric is not None:
            log_metric("trace/verifier_reward", sum(rewards) / max(1, len(rewards)))
            log_metric("trace/env_error_frac", errors / max(1, len(rewards)))
            if groups:
                log_metric("trace/identical_reward_groups_frac", identical / groups)
        lengths = [len(ids) for ids in completion_ids] if completion_ids is not None else [0] * len(finals)
        return [
            float(text is not None and length < self.max_completion_length and env._end != "max_turns")
            for text, length, env in zip(finals, lengths, environments, strict=True)
        ]


def is_main_process() -> bool:
    """True unless this is a non-zero rank of a distributed launch (``RANK`` set by torchrun/accelerate)."""
    import os

    return os.environ.get("RANK", "0") == "0"


def world_size() -> int:
    """Processes of this launch (``WORLD_SIZE`` set by torchrun/accelerate; 1 for a plain run)."""
    import os

    return int(os.environ.get("WORLD_SIZE", "1"))


def cpu_threads() -> None:
    """On CPU, torch uses ``OMP_NUM_THREADS`` threads (default 1): one thread keeps step times steady on small
    shared machines. Every command and pipeline stage that loads a model calls this first."""
    import os

    import torch

    if not torch.cuda.is_available():
        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))


def _versions() -> dict[str, str]:
    out = {}
    for name in ("trace-envs", "trl", "peft", "transformers", "torch"):
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def _oracle_example(env_id: str, cls: type[TRLEnvironment], first_seed: int) -> EpisodeExample | None:
    """The reference episode of ``first_seed`` for the router (``None`` for a target env, which has none)."""
    if not declares_capability(cls()._env):
        return None
    episode = oracle_conversation(cls, first_seed)
    return EpisodeExample(
        env_id=env_id, seed=first_seed, reward=episode["reward"], source="oracle", transcript=episode["transcript"]
    )


def add_to_curve(curve: list[dict[str, Any]], entry: dict[str, Any]) -> None:
    """One row per step: a log entry of a step already in the curve (the end-of-training summary shares
    the last step) is merged into that row."""
    for row in reversed(curve):
        if row.get("step") == entry["step"]:
            row.update(entry)
            return
    curve.append(entry)


TRAINER_STATE_FILES = ("optimizer.pt", "scheduler.pt", "scaler.pt", "trainer_state.json")
"""Checkpoint files that are not part of the saved adapter (with ``rng_state*.pth``)."""


def adapter_from_checkpoint(checkpoint: Path, out_dir: Path) -> None:
    """Copy the adapter a checkpoint holds (adapter weights and config, tokenizer files) into ``out_dir``,
    as ``save_model`` at that step would have written it."""
    import shutil

    for path in sorted(checkpoint.iterdir()):
        if path.is_file() and path.name not in TRAINER_STATE_FILES and not path.name.startswith("rng_state"):
            shutil.copy2(path, out_dir / path.name)


def checkpoint_step(checkpoint: str | Path) -> int:
    """The global step of a ``checkpoint-<step>`` directory."""
    return int(Path(checkpoint).name.rsplit("-", 1)[-1])


def _same_model(a: str, b: str) -> bool:
    """Whether two model arguments name the same model (a directory under two spellings counts once)."""
    if Path(a).exists() and Path(b).exists():
        return Path(a).resolve() == Path(b).resolve()
    return a == b


def finished_run(config: TrainConfig, model: str, out_dir: str | Path) -> AdapterMetadata | None:
    """The metadata of ``out_dir`` when it already holds a complete run of these envs and this model
    with at least ``config.max_steps`` steps (``max_steps`` is a total, so training again is a no-op);
    ``None`` when there is something to train. A complete run of other envs or another model there is
    an error, so that it is never resumed from or overwritten by accident."""
    try:
        previous = load_metadata(out_dir)
    except (FileNotFoundError, ValueError):
        return None
    if previous.env_ids != list(config.env_ids) or not _same_model(previous.base_model, str(model)):
        raise ValueError(
            f"{out_dir} holds an adapter of {', '.join(previous.env_ids)} on {previous.base_model}, not of "
            f"{', '.join(config.env_ids)} on {model}: pick another output directory, or pass --no-resume "
            "(resume=False) to train over it"
        )
    if previous.status == "complete" and previous.steps_done >= config.max_steps:
        return previous
    return None


def _make_callback(
    metadata: AdapterMetadata,
    out_dir: Path,
    tracker: GroupTracker,
    progress: ProgressFn | None,
    config: TrainConfig,
    step_groups: list[StepGroups],
) -> Any:
    from transformers import TrainerCallback

    class MetadataCallback(TrainerCallback):
        """Adds each log entry (TRL's, averaged over processes) to the curve with the world's rollouts so far,
        and rewrites the metadata file (incremental, atomic; main process only)."""

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any) -> None:
            metadata.step_groups = [g.model_copy(deep=True) for g in step_groups]
            metadata.count_groups(config.num_generations)
            entry = {
                "step": int(state.global_step),
                **{k: v for k, v in (logs or {}).items() if isinstance(v, int | float)},
                "trace/rollouts_collected": metadata.rollouts_collected,
            }
            add_to_curve(metadata.curve, entry)
            metadata.steps_done = int(state.global_step)
            if config.router_example == "policy":
                metadata.example = metadata.example or tracker.example
            if not state.is_world_process_zero:
                return  # one writer (and one progress bar) when accelerate runs several processes
            save_metadata(out_dir, metadata)
            if progress is not None and "loss" in entry:
                progress(int(state.global_step), int(state.max_steps), entry)

    return MetadataCallback()


class TrainingRun:
    """A configured GRPO run: the TRL trainer, the group tracker and the adapter metadata being written."""

    def __init__(
        self,
        trainer: Any,
        tracker: GroupTracker,
        metadata: AdapterMetadata,
        out_dir: Path,
        checkpoint: str | None,
        classes: dict[str, type[TRLEnvironment]],
        config: TrainConfig,
        step_groups: list[StepGroups] | None = None,
    ):
        self.trainer = trainer
        self.tracker = tracker
        self.metadata = metadata
        self.out_dir = out_dir
        self.checkpoint = checkpoint
        self.classes = classes
        self.config = config
        self.step_groups = step_groups if step_groups is not None else metadata.step_groups

    def run(self) -> AdapterMetadata:
        """Train (resuming from the checkpoint, if any) up to ``config.max_steps`` steps in all, save the
        adapter and the final metadata. A checkpoint that already has them all is not trained on
        (Transformers would train one more step): its adapter is the result."""
        trainer, tracker, metadata, config = self.trainer, self.tracker, self.metadata, self.config
        if self.checkpoint is not None and checkpoint_step(self.checkpoint) >= config.max_steps:
            if trainer.accelerator.is_main_process:
                adapter_from_checkpoint(Path(self.checkpoint), self.out_dir)
            metadata.steps_done = checkpoint_step(self.checkpoint)
        else:
            with known_library_warnings():
                trainer.train(resume_from_checkpoint=self.checkpoint)
                trainer.save_model(str(self.out_dir))
            metadata.steps_done = int(trainer.state.global_step)
        metadata.status = "complete"
        metadata.step_groups = [g.model_copy(deep=True) for g in self.step_groups]
        metadata.count_groups(config.num_generations)
        if metadata.example is None:
            first = config.env_ids[0]
            policy = tracker.example if config.router_example == "policy" else None
            metadata.example = policy or _oracle_example(first, self.classes[first], config.first_seed)
        if trainer.accelerator.is_main_process:
            save_metadata(self.out_dir, metadata)
        return metadata


def check_hints(probes: dict[str, EnvProtocol]) -> None:
    """Hint-prompt rollouts need a hint on at least one env's capability, and no hint may name its env's
    tools or their arguments (a hint is guidance, not the answer)."""
    from trace_envs.training.hints import hint_leaks

    hinted = {env_id: (env.capability, env) for env_id, env in probes.items() if env.capability and env.capability.hint}
    if not hinted:
        raise ValueError(
            f"hint_share > 0 but no capability of {', '.join(probes)} declares a hint: add hint=... to its "
            "Capability(...) declaration, or set hint_share: 0"
        )
    for env_id, (capability, env) in hinted.items():
        leaks = hint_leaks(capability.hint or "", env.toolset)
        if leaks:
            raise ValueError(
                f"the hint of {capability.name} ({env_id}) names {', '.join(leaks)}: rewrite it as guidance "
                "that names no tool or argument"
            )


def build_run(
    config: TrainConfig,
    model: str,
    out_dir: str | Path,
    resume: bool = True,
    progress: ProgressFn | None = None,
    rows: list[dict[str, Any]] | None = None,
) -> TrainingRun:
    """Set up (without running) a GRPO run; :func:`train` is ``build_run(...).run()``.

    ``rows`` replaces the dataset (default: ``num_seeds`` rows, a uniform round robin over ``env_ids``);
    each row ``{"prompt", "seed", "environment"}`` is one group of K rollouts (see :func:`build_rows`)."""
    from datasets import Dataset
    from transformers import AutoTokenizer, PrinterCallback
    from transformers.trainer_utils import get_last_checkpoint

    from .grpo import TraceGRPOTrainer

    if not config.env_ids:
        raise ValueError("config.env_ids is empty: name at least one env, e.g. env_ids: [trace/order-cancel-v0]")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    classes = {env_id: trl_environment(env_id, **config.env_knobs.get(env_id, {})) for env_id in config.env_ids}
    probes = {env_id: make_conversation_env(env_id, **config.env_knobs.get(env_id, {})) for env_id in config.env_ids}
    if config.hinted_per_group:
        check_hints(probes)
    if rows is None:
        seeds = range(config.first_seed, config.first_seed + config.num_seeds)
        rows = build_rows(config.env_ids, seeds, config.env_knobs)
    rows, _ = spot_checked_rows(rows, probes, config.spot_check_share, config.spot_check_seed)

    args = _grpo_args(config, out, max(p.max_turns for p in probes.values()))
    lora = config.lora.peft_config()
    checkpoint: str | None = None
    if resume and (out / "checkpoints").is_dir():
        checkpoint = get_last_checkpoint(str(out / "checkpoints"))  # type: ignore[no-untyped-call, unused-ignore]
    capabilities = [env_capability(e, probes[e]) for e in config.env_ids]
    metadata = _run_metadata(config, model, out, capabilities, args.world_size, checkpoint)
    tracker = GroupTracker(config.num_generations, config.max_completion_length)
    step_groups = [g.model_copy(deep=True) for g in metadata.step_groups]
    factory: Any = classes[config.env_ids[0]] if len(classes) == 1 else dict(classes)

    def fresh_row(env_id: str, seed: int) -> dict[str, Any]:
        return {"prompt": prompt_for_seed(classes[env_id], seed), "seed": seed, "environment": env_id}

    tokenizer = AutoTokenizer.from_pretrained(str(model))
    adapt_tool_template(tokenizer)  # a template without tools renders them as the hf client does
    with known_library_warnings():  # TRL's environment_factory notice, transformers' renames
        trainer = TraceGRPOTrainer(
            model=str(model),
            processing_class=tokenizer,
            reward_funcs=[cast(Any, tracker)],
            args=args,
            train_dataset=Dataset.from_list(rows),
            peft_config=lora,
            environment_factory=factory,
            callbacks=[_make_callback(metadata, out, tracker, progress, config, step_groups)],
            constant_groups=config.constant_groups,
            resample_rounds=config.resample_rounds,
            min_informative_groups=config.min_informative_groups,
            hinted_per_group=config.hinted_per_group,
            fresh_row=fresh_row,
            fresh_seed_base=config.first_seed + config.num_seeds,  # never a seed of the dataset
        )
    # The tracker only closes episodes and reports; the env's verifier reward (get_reward) has weight 1.
    trainer.reward_weights[0] = 0.0
    trainer.step_groups = step_groups  # the callback's list: the counts resume from the checkpoint's step
    if progress is not None or not is_main_process():
        trainer.remove_callback(PrinterCallback)
    return TrainingRun(trainer, tracker, metadata, out, checkpoint, classes, config, step_groups)


def _grpo_args(config: TrainConfig, out: Path, max_turns: int) -> Any:
    """TRL's GRPOConfig of the run (checkpoints under ``out``, CPU when there is no GPU), checked against the
    number of processes the launcher started."""
    import torch
    from trl.trainer.grpo_config import GRPOConfig

    kwargs = config.grpo_kwargs(out / "checkpoints", max_turns, not torch.cuda.is_available(), world_size())
    with known_library_warnings():
        args = GRPOConfig(**kwargs)
    if args.world_size != world_size():
        raise RuntimeError(f"WORLD_SIZE says {world_size()} processes but accelerate runs {args.world_size}")
    return args


def _run_metadata(
    config: TrainConfig, model: str, out: Path, capabilities: list[Any], processes: int, checkpoint: str | None
) -> AdapterMetadata:
    """The adapter's metadata for this run (one capability's, or a mixture's), carried over from the
    checkpoint it resumes, and saved by the main process before training starts."""
    single = len(capabilities) == 1
    metadata = AdapterMetadata(
        capability=capabilities[0].name if single else "multi_capability",
        description=capabilities[0].description
        if single
        else "Uniform mixture of: " + "; ".join(f"{c.name}: {c.description}" for c in capabilities),
        env_ids=list(config.env_ids),
        base_model=str(model),
        config=config.model_dump(mode="json"),
        versions=_versions(),
        rollout_budget=config.rollout_budget,
        world_size=processes,
    )
    if checkpoint is not None:
        _resume_metadata(metadata, out, checkpoint_step(checkpoint), config.num_generations)
    if is_main_process():
        save_metadata(out, metadata)
    return metadata


def _resume_metadata(metadata: AdapterMetadata, out: Path, step: int, num_generations: int) -> None:
    """Carry the curve, group counts and router example of ``out``'s metadata up to the checkpoint's ``step``
    (steps logged after it are trained again)."""
    try:
        previous = load_metadata(out)
    except (FileNotFoundError, ValueError):
        return
    metadata.curve = [e for e in previous.curve if int(e.get("step", 0)) <= step]
    metadata.example = previous.example
    metadata.step_groups = [g for g in previous.step_groups if g.step <= step]
    metadata.count_groups(num_generations)


def train(
    config: TrainConfig,
    model: str,
    out_dir: str | Path,
    resume: bool = True,
    progress: ProgressFn | None = None,
) -> AdapterMetadata:
    """Train one LoRA adapter with GRPO on ``config.env_ids`` (one env, or a uniform mixture).

    Args:
        config: The run's settings (``env_ids`` must name at least one env).
        model: Base model: a local directory or a hub id.
        out_dir: Where the adapter, ``trace_adapter.json`` and ``checkpoints/`` go.
        resume: Continue from the last checkpoint in ``out_dir/checkpoints`` if there is one.
        progress: Called as ``progress(step, max_steps, log_entry)`` at every logging step.

    Returns:
        The adapter's metadata (also written to ``out_dir/trace_adapter.json``). ``max_steps`` counts the
        steps already in ``out_dir``: when they are all there, nothing is trained (nor loaded) again.
    """
    if resume:
        done = finished_run(config, model, out_dir)
        if done is not None:
            return done
    return build_run(config, model, out_dir, resume=resume, progress=progress).run()
