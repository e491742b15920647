"""TRACE at micro scale on the device target: does the whole method beat the base and GRPO on the target itself?

One command, one seed, a JSON result and a plot (sizes shortened for 2 CPU cores; see ``--help``):

1. the base model: SmolLM2-135M-Instruct built offline (``make-model``), an existing folder (``--base``), or the
   tiny random model (``--model tiny``, a plumbing smoke round whose scores mean nothing);
2. a warm-up (SFT, LoRA r16/a32 merged) on the ``flawed:permission_error_recovery,datetime_reasoning`` scripted
   episodes of ``trace/device-v0``, with a few reference episodes mixed in: the warmed base knows the target's own
   tools and lacks the two planted capabilities. The warm-up plays the env's default scenarios, *generated* from
   the seeds (``DeviceKnobs.source == "generated"``), so it never sees a built-in scenario the pipeline rolls out
   on (train split) or the evaluation plays (test split);
3. the TRACE pipeline through its library entry point (``run_pipeline``, what ``trace-envs pipeline`` runs), one
   stage at a time: the warmed agent (``hf:<warm>``) rolls out on ``--rollout-tasks`` built-in *train* scenarios,
   the offline probes find its deficits, the catalogue generator synthesises an env per deficit, GRPO trains one
   adapter each on the warmed model, and the router picks an adapter per rollout task (``--rollout-policy``
   rolls out another agent instead: the tests' tiny-model round uses the scripted flawed agent, so that
   the analysis finds the planted deficits and every later stage has work);
4. the paper's "GRPO on target" baseline (``trace_envs.baselines.grpo_target``) on the built-in train scenarios,
   with the same GRPO settings and a budget equal to the rollouts the pipeline's train stage spent;
5. the warmed base, the routed adapters and the grpo-target adapter on the same ``--eval-tasks`` built-in *test*
   scenarios with the evaluation harness: success with 95% bootstrap intervals and the paired sign and
   permutation tests (routed vs base, routed vs grpo-target).

The pipeline's own evaluate stage is not used: the grpo-target adapter is trained after the pipeline, so step 5
evaluates all three policies on the held-out test split together, with the same harness.

Every stage writes into ``--out`` and is skipped when its output is there, so a killed run resumes::

    OMP_NUM_THREADS=2 python benchmarks/trace_micro.py --seed 0 --base /path/to/smollm2 --out /tmp/trace-micro

``result.json`` and ``trace_micro.png`` are written in ``--out`` after every stage.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the learning benchmark beside this file
from learning import Stages, add_run_arguments, compare, make_base, warm_up

TARGET = "device"
ENV_ID = "trace/device-v0"
PLANTED = ("permission_error_recovery", "datetime_reasoning")
WARMUP_POLICY = "flawed:" + ",".join(PLANTED)
PIPELINE_STAGES = ("rollout", "analyze", "synthesize", "train", "route")
"""The pipeline stages this benchmark runs (evaluate and report: see the module docstring)."""
POLICIES = ("base", "routed", "grpo-target")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The run's sizes; the defaults are small, yet SmolLM2 on device prompts takes hours of CPU (docs/performance.md)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_run_arguments(parser)
    parser.add_argument("--base", type=Path, default=None, help="an existing base model folder (used, not copied)")
    parser.add_argument("--warmup-episodes", type=int, default=24, help="flawed episodes on generated scenarios")
    parser.add_argument("--warmup-reference", type=int, default=8, help="reference (oracle) episodes mixed in")
    parser.add_argument(
        "--warmup-steps", type=int, default=8, help="SFT steps (0: no warm-up, the --base model is the agent as it is)"
    )
    parser.set_defaults(warmup_epochs=3.0)  # the warm-up's length is --warmup-steps, which overrides the epochs
    parser.add_argument("--warmup-lr", type=float, default=5e-4)
    parser.add_argument(
        "--rollout-policy",
        default=None,
        help="the agent the pipeline rolls out (default: hf:<warm folder>); a scripted one, e.g. "
        f"{WARMUP_POLICY}, makes a tiny-model smoke round reach every stage",
    )
    parser.add_argument("--rollout-tasks", type=int, default=8, help="built-in train scenarios the agent plays")
    parser.add_argument("--eval-tasks", type=int, default=8, help="built-in test scenarios evaluated")
    parser.add_argument("--steps", type=int, default=2, help="GRPO steps per adapter")
    parser.add_argument("--k", type=int, default=4, help="rollouts per group")
    parser.add_argument("--micro-batch", type=int, default=None, help="rollouts per forward/backward (default K)")
    parser.add_argument("--lr", type=float, default=2e-4, help="GRPO learning rate (pipeline and baseline)")
    parser.add_argument("--max-completion", type=int, default=256, help="token cap of one GRPO rollout")
    parser.add_argument("--max-tokens", type=int, default=96, help="tokens per agent turn (rollout and evaluation)")
    parser.add_argument("--max-turns", type=int, default=10, help="agent turns per episode (rollout and evaluation)")
    parser.add_argument("--samples", type=int, default=4, help="sampled episodes per test task, at --temperature")
    parser.add_argument("--temperature", type=float, default=1.0, help="GRPO sampling temperature (and evaluation's)")
    parser.add_argument(
        "--concurrency", type=int, default=8, help="episodes played at once (rollout, evaluation); hf: batches them"
    )
    args = parser.parse_args(argv)
    for problem in argument_problems(args):
        parser.error(problem)
    return args


def argument_problems(args: argparse.Namespace) -> list[str]:
    """What is wrong with the arguments, one line each naming the option and the fix (empty: nothing)."""
    from trace_envs.targets.device.builtin import builtin_pool

    problems = []
    counts = ("warmup_episodes", "rollout_tasks", "eval_tasks", "steps", "max_completion", "max_tokens", "max_turns",
              "samples", "concurrency")  # fmt: skip
    problems += [f"--{n.replace('_', '-')} must be at least 1, got {getattr(args, n)}" for n in counts
                 if getattr(args, n) < 1]  # fmt: skip
    if args.warmup_reference < 0 or args.warmup_steps < 0:
        problems.append("--warmup-reference and --warmup-steps must be 0 or more")
    if args.temperature <= 0:
        problems.append(f"--temperature must be above 0 (the evaluation samples, as GRPO did), got {args.temperature}")
    if args.k < 2:
        problems.append(f"--k must be at least 2 (GRPO compares the rollouts of a group), got {args.k}")
    if args.micro_batch is not None and (args.micro_batch < 1 or args.k % args.micro_batch):
        problems.append(f"--micro-batch {args.micro_batch} must divide the {args.k} rollouts of a step")
    for option, split, wanted in (("--rollout-tasks", "train", args.rollout_tasks), ("--eval-tasks", "test",
                                                                                     args.eval_tasks)):  # fmt: skip
        available = len(builtin_pool(split))
        if wanted > available:
            problems.append(f"{option} {wanted}: the device {split} split has {available} scenarios; give at most that")
    if args.base is not None and not (args.base / "config.json").is_file():
        problems.append(f"--base {args.base}: no config.json there; give a model folder (e.g. from make-model)")
    return problems


def pipeline_config(args: argparse.Namespace, warm: Path) -> Any:
    """The TRACE run on the device target, every knob shortened for a CPU (as the demo's config)."""
    from trace_envs.pipeline.config import parse_config

    micro = args.micro_batch or args.k
    data = {
        "targets": [TARGET],
        "seed": args.seed,
        "rollout": {
            "policy": args.rollout_policy or f"hf:{warm}",
            "concurrency": args.concurrency,
            "split": "train",
            "max_tasks": args.rollout_tasks,
            "max_steps": args.max_turns,
            "max_tokens": args.max_tokens,
        },
        "analyze": {"analyst": "probes", "runs": 2},
        "synthesize": {"generator": "catalogue", "rounds": 1, "seeds": 8, "fuzz_examples": 10, "jobs": 1},
        "train": {
            "model": str(warm),
            "max_steps": args.steps,
            "num_generations": args.k,
            "groups_per_step": 1,
            "per_device_train_batch_size": micro,
            "max_completion_length": args.max_completion,
            "num_seeds": 16,
            "learning_rate": args.lr,
            "temperature": args.temperature,
            "gradient_accumulation_steps": args.k // micro,
            # long device prompts: activations recomputed, not kept, bound a step's memory
            "gradient_checkpointing": True,
        },
        "route": {"enabled": True},
    }
    return parse_config(data, "the trace_micro benchmark's config")


def pipeline_stage(config: Any, out: Path, name: str) -> dict[str, Any]:
    """One pipeline stage through ``run_pipeline`` (cached in ``out/pipeline/<stage>``); its summary."""
    from trace_envs.pipeline.runner import run_pipeline

    (outcome,) = run_pipeline(config, out / "pipeline", only=name)
    return {"action": outcome.action, "summary": outcome.result.model_dump(mode="json")}


def train_rollouts(train_dir: Path) -> dict[str, int]:
    """Rollouts each finished adapter of the pipeline's train stage collected (re-collected groups included)."""
    from trace_envs.pipeline.model_stages import adapter_dirs
    from trace_envs.training import load_metadata

    return {f"{TARGET}/{d.name}": load_metadata(d).rollouts_collected for d in adapter_dirs(train_dir, TARGET)}


def baseline(config: Any, warm: Path, out: Path) -> dict[str, Any]:
    """GRPO on the target's built-in train scenarios, the pipeline's GRPO settings, on the train stage's budget."""
    from trace_envs.baselines.grpo_target import grpo_target
    from trace_envs.pipeline.model_stages import section_train_config

    budget = sum(train_rollouts(out / "pipeline" / "train").values())
    settings = section_train_config(config, ENV_ID)
    if budget < settings.rollouts_per_step:
        return {"budget": budget, "skipped": f"the train stage spent {budget} rollouts, less than one GRPO step"}

    def progress(step: int, total: int, entry: dict[str, Any]) -> None:
        print(f"[trace_micro] grpo-target step {step}/{total} reward={entry.get('reward')}", flush=True)

    knobs = {"source": "builtin", "split": "train"}
    meta, run = grpo_target(ENV_ID, str(warm), out / "grpo-target", budget, settings, knobs=knobs, progress=progress)
    return {
        "budget": budget,
        "rollouts_used": run.rollouts_used,
        "rollouts_collected": meta.rollouts_collected,
        "steps_done": meta.steps_done,
        "adapter": str(out / "grpo-target" / run.artifact),
        "curve": [{k: v for k, v in e.items() if k in ("step", "reward", "loss")} for e in meta.curve],
    }


def policy_texts(warm: Path, out: Path, grpo_stage: dict[str, Any]) -> list[str]:
    """``NAME=SPEC`` of the three policies; without adapters ``routed`` is the warmed model alone (said so)."""
    from trace_envs.pipeline.model_stages import adapter_dirs

    adapters = [str(d) for d in adapter_dirs(out / "pipeline" / "train", TARGET)]
    routed = f"routed:{warm}@{','.join(adapters)}" if adapters else f"hf:{warm}"
    grpo_adapter = grpo_stage.get("adapter")
    return [f"base=hf:{warm}", f"routed={routed}", f"grpo-target=hf:{warm}@{grpo_adapter}" if grpo_adapter else ""]


def evaluate(args: argparse.Namespace, warm: Path, out: Path, grpo_stage: dict[str, Any]) -> dict[str, Any]:
    """The policies on the first ``--eval-tasks`` built-in test scenarios, ``--samples`` sampled trials each at the
    training temperature (the policy as GRPO trained it): per task its share of passed trials, by policy."""
    from trace_envs.evaluation.harness import evaluate as run_evaluation
    from trace_envs.evaluation.policies import parse_policy
    from trace_envs.evaluation.summary import task_scores
    from trace_envs.evaluation.targets import load_target

    tasks = load_target(TARGET, split="test", limit=args.eval_tasks)
    entries = [parse_policy(text) for text in policy_texts(warm, out, grpo_stage) if text]

    def on_episode(name: str, record: Any) -> None:
        print(f"[trace_micro] evaluate {name}: seed {record.seed} success={record.success}", flush=True)

    folder = out / "evaluate"
    sampling = {"max_tokens": args.max_tokens, "temperature": args.temperature, "seed": args.base_seed}
    results = run_evaluation(
        tasks, entries, folder, trials=args.samples, concurrency=args.concurrency, max_steps=args.max_turns,
        sampling=sampling, on_episode=on_episode,
    )  # fmt: skip
    task_ids = [t.task_id for t in tasks.tasks]
    called = tool_calls_made(folder, results)
    policies: dict[str, Any] = {}
    for policy in results.policies:
        passed = {score.task_id: score.pass_rate for score in task_scores(policy.outcomes)}  # errored trials left out
        routes = {o.task_id: o.route for o in policy.outcomes if o.route is not None}
        policies[policy.name] = {
            "spec": policy.spec,
            "decoding": policy.decoding,
            "success": [passed.get(t, 0.0) for t in task_ids],
            "errors": sum(1 for o in policy.outcomes if o.error is not None),
            "tool_call_rate": called[policy.name],
            **({"routes": routes} if routes else {}),
        }
    return {"split": tasks.info.split, "tasks": task_ids, "samples": args.samples, "policies": policies}


def tool_calls_made(folder: Path, results: Any) -> dict[str, float | None]:
    """Per policy, the share of its finished evaluation episodes that called at least one tool (from the stores)."""
    from trace_envs.rollout.store import load_episodes

    stores: dict[Path, dict[tuple[str, int, int, str], Any]] = {}
    rates: dict[str, float | None] = {}
    for policy in results.policies:
        made = []
        for o in policy.outcomes:
            if o.error is not None:
                continue
            path = folder / o.store.path
            if path not in stores:
                stores[path] = {(r.env_id, r.seed, r.sample, r.policy): r for r in load_episodes(path)}
            record = stores[path][(o.store.env_id, o.store.seed, o.store.sample, o.store.policy)]
            made.append(bool(record.tool_calls))
        rates[policy.name] = sum(made) / len(made) if made else None
    return rates


def evaluation_routes(evaluation: dict[str, Any] | None) -> dict[str, int] | None:
    """How often the routed policy picked each adapter (or the base) on the test tasks."""
    if not evaluation or "routed" not in evaluation["policies"]:
        return None
    counts: dict[str, int] = {}
    for route in evaluation["policies"]["routed"].get("routes", {}).values():
        counts[route] = counts.get(route, 0) + 1
    return counts


def summarize(result: dict[str, Any], seed: int) -> dict[str, Any]:
    """The report: what each stage found and spent, success per policy, and the paired tests."""
    st = result["stages"]
    summary = lambda name: st.get(f"pipeline_{name}", {}).get("summary", {})  # noqa: E731
    found = summary("analyze").get("targets", {}).get(TARGET, {}).get("kept")
    report: dict[str, Any] = {
        "warm_rollout": summary("rollout").get("targets", {}).get(TARGET),
        "capabilities_found": found,
        "planted": list(PLANTED),
        "found_the_planted": None if found is None else sorted(found) == sorted(PLANTED),
        "synthesized": summary("synthesize").get("targets", {}).get(TARGET),
        "router_choices": summary("route").get("targets", {}).get(TARGET),
        "router_choices_on_test": evaluation_routes(st.get("evaluate")),
        "rollouts": {"train": st.get("train_rollouts", {}).get("total"), "grpo_target": None},
        "cpu_minutes_by_stage": {name: round(s["cpu_s"] / 60, 2) for name, s in st.items()},
        "wall_minutes_by_stage": {name: round(s["wall_s"] / 60, 2) for name, s in st.items()},
    }
    if "grpo_target" in st:
        keys = ("budget", "rollouts_used", "rollouts_collected", "skipped")
        report["rollouts"]["grpo_target"] = {k: st["grpo_target"][k] for k in keys if k in st["grpo_target"]}
    evaluation = st.get("evaluate")
    if evaluation:
        success = {name: p["success"] for name, p in evaluation["policies"].items()}
        report["samples_per_task"] = evaluation.get("samples", 1)
        report["policies"] = {
            name: {"success": sum(s) / len(s), "tasks": len(s), "tool_call_rate": p.get("tool_call_rate")}
            for (name, s), p in zip(success.items(), evaluation["policies"].values(), strict=True)
        }
        report["warm_tool_call_rate_on_test"] = report["policies"].get("base", {}).get("tool_call_rate")
        for against in ("base", "grpo-target"):
            if against in success:
                cmp = compare(success[against], success["routed"], seed, names=(against, "routed"))
                report[f"routed_vs_{against}"] = cmp
                for name in (against, "routed"):
                    report["policies"][name]["estimate"] = cmp[name]
    return report


def plot(result: dict[str, Any], path: Path) -> None:
    """Test-split success of the three policies (95% bootstrap) and the GRPO reward curves."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    policies = result.get("report", {}).get("policies", {})
    names = [n for n in POLICIES if "estimate" in policies.get(n, {})]
    estimates = [policies[n]["estimate"] for n in names]
    values = [e["value"] for e in estimates]
    intervals = [e.get("interval") or {"low": e["value"], "high": e["value"]} for e in estimates]
    below = [e["value"] - i["low"] for e, i in zip(estimates, intervals, strict=True)]
    above = [i["high"] - e["value"] for e, i in zip(estimates, intervals, strict=True)]
    if names:
        left.bar(names, values, yerr=[below, above], capsize=4)
        for x, name in enumerate(names):  # the value itself, readable at 0 too, and how often the policy called a tool
            calls = policies[name].get("tool_call_rate")
            label = f"{values[x]:.2f}" + ("" if calls is None else f"\ntool calls in {calls:.0%}")
            left.annotate(label, (x, values[x]), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=8)
    left.set(title="device test split, sampled success (95% bootstrap)", ylim=(0, 1))
    curves = dict(result["stages"].get("train_rollouts", {}).get("curves", {}))
    curves["grpo-target"] = result["stages"].get("grpo_target", {}).get("curve", [])
    for name, curve in curves.items():
        points = [e for e in curve if "reward" in e]
        right.plot([e["step"] for e in points], [e["reward"] for e in points], marker="o", label=name)
    right.set(title="GRPO training reward", xlabel="step", ylabel="mean reward", ylim=(-0.05, 1.05))
    right.xaxis.get_major_locator().set_params(integer=True)
    if any(curves.values()):
        right.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def spent(out: Path) -> dict[str, Any]:
    """The train stage's rollouts per adapter and in all (the baseline's budget), with the adapters' curves."""
    from trace_envs.pipeline.model_stages import adapter_dirs
    from trace_envs.training import load_metadata

    per_adapter = train_rollouts(out / "pipeline" / "train")
    curves = {
        f"{TARGET}/{d.name}": [{k: v for k, v in e.items() if k in ("step", "reward")} for e in load_metadata(d).curve]
        for d in adapter_dirs(out / "pipeline" / "train", TARGET)
    }
    return {"adapters": per_adapter, "total": sum(per_adapter.values()), "curves": curves}


def no_warm_up(base: Path) -> dict[str, Any]:
    """The warm-up stage's record when ``--warmup-steps 0`` skips it."""
    return {"skipped": "--warmup-steps 0: the base model is the agent as it is", "folder": str(base)}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    stages = Stages(out, args, name="trace_micro")
    base = args.base.resolve() if args.base is not None else out / "base"
    warm = base if args.warmup_steps == 0 else out / "warm"
    config = pipeline_config(args, warm)
    steps: list[tuple[str, Any]] = [
        ("make_model", lambda: {"folder": str(base if args.base is not None else make_base(args, out))}),
        (
            "warm_up",
            lambda: no_warm_up(base) if args.warmup_steps == 0 else warm_up(args, base, out, ENV_ID, WARMUP_POLICY),
        ),
        *[(f"pipeline_{name}", lambda name=name: pipeline_stage(config, out, name)) for name in PIPELINE_STAGES],
        ("train_rollouts", lambda: spent(out)),
        ("grpo_target", lambda: baseline(config, warm, out)),
        ("evaluate", lambda: evaluate(args, warm, out, stages.result["stages"]["grpo_target"])),
    ]
    for name, run in steps:
        if stages.done(name) is None:
            started, wall = time.process_time(), time.time()
            stages.record(name, started, wall, run())
        stages.result["report"] = summarize(stages.result, args.seed)
        stages.save()
        plot(stages.result, out / "trace_micro.png")
    return stages.result


if __name__ == "__main__":
    main()
