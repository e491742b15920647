"""The warm-up's rows (``inference`` form) hold what a rollout showed the agent: on a device episode where the
agent asks the user a question, the row keeps the user's reply as a user turn and the tools the env offered,
and every prompt the ``hf:`` client rendered during the episode is a prefix of the tokens trained on: the
client renders earlier turns with TRL's training template, as the trainers do (Qwen3's own template, and the one
the library gives SmolLM2, drop the empty think block of earlier assistant turns, which training keeps)."""

from __future__ import annotations

import shutil
from pathlib import Path

import gymnasium as gym
import pytest

from tests.llm.test_tool_template import SMOLLM2_LIKE_TEMPLATE
from trace_envs.baselines.sft_data import collect, collection_jobs

pytestmark = pytest.mark.train
ENV = "trace/device-v0"
SEND = "send_message_to_user"
EMPTY_THINK = "<think>\n\n</think>\n\n"


def test_inference_rows_are_what_the_rollout_showed_the_agent(tiny_model: Path, tmp_path: Path) -> None:
    from trace_envs.llm import make_chat_model
    from trace_envs.llm.tool_template import adapt_tool_template
    from trace_envs.training.sft_rows import tokenized_rows

    collection = collect(collection_jobs([ENV], 8), "oracle", tmp_path, row_format="inference")
    pairs = list(zip(collection.examples, collection.rows, strict=True))
    asked = [(e, r) for e, r in pairs if [m["role"] for m in r["messages"]].count("user") > 1]
    assert asked, "some generated device scenario has the agent ask the user a question"
    episode, row = asked[0]
    roles = [m["role"] for m in row["messages"]]
    assert roles[0] == "system" and roles[-1] == "assistant"
    assert SEND not in str(row)  # the user's replies are user turns, as in a rollout, not tool results

    _, info = gym.make(ENV).reset(seed=episode.seed)
    assert row["tools"] == info["tools"]

    from transformers import AutoTokenizer
    from trl.chat_template_utils import get_training_chat_template

    folder = tmp_path / "smol-like"
    shutil.copytree(tiny_model, folder)
    (folder / "chat_template.jinja").write_text(SMOLLM2_LIKE_TEMPLATE, encoding="utf-8")
    tokenizer = AutoTokenizer.from_pretrained(str(folder))  # as build_sft_trainer prepares it
    adapt_tool_template(tokenizer)
    tokenizer.chat_template = get_training_chat_template(tokenizer)
    (trained,) = tokenized_rows([row], tokenizer)
    shown = make_chat_model(f"hf:{folder}")  # the client as a rollout uses it
    turns = [i for i, role in enumerate(roles) if role == "assistant"]
    assert len(turns) > 1
    for turn in turns:
        prompt = shown.prompt(episode.messages[:turn], info["tools"])  # type: ignore[attr-defined]
        ids = shown.tokenizer(prompt, add_special_tokens=False)["input_ids"]  # type: ignore[attr-defined]
        assert trained["input_ids"][: len(ids)] == ids, f"the prompt of assistant turn {turn} is not what was trained"
    assert prompt.count(EMPTY_THINK) == len(turns) - 1  # the earlier turns keep their empty think block
