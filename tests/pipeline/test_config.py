"""Pipeline config errors: one line naming the file, the field and the fix (CLI: exit code 2, no traceback)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from trace_envs.cli import build_app
from trace_envs.cli.warning_lines import user_warning_line
from trace_envs.pipeline import DEMO_YAML, ConfigError, demo_config, load_config
from trace_envs.pipeline.config import ConfigWarning
from trace_envs.training import TrainConfig

GOOD = yaml.safe_load(DEMO_YAML)


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "trace.yaml"
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data), encoding="utf-8")
    return path


def _with(**changes: object) -> dict[str, object]:
    data = {**GOOD}
    for dotted, value in changes.items():
        section, _, field = dotted.partition("__")
        if field:
            data[section] = {**data[section], field: value}
        elif value is None:
            data.pop(section)
        else:
            data[section] = value
    return data


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"targets": ["device", "mars"]},
            "targets: unknown target 'mars'; use one of airline, retail, device",
        ),
        (
            {"train__modle": "tiny"},
            "train.modle: Extra inputs are not permitted (unknown key 'modle': remove it or fix its spelling; "
            "allowed here: env_ids, env_knobs, lora, learning_rate,",
        ),
        ({"rollout": None}, "rollout: Field required (add it)"),
        ({"train__max_steps": 0}, "train.max_steps: Input should be greater than or equal to 1 (expected: GRPO"),
        ({"targets": ["device", "device"]}, "targets: each target once"),
        ({"synthesize__folders": {"mars": "envs"}}, "synthesize.folders: 'mars' is not one of targets; use device"),
    ],
)
def test_a_bad_field_is_named_with_its_file_and_fix(changes: dict[str, object], expected: str, tmp_path: Path) -> None:
    path = _write(tmp_path, _with(**changes))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and expected in message and "\n" not in message


def test_not_yaml_not_a_mapping_and_no_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"trace.yaml: not valid YAML at line 2; fix the syntax"):
        load_config(_write(tmp_path, "targets: [device\nrollout: {"))
    with pytest.raises(ConfigError, match="is a YAML mapping"):
        load_config(_write(tmp_path, "- device\n"))
    with pytest.raises(ConfigError, match="no such config file"):
        load_config(tmp_path / "missing.yaml")


def test_relative_paths_are_read_from_the_config_folder(tmp_path: Path) -> None:
    (tmp_path / "models" / "base").mkdir(parents=True)
    config = load_config(
        _write(tmp_path, _with(data="data", train__model="models/base", synthesize__folders={"retail": "envs"}))
    )
    assert config.data == tmp_path / "data"
    assert config.synthesize.folders == {"retail": tmp_path / "envs"}
    assert config.train.model == str(tmp_path / "models" / "base")


def test_the_demo_config_is_valid_and_says_what_it_simulates() -> None:
    config = demo_config()
    assert config.targets == ["device", "retail", "airline"] and config.data is None
    assert config.train.model == "tiny" and config.synthesize.generator == "catalogue"
    assert any("scripted" in note and "tiny" in note for note in config.simulated)
    assert any("API key" in note and "GPU" in note for note in config.simulated)


def test_the_cli_says_it_in_one_line_with_exit_code_2(tmp_path: Path) -> None:
    path = _write(tmp_path, _with(train__modle="tiny"))
    result = CliRunner().invoke(build_app(), ["pipeline", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "train.modle: Extra inputs are not permitted" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()  # nothing was started
    result = CliRunner().invoke(build_app(), ["pipeline", str(_write(tmp_path, GOOD)), "--stage", "nope"])
    assert result.exit_code == 2 and "--stage: no stage 'nope'; use one of rollout, analyze" in result.output


def _train_config(tmp_path: Path, data: dict[str, Any]) -> Any:
    from trace_envs.pipeline.context import StageContext
    from trace_envs.pipeline.model_stages import train_config

    ctx = StageContext(name="train", config=load_config(_write(tmp_path, data)), root=tmp_path, folder=tmp_path)
    return train_config(ctx, "trace/x-v0")


def test_the_train_section_takes_train_config_fields(tmp_path: Path) -> None:
    data = _with(train__constant_groups="resample", train__scale_rewards="none", train__lora={"target_modules": "qkvo"})
    config = _train_config(tmp_path, data)
    assert (config.constant_groups, config.scale_rewards, config.lora.target_modules) == ("resample", "none", "qkvo")
    assert (config.num_generations, config.rollouts_per_step, config.max_steps) == (2, 2, 2)  # the demo's K, G x K
    assert config.env_ids == ["trace/x-v0"] and config.seed == 0  # the run's seed
    assert _train_config(tmp_path, _with(seed=7)).seed == 7
    assert _train_config(tmp_path, _with(seed=7, train__seed=3)).seed == 3  # the section's own, when it gives one
    paper = _with(train={"model": "tiny"})
    assert _train_config(tmp_path, paper).rollout_budget == 40 * 8 * 16  # unset fields: the paper's defaults
    assert _train_config(tmp_path, paper) == TrainConfig(env_ids=["trace/x-v0"])  # TrainConfig's defaults, all
    with pytest.raises(ConfigError, match=r"train\.scale_rewards: Input should be 'group', 'batch' or 'none'"):
        load_config(_write(tmp_path, _with(train__scale_rewards="sometimes")))  # when the file is read
    with pytest.raises(ConfigError, match=r"train\.env_ids: .*one adapter per synthesised env: remove env_ids"):
        load_config(_write(tmp_path, _with(train__env_ids=["trace/x-v0"])))


def test_the_deprecated_grpo_mapping_still_loads_and_names_the_keys_to_write(tmp_path: Path) -> None:
    data = _with(
        train__grpo={"constant_groups": "resample", "scale_rewards": "none", "max_completion_length": 64},
        train__max_completion_length=32,
    )
    with pytest.warns(ConfigWarning) as warned:
        config = _train_config(tmp_path, data)
    assert str(warned[0].message) == (
        "train.grpo is deprecated: write its keys in the train section itself "
        "(train.constant_groups, train.max_completion_length, train.scale_rewards)"  # as the YAML lists them
    )
    shown = user_warning_line(warned[0].message, ConfigWarning)  # how a command shows it: one line on stderr
    assert shown == f"warning: {warned[0].message}"
    assert (config.constant_groups, config.scale_rewards) == ("resample", "none")
    assert config.max_completion_length == 32  # a key the section gives keeps the section's value, as before
    with pytest.warns(ConfigWarning), pytest.raises(ConfigError, match=r"train\.scale_rewards: Input should be"):
        load_config(_write(tmp_path, _with(train__grpo={"scale_rewards": "sometimes"})))


def test_every_problem_is_named_and_unknown_keys_with_where_they_are(tmp_path: Path) -> None:
    data = _with(targets=["device", "mars"], rollout__polcy="oracle", train__grpo={"scale_reward": "none"})
    data["analyse"] = {"runs": 2}
    with pytest.raises(ConfigError) as caught:
        load_config(_write(tmp_path, data))
    message = str(caught.value)
    assert "4 problems:" in message and "more problem" not in message and "\n" not in message
    assert "targets: unknown target 'mars'; use one of airline, retail, device" in message
    assert "rollout.polcy: Extra inputs are not permitted (unknown key 'polcy'" in message
    assert "allowed here: split, max_steps, max_tokens, policy, samples" in message
    assert "train: grpo: unknown key(s) 'scale_reward': not TrainConfig fields" in message  # at load, not at train
    assert "analyse: Extra inputs are not permitted (unknown key 'analyse'" in message and "analyze" in message


def test_the_demo_trains_the_model_it_is_given_and_says_so() -> None:
    tiny, real = demo_config(), demo_config("smollm2-135m-instruct")
    assert tiny.train.model == "tiny" and "tiny random model" in tiny.simulated[0]
    assert real.train.model == "smollm2-135m-instruct"
    assert "SmolLM2-135M-Instruct" in real.simulated[0] and "tiny random model" not in real.simulated[0]
    assert real.model_copy(update={"train": tiny.train, "simulated": tiny.simulated}) == tiny  # nothing else changes
    with pytest.raises(ValueError, match="the demo trains one of tiny, smollm2-135m-instruct"):
        demo_config("gpt2")


def test_a_packaged_base_model_is_made_once_in_the_train_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trace_envs.llm import gguf_model
    from trace_envs.pipeline.context import StageContext
    from trace_envs.pipeline.model_stages import BASE_MODEL_DIR, base_model

    made: list[tuple[str, Path]] = []

    def fake_make(name: str, out: Path) -> Path:
        made.append((name, Path(out)))
        Path(out).mkdir(parents=True)
        (Path(out) / "config.json").write_text("{}", encoding="utf-8")
        return Path(out)

    monkeypatch.setattr(gguf_model, "make_packaged_model", fake_make)
    config = demo_config("smollm2-135m-instruct")
    ctx = StageContext(name="train", config=config, root=tmp_path, folder=tmp_path / "train")
    folder = base_model(ctx)
    assert folder == str(tmp_path / "train" / BASE_MODEL_DIR) and (Path(folder) / "config.json").is_file()
    assert made == [("smollm2-135m-instruct", tmp_path / "train" / f"{BASE_MODEL_DIR}.partial")]
    assert base_model(ctx) == folder and len(made) == 1  # built once
