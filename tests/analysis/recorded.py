"""Recorded analyst answers for the fake-endpoint tests, and the script that (re)records them.

The store is ``trace/order-cancel-v0`` seeds 0-7 under ``oracle`` and ``flawed:precondition_verification``.
The answers are what a careful analyst replies: a discovery dictionary (with a duplicate entry to be
merged) and, per labelling pass and trajectory, a JSON label table. Re-record with
``python -m tests.analysis.recorded`` (run from the repository root).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from trace_envs.rollout.store import EpisodeRecord

DATA = Path(__file__).parent / "data" / "recorded_analyst.json"
ENV_ID = "trace/order-cancel-v0"
POLICIES = ("oracle", "flawed:precondition_verification")
SEEDS = range(8)
RUNS = 3

DISCOVERY_ANSWER = """Here is the dictionary.
```json
{"capabilities": [
  {"name": "precondition_verification", "description": "Looks the order up and checks its status against the policy before cancelling; lacking when it cancels without checking."},
  {"name": "Precondition Verification", "description": "Duplicate of the above."},
  {"name": "order_status_communication", "description": "Tells the user the order's actual status and outcome in plain words; lacking when the final message misstates it."}
]}
```"""


def store_records() -> list[EpisodeRecord]:
    """The trajectories the recording is for (scripted, so identical on every machine)."""
    import gymnasium as gym

    import trace_envs  # noqa: F401
    from trace_envs.rollout import make_policy, run_episode

    env = gym.make(ENV_ID, disable_env_checker=True)
    return [
        run_episode(env, make_policy(policy, seed=seed), env_id=ENV_ID, seed=seed)
        for policy in POLICIES
        for seed in SEEDS
    ]


def record() -> dict[str, Any]:
    """Answers for every (pass, trajectory): the probes' precondition label, and a communication label
    that a noisy pass 2 marks LACKING on failures (so its selection frequency is 1 of 3)."""
    from trace_envs.analysis import episode_id, probe_labels

    labels: dict[str, str] = {}
    for run in range(RUNS):
        for record in store_records():
            probe = probe_labels(record)["precondition_verification"]
            communication = "LACKING" if (run == 2 and not record.success) else "PRESENT"
            answer = {
                "labels": [
                    {
                        "capability": "precondition_verification",
                        "label": probe.label.value,
                        "rationale": probe.rationale,
                    },
                    {"capability": "order_status_communication", "label": communication, "rationale": "final message"},
                ]
            }
            labels[f"{run}|{episode_id(record)}"] = json.dumps(answer)
    return {"discovery": DISCOVERY_ANSWER, "labels": labels}


_EPISODE = re.compile(r"Trajectory (ep-[0-9a-f]{12})")
_PASS = re.compile(r"labelling pass (\d+)")


def answer_for(prompt: str, recorded: dict[str, Any]) -> str:
    """The recorded answer to a discovery or labelling prompt."""
    if "propose a dictionary" in prompt:
        return str(recorded["discovery"])
    episode = _EPISODE.search(prompt)
    run = _PASS.search(prompt)
    if episode is None or run is None:
        raise KeyError("not a labelling prompt")
    return str(recorded["labels"][f"{run.group(1)}|{episode.group(1)}"])


if __name__ == "__main__":
    DATA.parent.mkdir(parents=True, exist_ok=True)
    DATA.write_text(json.dumps(record(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {DATA}")
