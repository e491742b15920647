"""The training commands' knobs come from TrainConfig's fields, declared once: the field's description is the help,
its default the option's (shown by click, never restated in a help text), and the old flag names still parse."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from trace_envs.cli import build_app
from trace_envs.cli.train_options import OLD_FLAGS, TrainOptions, knobs, train_config, with_train_options
from trace_envs.training import TrainConfig

TRAINING_COMMANDS = [("train",), ("baseline", "grpo-target"), ("baseline", "multi-capability")]
RESTATED_DEFAULT = re.compile(r"\bdefault\b:?\s*(is\s+)?([-+.\d'\"]|(null|none)\b)|\(null:\s*[-+.\d]", re.IGNORECASE)
"""A help text that states a literal default ("default 1e-5", "default: 8", "(default 'group')"); "default K" or
"default: the env's max_turns" say where a derived value comes from, which no field default can contradict."""


def _command(*path: str) -> Any:
    command: Any = typer.main.get_command(build_app())
    for name in path:
        command = command.commands[name]
    return command


def _options(command: Any) -> dict[str, typer.core.TyperOption]:
    return {param.name: param for param in command.params if isinstance(param, typer.core.TyperOption) and param.name}


def _capturing_app() -> tuple[typer.Typer, list[TrainOptions]]:
    """A one-command app with every knob; what the command receives is appended to the list."""
    app, seen = typer.Typer(), []

    @app.command()
    @with_train_options()
    def command(*, train_options: TrainOptions) -> None:
        seen.append(train_options)

    return app, seen


def test_every_knob_is_an_option_of_train_with_its_field_description_as_help() -> None:
    options = _options(_command("train"))
    shown = CliRunner().invoke(build_app(), ["train", "--help"], terminal_width=80, env={"COLUMNS": "80"})
    assert shown.exit_code == 0, shown.output
    assert len(knobs()) > 30  # every scalar field, lora and vllm settings included
    for knob in knobs():
        assert knob.field.description, f"{knob.path} has no description to show as its help"
        assert knob.field.description in str(options[knob.name].help), knob.path
        assert knob.flag in shown.output, knob.path
    assert "[default: 1e-05]" in " ".join(shown.output.split())  # click shows the field's default itself


@pytest.mark.parametrize("path", TRAINING_COMMANDS)
def test_no_help_text_of_a_training_command_restates_a_default(path: tuple[str, ...]) -> None:
    for name, option in _options(_command(*path)).items():
        assert not RESTATED_DEFAULT.search(option.help or ""), f"{' '.join(path)} --{name}: {option.help}"
    for knob in knobs():
        assert not RESTATED_DEFAULT.search(str(knob.field.description)), knob.path


def test_the_help_pattern_catches_the_old_texts() -> None:
    for old in ("AdamW learning rate (default 1e-5).", "G groups of K rollouts per step (default 8).", "(null: 16)"):
        assert RESTATED_DEFAULT.search(old), old


@pytest.mark.parametrize("path", TRAINING_COMMANDS)
def test_each_option_defaults_to_its_field_default(path: tuple[str, ...]) -> None:
    options = _options(_command(*path))
    offered = [knob for knob in knobs() if knob.name in options]
    assert len(offered) >= len(knobs()) - 1  # the baselines leave out max_steps: --budget sets it
    for knob in offered:
        expected = None if knob.field.default_factory is not None else knob.field.default
        assert options[knob.name].default == expected, knob.path


def test_a_default_changed_in_train_config_reaches_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TrainConfig.model_fields["learning_rate"], "default", 3e-4)
    app, _ = _capturing_app()
    option = _options(typer.main.get_command(app))["learning_rate"]
    assert option.default == 3e-4
    shown = CliRunner().invoke(app, ["--help"], terminal_width=80, env={"COLUMNS": "80"}).output
    assert "[default: 0.0003]" in " ".join(shown.split())


def test_old_flag_names_still_parse_and_the_help_names_the_new_one() -> None:
    app, seen = _capturing_app()
    old = ["--groups", "2", "--batch-size", "4", "--vllm-server-url", "http://gpu:8000"]
    same = ["--max-steps", "3", "--num-generations", "2", "--max-completion-length", "64", "--learning-rate", "1e-4"]
    result = CliRunner().invoke(app, [*old, *same, "--generation", "vllm-server"])
    assert result.exit_code == 0, result.output
    assert seen[0].given == {
        "groups_per_step": 2, "per_device_train_batch_size": 4, "vllm.server_base_url": "http://gpu:8000",
        "max_steps": 3, "num_generations": 2, "max_completion_length": 64, "learning_rate": 1e-4,
        "generation": "vllm-server",
    }  # fmt: skip
    options = _options(_command("train"))
    for path, flag in OLD_FLAGS.items():
        option = options[path.replace(".", "_")]
        assert flag in option.opts and f"Old spelling: {flag}; use {option.opts[0]}" in str(option.help)


def test_options_left_out_override_nothing_and_given_ones_round_trip(tmp_path: Path) -> None:
    app, seen = _capturing_app()
    args = ["--lora-r", "8", "--no-bf16", "--report-to", "wandb", "--scale-rewards", "none", "--groups", "2"]
    assert CliRunner().invoke(app, args).exit_code == 0
    assert CliRunner().invoke(app, seen[0].argv()).exit_code == 0
    assert seen[1] == seen[0]  # what a --synthesis job is forwarded parses back the same
    argv = seen[0].argv()
    assert argv[argv.index("--groups-per-step") + 1] == "2" and "--groups" not in argv  # under the new name
    config = tmp_path / "grpo.yaml"
    config.write_text("learning_rate: 0.5\nlora: {alpha: 32}\nbf16: true\n")
    cfg = train_config(config, seen[0])
    assert (cfg.learning_rate, cfg.lora.r, cfg.lora.alpha, cfg.bf16) == (0.5, 8, 32, False)  # file, then options
    assert (cfg.report_to, cfg.scale_rewards, cfg.groups_per_step) == (["wandb"], "none", 2)
    assert CliRunner().invoke(app, []).exit_code == 0 and seen[2].given == {}
    assert train_config(None, seen[2]) == TrainConfig()
    with pytest.raises(typer.BadParameter, match=r"lora\.r: Input should be greater than or equal to 1"):
        train_config(None, TrainOptions({"lora.r": 0}))
