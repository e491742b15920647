#!/usr/bin/env bash
# GPU smoke of GRPO training (docs/training-and-routing.md, "Several processes"): on one CUDA GPU, from a fresh
# Python with pip (PyPI reachable, nothing else needed), install trace-envs with its [train,cli] extras, build
# the tiny model offline, and train the 2-step smoke (trace/order-cancel-v0, G 2 x K 2) twice: in one process
# (Python API) and under `torchrun --nproc_per_node 1`. Prints one JSON line per run and PASS or FAIL.
#
#   bash benchmarks/gpu_smoke.sh            # from the repository root; WORK=DIR keeps the files there
#
# PASS: both runs end complete with 2 steps and the rollouts of the budget (8), on the GPU (CUDA memory used),
# with the same seeds per step, and the torchrun run records world_size 1.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
WORK=${WORK:-$(mktemp -d /tmp/trace-gpu-smoke.XXXXXX)}
mkdir -p "$WORK"
echo "== work folder $WORK"

if "$PYTHON" -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then
  # a CUDA torch is already here (a GPU image): keep this Python's packages and install only the checkout
  # (without dependencies, so its env entry points register; hatchling must be importable)
  echo "== using $PYTHON and its CUDA torch as installed"
  "$PYTHON" -m pip install -q --no-deps --no-build-isolation .
else
  # a fresh machine: a venv that sees the system's packages, and the package with its extras from PyPI
  "$PYTHON" -m venv --system-site-packages "$WORK/venv"
  PYTHON="$WORK/venv/bin/python"
  start=$SECONDS
  "$PYTHON" -m pip install -q -e '.[train,cli]'
  echo "== installed in $((SECONDS - start)) s"
fi
"$PYTHON" - <<'EOF'
import torch, transformers, trl
assert torch.cuda.is_available(), "torch sees no CUDA GPU (is the installed wheel a CPU build?)"
print(f"== torch {torch.__version__} (CUDA {torch.version.cuda}), transformers {transformers.__version__}, "
      f"trl {trl.__version__}, GPU {torch.cuda.get_device_name(0)}")
EOF

export TRL_EXPERIMENTAL_SILENCE=1
"$PYTHON" -m trace_envs.cli make-tiny-model "$WORK/tiny"
printf 'save_steps: 1\nnum_seeds: 8\nmax_completion_length: 48\nnum_generations: 2\ngroups_per_step: 2\n' \
  > "$WORK/grpo.yaml"

start=$SECONDS
"$PYTHON" - "$WORK" <<'EOF'
import json, sys, time, torch
from trace_envs.training import load_config, train
work = sys.argv[1]
config = load_config(f"{work}/grpo.yaml", env_ids=["trace/order-cancel-v0"], max_steps=2)
begin = time.perf_counter()
meta = train(config, f"{work}/tiny", f"{work}/one")
print(json.dumps({"run": "one process", "seconds": round(time.perf_counter() - begin, 1),
                  "cuda_max_memory_mib": round(torch.cuda.max_memory_allocated() / 2**20, 1)}))
if torch.cuda.max_memory_allocated() == 0:
    sys.exit("FAIL: the one-process run allocated no CUDA memory (it trained on the CPU)")
EOF
echo "== one process: $((SECONDS - start)) s"

start=$SECONDS
"$PYTHON" -m torch.distributed.run --standalone --nproc_per_node 1 -m trace_envs.cli train \
  --env trace/order-cancel-v0 --model "$WORK/tiny" --config "$WORK/grpo.yaml" --max-steps 2 --out "$WORK/torchrun"
echo "== torchrun --nproc_per_node 1: $((SECONDS - start)) s"

"$PYTHON" - "$WORK" <<'EOF'
import json, sys
from trace_envs.training import load_metadata
work = sys.argv[1]
one, run = load_metadata(f"{work}/one"), load_metadata(f"{work}/torchrun")
problems = []
for name, meta, world in (("one process", one, 1), ("torchrun", run, 1)):
    print(json.dumps({"run": name, "status": meta.status, "steps": meta.steps_done, "world_size": meta.world_size,
                      "rollouts_collected": meta.rollouts_collected, "budget": meta.rollout_budget,
                      "seeds_per_step": [g.seeds for g in meta.step_groups],
                      "reward_per_step": [e.get("reward") for e in meta.curve],
                      "step_time_s": [e.get("step_time") for e in meta.curve]}))
    if (meta.status, meta.steps_done, meta.world_size) != ("complete", 2, world):
        problems.append(f"{name}: status {meta.status}, {meta.steps_done} steps, world_size {meta.world_size}")
    if meta.rollouts_collected != meta.rollout_budget or meta.rollout_budget != 8:
        problems.append(f"{name}: {meta.rollouts_collected} rollouts collected, budget {meta.rollout_budget}")
if one.step_groups != run.step_groups:
    problems.append("the two runs trained different seeds")
print("FAIL: " + "; ".join(problems) if problems else "PASS: GPU smoke (one process, torchrun with 1 process)")
sys.exit(1 if problems else 0)
EOF
