"""An adapter is evaluated as it was trained: sampled at its trained temperature unless the caller sets one; the
results say how every policy decoded."""

from __future__ import annotations

from pathlib import Path

import pytest

from trace_envs.evaluation.decoding import decoding_label, policy_sampling
from trace_envs.evaluation.harness import evaluate
from trace_envs.evaluation.policies import PolicyEntry, parse_policy
from trace_envs.evaluation.targets import load_target
from trace_envs.training.metadata import AdapterMetadata, save_metadata


def _adapter(folder: Path, temperature: float | None) -> Path:
    config = {} if temperature is None else {"temperature": temperature}
    metadata = AdapterMetadata(capability="c", description="d", env_ids=["trace/order-cancel-v0"], base_model="b",
                               config=config)  # fmt: skip
    save_metadata(folder, metadata)
    return folder


def test_an_adapter_without_a_caller_temperature_samples_at_its_trained_one(tmp_path: Path) -> None:
    warm, cold = _adapter(tmp_path / "warm", 0.8), _adapter(tmp_path / "cold", 1.2)
    entry = PolicyEntry(name="a", spec=f"hf:{tmp_path}@{warm}", kind="adapter")
    assert policy_sampling(entry, None) == {"temperature": 0.8}
    assert policy_sampling(entry, {"max_tokens": 9}) == {"max_tokens": 9, "temperature": 0.8}
    assert policy_sampling(entry, {"temperature": 0.0}) == {"temperature": 0.0}
    routed = PolicyEntry(name="r", spec="routed:x", kind="routed", adapters=[str(warm), str(cold)])
    assert policy_sampling(routed, None) is None  # they disagree: the caller's (greedy)
    agreeing = routed.model_copy(update={"adapters": [str(warm), str(warm)]})
    assert policy_sampling(agreeing, None) == {"temperature": 0.8}
    untrained = PolicyEntry(name="u", spec=f"hf:{tmp_path}@{_adapter(tmp_path / 'none', None)}", kind="adapter")
    assert policy_sampling(untrained, None) is None
    assert policy_sampling(PolicyEntry(name="o", spec="oracle", kind="scripted"), None) is None


def test_the_decoding_label() -> None:
    assert decoding_label(None) == decoding_label({"temperature": 0}) == "greedy"
    assert decoding_label({"temperature": 1.0}) == "sampled (temperature 1)"


@pytest.mark.train
def test_results_name_each_policys_decoding_and_the_adapter_ran_sampled(tmp_path: Path) -> None:
    pytest.importorskip("peft")
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from trace_envs.llm.tiny_model import build_tiny_model

    base = build_tiny_model(tmp_path / "tiny", seed=0)
    lora = get_peft_model(AutoModelForCausalLM.from_pretrained(base), LoraConfig(r=4, target_modules=["q_proj"]))
    lora.save_pretrained(tmp_path / "adapter")
    _adapter(tmp_path / "adapter", 0.7)
    target = load_target("device")
    target = target.model_copy(update={"tasks": target.tasks[:2]})
    policies = [parse_policy(f"base=hf:{base}"), parse_policy(f"tuned=hf:{base}@{tmp_path / 'adapter'}")]
    results = evaluate(target, policies, tmp_path / "out", max_steps=1, sampling={"max_tokens": 4})
    assert results.policy("base").decoding == "greedy"
    assert results.policy("tuned").decoding == "sampled (temperature 0.7)"
    assert results.policy("tuned").sampling == {"max_tokens": 4, "temperature": 0.7}
