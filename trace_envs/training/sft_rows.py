"""Chat rows ({messages, tools}) as the SFT trainers hand them to TRL: rendered and tokenized one by one."""

from __future__ import annotations

from typing import Any


def tokenized_rows(rows: list[dict[str, Any]], tokenizer: Any) -> Any:
    """The rows ({messages, tools}) rendered and tokenized one by one, as a dataset of token ids and the mask of
    the assistant's tokens (the loss's).

    Handed to TRL as they are, the rows would first become one Arrow table. Arrow merges the tool-call
    arguments and tool schemas of all rows into one struct and fills every key a row lacks with None, so the
    template would render ``"key": null`` into calls and schemas that the episode never had."""
    from datasets import Dataset

    data = []
    for index, row in enumerate(rows):
        encoded = tokenizer.apply_chat_template(
            row["messages"], tools=row.get("tools") or None, tokenize=True, return_dict=True,
            return_assistant_tokens_mask=True,
        )  # fmt: skip
        mask = [int(bit) for bit in encoded["assistant_masks"]]
        if 1 not in mask:
            raise ValueError(f"row {index}: the chat template marks no assistant token, so there is nothing to learn")
        data.append({"input_ids": [int(t) for t in encoded["input_ids"]], "assistant_masks": mask})
    return Dataset.from_list(data)
