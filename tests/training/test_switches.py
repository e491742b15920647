"""GRPO switches on the tiny model: each reaches TRL (or PEFT), and where the code is ours (constant groups
dropped or re-collected, hint prompts swapped back) the loss sees exactly what it should."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from trace_envs.training import TrainConfig, build_run
from trace_envs.training.batches import split_rows

from .conftest import asked_letter

pytestmark = pytest.mark.train

SAY = "The code letter is {}."
MISS = "Hello there."


def _config(env_id: str, **switches: Any) -> TrainConfig:
    base: dict[str, Any] = {
        "env_ids": [env_id],
        "max_steps": 1,
        "num_generations": 2,
        "groups_per_step": 2,
        "max_completion_length": 32,
        "num_seeds": 4,
        "spot_check_share": 0.0,  # random text may say the word env's letter: junk can pay on this test env
    }
    return TrainConfig(**{**base, **switches})


def _record_loss_inputs(trainer: Any) -> list[dict[str, Any]]:
    """Every micro-batch the loss is computed on."""
    seen: list[dict[str, Any]] = []
    compute = trainer._compute_loss

    def spy(model: Any, inputs: dict[str, Any]) -> Any:
        seen.append({k: v.detach().clone() if hasattr(v, "detach") else v for k, v in inputs.items()})
        return compute(model, inputs)

    trainer._compute_loss = spy
    return seen


def _record_group_seeds(run: Any) -> list[list[int]]:
    seeds: list[list[int]] = []
    original = run.tracker.__call__

    def spy(*args: Any, **kwargs: Any) -> list[float]:
        seeds.append([env._seed for env in kwargs["environments"]])
        return original(*args, **kwargs)

    run.trainer.reward_funcs[0] = spy
    return seeds


def _trained_completions(trainer: Any, batches: list[dict[str, Any]]) -> list[str]:
    tokenizer = trainer.processing_class
    texts = []
    for batch in batches:
        for ids, mask in zip(batch["completion_ids"], batch["completion_mask"], strict=True):
            if int(mask.sum()):
                texts.append(tokenizer.decode([int(t) for t, m in zip(ids, mask, strict=True) if m]))
    return texts


@pytest.mark.parametrize("mode", ["count", "drop"])
def test_a_constant_group_is_out_of_the_loss_only_when_dropped(
    tiny_model: Path, word_env_id: str, tmp_path: Path, scripted: Any, mode: str
) -> None:
    run = build_run(_config(word_env_id, constant_groups=mode), str(tiny_model), tmp_path / mode)

    def script(call: int, prompts: list[str]) -> list[str]:
        # group 0: both rollouts right (rewards 1, 1: constant); group 1: one right, one wrong (1, 0)
        return [SAY.format(asked_letter(p)) if i != 3 else MISS for i, p in enumerate(prompts)]

    scripted(run.trainer, script)
    batches = _record_loss_inputs(run.trainer)
    meta = run.run()

    assert len(batches) == 2  # G x K = 4 rollouts in micro-batches of K = 2
    rows = sum(int(b["completion_mask"].sum(dim=1).gt(0).sum()) for b in batches)
    advantages = sorted(
        float(a) for b in batches for a, m in zip(b["advantages"], b["completion_mask"], strict=True) if m.sum()
    )
    trained = _trained_completions(run.trainer, batches)
    assert sum(MISS in t for t in trained) == 1
    if mode == "count":
        assert rows == 4 and advantages.count(0.0) == 2  # the constant group is there, with zero advantage
    else:
        assert rows == 2 and 0.0 not in advantages  # only the informative group reaches the loss
        assert advantages[0] == pytest.approx(-advantages[1])
        kept_tokens = sum(int((b["completion_mask"] * b["tool_mask"]).sum()) for b in batches)
        assert all(int(b["num_items_in_batch"]) == kept_tokens for b in batches)  # nor its normaliser
    assert meta.rollout_budget == 4 and meta.rollouts_collected == 4
    assert meta.identical_reward_groups == 1 and meta.total_groups == 2


@pytest.mark.parametrize("informative_later", [True, False])
def test_resample_recollects_constant_groups_with_new_seeds(
    tiny_model: Path, word_env_id: str, tmp_path: Path, scripted: Any, informative_later: bool
) -> None:
    config = _config(word_env_id, constant_groups="resample", resample_rounds=2, min_informative_groups=0.5)
    run = build_run(config, str(tiny_model), tmp_path / "adapter")
    seeds = _record_group_seeds(run)

    def script(call: int, prompts: list[str]) -> list[str]:
        if call == 0 or not informative_later:
            return [MISS for _ in prompts]  # every group constant (all rewards 0)
        return [SAY.format(asked_letter(prompts[0])), MISS]  # the re-collected group has a spread

    scripted(run.trainer, script)
    batches = _record_loss_inputs(run.trainer)
    meta = run.run()

    fresh = config.first_seed + config.num_seeds
    assert [len(s) for s in seeds] == ([4, 2] if informative_later else [4, 2, 2])  # one group per round
    assert all(len(set(s)) == 1 and s[0] >= fresh for s in seeds[1:])  # new seeds, never the dataset's
    assert len({s[0] for s in seeds[1:]}) == len(seeds) - 1
    trained = _trained_completions(run.trainer, batches)
    if informative_later:  # only the re-collected group, one right and one wrong rollout
        assert len(trained) == 2 and sum(MISS in t for t in trained) == 1
        assert sum(t.startswith("The code letter is ") for t in trained) == 1
    else:
        assert trained == []  # after the last round nothing is informative: the step trains nothing
    assert meta.rollouts_collected == 2 * sum(len(s) // 2 for s in seeds)


def test_hint_rollouts_see_the_hint_and_the_loss_never_does(
    tiny_model: Path, word_env_id: str, tmp_path: Path, scripted: Any
) -> None:
    from trace_envs.training import make_capability_env

    hint = make_capability_env(word_env_id).capability.hint
    assert hint
    run = build_run(_config(word_env_id, hint_share=0.5, groups_per_step=1), str(tiny_model), tmp_path / "hint")
    trainer = run.trainer
    prompts = scripted(trainer, lambda call, ps: [SAY.format(asked_letter(ps[0])), MISS])
    forwards: list[Any] = []
    logps = trainer._get_per_token_logps_and_entropies

    def spy(model: Any, input_ids: Any, *args: Any, **kwargs: Any) -> Any:
        forwards.append(input_ids.detach().clone())
        return logps(model, input_ids, *args, **kwargs)

    trainer._get_per_token_logps_and_entropies = spy
    run.run()

    assert [hint in p for p in prompts[0]] == [True, False]  # 1 of K = 2 rollouts generated with the hint
    assert forwards, "the loss computed no log-probs"
    tokenizer = trainer.processing_class
    texts = [tokenizer.decode(row) for ids in forwards for row in ids]
    assert len(texts) >= 2 and not any(hint in t or "expert_guidance" in t for t in texts)
    base = prompts[0][1]  # the rollout without a hint: its prompt is the base prompt
    assert all(base in t.replace(tokenizer.pad_token, "") for t in texts)


@pytest.mark.parametrize(
    ("preset", "modules"),
    [
        ("paper", {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}),
        ("qkvo", {"q_proj", "k_proj", "v_proj", "o_proj"}),
    ],
)
def test_switches_reach_trl_and_peft(
    tiny_model: Path, word_env_id: str, tmp_path: Path, preset: str, modules: set[str]
) -> None:
    config = _config(
        word_env_id,
        lora={"target_modules": preset},
        scale_rewards="none",
        importance_sampling_level="sequence",
        loss_type="dapo",
    )
    trainer = build_run(config, str(tiny_model), tmp_path / preset).trainer
    assert (trainer.scale_rewards, trainer.importance_sampling_level, trainer.loss_type) == ("none", "sequence", "dapo")
    assert trainer.args.generation_batch_size == 4 and trainer.args.steps_per_generation == 2
    adapted = {n.split(".lora_A")[0].rsplit(".", 1)[-1] for n, _ in trainer.model.named_parameters() if "lora_A" in n}
    assert adapted == modules
    peft_config = trainer.model.peft_config["default"]
    assert (peft_config.r, peft_config.lora_alpha) == (16, 16)


def test_split_rows_keeps_the_loss_the_mean_over_kept_rows() -> None:
    """TRL averages each micro-batch and divides by the accumulation steps; uneven micro-batches are
    re-weighted so that the sum is the mean over all kept rows (the paper's 1/|B|)."""
    import torch

    advantages = torch.tensor([0.3, -1.2, 2.0, 0.5, -0.7])
    batch = {
        "prompt_ids": torch.zeros(5, 3, dtype=torch.long),
        "prompt_mask": torch.ones(5, 3, dtype=torch.long),
        "completion_ids": torch.zeros(5, 4, dtype=torch.long),
        "completion_mask": torch.tensor([[1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 1, 1], [1, 1, 0, 0], [1, 1, 1, 0]]),
        "advantages": advantages,
        "num_items_in_batch": torch.tensor(12),
    }
    filler = {**batch, "completion_mask": torch.zeros(1, 4, dtype=torch.long)}
    for chunks in (2, 3, 4, 7):
        parts = split_rows(batch, chunks, "grpo", filler)
        assert len(parts) == chunks
        # TRL's grpo loss with ratio 1: per micro-batch mean of -A over its rows, divided by the steps
        total = sum(float(-(p["advantages"]).mean()) / chunks for p in parts if int(p["completion_mask"].sum()))
        assert total == pytest.approx(float(-advantages.mean()))
        tokens = batch["completion_mask"].sum(dim=1).float()
        parts = split_rows(batch, chunks, "bnpo", filler)
        total = sum(
            float(-(p["advantages"] * p["completion_mask"].sum(dim=1)).sum() / p["completion_mask"].sum()) / chunks
            for p in parts
            if int(p["completion_mask"].sum())
        )
        assert total == pytest.approx(float(-(advantages * tokens).sum() / tokens.sum()))
