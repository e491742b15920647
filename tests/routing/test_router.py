"""The label-logit router: prompt, single-token labels, the argmax, and applying the chosen adapter."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from trace_envs.routing import BASE_ADAPTER, CapabilityCard, LabelTokenError, Router, vllm_lora_modules
from trace_envs.routing.adapters import activate, adapter_names, load_with_adapters

pytestmark = pytest.mark.train

TASK = "Hi, I'm Ava Lee. Please cancel my order #W1234567, the desk lamp."


def _router(tiny_model: Path, adapters: list[Path]) -> Router:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    cards = [CapabilityCard.from_adapter(a) for a in adapters]
    model = AutoModelForCausalLM.from_pretrained(str(tiny_model)).eval()
    return Router(model, AutoTokenizer.from_pretrained(str(tiny_model)), cards)


def test_prompt_lists_each_capability_with_its_label_and_example(tiny_model: Path, adapters: list[Path]) -> None:
    router = _router(tiny_model, adapters)
    prompt = router.prompt(TASK)
    assert router.all_labels == ["A", "B", "C"]
    assert TASK in prompt
    for label, card in zip(router.labels, router.cards, strict=True):
        assert f'<skill label="{label}">' in prompt
        assert card.description in prompt and card.example in prompt
    assert '<skill label="C">' in prompt and "Name: none" in prompt
    router.max_example_chars = 8
    short = router.prompt(TASK)
    assert router.cards[0].example not in short and router.cards[0].example[:8] + "\n[…]" in short


def test_decision_is_the_highest_label_logit_of_a_hand_computed_forward_pass(
    tiny_model: Path, adapters: list[Path]
) -> None:
    router = _router(tiny_model, adapters)
    tokenizer, model = router.tokenizer, router.model
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": router.prompt(TASK)}],
        tokenize=False,
        add_generation_prompt=True,
        enable_thinking=False,
    )
    ids = torch.tensor([tokenizer(text, add_special_tokens=False)["input_ids"]])
    with torch.no_grad():
        last = model(input_ids=ids).logits[0, -1]
    label_ids = tokenizer.convert_tokens_to_ids(["A", "B", "C"])
    expected = {label: float(last[i]) for label, i in zip("ABC", label_ids, strict=True)}
    decision = router.route(TASK)
    assert decision.logits == pytest.approx(expected, abs=1e-5)
    assert decision.label == max(expected, key=expected.__getitem__)
    names = {"A": "precondition_verification", "B": "datetime_reasoning", "C": None}
    assert decision.capability == names[decision.label]
    batch = router.route_batch([TASK, "What day is it 3 days after 2024-02-27?", TASK])
    assert batch[0].logits == pytest.approx(decision.logits, abs=1e-4)
    assert batch[2].label == decision.label


class _FixedLogits(torch.nn.Module):
    """A stand-in model whose next-token logits are fixed, to check which label wins."""

    def __init__(self, vocab: int, favour: dict[int, float]):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))
        self.logits = torch.zeros(vocab)
        for token, value in favour.items():
            self.logits[token] = value

    def forward(self, input_ids: torch.Tensor, **_: Any) -> SimpleNamespace:
        return SimpleNamespace(logits=self.logits.expand(input_ids.shape[0], input_ids.shape[1], -1).clone())


@pytest.mark.parametrize(
    ("winner", "capability"), [("A", "precondition_verification"), ("B", "datetime_reasoning"), ("C", None)]
)
def test_each_label_wins_when_its_logit_is_highest(
    tiny_model: Path, adapters: list[Path], winner: str, capability: str | None
) -> None:
    router = _router(tiny_model, adapters)
    tok = router.tokenizer
    favour = {tok.convert_tokens_to_ids(label): 1.0 for label in "ABC"}
    favour[tok.convert_tokens_to_ids(winner)] = 2.0
    favour[tok.convert_tokens_to_ids("Z")] = 9.0  # not a label: ignored
    router.model = _FixedLogits(len(tok), favour)
    decision = router.route(TASK)
    assert decision.label == winner and decision.capability == capability
    assert decision.adapter_name == (capability or BASE_ADAPTER)


def test_multi_token_labels_are_a_clear_error(tiny_model: Path, adapters: list[Path]) -> None:
    router = _router(tiny_model, adapters)
    router.labels = ["A", "Zebra-42"]
    with pytest.raises(LabelTokenError, match="Zebra-42"):
        router.route(TASK)


def test_chosen_adapter_is_applied_with_peft(tiny_model: Path, adapters: list[Path]) -> None:
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    cards = [CapabilityCard.from_adapter(a) for a in adapters]
    model, tokenizer = load_with_adapters(tiny_model, cards)
    router = Router(model, tokenizer, cards)
    ids = tokenizer(["Please cancel my order."], return_tensors="pt")["input_ids"]

    def single(adapter: Path | None) -> torch.Tensor:
        base = AutoModelForCausalLM.from_pretrained(str(tiny_model)).eval()
        ref = base if adapter is None else PeftModel.from_pretrained(base, str(adapter)).eval()
        with torch.no_grad():
            return ref(input_ids=ids).logits

    decisions = []
    for card, adapter in zip(cards, adapters, strict=True):
        decision = router.route(TASK).model_copy(update={"capability": card.name, "adapter_path": str(adapter)})
        activate(model, decision)
        assert model.active_adapter == card.name
        with torch.no_grad():
            assert torch.allclose(model(input_ids=ids).logits, single(adapter), atol=1e-5)
        decisions.append(decision)
    none = decisions[0].model_copy(update={"capability": None, "adapter_path": None})
    activate(model, none)
    with torch.no_grad():
        assert torch.allclose(model(input_ids=ids).logits, single(None), atol=1e-5)
    # routing itself always runs the frozen base model, whichever adapter is active
    activate(model, decisions[1])
    assert router.route(TASK).logits == pytest.approx(_router(tiny_model, adapters).route(TASK).logits, abs=1e-4)
    # per-row adapters in one batch
    rows = [decisions[1], none, decisions[0]]
    names = adapter_names(rows)
    assert names == ["datetime_reasoning", BASE_ADAPTER, "precondition_verification"]
    with torch.no_grad():
        mixed = model(input_ids=ids.repeat(3, 1), adapter_names=names).logits
    assert torch.allclose(mixed[0], single(adapters[1])[0], atol=1e-5)
    assert torch.allclose(mixed[1], single(None)[0], atol=1e-5)
    assert torch.allclose(mixed[2], single(adapters[0])[0], atol=1e-5)


def test_vllm_contract(adapters: list[Path]) -> None:
    cards = [CapabilityCard.from_adapter(a) for a in adapters]
    assert vllm_lora_modules(cards) == [f"{c.name}={c.adapter_path}" for c in cards]
    from trace_envs.routing import RoutingDecision

    chosen = RoutingDecision(label="B", capability=cards[1].name, adapter_path=cards[1].adapter_path, logits={})
    base = RoutingDecision(label="C", capability=None, logits={})
    assert chosen.served_model_name("Qwen/Qwen3-30B-A3B-Instruct-2507") == "datetime_reasoning"
    assert base.served_model_name("Qwen/Qwen3-30B-A3B-Instruct-2507") == "Qwen/Qwen3-30B-A3B-Instruct-2507"
    assert base.lora_request() is None
    try:
        import vllm  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="serve"):
            chosen.lora_request()
    else:
        request = chosen.lora_request({"datetime_reasoning": 7})
        assert (request.lora_name, request.lora_int_id, request.lora_path) == (
            "datetime_reasoning",
            7,
            cards[1].adapter_path,
        )


def test_from_pretrained_builds_the_router_the_call_sites_built(tiny_model: Path, adapters: list[Path]) -> None:
    """``route``, the pipeline's route stage and routed evaluation built this router by hand from the base model
    and the adapters' cards; ``Router.from_pretrained`` is that, once."""
    by_hand, built = _router(tiny_model, adapters), Router.from_pretrained(tiny_model, adapters)
    assert built.cards == by_hand.cards and built.all_labels == by_hand.all_labels
    assert built.chat_text(TASK) == by_hand.chat_text(TASK)
    assert not built.model.training  # eval mode, as every call site set it
    assert built.route(TASK) == by_hand.route(TASK)  # the same decision, logits and all
    other = built.with_adapters(adapters[1:])
    assert other.model is built.model and other.tokenizer is built.tokenizer  # the base model loaded once
    assert [card.name for card in other.cards] == [built.cards[1].name] and other.all_labels == ["A", "B"]
    with pytest.raises(FileNotFoundError):
        Router.from_pretrained(tiny_model, [adapters[0].parent / "missing"])
