"""``TraceGRPOTrainer``: TRL's ``GRPOTrainer`` plus the two GRPO details of TRACE that TRL has no option for.

- **Constant-reward groups** (``constant_groups``): ``count`` leaves TRL as it is (zero advantage, but the
  rows stay in the loss's normaliser); ``drop`` removes them from the batch before the loss; ``resample``
  also re-collects replacement groups with new seeds, up to ``resample_rounds`` times, until
  ``min_informative_groups`` of the G groups have a reward spread (DAPO-style dynamic sampling, as the
  authors' trainer does). Both replace ``_prepare_inputs``, the method that turns one generation batch into
  the step's micro-batches.
- **Hint prompts** (``hint_share``): ``_generate`` puts the capability's hint into the system prompt of
  the first ``round(hint_share x K)`` rollouts of each group, generates, and returns the *base* prompt's
  token ids for those rows, so the log-probs of the loss (and of the reference, if any) are computed on the
  base prompt, like the authors' ``_swap_hint_prompts``.

TRL internals relied on (pinned to trl 1.16.x in pyproject): ``_generate`` and its return tuple,
``_tokenize_prompts``, ``_calculate_rewards`` (rewards of all processes), ``reward_weights``,
``_generate_and_score_completions``'s output fields (see :mod:`.batches`), ``environments``, ``_step``,
``_buffered_inputs``, ``_metrics``, and ``args.steps_per_generation``.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

import torch
from accelerate.utils import gather_object
from trl.trainer.grpo_trainer import GRPOTrainer
from trl.trainer.utils import shuffle_sequence_dict

from trace_envs.training.hints import with_hint

from .batches import Batch, check_supported, constant_groups, join_batches, masked_row, select_rows, split_rows
from .metadata import StepGroups

RowFactory = Callable[[str, int], dict[str, Any]]
"""``row(environment, seed)``: the dataset row of a fresh seed for one environment."""


def fresh_seed(base: int, slot: int, processes: int, rank: int) -> int:
    """The seed of re-collected group ``slot`` = (step x rounds + round) x (G / W) + j on process ``rank``: every
    (step, round, j, rank) gets its own seed, and a run resumed on another number of processes never reuses one,
    since it is ``base + (step x rounds + round) x G + j x W + rank`` with ``j x W + rank < G``."""
    return base + slot * processes + rank


class TraceGRPOTrainer(GRPOTrainer):  # type: ignore[misc, unused-ignore]
    """GRPOTrainer with ``constant_groups`` drop/resample and hint-prompt rollouts (see the module docstring)."""

    def __init__(
        self,
        *args: Any,
        constant_groups: str = "count",
        resample_rounds: int = 3,
        min_informative_groups: float = 0.5,
        hinted_per_group: int = 0,
        fresh_row: RowFactory | None = None,
        fresh_seed_base: int = 0,
        **kwargs: Any,
    ):
        super().__init__(*args, **kwargs)
        if constant_groups == "resample" and fresh_row is None:
            raise ValueError("constant_groups 'resample' needs fresh_row to build rows for new seeds")
        self.constant_groups = constant_groups
        self.resample_rounds = resample_rounds
        self.min_informative_groups = min_informative_groups
        self.hinted_per_group = hinted_per_group
        self.fresh_row = fresh_row
        self.fresh_seed_base = fresh_seed_base
        self._rewards_seen: torch.Tensor | None = None
        self.step_groups: list[StepGroups] = []
        """Every training step's groups in all processes (seeds, constant ones): the run's world totals."""

    # ----- hint prompts ------------------------------------------------------------------------------
    def _hint_of(self, index: int) -> str | None:
        if not self.hinted_per_group or index % self.num_generations >= self.hinted_per_group:
            return None
        environment = self.environments[index] if self.environments else None
        capability = getattr(getattr(environment, "_env", None), "capability", None)
        return getattr(capability, "hint", None)

    def _generate(self, prompts: list[Any]) -> Any:
        """Generate from hint prompts where a rollout gets one, and hand back the base prompts' token ids."""
        hints = [self._hint_of(i) for i in range(len(prompts))] if self.model.training else []
        if not any(hints):
            return super()._generate(prompts)
        shown = copy.deepcopy(prompts)
        for prompt, hint in zip(shown, hints, strict=True):
            if hint:
                if prompt[0].get("role") != "system":
                    raise ValueError("hint prompts need a system message first in every dataset prompt")
                prompt[0] = {**prompt[0], "content": with_hint(prompt[0]["content"], hint)}
        result = list(super()._generate(shown))
        base_ids, _, _ = self._tokenize_prompts(prompts)
        result[0] = [
            list(base) if hint else list(ids) for ids, base, hint in zip(result[0], base_ids, hints, strict=True)
        ]
        self._metrics["train" if self.model.training else "eval"]["trace/hinted_rollouts_frac"].append(
            sum(map(bool, hints)) / len(hints)
        )
        return tuple(result)

    # ----- constant-reward groups --------------------------------------------------------------------
    def _calculate_rewards(self, inputs: Any, prompts: Any, completions: Any, completion_ids_list: Any) -> Any:
        rewards = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        weights = self.reward_weights.to(rewards.device).unsqueeze(0)
        self._rewards_seen = (rewards * weights).nansum(dim=1).detach().cpu()
        if self.model.training:
            self._record_groups(inputs)
        return rewards

    def _record_groups(self, inputs: list[dict[str, Any]]) -> None:
        """Add the groups just scored in all processes to the step's record: seeds gathered in rank order (the
        order of TRL's gathered rewards), and how many have constant rewards."""
        k = self.num_generations
        seeds = gather_object([int(row["seed"]) for row in inputs[::k]])
        step = int(self.state.global_step) + 1
        if not self.step_groups or self.step_groups[-1].step != step:
            self.step_groups.append(StepGroups(step=step))
        record = self.step_groups[-1]
        record.seeds.extend(int(seed) for seed in seeds)
        record.identical += (
            sum(constant_groups(self._rewards_seen.tolist(), k)) if self._rewards_seen is not None else 0
        )

    def _scored(self, rows: list[dict[str, Any]]) -> tuple[Batch, list[bool]]:
        """Generate and score ``rows``; the local batch and, per local group, whether its rewards are constant."""
        batch = self._generate_and_score_completions(rows)
        assert self._rewards_seen is not None
        local = len(rows)
        start = self.accelerator.process_index * local
        flags = constant_groups(self._rewards_seen[start : start + local].tolist(), self.num_generations)
        return batch, flags

    def _global_count(self, value: int, reduction: str) -> int:
        tensor = torch.tensor([value], device=self.accelerator.device)
        return int(self.accelerator.reduce(tensor, reduction=reduction).item())

    def _fresh_rows(self, environments: list[str], round_index: int, groups: int) -> list[dict[str, Any]]:
        """K copies of one new row per group, seeds beyond the dataset's: unique per step, round, group and process,
        whatever the number of processes (``groups`` is G / W, so the seed is base + (step, round) x G + j x W + rank)."""
        assert self.fresh_row is not None
        k, processes = self.num_generations, self.accelerator.num_processes
        rows: list[dict[str, Any]] = []
        for j, environment in enumerate(environments):
            slot = (self.state.global_step * self.resample_rounds + round_index) * groups + j
            seed = fresh_seed(self.fresh_seed_base, slot, processes, self.accelerator.process_index)
            row = self.fresh_row(environment, seed)
            rows.extend(dict(row) for _ in range(k))
        return rows

    def _collect(self, generation_batch: list[dict[str, Any]]) -> Batch:
        """One step's batch without constant-reward groups (re-collected first under ``resample``)."""
        k = self.num_generations
        batch, flags = self._scored(generation_batch)
        check_supported(batch)
        filler = masked_row(batch)
        groups = len(flags)
        envs = [str(generation_batch[g * k].get("environment", "")) for g in range(groups)]
        keep = [g for g, constant in enumerate(flags) if not constant]
        kept = select_rows(batch, [g * k + i for g in keep for i in range(k)])
        informative, collected, rounds = len(keep), groups, 0
        if self.constant_groups == "resample":
            processes = self.accelerator.num_processes
            target = math.ceil(self.min_informative_groups * groups * processes)  # of the world's G groups
            dropped = [envs[g] for g, constant in enumerate(flags) if constant] or envs
            while rounds < self.resample_rounds:
                # every process re-collects the same share of the world's shortfall, so TRL's collective calls
                # stay in step
                missing = max(0, target - self._global_count(informative, "sum"))
                want = math.ceil(missing / processes)
                if want == 0:
                    break
                again = [dropped[j % len(dropped)] for j in range(want)]
                more, more_flags = self._scored(self._fresh_rows(again, rounds, groups))
                rounds += 1
                collected += want
                for g, constant in enumerate(more_flags):
                    if constant or informative >= groups:
                        continue
                    rows = select_rows(more, range(g * k, (g + 1) * k))
                    kept = rows if informative == 0 else join_batches(kept, rows, self._pad_id)
                    informative += 1
        mask = kept["completion_mask"] * kept["tool_mask"] if "tool_mask" in kept else kept["completion_mask"]
        kept["num_items_in_batch"] = self.accelerator.gather(mask.sum().reshape(1)).sum()
        metrics = self._metrics["train"]
        metrics["trace/kept_groups_frac"].append(informative / groups)
        metrics["trace/collected_groups"].append(float(collected))
        metrics["trace/resample_rounds"].append(float(rounds))
        self._filler = filler
        return kept

    @property
    def _pad_id(self) -> int:
        return int(self._tokenizer.pad_token_id)

    def _prepare_inputs(self, generation_batch: Any) -> Any:
        """TRL's buffering of one generation batch into the step's micro-batches, with constant-reward groups
        dropped (and re-collected) first; ``count`` and evaluation are TRL's own code path."""
        if self.constant_groups == "count" or not self.model.training:
            return super()._prepare_inputs(generation_batch)
        steps = int(self.args.steps_per_generation)
        buffered: list[Batch] | None = getattr(self, "_buffered_inputs", None)
        if self._step % (steps * self.num_iterations) == 0 or buffered is None:
            kept = self._collect(generation_batch)
            if kept["advantages"].numel():
                buffered = split_rows(shuffle_sequence_dict(kept), steps, self.loss_type, self._filler)
            else:  # every group was constant: the step trains nothing
                buffered = [dict(self._filler) for _ in range(steps)]
            self._buffered_inputs = buffered
        return buffered[self._step % steps]
