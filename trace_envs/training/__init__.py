"""Train one LoRA adapter per capability env with TRL's GRPOTrainer + PEFT (needs the ``[train]`` extra).

``trl_environment(env_id)`` is the Gymnasium-to-TRL bridge; ``train(config, model, out_dir)`` runs GRPO on
one env or a uniform mixture of envs and writes the adapter with its ``trace_adapter.json``.
Importing this package is cheap: torch, transformers, TRL and PEFT are imported when used.
"""

from __future__ import annotations

from .bridge import SEND_MESSAGE_TOOL, TRLEnvironment, make_capability_env, tool_schemas, trl_environment
from .config import LoraSettings, TrainConfig, VLLMSettings, load_config
from .episodes import build_rows, oracle_conversation, prompt_for_seed
from .metadata import METADATA_FILE, AdapterMetadata, EpisodeExample, load_metadata, save_metadata
from .trainer import GroupTracker, TrainingRun, build_run, cpu_threads, finished_run, train

__all__ = [
    "METADATA_FILE",
    "SEND_MESSAGE_TOOL",
    "AdapterMetadata",
    "EpisodeExample",
    "GroupTracker",
    "LoraSettings",
    "TRLEnvironment",
    "TrainConfig",
    "TrainingRun",
    "VLLMSettings",
    "build_rows",
    "build_run",
    "cpu_threads",
    "finished_run",
    "load_config",
    "load_metadata",
    "make_capability_env",
    "oracle_conversation",
    "prompt_for_seed",
    "save_metadata",
    "tool_schemas",
    "train",
    "trl_environment",
]
