"""``trace-envs demo``: the whole pipeline offline on CPU, on an embedded config, and what it simulates.

Targets: the built-in device scenarios, and tau2 airline/retail tasks on generated databases. The base agent
is scripted with three planted deficits (it stops after the first write, gives up on a blocked call, does
date arithmetic in its head); the offline probes are the analyst; the catalogue generator reuses shipped
envs through the real gates; a tiny random model (or, with ``--model smollm2-135m-instruct``, the real
SmolLM2 built offline by ``make-model``) takes a couple of GRPO steps per capability and is the trained agent
the router and the evaluation use; the router, the evaluation and the report are the real ones.
"""

from __future__ import annotations

from .config import PipelineConfig, parse_config

DEMO_YAML = """\
# trace-envs demo: the TRACE pipeline offline on CPU (a few minutes on 2 cores)
targets: [device, retail, airline]
data: null                 # generated airline/retail databases and tasks
seed: 0
rollout:
  policy: flawed:multi_step_task_completion,permission_error_recovery,datetime_reasoning
  concurrency: 4
analyze:
  analyst: probes
  runs: 2
synthesize:
  generator: catalogue
  rounds: 1
  seeds: 8
  fuzz_examples: 10
  jobs: 1
train:
  model: tiny
  max_steps: 2
  num_generations: 2
  per_device_train_batch_size: 2
  max_completion_length: 48
  num_seeds: 8
  learning_rate: 0.001
evaluate:
  policies: [base, oracle, model, routed]
  max_tasks: 9              # per domain: every generated tau2 task, the first 9 device scenarios
  max_steps: 10             # enough for every reference solution; caps the tiny model's episodes
  max_tokens: 24
  concurrency: 4
simulated:
  - "This is the offline demo. Simulated: the base agent is scripted (the reference solution with three planted
    deficits: it stops after the first write, gives up on a call that a phone setting blocks, and does date
    arithmetic in its head); tau2 airline/retail are tasks on generated databases with a scripted customer,
    not tau2-bench; the analyst is the offline probes; synthesis used the catalogue generator (shipped envs
    through the real gates, no model asked); training was a couple of GRPO steps of a tiny random model, so
    its scores (and the router's choices) mean nothing."
  - "With an API key and a GPU the same pipeline runs the real recipe: the base agent is a model served by
    vLLM (rollout.policy: openai:http://host:8000/v1#Qwen/Qwen3-8B) on tau2-bench's tasks with a model-played
    customer (data, rollout.user_model), an LLM analyst (analyze.analyst: anthropic:claude-sonnet-4-6),
    an LLM generation agent (synthesize.generator), 40 GRPO iterations per capability on the base model, and
    the same router, evaluation and report. See docs/tutorial.md for the cost and time of each stage."
"""


MODEL_NOTES = {
    "tiny": "a tiny random model, so its scores (and the router's choices) mean nothing",
    "smollm2-135m-instruct": "SmolLM2-135M-Instruct (a real pretrained model, built offline by make-model), "
    "which is also the model the router and the 'model' and 'routed' policies use; two GRPO steps teach it "
    "little, so its scores show the plumbing on a real model, not TRACE's gain",
}
"""What the demo's note says about each base model it can train."""


def demo_config(model: str = "tiny") -> PipelineConfig:
    """The demo's config (the embedded YAML above), training ``model``: ``tiny`` or a packaged pretrained model."""
    import yaml

    if model not in MODEL_NOTES:
        raise ValueError(f"the demo trains one of {', '.join(MODEL_NOTES)}, not {model!r}")
    data = yaml.safe_load(DEMO_YAML)
    data["train"]["model"] = model
    data["simulated"][0] = data["simulated"][0].replace(MODEL_NOTES["tiny"], MODEL_NOTES[model])
    return parse_config(data, "the embedded demo config")
