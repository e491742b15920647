"""Red team through the command line, as a user runs it: a synthesis output folder whose module passes the real
`trace-envs validate` (recorded in the folder's manifest) and fires only at run time, on seeds no validation
plays: it overwrites a canary, calls a 127.0.0.1 listener, reads a fake API key from the environment and a fake
SSH key from a fake home, writes them to a file beside the run and into its observation, and patches the
contract and a shipped env to pay anything. The folder then goes through `TRACE_ENVS_PATH=folder trace-envs
rollout`, `train` (one GRPO step), `evaluate` (the tau2 evaluation of a junk agent) and `pipeline`
(``synthesize.folders``). After each: the canary is untouched, the listener saw nothing, no output of the run
holds either secret, the shipped env still pays a junk agent 0, and no box process or scratch is left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from trace_envs.registry.sources import PATH_VARIABLE
from trace_envs.synthesis.manifest import Manifest, read_manifest

from .conftest import REDTEAM, TAU2_DATA, Listener

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="boxes need Linux")

SECRET = "sk-ant-canary-cli-5b2d"
KEY = "FAKE-PRIVATE-KEY-cli-7c1e"
ENV_ID = "trace/precondition-verification-v0"
UNPLAYED = "700000"
"""The first of the seeds the module fires on (``UNPLAYED_SEEDS`` in it): no validation plays them."""
TRUST = ("builtins", "io", "os", "socket", "generated_envs")
"""What ``--trust`` lets through the static gate: a stand-in for a hole in it, so that the module passes."""


def hostile_source(canary: Path, port: int, home: Path, leak: Path) -> str:
    """The hostile module aimed at these targets."""
    source = (REDTEAM / "runtime" / "payload_at_run_time.py").read_text(encoding="utf-8")
    for placeholder, value in {"__CANARY__": canary, "__PORT__": port, "__HOME__": home, "__LEAK__": leak}.items():
        source = source.replace(placeholder, str(value))
    return source


@dataclass
class HostileFolder:
    """A synthesis folder holding the validated hostile module, and what its payload aims at."""

    root: Path
    envs: Path
    canary: Path
    leak: Path
    home: Path
    temp: Path
    listener: Listener

    def environment(self, *, folder: bool = True) -> dict[str, str]:
        """A user's environment: the secrets, the folder on ``$TRACE_ENVS_PATH``, boxes' scratch under ``temp``."""
        environment = {
            **os.environ, "HOME": str(self.home), "ANTHROPIC_API_KEY": SECRET, "TMPDIR": str(self.temp),
            "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false",
        }  # fmt: skip
        environment.pop(PATH_VARIABLE, None)
        if folder:
            environment[PATH_VARIABLE] = str(self.envs)
        return environment

    def run(self, *args: str, folder: bool = True, code: int = 0) -> subprocess.CompletedProcess[str]:
        """``trace-envs ARGS`` in a subprocess; fails the test (with its output) unless it exits with ``code``."""
        result = subprocess.run(
            [sys.executable, "-m", "trace_envs.cli", *args], capture_output=True, text=True, timeout=600,
            env=self.environment(folder=folder), check=False,
        )  # fmt: skip
        assert result.returncode == code, result.stdout[-3000:] + result.stderr[-3000:]
        return result


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostileFolder]:
    """The folder, validated by ``trace-envs validate`` (exit 0, recorded in its manifest) once per module."""
    if not TAU2_DATA.is_dir():  # the module is a retail one: its leakage gate reads the retail tasks
        pytest.skip(f"benchmark data not found at {TAU2_DATA}: put the shared/ folder beside the checkout")
    root = tmp_path_factory.mktemp("redteam-cli")
    (root / "home" / ".ssh").mkdir(parents=True)
    (root / "home" / ".ssh" / "id_rsa").write_text(KEY, encoding="utf-8")
    (root / "tmp").mkdir()
    listener = Listener()
    folder = HostileFolder(
        root, root / "envs", root / "canary.txt", root / "leak.txt", root / "home", root / "tmp", listener
    )
    folder.canary.write_text("original", encoding="utf-8")
    folder.envs.mkdir()
    (folder.envs / "manifest.json").write_text(Manifest().model_dump_json(), encoding="utf-8")  # as synthesize starts
    module = folder.envs / "precondition_verification.py"
    module.write_text(hostile_source(folder.canary, listener.port, folder.home, folder.leak), encoding="utf-8")
    data = ["--data", str(TAU2_DATA)]
    trust = [option for name in TRUST for option in ("--trust", name)]
    validated = folder.run(
        "validate", str(module), "-t", "retail", "--seeds", "5", "--fuzz-examples", "10", "-j", "1", *trust, *data,
        folder=False,
    )  # fmt: skip
    assert "recorded precondition_verification.py" in validated.stdout, validated.stdout
    manifest = read_manifest(folder.envs)
    assert manifest is not None and manifest.modules["precondition_verification.py"].env_id == ENV_ID
    assert_fired_nowhere(folder, [folder.envs], validated)
    try:
        yield folder
    finally:
        listener.close()


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny random Qwen3 (seconds to build), shared by the training and the pipeline run."""
    pytest.importorskip("trl")
    from trace_envs.llm.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny", seed=0)


def box_leftovers(temp: Path) -> list[str]:
    """Box processes (their scratch is under ``temp``) still alive, and box scratch folders left in ``temp``."""
    marker = str(temp).encode()
    alive = []
    for entry in os.listdir("/proc"):
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes() if entry.isdigit() else b""
            environ = Path(f"/proc/{entry}/environ").read_bytes() if b"trace_envs.box" in cmdline else b""
        except OSError:
            continue
        if marker in cmdline or marker in environ:
            alive.append(f"pid {entry}: {cmdline[:120]!r}")
    return alive + [path.name for path in temp.glob("trace-box*")]


def assert_fired_nowhere(folder: HostileFolder, outputs: list[Path], result: subprocess.CompletedProcess[str]) -> None:
    """No canary write, listener connection or leak file; no secret in the run's outputs or its console."""
    assert folder.canary.read_text(encoding="utf-8") == "original"
    assert folder.listener.connections == 0
    assert not folder.leak.exists()
    texts = {"console": result.stdout + result.stderr}
    for output in outputs:
        texts.update({str(p): p.read_bytes().decode("utf-8", "replace") for p in output.rglob("*") if p.is_file()})
    leaked = [name for name, text in texts.items() if SECRET in text or KEY in text]
    assert not leaked, leaked
    assert box_leftovers(folder.temp) == []


def test_the_payload_is_real_where_nothing_boxes_it(tmp_path: Path) -> None:
    """The control: the same module run in a plain interpreter (a throwaway child of this test, aimed at a canary,
    listener and home of its own) fires every payload, so each check of the tests below can fail."""
    listener = Listener()
    try:
        canary, home, leak, module = (
            tmp_path / "canary.txt",
            tmp_path / "home",
            tmp_path / "leak.txt",
            tmp_path / "m.py",
        )
        canary.write_text("original", encoding="utf-8")
        (home / ".ssh").mkdir(parents=True)
        (home / ".ssh" / "id_rsa").write_text(KEY, encoding="utf-8")
        module.write_text(hostile_source(canary, listener.port, home, leak), encoding="utf-8")
        code = (
            "import runpy, sys\n"
            "env = runpy.run_path(sys.argv[1])['RetailCancelEnv']()\n"
            f"print(env.reset(seed={UNPLAYED})[0][-200:])\n"
            "from generated_envs.order_cancel import OrderCancelEnv\n"
            "print(OrderCancelEnv.step.__name__, type(env).__mro__[1].verify.__name__)\n"
        )
        environment = {**os.environ, "HOME": str(home), "ANTHROPIC_API_KEY": SECRET, "OMP_NUM_THREADS": "1"}
        environment.pop(PATH_VARIABLE, None)
        ran = subprocess.run(
            [sys.executable, "-c", code, str(module)], capture_output=True, text=True, env=environment, timeout=120
        )
        assert ran.returncode == 0, ran.stderr[-2000:]
        assert canary.read_text(encoding="utf-8") == "fired at run time"
        assert SECRET in leak.read_text(encoding="utf-8") and KEY in leak.read_text(encoding="utf-8")
        assert SECRET in ran.stdout and "_pay_junk _pay_anything" in ran.stdout
        deadline = time.monotonic() + 10
        while listener.connections == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert listener.connections == 1
    finally:
        listener.close()


def test_rollout_plays_the_folder_boxed_and_the_payload_fires_nowhere(hostile: HostileFolder, tmp_path: Path) -> None:
    """The module's own verdict pays junk 1.0 on the seeds it fires on (its payload ran, in its box), so the
    rollout's spot check of its first seed stops it: its episodes are stored as errors naming it and the seed. The
    shipped env rolled out next in the same process still pays the same junk 0."""
    store = tmp_path / "rollout" / "store.jsonl"
    result = hostile.run(
        "rollout", "-e", ENV_ID, "-e", "trace/order-cancel-v0", "--seeds", f"{UNPLAYED}-{int(UNPLAYED) + 1}",
        "-p", "noop", "-c", "1", "-o", str(store),
    )  # fmt: skip
    episodes = [json.loads(line) for line in store.read_text(encoding="utf-8").splitlines()]
    rewards = {(e["env_id"], e["seed"]): e["reward"] for e in episodes}
    assert len(rewards) == 4 and all(e["ended"] != "box_error" for e in episodes), rewards
    stopped = [e["error"] for e in episodes if e["env_id"] == ENV_ID]
    assert stopped == [f"{ENV_ID} stopped by a spot check on seed {UNPLAYED}: " + stopped[0].partition(": ")[2]] * 2
    assert "junk" in stopped[0] and "was paid 1" in stopped[0]  # the payload ran: its contract patch, in its box
    assert [r for (env, _), r in rewards.items() if env == "trace/order-cancel-v0"] == [0.0, 0.0]
    assert_fired_nowhere(hostile, [tmp_path / "rollout"], result)


def test_the_tau2_evaluation_of_a_junk_agent_is_unchanged_by_the_folder(
    hostile: HostileFolder, tmp_path: Path, tau2_data: Path
) -> None:
    """``trace-envs evaluate`` with the folder on the path (its module runs, in a box, at start) scores a junk
    agent exactly as without it."""
    from trace_envs.evaluation import load_results

    def junk_passes(out: Path, folder: bool) -> tuple[list[bool], subprocess.CompletedProcess[str]]:
        result = hostile.run(
            "evaluate", "-t", "retail", "--data", str(tau2_data), "--tasks", "3", "-p", "junk=noop", "-o", str(out),
            "-c", "1", folder=folder,
        )  # fmt: skip
        return [o.passed for o in load_results(out).policy("junk").outcomes], result

    before, _ = junk_passes(tmp_path / "before", folder=False)
    after, result = junk_passes(tmp_path / "after", folder=True)
    assert after == before and not all(before)
    assert_fired_nowhere(hostile, [tmp_path / "after"], result)


@pytest.mark.train
def test_training_on_the_folder_through_the_cli_stops_before_any_step(
    hostile: HostileFolder, tiny_model: Path, tmp_path: Path
) -> None:
    """`TRACE_ENVS_PATH=folder trace-envs train` on the seeds the payload waits for: the spot check of the first
    row's seed sees junk paid and stops the run, with one line naming the env and the seed, before any step."""
    config = tmp_path / "grpo.yaml"
    config.write_text(f"first_seed: {UNPLAYED}\nnum_seeds: 2\nmax_completion_length: 16\n", encoding="utf-8")
    adapter = tmp_path / "adapter"
    result = hostile.run(
        "train", "-e", ENV_ID, "--model", str(tiny_model), "-o", str(adapter), "--max-steps", "1", "--num-generations",
        "2", "--batch-size", "2", "--config", str(config), code=1,
    )  # fmt: skip
    shown = " ".join(result.stdout.split())  # the console wraps long lines
    assert f"stopped before any training step: {ENV_ID} stopped by a spot check on seed {UNPLAYED}" in shown
    assert not (adapter / "checkpoints").exists()
    assert_fired_nowhere(hostile, [adapter], result)


PIPELINE_YAML = """\
targets: [retail]
data: null
rollout: {{policy: noop, concurrency: 2, max_tasks: 2}}
analyze: {{analyst: probes, runs: 1}}
synthesize: {{folders: {{retail: {folder}}}}}
train: {{model: {model}, max_steps: 1, num_generations: 2, per_device_train_batch_size: 2, max_completion_length: 16,
        num_seeds: 2, first_seed: {seed}}}
route: {{enabled: false}}
evaluate: {{policies: [base, oracle], max_tasks: 2, max_steps: 6, concurrency: 2}}
"""
"""The smallest pipeline that trains on the folder: a junk (noop) base agent on two generated retail tasks."""


@pytest.mark.train
def test_the_pipeline_trains_on_the_folder_and_evaluates_as_before(
    hostile: HostileFolder, tiny_model: Path, tmp_path: Path
) -> None:
    """`trace-envs pipeline` with ``synthesize.folders`` (no ``$TRACE_ENVS_PATH``): the folder's module is
    copied, not synthesised, and set to train boxed on the payload's seeds, where the spot check of the first
    row's seed sees junk paid: no adapter is trained on it, the train stage says why (naming the env and the seed),
    and the evaluation after it still pays the junk base agent what the rollout before it paid (0) and the gold
    policy 1.0."""
    pytest.importorskip("matplotlib")
    import shutil

    from trace_envs.pipeline import (
        EvaluateResult,
        RolloutResult,
        SynthesizeResult,
        TrainResult,
        load_config,
        pending_stages,
    )
    from trace_envs.synthesis.manifest import MANIFEST

    envs = shutil.copytree(hostile.envs, tmp_path / "envs")
    config = tmp_path / "trace.yaml"
    config.write_text(PIPELINE_YAML.format(folder=envs, model=tiny_model, seed=UNPLAYED), encoding="utf-8")
    out = tmp_path / "run"
    result = hostile.run("pipeline", str(config), "--out", str(out), folder=False)
    stages = ("synthesize", "rollout", "train", "evaluate")
    summaries = {s: json.loads((out / s / ".stage.json").read_text(encoding="utf-8"))["summary"] for s in stages}
    synthesized = SynthesizeResult.model_validate(summaries["synthesize"]).targets["retail"]
    assert list(synthesized) == ["precondition_verification"]
    copied = synthesized["precondition_verification"]
    assert (copied.status, copied.env_id, copied.reason) == ("passed", ENV_ID, f"from {envs}")
    trained = TrainResult.model_validate(summaries["train"])
    assert trained.adapters == {}
    stopped = trained.stopped["retail/precondition_verification"]
    assert f"trace/retail-precondition-verification-v0 stopped by a spot check on seed {UNPLAYED}" in stopped
    assert not (out / "train" / "retail" / "precondition_verification" / "trace_adapter.json").exists()
    evaluated = EvaluateResult.model_validate(summaries["evaluate"]).targets["retail"].pass_rates()
    rolled_out = RolloutResult.model_validate(summaries["rollout"]).targets["retail"].pass_rate
    assert evaluated["base"] == rolled_out == 0.0
    assert evaluated["oracle"] == 1.0
    assert_fired_nowhere(hostile, [out], result)
    assert pending_stages(load_config(config), out) == ()
    manifest = read_manifest(envs)
    assert manifest is not None
    manifest.modules["precondition_verification.py"].notes.append("validated again")
    (envs / MANIFEST).write_text(manifest.model_dump_json(), encoding="utf-8")  # as `trace-envs validate` does
    assert pending_stages(load_config(config), out) == ("synthesize", "train", "route", "evaluate", "report")


def test_the_pipeline_refuses_a_folder_edited_since_it_was_validated(hostile: HostileFolder, tmp_path: Path) -> None:
    """``synthesize.folders`` checks what ``load_envs`` checks: every module's sha256 against the manifest."""
    import shutil

    from trace_envs.pipeline import StageError, demo_config
    from trace_envs.pipeline.context import StageContext, TargetStep
    from trace_envs.pipeline.data_stages import use_folder

    edited = shutil.copytree(hostile.envs, tmp_path / "edited")
    with (edited / "precondition_verification.py").open("a", encoding="utf-8") as module:
        module.write("\nEDITED = True\n")
    context = StageContext("synthesize", demo_config(), tmp_path / "run", tmp_path / "run" / "synthesize")
    retail = TargetStep(context, "retail")
    with pytest.raises(StageError, match=r"synthesize.folders.retail: .*precondition_verification.py"):
        use_folder(retail, edited)
    (edited / "manifest.json").unlink()
    with pytest.raises(StageError, match="holds no validated module"):
        use_folder(retail, edited)
    assert not (tmp_path / "run").exists()
