"""GRPO on capability envs with a tiny offline model: learning signal, group seeds, loss masking."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from trace_envs.training import TrainConfig, build_run, load_metadata

pytestmark = pytest.mark.train


def _lora_weights(model: Any) -> dict[str, Any]:
    return {n: p.detach().clone() for n, p in model.named_parameters() if "lora_" in n}


def test_grpo_steps_change_the_adapter_and_log_rewards(tiny_model: Path, word_env_id: str, tmp_path: Path) -> None:
    config = TrainConfig(
        env_ids=[word_env_id],
        max_steps=2,
        num_generations=4,
        per_device_train_batch_size=4,
        max_completion_length=32,
        num_seeds=8,
        learning_rate=1e-3,
        router_example="policy",
        spot_check_share=0.0,  # random text may say its letter: junk can pay on this test env
    )
    run = build_run(config, str(tiny_model), tmp_path / "adapter")
    groups: list[list[int]] = []
    original = run.tracker.__call__

    def spy(*args: Any, **kwargs: Any) -> list[float]:
        groups.append([env._seed for env in kwargs["environments"]])
        return original(*args, **kwargs)

    run.trainer.reward_funcs[0] = spy
    before = _lora_weights(run.trainer.model)
    meta = run.run()
    after = _lora_weights(run.trainer.model)

    # every group of K rollouts started from one seed, and different groups from different seeds
    assert len(groups) == 2
    assert all(len(set(seeds)) == 1 for seeds in groups)
    assert groups[0][0] != groups[1][0]
    steps = [e for e in meta.curve if "loss" in e]
    assert [e["step"] for e in steps] == [1, 2]
    column = f"rewards/{run.classes[word_env_id].__name__}/mean"  # the env's get_reward, named after the class
    assert all(0.0 <= e[column] <= 1.0 for e in steps)
    assert all(e["reward"] == e[column] for e in steps)  # the verifier reward is the whole reward
    assert all("trace/identical_reward_groups_frac" in e for e in steps)
    assert meta.total_groups == 2
    assert meta.identical_reward_groups == sum(e["frac_reward_zero_std"] for e in steps)
    assert any(e["reward_std"] > 0 for e in steps), "no group had a reward spread: no learning signal"
    changed = [n for n in before if not before[n].equal(after[n])]
    assert changed, "GRPO steps left every LoRA weight unchanged"
    saved = load_metadata(tmp_path / "adapter")
    assert saved.status == "complete" and saved.capability == "code_letter"
    assert saved.example is not None and saved.example.reward == 1.0 and saved.example.source == "policy"
    assert saved.example.transcript.startswith("user: Please tell me the code letter")


def test_tool_results_and_user_replies_are_masked_out_of_the_loss(tiny_model: Path, tmp_path: Path) -> None:
    """Scripted generations (a user question, then a final message) through TRL's real tool loop."""
    env_id = "trace/order-cancel-v0"
    config = TrainConfig(
        env_ids=[env_id],
        max_steps=1,
        num_generations=2,
        per_device_train_batch_size=2,
        max_completion_length=256,
        num_seeds=4,
    )
    run = build_run(config, str(tiny_model), tmp_path / "adapter")
    trainer = run.trainer
    tokenizer = trainer.processing_class
    question = "Could you confirm your order number?"
    ask = '<tool_call>\n{"name": "send_message_to_user", "arguments": {"message": "' + question + '"}}\n</tool_call>'
    final = "Thanks, I have noted it."
    calls: list[int] = []

    def scripted(prompt_ids: list[list[int]], *args: Any, **kwargs: Any) -> tuple[list[list[int]], None]:
        text = ask if not calls else final
        calls.append(len(prompt_ids))
        ids = tokenizer(text + "<|im_end|>", add_special_tokens=False)["input_ids"]
        return [list(ids) for _ in prompt_ids], None

    trainer._generate_single_turn = scripted
    captured: list[dict[str, Any]] = []
    generate = trainer._generate_and_score_completions

    def capture(inputs: Any) -> dict[str, Any]:
        output = generate(inputs)
        captured.append(output)
        return output

    trainer._generate_and_score_completions = capture
    run.run()

    assert calls == [2, 2]  # one turn, then one turn after the tool (user) result
    output = captured[0]
    envs = trainer.environments
    for row in range(2):
        mask = output["tool_mask"][row].tolist()
        ids = output["completion_ids"][row].tolist()
        keep = output["completion_mask"][row].tolist()
        trained = tokenizer.decode([t for t, m, k in zip(ids, mask, keep, strict=True) if m and k])
        masked = tokenizer.decode([t for t, m, k in zip(ids, mask, keep, strict=True) if not m and k])
        reply = [m["content"] for m in envs[row]._env.messages if m["role"] == "user"][1]
        assert reply and reply in masked  # the user's reply came back as a tool result, masked out
        assert "<tool_response>" in masked and "<tool_response>" not in trained
        assert reply not in trained
        assert question in trained and final in trained  # the model's own turns are trained on


def test_one_adapter_on_a_uniform_mixture_of_envs(tiny_model: Path, word_env_id: str, tmp_path: Path) -> None:
    env_ids = [word_env_id, "trace/order-cancel-v0"]
    config = TrainConfig(
        env_ids=env_ids,
        max_steps=2,
        num_generations=2,
        per_device_train_batch_size=2,
        max_completion_length=24,
        num_seeds=4,
        spot_check_share=0.0,  # random text may say the word env's letter
    )
    run = build_run(config, str(tiny_model), tmp_path / "mixture")
    seen: list[list[str]] = []
    original = run.tracker.__call__

    def spy(*args: Any, **kwargs: Any) -> list[float]:
        seen.append([env.env_id for env in kwargs["environments"]])
        return original(*args, **kwargs)

    run.trainer.reward_funcs[0] = spy
    meta = run.run()
    assert meta.capability == "multi_capability" and meta.env_ids == env_ids
    assert all(len(set(group)) == 1 for group in seen)  # a group never mixes envs
    assert {group[0] for group in seen} == set(env_ids)  # both envs were sampled
    assert load_metadata(tmp_path / "mixture").status == "complete"


def _render_turn(message: dict[str, Any]) -> str:
    """An assistant message as the text a Qwen3 model would generate for it."""
    import json

    if not message.get("tool_calls"):
        return str(message["content"])
    calls = [
        json.dumps({"name": c["function"]["name"], "arguments": c["function"]["arguments"]}, ensure_ascii=False)
        for c in message["tool_calls"]
    ]
    return "\n".join(f"<tool_call>\n{call}\n</tool_call>" for call in calls)


@pytest.mark.parametrize("env_id", ["trace/order-cancel-v0", "trace/tool-precision-v0", "trace/order-cancel-boxed-v0"])
def test_oracle_turns_through_trls_tool_loop_score_one(
    tiny_model: Path, tmp_path: Path, env_id: str, request: pytest.FixtureRequest
) -> None:
    """The reference solution, generated turn by turn, goes through TRL's parsing and tool calling intact
    (tau2 prompts are ~6.5k tokens in the tiny tokenizer: within the tiny model's context). In the boxed twin
    the box executes the tool calls: the order record comes back into the next prompt, and the cancellation
    the verifier checks happened in the box's state."""
    import gymnasium as gym

    from trace_envs.registry import box_installed_env
    from trace_envs.training import oracle_conversation, trl_environment

    if "-boxed-" in env_id:
        assert box_installed_env("trace/order-cancel-v0") == env_id
        request.addfinalizer(lambda: gym.registry.pop(env_id, None))
    seed = 3
    turns = [m for m in oracle_conversation(trl_environment(env_id), seed)["messages"] if m["role"] == "assistant"]
    config = TrainConfig(
        env_ids=[env_id],
        max_steps=1,
        num_generations=2,
        per_device_train_batch_size=2,
        max_completion_length=4096,
        num_seeds=1,
        first_seed=seed,
    )
    run = build_run(config, str(tiny_model), tmp_path / "adapter")
    tokenizer = run.trainer.processing_class
    calls: list[int] = []
    prompts: list[str] = []

    def scripted(prompt_ids: list[list[int]], *args: Any, **kwargs: Any) -> tuple[list[list[int]], None]:
        text = _render_turn(turns[len(calls)]) + "<|im_end|>"
        calls.append(len(prompt_ids))
        prompts.append(tokenizer.decode(prompt_ids[0]))
        return [tokenizer(text, add_special_tokens=False)["input_ids"] for _ in prompt_ids], None

    run.trainer._generate_single_turn = scripted
    meta = run.run()
    assert len(calls) == len(turns)
    if env_id.startswith("trace/order-cancel"):  # the env ran the lookup: its record is in the next prompt
        assert '"status"' not in prompts[0] and '"status"' in prompts[1]
    step = next(e for e in meta.curve if "loss" in e)
    assert step["reward"] == 1.0
    assert step["tools/failure_frequency"] == 0.0


def test_grpo_renders_tools_for_a_template_without_them(tiny_model: Path, word_env_id: str, tmp_path: Path) -> None:
    """A model folder whose ChatML template ignores tools trains with the template the HF client serves it with:
    TRL's Qwen3 template (its training variant marks the assistant's tokens), so GRPO prompts show the tools."""
    import shutil

    from trl.chat_template_utils import qwen3_chat_template

    folder = tmp_path / "smol-like"
    shutil.copytree(tiny_model, folder)
    chatml = (
        "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\n' + m['content'] + '<|im_end|>\n' }}{% endfor %}"
        "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
    )
    (folder / "chat_template.jinja").write_text(chatml, encoding="utf-8")
    config = TrainConfig(
        env_ids=[word_env_id],
        max_steps=1,
        num_generations=2,
        per_device_train_batch_size=2,
        num_seeds=2,
        spot_check_share=0.0,  # random text may say its letter: junk can pay on this test env
    )
    run = build_run(config, str(folder), tmp_path / "adapter")
    tokenizer = run.trainer.processing_class
    assert tokenizer.chat_template == qwen3_chat_template
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "hi"}], tools=run.trainer.tools, add_generation_prompt=True, tokenize=False
    )
    assert "<tools>" in prompt
